"""Dijkstra and Johnson (scipy.sparse.csgraph) in apsp's conventions, against the FW oracle."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import apsp
from apsp import exactness
from apsp.cpu.oracle import floyd_warshall_reference
from apsp.errors import NegativeCycleError
from apsp.generate import random_graph
from apsp.graph import EdgeList
from pathcheck import as_float, check_predecessors, check_successors, dense_weights


def oracle(e: EdgeList, dtype):
    g = apsp.as_graph(e)
    d = floyd_warshall_reference(g.fw_matrix(dtype))
    return exactness.finalize_unreachable(d, g.has_negative_weights)


def check(e: EdgeList, method: str):
    r = apsp.shortest_paths(e, method=method, return_predecessors=True, return_successors=True)
    expected = oracle(e, r.dtype)
    if r.dtype.kind == "f":
        np.testing.assert_allclose(r.distances, expected, rtol=1e-12)
    else:
        np.testing.assert_array_equal(r.distances, expected)
    w = dense_weights(e.src, e.dst, e.weight, e.n)
    check_predecessors(r.predecessors, as_float(r.distances), w)
    check_successors(r.successors, as_float(r.distances), w)
    return r


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 60), density=st.floats(0.0, 0.3), seed=st.integers(0, 2**31),
       method=st.sampled_from(["dijkstra", "johnson"]), float_weights=st.booleans())
def test_non_negative_random_graphs(n, density, seed, method, float_weights):
    weights = (0.0, 10.0) if float_weights else (0, 10)  # zero-weight edges included
    e = random_graph(n, density, weights=weights, seed=seed)
    r = check(e, method)
    assert r.dtype == (np.float64 if float_weights and e.m else np.int16)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 2**31))
def test_johnson_negative_weights_without_negative_cycles(n, seed):
    # edges only from lower to higher numbers (a DAG), so negative weights make no cycle
    e = random_graph(n, 0.3, weights=(-5, 10), seed=seed)
    keep = e.src < e.dst
    dag = EdgeList(n, e.src[keep], e.dst[keep], e.weight[keep])
    r = check(dag, "johnson")
    assert r.method == "johnson"


def test_negative_cycle_raises_ours_and_scipys():
    from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError

    e = EdgeList(3, [0, 1, 2], [1, 2, 0], [1, -3, 1])
    with pytest.raises(NegativeCycleError):
        apsp.shortest_paths(e, method="johnson")
    with pytest.raises(ScipyNegativeCycleError):
        apsp.shortest_paths(e, method="johnson")
    with pytest.raises(NegativeCycleError):
        apsp.shortest_paths(EdgeList(2, [0, 1], [0, 1], [-1, 2]), method="johnson")  # self-loop


def test_dijkstra_refuses_negative_weights():
    with pytest.raises(ValueError, match="johnson"):
        apsp.shortest_paths(EdgeList(2, [0], [1], [-1]), method="dijkstra")


def test_unreachable_and_dtypes():
    e = EdgeList(4, [0, 1], [1, 2], [3, 4])
    for name in ("int16", "int32", "int64", "float32", "float64"):
        r = apsp.shortest_paths(e, method="dijkstra", dtype=name)
        assert r.distances.dtype == np.dtype(name)
        assert r.distances[0, 2] == 7
        assert r.distances[2, 0] == exactness.unreachable_value(np.dtype(name))
        assert not r.reachable[3, 0]


def test_auto_picks_dijkstra_or_johnson_for_sparse_weighted():
    # 3000 vertices, 1.5 edges each: n searches over the edges are a small fraction of n^3
    e = random_graph(3000, 0.0005, weights=(1, 9), seed=2)
    assert apsp.shortest_paths(e, backend="cpu").method == "dijkstra"
    forward = e.src < e.dst  # a DAG: a negative edge makes no cycle
    w = e.weight[forward].copy()
    w[0] = -3
    dag = EdgeList(e.n, e.src[forward], e.dst[forward], w)
    assert apsp.shortest_paths(dag, backend="cpu").method == "johnson"
