"""Nested-dissection Floyd-Warshall (apsp.dissection, apsp.dissection, CPU and GPU engines) against the oracle."""
from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import HAS_TRITON
from pathcheck import as_float, check_predecessors, check_successors
from randgraphs import random_edges

import apsp
from apsp import costs, exactness
from apsp.cpu.oracle import floyd_warshall_reference
from apsp.dissection import dissect
from apsp.engine import SolveOptions
from apsp.errors import NegativeCycleError
from apsp.graph import EdgeList, Graph


def _grid(side, rng, lo=1, hi=20):
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = rng.integers(lo, hi + 1, size=len(u))
    return Graph.from_edges(EdgeList(side * side, np.r_[u, v], np.r_[v, u], np.r_[w, w]))


def _tree(n, rng):
    parent = np.array([rng.integers(0, i) for i in range(1, n)])
    child = np.arange(1, n)
    w = rng.integers(1, 30, size=n - 1)
    return Graph.from_edges(EdgeList(n, np.r_[parent, child], np.r_[child, parent], np.r_[w, w]))


def _pieces(rng):
    """Disconnected pieces: a grid, a tree, a directed random piece, isolated vertices."""
    parts = [_grid(4, rng), _tree(9, rng), Graph.from_edges(random_edges(rng, 10, 0.2)),
             Graph.from_edges(EdgeList(3, [], [], np.zeros(0, dtype=np.int64)))]
    return Graph.from_sparse(sp.block_diag([p.to_csr() for p in parts], format="csr"))


def _negative(rng, n=40):
    """Sparse directed graph with negative edges, no negative cycle (potentials)."""
    return Graph.from_edges(random_edges(rng, n, 0.06, lo=0, hi=20, negative=True))


def _graphs(rng):
    return {"grid": _grid(7, rng), "tree": _tree(30, rng), "pieces": _pieces(rng), "negative": _negative(rng),
            "random": Graph.from_edges(random_edges(rng, 45, 0.05)),
            "one": Graph.from_edges(EdgeList(1, [], [], np.zeros(0, dtype=np.int64))),
            "self loop": Graph.from_edges(EdgeList(2, [0, 0], [0, 1], [5, 3]))}


def _oracle(graph, dt):
    ref = floyd_warshall_reference(graph.fw_matrix(dt))
    return exactness.finalize_unreachable(ref, graph.has_negative_weights)


def _node_of(nd):
    node = np.empty(nd.size, dtype=np.int64)
    for t in range(nd.nodes):
        node[nd.own_start[t]:nd.end[t]] = t
    return node


@pytest.mark.parametrize("ordering", ["metis", "levels"])
@pytest.mark.parametrize("leaf,tile", [(1, 1), (5, 4), (12, 8), (1000, 16)])
def test_dissection_layout_and_separator_property(rng, leaf, tile, ordering):
    for name, g in _graphs(rng).items():
        nd = dissect(g.to_csr(), leaf_size=leaf, tile=tile, ordering=ordering)
        # order and position are inverse; padding only to whole tiles
        assert (nd.order[nd.position] == np.arange(g.n)).all(), name
        assert sorted(nd.order[nd.order >= 0].tolist()) == list(range(g.n))
        assert nd.size % tile == 0 and ((nd.end - nd.own_start) % tile == 0).all()
        # postorder: a subtree is a contiguous range ending with its node's own vertices
        for t in range(nd.nodes):
            p = nd.parent[t]
            if p >= 0:
                assert p > t and nd.start[p] <= nd.start[t] and nd.end[t] <= nd.own_start[p]
        # the soundness of the skipped products: every edge joins a node to an ancestor-or-self
        node = _node_of(nd)[nd.position]
        csr = g.to_csr()
        rows = np.repeat(np.arange(g.n), np.diff(csr.indptr))
        for u, v in zip(node[rows], node[csr.indices]):
            lo, hi = min(u, v), max(u, v)
            assert hi == lo or hi in set(nd.ancestors(lo)), (name, u, v)
        # levels: every node with pivots once, after all its descendants, none an ancestor of
        # another of its level; depths count ancestors
        levels, depth = nd.levels(), nd.depths()
        busy = [t for t in range(nd.nodes) if nd.end[t] > nd.own_start[t]]
        assert sorted(t for level in levels for t in level) == busy
        done = set()
        for level in levels:
            for t in level:
                assert not set(nd.ancestors(t)) & set(level)
                assert all(c in done for c in busy if t in set(nd.ancestors(c)))
                assert depth[t] == len(list(nd.ancestors(t)))
            done.update(level)


def _same_tree(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("order", "parent", "start", "own_start", "end"))


@pytest.mark.parametrize("ordering", ["metis", "levels"])
def test_dissection_on_worker_processes_is_the_same_tree(rng, ordering, monkeypatch):
    """Pieces split on worker processes give the tree one process gives (deterministic); where no
    worker can start, this process splits them all, to the same tree."""
    from apsp import ordering_pool

    graphs = {**_graphs(rng), "big grid": _grid(30, rng)}
    for name, g in graphs.items():
        alone = dissect(g.to_csr(), leaf_size=12, tile=4, ordering=ordering, workers=1)
        assert _same_tree(dissect(g.to_csr(), leaf_size=12, tile=4, ordering=ordering, workers=2), alone), name

    def no_workers(count):
        raise ordering_pool.WorkerLost("none here")

    monkeypatch.setattr(ordering_pool, "_start", no_workers)
    g = graphs["big grid"]
    assert _same_tree(dissect(g.to_csr(), leaf_size=12, tile=4, ordering=ordering, workers=2),
                      dissect(g.to_csr(), leaf_size=12, tile=4, ordering=ordering, workers=1))


def test_ordering_is_reused_for_a_graph_of_the_same_structure(rng, monkeypatch):
    """A graph made afresh from the same edges (other weights) reuses the process's ordering: no
    second dissection, and nd-fw's result on it still equals the oracle; another structure is ordered anew;
    the cache keeps its last entries within its bound."""
    import apsp.dissection as nd_module

    nd_module._ORDERINGS.clear()
    g = _grid(14, rng)
    first = nd_module.plan(g, 4, 10)
    csr = g.to_csr().copy()
    csr.data = rng.integers(1, 50, size=csr.nnz).astype(csr.data.dtype)
    again = Graph.from_sparse(csr)

    def refuse(*args, **kwargs):
        raise AssertionError("ordered again")

    monkeypatch.setattr(nd_module, "dissect", refuse)
    assert nd_module.plan(again, 4, 10) is first
    res = _solve_cpu(again, "int32", leaf=10)
    np.testing.assert_array_equal(res.dist, _oracle(again, np.int32))
    monkeypatch.undo()
    other = _grid(13, rng)
    assert nd_module.plan(other, 4, 10) is not first
    cache = nd_module.OrderingCache(entries=2)
    for key in "abc":
        cache.put(key, first)
    assert cache.get("a") is None and cache.get("b") is first and cache.get("c") is first
    small = nd_module.OrderingCache(max_bytes=nd_module.OrderingCache.nbytes(first) - 1)
    small.put("a", first)
    assert small.get("a") is None


def test_dissection_counts_are_below_dense(rng):
    g = _grid(20, rng)
    nd = dissect(g.to_csr(), leaf_size=40, tile=8)
    assert 0 < nd.updates() < 0.2 * nd.size ** 3
    assert sum(b - a for a, b, _ in nd.steps()) == nd.size


def test_without_pymetis_the_level_ordering_solves_exactly(monkeypatch, rng):
    # platforms without a pymetis wheel bisect by breadth-first levels: nd-fw still works
    monkeypatch.setitem(sys.modules, "pymetis", None)
    g = _grid(12, rng)
    with pytest.raises(ImportError, match="pip install pymetis"):
        dissect(g.to_csr(), leaf_size=10, ordering="metis")
    nd = dissect(g.to_csr(), leaf_size=10, tile=4)
    assert sorted(nd.order[nd.order >= 0].tolist()) == list(range(g.n))
    assert 0 < nd.updates() < 0.5 * nd.size ** 3
    res = _solve_cpu(g, "int32", leaf=10)
    np.testing.assert_array_equal(res.dist, _oracle(g, np.int32))


def test_dissection_time_grows_with_edges_not_isolated_vertices():
    import time

    # one edge among 300,000 vertices: pieces are grouped by one sort, not a scan per piece
    # (that scan took over a minute here)
    n = 300_000
    t = time.perf_counter()
    nd = dissect(sp.csr_matrix((np.ones(1), ([0], [1])), shape=(n, n)), leaf_size=3000)
    assert time.perf_counter() - t < 10
    assert sorted(nd.order[nd.order >= 0].tolist()) == list(range(n))


def _solve_cpu(g, dt, **kw):
    from apsp.cpu import ndfw

    opts = SolveOptions.build(dtype=np.dtype(dt), block_size=kw.pop("tile", 4), progress=False,
                        leaf_size=kw.pop("leaf", 6), **kw)
    return ndfw.solve(g, opts)


@pytest.mark.parametrize("dt", ["int16", "int32", "float64"])
@pytest.mark.parametrize("leaf,tile", [(6, 4), (3, 1), (20, 8)])
def test_cpu_equals_oracle(rng, dt, leaf, tile):
    for name, g in _graphs(rng).items():
        out = _solve_cpu(g, dt, leaf=leaf, tile=tile)
        np.testing.assert_array_equal(out.dist, _oracle(g, dt), err_msg=name)


def test_cpu_paths(rng):
    for name, g in _graphs(rng).items():
        out = _solve_cpu(g, "int32", successors=True, predecessors=True)
        dist = as_float(out.dist)
        weight = np.where(g.fw_matrix(np.float64) >= exactness.inf_value(np.float64), np.inf,
                          g.fw_matrix(np.float64))
        np.fill_diagonal(weight, np.inf)
        check_successors(out.successors, dist, weight)
        check_predecessors(out.predecessors, dist, weight)


def test_cpu_negative_cycle_raises(rng):
    g = _grid(6, rng)
    csr = g.to_csr().tolil()
    csr[3, 4] = -50
    csr[4, 3] = 1
    with pytest.raises(NegativeCycleError):
        _solve_cpu(Graph.from_sparse(csr.tocsr()), "int32")


def test_registered_and_default_sizes(rng):
    g = _grid(12, rng)
    r = apsp.shortest_paths(g, method="nd-fw", backend="cpu", progress=False)
    assert r.method == "nd-fw" and r.info["updates"] > 0
    np.testing.assert_array_equal(r.distances, _oracle(g, r.dtype))


gpu = pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")


#: the engine's batching rule forced: a launch costs so much that every batch pays, or nothing
BATCHING = {"auto": None, "always": 1.0, "never": 0.0}


def _solve_gpu(g, dt, gather=True, batch="auto", **kw):
    from apsp.gpu import machine_facts, ndfw
    from apsp.costs import nd_gpu_budget

    opts = SolveOptions.build(dtype=np.dtype(dt), block_size=kw.pop("tile", 4), progress=False,
                        leaf_size=kw.pop("leaf", 6), **kw)
    # the plan's budget, with the gather and the batch model forced as asked
    budget = nd_gpu_budget(g, opts, machine_facts(opts.device))
    budget = dataclasses.replace(budget, gather_bytes=budget.gather_bytes if gather else 0,
                                 launch_seconds=budget.launch_seconds if BATCHING[batch] is None else BATCHING[batch])
    return ndfw.solve(g, dataclasses.replace(opts, nd_gpu=budget))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("gather,batch", [(True, "never"), (False, "never"), (True, "always")])
@pytest.mark.slow
def test_gpu_equals_oracle(rng, gather, batch):
    graphs = _graphs(rng)
    batched = 0
    for name in ("grid", "pieces", "negative", "one", "self loop"):
        g = graphs[name]
        out = _solve_gpu(g, "int32", gather=gather, batch=batch)
        np.testing.assert_array_equal(out.dist, _oracle(g, "int32"), err_msg=name)
        batched += out.info["batched_nodes"]
    assert out.info["tree_nodes"] >= 1
    assert (batched > 0) == (batch == "always") and (batch == "never" or batched >= 4)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("batch", ["never", "always"])
@pytest.mark.slow
def test_gpu_several_levels_int16_float_and_paths(rng, batch):
    g = _grid(6, rng)
    out = _solve_gpu(g, "int16", leaf=4, successors=True, batch=batch)
    assert out.info["tree_nodes"] >= 7
    assert out.info["gathered_nodes" if batch == "never" else "batched_nodes"] >= 2
    np.testing.assert_array_equal(out.dist, _oracle(g, "int16"))
    weight = np.where(g.fw_matrix(np.float64) >= exactness.inf_value(np.float64), np.inf, g.fw_matrix(np.float64))
    np.fill_diagonal(weight, np.inf)
    check_successors(out.successors, as_float(out.dist), weight)
    out = _solve_gpu(g, "float32", leaf=4, batch=batch)
    np.testing.assert_allclose(out.dist, _oracle(g, "float32"))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("batch", ["never", "always"])
def test_gpu_negative_cycle_raises(rng, batch):
    g = _grid(5, rng)
    csr = g.to_csr().tolil()
    csr[7, 8] = -50
    csr[8, 7] = 1
    with pytest.raises(NegativeCycleError):
        _solve_gpu(Graph.from_sparse(csr.tocsr()), "int32", batch=batch)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("dt", ["int16", "int32"])
@pytest.mark.slow
def test_gpu_result_into_the_array_faulted_in_during_the_rounds(rng, monkeypatch, dt):
    """The in-core engine copies its result into the `HostResult` made before the ordering (on a
    GPU only for large results: forced here at any size), and gives its touchers back."""
    from apsp.gpu import ndfw, transfer

    made, arrays = [], []

    def prefaulted(n, dtype, device):
        made.append(transfer.HostResult((n, n), dtype))
        arrays.append(made[-1].array)
        return made[-1]

    monkeypatch.setattr(transfer, "TOUCH_BYTES", transfer.PAGE_BYTES)
    monkeypatch.setattr(ndfw, "prefaulted_result", prefaulted)
    g = _grid(7, rng)
    out = _solve_gpu(g, dt, leaf=5)
    assert len(made) == 1 and out.dist is arrays[0] and made[0]._jobs == []
    assert 0 <= out.info["result_prefaulted"] <= 1
    np.testing.assert_array_equal(out.dist, _oracle(g, dt))
    with pytest.raises(NegativeCycleError):  # a failed solve stops the touchers too
        g = _grid(5, rng).to_csr().tolil()
        g[7, 8], g[8, 7] = -50, 1
        _solve_gpu(Graph.from_sparse(g.tocsr()), dt)
    assert len(made) == 2 and made[1]._jobs == [] and made[1].array is None


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("dt", ["int16", "int32", "float32"])
def test_gpu_unpermuted_copy_in_bands(rng, dt, monkeypatch):
    """The device result (layout order, padded) comes back in vertex order, sentinels marked,
    band by band (each gathered as the copy reaches it); bands of a few rows, n not a multiple of
    them; the rows claimed from a `HostResult`-like owner in order, each once, before they are written."""
    import torch

    from apsp.gpu import transfer
    from apsp.gpu.ndfw import unpermuted_to_host

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":
        monkeypatch.setattr(transfer, "PARALLEL_BYTES", 0)  # the staging pipeline even for small results
    for n, size in ((1, 1), (37, 48), (300, 301)):
        position = rng.permutation(size)[:n]
        layout = rng.integers(0, 1000, (size, size)).astype(dt)
        limit = None if dt == "float32" else 900
        unreachable = None if limit is None else int(exactness.unreachable_value(dt))
        row_bytes = n * layout.itemsize
        if device == "cpu":  # plain copies of a few rows each
            monkeypatch.setattr(transfer, "STAGE_BYTES", 5 * row_bytes + 1)
            monkeypatch.setattr(transfer, "STAGES", 1)

        class Owner:  # `HostResult`'s side of the copy
            array = np.full((n, n), 7, dtype=dt)
            claimed: list = []

            def rows(self, a, b):
                assert not self.claimed or self.claimed[-1][1] == a
                self.claimed.append((a, b))
                return self.array[a:b]

        owner = Owner()
        out = unpermuted_to_host(torch.from_numpy(layout).to(device), position, limit, unreachable,
                                 result=owner)  # type: ignore[arg-type]
        want = layout[np.ix_(position, position)]
        if limit is not None:
            want = np.where(want > limit, unreachable, want)
        assert out is owner.array and out.dtype == np.dtype(dt) and out.flags.c_contiguous
        np.testing.assert_array_equal(out, want)
        assert owner.claimed[0][0] == 0 and owner.claimed[-1][1] == n
        assert device == "cuda" or n < 6 or len(owner.claimed) > 1
        np.testing.assert_array_equal(unpermuted_to_host(torch.from_numpy(layout).to(device), position, limit,
                                                         unreachable), want)


@pytest.mark.parametrize("n", [1, 2, 7, 60])
def test_unpermute_inplace_round_trip(rng, n):
    from apsp.cpu.ndfw import unpermute_inplace

    p = rng.permutation(n)
    d = rng.integers(0, 100, (n, n)).astype(np.int32)
    np.testing.assert_array_equal(unpermute_inplace(d.copy(), p), d[np.ix_(p, p)])
    inverse = np.argsort(p)
    np.testing.assert_array_equal(unpermute_inplace(unpermute_inplace(d.copy(), p), inverse), d)
    f = d.astype(np.float32)
    np.testing.assert_array_equal(unpermute_inplace(f, p), d[np.ix_(p, p)])


def test_auto_picks_nd_fw_by_estimated_work(rng, monkeypatch):
    from apsp import plan
    from apsp.dissection import default_plan

    monkeypatch.setattr(costs, "rates_for", lambda name=None: costs.SHIPPED["cpu"])  # the 2-core machine's rates
    g = _grid(64, rng)  # n = 4096: small separators (at n = 1600 dense FW's 4e9 updates are as quick)
    assert costs.estimate(g, "nd-fw", "cpu") < costs.estimate(g, "fw", "cpu")
    assert plan.choose_method(g, "auto", "cpu") == "nd-fw"
    assert default_plan(g, "cpu") is default_plan(g, "cpu")  # the ordering is computed once
    # a random graph with 8 edges per vertex has large separators: dense FW's n^3 wins
    dense = Graph.from_edges(random_edges(rng, 1200, 8 / 1200, lo=1, hi=20))
    assert costs.estimate(dense, "nd-fw", "cpu") > 0.5 * costs.estimate(dense, "fw", "cpu")
    assert plan.choose_method(dense, "auto", "cpu") == "fw"
    # below the size threshold: the ordering is not even tried
    assert plan.choose_method(_grid(20, rng), "auto", "cpu") != "nd-fw"
    # without pymetis (no wheel for the platform) the level ordering keeps nd-fw in the choice
    monkeypatch.setitem(sys.modules, "pymetis", None)
    assert plan.choose_method(_grid(64, rng), "auto", "cpu") == "nd-fw"


def test_gpu_plan_counts_the_layout_matrix_not_the_gathered_buffers():
    from apsp.plan import incore_needs

    # a 350 x 350 grid's layout (130,944 with METIS) in int32 on an 80 GB card: the matrix, rounded
    # up to 131,072, its column panel and the result's row bands; the node buffers take what is left
    _, need = incore_needs(122_500, np.int32, "nd-fw", "gpu", block=128, layout=130_944)
    matrix = 131_072 ** 2 * 4
    assert need == matrix + 128 * 131_072 * 4 + 2 * (1 << 30) + (1 << 28)
    assert need < 75 * (1 << 30)
    # a checked attempt's comparison chunks are not all held beside the result's bands
    _, checked = incore_needs(122_500, np.int16, "nd-fw", "gpu", block=128, layout=130_944, checked=True)
    assert checked == 131_072 ** 2 * 2 + 128 * 131_072 * 2 + max(2 * (1 << 30) + (1 << 29), 3 * (1 << 28))


@pytest.mark.slow
def test_auto_falls_back_to_dense_fw_where_nd_fw_does_not_fit(monkeypatch, rng):
    import apsp.plan as planner
    from apsp.errors import MemoryPlanError

    real = planner.plan_memory

    def nd_fw_too_big(graph, method, backend, opts, **kw):
        if method == "nd-fw":
            raise MemoryPlanError("the nd-fw solver on the cpu needs 9 TiB. Ways out: none")
        return real(graph, method, backend, opts, **kw)

    monkeypatch.setattr(planner, "plan_memory", nd_fw_too_big)
    # an idle core pair's rounds (1 ms): the automatic choice prefers nd-fw on this small grid
    monkeypatch.setitem(costs.SHIPPED, "cpu", dataclasses.replace(costs.SHIPPED["cpu"], nd_round_cpu_seconds=1e-3))
    monkeypatch.setattr(costs, "rates_for", lambda name=None: costs.SHIPPED["cpu"])  # whatever host runs the test
    g = _grid(40, rng)
    r = apsp.shortest_paths(g, backend="cpu")
    assert r.method == "fw" and "nd-fw does not fit" in r.info["method_fallback"]
    assert "nd-fw does not fit" in r.info["why"]
    np.testing.assert_array_equal(r.distances, _oracle(g, r.distances.dtype))
    with pytest.raises(MemoryPlanError):  # asked for by name: refused, with the ways out
        apsp.shortest_paths(g, method="nd-fw", backend="cpu")


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("name,dt,budget", [("big grid", "int32", "small"), ("grid", "int16", "large"),
                                            ("pieces", "int32", "large"), ("negative", "int32", "large")])
def test_gpu_streamed_from_host_memory_equals_oracle(rng, name, dt, budget):
    # the layout matrix in host memory: small nodes gathered to the device, the top separators
    # (their ranges x ranges over the budget) as one round streamed in row stripes. Node buffers
    # are rounded up to 256 on a GPU (16 in the interpreter), so the grid and budgets scale with it
    from conftest import HAS_CUDA

    align = 256 if HAS_CUDA else 16
    side = 40 if HAS_CUDA else 12
    g = _grid(side, rng) if name == "big grid" else _graphs(rng)[name]
    gpu_memory = (40 if budget == "small" else 1000) * align * align * 4
    r = apsp.shortest_paths(g, method="nd-fw", backend="gpu", dtype=dt, block_size=4, leaf_size=10,
                            out_of_core=True, gpu_memory=gpu_memory)
    np.testing.assert_array_equal(r.distances, _oracle(g, dt), err_msg=name)
    assert r.info["out_of_core"] and r.info["gathered_nodes"] > 0
    assert (r.info["streamed_nodes"] > 0) == (budget == "small")


@gpu
@pytest.mark.gpu
def test_gpu_streamed_finds_negative_cycles(rng):
    g = Graph.from_edges(EdgeList(30, np.r_[np.arange(29), 29], np.r_[np.arange(1, 30), 0],
                                  np.r_[np.ones(29, dtype=np.int64), -30]))
    with pytest.raises(NegativeCycleError):
        apsp.shortest_paths(g, method="nd-fw", backend="gpu", block_size=4, leaf_size=6, out_of_core=True,
                            gpu_memory="16KB")


@gpu
@pytest.mark.gpu
def test_gpu_streamed_result_is_its_layout_matrix_in_place(rng):
    """Streamed nd-fw keeps one n x n matrix in RAM (the layout matrix, un-permuted in place into the
    result), so a host budget of one and a half matrices plans it, and the result equals the oracle."""
    from apsp import plan

    g = _grid(12, rng)
    one = g.n * g.n * 4
    asked = dict(method="nd-fw", backend="gpu", dtype="int32", block_size=4, leaf_size=10, out_of_core=True,
                 gpu_memory=40 * 16 * 16 * 4, host_memory=int(1.5 * one))
    memory = plan.make_plan(g, **asked).steps[0].opts.memory
    assert memory.out_of_core and memory.host_bytes == one
    r = apsp.shortest_paths(g, **asked)
    np.testing.assert_array_equal(r.distances, _oracle(g, "int32"))
    assert r.info["out_of_core"] and r.distances.shape == (g.n, g.n) and r.distances.flags.c_contiguous


def test_plan_streams_nd_fw_past_the_card_not_dense_fw(monkeypatch):
    """A grid whose layout matrix is just over the GPU budget, on an H200's facts, with RAM for one
    matrix and a half: the automatic call streams nd-fw through the card (its layout matrix becomes
    the result in place), not dense out-of-core FW, which it fell back to while the plan counted
    the layout matrix and the result apart."""
    import apsp.gpu
    from apsp import plan

    monkeypatch.setenv("APSP_RATES", "shipped")
    h200 = apsp.gpu.MachineFacts(True, "NVIDIA H200", False, 1, "cuda:0", free=140 << 30, total=141 << 30)
    monkeypatch.setattr(plan, "_facts", lambda device=None: h200)
    g = _grid(100, np.random.default_rng(0))
    matrix = g.n * g.n * 4
    p = plan.make_plan(g, backend="gpu", dtype="int32", gpu_memory=int(0.95 * matrix), host_memory=int(1.5 * matrix))
    step = p.steps[0]
    assert step.method == "nd-fw" and step.solver == "nd-fw-out-of-core", (step.method, step.solver)
    assert step.opts.memory.out_of_core and step.opts.memory.host_bytes == matrix


def test_cpu_rounds_run_on_python_threads_in_ranges_handed_out(monkeypatch, rng):
    """nd-fw's many rounds split their pieces over `run_split`'s threads in more ranges than threads
    (OpenMP's threads spin at each round's barrier, and on a machine with a core held by another
    process a round waits for the preempted one); the distances stay exact."""
    import apsp.cpu.ndfw as ndfw

    calls = []
    real = ndfw.run_split

    def counted(kernel, ntasks, *args, **kw):
        calls.append((kernel.__name__, kw.get("chunks_per_thread", 1)))
        return real(kernel, ntasks, *args, **kw)

    monkeypatch.setattr(ndfw, "run_split", counted)
    g = _grid(12, rng)
    got = apsp.shortest_paths(g, method="nd-fw", backend="cpu", dtype="int32", progress=False, leaf_size=16)
    assert np.array_equal(got.distances, _oracle(g, np.int32))
    assert {name for name, _ in calls} == {"_panel_tasks", "_product_tasks"}
    assert all(chunks > 1 for _, chunks in calls)
