"""Dense inputs read in place (`apsp.dense`): the weight facts and the start matrix from one threaded
pass each, equal to numpy's reading of scipy's convention (``isfinite(a) & (a != null_value)``), no
n x n edge mask kept; on the GPU the start matrix goes up in bands through the staging buffers."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_CUDA, HAS_TRITON

import apsp
from apsp import costs, exactness
from apsp.engine import SolveOptions
from apsp.graph import EdgeList, Graph, _weight_facts
from apsp.jit import thread_count
from apsp.plan import plan_memory


def numpy_reading(a: np.ndarray, null_value):
    """scipy's dense convention read by numpy, as the graph did it before: the mask, then the facts."""
    if a.dtype.kind == "b":
        a = a.astype(np.int8)
    mask = np.isfinite(a)
    if null_value is not None and not (isinstance(null_value, float) and np.isinf(null_value)):
        mask &= a != null_value
    w = a[mask]
    return mask, (_weight_facts(w) if w.size else (0, 0, False, True, True))


def numpy_start(a: np.ndarray, mask: np.ndarray, dtype) -> np.ndarray:
    d = np.full(a.shape, exactness.inf_value(dtype), dtype=dtype)
    np.copyto(d, a.astype(np.int8) if a.dtype.kind == "b" else a, where=mask, casting="unsafe")
    i = np.arange(a.shape[0])
    d[i, i] = np.minimum(d[i, i], 0)
    return d


def _weights(rng, n):
    a = rng.integers(-5, 100, (n, n)).astype(np.float64)
    a[rng.random((n, n)) < 0.4] = 0
    a[rng.random((n, n)) < 0.05] = np.inf
    a[rng.random((n, n)) < 0.05] = -np.inf
    a[rng.random((n, n)) < 0.05] = np.nan
    return a


def _inputs(rng, n):
    f = _weights(rng, n)
    i = rng.integers(0, 100, (n, n))
    return [
        ("float64", f, 0.0), ("float64-null-none", f, None), ("float64-null-inf", f, np.inf), ("float64-null-7", f, 7.0),
        ("float64-minus-zero", np.where(f == 0, -0.0, f), 0.0), ("fractional", f + 0.25, 0.0),
        ("float32", f.astype(np.float32), 0.0), ("float32-null-0.1", (f / 10).astype(np.float32), 0.1),
        ("float32-strong-null", (f / 10).astype(np.float32), np.float64(0.1)),
        ("fortran", np.asfortranarray(f), 0.0), ("strided", f[::2, ::2], 0.0), ("transposed", f.T, 0.0),
        ("int64", i, 0.0), ("int16-int-null", i.astype(np.int16), 3), ("uint8", i.astype(np.uint8), 0.0),
        ("int64-beyond-int32", i * 2 ** 40, 0), ("int64-float-null-above-2**53", i + 2 ** 60, float(2 ** 60 + 7)),
        ("uint64-null-none", i.astype(np.uint64), None), ("int8-null-outside", i.astype(np.int8), 1000),
        ("bool", i > 50, 0.0), ("unit", np.ones((n, n)), 0.0), ("no-edges", np.zeros((n, n)), 0.0),
        ("float16", f.astype(np.float16), 0.0), ("big-endian", f.astype(">f8"), 0.0),
        ("read-only", np.require(f, requirements="C").copy(), 0.0),
    ]


@pytest.mark.parametrize("n", [1, 6, 67])
def test_facts_and_start_matrix_equal_numpys_reading(n, rng):
    for name, a, null in _inputs(rng, n):
        if name == "float32-strong-null" and np.lib.NumpyVersion(np.__version__) < "2.0.0":
            # numpy 1.x's own != compares a float64 scalar in float32 (value-based casting); apsp
            # compares as numpy 2 does on every numpy, as scipy does (it reads the matrix in float64)
            continue
        if name == "read-only":
            a.flags.writeable = False
        g = Graph.from_dense(a, null_value=null)
        mask, want = numpy_reading(a, null)
        got = (g.nnz, g.max_abs_weight, g.has_negative_weights, g.integral, g.unit_weights)
        assert got == want and type(got[1]) is type(want[1]), (name, got, want)
        assert np.array_equal(g.edge_mask, mask), name
        for dtype in (np.int16, np.int32, np.int64, np.float32, np.float64):
            if np.dtype(dtype).kind != "f" and not g.integral:
                continue
            want_d = numpy_start(a, mask, dtype)
            assert np.array_equal(g.fw_matrix(dtype), want_d), (name, dtype)
            size = a.shape[0]
            if size > 4:
                assert np.array_equal(g.fw_matrix(dtype, rows=(2, 5)), want_d[2:5]), (name, dtype)
                wide = np.zeros((3, size + 9), dtype=dtype)  # rows of a wider matrix, written in place
                g.fw_matrix(dtype, out=wide[:, :size], rows=(2, 5))
                assert np.array_equal(wide[:, :size], want_d[2:5]) and not wide[:, size:].any(), (name, dtype)


def test_no_edge_mask_is_kept_or_planned(rng):
    n = 300
    a = rng.integers(1, 50, (n, n)).astype(np.float64)
    a[rng.random((n, n)) < 0.7] = 0
    g = Graph.from_dense(a)
    assert not g.holds_edge_mask
    rows, cols = np.nonzero(a)
    sparse = Graph.from_edges(EdgeList(n, rows, cols, a[rows, cols]))
    opts = SolveOptions.build(dtype=np.dtype(np.int16))
    extra = plan_memory(g, "fw", "cpu", opts).host_bytes - plan_memory(sparse, "fw", "cpu", opts).host_bytes
    assert extra == thread_count() * costs.WORKER_BYTES  # the readers' pages, no n x n mask
    # a dtype numpy reads keeps its mask, and the plan counts it
    half = Graph.from_dense(a.astype(np.float16))
    assert half.holds_edge_mask
    assert plan_memory(half, "fw", "cpu", opts).host_bytes - plan_memory(g, "fw", "cpu", opts).host_bytes == n * n


@pytest.mark.parametrize("null", [0.0, None])
def test_whole_cpu_calls_equal_the_oracle(null, rng):
    from apsp.cpu.oracle import floyd_warshall_reference

    n = 40
    a = np.abs(_weights(rng, n))
    mask, _ = numpy_reading(a, null)
    want = exactness.finalize_unreachable(floyd_warshall_reference(numpy_start(a, mask, np.float64)), False)
    for given in (a, np.asfortranarray(a), a[:, ::-1][:, ::-1]):
        r = apsp.shortest_paths(given, backend="cpu", null_value=null)
        assert r.dtype == np.int16
        got = np.where(r.distances == exactness.unreachable_value(r.dtype), np.inf, r.distances.astype(np.float64))
        assert np.array_equal(got, np.where(want >= exactness.inf_value(np.float64), np.inf, want))


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")
@pytest.mark.parametrize("kind", ["float64", "fortran-int64-beyond-int32", "bool", "float32-null-none"])
def test_gpu_uploads_the_start_matrix_in_bands(kind, rng, monkeypatch):
    from apsp.gpu import transfer

    n = 37
    f = np.abs(_weights(rng, n))
    a, null = {"float64": (f, 0.0), "fortran-int64-beyond-int32": (np.asfortranarray(
        rng.integers(0, 3, (n, n)) * 2 ** 33), 0), "bool": (f > 50, 0.0),
               "float32-null-none": (np.where(f == 0, np.inf, f).astype(np.float32), None)}[kind]
    bands = []
    upload = transfer.staged_upload

    def counting(dst, fill, stager, buffers, dtype):
        def counted(a0, b0, staged):
            bands.append((a0, b0))
            fill(a0, b0, staged)
        return upload(dst, counted, stager, buffers, dtype)

    monkeypatch.setattr(transfer, "staged_upload", counting)
    got = apsp.shortest_paths(a, backend="gpu", method="fw", null_value=null)
    want = apsp.shortest_paths(a, backend="cpu", method="fw", null_value=null)
    assert got.dtype == want.dtype and np.array_equal(got.distances, want.distances)
    starts = [k for k, band in enumerate(bands) if band[0] == 0] + [len(bands)]
    for k0, k1 in zip(starts, starts[1:]):  # each attempt's upload: bands in order, covering every row
        attempt = bands[k0:k1]
        assert len(attempt) >= 2 and attempt[-1][1] == n
        assert all(b[1] == c[0] for b, c in zip(attempt, attempt[1:]))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_a_large_gpu_result_goes_into_a_prefaulted_array(rng):
    n = 2100  # int32 result above transfer.PARALLEL_BYTES
    a = rng.integers(1, 1000, (n, n)).astype(np.float64)
    a[rng.random((n, n)) < 0.5] = 0
    r = apsp.shortest_paths(a, backend="gpu", dtype="int32")
    assert "result_prefaulted" in r.info
    want = apsp.shortest_paths(a[:500, :500], backend="cpu", dtype="int32")
    assert np.array_equal(apsp.shortest_paths(a[:500, :500], backend="gpu", dtype="int32").distances,
                          want.distances)
