"""GPU Floyd-Warshall kernels against the oracle.

Without a CUDA device these run in Triton's interpreter on CPU tensors (small
graphs); on a GPU the same tests run for real, plus larger graphs.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_CUDA, HAS_TRITON
from randgraphs import random_graph

import apsp
from apsp import exactness
from apsp.cpu.oracle import floyd_warshall_reference

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")]

INT_DTYPES = ("int16", "int32", "int64")


def _device():
    import torch

    return torch.device("cuda" if HAS_CUDA else "cpu")


def start_matrix(g, dtype, device):
    """The in-core engine's padded start matrix of ``g`` on ``device``."""
    from apsp.gpu.fw import GPUEngine

    engine = GPUEngine(dtype, g.has_negative_weights, g.n, device=device)
    engine.load(g)
    return engine.d


def expected(g, dtype):
    d = floyd_warshall_reference(g.fw_matrix(dtype))
    return exactness.finalize_unreachable(d, g.has_negative_weights)


def assert_same(got, want, dtype):
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "float32" else 1e-12)
    else:
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- tile kernels
@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 3, 7), (16, 16, 16), (17, 9, 33), (40, 24, 20)])
@pytest.mark.parametrize("dtype", ["int32", "float32", "int16"])
def test_minplus_update_matches_formula(rng, shape, dtype):
    import torch

    from apsp.gpu.minplus import minplus_update

    m, k, s = shape
    hi = 50
    a = rng.integers(0, hi, size=(m, k)).astype(dtype)
    b = rng.integers(0, hi, size=(k, s)).astype(dtype)
    c = rng.integers(0, 2 * hi, size=(m, s)).astype(dtype)
    want = np.minimum(c, (a[:, :, None].astype(np.int64) + b[None, :, :]).min(axis=1)).astype(dtype)
    dev = _device()
    # a is passed as a transposed view of a k x m buffer, as the FW driver does
    a_t = torch.from_numpy(np.ascontiguousarray(a.T)).to(dev)
    ct = torch.from_numpy(c).to(dev)
    out2 = torch.full((s, m), 7, dtype=ct.dtype, device=dev)  # poisoned
    minplus_update(ct, a_t.t(), torch.from_numpy(b).to(dev), out2=out2.t())
    np.testing.assert_array_equal(ct.cpu().numpy(), want)
    np.testing.assert_array_equal(out2.t().cpu().numpy(), want)


#: MinplusConfig tuples: both A-loading schemes, unrolls that do and do not divide k, pipelined loops
KERNEL_CONFIGS = [(16, 16, 1, 4, True), (16, 16, 1, 4, False), (16, 32, 1, 8, True), (32, 16, 1, 2, True),
                  (32, 32, 1, 8, True, 2), (32, 32, 2, 4, False, 3)]


@pytest.mark.parametrize("dtype,negative,batch,n,pivots,block", [
    ("int32", False, 3, 37, 37, 16), ("int32", True, 2, 64, 40, 16), ("int16", False, 4, 50, 23, 8),
    ("float32", False, 1, 20, 20, 32)])
@pytest.mark.slow
def test_batched_rounds_equal_one_matrix_at_a_time(rng, dtype, negative, batch, n, pivots, block):
    """`fw_batched` (one launch per phase for the batch) equals `fw_inplace` on each matrix,
    with only the first ``pivots`` vertices as intermediates; n and pivots not multiples of the block."""
    import torch

    from apsp.gpu.rounds import fw_batched, fw_inplace

    dev = _device()
    graphs = [random_graph(rng, n, 0.15, hi=20, negative=negative, floats=dtype == "float32") for _ in range(batch)]
    stack = torch.stack([start_matrix(g, dtype, dev)[:n, :n] for g in graphs])
    want = stack.clone()
    for i in range(batch):
        fw_inplace(want[i], block, negative, n_pivots=pivots, lookahead=False)
    fw_batched(stack, block, negative, n_pivots=pivots)
    assert_same(stack.cpu().numpy(), want.cpu().numpy(), dtype)


@pytest.mark.parametrize("config", KERNEL_CONFIGS + (["default"] if HAS_CUDA else []))
@pytest.mark.parametrize("negative", [False, True])
@pytest.mark.parametrize("dtype", ["int32", "int16", "float32"])
def test_minplus_update_configs(rng, config, negative, dtype):
    import torch

    from apsp.gpu.minplus import inf_for, minplus_update

    m, k, s = 37, 19, 45
    lo = -20 if negative else 0
    inf = inf_for(torch.empty(0, dtype=getattr(torch, dtype)))
    a = rng.integers(lo, 50, size=(m, k)).astype(dtype)
    b = rng.integers(lo, 50, size=(k, s)).astype(dtype)
    c = rng.integers(lo, 100, size=(m, s)).astype(dtype)
    a[rng.random(a.shape) < 0.2] = inf  # unreachable entries stay unreachable
    b[rng.random(b.shape) < 0.2] = inf
    wide = np.minimum(c.astype(np.float64), (a[:, :, None].astype(np.float64) + b[None, :, :]).min(axis=1))
    want = np.where(wide >= inf, inf, wide) if not negative else np.maximum(wide, -inf)
    dev = _device()
    ct = torch.from_numpy(c).to(dev)
    a_t = torch.from_numpy(np.ascontiguousarray(a.T)).to(dev)
    minplus_update(ct, a_t.t(), torch.from_numpy(b).to(dev), negative=negative,
                   config=None if config == "default" else config)
    got = ct.cpu().numpy().astype(np.float64)
    got = np.where(got >= inf, inf, got)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("config", [None, (16, 16, 1, 4, True), (32, 16, 1, 8, True, 2), (16, 16, 1, 2, False)])
@pytest.mark.parametrize("shape", [(37, 19, 46), (16, 16, 32), (5, 3, 2)])
def test_int16_products_as_int32_pairs(rng, config, shape):
    import torch

    from apsp.gpu import minplus

    m, k, s = shape
    inf = minplus.inf_for(torch.empty(0, dtype=torch.int16))
    a = rng.integers(0, 60, size=(m, k)).astype(np.int16)
    b = rng.integers(0, 60, size=(k, s)).astype(np.int16)
    c = rng.integers(0, 120, size=(m, s)).astype(np.int16)
    a[rng.random(a.shape) < 0.2] = inf
    b[rng.random(b.shape) < 0.2] = inf
    c[rng.random(c.shape) < 0.2] = inf
    want = np.minimum(c, np.minimum((a[:, :, None].astype(np.int64) + b[None, :, :]).min(axis=1), inf))
    dev = _device()
    ct, bt = torch.from_numpy(c).to(dev), torch.from_numpy(b).to(dev)
    a_t = torch.from_numpy(np.ascontiguousarray(a.T)).to(dev).t()
    assert minplus._uses_pairs(ct, bt, False, None, enabled=True)
    assert not minplus._uses_pairs(ct, bt, False, None)  # below PAIRS["min_size"]: packed by default
    minplus.minplus_update(ct, a_t, bt, config=config, pairs=True)
    got = ct.cpu().numpy()
    np.testing.assert_array_equal(np.minimum(got, inf), want)


@pytest.mark.parametrize("pairs", [True, False], ids=["pairs", "packed"])
@pytest.mark.slow
def test_int16_whole_solves_with_and_without_pairs(rng, monkeypatch, pairs):
    """int16 products run as int32 pairs by default; the packed kernel (pairs off) stays exact too."""
    from apsp.gpu import minplus

    monkeypatch.setitem(minplus.PAIRS, "enabled", pairs)
    monkeypatch.setitem(minplus.PAIRS, "min_size", 0)  # these graphs are far below the default size
    for n in (1, 30, 67):
        g = random_graph(rng, n, 0.3, hi=9)
        r = apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int16")
        assert_same(r.distances, expected(g, "int16"), "int16")


@pytest.mark.parametrize("size", [1, 2, 13, 16, 31])
def test_close_block_equals_oracle(rng, size):
    import torch

    from apsp.gpu.rounds import close_block

    g = random_graph(rng, size, 0.4, hi=30)
    start = g.fw_matrix(np.int32)
    t = torch.from_numpy(start.copy()).to(_device())
    close_block(t)
    np.testing.assert_array_equal(t.cpu().numpy(), floyd_warshall_reference(start))


def test_close_block_of_a_strided_view(rng):
    """Phase 1 works on a tile inside a bigger matrix (row stride != tile width)."""
    import torch

    from apsp.gpu.rounds import close_block

    g = random_graph(rng, 12, 0.5, hi=9)
    big = np.full((20, 30), 99, dtype=np.int32)
    big[3:15, 5:17] = g.fw_matrix(np.int32)
    t = torch.from_numpy(big.copy()).to(_device())
    close_block(t[3:15, 5:17])
    got = t.cpu().numpy()
    np.testing.assert_array_equal(got[3:15, 5:17], floyd_warshall_reference(g.fw_matrix(np.int32)))
    outside = np.ones_like(big, dtype=bool)
    outside[3:15, 5:17] = False
    assert (got[outside] == 99).all()


# ---------------------------------------------------------------- whole solves
@pytest.mark.parametrize("n,block", [(1, 4), (2, 1), (16, 16), (17, 16), (23, 5), (40, 64), (45, 7)])
@pytest.mark.parametrize("dtype", ["int32", "float32", "int16", "float64", "int64"])
def test_gpu_solve_equals_oracle(rng, n, block, dtype):
    hi = 3 if dtype == "int16" else 40
    g = random_graph(rng, n, float(rng.uniform(0.05, 0.6)), hi=hi, floats=dtype.startswith("float"))
    r = apsp.shortest_paths(g, method="fw", backend="gpu", dtype=dtype, block_size=block)
    assert r.backend == "gpu" and r.distances.dtype == np.dtype(dtype)
    assert_same(r.distances, expected(g, dtype), dtype)


@pytest.mark.parametrize("dtype", ["int32", "int16", "float64"])
def test_gpu_negative_edges(rng, dtype):
    n = int(rng.integers(10, 40))
    g = random_graph(rng, n, 0.3, lo=0, hi=6, negative=True, floats=dtype == "float64")
    if dtype == "int16" and not exactness.dtype_fits(np.int16, g.distance_bound, True):
        pytest.skip("bound too large for int16 with negative weights")
    r = apsp.shortest_paths(g, method="fw", backend="gpu", dtype=dtype, block_size=int(rng.integers(1, 20)))
    assert_same(r.distances, expected(g, dtype), dtype)


def test_gpu_negative_cycle_raises():
    w = np.zeros((6, 6))
    w[0, 1], w[1, 2], w[2, 0], w[3, 4] = 2, -1, -2, 5
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.shortest_paths(w, method="fw", backend="gpu", dtype="int32", block_size=2)
    assert set(info.value.vertices) >= {0, 1, 2}


def test_gpu_negative_cycle_int16_never_wraps():
    """A long negative cycle drives values far down; clamping keeps int16 from wrapping to 'reachable'."""
    n = 30
    src = np.arange(n)
    dst = (src + 1) % n
    w = np.full(n, -1)
    g = apsp.EdgeList(n, src, dst, w)
    with pytest.raises(apsp.NegativeCycleError):
        apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int16", block_size=4)


@pytest.mark.parametrize("variant", ["naive", "classic"])
def test_seed_baseline_variants(rng, variant):
    g = random_graph(rng, 21, 0.3, hi=25)
    r = apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int32", variant=variant)
    assert r.info["variant"] == variant
    assert_same(r.distances, expected(g, "int32"), "int32")


def test_gpu_timings_reported(rng):
    g = random_graph(rng, 20, 0.3)
    r = apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int32")
    assert {"h2d", "compute", "d2h"} <= set(r.timings)
    assert all(v >= 0 for v in r.timings.values())


# ---------------------------------------------------------------- real GPU only: larger graphs
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
@pytest.mark.parametrize("n", [127, 1000, 2049, 4096])
@pytest.mark.parametrize("dtype", ["int32", "int16", "float32"])
def test_gpu_large_against_torch_reference(rng, n, dtype):
    import torch

    from apsp.gpu.minplus import inf_for
    from apsp.gpu.rounds import fw_inplace

    hi = 2 if dtype == "int16" else 100
    g = random_graph(rng, n, 0.2, hi=hi, floats=dtype == "float32")
    dev = torch.device("cuda")
    d = start_matrix(g, dtype, dev)
    ref = d[:n, :n].to(torch.float64)
    inf = inf_for(d)
    if dtype != "float32":
        ref[d[:n, :n] >= inf] = float("inf")
    for k in range(n):
        torch.minimum(ref, ref[:, k:k + 1] + ref[k:k + 1, :], out=ref)
    poison = torch.full((128, d.shape[0]), 12345, dtype=d.dtype, device=dev)
    fw_inplace(d, 128, col_buffer=poison, n_pivots=n)
    got = d[:n, :n].to(torch.float64)
    if dtype != "float32":
        got[d[:n, :n] >= inf] = float("inf")
        assert torch.equal(got, ref)
    else:
        assert torch.allclose(got, ref, rtol=1e-5)


def test_a_failed_solve_gives_its_frames_back():
    # the traceback of a failed solve keeps its frames, and every tensor they hold, alive
    import weakref

    from apsp.errors import MemoryPlanError
    from apsp.gpu import give_back_memory

    class Buffer:
        pass

    held = []

    def solver():
        buffer = Buffer()
        held.append(weakref.ref(buffer))
        raise MemoryPlanError("the card is full")

    try:
        solver()
    except MemoryPlanError as exc:
        assert held[0]() is not None
        give_back_memory(exc)
        assert held[0]() is None


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
@pytest.mark.parametrize("runtime", ["torch", "driver"])
def test_device_memory_after_a_retried_or_failed_solve_equals_before(rng, monkeypatch, runtime):
    import os

    import torch

    from randgraphs import sentinel_path

    if os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("the card's free memory is shared by the other workers: run it in one process")
    monkeypatch.setenv("APSP_GPU_RUNTIME", runtime)
    g = sentinel_path(rng, 20000, 3000)  # past int16: its attempt is cut off and solved again in int32
    # without the searches that would rule int16 out before its solve, so that the retry happens
    monkeypatch.setattr(apsp.costs, "worth_searching", lambda *args, **kwargs: False)

    def stop(done):
        raise KeyboardInterrupt

    def scenario():
        r = apsp.shortest_paths(g, method="fw", backend="gpu")
        assert r.info["dtype_tried"] == ["int16", "int32"]
        with pytest.raises(KeyboardInterrupt):
            apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int32", on_round=stop)

    scenario()  # the first time loads kernels and staging buffers, kept for the process
    torch.cuda.synchronize()
    free = torch.cuda.mem_get_info()[0]
    scenario()
    torch.cuda.synchronize()
    assert torch.cuda.mem_get_info()[0] == free
