"""What the suites measure: apsp's (method, backend) solvers and the peers scipy and networkx.

A contestant is named ``METHOD-BACKEND[:VARIANT][@THREADS]`` for apsp solvers
(``fw-cpu``, ``fw-gpu:naive``, ``fw-cpu@1`` = one Numba thread; ``reference``,
``dijkstra`` and ``johnson`` run on the CPU), or ``scipy-fw``, ``scipy-dijkstra``,
``scipy-unweighted``, ``networkx-fw`` for peers.
A contestant that cannot run here reports why (`Contestant.unavailable`) and is
skipped with that reason; nothing is ever substituted for it.

>>> c = contestant("fw-gpu:naive")
>>> (c.method, c.where, c.variant, c.workload)
('fw', 'gpu', 'naive', 'weighted')
>>> contestant("bfs-cpu").workload
'unit'
>>> contestant("fw-cpu@2").threads
2
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, cast

import numpy as np

from .workloads import float_rows

if TYPE_CHECKING:
    from ..choices import Backend, Method

#: every apsp solver and peer, in table order
ALL = ("reference", "fw-cpu", "fw-gpu", "fw-gpu:classic", "fw-gpu:naive", "bfs-cpu", "bfs-gpu",
       "dijkstra", "johnson", "scipy-fw", "scipy-dijkstra", "scipy-unweighted", "networkx-fw")
PEERS = ("scipy-fw", "scipy-dijkstra", "scipy-unweighted", "networkx-fw")
_CPU_ONLY = {"reference", "dijkstra", "johnson"}


@dataclass
class Outcome:
    """One solve: float64 rows for the check, and what the solver reported."""

    rows_of: Callable
    dtype: str
    block: int | None = None
    stages: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    @classmethod
    def of(cls, r, stages: dict) -> "Outcome":
        """The outcome of apsp's `Result` ``r``."""
        return cls(rows_of=float_rows(r.distances, r.unreachable), dtype=r.dtype.name,
                   block=r.block_size, stages=stages, info=dict(r.info))


@dataclass
class Contestant:
    name: str
    method: str
    where: str  # "cpu" or "gpu"
    variant: str | None = None
    peer: bool = False
    #: Numba threads for a CPU solver (None: Numba's default, all cores)
    threads: int | None = None

    @property
    def workload(self) -> str:
        return "unit" if self.method in ("bfs", "unweighted") else "weighted"

    @property
    def on_gpu(self) -> bool:
        return self.where == "gpu"

    def unavailable(self, interpreter_ok: bool = False) -> str | None:
        """None when this contestant can run here, else the reason it cannot.

        Triton's CPU interpreter counts as a GPU only with ``interpreter_ok``.
        """
        if self.peer:
            module = self.name.split("-")[0]  # scipy or networkx
            return f"{module} is not installed" if importlib.util.find_spec(module) is None else None
        from ..engine import get_solver
        from ..errors import BackendUnavailableError
        from ..plan import gpu_available

        if self.on_gpu:
            ok, why = gpu_available(explicit=interpreter_ok)
            if not ok:
                return f"no usable GPU: {why}"
        if self.threads is not None:
            import numba

            most = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # numba sets its config at import
            if self.threads > most:
                return f"{self.threads} threads asked, Numba allows {most} here (set NUMBA_NUM_THREADS)"
        try:
            get_solver(self.method, self.where)
        except BackendUnavailableError as exc:
            return f"solver not available: {exc}"
        except (ImportError, AttributeError) as exc:  # a module present but incomplete
            return f"solver not available: {type(exc).__name__}: {exc}"
        return None

    def prepare(self, graph, dtype=None, block=None) -> Callable[[], Outcome]:
        """Untimed setup; returns the zero-argument call that is timed."""
        if self.peer:
            return _peer_call(self.name, graph)
        from ..api import shortest_paths

        extra: dict[str, Any] = {"variant": self.variant} if self.variant else {}  # shortest_paths' options

        def solve() -> Outcome:
            before = None
            if self.threads is not None:
                import numba

                before = numba.get_num_threads()
                numba.set_num_threads(self.threads)
            try:
                # names `contestant` checked
                r = shortest_paths(graph, method=cast("Method", self.method), backend=cast("Backend", self.where),
                                   dtype=dtype, block_size=block, progress=False, **extra)
            finally:
                if before is not None:
                    numba.set_num_threads(before)
            return Outcome.of(r, dict(r.timings))

        return solve


def contestant(spec: str) -> Contestant:
    """Parse a contestant name (see module docstring)."""
    spec = spec.strip()
    if spec in PEERS:
        return Contestant(name=spec, method=spec.split("-", 1)[1], where="cpu", peer=True)
    rest, _, threads_text = spec.partition("@")
    base, _, variant = rest.partition(":")
    if threads_text and (not threads_text.isdigit() or int(threads_text) < 1):
        raise ValueError(f"{spec!r}: '@' takes a positive number of threads, e.g. fw-cpu@4")
    threads = int(threads_text) if threads_text else None
    method, where = (base, "cpu") if base in _CPU_ONLY else base.rpartition("-")[::2]
    if method in ("fw", "bfs", *_CPU_ONLY) and where in ("cpu", "gpu"):
        if threads is not None and where != "cpu":
            raise ValueError(f"{spec!r}: '@THREADS' applies to CPU solvers only")
        return Contestant(name=spec, method=method, where=where, variant=variant or None, threads=threads)
    raise ValueError(f"unknown backend {spec!r}; choose from {', '.join(ALL)} "
                     "(apsp solvers also take ':VARIANT', e.g. fw-gpu:naive, and CPU ones "
                     "'@THREADS', e.g. fw-cpu@1)")


def _peer_call(name: str, graph) -> Callable[[], Outcome]:
    from scipy.sparse import csgraph

    csr = graph.to_csr().astype(np.float64)
    if name == "networkx-fw":
        import networkx as nx

        nxg = nx.from_scipy_sparse_array(csr, create_using=nx.DiGraph)  # untimed, as apsp's setup
    fn = {
        "scipy-fw": lambda: csgraph.floyd_warshall(csr, directed=True),
        "scipy-dijkstra": lambda: csgraph.dijkstra(csr, directed=True),
        "scipy-unweighted": lambda: csgraph.shortest_path(csr, method="D", directed=True, unweighted=True),
        "networkx-fw": lambda: np.asarray(nx.floyd_warshall_numpy(nxg, nodelist=range(graph.n))),
    }[name]
    return lambda: Outcome(rows_of=float_rows(fn()), dtype="float64")
