"""The machine asked once a plan (`apsp.gpu.MachineFacts`), and what the plan decides for the GPU engines."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import apsp
import apsp.gpu
from apsp import costs, engine, exactness, plan
from apsp.graph import Graph

REPO = Path(__file__).resolve().parents[1]


def test_torch_and_device_nodes_only_under_apsp_gpu():
    """torch is imported, and device nodes are looked at, only by `apsp.gpu`."""
    found = []
    for path in (REPO / "apsp").rglob("*.py"):
        if path.parent.name == "gpu" and path.parent.parent.name == "apsp":
            continue
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"import torch|/dev/nvidia", line):
                found.append(f"{path.relative_to(REPO)}:{no}: {line.strip()}")
    assert found == []


@pytest.mark.parametrize("local, count, interpreted, device", [
    (0, 2, False, "cuda:0"), (1, 2, False, "cuda:1"), (3, 2, False, "cuda:1"), (1, 0, True, "cpu"),
    (0, 0, False, None)])
def test_a_rank_runs_on_its_node_rank_s_gpu(monkeypatch, local, count, interpreted, device):
    monkeypatch.setattr(apsp.gpu, "device_status", lambda: (True, apsp.gpu.INTERPRETER) if interpreted
                        else (bool(count), "NVIDIA H200" if count else "torch sees no CUDA device"))
    monkeypatch.setattr(apsp.gpu, "_cuda_device_count", lambda: count)
    for name in apsp.gpu.LOCAL_RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MPI_LOCALRANKID", str(local))  # MPICH's launcher
    facts = apsp.gpu.machine_facts()
    assert (facts.device, facts.count, facts.interpreted) == (device, count, interpreted)
    assert apsp.gpu.rank_device(local, count, interpreted) == device
    assert apsp.gpu.machine_facts("cuda:5").device == "cuda:5"  # asked for: kept
    assert apsp.gpu.machine_facts(1).device == "cuda:1"  # a bare index, as torch reads it


def test_one_interpreter_rule(monkeypatch):
    """Any TRITON_INTERPRET but "" and "0" means the interpreter, for every GPU module alike."""
    pytest.importorskip("torch")
    import torch

    from apsp.gpu import bfs

    if torch.cuda.is_available():
        pytest.skip("a CUDA device answers first")
    monkeypatch.setenv("TRITON_INTERPRET", "true")
    assert apsp.gpu.interpreting() and bfs._device(None).type == "cpu"
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(apsp.BackendUnavailableError):
        bfs._device(None)


def _grid(k: int) -> Graph:
    import scipy.sparse as sp

    n = k * k
    idx = np.arange(n).reshape(k, k)
    rows = np.r_[idx[:, :-1].ravel(), idx[:-1].ravel()]
    cols = np.r_[idx[:, 1:].ravel(), idx[1:].ravel()]
    w = (np.arange(len(rows)) % 7 + 1).astype(np.int64)
    a = sp.coo_matrix((np.r_[w, w], (np.r_[rows, cols], np.r_[cols, rows])), shape=(n, n))
    return Graph.from_sparse(a.tocsr())


def test_the_plan_carries_the_machine_and_the_gpu_engines_budgets(monkeypatch):
    """One device question a plan; its device on every GPU step; nd-fw's gather budget and batch
    model, and GPU BFS's dtypes, decided there (the engines only read them)."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():  # the facts below are the interpreter's; a real card's budget is built below
        pytest.skip("a CUDA device is present: the interpreter is not what the plan finds")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    asked = []
    status = apsp.gpu.device_status
    monkeypatch.setattr(apsp.gpu, "device_status", lambda: asked.append(1) or status())
    g = _grid(12)
    p = plan.make_plan(g, method="nd-fw", backend="gpu", dtype="int32")
    assert len(asked) == 1 and p.machine.interpreted and p.machine.free is not None
    budget = p.steps[0].opts.nd_gpu
    assert p.steps[0].opts.device == p.machine.device == "cpu"
    assert budget == engine.NdGpuBudget(int(costs.ND_GATHER_SHARE * (1 << 62)), costs.ND_LAUNCH_SECONDS,
                                        costs.ND_BATCH_RATE, 16)  # the interpreter's alignment
    # a real card: the share of what the load leaves free
    real = apsp.gpu.MachineFacts(True, "NVIDIA H200", False, 1, "cuda:0", free=64 << 30, total=80 << 30)
    opts = p.steps[0].opts
    from apsp.dissection import dissection_for

    nd, tile = dissection_for(g, opts, "gpu")
    size = -(-nd.size // 256) * 256
    loaded = size * size * 4 + tile * size * 4 + g.nnz * 20
    assert costs.nd_gpu_budget(g, opts, real) == engine.NdGpuBudget(
        int(0.8 * ((64 << 30) - loaded)), 2e-5, 1.2e13, 256)
    p = plan.make_plan(g, method="fw", backend="gpu", dtype="int32")
    assert p.steps[0].opts.memory.padded == 144  # 144 vertices: whole tiles of 16 interpreted
    unit = Graph.from_sparse((g.to_csr() > 0).astype(np.int8).tocsr())
    p = plan.make_plan(unit, method="bfs", backend="gpu")
    assert p.steps[0].opts.hops == exactness.gpu_hop_dtypes(None)
    r = apsp.shortest_paths(unit, method="bfs", backend="gpu")
    assert r.distances.dtype == np.uint8 and r.info["device"] == "cpu"


def test_the_reductions_block_is_the_plan_s(monkeypatch):
    g = _grid(10)
    real = apsp.gpu.MachineFacts(True, "NVIDIA H200", False, 1, "cuda:0", free=2 << 30, total=80 << 30)
    n, m = g.n, g.nnz
    budget = int(0.9 * ((2 << 30) - ((n + 1 + m) * 4 + n + 32 * n)))
    assert costs.reduction_words(g, real) == min((n + 31) // 32, (budget - (1 << 30) - 48 * n) // (12 * n))
    assert costs.reduction_words(g, real, gpu_memory="1100MB") == min(
        (n + 31) // 32, (1100 * 10**6 - (1 << 30) - 48 * n) // (12 * n))
    with pytest.raises(apsp.MemoryPlanError):
        costs.reduction_words(g, real, gpu_memory="100MB")


def test_every_registered_solver_resolves():
    """The registry names its solvers by string: each one imports and is callable."""
    pytest.importorskip("torch")
    for (method, backend) in engine.REGISTRY:
        assert callable(engine.get_solver(method, backend)), (method, backend)
