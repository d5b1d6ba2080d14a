"""`apsp.distance_stats` against reductions of the full distance matrix (scipy's oracle)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import apsp
from apsp.errors import MemoryPlanError
from apsp.graph import EdgeList, Graph
from apsp.stats import choose_stats_method, distance_stats

from randgraphs import random_edges


def matrix(g: Graph, direction: str) -> np.ndarray:
    """Dense float64 distances (inf where no path), transposed for "in"."""
    from scipy.sparse.csgraph import shortest_path

    d = shortest_path(g.to_csr().astype(np.float64), method="J" if g.has_negative_weights else "D")
    return d.T if direction == "in" else d


def expected(d: np.ndarray, sources, targets):
    rows = d[np.ix_(sources, targets)]
    finite = np.isfinite(rows)
    count = finite.sum(axis=1)
    total = np.where(finite, rows, 0).sum(axis=1)
    ecc = np.where(finite, rows, -np.inf).max(axis=1)
    with np.errstate(divide="ignore"):
        inv = np.where(finite & (rows != 0), 1.0 / rows, 0.0)
    return count, total, ecc, inv.sum(axis=1)


def check(stats, d, sources, targets):
    count, total, ecc, harmonic = expected(d, sources, targets)
    assert stats.reachable.tolist() == count.tolist()
    if stats.dtype.kind in "iu":
        assert [int(t) for t in stats.total] == [int(t) for t in total]  # exact
        assert stats.eccentricity.tolist() == [int(e) if c else 0 for e, c in zip(ecc, count)]
    else:
        np.testing.assert_allclose(stats.total.astype(float), total, rtol=1e-12)
        np.testing.assert_allclose(stats.eccentricity, np.where(count > 0, ecc, 0), rtol=1e-12)
    np.testing.assert_allclose(stats.harmonic, harmonic, rtol=1e-12)


KINDS = {
    "unweighted": dict(lo=1, hi=1),
    "int": dict(lo=0, hi=9),
    "float": dict(lo=0.5, hi=9.0, floats=True),
    "negative": dict(lo=0, hi=9, negative=True),
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("direction", ["out", "in"])
@pytest.mark.parametrize("n, density", [(70, 0.03), (150, 0.02), (200, 0.001)])
def test_every_search_against_the_matrix(kind, direction, n, density):
    rng = np.random.default_rng(n + len(kind))
    g = Graph.from_edges(random_edges(rng, n, density, **KINDS[kind]))
    d = matrix(g, direction)
    everyone = np.arange(n)
    stats = distance_stats(g, direction=direction, backend="cpu", progress=False)  # the searches
    assert stats.method == {"unweighted": "bfs", "int": "dijkstra", "float": "dijkstra",
                            "negative": "johnson"}[kind]
    check(stats, d, everyone, everyone)
    # a subset of sources (in the caller's order) and of targets
    src = rng.choice(n, size=7, replace=False)
    tgt = rng.choice(n, size=n // 3, replace=False)
    part = distance_stats(g, src, targets=tgt, direction=direction, backend="cpu", progress=False)
    assert part.sources.tolist() == src.tolist()
    check(part, d, src, np.sort(tgt))


def test_bit_parallel_bfs_subsets_and_histogram():
    rng = np.random.default_rng(5)
    n = 300
    g = Graph.from_edges(random_edges(rng, n, 0.006, lo=1, hi=1))
    d = matrix(g, "out")
    src = rng.choice(n, size=100, replace=False)  # enough sources for the 64-wide batches
    tgt = rng.choice(n, size=200, replace=False)
    stats = distance_stats(g, src, targets=tgt, histogram=True, progress=False)
    assert stats.info["bit_parallel"]
    check(stats, d, src, np.sort(tgt))
    rows = d[np.ix_(src, np.sort(tgt))]
    finite = rows[np.isfinite(rows)].astype(np.int64)
    assert stats.histogram.tolist() == np.trim_zeros(np.bincount(finite), "b").tolist()


def test_histogram_of_integer_weights_and_refusals():
    rng = np.random.default_rng(6)
    g = Graph.from_edges(random_edges(rng, 60, 0.05, lo=1, hi=30))
    d = matrix(g, "out")
    stats = distance_stats(g, histogram=True, progress=False)
    finite = d[np.isfinite(d)].astype(np.int64)
    assert stats.histogram.tolist() == np.bincount(finite).tolist()
    floats = Graph.from_edges(random_edges(rng, 20, 0.2, lo=0.5, hi=2.0, floats=True))
    with pytest.raises(ValueError, match="integer distances"):
        distance_stats(floats, histogram=True)


def test_integer_sums_past_int64_are_exact():
    # a path of 7 edges weighing 2^59 each: the sum from vertex 0 is 28 * 2^59 > 2^63
    w = 1 << 59
    g = apsp.as_graph(EdgeList(8, np.arange(7), np.arange(1, 8), np.full(7, w, dtype=np.int64)))
    stats = distance_stats(g, progress=False)
    assert stats.dtype == np.int64
    assert [int(t) for t in stats.total] == [w * k * (k + 1) // 2 for k in range(7, -1, -1)]
    assert stats.total_distance() == w * sum(k * (k + 1) // 2 for k in range(8))
    assert stats.average_distance() == math.inf  # nothing reaches vertex 0


def test_derived_measures_on_a_disconnected_undirected_graph():
    # two paths: 0-1-2 and 3-4
    s = distance_stats([(0, 1), (1, 2), (3, 4)], directed=False, progress=False)
    assert s.symmetric
    assert s.reaches_all.tolist() == [False] * 5
    assert s.diameter() == math.inf and s.radius() == math.inf
    assert s.wiener_index() == math.inf and s.average_distance() == math.inf
    # closeness with wf_improved: (r-1)/total * (r-1)/(n-1)
    assert s.closeness().tolist() == pytest.approx([2 / 3 * 2 / 4, 1.0 * 2 / 4, 2 / 3 * 2 / 4,
                                                    1 / 4, 1 / 4])
    assert s.closeness(wf_improved=False)[0] == pytest.approx(2 / 3)
    assert s.global_efficiency() == pytest.approx((4 * 1 + 2 * 0.5 + 2 * 1) / 20)
    connected = distance_stats([(0, 1), (1, 2), (2, 3)], directed=False, progress=False)
    assert connected.center().tolist() == [1, 2] and connected.periphery().tolist() == [0, 3]
    assert connected.wiener_index() == 10


def test_method_choice_and_its_reasons():
    unit = apsp.as_graph([(0, 1), (1, 2)])
    weighted = apsp.as_graph([(0, 1, 2), (1, 2, 3)])
    negative = apsp.as_graph([(0, 1, -2), (1, 2, 3)])
    assert choose_stats_method(unit)[0] == "bfs"
    assert choose_stats_method(weighted) == ("dijkstra", "non-negative weights: Dijkstra")
    assert choose_stats_method(negative)[0] == "johnson"
    with pytest.raises(ValueError, match="every weight must be 1"):
        choose_stats_method(weighted, "bfs")
    with pytest.raises(ValueError, match="non-negative"):
        choose_stats_method(negative, "dijkstra")
    with pytest.raises(ValueError, match="unknown method"):
        choose_stats_method(unit, "fw")


def test_negative_cycle_and_memory_plan_and_bad_arguments():
    with pytest.raises(apsp.NegativeCycleError):
        distance_stats([(0, 1, -2), (1, 0, 1)], progress=False)
    rng = np.random.default_rng(7)
    g = Graph.from_edges(random_edges(rng, 500, 0.01, lo=1, hi=9))
    with pytest.raises(MemoryPlanError, match="need .* of RAM"):
        distance_stats(g, host_memory="100KB")
    with pytest.raises(ValueError, match="direction"):
        distance_stats(g, direction="both")
    with pytest.raises(ValueError, match="sources"):
        distance_stats(g, [0, 500])
    with pytest.raises(TypeError):
        distance_stats(g, weight="w")
    with pytest.raises(ValueError, match="hop counts"):
        distance_stats([(0, 1)], dtype=np.int32)


# -- the command line ------------------------------------------------------------------------

HOMEWORK = "5 5\n1 2 1\n2 3 1\n3 4 2\n4 1 1\n2 4 5\n"  # vertex 5 isolated


def run_cli(argv, capsys):
    from apsp.cli import main

    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_stats_json_and_csv(tmp_path, capsys):
    import json

    graph = tmp_path / "g.txt"
    graph.write_text(HOMEWORK)
    csv = tmp_path / "s.csv"
    rc, out, _ = run_cli(["stats", str(graph), "--json", "--csv", str(csv), "--histogram", "-q"],
                         capsys)
    assert rc == 0
    summary = json.loads(out)
    assert summary["schema"] == 1 and summary["connected"] is False
    assert summary["diameter"] is None and summary["wiener_index"] is None
    assert summary["histogram"] == [5, 3, 3, 3, 3]
    assert summary["method"] == "dijkstra" and summary["dtype"] == "int16"
    lines = csv.read_text().splitlines()
    assert lines[0] == "vertex,reachable,total_distance,eccentricity,reaches_all,closeness,harmonic"
    # vertex 1 (1-based as in the file) reaches 2, 3, 4 at 1, 2, 4
    assert lines[1].split(",")[:5] == ["1", "4", "7", "4", "0"]
    assert len(lines) == 6
    # connected once undirected, vertex 5 left out by --sources
    rc, out, _ = run_cli(["stats", str(graph), "--json", "--undirected", "--sources", "1,2,3,4",
                          "-q"], capsys)
    summary = json.loads(out)
    assert summary["sources"] == 4 and summary["connected"] is False  # 5 is still a target


def test_cli_stats_text_and_refusals(tmp_path, capsys):
    graph = tmp_path / "g.txt"
    graph.write_text("3 2\n1 2 1\n2 3 1\n")
    rc, out, _ = run_cli(["stats", str(graph), "--undirected", "-q"], capsys)
    assert rc == 0 and "diameter 2" in out and "center 2" in out and "Wiener index 4" in out
    for unused in (["--block", "32"], ["-o", "out.txt"], ["--checkpoint", "c"]):  # solve's, not ours
        with pytest.raises(SystemExit):
            run_cli(["stats", str(graph), *unused], capsys)
    rc, _, err = run_cli(["stats", str(graph), "--sources", "0"], capsys)
    assert rc == 1 and "--sources 0 is not a vertex" in err
    rc, _, err = run_cli(["stats", str(graph), "--csv", str(tmp_path / "nodir" / "x.csv")], capsys)
    assert rc == 1 and "x.csv" in err
    assert not (tmp_path / "nodir").exists()
    rc, _, err = run_cli(["stats", str(graph), "--dtype", "int32"], capsys)
    assert rc == 1 and "hop counts are integers" in err
    graph.write_text("3 2\n1 2 1\n2 3 2\n")
    rc, _, err = run_cli(["stats", str(graph), "--histogram", "--dtype", "float64"], capsys)
    assert rc == 1 and "integer distances" in err


def test_merged_slices_equal_the_whole():
    from apsp.stats import merge_stats, source_slices

    import dataclasses

    rng = np.random.default_rng(11)
    g = Graph.from_edges(random_edges(rng, 150, 0.02, lo=1, hi=9))
    whole = distance_stats(g, histogram=False, progress=False)
    parts = [distance_stats(g, np.arange(lo, hi), progress=False)
             for lo, hi in source_slices(g.n, 3)]
    # a slice whose sums went past int64 holds Python ints: merged with int64 slices
    parts[1] = dataclasses.replace(parts[1], total=parts[1].total.astype(object))
    merged = merge_stats(parts)
    assert merged.sources.tolist() == whole.sources.tolist()
    assert [int(t) for t in merged.total] == [int(t) for t in whole.total]
    assert merged.reachable.tolist() == whole.reachable.tolist()
    assert merged.eccentricity.tolist() == whole.eccentricity.tolist()
    assert merged.harmonic.tolist() == whole.harmonic.tolist()
    unit = Graph.from_edges(random_edges(rng, 200, 0.01, lo=1, hi=1))
    whole = distance_stats(unit, histogram=True, progress=False)
    merged = merge_stats([distance_stats(unit, np.arange(lo, hi), histogram=True, progress=False)
                          for lo, hi in source_slices(unit.n, 4)])
    assert merged.histogram.tolist() == whole.histogram.tolist()
    assert merged.closeness().tolist() == whole.closeness().tolist()


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_cli_distributed_equals_one_process(ranks, tmp_path, capsys):
    import json

    from test_distributed import mpirun

    rng = np.random.default_rng(ranks)
    n, m = 150, 400
    src, dst = rng.integers(1, n + 1, m), rng.integers(1, n + 1, m)
    keep = src != dst
    lines = [f"{n} {int(keep.sum())}"] + [f"{a} {b} {w}" for a, b, w in
                                          zip(src[keep], dst[keep], rng.integers(0, 20, m)[keep])]
    graph = tmp_path / "g.txt"
    graph.write_text("\n".join(lines) + "\n")
    for extra in ([], ["--unweighted", "--histogram"], ["--direction", "in"]):
        args = ["stats", str(graph), "--json", "-q", *extra]
        rc, out, _ = run_cli(args + ["--csv", str(tmp_path / "one.csv")], capsys)
        run = mpirun(ranks, ["-m", "apsp", *args, "--distributed", "--csv",
                             str(tmp_path / "many.csv")])
        assert run.returncode == 0, run.stderr[-2000:]
        ours, theirs = json.loads(run.stdout), json.loads(out)
        for key in ("timings_s",):
            ours.pop(key), theirs.pop(key)
        assert ours == theirs
        assert (tmp_path / "many.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()
    bad = mpirun(ranks, ["-m", "apsp", "stats", str(graph), "--distributed", "--sources", "999"])
    assert bad.returncode == 1 and bad.stderr.count("is not a vertex") == 1


def test_averages_divide_by_the_pairs_counted():
    # a directed 4-cycle of weight 1: every vertex reaches the others at 1, 2, 3
    cycle = [(0, 1), (1, 2), (2, 3), (3, 0)]
    s = distance_stats(cycle, progress=False)
    assert s.pairs == 12 and s.average_distance() == 2.0
    assert s.global_efficiency() == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    # sources 0 and 1 to targets 2 and 3 (no source among the targets): pairs 0-2, 0-3, 1-2, 1-3
    part = distance_stats(cycle, [0, 1], targets=[2, 3], progress=False)
    assert part.pairs == 4 and part.average_distance() == (2 + 3 + 1 + 2) / 4



def test_one_way_zero_weight_edges_make_the_graph_directed():
    """An edge of weight 0 is an edge: 1 -> 2 -> 0 without 0 -> 2 -> 1 is not symmetric, so the
    distances *to* a vertex come from the reversed graph and the Wiener index is not halved."""
    g = Graph.from_edges(EdgeList(3, np.array([0, 1, 1, 2]), np.array([1, 0, 2, 0]), np.array([1, 1, 0, 0])))
    out = distance_stats(g, progress=False)
    into = distance_stats(g, direction="in", progress=False)
    assert not out.symmetric and not into.symmetric
    assert out.total.tolist() == [2, 0, 1]  # 0->1 = 0->2 = 1; 1->0 = 1->2 = 0; 2->0 = 0, 2->1 = 1
    assert into.total.tolist() == [0, 2, 1]
    assert out.wiener_index() == 3


def test_isolated_sources_are_not_searched(monkeypatch):
    # a weighted file of n vertices and one edge: one search, not n (each of them n long)
    import apsp.cpu.searches

    searched = []
    real = apsp.cpu.searches.search_rows

    def counting(g, sources, kind, **kwargs):
        searched.extend(np.asarray(sources).tolist())
        return real(g, sources, kind, **kwargs)

    monkeypatch.setattr(apsp.cpu.searches, "search_rows", counting)
    n = 50_000
    stats = distance_stats(EdgeList(n, [7], [3], [5]), histogram=True, progress=False)
    assert searched == [7]
    assert stats.method == "dijkstra" and stats.reachable.tolist() == [1] * 7 + [2] + [1] * (n - 8)
    assert stats.total.tolist() == [0] * 7 + [5] + [0] * (n - 8) and stats.eccentricity.max() == 5
    assert stats.histogram.tolist() == [n, 0, 0, 0, 0, 1]
    # sources and targets subsets: a source outside the targets reaches nothing
    part = distance_stats(EdgeList(n, [7], [3], [5]), sources=[3, 7, 9], targets=[3, 9], progress=False)
    assert part.reachable.tolist() == [1, 1, 1] and part.total.tolist() == [0, 5, 0]
    assert searched == [7, 7]
