"""Weighted statistics from the nested dissection's rows on the GPU (`apsp.gpu.rowsolve.rows_stats`
and the plan that chooses it): against the CPU row solve and Dijkstra's searches, under the Triton
interpreter on tiny graphs."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_TRITON

import apsp
from apsp.dissection import plan
from apsp.graph import EdgeList, Graph
from apsp.supernodal import eliminate

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs torch and triton")


def _grid(rng, side: int, floats: bool = False, extra: int = 0) -> Graph:
    """An undirected side x side grid with random weights (some zero), and ``extra`` isolated vertices."""
    idx = np.arange(side * side).reshape(side, side)
    s = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    d = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = rng.uniform(0, 9, len(s)) if floats else rng.integers(0, 50, len(s))
    return Graph.from_edges(EdgeList(side * side + extra, np.concatenate([s, d]), np.concatenate([d, s]),
                                     np.concatenate([w, w])))


def _random(rng, n: int, floats: bool = False) -> Graph:
    """A random directed graph in two pieces (no edge between them), weights with zeros among them."""
    cut = n // 2
    parts = [(rng.integers(lo, hi, 2 * (hi - lo)), rng.integers(lo, hi, 2 * (hi - lo))) for lo, hi in ((0, cut),
                                                                                                      (cut, n))]
    s, d = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    w = rng.uniform(0, 9, len(s)) if floats else rng.integers(0, 30, len(s))
    w[rng.random(len(s)) < 0.1] = 0
    return Graph.from_edges(EdgeList(n, s, d, w))


def _both(g: Graph, dtype, src, targets, histogram: bool, block_rows: int):
    from apsp.cpu.rowsolve import rows_stats as cpu_rows_stats
    from apsp.gpu import default_device
    from apsp.gpu.rowsolve import rows_stats

    nd = plan(g, 1, 8, 1)
    f = eliminate(g, np.dtype(dtype), nd)
    pos = np.asarray(nd.position)[src]
    blocks = []
    got = rows_stats(f, pos, nd.position, targets, histogram, block_rows, device=default_device(),
                     on_block=blocks.append)
    want = cpu_rows_stats(f, pos, nd.position, targets, histogram, block_rows=4)
    assert sum(blocks) == len(src)
    return got, want


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "int16"])
@pytest.mark.parametrize("shape", ["grid", "random"])
def test_gpu_row_stats_equal_the_cpu_row_solve(rng, dtype, shape):
    floats = np.dtype(dtype).kind == "f"
    g = _grid(rng, 5, floats, extra=2) if shape == "grid" else _random(rng, 24, floats)
    src = rng.choice(g.n, size=11, replace=False)
    targets = rng.random(g.n) < 0.8
    histogram = not floats
    (got, got_hist), (want, want_hist) = _both(g, dtype, src, targets, histogram, block_rows=3)
    for name, a, b in zip(("count", "total", "carry", "ecc"), got[:4], want[:4]):
        if b is None:
            assert a is None, name
        elif floats and name in ("total", "ecc"):
            np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=name)
        else:
            assert a.dtype == b.dtype, name
            np.testing.assert_array_equal(a, b, err_msg=name)
    np.testing.assert_allclose(got[4], want[4], rtol=1e-12)
    if histogram:
        size = max(len(got_hist), len(want_hist))
        np.testing.assert_array_equal(np.pad(got_hist, (0, size - len(got_hist))),
                                      np.pad(want_hist, (0, size - len(want_hist))))
    else:
        assert got_hist is None and want_hist is None


def test_gpu_row_stats_refuse_64_bit_integers_and_a_long_histogram(rng):
    from apsp.gpu import default_device
    from apsp.gpu.rowsolve import rows_stats

    g = _grid(rng, 3)
    nd = plan(g, 1, 8, 1)
    with pytest.raises(ValueError, match="int64 words"):
        rows_stats(eliminate(g, np.int64, nd), nd.position, nd.position, np.ones(g.n, bool), False, 4,
                   device=default_device())
    with pytest.raises(ValueError, match="bins"):
        rows_stats(eliminate(g, np.int32, nd), nd.position, nd.position, np.ones(g.n, bool), True, 4,
                   device=default_device(), max_bins=2)


@pytest.mark.parametrize("direction", ["out", "in"])
@pytest.mark.parametrize("floats", [False, True])
def test_distance_stats_by_rows_on_the_gpu_equal_dijkstra(rng, direction, floats):
    """``apsp.distance_stats(method="nd-rows", backend="gpu")``: the plan's GPU engine, with sources,
    targets and isolated vertices, against Dijkstra's searches on the CPU."""
    g = _grid(rng, 4, floats, extra=2) if direction == "out" else _random(rng, 20, floats)
    src = rng.choice(g.n, size=9, replace=False)
    tgt = np.flatnonzero(rng.random(g.n) < 0.7)
    got = apsp.distance_stats(g, src, targets=tgt, direction=direction, method="nd-rows", backend="gpu",
                              histogram=not floats, progress=False)
    ref = apsp.distance_stats(g, src, targets=tgt, direction=direction, method="dijkstra", backend="cpu",
                              histogram=not floats, progress=False)
    assert got.method == "nd-rows" and got.info["backend"] == "gpu" and "GPU" in got.reason
    assert got.reachable.tolist() == ref.reachable.tolist()
    if floats:
        np.testing.assert_allclose(got.total.astype(float), ref.total.astype(float), rtol=1e-6)
        np.testing.assert_allclose(got.eccentricity, ref.eccentricity, rtol=1e-6)
        np.testing.assert_allclose(got.harmonic, ref.harmonic, rtol=1e-6)
    else:
        assert [int(t) for t in got.total] == [int(t) for t in ref.total]
        assert got.eccentricity.tolist() == ref.eccentricity.tolist()
        np.testing.assert_allclose(got.harmonic, ref.harmonic, rtol=1e-12)
        assert got.histogram.tolist() == ref.histogram.tolist()


def _h200(monkeypatch, free=140 << 30):
    import apsp.gpu
    from apsp import plan as plan_module

    h200 = apsp.gpu.MachineFacts(True, "NVIDIA H200", False, 1, "cuda:0", free=free, total=141 << 30)
    monkeypatch.setattr(plan_module, "_facts", lambda device=None: h200)
    monkeypatch.setenv("APSP_RATES", "shipped")
    return plan_module


def _weighted_grid(side: int, seed: int = 0) -> Graph:
    return _grid(np.random.default_rng(seed), side)


def test_plan_takes_the_rows_on_an_h200_for_a_grid_too_large_for_nd_fw(monkeypatch):
    """A 60x60 grid on an H200's facts with a card too small for nd-fw's 3600^2 matrix: the rows on the
    GPU, faster there than Dijkstra's searches and the CPU's rows; its block and both memories planned."""
    plan_module = _h200(monkeypatch)
    g = _weighted_grid(60)
    p = plan_module.make_stats_plan(g, sources=g.n, gpu_memory=40 << 20)
    assert (p.method, p.backend) == ("nd-rows", "gpu"), p.reason
    assert "Dijkstra" in p.reason and "CPU's rows" in p.reason and "nd-fw" not in p.reason
    assert 64 <= p.block_rows <= g.n
    assert p.memory["gpu_bytes"] <= p.memory["gpu_limit"] == 40 << 20
    assert p.memory["factor_bytes"] < p.memory["host_bytes"] < g.n ** 2 * 4
    with pytest.raises(apsp.MemoryPlanError, match="on the card"):
        plan_module.make_stats_plan(g, "nd-rows", "gpu", sources=g.n, gpu_memory=1 << 20)


def test_plan_weighs_the_rows_against_nd_fw_in_core(monkeypatch):
    """Where nd-fw's matrix fits the card, the estimates decide, and the reason names both; for a
    few sources Dijkstra's searches beat the rows' elimination."""
    plan_module = _h200(monkeypatch)
    g = _weighted_grid(60)
    p = plan_module.make_stats_plan(g, sources=g.n)
    assert (p.method, p.backend) == ("nd-fw", "gpu") and "nd-fw in core" in p.reason, p.reason
    few = plan_module.make_stats_plan(g, sources=40, gpu_memory=40 << 20)
    assert (few.method, few.backend) == ("dijkstra", "cpu"), few.reason
    assert "rows on the GPU: estimated" in few.reason


def test_plan_keeps_small_graphs_negative_weights_and_int64_off_the_gpu_rows(monkeypatch):
    plan_module = _h200(monkeypatch)
    small = _weighted_grid(20)  # 400 vertices: below the rows' threshold
    assert plan_module.make_stats_plan(small, sources=small.n, gpu_memory=1 << 20).method != "nd-rows"
    assert plan_module.make_stats_plan(small, "nd-rows", "gpu", sources=small.n).backend == "gpu"
    with pytest.raises(ValueError, match="int64 words"):
        plan_module.make_stats_plan(small, "nd-rows", "gpu", dtype="int64", sources=small.n)
    p = plan_module.make_stats_plan(_weighted_grid(60), dtype="int64", sources=3600, gpu_memory=40 << 20)
    assert p.method != "nd-rows" or p.backend == "cpu"
    assert plan_module.make_stats_plan(small, "nd-rows", "cpu", sources=small.n).backend == "cpu"


def test_plan_refuses_the_rows_on_a_gpu_that_is_not_there(monkeypatch):
    import apsp.gpu
    from apsp import plan as plan_module

    none = apsp.gpu.MachineFacts(False, "no CUDA device", False, 0, None)
    monkeypatch.setattr(plan_module, "_facts", lambda device=None: none)
    g = _weighted_grid(5)
    with pytest.raises(apsp.BackendUnavailableError, match="no CUDA device"):
        plan_module.make_stats_plan(g, "nd-rows", "gpu", sources=g.n)
    assert plan_module.make_stats_plan(g, "nd-rows", sources=g.n).backend == "cpu"


def test_the_card_plan_covers_the_uploaded_factors_and_one_block(rng, monkeypatch):
    from apsp.gpu.rowsolve import device_bytes
    from apsp.rowsplan import gpu_rows_memory
    from apsp.supernodal import ROWS_LEAF

    plan_module = _h200(monkeypatch)
    g = _grid(rng, 12)
    nd = plan(g, 1, ROWS_LEAF, 1)
    for dtype in ("int32", "float64"):
        dt = np.dtype(dtype)
        memory = gpu_rows_memory(g, nd, dt, g.n, False, None, None, plan_module._facts(), 0)
        assert memory["block_rows"] == g.n
        assert memory["gpu_bytes"] >= device_bytes(eliminate(g, dt, nd)) + g.n * nd.size * dt.itemsize


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("column_major", [True, False])
def test_the_reduction_kernel_equals_reduce_selected(rng, dtype, column_major):
    """One pass over the block without gathering it gives `reduce_selected`'s accumulators (integer
    ones equal, the float sums within rounding: they are summed in another order)."""
    import torch

    from apsp import exactness
    from apsp.gpu import default_device
    from apsp.gpu.reductions import reduce_selected
    from apsp.gpu.rowsolve import reduce_columns

    dt = np.dtype(dtype)
    rows_n, cols_n = 37, 53  # several row and column tiles, ragged
    inf = exactness.inf_value(dt)
    x = (rng.uniform(0, 100, (rows_n, cols_n)) if dt.kind == "f" else rng.integers(0, 100, (rows_n, cols_n))).astype(dt)
    x[rng.random(x.shape) < 0.2] = 0
    x[rng.random(x.shape) < 0.3] = inf
    x[3] = inf  # a row reaching nothing
    d = torch.from_numpy(np.asfortranarray(x) if column_major else x).to(default_device())
    rows = torch.from_numpy(rng.choice(rows_n, 21, replace=False)).to(d.device)
    cols = torch.from_numpy(np.append(rng.permutation(cols_n)[:40], 3)).to(d.device)
    wide = torch.float64 if dt.kind == "f" else torch.int64
    limit = exactness.reachable_limit(dt, False)
    got = [a.cpu().numpy() for a in reduce_columns(d, rows, cols, limit, wide)]
    want = [a.cpu().numpy() for a in reduce_selected(d, rows, cols, limit, wide)]
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype
        if k in (0, 2) or dt.kind != "f" and k == 1:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12)
