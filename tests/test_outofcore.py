"""Out-of-core Floyd-Warshall equals the in-core answer exactly; memory planning refuses what cannot fit.

CPU engine: the matrix in a memory-mapped scratch file, stripes through RAM
under a tiny budget (any n, pivot width and stripe height, hypothesis). GPU
engine: the same driver with the Triton kernels, under the interpreter on
CPU tensors when there is no GPU (small graphs, chosen shapes).
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import HAS_CUDA, HAS_TRITON
from randgraphs import random_graph

from apsp import shortest_paths
from apsp.errors import MemoryPlanError, NegativeCycleError
from apsp.graph import EdgeList, Graph
from apsp.sizes import format_size, matrix_bytes, parse_size
from apsp.outofcore import HostMatrix
from apsp.outofcore import plan_stream

HAS_CPU_KERNELS = importlib.util.find_spec("apsp.cpu.blocked") is not None
needs_cpu_kernels = pytest.mark.skipif(not HAS_CPU_KERNELS, reason="apsp.cpu.blocked not available")


def oracle(g, dtype):
    return shortest_paths(g, method="reference", backend="cpu", dtype=dtype).distances


# ----------------------------------------------------------------------------- sizes and plans
def test_parse_size():
    assert parse_size("8GB") == 8 * 10 ** 9
    assert parse_size("8 GiB") == parse_size("8g") == 8 * 2 ** 30
    assert parse_size("1.5MB") == 1_500_000
    assert parse_size(123) == 123 and parse_size("123") == 123 and parse_size("2e3") == 2000
    for bad in ("8 GBs", "-1GB", "lots", "", "1.2.3G", True, -5):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert format_size(8 * 2 ** 30) == "8.00 GiB"


def test_plan_for_the_issue_target_uses_wide_panels_and_three_buffers():
    p = plan_stream(65536, 65536, 4, parse_size("8GB"), depth=3, align=128)
    assert p.block == 4096 and p.buffers == 3 and p.rows >= 4096 and p.rows % 128 == 0
    assert p.device_bytes <= parse_size("8GB")
    # a stripe buffer and a panel stay below 2**31 elements (32-bit kernel offsets)
    assert p.rows * p.n < 2 ** 31 and p.block * p.n < 2 ** 31


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 70000), itemsize=st.sampled_from([2, 4, 8]), budget=st.integers(1, 2 ** 34),
       depth=st.integers(1, 3), align=st.sampled_from([1, 16, 128]))
def test_plans_fit_their_budget_or_are_refused(n, itemsize, budget, depth, align):
    try:
        p = plan_stream(n, n, itemsize, budget, depth=depth, align=align)
    except MemoryPlanError as exc:
        assert "cannot stream" in str(exc)
        # refused only when the smallest panels and one short stripe do not fit
        width = min(align, n)
        assert (4 * width * n + 2 * width * width + n) * itemsize > budget or width * n >= 2 ** 31
        return
    assert p.device_bytes <= budget
    assert 1 <= p.block <= n and 1 <= p.rows <= n and 1 <= p.buffers <= depth
    assert p.rounds == -(-n // p.block) and p.stripes == -(-n // p.rows)


def test_host_matrix_file_leaves_nothing_behind(tmp_path):
    h = HostMatrix(50, np.int32, on_disk=True, scratch_dir=tmp_path)
    h.array[:] = 3
    assert os.listdir(tmp_path) == []  # unlinked while mapped
    assert int(h.array.sum()) == 3 * 2500


# ----------------------------------------------------------------------------- CPU engine
@needs_cpu_kernels
@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), density=st.floats(0.02, 0.5), negative=st.booleans(),
       dtype=st.sampled_from(["int16", "int32", "int64", "float64"]), data=st.data())
def test_cpu_out_of_core_equals_oracle(n, density, negative, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    g = random_graph(rng, n, density, negative=negative)
    block = data.draw(st.integers(1, n))
    rows = data.draw(st.integers(1, n))
    r = shortest_paths(g, method="fw", backend="cpu", dtype=dtype, out_of_core=True,
                       host_memory="1MB", block_size=block, ooc_rows=rows)
    assert r.info["out_of_core"] and r.info["matrix_on_disk"]
    assert (r.info["ooc_block"], r.info["ooc_rows"]) == (min(block, n), rows)
    np.testing.assert_array_equal(r.distances, oracle(g, dtype))


@needs_cpu_kernels
@settings(max_examples=15, deadline=None)
@given(n=st.integers(8, 60), data=st.data())
def test_cpu_out_of_core_under_a_tiny_budget_plans_itself(n, data, tmp_path_factory):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    g = random_graph(rng, n, 0.15)
    matrix = matrix_bytes(n, np.int32)
    # from one-vertex panels (in RAM five: phase 2 copies the one it updates) to the whole matrix
    budget = data.draw(st.integers((5 * n + 2 + n) * 4, matrix))
    scratch = tmp_path_factory.mktemp("scratch")
    r = shortest_paths(g, method="fw", backend="cpu", dtype="int32", out_of_core=True,
                       host_memory=budget, scratch_dir=str(scratch))
    assert r.info["ooc_device_bytes"] <= budget
    np.testing.assert_array_equal(r.distances, oracle(g, "int32"))
    assert os.listdir(scratch) == []


@needs_cpu_kernels
def test_cpu_out_of_core_negative_cycle(rng):
    g = Graph.from_edges(EdgeList(5, [0, 1, 2, 3], [1, 2, 0, 4], [1, -3, 1, 2]))
    with pytest.raises(NegativeCycleError):
        shortest_paths(g, method="fw", backend="cpu", out_of_core=True, host_memory="1MB",
                       block_size=2, ooc_rows=2)


# ----------------------------------------------------------------------------- GPU engine
GPU_CASES = [  # n, pivot width, stripe rows, negative, dtype
    (37, 16, 16, False, "int32"),   # padded host matrix, pivot = stripe
    (40, 16, 32, True, "int32"),    # stripes taller than the pivot panel
    (33, 32, 16, False, "int16"),   # pivot rows spread over two stripes
    (45, 16, 48, True, "int64"),    # one stripe: no prefetch possible
]


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")
@pytest.mark.parametrize("n,block,rows,negative,dtype", GPU_CASES)
def test_gpu_out_of_core_equals_oracle(rng, n, block, rows, negative, dtype):
    g = random_graph(rng, n, 0.12, negative=negative)
    r = shortest_paths(g, method="fw", backend="gpu", dtype=dtype, out_of_core=True, gpu_memory="1MB",
                       block_size=block, ooc_rows=rows)
    assert r.info["out_of_core"] and r.info["engine"] == "gpu"
    np.testing.assert_array_equal(r.distances, oracle(g, dtype))
    if not HAS_CUDA:  # the interpreter: the in-core GPU solver gives the same matrix
        np.testing.assert_array_equal(
            r.distances, shortest_paths(g, method="fw", backend="gpu", dtype=dtype, block_size=16).distances)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")
@pytest.mark.parametrize("where", ["staged", "file"])
def test_gpu_out_of_core_with_staged_copies(rng, tmp_path, where):
    """Host matrix not page-locked (pin_host=False) or in a file: copies go through bounce buffers."""
    g = random_graph(rng, 40, 0.15, negative=True)
    opts = dict(pin_host=False) if where == "staged" else dict(host_memory="4KB", scratch_dir=str(tmp_path))
    r = shortest_paths(g, method="fw", backend="gpu", dtype="int32", out_of_core=True, gpu_memory="1MB",
                       block_size=16, ooc_rows=16, **opts)
    if HAS_CUDA:
        assert r.info["host_copies"] == "staged"
    assert r.info["matrix_on_disk"] == (where == "file")
    np.testing.assert_array_equal(r.distances, oracle(g, "int32"))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")
def test_minplus_kernel_with_64_bit_offsets(rng, monkeypatch):
    """Matrices past 2**31 elements (n > 46340) need 64-bit address math: same results on small ones."""
    import torch

    from apsp.gpu import minplus

    dev = torch.device("cuda" if HAS_CUDA else "cpu")
    c = torch.from_numpy(rng.integers(0, 1000, (48, 40)).astype(np.int32)).to(dev)
    a = torch.from_numpy(rng.integers(0, 1000, (48, 24)).astype(np.int32)).to(dev)
    b = torch.from_numpy(rng.integers(0, 1000, (24, 40)).astype(np.int32)).to(dev)
    want = torch.minimum(c, (a[:, :, None] + b[None, :, :]).min(dim=1).values)
    monkeypatch.setattr(minplus, "_max_offset", lambda t: 2 ** 31)  # take the WIDE path
    minplus.minplus_update(c, a, b)
    assert torch.equal(c, want)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")
def test_gpu_streams_by_itself_when_the_matrix_exceeds_the_budget(rng):
    g = random_graph(rng, 40, 0.1)
    # in core needs the padded matrix (48 x 48 in the interpreter, 128 x 128 on a GPU) plus panels;
    # streaming fits in less
    budget = 120_000 if HAS_CUDA else 20_000
    r = shortest_paths(g, method="fw", backend="gpu", dtype="int32", gpu_memory=budget)
    assert r.info["out_of_core"] is True and r.info["ooc_device_bytes"] <= budget
    np.testing.assert_array_equal(r.distances, oracle(g, "int32"))
    with pytest.raises(MemoryPlanError, match="GPU memory"):
        shortest_paths(g, method="fw", backend="gpu", dtype="int32", gpu_memory=budget, out_of_core=False)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")
def test_gpu_out_of_core_negative_cycle():
    g = Graph.from_edges(EdgeList(20, [0, 1, 2, 3], [1, 2, 0, 4], [1, -3, 1, 2]))
    with pytest.raises(NegativeCycleError):
        shortest_paths(g, method="fw", backend="gpu", out_of_core=True, gpu_memory="1MB",
                       block_size=16, ooc_rows=16)


# ----------------------------------------------------------------------------- refusals
def _weights_graph(n, wmax=5, seed=0):
    rng = np.random.default_rng(seed)
    return random_graph(rng, n, 0.3, hi=wmax)


def test_refuses_in_core_cpu_beyond_the_ram_budget_with_ways_out():
    g = _weights_graph(300)
    with pytest.raises(MemoryPlanError) as err:
        shortest_paths(g, method="fw", backend="cpu", dtype="int32", host_memory="200KB")
    msg = str(err.value)
    # the matrix (352 KiB), the masks of the passes over it (264 KiB) and phase 2's panel copies of
    # its two workers (2 x 2 x 256 x 300 x 4 bytes: 1.17 MiB; two tasks at n = 300, whatever the
    # cores) with what each worker keeps of its own (2 x 320 KiB)
    assert "needs 2.40 MiB of RAM" in msg and "195 KiB are allowed" in msg
    assert "dtype int16 needs 2.23 MiB" in msg  # distances up to 299*5 fit int16
    assert "out_of_core=True (--out-of-core)" in msg and "--distributed" in msg


def test_refuses_searches_beyond_the_ram_budget():
    g = _weights_graph(200)
    with pytest.raises(MemoryPlanError, match="dijkstra solver on the cpu needs"):
        shortest_paths(g, method="dijkstra", dtype="int32", host_memory="150KB")  # 156 KiB of int32


def test_refuses_out_of_core_where_it_does_not_apply():
    g = _weights_graph(30)
    with pytest.raises(ValueError, match="available for method 'fw', and 'nd-fw' on the GPU"):
        shortest_paths(g, method="dijkstra", out_of_core=True)
    with pytest.raises(ValueError, match="not 'nd-fw' on the cpu"):
        shortest_paths(g, method="nd-fw", backend="cpu", out_of_core=True)
    with pytest.raises(ValueError, match="distances only"):
        shortest_paths(g, method="fw", backend="cpu", out_of_core=True, return_predecessors=True)
    with pytest.raises(ValueError, match="out_of_core must be"):
        shortest_paths(g, method="fw", backend="cpu", out_of_core="yes")


def test_refuses_a_budget_too_small_to_stream():
    g = _weights_graph(100)
    with pytest.raises(MemoryPlanError, match="cannot stream"):
        shortest_paths(g, method="fw", backend="cpu", out_of_core=True, host_memory="1KB")


def test_refuses_a_scratch_directory_without_room(monkeypatch, tmp_path):
    import apsp.plan

    monkeypatch.setattr(apsp.plan, "disk_available", lambda directory: 1000)
    g = _weights_graph(100)
    with pytest.raises(MemoryPlanError, match="matrix file .* needs 39.06 KiB in"):
        shortest_paths(g, method="fw", backend="cpu", dtype="int32", out_of_core=True,
                       host_memory="1MB", scratch_dir=str(tmp_path))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")
def test_gpu_refuses_when_neither_gpu_nor_ram_holds_the_matrix():
    g = _weights_graph(100)
    with pytest.raises(MemoryPlanError, match="fit neither the GPU budget .* Ways out: .*out_of_core=True"):
        shortest_paths(g, method="fw", backend="gpu", dtype="int32", gpu_memory="10KB", host_memory="20KB")
