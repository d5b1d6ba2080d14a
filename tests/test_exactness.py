"""Exact or refused: integer weights whose distances cross float64's exact range (2**53).

Every method either returns the exact distances in the dtype it reports or refuses with
`DtypeError`; none may return a rounded number. The expected values come from a pure-Python
Floyd-Warshall on Python integers, which cannot round or overflow.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import apsp
from apsp.errors import DtypeError
from apsp.graph import EdgeList

from conftest import HAS_TRITON

BIG = 2**53 + 1  # the smallest positive integer float64 cannot hold


def exact_distances(n, edges):
    """All-pairs distances on Python ints (None = no path); later duplicate edges win."""
    w = {}
    for u, v, x in edges:
        w[(u, v)] = int(x)
    d = [[0 if i == j else None for j in range(n)] for i in range(n)]
    for (u, v), x in w.items():
        if u == v:
            d[u][u] = min(0, x)
        else:
            d[u][v] = x
    for k in range(n):
        for i in range(n):
            if d[i][k] is None:
                continue
            for j in range(n):
                if d[k][j] is not None and (d[i][j] is None or d[i][k] + d[k][j] < d[i][j]):
                    d[i][j] = d[i][k] + d[k][j]
    return d


def as_python(result):
    reach = result.reachable
    return [[int(result.distances[i, j]) if reach[i, j] else None for j in range(result.n)]
            for i in range(result.n)]


def boundary_graph(rng, n, negative=False):
    """A random graph whose integer weights put some distances just below and some above 2**53."""
    m = int(rng.integers(n, 3 * n + 1))
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    scale = int(rng.choice([2**51, 2**52, 2**53 - 3, 2**53, BIG, 2**54]))
    w = np.array([scale // int(rng.integers(1, 4)) + int(rng.integers(-3, 4)) for _ in src], dtype=np.int64)
    w = np.maximum(w, 0)
    if negative:  # potentials keep every cycle non-negative
        p = rng.integers(0, 2**40, n)
        w = w + p[src] - p[dst]
    return EdgeList(n, src, dst, w)


METHODS = [("fw", "cpu"), ("reference", "cpu"), ("dijkstra", "cpu"), ("johnson", "cpu"), ("nd-rows", "cpu"),
           ("auto", "cpu")]
if HAS_TRITON:
    METHODS.append(("fw", "gpu"))


@pytest.mark.parametrize("method,backend", METHODS)
def test_integer_weights_across_float64_boundary_are_exact_or_refused(rng, method, backend):
    for trial in range(6):
        negative = method in ("johnson", "fw", "reference", "auto") and trial % 2 == 1
        e = boundary_graph(rng, int(rng.integers(2, 7)), negative=negative)
        want = exact_distances(e.n, zip(e.src.tolist(), e.dst.tolist(), e.weight.tolist()))
        r = apsp.shortest_paths(e, method=method, backend=backend)
        assert r.dtype.kind in "iu"
        assert as_python(r) == want, (method, e)


def test_issue_example_every_method(tmp_path):
    g = [(0, 1, BIG), (1, 2, 1)]
    want = [BIG, BIG + 1]
    for method in ("auto", "fw", "reference", "dijkstra", "johnson"):
        assert apsp.shortest_paths(g, method=method).distances[0, 1:].tolist() == want
    # with paths too (the reference's pointer-tracking variant)
    r = apsp.shortest_paths(g, method="reference", return_successors=True)
    assert r.distances[0, 2] == BIG + 1 and r.path(0, 2) == [0, 1, 2]


def test_int64_npy_input_is_exact(tmp_path):
    a = np.zeros((3, 3), dtype=np.int64)
    a[0, 1], a[1, 2] = BIG, 1
    np.save(tmp_path / "g.npy", a)
    assert apsp.shortest_paths(tmp_path / "g.npy").distances[0].tolist() == [0, BIG, BIG + 1]


@pytest.mark.slow
def test_cli_auto_and_path_are_exact(tmp_path):
    (tmp_path / "g.txt").write_text(f"3 2\n1 2 {BIG}\n2 3 1\n")
    run = [sys.executable, "-m", "apsp"]
    subprocess.run(run + [str(tmp_path / "g.txt"), str(tmp_path / "d.txt")], check=True)
    assert (tmp_path / "d.txt").read_text().split("\n")[0] == f"0 {BIG} {BIG + 1}"
    out = subprocess.run(run + ["path", str(tmp_path / "g.txt"), "--from", "1", "--to", "3"],
                         check=True, capture_output=True, text=True).stdout
    assert f"length {BIG + 1}" in out
    for method in ("dijkstra", "johnson"):
        subprocess.run(run + ["solve", str(tmp_path / "g.txt"), "-o", str(tmp_path / "e.txt"),
                              "--method", method], check=True)
        assert (tmp_path / "e.txt").read_text().split("\n")[0] == f"0 {BIG} {BIG + 1}"


def test_float64_dtype_refused_when_the_weight_itself_rounds():
    # (n-1)*max|w| rounds down to exactly 2**53 in float: the check must still refuse
    with pytest.raises(DtypeError):
        apsp.shortest_paths([(0, 1, BIG)], method="fw", dtype="float64")


def test_networkx_backend_dijkstra_lengths_are_exact(rng):
    nx = pytest.importorskip("networkx")
    from importlib.metadata import entry_points

    if not any(ep.name == "apsp" for ep in entry_points(group="networkx.backends")):
        pytest.skip("the 'apsp' networkx backend registers through an entry point only when apsp is installed")
    for _ in range(4):
        e = boundary_graph(rng, int(rng.integers(2, 7)))
        G = nx.DiGraph()
        G.add_nodes_from(range(e.n))
        for u, v, w in zip(e.src.tolist(), e.dst.tolist(), e.weight.tolist()):
            G.add_edge(u, v, weight=w)  # later duplicates win, like EdgeList
        want = dict(nx.all_pairs_dijkstra_path_length(G))  # networkx sums Python ints: exact
        got = dict(nx.all_pairs_dijkstra_path_length(G, backend="apsp"))
        assert {u: dict(r) for u, r in got.items()} == {u: dict(r) for u, r in want.items()}
        want_fw = nx.floyd_warshall(G)
        got_fw = nx.floyd_warshall(G, backend="apsp")
        assert {u: dict(r) for u, r in got_fw.items()} == {u: dict(r) for u, r in want_fw.items()}


def test_scipy_drop_in_matches_scipy_across_the_boundary(rng):
    # the drop-in promises scipy's float64 results, rounding included
    import scipy.sparse as sp
    from scipy.sparse.csgraph import floyd_warshall as scipy_fw
    from scipy.sparse.csgraph import shortest_path as scipy_shortest_path

    for _ in range(6):
        e = boundary_graph(rng, int(rng.integers(2, 7)))
        g = apsp.Graph.from_edges(e).to_csr()
        mat = sp.csr_matrix((g.data.astype(np.float64), g.indices, g.indptr), shape=g.shape)
        np.testing.assert_array_equal(apsp.floyd_warshall(mat), scipy_fw(mat))
        for method in ("D", "J", "auto"):  # scipy's own method: its rounding depends on the order
            np.testing.assert_array_equal(apsp.shortest_path(mat, method=method),
                                          scipy_shortest_path(mat, method=method))


def test_bfs_hop_counts_are_exact_in_their_dtype(rng):
    # BFS distances are hop counts (at most n - 1): nothing near 2**53 can arise, so only the
    # dtype it reports must hold them
    e = boundary_graph(rng, 6)
    r = apsp.shortest_paths(EdgeList(e.n, e.src, e.dst, np.ones_like(e.weight)), method="bfs")
    want = exact_distances(e.n, zip(e.src.tolist(), e.dst.tolist(), [1] * e.m))
    assert as_python(r) == want


@pytest.mark.parametrize("method", ["fw", "reference", "dijkstra", "johnson", "auto"])
def test_float_sums_that_could_overflow_to_inf_are_refused(method):
    # 0 -> 2 is reachable (6e38 > float32's largest): inf would read as "no path"
    g = [(0, 1, 3e38), (1, 2, 3e38), (2, 3, 0.5)]
    with pytest.raises(DtypeError, match="overflow"):
        apsp.shortest_paths(g, method=method, dtype="float32")
    with pytest.raises(DtypeError, match="overflow"):
        apsp.shortest_paths([(0, 1, 1e308), (1, 2, 1e308), (2, 3, 0.5)], method=method)
    # float64 holds the float32 case exactly as the sums go
    r = apsp.shortest_paths(g, method=method, dtype="float64")
    assert r.reachable[0, 2] and r.distances[0, 2] == 6e38


def test_float32_with_large_integer_weights_is_a_clear_refusal(tmp_path):
    (tmp_path / "g.txt").write_text("3 2\n1 2 100000000000\n2 3 1\n")
    r = subprocess.run([sys.executable, "-m", "apsp", "solve", str(tmp_path / "g.txt"), "-o",
                        str(tmp_path / "d.txt"), "--dtype", "float32"], capture_output=True, text=True)
    assert r.returncode == 1 and "float32" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "d.txt").exists()


INF64 = int(np.iinfo(np.int64).max // 2)  # the int64 sentinel: distances at or above it cannot be solved


def limit_chains():
    """Chains 0 -> 1 -> ... -> L whose length L*w lies just below, at and just above the int64
    sentinel, with weights a float rounds (odd, near 2**60: a float keeps 53 of their bits)."""
    chains = []
    for length in (2, 3, 4, 7):
        for total in (INF64 - 1, INF64, INF64 + 1, INF64 + length, INF64 - length):
            w = total // length
            chains.append((length, w))
    chains.append((3, 1537228672809129301))  # 3w is the sentinel itself: the report's example
    return chains


def chain_answer(length, w):
    """Row 0 of the chain's exact distances (Python ints)."""
    return [i * w for i in range(length + 1)]


@pytest.mark.parametrize("method", ["fw", "nd-fw", "reference", "dijkstra", "johnson", "auto"])
def test_chains_at_the_int64_limit_are_exact_or_refused(method):
    for length, w in limit_chains():
        edges = [(i, i + 1, w) for i in range(length)]
        try:
            r = apsp.shortest_paths(edges, method=method, backend="cpu")
        except DtypeError:
            # refused only where a distance may reach the sentinel: the bound (n-1)*w decides
            assert length * w >= INF64, (method, length, w)
            continue
        assert r.reachable[0].all(), (method, length, w)
        assert [int(x) for x in r.distances[0]] == chain_answer(length, w), (method, length, w)


@pytest.mark.slow
def test_chain_at_the_int64_limit_through_the_cli(tmp_path):
    w = 1537228672809129301
    (tmp_path / "lim.txt").write_text(f"4 3\n1 2 {w}\n2 3 {w}\n3 4 {w}\n")
    run = [sys.executable, "-m", "apsp"]
    for args in (["solve", "-o", "-", "--method", "fw"], ["solve", "-o", "-", "--method", "nd-fw"],
                 ["solve", "-o", "-"], ["path", "--from", "1", "--to", "4", "--method", "fw"],
                 ["path", "--from", "1", "--to", "4"]):
        r = subprocess.run(run + args[:1] + [str(tmp_path / "lim.txt")] + args[1:], capture_output=True,
                           text=True)
        # 3w = 4611686018427387903 is the int64 sentinel: exact output or a clear refusal
        assert r.returncode == 1, (args, r.stdout)
        assert "apsp: error: " in r.stderr and "Traceback" not in r.stderr and "no path" not in r.stdout


def test_query_chains_at_the_int64_limit_are_exact_or_refused():
    for length, w in limit_chains():
        edges = [(i, i + 1, w) for i in range(length)]
        try:
            route = apsp.shortest_path_between(edges, 0, length)
        except DtypeError:
            assert length * w >= INF64, (length, w)
            continue
        assert route.length == length * w and route.path == list(range(length + 1))


def test_networkx_backend_chains_at_the_int64_limit_match_networkx():
    nx = pytest.importorskip("networkx")
    from apsp import networkx_backend as backend

    for length, w in limit_chains():
        G = nx.DiGraph()
        G.add_weighted_edges_from((i, i + 1, w) for i in range(length))
        assert backend.floyd_warshall(G) == nx.floyd_warshall(G), (length, w)
        got = {u: dict(r) for u, r in backend.all_pairs_dijkstra_path_length(G)}
        assert got == {u: dict(r) for u, r in nx.all_pairs_dijkstra_path_length(G)}, (length, w)
        got = {u: dict(r) for u, r in backend.all_pairs_bellman_ford_path_length(G)}
        assert got == {u: dict(r) for u, r in nx.all_pairs_bellman_ford_path_length(G)}, (length, w)


def test_an_infinite_sparse_weight_is_a_dtype_refusal():
    # a stored inf is a whole number to numpy's floor, but no integer bound: refused, not crashed
    import scipy.sparse as sp

    m = sp.csr_matrix((np.array([np.inf, 1.0]), (np.array([0, 1]), np.array([1, 2]))), shape=(3, 3))
    for method in ("fw", "dijkstra", "auto"):
        with pytest.raises(DtypeError):
            apsp.shortest_paths(m, method=method)
