"""The contract between the public layer and the backends, and the registry of solvers.

A solver is a function ``solve(graph: Graph, opts: SolveOptions) -> SolveOutput``
living beside its kernels (``apsp/cpu/...``, ``apsp/gpu/...``). It may assume the
graph is validated and ``opts.dtype`` holds every distance. It returns distances
with unreachable pairs as ``dtypes.unreachable_value(dtype)`` and raises
``NegativeCycleError`` when the graph has a negative cycle.

Solvers are named ``"module:function"`` and imported only when chosen, so
``import apsp`` never imports numba, torch, triton or mpi4py.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import BackendUnavailableError


@dataclass
class SolveOptions:
    #: distance dtype; None only for BFS, which then picks it from the diameter
    dtype: np.dtype | None
    #: blocking factor for Floyd-Warshall; None = the backend's best
    block_size: int | None = None
    #: also return a predecessor matrix (scipy convention: int32, -9999 for none)
    predecessors: bool = False
    #: also return a successor (next-hop) matrix (int32, -9999 for none)
    successors: bool = False
    #: only these source rows (int array); None = all n (searches only: Dijkstra, Johnson, BFS)
    sources: np.ndarray | None = None
    #: show a progress bar: True, False, or None = only on a terminal
    progress: bool | None = None
    #: backend-specific knobs (e.g. "variant" for the GPU ladder, "device")
    extra: dict = field(default_factory=dict)


@dataclass
class SolveOutput:
    dist: np.ndarray
    predecessors: np.ndarray | None = None
    successors: np.ndarray | None = None
    block_size: int | None = None
    #: seconds spent per stage, e.g. {"h2d": .., "compute": .., "d2h": ..}
    timings: dict = field(default_factory=dict)
    #: anything worth reporting (device name, kernel variant, ...)
    info: dict = field(default_factory=dict)


#: (method, backend) -> "module:function"
REGISTRY: dict[tuple[str, str], str] = {
    ("reference", "cpu"): "apsp.cpu.reference:solve",
    ("fw", "cpu"): "apsp.cpu.blocked:solve",
    ("fw", "gpu"): "apsp.gpu.fw:solve",
    ("bfs", "cpu"): "apsp.cpu.bfs:solve",
    ("bfs", "gpu"): "apsp.gpu.bfs:solve",
    ("dijkstra", "cpu"): "apsp.cpu.sparse:solve_dijkstra",
    ("johnson", "cpu"): "apsp.cpu.sparse:solve_johnson",
    ("nd-fw", "cpu"): "apsp.cpu.ndfw:solve",
    ("nd-fw", "gpu"): "apsp.gpu.ndfw:solve",
}

METHODS = ("auto", "fw", "nd-fw", "bfs", "dijkstra", "johnson", "reference")
BACKENDS = ("auto", "cpu", "gpu")


def get_solver(method: str, backend: str) -> Callable:
    try:
        target = REGISTRY[(method, backend)]
    except KeyError:
        available = sorted(b for (m, b) in REGISTRY if m == method)
        raise BackendUnavailableError(
            f"method {method!r} has no {backend!r} backend (available: {', '.join(available) or 'none'})"
        ) from None
    module_name, func = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = " (install the GPU extra: pip install 'apsp[gpu]')" if backend == "gpu" else ""
        raise BackendUnavailableError(f"backend {backend!r} cannot load: {exc}{hint}") from exc
    return getattr(module, func)


def gpu_available(real_device: bool = False) -> tuple[bool, str]:
    """Whether the GPU backend can run here, and why not.

    With ``real_device`` the Triton interpreter (``TRITON_INTERPRET=1``, CPU
    tensors) does not count: automatic choice never picks it, only an explicit
    ``backend="gpu"`` does.
    """
    try:
        from .gpu import device_status
    except ImportError as exc:  # torch/triton missing
        return False, f"{exc}; install with pip install 'apsp[gpu]'"
    ok, why = device_status()
    if ok and real_device and "interpreter" in why:
        return False, "only the Triton interpreter is available (no CUDA device)"
    return ok, why
