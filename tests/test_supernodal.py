"""Rows of the distance matrix from the nested dissection's elimination (`apsp.supernodal`,
`apsp.cpu.rowsolve`): against scipy's Dijkstra, and the statistics against the searches' route."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

import apsp
from apsp.cpu.rowsolve import rows
from apsp.dissection import plan
from apsp.exactness import inf_value
from apsp.graph import EdgeList, Graph
from apsp.supernodal import Factors, boundaries, eliminate, rows_reference


def _pieces(rng, n: int, directed: bool, floats: bool) -> Graph:
    """Random weighted edges (zero weights among them) in two pieces with no edge between them,
    and the last vertices isolated."""
    isolated = int(rng.integers(0, 3)) if n > 2 else 0
    live = n - isolated
    cut = int(rng.integers(0, live + 1))
    src, dst = [], []
    for lo, hi in ((0, cut), (cut, live)):
        if hi - lo < 2:
            continue
        m = int(rng.integers(1, 3 * (hi - lo)))
        src.append(rng.integers(lo, hi, m))
        dst.append(rng.integers(lo, hi, m))
    s = np.concatenate(src) if src else np.zeros(0, dtype=np.int64)
    d = np.concatenate(dst) if dst else np.zeros(0, dtype=np.int64)
    w = rng.uniform(0, 10, len(s)) if floats else rng.integers(0, 10, len(s))
    w[rng.random(len(s)) < 0.15] = 0
    if not directed:
        s, d, w = np.concatenate([s, d]), np.concatenate([d, s]), np.concatenate([w, w])
    return Graph.from_edges(EdgeList(n, s, d, w))


def _grid(rng, side: int, directed: bool = False) -> Graph:
    idx = np.arange(side * side).reshape(side, side)
    s = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    d = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    if directed:  # every edge one way or the other, some both
        flip = rng.random(len(s)) < 0.5
        s, d = np.where(flip, d, s), np.where(flip, s, d)
        both = rng.random(len(s)) < 0.3
        s, d = np.concatenate([s, d[both]]), np.concatenate([d, s[both]])
    else:
        s, d = np.concatenate([s, d]), np.concatenate([d, s])
    w = rng.integers(1, 101, len(s))
    if not directed:
        w[len(w) // 2:] = w[:len(w) // 2]
    return Graph.from_edges(EdgeList(side * side, s, d, w))


def _knn(rng, n: int, k: int = 6) -> Graph:
    """Points in the plane, each linked to its k nearest (directed), integer lengths."""
    pts = rng.random((n, 2))
    dist = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    np.fill_diagonal(dist, np.inf)
    near = np.argsort(dist, axis=1)[:, :k]
    s = np.repeat(np.arange(n), k)
    d = near.ravel()
    return Graph.from_edges(EdgeList(n, s, d, np.rint(1000 * dist[s, d]).astype(np.int64)))


def _expected(g: Graph, dt: np.dtype, nd) -> np.ndarray:
    """scipy's Dijkstra, in the kernels' sentinel and the layout's order."""
    ref = dijkstra(g.to_csr(), directed=True)
    ref = np.where(np.isinf(ref), inf_value(dt), ref).astype(dt)
    return ref[nd.order][:, nd.order]


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("dtype", ["int16", "int32", "float64"])
def test_rows_equal_scipy_dijkstra_on_random_graphs(rng, directed, dtype):
    dt = np.dtype(dtype)
    for n in [1, 2, 3, 4, 5] + [int(x) for x in rng.integers(6, 70, 12)]:
        g = _pieces(rng, n, directed, floats=dt.kind == "f")
        nd = plan(g, tile=1, leaf_size=int(rng.integers(1, 12)), pad=1)
        f = eliminate(g, dt, nd)
        want = _expected(g, dt, nd)
        got = rows_reference(f, 0, nd.size)
        fast = rows(f, np.arange(nd.size)[::-1].copy(), block_rows=int(rng.integers(1, 9)))
        if dt.kind == "f":  # sums in another order: equal within rounding
            np.testing.assert_allclose(got, want, rtol=1e-12)
            np.testing.assert_allclose(fast, want[::-1], rtol=1e-12)
        else:
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(fast, want[::-1])
        s0 = int(rng.integers(0, nd.size))
        s1 = int(rng.integers(s0 + 1, nd.size + 1))
        np.testing.assert_array_equal(rows_reference(f, s0, s1), got[s0:s1])


@pytest.mark.parametrize("shape", ["grid", "directed grid", "knn"])
def test_rows_equal_scipy_dijkstra_on_grids_and_knn_graphs(rng, shape):
    g = _knn(rng, 300) if shape == "knn" else _grid(rng, 17, directed=shape == "directed grid")
    nd = plan(g, tile=1, leaf_size=16, pad=1)
    f = eliminate(g, np.int32, nd)
    picked = rng.choice(nd.size, 40, replace=False)
    np.testing.assert_array_equal(rows(f, picked, block_rows=16), _expected(g, np.dtype(np.int32), nd)[picked])
    # the contract the GPU engine reads
    assert isinstance(f, Factors) and f.dtype == np.int32 and not f.negative
    for t in range(nd.nodes):
        nv, nb = int(nd.end[t] - nd.own_start[t]), len(f.boundary[t])
        assert f.boundary[t].dtype == np.int64 and np.all(np.diff(f.boundary[t]) > 0)
        assert f.closure[t].shape == (nv, nv) and f.up[t].shape == (nv, nb) and f.down[t].shape == (nb, nv)


def test_boundaries_are_the_vertices_a_subtree_touches(rng):
    g = _grid(rng, 20)
    nd = plan(g, tile=1, leaf_size=10, pad=1)
    bnd = boundaries(g, nd)
    csr = g.to_csr()
    a = sp.csr_matrix(csr)[nd.order][:, nd.order]
    sym = (a + a.T).tocsr()
    for t in range(nd.nodes):
        s, e = int(nd.start[t]), int(nd.end[t])
        touched = np.unique(sym[s:e].indices)
        want = touched[(touched < s) | (touched >= e)]
        np.testing.assert_array_equal(bnd[t], want)
        ancestors = list(nd.ancestors(t))
        assert all(any(nd.own_start[p] <= x < nd.end[p] for p in ancestors) for x in bnd[t])
        assert len(bnd[t]) <= sum(b - a for a, b in nd.reach(t)) - (e - s)


def _stats_pair(g, **kw):
    a = apsp.distance_stats(g, method="nd-rows", **kw)
    b = apsp.distance_stats(g, method="dijkstra", **kw)
    return a, b


def _assert_same_stats(a, b):
    assert a.method == "nd-rows"
    for name in ("sources", "reachable", "total", "eccentricity", "harmonic"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    if b.histogram is not None:
        np.testing.assert_array_equal(a.histogram, b.histogram)
    for stat in ("diameter", "radius", "wiener_index", "average_distance", "global_efficiency"):
        assert getattr(a, stat)() == getattr(b, stat)(), stat
    for stat in ("center", "periphery", "closeness"):
        np.testing.assert_array_equal(getattr(a, stat)(), getattr(b, stat)(), err_msg=stat)


@pytest.mark.parametrize("shape", ["grid", "directed grid", "knn", "pieces"])
def test_every_statistic_equals_the_searches_route(rng, shape):
    g = {"grid": lambda: _grid(rng, 15), "directed grid": lambda: _grid(rng, 15, directed=True),
         "knn": lambda: _knn(rng, 250), "pieces": lambda: _pieces(rng, 80, True, floats=False)}[shape]()
    _assert_same_stats(*_stats_pair(g, histogram=True))
    _assert_same_stats(*_stats_pair(g, direction="in"))
    sources = rng.choice(g.n, 30, replace=False)
    targets = rng.choice(g.n, g.n // 2, replace=False)
    _assert_same_stats(*_stats_pair(g, sources=sources, targets=targets))


def test_float_statistics_equal_within_rounding_and_int64_sums_are_exact(rng):
    g = _grid(rng, 12)
    csr = g.to_csr()
    floats = Graph.from_edges(EdgeList(g.n, *csr.nonzero(), rng.uniform(0.5, 2.0, csr.nnz)))
    a, b = _stats_pair(floats)
    np.testing.assert_allclose(a.total, b.total, rtol=1e-12)
    np.testing.assert_array_equal(a.reachable, b.reachable)
    big = Graph.from_edges(EdgeList(g.n, *csr.nonzero(), np.full(csr.nnz, 2 ** 52)))
    a, b = _stats_pair(big)
    assert a.dtype == np.int64 and a.wiener_index() == b.wiener_index()
    assert a.total.dtype == object  # past int64: Python ints, exact


def test_the_plan_picks_the_dissections_rows_on_a_grid_and_searches_elsewhere(rng):
    from apsp.plan import make_stats_plan

    grid = _grid(rng, 60)
    p = make_stats_plan(grid, sources=grid.n, backend="cpu")
    assert p.method == "nd-rows" and "Dijkstra" in p.reason and "estimated" in p.reason
    assert p.memory["host_bytes"] < grid.n ** 2 * 4  # never the n x n matrix
    dense = _dense_random(rng, 300)
    assert make_stats_plan(dense, sources=dense.n, backend="cpu").method == "dijkstra"
    negative = Graph.from_edges(EdgeList(3, np.array([0, 1]), np.array([1, 2]), np.array([-1, 2])))
    assert make_stats_plan(negative, sources=3, backend="cpu").method == "johnson"
    with pytest.raises(ValueError, match="non-negative"):
        apsp.distance_stats(negative, method="nd-rows")


def _dense_random(rng, n: int) -> Graph:
    src, dst = np.nonzero(rng.random((n, n)) < 0.3)
    return Graph.from_edges(EdgeList(n, src, dst, rng.integers(1, 9, len(src))))


def test_shortest_paths_by_name_gives_the_rows_of_the_searches(rng):
    g = _knn(rng, 200)
    whole = apsp.shortest_paths(g, method="nd-rows")
    np.testing.assert_array_equal(whole.distances, apsp.shortest_paths(g, method="dijkstra").distances)
    picked = rng.choice(g.n, 7, replace=False)
    some = apsp.shortest_paths(g, method="nd-rows", sources=picked)
    np.testing.assert_array_equal(some.distances, whole.distances[picked])


def test_networkx_backend_closeness_on_a_weighted_grid_takes_the_dissections_rows(rng, monkeypatch):
    nx = pytest.importorskip("networkx")
    import apsp.stats
    from apsp import networkx_backend as nxb

    side = 46  # 2116 vertices: the automatic choice weighs nd-rows from 2000
    G = nx.grid_2d_graph(side, side)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = int(rng.integers(1, 101))
    used = []
    real = apsp.stats._dissection_rows
    monkeypatch.setattr(apsp.stats, "_dissection_rows", lambda *a, **k: used.append(1) or real(*a, **k))
    ours = nxb.closeness_centrality(G, distance="weight")
    assert used, "the plan did not take the dissection's rows"
    index = {v: i for i, v in enumerate(G.nodes)}
    edges = [(index[u], index[v], d["weight"]) for u, v, d in G.edges(data=True)]
    s, d, w = (np.array(x) for x in zip(*edges))
    want = apsp.distance_stats(Graph.from_edges(EdgeList(G.number_of_nodes(), np.concatenate([s, d]),
                                                         np.concatenate([d, s]), np.concatenate([w, w]))),
                               method="dijkstra").closeness()
    np.testing.assert_array_equal(np.array([ours[v] for v in G.nodes]), want)


def test_an_error_in_one_thread_stops_the_others_after_their_block(rng):
    from apsp.cpu.rowsolve import rows_stats

    g = _grid(rng, 12)
    nd = plan(g, tile=1, leaf_size=16, pad=1)
    f = eliminate(g, np.int32, nd)
    calls = []

    def interrupted(rows_done):
        calls.append(rows_done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rows_stats(f, nd.position, nd.position, np.ones(g.n, dtype=bool), False, block_rows=1, threads=2,
                   on_block=interrupted)
    assert 1 <= len(calls) <= 2  # each thread stops at its first block's end, not after its 72
