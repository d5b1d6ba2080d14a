"""The calibration cache (``rates.json``) cannot break later runs: hostile files are ignored with one
warning, no rate makes a one-row query plan a whole solve, and concurrent saves lose nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from apsp import costs


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.delenv("APSP_RATES", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(costs, "cpu_oversubscribed", lambda: False)
    from apsp import calibrations

    monkeypatch.setattr(calibrations, "_noticed", set())
    path = costs.cache_path()
    path.parent.mkdir(parents=True)
    return path


def mine(**fields):
    return {costs.machine_key(None): fields}


HOSTILE_TABLES = {
    "zero rate": mine(fw_cpu=0),
    "string rate": mine(dijkstra_cpu="fast"),
    "negative seconds": mine(search_call_seconds=-1.0),
    "infinite rate": mine(fw_cpu=float("inf")),
    "bool rate": mine(fw_cpu=True),
    "favours fw": mine(fw_cpu=1e20, dijkstra_cpu=1e-3),
    "bad speedup": mine(fw_dtype_speedup=[[2, 0.0]]),
    "not an object": [1, 2, 3],
}


@pytest.mark.parametrize("name", sorted(HOSTILE_TABLES))
def test_hostile_calibration_tables_fall_back_to_the_shipped_rates(cache, name):
    cache.write_text(json.dumps(HOSTILE_TABLES[name]))
    with pytest.warns(RuntimeWarning, match="calibration cache"):
        assert costs.rates_for(None) == costs.SHIPPED["cpu"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one notice a process, not one per solve
        assert costs.rates_for(None) == costs.SHIPPED["cpu"]


def test_deeply_nested_calibration_cache_is_ignored(cache):
    cache.write_text("[" * 200000 + "]" * 200000)
    with pytest.warns(RuntimeWarning, match="nests too deeply"):
        assert costs.rates_for(None) == costs.SHIPPED["cpu"]


def test_oversized_calibration_cache_is_not_read(cache):
    cache.write_text(json.dumps({"x": "y" * (2 << 20)}))
    with pytest.warns(RuntimeWarning, match="bytes"):
        assert costs.rates_for(None) == costs.SHIPPED["cpu"]


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_calibration_cache_that_is_no_regular_file_is_refused_at_once(cache, kind):
    if kind == "fifo":
        os.mkfifo(cache)
    else:
        cache.symlink_to("/dev/zero")
    code = "import apsp.costs as c; print(c.rates_for(None).source == 'shipped')"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache.parent.parent)}
    env.pop("APSP_RATES", None)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0 and run.stdout.strip() == "True", run.stderr
    assert "not a regular file" in run.stderr


def test_no_calibration_makes_a_one_row_query_of_a_long_chain_plan_a_whole_solve(cache):
    from apsp.graph import EdgeList, Graph
    from apsp.plan import make_plan

    n = 100_000
    bounds = costs._field_bounds()
    # the most FW-favouring table the cache may hold: FW at its fastest, searches at their slowest
    fastest_fw = {"fw_cpu": bounds["fw_cpu"][1], "ndfw_cpu": bounds["ndfw_cpu"][1],
                  "result_fill": bounds["result_fill"][1], "dijkstra_cpu": bounds["dijkstra_cpu"][0],
                  "bfs_cpu": bounds["bfs_cpu"][0], "search_call_seconds": bounds["search_call_seconds"][1]}
    for table in (fastest_fw, {"fw_cpu": 1e20, "dijkstra_cpu": 1e-3}):
        cache.write_text(json.dumps(mine(**table)))
        g = Graph.from_edges(EdgeList(n, np.arange(n - 1), np.arange(1, n), np.full(n - 1, 2)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            plan = make_plan(g, "auto", "cpu", None, sources=np.array([0]))
        assert plan.method == "dijkstra" and plan.rows_by_search


SAVER = """
import sys
from apsp import costs
who = sys.argv[1]
for i in range(int(sys.argv[2])):
    costs.save_calibration(costs.Rates(name=f"{who}-{i}"), f"{who}-{i}")
"""


def test_concurrent_calibration_saves_lose_nothing(cache):
    env = {**os.environ, "XDG_CACHE_HOME": str(cache.parent.parent)}
    procs = [subprocess.Popen([sys.executable, "-c", SAVER, f"machine{p}", "15"], env=env) for p in range(4)]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    keys = set(json.loads(cache.read_text()))
    assert keys == {f"machine{p}-{i}" for p in range(4) for i in range(15)}
