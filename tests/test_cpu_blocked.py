"""Blocked Floyd-Warshall on the CPU (apsp.cpu.blocked) against the oracle and numpy."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from randgraphs import random_edges

import apsp
from apsp import engine, exactness
from apsp.cpu import blocked
from apsp.cpu.blocked import clamp_floor, close_block, fw_inplace, minplus_update
from apsp.cpu.oracle import floyd_warshall_reference
from apsp.engine import SolveOptions
from apsp.errors import NegativeCycleError
from apsp.graph import EdgeList, Graph

ALL_DTYPES = ("int16", "int32", "int64", "float32", "float64")
HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# blocked.solve runs small graphs on a plain loop nest; these tests are about the blocked kernels
pytestmark = pytest.mark.usefixtures("blocked_kernels_at_every_n")


def _oracle(graph: Graph, dt) -> np.ndarray:
    ref = floyd_warshall_reference(graph.fw_matrix(dt))
    return exactness.finalize_unreachable(ref, graph.has_negative_weights)


def _solve(graph: Graph, dt, block=None, **kw):
    return blocked.solve(graph, SolveOptions.build(dtype=np.dtype(dt), block_size=block, progress=False, **kw))


@st.composite
def graphs(draw, dtype=None):
    """A random graph (zero and negative weights, no negative cycle), a block size and a dtype."""
    dt = np.dtype(dtype or draw(st.sampled_from(ALL_DTYPES)))
    n = draw(st.integers(1, 70))
    block = draw(st.integers(1, n + 3))
    density = draw(st.sampled_from([0.0, 0.05, 0.2, 0.6, 1.0]))
    negative = draw(st.booleans())
    # keep (n-1)*max|w| within what int16 holds with negative weights (INF//4 = 4095)
    hi = draw(st.sampled_from([1, 5, 25]))
    seed = draw(st.integers(0, 2**32 - 1))
    edges = random_edges(np.random.default_rng(seed), n, density, lo=0, hi=hi, negative=negative)
    return Graph.from_edges(edges), block, dt


@HYPO
@given(graphs())
def test_blocked_equals_oracle_every_dtype(case):
    graph, block, dt = case
    out = _solve(graph, dt, block)
    assert out.dist.dtype == dt
    np.testing.assert_array_equal(out.dist, _oracle(graph, dt))


@pytest.mark.parametrize("dt", ALL_DTYPES)
@pytest.mark.parametrize("n,block", [(1, 1), (1, 64), (7, 3), (10, 4), (33, 8), (130, 64), (67, 200)])
def test_sizes_not_multiple_of_block(rng, dt, n, block):
    graph = Graph.from_edges(random_edges(rng, n, 0.3, lo=0, hi=20, negative=True))
    np.testing.assert_array_equal(_solve(graph, dt, block).dist, _oracle(graph, dt))


def test_default_block_and_larger_graph(rng):
    graph = Graph.from_edges(random_edges(rng, 300, 0.05, lo=1, hi=100))
    out = _solve(graph, "int32")
    assert out.block_size == blocked.DEFAULT_BLOCK
    np.testing.assert_array_equal(out.dist, _oracle(graph, "int32"))


def test_float_weights_match_scipy(rng):
    from scipy.sparse.csgraph import floyd_warshall

    edges = random_edges(rng, 90, 0.1, lo=0, hi=10, floats=True)
    graph = Graph.from_edges(edges)
    expected = floyd_warshall(graph.to_csr())
    np.testing.assert_allclose(_solve(graph, "float64", 16).dist, expected, rtol=1e-12)


@pytest.mark.parametrize("dt", ["int16", "float32"])
def test_no_edges_and_disconnected(dt):
    empty = Graph.from_edges(EdgeList(5, [], [], np.zeros(0, dtype=np.int64)))
    d = _solve(empty, dt, 2).dist
    unreachable = exactness.unreachable_value(dt)
    assert (np.diagonal(d) == 0).all()
    assert (d[~np.eye(5, dtype=bool)] == unreachable).all()
    # two components {0,1,2} and {3,4}
    two = Graph.from_edges(EdgeList(5, [0, 1, 2, 3], [1, 2, 0, 4], [1, 2, 3, 4]))
    d = _solve(two, dt, 2).dist
    assert d[0, 2] == 3 and d[2, 1] == 4 and d[3, 4] == 4
    assert (d[:3, 3:] == unreachable).all() and (d[3:, :3] == unreachable).all() and d[4, 3] == unreachable


def test_int16_near_the_bound_does_not_wrap(rng):
    # non-negative: a chain whose far end sits just below the int16 sentinel (16383), plus random shortcuts
    n, w = 100, 165  # (n-1)*w = 16335 < 16383
    src = list(range(n - 1))
    dst = list(range(1, n))
    weight = [w] * (n - 1)
    extra = rng.integers(0, n, size=(300, 2))
    src += list(extra[:, 0])
    dst += list(extra[:, 1])
    weight += list(rng.integers(100, w + 1, size=300))
    graph = Graph.from_edges(EdgeList(n, src, dst, weight))
    assert exactness.choose_dtype(graph.distance_bound, graph.has_negative_weights, graph.integral) == np.int16
    d = _solve(graph, "int16", 7).dist
    np.testing.assert_array_equal(d, _oracle(graph, "int16"))
    reached = d[d != np.iinfo(np.int16).max]
    assert reached.min() >= 0 and reached.max() <= 16335
    # negative weights: bound (n-1)*max|w| <= INF//4 = 4095
    edges = random_edges(rng, 50, 0.3, lo=0, hi=41, negative=True)
    graph = Graph.from_edges(edges)
    assert graph.distance_bound <= 4095
    np.testing.assert_array_equal(_solve(graph, "int16", 8).dist, _oracle(graph, "int16"))


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_negative_cycle_raises(rng, dt):
    n = 40
    edges = random_edges(rng, n, 0.2, lo=1, hi=20)
    # a cycle 5 -> 17 -> 30 -> 5 of total weight -1
    src = np.concatenate([edges.src, [5, 17, 30]])
    dst = np.concatenate([edges.dst, [17, 30, 5]])
    weight = np.concatenate([edges.weight, [2, -4, 1]])
    graph = Graph.from_edges(EdgeList(n, src, dst, weight))
    with pytest.raises(NegativeCycleError) as info:
        _solve(graph, dt, 8)
    assert set(info.value.vertices) & {5, 17, 30}
    with pytest.raises(NegativeCycleError):
        apsp.shortest_paths(graph, method="fw", backend="cpu", dtype=dt)


def test_negative_cycles_clamp_instead_of_wrapping():
    inf = int(exactness.inf_value(np.int16))
    t = np.full((9, 9), -4000, dtype=np.int16)  # every cycle negative: values would run to -inf
    close_block(t, negative=True)
    assert (t == -inf).all()
    c = np.full((5, 6), 0, dtype=np.int16)
    a = np.full((5, 3), -inf, dtype=np.int16)
    minplus_update(c, a, np.full((3, 6), -inf, dtype=np.int16), negative=True)
    assert (c == -inf).all()
    d = np.full((40, 40), -4000, dtype=np.int16)
    fw_inplace(d, 16, negative=True, progress=False)
    assert d.min() >= -inf and (np.diagonal(d)[:16] < 0).all()
    f = np.full((6, 6), -1e307)  # doubling twice would overflow to -inf, then inf + -inf = nan
    close_block(f, negative=True)
    assert np.isfinite(f).all() and f.min() == clamp_floor(np.float64) and (np.diagonal(f) < 0).all()


# --------------------------------------------------------------------------- tile kernels

def _minplus_numpy(c, a, b, dt):
    """The obvious formula, in float64 with inf for the sentinel."""
    inf = exactness.inf_value(dt)

    def wide(x):
        y = x.astype(np.float64)
        y[x >= inf] = np.inf
        return y

    return np.minimum(wide(c), (wide(a)[:, :, None] + wide(b)[None, :, :]).min(axis=1))


def _narrow(x, dt):
    out = np.full(x.shape, exactness.inf_value(dt), dtype=dt)
    out[np.isfinite(x)] = x[np.isfinite(x)]
    return out


def _random_tile(rng, shape, dt, lo=-5, hi=60, p_inf=0.3):
    t = rng.integers(lo, hi, size=shape).astype(dt)
    t[rng.random(shape) < p_inf] = exactness.inf_value(dt)
    return t


@HYPO
@given(st.sampled_from(["int16", "int32", "float32"]), st.integers(1, 19), st.integers(1, 19),
       st.integers(1, 40), st.booleans(), st.integers(0, 2**32 - 1))
def test_minplus_update_equals_numpy(dt, r, k, s, negative, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dt)
    lo = -5 if negative else 0
    c, a, b = (_random_tile(rng, shape, dt, lo=lo) for shape in ((r, s), (r, k), (k, s)))
    expected = _narrow(_minplus_numpy(c, a, b, dt), dt)
    got = minplus_update(c.copy(), a, b, negative=negative)
    if negative and dt.kind == "i":  # entries reached only through INF stay above INF//2: unreachable
        got = exactness.finalize_unreachable(got, True)
        expected = exactness.finalize_unreachable(expected, True)
    np.testing.assert_array_equal(got, expected)


def test_minplus_update_views_and_phase2_aliasing(rng):
    dt = np.dtype(np.int32)
    d = _random_tile(rng, (30, 30), dt, lo=0)
    # non-contiguous views into a bigger matrix are updated in place
    expected = _narrow(_minplus_numpy(d[2:9, 3:20], d[2:9, 21:26], d[10:15, 3:20], dt), dt)
    minplus_update(d[2:9, 3:20], d[2:9, 21:26], d[10:15, 3:20])
    np.testing.assert_array_equal(d[2:9, 3:20], expected)
    # phase 2 with a closed pivot P: R = min(R, P (x) R) and C = min(C, C (x) P) in place
    p = close_block(_random_tile(rng, (6, 6), dt, lo=0))
    np.fill_diagonal(p, 0)
    close_block(p)
    row_panel = _random_tile(rng, (6, 11), dt, lo=0)
    expected = _narrow(_minplus_numpy(row_panel, p, row_panel, dt), dt)
    np.testing.assert_array_equal(minplus_update(row_panel, p, row_panel), expected)
    col_panel = _random_tile(rng, (13, 6), dt, lo=0)
    expected = _narrow(_minplus_numpy(col_panel, col_panel, p, dt), dt)
    np.testing.assert_array_equal(minplus_update(col_panel, col_panel, p), expected)


@pytest.mark.parametrize("dt", ["int16", "float64"])
def test_close_block_equals_oracle(rng, dt):
    for m in (1, 2, 5, 17, 70):  # 70 > SUB_BLOCK: the pivot closure is itself blocked
        t = _random_tile(rng, (m, m), np.dtype(dt), lo=0)
        np.fill_diagonal(t, 0)
        expected = floyd_warshall_reference(t)
        np.testing.assert_array_equal(close_block(t), expected)
    # a transposed (non-contiguous) view is closed in place
    t = _random_tile(rng, (9, 9), np.dtype(dt), lo=0)
    np.fill_diagonal(t, 0)
    expected = floyd_warshall_reference(np.ascontiguousarray(t.T))
    view = t.T
    close_block(view)
    np.testing.assert_array_equal(view, expected)


def _blocked_from_tile_kernels(d, block, negative):
    """Blocked FW written with the public tile kernels on separate contiguous tiles, as a
    distributed rank holds them (so panels are updated with ``c is a`` / ``c is b``)."""
    n = d.shape[0]
    edges = list(range(0, n, block))
    tile = {(i, j): d[i:i + block, j:j + block].copy() for i in edges for j in edges}
    for k in edges:
        close_block(tile[k, k], negative)
        for o in edges:
            if o != k:
                minplus_update(tile[k, o], tile[k, k], tile[k, o], negative)  # row panel R = P (x) R
                minplus_update(tile[o, k], tile[o, k], tile[k, k], negative)  # column panel C = C (x) P
        for i in edges:
            for j in edges:
                if k not in (i, j):
                    minplus_update(tile[i, j], tile[i, k], tile[k, j], negative)
    return np.block([[tile[i, j] for j in edges] for i in edges]) if n else d


@HYPO
@given(st.integers(1, 60), st.integers(1, 70), st.booleans(), st.integers(0, 2**32 - 1))
def test_tile_kernels_reproduce_fw_inplace_bit_for_bit(n, block, negative, seed):
    # fractional float weights: sums round differently if any value is read at another moment
    edges = random_edges(np.random.default_rng(seed), n, 0.3, lo=0, hi=10, negative=negative, floats=True)
    d = Graph.from_edges(edges).fw_matrix(np.float64)
    expected = fw_inplace(d.copy(), block, negative=negative, progress=False)
    np.testing.assert_array_equal(_blocked_from_tile_kernels(d, block, negative), expected)


def test_tile_kernel_argument_errors():
    a = np.zeros((3, 4), dtype=np.int32)
    with pytest.raises(ValueError, match="square"):
        close_block(a)
    with pytest.raises(ValueError, match="chain"):
        minplus_update(np.zeros((3, 3), np.int32), a, np.zeros((3, 3), np.int32))
    with pytest.raises(TypeError, match="one dtype"):
        minplus_update(np.zeros((3, 3), np.int32), np.zeros((3, 3), np.int64), np.zeros((3, 3), np.int32))
    with pytest.raises(ValueError, match="positive"):
        fw_inplace(np.zeros((3, 3), np.int32), 0)
    with pytest.raises(ValueError, match="C-contiguous"):
        fw_inplace(np.zeros((3, 3), np.int32).T.copy(order="F"), 2)


def test_ctrl_c_stops_between_rounds(monkeypatch, rng):
    graph = Graph.from_edges(random_edges(rng, 40, 0.2, lo=1, hi=9))
    d = graph.fw_matrix(np.int32)
    start = d.copy()
    rounds = []

    class InterruptingBar:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        shown = True

        def set_to(self, done):
            if done == 0:
                return
            rounds.append(done)
            if len(rounds) == 2:
                raise KeyboardInterrupt

    monkeypatch.setattr(engine, "progress_bar", lambda *a, **k: InterruptingBar())
    with pytest.raises(KeyboardInterrupt):
        fw_inplace(d, 8, progress=True)
    assert len(rounds) == 2  # stopped after the second of five rounds
    assert not np.array_equal(d, start)


def test_resumed_rounds_start_the_bar_at_the_rounds_done(monkeypatch, rng):
    d = Graph.from_edges(random_edges(rng, 40, 0.2, lo=1, hi=9)).fw_matrix(np.int32)
    bars = []

    class RecordingBar:
        shown = True

        def __init__(self, total, enabled, desc="", unit="round", initial=0):
            self.done = [initial]
            bars.append((total, self.done))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def set_to(self, done):
            self.done.append(done)

    monkeypatch.setattr(engine, "progress_bar", RecordingBar)
    cpu = blocked.CPUEngine(np.int32, False)
    cpu.use(d)
    engine.drive(cpu, 8, start_vertex=16, progress=True)
    assert bars == [(5, [2, 3, 4, 5])]  # 2 of 5 rounds done before; the bar moves on from there


def test_tile_products_split_over_the_rounds_threads(monkeypatch):
    # the engine's row split of big products and its rounds' split (`run_split`) follow one setting
    monkeypatch.setattr(blocked, "thread_count", lambda: 3)
    assert blocked.CPUEngine(np.int32, False).threads == 3


def test_registered_as_fw_cpu(rng):
    graph = Graph.from_edges(random_edges(rng, 20, 0.3, lo=0, hi=9))
    r = apsp.shortest_paths(graph, method="fw", backend="cpu", block_size=6)
    assert r.method == "fw" and r.backend == "cpu" and r.block_size == 6
    np.testing.assert_array_equal(r.distances, _oracle(graph, r.dtype))


def test_generated_kernels_are_up_to_date():
    from apsp.cpu import _kernels_gen

    assert _kernels_gen.TARGET.read_text() == _kernels_gen.generate(), \
        "run python -m apsp.cpu._kernels_gen"


@pytest.mark.slow
def test_every_caller_shares_one_compiled_kernel_per_dtype_and_variant(tmp_path):
    # a constant argument (a literal 0) types as Literal[int] and makes Numba compile the unrolled
    # kernels once more for that caller: seconds of the first run, for no gain. Counted on an empty
    # cache in a fresh process (a kernel loaded from the cache compiles none of its callees).
    code = """if True:
        from collections import Counter
        import numpy as np
        from numba.core import event
        compiled = Counter()

        class Count(event.Listener):
            def on_start(self, ev):
                compiled[ev.data["dispatcher"].py_func.__name__] += 1

            def on_end(self, ev):
                pass

        event.register("numba:compile", Count())
        from apsp.cpu.blocked import close_block, fw_inplace, minplus_update
        rng = np.random.default_rng(5)
        d = rng.integers(0, 50, (70, 70)).astype(np.int32)
        np.fill_diagonal(d, 0)
        fw_inplace(d, block=64, progress=False)  # phases 1-3, and a pivot closed in sub-blocks
        close_block(d[:40, :40].copy())
        minplus_update(np.zeros((3, 4), np.int32), np.ones((3, 5), np.int32), np.ones((5, 4), np.int32))
        print(dict(compiled))
        assert compiled["_relax"] == compiled["_relax4"] == compiled["_relax1"] == 1, compiled
    """
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(Path(apsp.__file__).parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("dt", ALL_DTYPES)
@pytest.mark.parametrize("negative", [False, True])
def test_small_graphs_plain_loop_equals_oracle_and_blocked_kernels(monkeypatch, rng, dt, negative):
    # below SMALL_N solve() skips the blocked kernels (they take long to compile): same distances,
    # and every recorded path is a real shortest path
    n = int(rng.integers(2, 90))
    edges = random_edges(rng, n, float(rng.uniform(0.02, 0.5)), lo=0, hi=20, negative=negative)
    graph = Graph.from_edges(edges)
    blocked_out = _solve(graph, dt, 8)
    monkeypatch.setattr(blocked, "SMALL_N", 256)
    out = _solve(graph, dt, 8, successors=True, predecessors=True)
    np.testing.assert_array_equal(out.dist, _oracle(graph, dt))
    np.testing.assert_array_equal(out.dist, blocked_out.dist)
    from test_paths import assert_valid_paths

    assert_valid_paths(edges, out.dist, out.successors, out.predecessors)
