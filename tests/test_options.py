"""Typed solve options and the automatic method/backend rule (with and without the Triton interpreter)."""
import numpy as np
import pytest

import apsp
from apsp import plan
from apsp.engine import SolveOptions
from apsp.graph import EdgeList, Graph


def test_unknown_keyword_names_the_nearest_valid_one():
    with pytest.raises(TypeError, match="'chekpoint'.*did you mean 'checkpoint'"):
        apsp.shortest_paths([(0, 1, 2)], backend="cpu", chekpoint="x.ckpt")
    with pytest.raises(TypeError, match="did you mean 'gpu_memory'"):
        apsp.shortest_paths([(0, 1, 2)], backend="cpu", gpu_memroy="1GB")
    with pytest.raises(TypeError, match="did you mean 'return_predecessors'"):
        apsp.shortest_paths([(0, 1, 2)], backend="cpu", return_predecesors=True)
    with pytest.raises(TypeError, match="valid options: ") as nothing_close:
        apsp.shortest_paths([(0, 1, 2)], backend="cpu", paths=True)
    listed = str(nothing_close.value).split("valid options: ")[1].split(", ")
    assert len(listed) == len(set(listed)) and "progress" in listed and "return_successors" in listed


def test_options_are_frozen_and_checked_once():
    opts = SolveOptions.build(dtype=np.dtype(np.int32), block_size=8.0, checkpoint_every=0)
    assert opts.block_size == 8 and isinstance(opts.block_size, int)
    with pytest.raises(AttributeError):
        opts.block_size = 4
    for bad in (dict(block_size=0), dict(block_size=2.5), dict(out_of_core="yes"), dict(variant="fast"),
                dict(checkpoint_every=-1), dict(resume=True), dict(ooc_rows=0)):
        with pytest.raises(ValueError):
            SolveOptions.build(dtype=None, **bad)
    with pytest.raises(TypeError):
        SolveOptions.build(dtype=None, on_round=3)


def test_a_plan_hands_every_step_the_one_request_beside_its_decisions():
    from dataclasses import fields

    from apsp.engine import SolveRequest

    decided = {f.name for f in fields(SolveOptions)} - {"request"}
    asked = {f.name for f in fields(SolveRequest)}
    assert decided & asked == {"device"}  # asked for, and decided (the plan's GPU's)
    g = Graph.from_dense(np.random.default_rng(0).integers(1, 2000, (40, 40)))  # int16 unsure: 2 steps
    p = plan.make_plan(g, "fw", "cpu", checkpoint_every=5, progress=False, leaf_size=8)
    assert len(p.steps) == 2 and len({id(s.opts.request) for s in p.steps}) == 1
    request = p.steps[0].opts.request
    assert (request.checkpoint_every, request.progress, request.leaf_size) == (5, False, 8)
    assert [s.opts.dtype.name for s in p.steps] == ["int16", "int32"] and p.steps[0].opts.block_size == p.block
    with pytest.raises(ValueError, match="checkpoint_every"):
        plan.make_plan(g, "fw", "cpu", checkpoint_every=-1)


def test_block_size_is_the_out_of_core_pivot_width(rng):
    edges = [(i, (i + 1) % 7, 1 + i) for i in range(7)]
    r = apsp.shortest_paths(edges, method="fw", backend="cpu", block_size=2, out_of_core=True, progress=False)
    assert r.block_size == 2 and r.info["ooc_block"] == 2
    ref = apsp.shortest_paths(edges, method="reference", backend="cpu", dtype=r.dtype).distances
    np.testing.assert_array_equal(r.distances, ref)


# ----------------------------------------------------------------------------- the automatic rule
REAL_GPU = (True, "NVIDIA H200")
INTERPRETER = (True, "Triton interpreter on the CPU (TRITON_INTERPRET=1)")
NO_GPU = (False, "torch sees no CUDA device")


@pytest.fixture(params=["real", "interpreter", "none"])
def device(request, monkeypatch):
    """What `apsp.gpu.device_status` reports: a CUDA GPU, only the interpreter, or nothing."""
    pytest.importorskip("torch")
    import apsp.gpu

    status = {"real": REAL_GPU, "interpreter": INTERPRETER, "none": NO_GPU}[request.param]
    monkeypatch.setattr(apsp.gpu, "device_status", lambda: status)
    return request.param


def test_no_gpu_driver_answers_without_torch(monkeypatch):
    """A Linux machine without any GPU driver: no GPU, said without importing torch (seconds);
    under the Triton interpreter the question still goes to torch."""
    import apsp.gpu

    monkeypatch.setattr(apsp.gpu.sys, "platform", "linux")
    monkeypatch.setattr(apsp.gpu, "GPU_DEVICE_NODES", ("/nonexistent/nvidiactl",))
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert apsp.gpu.no_gpu_driver()
    ok, why = apsp.gpu.device_status()
    assert not ok and "no GPU driver" in why and "/nonexistent/nvidiactl" in why
    assert apsp.gpu.gpu_available() == (False, why)
    monkeypatch.setattr(apsp.gpu, "GPU_DEVICE_NODES", (__file__,))  # a node that exists
    assert not apsp.gpu.no_gpu_driver()
    monkeypatch.setattr(apsp.gpu.sys, "platform", "darwin")
    monkeypatch.setattr(apsp.gpu, "GPU_DEVICE_NODES", ("/nonexistent/nvidiactl",))
    assert not apsp.gpu.no_gpu_driver()  # elsewhere torch is asked


def test_small_cpu_solve_does_not_import_torch_without_a_driver():
    """The automatic backend on a driverless machine: the solve never imports torch."""
    import subprocess
    import sys

    code = ("import sys, numpy as np, apsp, apsp.gpu\n"
            "r = apsp.shortest_paths(np.ones((300, 300)) - np.eye(300))\n"
            "print(apsp.gpu.no_gpu_driver(), 'torch' in sys.modules, r.backend)")
    env = {k: v for k, v in __import__("os").environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    no_driver, imported, where = out.stdout.split()
    if no_driver == "True":
        assert imported == "False" and where == "cpu"


def _ring(n, m_per_vertex=1, negative=False, unit=False):
    """n vertices, ``m_per_vertex`` out-edges each (to the next vertices on a ring)."""
    src = np.repeat(np.arange(n), m_per_vertex)
    dst = (src + np.tile(np.arange(1, m_per_vertex + 1), n)) % n
    w = np.ones(len(src)) if unit else np.arange(len(src)) % 5 + 2
    if negative:
        w[0] = -1
    return Graph.from_edges(EdgeList(n, src, dst, w))


def test_auto_rule_is_one_rule_for_method_and_backend(device):
    from apsp import costs

    real = device == "real"
    n = plan.GPU_MIN_VERTICES
    graphs = [_ring(n, 2), _ring(n, 3), _ring(n, 2, negative=True), _ring(n, 1, unit=True), _ring(n - 1, 1)]
    for g in graphs:
        # the method and the backend come from one estimate table: the fastest (method, backend)
        # among those that solve g exactly; the GPU is a candidate only for a real device, and only
        # from GPU_MIN_VERTICES vertices (the interpreter never counts for "auto": CI sees what
        # users without a GPU get)
        seen = {}
        method, where = plan.auto_pick(g, estimates=seen)
        gpu_here = real and g.n >= n
        assert {k.split("/")[1] for k in seen} == ({"cpu", "gpu"} if gpu_here else {"cpu"})
        pairs = costs.applicable(g, "auto", gpu=gpu_here)
        assert (method, where) == costs.fastest(g, candidates=pairs)[0]
        assert plan.choose_method(g, "auto") == method
        p = plan.make_plan(g)
        assert (p.method, p.backend) == (method, where)
        assert ("johnson", "cpu") in pairs if g.has_negative_weights else ("dijkstra", "cpu") in pairs
        assert (("bfs", "cpu") in pairs) == g.unit_weights
    # an explicit method keeps its backend rule: the GPU where one is usable, from GPU_MIN_VERTICES
    assert plan.choose_backend("auto", "fw", n) == ("gpu" if real else "cpu")
    assert plan.choose_backend("auto", "fw", n - 1) == "cpu"
    assert plan.choose_backend("auto", "dijkstra", 10 * n) == "cpu"
    # an explicit GPU request: the interpreter serves it, nothing else does; never Dijkstra there
    assert all(b == "gpu" and m != "dijkstra" for m, b in costs.applicable(graphs[0], "gpu"))
    if device == "none":
        with pytest.raises(apsp.BackendUnavailableError):
            plan.choose_backend("gpu", "fw", n)
    else:
        assert plan.choose_backend("gpu", "fw", n) == "gpu"
    assert apsp.gpu.gpu_available()[0] == real
    assert apsp.gpu.gpu_available(explicit=True)[0] == (device != "none")


def test_few_sources_search_even_beside_a_gpu(device):
    # a GPU solve has a fixed cost (launches, copies) that two searches on a small graph never reach
    g = _ring(2 * plan.GPU_MIN_VERTICES, 3)
    assert plan.auto_pick(g, rows=2) == ("dijkstra", "cpu")
    p = plan.make_plan(g, sources=np.array([0, 5]))
    assert (p.method, p.backend, p.rows_by_search, p.steps[0].solver) == ("dijkstra", "cpu", True, "dijkstra")
    # all n sources: searches cost what the full solve of the same method costs, so the pick is the
    # full solve's; a method asked for stays
    seen_rows, seen_full = {}, {}
    whole = ("fw", "dijkstra", "johnson", "bfs")  # nested dissection is never dissected for rows
    assert plan.auto_pick(g, rows=g.n, estimates=seen_rows) == plan.auto_pick(g, estimates=seen_full, methods=whole)
    assert seen_rows == seen_full
    assert plan.make_plan(g, "fw", sources=np.array([0, 5])).method == "fw"


def test_bfs_rows_by_search_run_on_the_cpu_beside_a_gpu(monkeypatch):
    # one breadth-first search per source runs on the CPU even where "auto" has a GPU; the plan says so
    import apsp.gpu

    monkeypatch.setattr(apsp.gpu, "device_status", lambda: (True, "a GPU"))
    g = _ring(4 * plan.GPU_MIN_VERTICES, 1, unit=True)
    p = plan.make_plan(g, sources=np.array([1]))
    assert (p.method, p.backend, p.rows_by_search, p.steps[0].solver) == ("bfs", "cpu", True, "bfs-rows")
    assert "CPU" in p.reasons["backend"]
    r = apsp.shortest_paths(g, sources=[1], dtype="uint16")
    assert r.backend == "cpu" and r.distances[0, 1] == 0 and r.distances[0, 0] == g.n - 1
