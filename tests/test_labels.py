"""Vertex labels end to end: SNAP ids with gaps and GraphML node ids kept as labels, compact
indices inside; results, routes and the command line speak labels; whole results saved to
one file; results as pandas / polars edge tables."""
from __future__ import annotations

import json
import tracemalloc
import zipfile

import numpy as np
import pytest

import apsp
from apsp.cli import main
from apsp.errors import GraphFormatError, MissingDependencyError
from apsp.graph import EdgeList, compact_ids
from apsp.io import read_graph, write_graph

GAPS = "5 77 3\n77 1000000 4\n5 1000000 9\n"


@pytest.fixture
def gaps(tmp_path):
    p = tmp_path / "gaps.snap"
    p.write_text(GAPS)
    return p


@pytest.fixture
def graphml(tmp_path):
    nx = pytest.importorskip("networkx")
    g = nx.DiGraph()
    g.add_edge("a", "b", weight=2)
    g.add_edge("b", "c", weight=3)
    g.add_edge("a", "c", weight=9)
    g.add_node("lonely")
    p = tmp_path / "g.graphml"
    nx.write_graphml(g, p)
    return p


# -- readers -----------------------------------------------------------------------------
def test_snap_ids_with_gaps_are_compacted_and_kept_as_labels(gaps):
    e = read_graph(gaps)
    assert e.n == 3 and e.labels.tolist() == [5, 77, 1000000]
    assert (e.src.tolist(), e.dst.tolist(), e.weight.tolist()) == ([0, 1, 0], [1, 2, 2], [3, 4, 9])
    r = apsp.shortest_paths(gaps, return_predecessors=True, backend="cpu")
    assert r.distances.shape == (3, 3) and r.labels.tolist() == [5, 77, 1000000]
    assert r.distance(5, 1000000) == 7 and r.distance(1000000, 5) == float("inf")
    assert r.index_of(77) == 1 and r.index_of("77") == 1
    assert r.path(5, 1000000) == [5, 77, 1000000]
    with pytest.raises(ValueError, match="6 is not a vertex label"):
        r.index_of(6)


def test_snap_header_decides_between_ids_as_indices_and_labels(tmp_path):
    p = tmp_path / "g.snap"
    p.write_text("# Nodes: 10 Edges: 2\n0 3\n3 1\n")  # every id below Nodes: the ids are indices
    e = read_graph(p)
    assert e.n == 10 and e.labels is None and e.src.tolist() == [0, 3]
    p.write_text("# Nodes: 3 Edges: 3\n" + GAPS)  # ids beyond Nodes: SNAP's own datasets
    e = read_graph(p)
    assert e.n == 3 and e.labels.tolist() == [5, 77, 1000000]
    p.write_text("2 0\n1 2\n")  # ids exactly 0..n-1: no labels, as before
    e = read_graph(p)
    assert e.n == 3 and e.labels is None and e.src.tolist() == [2, 1]
    assert read_graph(p, n=5).n == 5  # the caller's n: ids are indices


def test_huge_ids_never_allocate_by_the_largest_id(tmp_path):
    rng = np.random.default_rng(3)
    ids = rng.choice(10**8, size=600, replace=False) * 7 + 10**9  # ids up to 8e8, 1200 endpoints
    ids = np.append(ids, 2**62)
    src, dst = ids[:300], ids[300:600]
    p = tmp_path / "big.snap"
    p.write_text("".join(f"{u}\t{v}\n" for u, v in zip(src, dst)) + f"{ids[-1]}\t{ids[0]}\n")
    tracemalloc.start()
    try:
        e = read_graph(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"reading 301 edges peaked at {peak} bytes"
    assert e.n == 601 and e.labels.tolist() == sorted(ids.tolist())
    assert e.labels[e.src].tolist() == src.tolist() + [2**62]
    r = apsp.shortest_paths(p, backend="cpu")
    assert r.distances.shape == (601, 601) and r.distance(2**62, int(dst[0])) == 2


def test_both_ways_of_compacting_agree():
    rng = np.random.default_rng(5)
    for top in (10, 10**12):  # an id table (ids below 2m + 1) and a sort
        s, d = rng.integers(0, top, 50), rng.integers(0, top, 50)
        labels, cs, cd = compact_ids(s, d)
        assert labels.tolist() == sorted(set(s.tolist() + d.tolist()))
        assert labels[cs].tolist() == s.tolist() and labels[cd].tolist() == d.tolist()


def test_graphml_keeps_node_ids(graphml):
    e = read_graph(graphml)
    assert e.labels.tolist() == ["a", "b", "c", "lonely"]
    r = apsp.shortest_paths(graphml, return_successors=True, backend="cpu")
    assert r.labels.tolist() == ["a", "b", "c", "lonely"]
    assert r.distance("a", "c") == 5 and r.path("a", "c") == ["a", "b", "c"]
    assert r.distance("a", "lonely") == float("inf")
    route = apsp.shortest_path_between(graphml, "a", "c")
    assert (route.source, route.target, route.path, route.length) == ("a", "c", ["a", "b", "c"], 5)
    assert route.to_json(first_vertex=1)["first_vertex"] is None
    with pytest.raises(ValueError, match="'zz' is not a vertex label"):
        apsp.shortest_path_between(graphml, "a", "zz")


def test_index_formats_keep_index_semantics(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("4 1\n1 3 7\n")
    e = read_graph(p)
    assert e.n == 4 and e.labels is None
    r = apsp.shortest_paths(p, backend="cpu")
    assert r.labels is None and r.distance(0, 2) == 7 and r.index_of(3) == 3


def test_edge_list_labels_are_checked_and_written(tmp_path):
    with pytest.raises(ValueError, match="distinct"):
        EdgeList(2, [0], [1], [1], labels=[4, 4])
    with pytest.raises(ValueError, match="one per vertex"):
        EdgeList(2, [0], [1], [1], labels=[4])
    assert EdgeList(2, [0], [1], [1], labels=[0, 1]).labels is None
    p = tmp_path / "out.snap"
    write_graph(p, EdgeList(3, [0, 1], [1, 2], [3, 4], labels=[5, 77, 1000000]))
    back = read_graph(p)
    assert back.labels.tolist() == [5, 77, 1000000] and back.src.tolist() == [0, 1]
    with pytest.raises(ValueError, match="named by strings"):
        write_graph(p, EdgeList(2, [0], [1], [1], labels=["a", "b"]))


def test_sources_by_label(gaps):
    r = apsp.shortest_paths(gaps, sources=[77, 5], return_predecessors=True, backend="cpu")
    assert r.sources.tolist() == [1, 0] and r.distances.shape == (2, 3)
    assert r.distance(5, 1000000) == 7 and r.path(5, 1000000) == [5, 77, 1000000]
    with pytest.raises(ValueError, match="not one of the sources"):
        r.distance(1000000, 5)
    with pytest.raises(ValueError, match="source 6 is not a vertex label"):
        apsp.shortest_paths(gaps, sources=[6])


# -- command line ------------------------------------------------------------------------
def test_cli_path_by_label(graphml, gaps, capsys):
    assert main(["path", str(graphml), "--from", "a", "--to", "c"]) == 0
    assert capsys.readouterr().out == "a -> b -> c\nlength 5\n"
    assert main(["path", str(graphml), "--from", "a", "--to", "c", "--method", "fw", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["path"] == ["a", "b", "c"] and got["first_vertex"] is None and got["n"] == 4
    assert main(["path", str(gaps), "--from", "5", "--to", "1000000"]) == 0
    assert capsys.readouterr().out == "5 -> 77 -> 1000000\nlength 7\n"
    assert main(["path", str(graphml), "--from", "a", "--to", "nope"]) == 1
    assert "--to 'nope' is not a vertex label of this graph" in capsys.readouterr().err


def test_cli_sources_by_label_and_whole_result(gaps, tmp_path, capsys):
    out = tmp_path / "r.npz"
    assert main(["solve", str(gaps), "-o", str(out), "--sources", "77,5", "-q"]) == 0
    r = apsp.load_result(out)
    assert r.labels.tolist() == [5, 77, 1000000] and r.sources.tolist() == [1, 0]
    assert r.distances.tolist() == [[r.unreachable, 0, 4], [0, 3, 7]]
    assert main(["solve", str(gaps), "-o", str(tmp_path / "d.txt"), "--sources", "6", "-q"]) == 1
    assert "--sources '6' is not a vertex label" in capsys.readouterr().err


def test_cli_negative_cycle_named_by_labels(tmp_path, capsys):
    p = tmp_path / "neg.snap"
    p.write_text("10 20 1\n20 10 -3\n")
    assert main(["solve", str(p), "-o", str(tmp_path / "d.npy"), "--method", "fw", "-q"]) == 1
    err = capsys.readouterr().err
    assert "10, 20 (labels, as in" in err, err


# -- whole results in one file -----------------------------------------------------------
@pytest.mark.parametrize("labels", [None, [5, 77, 1000000, 3], ["a", "b", "c", "d"]])
def test_save_and_load_round_trip(tmp_path, labels):
    w = np.array([[0, 2, 0, 0], [0, 0, 3, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    edges = EdgeList(4, *np.nonzero(w), w[np.nonzero(w)], labels=labels)
    r = apsp.shortest_paths(edges, return_predecessors=True, return_successors=True, backend="cpu")
    p = tmp_path / "r.npz"
    r.save(p)
    back = apsp.load_result(p)
    for name in ("distances", "predecessors", "successors"):
        a, b = getattr(r, name), getattr(back, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert (back.labels is None) == (labels is None)
    if labels is not None:
        assert back.labels.tolist() == labels and back.labels.dtype == r.labels.dtype
    assert back.info == json.loads(json.dumps(r.info)) and back.info["why"] == r.info["why"]
    assert (back.method, back.backend, back.block_size, back.dtype) == (r.method, r.backend, r.block_size, r.dtype)
    assert back.timings == r.timings and back.sources is None


def test_load_refuses_other_files(tmp_path):
    np.savez(tmp_path / "other.npz", distances=np.zeros((2, 2)))
    (tmp_path / "text.npz").write_text("2 1\n1 2 3\n")
    with zipfile.ZipFile(tmp_path / "zip.npz", "w") as z:
        z.writestr("apsp.npy", b"not an array")
        z.writestr("distances.npy", b"nor this")
    for name in ("other.npz", "text.npz", "zip.npz"):
        with pytest.raises(GraphFormatError, match="not (an|a readable) apsp result file"):
            apsp.load_result(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        apsp.load_result(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="apsp.load_result"):
        read_graph(tmp_path / "other.npz")


def test_save_is_atomic(tmp_path, monkeypatch):
    r = apsp.shortest_paths(np.array([[0, 1], [0, 0]]), backend="cpu")
    p = tmp_path / "r.npz"
    p.write_bytes(b"old")

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np.lib.format, "write_array", broken)  # each member's writer, as np.savez's
    with pytest.raises(OSError):
        r.save(p)
    assert p.read_bytes() == b"old" and sorted(x.name for x in tmp_path.iterdir()) == ["r.npz"]


# -- edge tables ---------------------------------------------------------------------------
@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_to_frame(gaps, library):
    pytest.importorskip(library)
    r = apsp.shortest_paths(gaps, backend="cpu")
    f = r.to_frame(library)
    rows = list(zip(*(f[c].to_list() if library == "polars" else f[c].tolist()
                      for c in ("source", "target", "distance"))))
    assert list(f.columns) == ["source", "target", "distance"]
    assert rows == [(5, 5, 0), (5, 77, 3), (5, 1000000, 7), (77, 77, 0), (77, 1000000, 4),
                    (1000000, 1000000, 0)]
    assert str(f["distance"].dtype).lower() == r.dtype.name
    part = r.to_frame(library, sources=[77])
    assert len(part) == 2
    with pytest.raises(ValueError, match="6 rows .* max_rows=5"):
        r.to_frame(library, max_rows=5)


def test_to_frame_string_labels_and_source_rows(graphml):
    pytest.importorskip("pandas")
    r = apsp.shortest_paths(graphml, sources=["b", "a"], backend="cpu")
    f = r.to_frame()
    assert f.values.tolist() == [["b", "b", 0], ["b", "c", 3], ["a", "a", 0], ["a", "b", 2], ["a", "c", 5]]
    with pytest.raises(ValueError, match="not one of the sources"):
        r.to_frame(sources=["c"])


def test_to_frame_names_the_extra_when_missing(monkeypatch):
    import apsp.errors

    monkeypatch.setattr(apsp.errors, "has_module", lambda name: False)
    r = apsp.shortest_paths(np.array([[0, 1], [0, 0]]), backend="cpu")
    with pytest.raises(MissingDependencyError, match=r"apsp\[frames\]"):
        r.to_frame("polars")
    with pytest.raises(ValueError, match="unknown library"):
        r.to_frame("spark")


def test_cli_matrix_output_says_which_vertex_is_which(gaps, tmp_path, capsys):
    out = tmp_path / "d.txt"
    assert main(["solve", str(gaps), "-o", str(out)]) == 0
    assert out.read_text() == "0 3 7\nINF 0 4\nINF INF 0\n"
    assert "are 5, 77, 1000000 in this order; -o NAME.npz keeps the labels" in capsys.readouterr().err
    assert main(["solve", str(gaps), "-o", str(out), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_path_errors_name_labels(graphml):
    from apsp.paths import NoPathError

    r = apsp.shortest_paths(graphml, return_predecessors=True, backend="cpu")
    with pytest.raises(NoPathError, match="from 'c' to 'a'"):
        r.path("c", "a")
    rows = apsp.shortest_paths(graphml, sources=["b"], return_predecessors=True, backend="cpu")
    assert rows.path("b", "c") == ["b", "c"]
    with pytest.raises(ValueError, match="'a' is not one of the sources"):
        rows.path("a", "c")
