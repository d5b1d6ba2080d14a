"""One plan per call: every decision of a solve, made once, with its reasons.

`make_plan` turns a validated `Graph` and the caller's options into a frozen `Plan`: the
method, the backend, the GPU runtime, the dtype attempts (narrowest first, each with its memory
route: in core, streamed, or the refusal to raise when it is reached), the block, and why. The
engines receive a step's `SolveOptions` and never probe devices or consult the planner;
`apsp.api.run_plan` executes the steps. ``-v`` prints `Plan.why`, ``--json`` carries
`Plan.summary`.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import dtypes
from .costs import estimated_seconds, worth_searching
from .errors import BackendUnavailableError, MemoryPlanError
from .graph import Graph
from .solvers import BACKENDS, DEFAULT_BLOCK, METHODS, SolveOptions

#: decisions are logged here at INFO level
log = logging.getLogger("apsp.api")  # the public layer's log: decisions are what users ask it about

#: the automatic rule's thresholds (see `choose_method`)
GPU_MIN_VERTICES = 256
SPARSE_EDGES_PER_VERTEX = 2
#: nested-dissection FW is considered from this many vertices, up to this many edges per vertex
#: (denser graphs have separators too large for it to win; the ordering is not even computed)
ND_MIN_VERTICES = 1000
ND_MAX_EDGES_PER_VERTEX = 16
#: measured on the 2-core machine (benchmarks/queries.py): one Dijkstra costs about this many
#: Floyd-Warshall updates per (edge + vertex) * log2(n)
SEARCH_COST = 60.0
#: a GPU solve's fixed cost in CPU update-equivalents (about 50 ms of CPU work: launches, copies)
GPU_FIXED_COST = 1e8


@dataclass(frozen=True)
class Step:
    """One dtype attempt: the registered solver to run and the options it runs with.

    ``memory`` is the attempt's memory plan (`apsp.planner.MemoryPlan`), or ``refusal`` the
    `MemoryPlanError` raised when the attempt is reached (a narrower attempt may still fit).
    """

    method: str
    solver: str
    opts: SolveOptions
    checked: bool = False
    cast_to: np.dtype | None = None
    refusal: MemoryPlanError | None = None

    @property
    def dtype(self) -> np.dtype | None:
        return self.opts.dtype

    @property
    def memory(self):
        return self.opts.memory


@dataclass(frozen=True)
class Plan:
    """Every decision of one solve (module docstring)."""

    method: str
    backend: str
    steps: tuple[Step, ...]
    #: what the caller asked for: method, backend, dtype ("auto" / None where unsaid)
    requested: tuple[str, str, Any]
    #: "torch" or "driver" for in-core GPU Floyd-Warshall, else None
    runtime: str | None = None
    #: the source rows asked for (indices), and whether one search each computes them
    sources: np.ndarray | None = None
    rows_by_search: bool = False
    #: the block of Floyd-Warshall's rounds (None: other methods, or the stream's own choice)
    block: int | None = None
    #: dtypes not tried, and why (`apsp.dtypes.skip_bound_to_fail`)
    skipped: tuple[str, ...] = ()
    #: why nd-fw gave way to dense FW (it did not fit), else None
    fallback: str | None = None
    #: the estimates compared by the automatic choice: "method/backend" -> seconds
    estimates: dict = field(default_factory=dict)
    #: why the method and backend were chosen
    reasons: dict = field(default_factory=dict)
    #: the graph's worst-case distance bound and whether its weights are whole numbers (the dtype's why)
    distance_bound: int | float = 0
    integral: bool = True

    def why(self, info: dict) -> str:
        """Why this method, backend and dtype ran, in a few words (``-v``); ``info`` is the run's."""
        parts = [f"method {self.method} ({self.reasons['method']})", f"backend {self.backend} ({self.reasons['backend']})"]
        if self.runtime:
            parts.append(f"GPU runtime {self.runtime}")
        if self.sources is not None:
            parts.append(f"{len(self.sources)} source rows "
                         f"({'one search each' if self.rows_by_search else 'rows of the full solve'})")
        parts.append(self._why_dtype(info))
        parts += [f"not tried: {why}" for why in self.skipped]
        if self.estimates:
            parts.append("estimates " + ", ".join(f"{k} {v:.3g} s" for k, v in self.estimates.items()))
        return "; ".join(parts)

    def _why_dtype(self, info: dict) -> str:
        dtype = self.requested[2]
        tried, check = info.get("dtype_tried", []), info.get("dtype_check")
        reason = check and dtypes.explain_check(tried, check, self.distance_bound)
        if check == "verified":
            return f"dtype {tried[-1]} ({'as asked for, ' if dtype is not None else 'the narrowest, '}{reason})"
        if check == "cast":
            return f"dtype as asked for ({reason})"
        if dtype is not None:
            return "dtype as asked for"
        if self.method == "bfs":
            return "dtype the narrowest that holds the hop counts"
        return (f"dtype {tried[-1]}, the smallest that {reason}" if tried and self.integral
                else "dtype float64 (fractional weights)")

    def summary(self) -> dict:
        """The plan as JSON values (``--json``, `Result.info["plan"]`)."""
        return {"method": self.method, "backend": self.backend, "runtime": self.runtime,
                "block": self.block, "dtypes": [None if s.dtype is None else s.dtype.name for s in self.steps],
                "checked": [s.checked for s in self.steps],
                "memory": [None if s.memory is None else s.memory.summary() for s in self.steps],
                "reasons": dict(self.reasons), "estimates": dict(self.estimates),
                "skipped": list(self.skipped), "fallback": self.fallback}


# ----------------------------------------------------------------------------- method and backend
def gpu_available(explicit: bool = False) -> tuple[bool, str]:
    """Whether the GPU backend may run here, and why not: the one rule for "is there a GPU".

    A CUDA device always counts. The Triton interpreter (``TRITON_INTERPRET=1``,
    kernels on CPU tensors) counts only when the GPU backend was asked for
    (``explicit``: ``backend="gpu"``); automatic choices never pick it, so the
    automatic method and backend rules are the same under test as for users.
    """
    try:
        from .gpu import device_status
    except ImportError as exc:  # torch/triton missing
        return False, f"{exc}; install with pip install 'apsp[gpu]'"
    ok, why = device_status()
    if ok and not explicit and "interpreter" in why:
        return False, "only the Triton interpreter is available (no CUDA device)"
    return ok, why


def _nd_usable(g: Graph) -> bool:
    return ND_MIN_VERTICES <= g.n and g.nnz <= ND_MAX_EDGES_PER_VERTEX * g.n


def _gpu_chosen(backend: str, n: int) -> bool:
    return backend == "gpu" or (backend == "auto" and n >= GPU_MIN_VERTICES and gpu_available()[0])


def choose_backend(backend: str, method: str, n: int) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "gpu":
        ok, why = gpu_available(explicit=True)
        if not ok:
            raise BackendUnavailableError(f"the GPU backend cannot run here: {why}")
        return backend
    if backend == "auto" and method in ("fw", "nd-fw", "bfs") and _gpu_chosen(backend, n):
        return "gpu"
    return "cpu"


def choose_method(g: Graph, method: str, backend: str = "auto", rows: bool = False,
                  estimates: dict | None = None) -> str:
    """The documented automatic choice (see README, "Choosing a method").

    * every weight 1: multi-source BFS (bit-parallel), on the CPU or the GPU;
    * other weights, on the GPU (``backend="gpu"``, or ``"auto"`` with a CUDA
      GPU and n >= 256): Floyd-Warshall, since Dijkstra/Johnson run on the CPU only;
    * other weights on the CPU: Dijkstra (Johnson when some weight is negative)
      when the graph is very sparse, at most 2 edges per vertex on average;
      otherwise blocked Floyd-Warshall;
    * then, from 1000 vertices and up to 16 edges per vertex,
      nested-dissection Floyd-Warshall (``"nd-fw"``) replaces that pick when
      its estimated time is lower (`apsp.costs.estimated_seconds`: its updates
      counted from the graph's ordering against n^3 for dense FW and
      n (m + n) log2 n for Dijkstra); not for ``rows`` (some source rows asked
      for: `method_for_sources` weighs searches against dense FW, and the
      ordering, a whole-graph dissection, is never computed for them).

    ``estimates``, when given, receives the estimates compared ("method/backend" -> seconds).
    "A GPU" follows `gpu_available`: the Triton interpreter never counts for "auto".
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if method != "auto":
        return method
    if g.unit_weights:
        return "bfs"
    where = "gpu" if _gpu_chosen(backend, g.n) else "cpu"
    pick = "fw"
    if where == "cpu" and g.nnz <= SPARSE_EDGES_PER_VERTEX * g.n:
        pick = "johnson" if g.has_negative_weights else "dijkstra"
    if not rows and _nd_usable(g):
        seconds = {m: estimated_seconds(g, m, where) for m in ("nd-fw", pick)}
        if estimates is not None:
            estimates.update({f"{m}/{where}": s for m, s in seconds.items()})
        if seconds["nd-fw"] < seconds[pick]:
            pick = "nd-fw"
    return pick


def few_sources_for_bfs(g: Graph, k: int) -> bool:
    """k breadth-first searches beat one bit-parallel BFS of all n (64 sources a sweep)?"""
    return 16 * k <= g.n


def method_for_sources(g: Graph, chosen: str, requested: str, backend: str, k: int) -> str:
    """The method for ``k`` sources: searches when k of them cost less than the full solve.

    An explicit method stays. Under "auto", k Dijkstra searches cost about
    ``SEARCH_COST * k * (m + n) * log2(n)`` against ``n^3`` for Floyd-Warshall
    (on a GPU, about 1000x fewer, plus `GPU_FIXED_COST` for the launches of
    its n/B rounds and the copies, which no small solve avoids); unit weights
    compare k BFS with the bit-parallel all-pairs BFS.
    """
    if requested != "auto" or chosen in ("dijkstra", "johnson", "bfs") or g.n < 2:
        return chosen
    n = float(g.n)
    searches = SEARCH_COST * k * (g.nnz + n) * np.log2(n)
    full = n ** 3 / 1000.0 + GPU_FIXED_COST if _gpu_chosen(backend, g.n) else n ** 3
    if searches < full:
        return "johnson" if g.has_negative_weights else "dijkstra"
    return chosen


def _method_reason(g: Graph, chosen: str, method: str, src) -> str:
    if method != "auto":
        return "asked for"
    if g.unit_weights:
        return "every edge weight is 1"
    if chosen in ("dijkstra", "johnson") and src is not None:
        return f"{len(src)} searches cost less than the full solve"
    if chosen in ("dijkstra", "johnson"):
        return (f"sparse: {g.nnz} edges for {g.n} vertices"
                + ("; negative weights need Johnson" if chosen == "johnson" else ""))
    if chosen == "nd-fw":
        return "nested dissection is estimated fastest"
    return f"{g.nnz} edges for {g.n} vertices: dense enough for Floyd-Warshall"


def gpu_runtime(opts: SolveOptions) -> str:
    """In-core GPU FW's runtime: "driver", the CUDA driver without torch (`apsp.gpu.rounds.DriverRuntime`;
    ``import torch`` alone costs 3-5 s of a short command), for a distances-only blocked solve on
    device 0 while torch is not imported; else "torch". ``APSP_GPU_RUNTIME=torch|driver`` forces one."""
    forced = os.environ.get("APSP_GPU_RUNTIME", "")
    if forced in ("torch", "driver"):
        return forced
    from .gpu import torch_free

    plain = (opts.variant == "blocked" and not (opts.successors or opts.predecessors)
             and opts.device in (None, 0, "cuda", "cuda:0"))
    return "driver" if plain and torch_free() else "torch"


# ----------------------------------------------------------------------------- dtypes
def _attempts(g: Graph, chosen: str, where: str, dtype, src, rows_by_search: bool, options: dict):
    """The dtype attempts, narrowest first, and the narrow ones skipped (with why)."""
    skipped: list[str] = []
    if chosen == "bfs" and rows_by_search:
        # one breadth-first search per source writes straight into the dtype: narrowest for n - 1 hops
        dt = (dtypes.as_dtype(dtype, dtypes.SUPPORTED + dtypes.HOP_ONLY) if dtype is not None
              else np.dtype(np.uint8 if g.n < 255 else np.uint16 if g.n < 65535 else np.int32))
        return [dtypes.Attempt(dt)], skipped
    if chosen == "bfs":
        # hop counts: BFS picks the narrowest type that holds the diameter it finds,
        # and checks a user's dtype against it (DtypeError if a distance does not fit)
        dt = None if dtype is None else dtypes.as_dtype(dtype, dtypes.SUPPORTED + dtypes.HOP_ONLY)
        return [dtypes.Attempt(dt)], skipped
    if chosen in ("fw", "nd-fw"):
        # Floyd-Warshall's kernels, dense or in nested-dissection order, saturate at INF
        # (apsp.dtypes): narrowest first (int16: half the memory traffic, twice the GPU's min-plus
        # rate), verified after the solve when only the data can show that it fits
        attempts = _resumable(g.dtype_attempts(dtype), options)
        if any(a.checked for a in attempts[:-1]) and worth_searching(g, chosen, where):
            # a few searches find a distance that rules a narrow dtype out before its solve
            attempts, skipped = dtypes.skip_bound_to_fail(attempts, g.longest_distance_found(),
                                                          g.max_abs_weight)
    else:
        # the searches and the oracle compute in their output dtype without saturating: the
        # worst-case bound decides (a requested narrower dtype is a checked cast of the result)
        attempts = g.dtype_attempts(dtype, saturating=False)
    for attempt in attempts:
        dtypes.check_float_range(attempt.dtype, dtypes.largest_float_sum(
            g.n, g.max_abs_weight, chosen, g.has_negative_weights))
    return attempts, skipped


def _resumable(attempts: list, options: dict) -> list:
    """Resuming a checkpoint: start the dtype plan at the dtype the checkpoint was saved in."""
    path = options.get("checkpoint")
    if not (path and options.get("resume") and len(attempts) > 1 and Path(path).is_file()):
        return attempts
    from .checkpoint import read_header

    try:
        saved = np.dtype(read_header(path)["dtype"])
    except Exception:  # noqa: BLE001 - the solver's own checks name what is wrong with the file
        return attempts
    names = [a.dtype for a in attempts]
    return attempts[names.index(saved):] if saved in names else attempts


# ----------------------------------------------------------------------------- the plan
def make_plan(g: Graph, method: str = "auto", backend: str = "auto", dtype=None, *,
              block_size: int | None = None, predecessors: bool = False, successors: bool = False,
              progress: bool | None = None, sources: np.ndarray | None = None, **options: Any) -> Plan:
    """The plan of `apsp.shortest_paths` for ``g`` (arguments as there; ``sources`` as indices).

    Raises what the call would raise before solving: unknown method or backend, a method the
    graph or backend cannot run, a dtype that cannot hold the distances, a missing checkpoint
    to resume.

    Examples
    --------
    >>> import numpy as np
    >>> from apsp.graph import Graph
    >>> g = Graph.from_dense(np.random.default_rng(0).integers(1, 100, (300, 300)))
    >>> p = make_plan(g, method="fw", backend="cpu")
    >>> p.method, p.backend, p.block, [(s.dtype.name, s.checked, s.solver) for s in p.steps]
    ('fw', 'cpu', 256, [('int16', True, 'fw'), ('int32', False, 'fw')])
    """
    from .planner import plan_memory

    estimates: dict = {}
    chosen = choose_method(g, method, backend, rows=sources is not None, estimates=estimates)
    if sources is not None:
        chosen = method_for_sources(g, chosen, method, backend, len(sources))
    if chosen == "bfs" and not g.unit_weights:
        raise ValueError("method='bfs' needs unit weights: pass unweighted=True or choose another method")
    if chosen in ("dijkstra", "johnson") and backend == "gpu":
        raise BackendUnavailableError(f"method {chosen!r} runs on the CPU only; use method='fw' on the GPU")
    where = choose_backend(backend, chosen, g.n)  # GPU: starts CUDA (and imports torch if loaded)
    # a few sources: one search each, on the CPU (the GPU runs BFS for all sources at once)
    rows_by_search = sources is not None and (chosen in ("dijkstra", "johnson") or (
        chosen == "bfs" and backend != "gpu" and few_sources_for_bfs(g, len(sources))))
    if rows_by_search:
        where = "cpu"
    attempts, skipped = _attempts(g, chosen, where, dtype, sources, rows_by_search, options)
    checkpoint = options.get("checkpoint")
    if options.get("resume") and checkpoint and not Path(checkpoint).exists():
        from .checkpoint import CheckpointError

        raise CheckpointError(f"checkpoint {checkpoint} does not exist, so there is nothing to resume; "
                              "drop resume=True (--resume) to start a solve that saves to it")
    if checkpoint and chosen != "fw":
        raise ValueError(f"checkpoints are available for method 'fw' only, not {chosen!r}")
    steps, fallback, runtime = [], None, None
    for attempt in attempts:
        band = dtypes.cutoff_band(attempt.dtype, g.max_abs_weight) if attempt.checked else None
        opts = SolveOptions(dtype=attempt.dtype, block_size=block_size, predecessors=predecessors,
                            successors=successors, progress=progress,
                            sources=sources if rows_by_search else None, cutoff_band=band, **options)
        step_method, refusal = ("fw" if fallback else chosen), None
        try:
            memory = plan_memory(g, step_method, where, opts, cast_to=attempt.cast_to)
        except MemoryPlanError as exc:
            memory, refusal = None, exc
            if method == "auto" and step_method == "nd-fw":
                # the automatic choice refuses only where no route fits: dense FW can stream
                fallback = fallback or f"nd-fw does not fit: {str(exc).split('. Ways out')[0]}"
                step_method = "fw"
                try:
                    memory, refusal = plan_memory(g, step_method, where, opts, cast_to=attempt.cast_to), None
                except MemoryPlanError as again:
                    refusal = again
        if step_method == "fw" and where == "gpu" and memory is not None and not memory.out_of_core:
            runtime = runtime or gpu_runtime(opts)
            opts = _replace(opts, runtime=runtime)
        solver = (f"{step_method}-out-of-core" if memory is not None and memory.out_of_core
                  else "bfs-rows" if chosen == "bfs" and rows_by_search else step_method)
        steps.append(Step(step_method, solver, _replace(opts, memory=memory), attempt.checked,
                          attempt.cast_to, refusal))
        log.info("n=%d edges=%d: method %s (asked %s), backend %s (asked %s), dtype %s%s, memory plan %s",
                 g.n, g.nnz, step_method, method, where, backend,
                 "by diameter" if attempt.dtype is None else attempt.dtype.name,
                 " (to be verified)" if attempt.checked else "",
                 refusal if memory is None else memory.summary())
    first = steps[0].method
    reasons = {"method": (fallback + "; dense Floyd-Warshall can stream the matrix") if fallback and
               first == "fw" else _method_reason(g, first, method, sources),
               "backend": "asked for" if backend != "auto" else (
                   "the searches run on the CPU" if rows_by_search else f"the usable one for {first}")}
    block = block_size if block_size is not None else (
        DEFAULT_BLOCK[where] if first == "fw" and not (steps[0].memory and steps[0].memory.out_of_core) else None)
    return Plan(method=first, backend=where, steps=tuple(steps), requested=(method, backend, dtype),
                runtime=runtime, sources=sources, rows_by_search=rows_by_search, block=block,
                skipped=tuple(skipped), fallback=fallback if first == "fw" else None,
                estimates=estimates, reasons=reasons, distance_bound=g.distance_bound(), integral=g.integral)


def _replace(opts: SolveOptions, **changes) -> SolveOptions:
    import dataclasses

    return dataclasses.replace(opts, **changes)
