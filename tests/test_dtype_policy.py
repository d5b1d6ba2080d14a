"""The dtype from the data: solve narrow, verify, widen only when a distance may have been cut off.

Every result must equal the exact answer (computed in float64 by the oracle, which cannot overflow);
the dtype it comes in must be the first of the plan whose check the exact answer passes.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from conftest import HAS_TRITON
from pathcheck import NONE, as_float
from randgraphs import random_graph
from randgraphs import sentinel_path as boundary_graph

import apsp
from apsp import exactness
from apsp.cpu.oracle import floyd_warshall_reference
from apsp.errors import DtypeError
from apsp.graph import EdgeList, Graph

INF16 = int(exactness.inf_value(np.int16))
INF32 = int(exactness.inf_value(np.int32))
needs_triton = pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")


def exact(g: Graph) -> np.ndarray:
    """Distances as float64 (inf: no path), from the oracle on an int64 start matrix."""
    return as_float(exactness.finalize_unreachable(floyd_warshall_reference(g.fw_matrix(np.int64)), False))


def expected_dtype(g: Graph, want: np.ndarray, requested=None):
    """The dtype the plan must end in, judged from the exact answer (None: DtypeError)."""
    finite = want[np.isfinite(want)]
    largest = finite.max() if finite.size else 0
    for attempt in exactness.dtype_attempts(g.distance_bound, g.has_negative_weights, g.integral, g.max_abs_weight,
                                            requested):
        if not attempt.checked or largest < exactness.cutoff_band(attempt.dtype, g.max_abs_weight)[0]:
            return attempt.dtype
    return None


def assert_exact(r, g, want, requested=None):
    np.testing.assert_array_equal(as_float(r.distances), want)
    assert r.distances.dtype == expected_dtype(g, want, requested)
    assert r.info["dtype_tried"][-1] == r.distances.dtype.name
    assert r.info["dtype_retry"] == (len(r.info["dtype_tried"]) > 1)


# ----------------------------------------------------------------------------- the plan
def test_plan_narrow_checked_then_the_worst_case_dtype():
    plan = exactness.dtype_attempts(3.3e6, False, True, 100)  # n = 32768, weights 1..100
    assert [(a.dtype.name, a.checked) for a in plan] == [("int16", True), ("int32", False)]
    plan = exactness.dtype_attempts(2e9, False, True, 10 ** 7)  # weights too big for int16
    assert [(a.dtype.name, a.checked) for a in plan] == [("int32", True), ("int64", False)]
    assert [a.dtype.name for a in exactness.dtype_attempts(1000, False, True, 10)] == ["int16"]
    assert not exactness.dtype_attempts(1000, False, True, 10)[0].checked
    # negative weights and fractional weights keep the worst-case rule
    assert [(a.dtype.name, a.checked) for a in exactness.dtype_attempts(3.3e6, True, True, 100)] == [("int32", False)]
    assert [a.dtype.name for a in exactness.dtype_attempts(3.3e6, False, False, 100)] == ["float64"]
    # past int64's worst case: int64, checked, is the last word
    assert [(a.dtype.name, a.checked) for a in exactness.dtype_attempts(2.0 ** 70, False, True, 2.0 ** 40)] \
        == [("int64", True)]


def test_plan_for_a_requested_dtype():
    assert [(a.dtype.name, a.checked) for a in exactness.dtype_attempts(3.3e6, False, True, 100, "int16")] \
        == [("int16", True)]
    assert [(a.dtype.name, a.checked) for a in exactness.dtype_attempts(100, False, True, 10, "int16")] \
        == [("int16", False)]
    def plan(*args, **kw):
        return [(a.dtype.name, a.checked, a.cast_to and a.cast_to.name)
                for a in exactness.dtype_attempts(*args, **kw)]

    # negative weights, a weight the sentinel cannot exceed, or kernels that do not saturate: the
    # result cannot be checked, so the worst case's dtype is solved in and cast after a check
    assert plan(3.3e6, True, True, 100, "int16") == [("int32", False, "int16")]
    assert plan(3.3e6, False, True, INF16, "int16") == [("int32", False, "int16")]
    assert plan(3.3e6, False, True, 100, "int16", saturating=False) == [("int32", False, "int16")]
    assert plan(3.3e6, False, True, 100, "int32", saturating=False) == [("int32", False, None)]
    assert plan(3.3e6, False, True, 100, saturating=False) == [("int32", False, None)]
    with pytest.raises(DtypeError, match="int64 limit"):  # not even int64 holds the worst case
        exactness.dtype_attempts(2.0 ** 70, True, True, 2.0 ** 40, "int64")
    with pytest.raises(DtypeError, match="fractional"):
        exactness.dtype_attempts(10, False, False, 1.5, "int32")
    assert exactness.dtype_attempts(3.3e6, False, True, 100, "float32")[0].dtype == np.float32


def test_cutoff_check_reads_chunks_and_torch_tensors():
    d = np.zeros((7, 5), dtype=np.int16)
    lo, hi = exactness.cutoff_band(np.int16, 10)
    assert (lo, hi) == (INF16 - 10, INF16)
    assert not exactness.cutoff_suspected(d, (lo, hi), chunk=3)
    for value, hit in ((lo - 1, False), (lo, True), (hi - 1, True), (hi, False), (32767, False)):
        d[6, 4] = value
        assert exactness.cutoff_suspected(d, (lo, hi), chunk=3) == hit, value
        assert exactness.cutoff_suspected(d, (lo, hi), chunk=5) == hit, value  # threads over row chunks
        assert exactness.cutoff_suspected(d, (lo, hi), chunk=1 << 20) == hit, value  # one chunk
    torch = pytest.importorskip("torch")
    d[6, 4] = lo
    assert exactness.cutoff_suspected(torch.from_numpy(d), (lo, hi), chunk=3)


# ----------------------------------------------------------------------------- the kernels saturate
def test_cpu_kernels_store_min_of_true_distance_and_inf(rng):
    """The proof's step 1 on the real kernels: no wrap, every stored value is min(true, INF)."""
    from apsp.cpu.blocked import fw_inplace

    for _ in range(4):
        n = int(rng.integers(20, 120))
        g = random_graph(rng, n, float(rng.uniform(0.02, 0.3)), lo=0, hi=int(rng.integers(300, 3000)))
        d = g.fw_matrix(np.int16)
        fw_inplace(d, block=int(rng.integers(1, 40)), progress=False)
        assert (np.diagonal(d) == 0).all()
        np.testing.assert_array_equal(d, np.minimum(exact(g), INF16).astype(np.int16))


@needs_triton
@pytest.mark.parametrize("pairs", [True, False], ids=["pairs", "packed"])
def test_gpu_kernels_store_min_of_true_distance_and_inf(rng, monkeypatch, pairs):
    import torch

    from apsp.gpu import minplus, rounds
    from apsp.gpu.fw import GPUEngine

    monkeypatch.setitem(minplus.PAIRS, "enabled", pairs)
    monkeypatch.setitem(minplus.PAIRS, "min_size", 0)
    n = int(rng.integers(20, 60))
    g = random_graph(rng, n, 0.1, lo=0, hi=int(rng.integers(1000, 5000)))
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # cpu: the interpreter
    engine = GPUEngine(np.int16, False, n, device=dev)
    engine.load(g)
    d = engine.d
    rounds.fw_inplace(d, 16, n_pivots=n)
    np.testing.assert_array_equal(d[:n, :n].cpu().numpy(), np.minimum(exact(g), INF16).astype(np.int16))


@needs_triton
@pytest.mark.parametrize("method", ["fw", "nd-fw"])
@pytest.mark.slow
def test_gpu_solvers_check_for_cutoff_on_the_device(rng, method):
    """The GPU solvers answer the cut-off check themselves (before the copy), the same answer."""
    import dataclasses

    from apsp.costs import nd_gpu_budget
    from apsp.engine import SolveOptions, get_solver
    from apsp.gpu import machine_facts

    skip_unless_usable({"backend": "gpu", "method": method})
    for total in (INF16 // 2, INF16 - 1, INF16 + 1):
        g = boundary_graph(rng, total, 40)
        band = exactness.cutoff_band(np.int16, g.max_abs_weight)
        opts = SolveOptions.build(dtype=np.dtype(np.int16), block_size=16, progress=False, cutoff_band=band, leaf_size=8)
        if method == "nd-fw":  # the engine reads its gather budget and batch model from the plan
            opts = dataclasses.replace(opts, nd_gpu=nd_gpu_budget(g, opts, machine_facts(opts.device)))
        out = get_solver(method, "gpu")(g, opts)
        assert out.info["cutoff_suspected"] == exactness.cutoff_suspected(out.dist, band) == (total > INF16 // 2)



def test_cpu_fw_checks_for_cutoff_as_it_marks_unreachable(rng):
    """The CPU engine answers the cut-off check in its finalize pass, the host check's answer."""
    from apsp.cpu import blocked
    from apsp.engine import SolveOptions

    for total in (INF16 // 2, INF16 - 1, INF16 + 1):
        g = boundary_graph(rng, total, 40)
        band = exactness.cutoff_band(np.int16, g.max_abs_weight)
        out = blocked.solve(g, SolveOptions.build(dtype=np.dtype(np.int16), block_size=16, progress=False,
                                            cutoff_band=band))
        assert out.info["cutoff_suspected"] == exactness.cutoff_suspected(out.dist, band) == (total > INF16 // 2)


def test_finalize_checked_marks_and_checks_every_chunk():
    """Four row chunks or more go over threads: a value in the band in the last row is found, and
    every sentinel in every chunk is marked."""
    inf = int(exactness.inf_value(np.int16))
    d = np.full((1024, 1024), 7, dtype=np.int16)
    d[::97, ::89] = inf
    band = exactness.cutoff_band(np.int16, 100)
    for value, suspect in ((band[0] - 1, False), (band[0], True), (band[1] - 1, True)):
        m = d.copy()
        m[-1, -1] = value
        assert exactness.finalize_checked(m, False, band) is suspect
        assert (m[::97, ::89] == exactness.unreachable_value(np.int16)).all() and (m == 7).sum() == (d == 7).sum() - 1
    m = d.copy()
    assert exactness.finalize_checked(m, False) is None and np.array_equal(m, exactness.finalize_unreachable(d, False))


# ----------------------------------------------------------------------------- exact at the edges
BOUNDARY = [(INF16 + delta, 40) for delta in (-1, 0, 1)] + [(INF32 + delta, 40) for delta in (-1, 0, 1)]
BACKENDS = {
    "cpu": dict(backend="cpu"),
    "cpu-successors": dict(backend="cpu", return_successors=True),
    "cpu-out-of-core": dict(backend="cpu", out_of_core=True, host_memory="64KB", block_size=8, ooc_rows=8),
    "gpu": dict(backend="gpu", block_size=16),
    "gpu-predecessors": dict(backend="gpu", block_size=16, return_predecessors=True),
    "gpu-out-of-core": dict(backend="gpu", out_of_core=True, gpu_memory="1MB", block_size=16, ooc_rows=16),
    # nested dissection: leaves of 8 vertices, so the separators' rounds run, not one dense leaf
    "nd-fw-cpu": dict(backend="cpu", method="nd-fw", leaf_size=8, block_size=4),
    "nd-fw-cpu-successors": dict(backend="cpu", method="nd-fw", leaf_size=8, block_size=4,
                                 return_successors=True),
    "nd-fw-gpu": dict(backend="gpu", method="nd-fw", leaf_size=8, block_size=16),
    "nd-fw-gpu-predecessors": dict(backend="gpu", method="nd-fw", leaf_size=8, block_size=16,
                                   return_predecessors=True),
}


def skip_unless_usable(kwargs):
    if kwargs["backend"] == "gpu" and not HAS_TRITON:
        pytest.skip("torch/triton not installed")
    if kwargs.get("method") == "nd-fw":
        pytest.importorskip("pymetis")


@pytest.mark.parametrize("total,edges", BOUNDARY)
@pytest.mark.parametrize("engine", sorted(BACKENDS))
def test_paths_one_short_of_at_and_past_the_sentinel_come_back_exact(rng, engine, total, edges):
    kwargs = BACKENDS[engine]
    skip_unless_usable(kwargs)
    g = boundary_graph(rng, total, edges)
    want = exact(g)
    assert want[0, edges] == total
    r = apsp.shortest_paths(g, **{"method": "fw", **kwargs})
    assert_exact(r, g, want)
    if total >= INF16 - g.max_abs_weight and total < INF32 - g.max_abs_weight:
        assert r.distances.dtype == np.int32
    if r.info["dtype_retry"]:
        assert "retry" in r.timings
    if r.successors is not None:
        check_hops(r.successors, want, g, first=True)
    if r.predecessors is not None:
        check_hops(r.predecessors, want, g, first=False)


def check_hops(hops, want, g, first: bool):
    """Every reachable pair (i != j) names a first hop h with w(i,h) + d(h,j) == d(i,j) (``first``),
    or a last hop p with d(i,p) + w(p,j) == d(i,j); exactly, whatever the magnitudes."""
    n = g.n
    csr = g.to_csr()
    weight = np.full((n, n), np.inf)
    weight[np.repeat(np.arange(n), np.diff(csr.indptr)), csr.indices] = csr.data
    reach = np.isfinite(want) & ~np.eye(n, dtype=bool)
    assert hops.dtype == np.int32 and (hops[~reach] == NONE).all()
    i, j = np.nonzero(reach)
    h = hops[i, j]
    assert ((h >= 0) & (h < n)).all()
    via = weight[i, h] + want[h, j] if first else want[i, h] + weight[h, j]
    np.testing.assert_array_equal(via, want[i, j])


@pytest.mark.parametrize("requested", ["int16", "int32"])
@pytest.mark.parametrize("engine", ["cpu", "nd-fw-cpu"])
def test_a_requested_dtype_is_refused_after_the_check_only_when_the_data_need_it(rng, requested, engine):
    kwargs = {"method": "fw", **BACKENDS[engine]}
    skip_unless_usable(kwargs)
    inf = int(exactness.inf_value(requested))
    fits = boundary_graph(rng, inf // 2, 40, isolated=60)  # worst case above the limit, real distances below
    assert not exactness.dtype_fits(requested, fits.distance_bound, False)
    r = apsp.shortest_paths(fits, dtype=requested, **kwargs)
    assert r.distances.dtype == np.dtype(requested) and r.info["dtype_check"] == "verified"
    np.testing.assert_array_equal(as_float(r.distances), exact(fits))
    with pytest.raises(DtypeError, match=f"{requested} cannot hold every distance"):
        apsp.shortest_paths(boundary_graph(rng, inf + 1, 40), dtype=requested, **kwargs)


def test_random_graphs_equal_the_exact_answer(rng):
    for _ in range(12):
        n = int(rng.integers(2, 90))
        hi = int(rng.choice([20, 400, 5000, 40000, 3 * 10 ** 7]))
        g = random_graph(rng, n, float(rng.uniform(0.01, 0.5)), lo=0, hi=hi)
        want = exact(g)
        assert_exact(apsp.shortest_paths(g, method="fw", backend="cpu", block_size=int(rng.integers(1, 50))),
                     g, want)


def test_negative_weights_keep_the_worst_case_rule(rng):
    g = random_graph(rng, 60, 0.2, lo=0, hi=400, negative=True)
    r = apsp.shortest_paths(g, method="fw", backend="cpu")
    assert r.info["dtype_check"] == "bound" and not r.info["dtype_retry"]
    assert exactness.dtype_fits(r.distances.dtype, g.distance_bound, True)
    np.testing.assert_array_equal(as_float(r.distances), as_float(apsp.shortest_paths(
        g, method="reference", dtype="int64").distances))


def test_stages_add_up_to_the_call_with_a_retry(rng):
    solve = apsp.shortest_paths  # its module's import (a first access) is not part of the call
    g = boundary_graph(rng, INF16 + 1, 60)
    t0 = time.perf_counter()
    r = solve(g, method="fw", backend="cpu")
    wall = time.perf_counter() - t0
    assert r.info["dtype_tried"] == ["int16", "int32"] and r.info["dtype_retry"]
    assert r.timings["retry"] > 0 and "check" not in r.timings  # int32 holds the worst case: no check
    assert sum(r.timings.values()) == pytest.approx(wall, rel=0.05, abs=2e-3)
    g = boundary_graph(rng, INF16 // 2, 60, isolated=100)
    t0 = time.perf_counter()
    r = solve(g, method="fw", backend="cpu")
    wall = time.perf_counter() - t0
    assert r.info["dtype_tried"] == ["int16"] and r.info["dtype_check"] == "verified"
    assert "check" in r.timings and "retry" not in r.timings
    assert sum(r.timings.values()) == pytest.approx(wall, rel=0.05, abs=2e-3)


def test_resume_starts_at_the_checkpoint_dtype(rng, tmp_path):
    """A checkpoint saved by the wide retry resumes in that dtype (not refused for the narrow one)."""
    from apsp.checkpoint import save_checkpoint

    g = boundary_graph(rng, INF16 + 1, 30)
    ckpt = tmp_path / "state.ckpt"
    state = g.fw_matrix(np.int32)
    from apsp.checkpoint import graph_fingerprint

    save_checkpoint(ckpt, {"format": "apsp-checkpoint", "vertices_done": 0, "negative": False,
                           "fingerprint": graph_fingerprint(g), "solver": "fw-cpu", "block": 8},
                    lambda i0, i1: state[i0:i1], g.n, np.int32)
    r = apsp.shortest_paths(g, method="fw", backend="cpu", checkpoint=str(ckpt), resume=True, block_size=8)
    assert r.info["dtype_tried"] == ["int32"]
    np.testing.assert_array_equal(as_float(r.distances), exact(g))


# ----------------------------------------------------------------------------- searches and the oracle
@pytest.mark.parametrize("method", ["dijkstra", "johnson", "reference"])
@pytest.mark.parametrize("requested", ["int16", "int32"])
def test_a_requested_dtype_narrower_than_the_worst_case_is_a_checked_cast(rng, method, requested):
    """Solvers that compute in their output dtype solve in the worst case's dtype; the result is
    cast to the requested one when every distance fits it (up to its limit INF - 1), else refused."""
    inf = int(exactness.inf_value(requested))
    for total in (inf // 2, inf - 1):
        g = boundary_graph(rng, total, 30, isolated=40)
        assert not exactness.dtype_fits(requested, g.distance_bound, False)
        r = apsp.shortest_paths(g, method=method, backend="cpu", dtype=requested)
        assert r.distances.dtype == np.dtype(requested) and r.info["dtype_check"] == "cast"
        widest = exactness.choose_dtype(g.distance_bound, g.has_negative_weights, g.integral)
        assert r.info["dtype_tried"] == [widest.name] and "check" in r.timings
        assert "then cast" in r.info["why"]
        np.testing.assert_array_equal(as_float(r.distances), exact(g))
    with pytest.raises(DtypeError, match=f"{requested} cannot hold every distance of this graph: one is {inf}"):
        apsp.shortest_paths(boundary_graph(rng, inf, 30), method=method, backend="cpu", dtype=requested)


@pytest.mark.parametrize("engine", ["johnson", "cpu", "cpu-out-of-core", "nd-fw-cpu", "gpu"])
def test_a_requested_dtype_no_check_can_verify_is_a_checked_cast(rng, engine):
    """Negative weights (Floyd-Warshall's check needs every entry to saturate at INF) and a weight
    as large as the sentinel: solved in the worst case's dtype, cast when every distance fits."""
    kwargs = {"method": "johnson", "backend": "cpu"} if engine == "johnson" else {"method": "fw", **BACKENDS[engine]}
    skip_unless_usable(kwargs)
    g = random_graph(rng, 50, 0.2, lo=0, hi=300, negative=True)
    assert not exactness.dtype_fits(np.int16, g.distance_bound, True)  # refused up front before
    r = apsp.shortest_paths(g, dtype="int16", **kwargs)
    assert r.distances.dtype == np.int16 and r.info["dtype_check"] == "cast"
    np.testing.assert_array_equal(as_float(r.distances), exact(g))
    if r.info.get("matrix_on_disk"):  # the cast result stays in a scratch mapping, off RAM
        import mmap

        base = r.distances
        while isinstance(base, np.ndarray):
            base = base.base
        assert isinstance(base.obj if isinstance(base, memoryview) else base, mmap.mmap)
    if kwargs["method"] == "johnson":
        return
    # an edge heavier than int16's sentinel that no shortest path takes
    heavy = Graph.from_edges(EdgeList(3, np.array([0, 0, 2]), np.array([1, 2, 1]), np.array([INF16 + 5, 1, 1])))
    r = apsp.shortest_paths(heavy, dtype="int16", **kwargs)
    assert r.info["dtype_check"] == "cast" and r.distances.dtype == np.int16
    np.testing.assert_array_equal(as_float(r.distances), exact(heavy))
    with pytest.raises(DtypeError, match=f"one is {INF16 + 5}, beyond the int16 limit {INF16 - 1}"):
        apsp.shortest_paths(Graph.from_edges(EdgeList(2, np.array([0]), np.array([1]), np.array([INF16 + 5]))),
                            dtype="int16", **kwargs)


@pytest.mark.parametrize("method", ["fw", "dijkstra"])
def test_a_requested_float_dtype_holds_integer_distances_up_to_its_mantissa(rng, method):
    """Integer weights whose worst case float32 cannot hold exactly: solved in an integer dtype,
    cast when every distance is an integer float32 holds exactly (up to 2**24), else refused."""
    limit = 2 ** 24
    for total in (limit // 2, limit):
        g = boundary_graph(rng, total, 30, isolated=40)
        assert not exactness.dtype_fits(np.float32, g.distance_bound, False)
        r = apsp.shortest_paths(g, method=method, backend="cpu", dtype="float32")
        assert r.distances.dtype == np.float32 and r.info["dtype_check"] == "cast"
        np.testing.assert_array_equal(r.distances, exact(g))
    with pytest.raises(DtypeError, match=f"one is {limit + 1}, beyond the float32 limit {limit}"):
        apsp.shortest_paths(boundary_graph(rng, limit + 1, 30), method=method, backend="cpu", dtype="float32")


def test_checked_cast_reads_row_chunks(rng):
    g = random_graph(rng, 50, 0.2, lo=0, hi=300, negative=True)
    r = apsp.shortest_paths(g, method="johnson", backend="cpu", dtype="int16")
    wide = apsp.shortest_paths(g, method="johnson", backend="cpu", dtype="int64").distances
    np.testing.assert_array_equal(exactness.cast_checked(wide, np.int16, True, chunk=7), r.distances)
    limit = int(exactness.reachable_limit(np.int16, True))
    for bad in (limit + 1, -limit - 1):
        wide[3, 4] = bad
        with pytest.raises(DtypeError, match=f"one is {bad}, beyond the int16 limit {limit}"):
            exactness.cast_checked(wide, np.int16, True, chunk=7)
    wide[3, 4] = limit
    assert exactness.cast_checked(wide, np.int16, True, chunk=7)[3, 4] == limit


def test_an_interrupted_narrow_solve_resumes_then_widens(rng, tmp_path):
    """Ctrl-C in the int16 attempt, then resume: the int16 solve finishes from its checkpoint, is
    found cut off, and the int32 retry starts afresh (the narrow state is no state to resume)."""
    g = boundary_graph(rng, INF16 + 1, 40)
    ckpt = tmp_path / "state.ckpt"

    def stop_at(vertex):
        def hook(done):
            if done >= vertex:
                raise KeyboardInterrupt
        return hook

    with pytest.raises(KeyboardInterrupt):
        apsp.shortest_paths(g, method="fw", backend="cpu", checkpoint=str(ckpt), checkpoint_every=1e9,
                            block_size=8, on_round=stop_at(16))
    from apsp.checkpoint import read_header

    assert read_header(ckpt)["dtype"] == "int16"
    r = apsp.shortest_paths(g, method="fw", backend="cpu", checkpoint=str(ckpt), resume=True, block_size=8)
    assert r.info["dtype_tried"] == ["int16", "int32"]
    np.testing.assert_array_equal(as_float(r.distances), exact(g))
    assert not ckpt.exists()


@pytest.mark.slow
def test_a_narrow_dtype_a_search_rules_out_is_not_tried(rng):
    # a 70 x 70 grid with weights 1..1000: its longest distances are far past int16's limit,
    # and the searches before the solve find one, so int32 is solved once, with no retry
    side = 70
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = rng.integers(1, 1001, size=len(u))
    g = Graph.from_edges(EdgeList(side * side, np.concatenate([u, v]), np.concatenate([v, u]),
                                  np.concatenate([w, w])))
    assert g.longest_distance_found() >= exactness.cutoff_band(np.int16, g.max_abs_weight)[0]
    r = apsp.shortest_paths(g, method="nd-fw", backend="cpu")
    assert r.info["dtype_tried"] == ["int32"] and not r.info["dtype_retry"]
    assert "retry" not in r.timings and "int16" in r.info["dtype_skipped"][0]
    assert "not tried: int16" in r.info["why"]
    from scipy.sparse.csgraph import dijkstra

    ref = dijkstra(g.to_csr())  # float64 holds these integers exactly
    np.testing.assert_array_equal(r.distances, ref.astype(np.int32))
    # the bound is a real distance: never above the largest finite one
    assert g.longest_distance_found() <= ref.max()


def test_the_cutoff_band_is_exact_for_int64_weights_near_the_limit():
    # a float rounds this weight down by 85: the band would start 85 too high and miss 2w
    w = 1537228672809129301
    g = Graph.from_edges(EdgeList(4, [0, 1, 2], [1, 2, 3], np.array([w, w, w], dtype=np.int64)))
    assert g.max_abs_weight == w and type(g.max_abs_weight) is int
    assert g.distance_bound == 3 * w == exactness.inf_value(np.int64)
    lo, hi = exactness.cutoff_band(np.int64, g.max_abs_weight)
    assert lo == 2 * w and hi == 3 * w  # 2w, the distance 0 -> 2, lies in the band: cut-off suspected
    assert not exactness.dtype_fits(np.int64, g.distance_bound, False)
    pytest.importorskip("mpi4py")
    from apsp.distributed.inputs import load_on_root

    _, problem = load_on_root(g)
    assert problem.max_abs_weight == w and type(problem.max_abs_weight) is int
