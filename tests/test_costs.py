"""The cost model: estimates from the graph's facts, nd-fw's ordering built only where it may win,
the rates' cache."""
import json

import numpy as np
import pytest

import apsp
from apsp import costs, generate
from apsp.bench.calibrate import _grid
from apsp.graph import Graph


def _random(n, m, seed=0, unit=False):
    return Graph.from_edges(generate.random_graph(n, m / (n * (n - 1.0)), None if unit else (1, 100), seed=seed))


@pytest.fixture
def no_dissection(monkeypatch):
    """Building a dissection fails the test."""
    import apsp.dissection

    def refuse(*args, **kwargs):
        raise AssertionError("a dissection was built")

    monkeypatch.setattr(apsp.dissection, "dissect", refuse)


def test_random_graph_is_priced_without_a_dissection(no_dissection):
    """nd-fw on a random graph (middle BFS level: a large share of the vertices) is priced from
    the separator proxy alone, and the pick is Dijkstra, whatever the density rule said."""
    g = _random(10000, 50000)
    rates = costs.SHIPPED["cpu"]
    pick, seconds, table = costs.fastest(g, "cpu", rates=rates)
    assert pick == ("dijkstra", "cpu")
    assert seconds == min(table.values())
    assert table[("nd-fw", "cpu")] > table[("dijkstra", "cpu")]
    s, c = costs.separator_proxy(g)
    assert c > 0.95 * g.n and s > 0.2 * c  # no small separator
    assert costs.estimate(g, "nd-fw", "cpu") > 0  # the public estimate does not order either
    # on a GPU too: dense FW, and no dissection built to price nd-fw there
    pick, _, _ = costs.fastest(g, "gpu", [("fw", "gpu"), ("nd-fw", "gpu")], rates=costs.SHIPPED["H100"])
    assert pick == ("fw", "gpu")
    assert not g.derived.dissections


def test_grid_is_dissected_and_counted():
    """Where nd-fw may win (a grid: separators about sqrt(n)) the ordering is built once, its
    counted work replaces the proxy, and the solver's default plan reuses it."""
    from apsp.dissection import default_plan

    g = _grid(50)
    s, c = costs.separator_proxy(g)
    assert c == g.n and s <= 2 * 50
    rates = costs.SHIPPED["cpu"]
    table = costs.estimates(g, [("fw", "cpu"), ("nd-fw", "cpu")], rates=rates)
    nd = costs.cached_ordering(g, "cpu")
    assert nd is not None and default_plan(g, "cpu") is nd
    assert table[("nd-fw", "cpu")] == costs.estimate(g, "nd-fw", "cpu", rates=rates, ordering=nd)
    assert table[("nd-fw", "cpu")] < table[("fw", "cpu")]
    # the proxy brackets the counted work within its documented spread
    proxy = costs.nd_proxy_work(g, "cpu")[0]
    assert proxy / costs.ND_PROXY_SPREAD <= nd.updates() <= proxy * costs.ND_PROXY_SPREAD


def test_estimates_follow_the_facts():
    rates = costs.SHIPPED["H100"]
    g = _random(3000, 3000 * 40)  # 40 edges per vertex: Dijkstra is still priced, dense FW wins
    cpu = costs.estimates(g, costs.applicable(g, "cpu"), rates=costs.SHIPPED["cpu"])
    assert ("dijkstra", "cpu") in cpu and cpu[("fw", "cpu")] < cpu[("dijkstra", "cpu")]
    assert ("nd-fw", "cpu") not in cpu  # too dense to order: nd-fw would be dense FW with overheads
    assert costs.estimate(g, "nd-fw", "cpu", rates=costs.SHIPPED["cpu"]) >= cpu[("fw", "cpu")] * 0.5  # n^3 work
    # GPU: at n = 3000 the rounds' launches outlast their work, whatever the dtype (only the copy differs)
    copy = g.n ** 2 / rates.d2h
    assert costs.estimate(g, "fw", "gpu", dtype="int16", rates=rates) - 2 * copy == pytest.approx(
        costs.estimate(g, "fw", "gpu", dtype="int32", rates=rates) - 4 * copy, rel=1e-9)
    # at n = 30000 the work: int16 products run about twice int32's; the copy grows with the itemsize
    g = _random(30000, 30000 * 4)
    i16 = costs.estimate(g, "fw", "gpu", dtype="int16", rates=rates)
    i32 = costs.estimate(g, "fw", "gpu", dtype="int32", rates=rates)
    i64 = costs.estimate(g, "fw", "gpu", dtype="int64", rates=rates)
    assert i16 < i32 < i64
    fixed = rates.gpu_fw_call_seconds + 12.0 * g.nnz / rates.h2d  # the rounds' launches overlap their work here
    assert (i32 - fixed - g.n ** 2 * 4 / rates.d2h) / (i16 - fixed - g.n ** 2 * 2 / rates.d2h) == pytest.approx(
        dict(rates.fw_gpu_dtype_speedup)[2], rel=0.05)
    # a small unit-weight graph: the GPU's fixed cost outweighs its speed
    small = _random(1000, 5000, unit=True)
    both = [("bfs", "cpu"), ("bfs", "gpu")]
    pick, _, _ = costs.fastest(small, "cpu", both, rates=rates)
    assert pick == ("bfs", "cpu")
    with pytest.raises(ValueError, match="CPU only"):
        costs.estimate(g, "dijkstra", "gpu", rates=rates)
    with pytest.raises(ValueError, match="no estimate"):
        costs.estimate(g, "bogus", "cpu", rates=rates)


def test_applicable_methods():
    assert costs.applicable(_random(300, 900, unit=True), "cpu") == [
        ("bfs", "cpu"), ("fw", "cpu"), ("nd-fw", "cpu"), ("dijkstra", "cpu")]
    assert ("nd-fw", "cpu") not in costs.applicable(_random(300, 300 * 40), "cpu")  # too dense to order
    neg = Graph.from_dense(np.array([[0, -1], [3, 0]]))
    assert ("johnson", "cpu") in costs.applicable(neg, "cpu")
    assert all(b == "gpu" and m != "dijkstra" for m, b in costs.applicable(neg, "gpu"))


def test_calibration_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.delenv("APSP_RATES", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(costs, "cpu_oversubscribed", lambda: False)
    assert costs.cache_path() == tmp_path / "apsp" / "rates.json"
    assert costs.rates_for(None) == costs.SHIPPED["cpu"]
    assert costs.rates_for("NVIDIA H200") is costs.SHIPPED["H200"]
    assert costs.rates_for("NVIDIA H100 80GB HBM3") is costs.SHIPPED["H100"]
    mine = costs.Rates(name="here", fw_cpu=1.234e9, source="test")
    other = costs.Rates(name="elsewhere", fw_cpu=9e9)
    costs.save_calibration(other, "another machine")
    costs.save_calibration(mine, costs.machine_key(None))
    assert costs.rates_for(None) == mine  # this machine's calibration first
    assert costs.load_calibrations()["another machine"] == other  # the others kept
    assert costs.rates_for("NVIDIA H200") is costs.SHIPPED["H200"]  # another key: the shipped table
    data = json.loads(costs.cache_path().read_text())
    data[costs.machine_key(None)]["bogus"] = 1
    costs.cache_path().write_text(json.dumps(data))
    assert costs.rates_for(None) == costs.SHIPPED["cpu"]  # an unreadable cache is ignored


def test_bench_calibrate_caches_this_machine(tmp_path, monkeypatch, capsys):
    """``apsp bench calibrate`` measures, prints and caches a table `rates_for` then returns."""
    from apsp.bench import calibrate
    from apsp.bench.cli import main

    monkeypatch.delenv("APSP_RATES", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(costs, "cpu_oversubscribed", lambda: False)
    monkeypatch.setattr(calibrate, "_median_seconds", lambda call, repeat: 0.01)  # no timing here
    assert main(["calibrate", "--no-gpu", "-q"]) == 0
    printed = json.loads(capsys.readouterr().out)
    rates = costs.this_machine()  # the key names this machine's GPU, measured or not
    assert rates == costs.Rates.from_json(printed) and rates.source.startswith("apsp bench calibrate")
    assert rates.fw_cpu == pytest.approx(2000 ** 3 / (0.01 - 2000 ** 2 * 4 / rates.result_fill))


def test_oversubscribed_cores_make_small_rounds_dear(tmp_path, monkeypatch):
    monkeypatch.delenv("APSP_RATES", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(costs, "cpu_oversubscribed", lambda: True)
    busy = costs.rates_for(None)
    assert busy.nd_round_cpu_seconds == costs.SHIPPED["cpu"].nd_round_cpu_busy_seconds
    monkeypatch.setenv("APSP_RATES", "shipped")  # reproducible: the shipped table whatever the load
    assert costs.rates_for(None) is costs.SHIPPED["cpu"]


def test_a_process_busy_with_its_own_solves_is_not_oversubscribed(monkeypatch):
    """The load average counts this process's own threads: only the rest is other work."""
    clock = {"wall": 1000.0, "cpu": 50.0}
    monkeypatch.setattr(costs, "_own_cpu", [])
    monkeypatch.setattr(costs.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(costs.os, "getloadavg", lambda: (1.9, 1.5, 1.0))
    monkeypatch.setattr(costs.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(costs.time, "process_time", lambda: clock["cpu"])
    assert costs.cpu_oversubscribed()  # no history yet: all of the load is someone else's
    clock["wall"] += 30.0
    clock["cpu"] += 30.0 * 1.8  # this process ran 1.8 cores for the last half minute
    assert not costs.cpu_oversubscribed()
    clock["wall"] += 30.0
    clock["cpu"] += 30.0 * 0.1  # then mostly waited: 0.95 cores of its own over the minute
    assert not costs.cpu_oversubscribed()
    clock["wall"] += 45.0  # idle since: its samples from more than a minute ago drop out
    assert costs.cpu_oversubscribed()  # the load average is someone else's again


def test_calibrate_gpu_arithmetic(monkeypatch):
    """The GPU stage turns its timings into rates (timings stubbed in call order: no GPU here)."""
    from apsp.bench import calibrate

    times = iter([0.010, 0.003, 0.030, 0.200, 0.120, 0.050, 0.030, 0.300])
    monkeypatch.setattr(calibrate, "_median_seconds", lambda call, repeat: next(times))
    base = costs.SHIPPED["H100"]
    rates = calibrate.calibrate_gpu(base, log=lambda text: None)
    assert (rates.gpu_fw_call_seconds, rates.gpu_call_seconds) == (0.010, 0.003)
    # n = 2048: 16 rounds launched in what the call took beyond its fixed cost and its copy
    assert rates.fw_round_gpu_seconds == pytest.approx((0.030 - 0.010 - 2048 * 2048 * 4 / base.d2h) / 16)
    n = 8192

    def full_rate(t, itemsize):
        return n ** 3 / (t - 0.010 - n * n * itemsize / base.d2h) * (n + base.fw_gpu_half_n) / n

    assert rates.fw_gpu == pytest.approx(full_rate(0.200, 4))
    assert dict(rates.fw_gpu_dtype_speedup)[2] == pytest.approx(full_rate(0.120, 2) / full_rate(0.200, 4))
    assert rates.bfs_gpu > 0 and 0 < rates.ndfw_gpu <= rates.fw_gpu and rates.nd_round_gpu_seconds >= 0


def test_dijkstra_pays_for_the_empty_buckets_it_crosses():
    # the same road-like mesh with lengths 30 times longer: the bucket queue crosses 30 times more
    # empty distances per search, so Dijkstra's price grows; BFS's and dense FW's do not look at it
    rates = costs.SHIPPED["cpu"]
    short = _grid(40)
    csr = short.to_csr().copy()
    csr.data = csr.data * 30
    long = Graph.from_sparse(csr)
    assert costs.estimate(long, "dijkstra", "cpu", rates=rates) > 1.5 * costs.estimate(
        short, "dijkstra", "cpu", rates=rates)
    for method in ("fw", "bfs"):
        assert costs.estimate(long, method, "cpu", dtype="int32", rates=rates) == costs.estimate(
            short, method, "cpu", dtype="int32", rates=rates)
    # and a call's fixed cost, whatever the graph's size
    tiny = _random(20, 40)
    assert costs.estimate(tiny, "dijkstra", "cpu", rates=rates) >= rates.search_call_seconds


def test_one_plan_asks_for_the_gpu_and_the_ram_once(monkeypatch):
    import apsp.gpu
    import apsp.plan as plan
    import apsp.sizes as sizes

    calls = {"gpu": 0, "ram": 0}
    device_status, memory_allowed = apsp.gpu.device_status, sizes.memory_allowed

    def gpu():
        calls["gpu"] += 1
        return device_status()

    def ram():
        calls["ram"] += 1
        return memory_allowed()

    monkeypatch.setattr(apsp.gpu, "device_status", gpu)
    monkeypatch.setattr(plan, "memory_allowed", ram)
    monkeypatch.setattr(sizes, "RAM_READ_FROM", 0)  # every attempt's needs large enough to read the RAM
    g = _random(300, 3000)  # weights 1..100 on 300 vertices: int16 first, int32 after it
    p = plan.make_plan(g)
    assert len(p.steps) == 2 and calls == {"gpu": 1, "ram": 1}


def test_a_tiny_graphs_plan_reads_no_ram_and_keeps_a_budget(monkeypatch):
    """Below `apsp.sizes.RAM_READ_FROM` needed, the graph's build and the plan read neither /proc
    nor the cgroup files (more than a tiny graph's solve); a budget given still refuses, and a
    larger graph's plan reads the RAM once."""
    import apsp.plan as plan
    import apsp.sizes as sizes
    from apsp.errors import MemoryPlanError

    reads = []
    monkeypatch.setattr(sizes, "host_available", lambda: reads.append(1) or 1 << 40)
    tiny = _random(77, 300)
    p = plan.make_plan(tiny)
    assert reads == [] and all(s.opts.memory.host_bytes < sizes.RAM_READ_FROM for s in p.steps)
    refused = plan.make_plan(tiny, method="fw", host_memory="1KB").steps[0].refusal
    assert isinstance(refused, MemoryPlanError) and "host_memory" in str(refused)
    with sizes.memory_limit("1KB"):  # the budget the CLI sets: kept below the size read too
        assert isinstance(plan.make_plan(tiny, method="fw").steps[0].refusal, MemoryPlanError)
    big = _random(3000, 6000)
    plan.make_plan(big, method="fw", backend="cpu")
    assert reads == [1]


def test_the_calibration_cache_is_parsed_again_only_when_it_changes(tmp_path, monkeypatch):
    monkeypatch.delenv("APSP_RATES", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(costs, "cpu_oversubscribed", lambda: False)
    parsed = []
    real = costs.load_calibrations
    monkeypatch.setattr(costs, "load_calibrations", lambda path=None: parsed.append(path) or real(path))
    mine = costs.Rates(name="here", fw_cpu=1.234e9, source="test")
    for _ in range(5):
        assert costs.rates_for(None) == costs.SHIPPED["cpu"]
    assert len(parsed) <= 1  # no file: read at most once
    costs.save_calibration(mine, costs.machine_key(None))
    for _ in range(5):
        assert costs.rates_for(None) == mine
    assert len(parsed) <= 3  # the save's own read, and one for the changed file


def test_an_ordering_is_built_to_price_nd_fw_only_when_its_own_cost_leaves_room():
    import dataclasses

    g = _grid(60)  # planar: nd-fw plausible on its work alone
    rates = costs.SHIPPED["cpu"]
    others = costs.estimate(g, "nd-fw", "cpu", rates=rates)  # a rival as fast as nd-fw's proxy
    assert costs.nd_plausible(g, "cpu", others, rates)
    # the same graph where building the ordering alone would take longer than the rival
    slow = dataclasses.replace(rates, order_seconds_per_edge=others / g.nnz)
    assert costs.ordering_seconds(g, "cpu", slow) >= others
    assert not costs.nd_plausible(g, "cpu", others, slow)
    # each level of bisection reads the edges again; a graph of one leaf is not bisected
    big = _grid(80)
    assert costs.ordering_seconds(big, "cpu", rates) / big.nnz > costs.ordering_seconds(g, "cpu", rates) / g.nnz
    assert costs.ordering_seconds(_grid(10), "cpu", rates) == 0.0


@pytest.mark.parametrize("weights", [np.zeros((0, 0), dtype=np.int32), np.zeros((0, 0))])
def test_a_graph_without_vertices_is_priced_and_solved_by_the_automatic_choice(weights, tmp_path):
    from apsp.cli import main

    r = apsp.shortest_paths(weights)
    assert r.distances.shape == (0, 0)
    assert all(np.isfinite(s) for s in costs.estimates(apsp.as_graph(weights)).values())
    np.save(tmp_path / "empty.npy", weights)
    assert main([str(tmp_path / "empty.npy"), str(tmp_path / "out.npy")]) == 0
    assert np.load(tmp_path / "out.npy").shape == (0, 0)


def test_nd_fw_on_the_gpu_over_one_leaf_is_priced_as_dense_fw_in_fewer_launches(monkeypatch):
    import sys
    import types

    from apsp.dissection import DEFAULTS
    from apsp.graph import EdgeList

    # torch counted as loaded: its import is not part of either price
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or types.ModuleType("torch"))
    rng = np.random.default_rng(0)
    n, m = 3000, 20000
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    src, dst = np.minimum(a, b), np.maximum(a, b)  # every edge upwards: no cycle, so negative weights may be
    keep = src != dst
    g = Graph.from_edges(EdgeList(n, src[keep], dst[keep], rng.integers(-5, 100, int(keep.sum()))))
    assert g.n <= DEFAULTS["gpu"][1] and g.has_negative_weights  # one leaf, int32
    rates = costs.SHIPPED["H100"]
    nd, fw = costs.estimate(g, "nd-fw", "gpu", rates=rates), costs.estimate(g, "fw", "gpu", rates=rates)
    assert nd == pytest.approx(costs.ND_ONE_LEAF_GPU * (fw - costs._gpu_fixed(g, "fw", n * n * 4, rates))
                               + costs._gpu_fixed(g, "nd-fw", n * n * 4, rates))
    assert costs.fastest(g, "gpu", rates=rates)[0] == ("nd-fw", "gpu")


def test_a_light_load_is_not_oversubscribed_without_reading_this_process_cpu(monkeypatch):
    monkeypatch.setattr(costs.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(costs.os, "getloadavg", lambda: (1.2, 1.0, 1.0))
    monkeypatch.setattr(costs, "_own_cpu", [])
    monkeypatch.setattr(costs.time, "process_time", lambda: pytest.fail("read this process's CPU seconds"))
    assert not costs.cpu_oversubscribed()
