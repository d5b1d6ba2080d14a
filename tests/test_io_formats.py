"""SNAP, Matrix Market, DIMACS, METIS, GraphML and .npy: round trips, other tools' files, bad lines."""
from __future__ import annotations

import gzip

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apsp.errors import GraphFormatError
from apsp.graph import EdgeList
from apsp.io import FORMATS, guess_format, read_graph, write_distances, write_graph

HYPO = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def edge_dict(e: EdgeList) -> dict:
    """(u, v) -> w with the later of repeated pairs winning (apsp's rule)."""
    return {(int(u), int(v)): w for u, v, w in zip(e.src, e.dst, e.weight.tolist())}


@st.composite
def edge_lists(draw, float_weights=None, self_loops=True):
    n = draw(st.integers(1, 15))
    m = draw(st.integers(0, 40))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    if not self_loops:
        pairs = [(s, d) for s, d in zip(src, dst) if s != d]
        src, dst = [p[0] for p in pairs], [p[1] for p in pairs]
    floats = draw(st.booleans()) if float_weights is None else float_weights
    if floats:
        w = draw(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=len(src),
                          max_size=len(src)))
        weight = np.array(w, dtype=np.float64)
    else:
        w = draw(st.lists(st.integers(-(2 ** 63), 2 ** 63 - 1), min_size=len(src), max_size=len(src)))
        weight = np.array(w, dtype=np.int64)
    return EdgeList(n, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), weight)


# -- round trips ---------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".snap", ".tsv", ".edges", ".el", ".mtx", ".gr"])
@given(edges=edge_lists(), gz=st.booleans())
@HYPO
def test_graph_round_trip(tmp_path, suffix, edges, gz):
    p = tmp_path / ("g" + suffix + (".gz" if gz else ""))
    write_graph(p, edges)
    if gz:
        assert p.read_bytes()[:2] == b"\x1f\x8b"
    back = read_graph(p)
    assert back.n == edges.n
    got, want = edge_dict(back), edge_dict(edges)
    assert got == want
    # no reordering beyond dropping overwritten duplicates
    assert len(back.src) == len(want)


@given(edges=edge_lists(float_weights=False, self_loops=False))
@HYPO
def test_homework_round_trip_through_dispatcher(tmp_path, edges):
    p = tmp_path / "g.in"
    write_graph(p, edges)
    back = read_graph(p)
    assert back.n == edges.n and edge_dict(back) == edge_dict(edges)


@given(st.integers(0, 12), st.sampled_from(["int16", "int32", "int64", "float32", "float64"]),
       st.booleans(), st.data())
@HYPO
def test_distances_npy_and_mtx_round_trip(tmp_path, n, dtype, gz, data):
    from apsp import exactness

    dt = np.dtype(dtype)
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    if dt.kind == "f":
        d = (rng.standard_normal((n, n)) * 100).astype(dt)
    else:
        d = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, (n, n), dtype=dt, endpoint=True)
    d[rng.random((n, n)) < 0.3] = exactness.unreachable_value(dt)
    p = tmp_path / ("d.npy.gz" if gz else "d.npy")
    write_distances(p, d, keep_dtype=True)
    loaded = np.load(gzip.open(p) if gz else p)
    assert loaded.dtype == dt and np.array_equal(loaded, d)
    q = tmp_path / "d.mtx"
    write_distances(q, d)
    m = scipy.io.mmread(q)
    reach = d != exactness.unreachable_value(dt)
    got = np.full((n, n), exactness.unreachable_value(dt), dtype=dt)
    if n:
        coo = sp.coo_matrix(m)
        got[coo.row, coo.col] = coo.data.astype(dt)
        assert coo.nnz == int(reach.sum())
    assert np.array_equal(got, d)


def test_dense_npy_graph(tmp_path):
    a = np.array([[0, 3, 0], [0, 0, 4], [1, 0, 0]], dtype=np.int32)
    np.save(tmp_path / "g.npy", a)
    got = read_graph(tmp_path / "g.npy")
    assert isinstance(got, np.ndarray) and np.array_equal(got, a)
    (tmp_path / "g.npy.gz").write_bytes(gzip.compress((tmp_path / "g.npy").read_bytes()))
    assert np.array_equal(read_graph(tmp_path / "g.npy.gz"), a)


@pytest.mark.parametrize("content,words", [
    (None, "square"),
    (b"not an npy file at all", "not a readable .npy"),
    (b"", "not a readable .npy"),
])
def test_bad_npy(tmp_path, content, words):
    p = tmp_path / "g.npy"
    if content is None:
        np.save(p, np.zeros((2, 3)))
    else:
        p.write_bytes(content)
    with pytest.raises(GraphFormatError, match=words):
        read_graph(p)
    np.save(p, np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(GraphFormatError, match="numeric"):
        read_graph(p)


# -- files written by other tools ---------------------------------------------------------
@pytest.mark.parametrize("field", ["real", "integer", "pattern"])
@pytest.mark.parametrize("symmetry", ["general", "symmetric", "skew-symmetric"])
def test_mtx_written_by_scipy(tmp_path, field, symmetry, rng):
    if (field, symmetry) == ("pattern", "skew-symmetric"):
        pytest.skip("not a Matrix Market type (tested among the malformed files)")
    n = 9
    a = rng.integers(-50, 50, (n, n)) * (rng.random((n, n)) < 0.4)
    if field == "real":
        a = a / 8.0
    if symmetry == "symmetric":
        a = np.tril(a) + np.tril(a, -1).T
    elif symmetry == "skew-symmetric":
        a = np.tril(a, -1) - np.tril(a, -1).T
    if field == "pattern":
        a = (a != 0).astype(np.int64)
    p = tmp_path / "g.mtx"
    scipy.io.mmwrite(p, sp.coo_matrix(a), field=field, symmetry=symmetry)
    assert symmetry in p.read_text().splitlines()[0]
    e = read_graph(p)
    got = np.zeros((n, n))
    got[e.src, e.dst] = e.weight
    np.testing.assert_array_equal(got, a)
    assert len(e.src) == np.count_nonzero(a)


def test_mtx_read_by_scipy(tmp_path):
    e = EdgeList(4, [0, 1, 3, 0], [1, 2, 0, 1], [2, 3, 4, 5])
    write_graph(tmp_path / "g.mtx", e)
    a = scipy.io.mmread(tmp_path / "g.mtx").toarray()
    want = np.zeros((4, 4))
    want[[1, 3, 0], [2, 0, 1]] = [3, 4, 5]  # the later (0, 1) wins
    np.testing.assert_array_equal(a, want)


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_graphml_written_by_networkx(tmp_path, directed, weighted):
    g = nx.gnp_random_graph(12, 0.3, seed=7, directed=directed)
    g = nx.relabel_nodes(g, {v: f"node {v}" for v in g})
    rng = np.random.default_rng(1)
    if weighted:
        for u, v in g.edges:
            g[u][v]["weight"] = float(rng.integers(1, 9)) / 2
    p = tmp_path / "g.graphml.gz"
    nx.write_graphml(g, p)
    e = read_graph(p)
    nodes = list(g.nodes)
    assert e.n == len(nodes)
    got = edge_dict(e)
    want = {}
    for u, v, data in g.edges(data=True):
        want[(nodes.index(u), nodes.index(v))] = data.get("weight", 1)
        if not directed:
            want[(nodes.index(v), nodes.index(u))] = data.get("weight", 1)
    assert got == want


def test_graphml_gzip_by_content_not_name(tmp_path):
    g = nx.DiGraph()
    g.add_edge("a", "b", weight=3)
    plain, packed = tmp_path / "plain.graphml.gz", tmp_path / "packed.graphml"
    with open(plain, "wb") as f:  # plain XML under a .gz name
        nx.write_graphml(g, f)
    with gzip.open(packed, "wb") as f:  # gzip under a plain name
        nx.write_graphml(g, f)
    for path in (plain, packed):
        e = read_graph(path)
        assert (e.src.tolist(), e.dst.tolist(), e.weight.tolist(), e.labels.tolist()) == ([0], [1], [3], ["a", "b"])


def test_graphml_errors(tmp_path):
    p = tmp_path / "g.graphml"
    p.write_text('<?xml version="1.0"?>\n<graphml>\n<graph edgedefault="directed">\n<node id="a">\n</graph>')
    with pytest.raises(GraphFormatError) as info:
        read_graph(p)
    assert info.value.line == 5 and "XML" in info.value.problem
    g = nx.DiGraph()
    g.add_edge("a", "b", weight="heavy")
    nx.write_graphml(g, p)
    with pytest.raises(GraphFormatError, match="'weight' is 'heavy', not a number"):
        read_graph(p)


def _metis_text(n, adj, fmt="", vweights=None, comment=True, eweights=False):
    """A METIS file from ``adj[v] = [(u, w), ...]`` (0-based), written independently."""
    m = sum(len(a) for a in adj) // 2
    lines = ["% a comment"] if comment else []
    lines.append(f"{n} {m}" + (f" {fmt}" if fmt else ""))
    for v in range(n):
        fields = [str(x) for x in (vweights[v] if vweights else [])]
        for u, w in adj[v]:
            fields.append(str(u + 1))
            if eweights:
                fields.append(str(w))
        lines.append(" ".join(fields))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("fmt", ["", "0", "1", "10", "11", "011"])
def test_metis(tmp_path, fmt):
    g = nx.gnp_random_graph(10, 0.35, seed=3)
    rng = np.random.default_rng(5)
    adj = [[] for _ in range(10)]
    for u, v in g.edges:
        w = int(rng.integers(1, 20))
        adj[u].append((v, w))
        adj[v].append((u, w))
    has_vweights = fmt.zfill(3)[1] == "1"
    vweights = [[int(rng.integers(1, 5)), 7] for _ in range(10)] if has_vweights else None
    fmt_field = fmt + (" 2" if vweights else "")
    p = tmp_path / "g.graph"
    p.write_text(_metis_text(10, adj, fmt_field, vweights, eweights=fmt.endswith("1")))
    e = read_graph(p)
    want = {(v, u): (w if fmt.endswith("1") else 1) for v in range(10) for u, w in adj[v]}
    assert e.n == 10 and edge_dict(e) == want


def test_metis_isolated_vertices(tmp_path):
    p = tmp_path / "g.metis"
    p.write_text("4 1\n\n3\n2\n\n")
    e = read_graph(p)
    assert e.n == 4 and edge_dict(e) == {(1, 2): 1, (2, 1): 1}


# -- malformed files, every reader ------------------------------------------------------
MALFORMED = {
    ".snap": [
        (b"# c\n0 1\n1 x\n", 3, "v is 'x', not an integer"),
        (b"# c\n0 1 5\n1 2\n", 3, "expected an edge line 'u v w', found 2 fields"),
        (b"0 1\n1 2 5\n", 2, "extra field '5'"),
        (b"0 1 2 3\n", 1, "extra field '3'"),
        (b"7\n", 1, "found 1 field"),
        (b"0 1\n-1 2\n", 2, "u -1 must be >= 0"),
        (b"0 1 1.5\n1 2 abc\n", 2, "w is 'abc', not a number"),
        (b"0 1 1.5\n1 2 1e\n", 2, "w is '1e', not a number"),
        (b"0 1 1.5\n1 2 nan\n", 2, "not a number"),
        (b"0 1 1\n1 2 1..5\n", 2, "not a number"),
        (b"0 1\n1 99999999999999999999\n", 2, "does not fit"),
    ],
    ".mtx": [
        (b"", 1, "empty file"),
        (b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "array"),
        (b"%%MatrixMarket matrix coordinate complex general\n", 1, "complex"),
        (b"%%MatrixMarket matrix coordinate real hermitian\n", 1, "hermitian"),
        (b"%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n", 1, "skew"),
        (b"1 1 1\n1 1 1\n", 1, "banner"),
        (b"%%MatrixMarket matrix coordinate real general\n% only comments\n", 3, "no size line"),
        (b"%%MatrixMarket matrix coordinate real general\n%c\n2 3 0\n", 3, "2 x 3"),
        (b"%%MatrixMarket matrix coordinate real general\n2 2\n", 2, "found 2 fields"),
        (b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n", 4, "file ends after 1 entries"),
        (b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n2 2 2\n", 4, "more entries"),
        (b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1.0\n", 3,
         "column 3 is out of range 1..2"),
        (b"%%MatrixMarket matrix coordinate integer general\n2 2 1\n% c\n1 2 1.5\n", 4,
         "value is '1.5', not an integer"),
        (b"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2 1\n", 3, "extra field"),
        (b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2\n", 3, "found 2 fields"),
    ],
    ".gr": [
        (b"", 1, "no problem line"),
        (b"c only comments\n", 2, "no problem line"),
        (b"a 1 2 3\n", 1, "expected a problem line"),
        (b"p max 3 2\n", 1, "expected a problem line"),
        (b"p sp 3 x\n", 1, "m is 'x'"),
        (b"c c\np sp 3 2\na 1 2 3\nx 2 3 4\n", 4, "expected an arc line"),
        (b"p sp 3 2\na 1 2 3\np sp 3 2\n", 3, "expected an arc line"),
        (b"p sp 3 1\nc\na 1 4 3\n", 3, "v 4 is out of range 1..3"),
        (b"p sp 3 2\na 1 2 3\n", 3, "file ends after 1 arc lines"),
        (b"p sp 3 1\na 1 2 3\na 2 3 4\n", 3, "more arc lines"),
        (b"p sp 3 1\na 1 2\n", 2, "found 2 fields"),
        (b"p sp 3 1\na1 2 3\n", 2, "expected an arc line"),
    ],
    ".graph": [
        (b"% nothing\n", 1, "empty file"),
        (b"3 1 2\n", 1, "fmt is '2'"),
        (b"3 1 0 2\n2\n1\n\n", 1, "ncon is given"),
        (b"3 1 1\n2 5\n1\n\n", 3, "vertex 2: expected an adjacency line 'v1 w1 v2 w2 ...', found 1 fields"),
        (b"3 1\n2\n1\n", 4, "file ends after 2 vertex lines"),
        (b"3 1\n2\n1\n\n3\n", 5, "more vertex lines"),
        (b"3 1\n% c\n2\n4\n\n", 4, "vertex 2: neighbour 4 is out of range 1..3"),
        (b"3 1\n2\nx\n\n", 3, "entry is 'x', not an integer"),
        (b"3 2\n2\n1\n\n", 1, "need 4 adjacency entries"),
        (b"3 1\n2 3\n1\n1\n", 3, "more adjacency entries"),
        # METIS graphs are undirected: no self-loops, every entry listed on both lines alike
        (b"2 2\n1 1 2\n1\n", 2, "vertex 1 lists itself"),
        (b"% c\n3 2\n% x\n2\n3\n1 2\n", 4, "vertex 1 lists neighbour 2, but vertex 2 does not list 1"),
        (b"3 2 1\n2 5\n1 5 3 7\n2 8\n", 3,
         "vertex 2 lists neighbour 3 with weight 7, but vertex 3 does not list 2 with weight 7"),
        (b"2 2\n2 2 2\n1\n", 2, "vertex 1 lists neighbour 2, but vertex 2 does not list 1 as often"),
    ],
}


@pytest.mark.parametrize("suffix,content,line,words",
                         [(s, c, ln, w) for s, cases in MALFORMED.items() for c, ln, w in cases])
def test_malformed_files_name_the_line(tmp_path, suffix, content, line, words):
    for gz in (False, True):
        p = tmp_path / ("bad" + suffix + (".gz" if gz else ""))
        p.write_bytes(gzip.compress(content) if gz else content)
        with pytest.raises(GraphFormatError) as info:
            read_graph(p)
        err = info.value
        assert (err.line, words in err.problem) == (line, True), str(err)
        assert str(err).startswith(f"{p}:{line}: ")


# -- SNAP details ----------------------------------------------------------------------
def test_snap_nodes_header_and_n(tmp_path):
    p = tmp_path / "g.tsv"
    p.write_text("# Directed graph\n# Nodes: 10 Edges: 2\n% other comment\n0\t3\n3\t1\n")
    e = read_graph(p)
    assert e.n == 10 and e.weight.tolist() == [1, 1]
    assert read_graph(p, n=4).n == 4
    with pytest.raises(GraphFormatError, match="v 3 is out of range 0..2") as info:
        read_graph(p, n=3)
    assert info.value.line == 4
    p.write_text("0 5\n")  # no header: the ids that appear, with their gap, named by labels
    e = read_graph(p)
    assert e.n == 2 and e.labels.tolist() == [0, 5] and (e.src.tolist(), e.dst.tolist()) == ([0], [1])


def test_snap_float_and_mixed_weights_are_exact(tmp_path):
    p = tmp_path / "g.el"
    values = ["1", "2.5", "-0.1", "1e-300", "12345678901234567890123", "0.30000000000000004",
              "4.9406564584124654e-324", "-7", "1.7976931348623157e308", ".5", "5.", "+3E2"]
    p.write_text("".join(f"0 {k % 3} {v}\n" for k, v in enumerate(values)))
    e = read_graph(p)
    assert e.weight.dtype == np.float64
    assert e.weight.tolist() == [float(v) for v in values]


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=50),
       st.sampled_from(["repr", "e", "f"]))
@HYPO
def test_float_parsing_is_correctly_rounded(tmp_path, values, style):
    text = {"repr": repr, "e": lambda v: f"{v:.17e}", "f": lambda v: f"{v:.25f}"}[style]
    p = tmp_path / "g.snap"
    p.write_text("".join(f"0 1 {text(v)}\n" for v in values))
    e = read_graph(p)
    assert e.weight.tolist() == [float(text(v)) for v in values]


# -- choosing the format -------------------------------------------------------------------
def test_guess_format_and_errors(tmp_path):
    cases = {"a.txt": "homework", "a": "homework", "dir/in_file": "homework", "a.in.gz": "homework",
             "a.snap": "snap", "A.TSV.GZ": "snap", "a.npy": "npy", "a.mtx.gz": "mtx",
             "a.gr": "dimacs", "a.graph": "metis", "a.metis": "metis", "a.graphml": "graphml",
             "a.npz": "npz", "a.csv": "csv", "A.CSV.GZ": "csv"}
    for path, name in cases.items():
        assert guess_format(path) == name
    assert set(FORMATS) == {"homework", "snap", "npy", "mtx", "dimacs", "metis", "graphml", "npz", "csv"}
    assert guess_format("x.dat", "edgelist") == "snap" and guess_format("x", "MTX.gz") == "mtx"
    with pytest.raises(ValueError, match="known formats: homework .*graphml"):
        guess_format("x.dat")
    with pytest.raises(ValueError, match="unknown format 'xlsx'"):
        read_graph("x.txt", fmt="xlsx")
    with pytest.raises(ValueError, match="cannot hold distances; formats that can: homework, npy, mtx"):
        write_distances(tmp_path / "d.snap", np.zeros((2, 2)))
    with pytest.raises(ValueError, match="cannot hold a graph"):
        write_graph(tmp_path / "g.graph", EdgeList(2, [0], [1], [1]))
    with pytest.raises(ValueError, match="n= applies to SNAP"):
        read_graph(tmp_path / "g.gr", n=3)
    with pytest.raises(FileNotFoundError):
        read_graph(tmp_path / "missing.txt")
    with pytest.raises(TypeError, match="EdgeList"):
        write_graph(tmp_path / "g.txt", [(0, 1, 2)])
    assert not list(tmp_path.iterdir())


def test_txt_files_of_other_formats_are_recognised(tmp_path):
    """SNAP ships edge lists as .txt.gz; a homework file never starts with '#'."""
    p = tmp_path / "web-Tiny.txt.gz"
    p.write_bytes(gzip.compress(b"# Directed graph (each unordered pair of nodes is saved once)\n"
                                b"# Nodes: 3 Edges: 2\n0\t1\n1\t2\n"))
    e = read_graph(p)
    assert (e.n, e.src.tolist(), e.dst.tolist()) == (3, [0, 1], [1, 2])
    q = tmp_path / "m.txt"
    q.write_text("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n")
    assert read_graph(q).src.tolist() == [0]
    r = tmp_path / "d.txt"
    r.write_text("c x\np sp 2 1\na 1 2 3\n")
    assert read_graph(r).weight.tolist() == [3]
    with pytest.raises(GraphFormatError, match="N is '#'"):
        read_graph(p, fmt="homework")  # an explicit format is obeyed


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=60))
@HYPO
def test_writers_keep_the_last_of_repeated_edges_in_order(pairs):
    from apsp.io._formatter import last_assignment_wins

    src = np.array([p[0] for p in pairs], dtype=np.int64)
    dst = np.array([p[1] for p in pairs], dtype=np.int64)
    idx = np.arange(len(pairs))
    last = {p: k for k, p in enumerate(pairs)}
    want = sorted(last.values())
    s, d, k = last_assignment_wins(src, dst, idx)
    assert k.tolist() == want
    assert s.tolist() == [pairs[j][0] for j in want] and d.tolist() == [pairs[j][1] for j in want]
