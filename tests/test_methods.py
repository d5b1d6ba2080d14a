"""The method table: every record's functions and solvers resolve, and the plan, the cost model and
the registry read the same records."""
from __future__ import annotations

import numpy as np
import pytest

from apsp import costs, engine, methods, plan
from apsp.graph import Graph


def test_every_registered_solver_and_every_record_function_resolves():
    for (key, backend), target in methods.REGISTRY.items():
        if backend == "gpu":
            pytest.importorskip("triton")
        assert callable(methods.load(target)), (key, backend)
    for m in methods.TABLE:
        for fn in (m.estimate, m.memory, m.workers):
            if fn:
                assert callable(methods.load(fn)), (m.name, fn)
    assert engine.REGISTRY is methods.REGISTRY
    assert methods.METHODS == ("auto", "fw", "nd-fw", "bfs", "dijkstra", "johnson", "nd-rows", "reference")


def _dense(src, dst, weights):
    d = np.zeros((5, 5))
    d[src, dst] = weights
    return d


@pytest.mark.parametrize("weights,expected", [
    ([1] * 5, ["bfs", "fw", "dijkstra"]),
    ([2, 3, 4, 5, 6], ["fw", "dijkstra"]),
    ([2, -1, 4, 5, 6], ["fw", "johnson"]),
])
def test_the_automatic_choice_weighs_the_records_that_take_the_weights(weights, expected):
    g = Graph.from_dense(_dense(np.arange(5), (np.arange(5) + 1) % 5, weights))
    names = [m for m, b in costs.applicable(g, "cpu") if m != "nd-fw"]  # nd-fw: sparse graphs only
    assert names == expected


def test_the_plan_resolves_the_block_each_method_runs_with():
    g = Graph.from_dense(_dense(np.arange(5), (np.arange(5) + 1) % 5, [2, 3, 4, 5, 6]))
    fw = plan.make_plan(g, "fw", "cpu")
    assert fw.block == 256 and {s.opts.block_size for s in fw.steps} == {256} and fw.block_note is None
    nd = plan.make_plan(g, "nd-fw", "cpu")
    assert nd.block == methods.METHOD["nd-fw"].block("cpu") and nd.steps[0].opts.block_size == nd.block
    search = plan.make_plan(g, "dijkstra", "cpu", block_size=64)
    assert search.block is None and search.steps[0].opts.block_size is None
    assert search.block_note == "block 64 not used: method dijkstra has no block"
    assert "block 64 not used" in search.why({"dtype_tried": ["int16"]})
    assert search.summary()["block"] is None and search.summary()["block_note"] == search.block_note


def test_a_plan_constraint_keeps_float64_sums_where_integers_would_not_round_as_scipy():
    big = float(2 ** 52)
    g = Graph.from_dense(_dense(np.arange(5), (np.arange(5) + 1) % 5, [big] * 5))
    assert plan.make_plan(g, "fw", "cpu").steps[0].dtype == np.int64
    p = plan.make_plan(g, "fw", "cpu", integers_below=2 ** 53)
    assert [s.dtype for s in p.steps] == [np.dtype(np.float64)] and g.integral
