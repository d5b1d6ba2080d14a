"""One plan per call: every decision of a solve, made once, with its reasons.

`make_plan` turns a validated `Graph` and the caller's options into a frozen `Plan`: the
method, the backend, the GPU runtime, the dtype attempts (narrowest first, each with its memory
route: in core, streamed, or the refusal to raise when it is reached), the block, and why. The
engines receive a step's `SolveOptions` and never probe devices or consult the planner;
`apsp.api.run_plan` executes the steps. ``-v`` prints `Plan.why`, ``--json`` carries
`Plan.summary`.

Memory is planned before anything proportional to the input is allocated: `plan_memory`
estimates the solver's largest allocations from ``n``, the dtype and the options, compares them
with what is available (or with the budget the user allows: ``gpu_memory=``, ``host_memory=``,
`apsp.sizes.parse_size` strings or bytes), and either returns a `MemoryPlan` saying where the
matrix lives (in core, or streamed through the GPU or RAM from a host matrix in pinned RAM or in a
scratch file: ``out_of_core``), or raises `apsp.errors.MemoryPlanError` naming what does not fit,
how much it needs, and what would fit instead (a smaller dtype, streaming, the distributed solver).
"""
from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import costs, exactness
from .cpu.threads import thread_count
from .engine import BACKENDS, DEFAULT_BLOCK, METHODS, SolveOptions
from .errors import BackendUnavailableError, MemoryPlanError
from .gpu import gpu_available
from .gpu.footprint import GPU_PAD, INTERPRETER_PAD, fw_needs, gpu_padded, nd_aligned, nd_needs
from .graph import Graph
from .sizes import disk_available, format_size, matrix_bytes, memory_allowed, parse_size

if TYPE_CHECKING:
    from .outofcore import StreamPlan

#: decisions are logged here at INFO level
log = logging.getLogger("apsp.api")  # the public layer's log: decisions are what users ask it about

#: the GPU is considered for "auto" from this many vertices (a smaller solve never repays its start)
GPU_MIN_VERTICES = 256


@dataclass(frozen=True)
class Step:
    """One dtype attempt: the registered solver to run and the options it runs with.

    ``opts.memory`` is the attempt's memory plan (`MemoryPlan`), or ``refusal`` the
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
    #: dtypes not tried, and why (`apsp.exactness.skip_bound_to_fail`)
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
            parts.append("estimates " + ", ".join([f"{k} {v:.3g} s" for k, v in self.estimates.items()]))
        return "; ".join(parts)

    def _why_dtype(self, info: dict) -> str:
        dtype = self.requested[2]
        tried, check = info.get("dtype_tried", []), info.get("dtype_check")
        reason = check and exactness.explain_check(tried, check, self.distance_bound)
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
                "memory": [None if s.opts.memory is None else s.opts.memory.summary() for s in self.steps],
                "reasons": dict(self.reasons), "estimates": dict(self.estimates),
                "skipped": list(self.skipped), "fallback": self.fallback}


# ----------------------------------------------------------------------------- method and backend
def choose_backend(backend: str, method: str, n: int, usable: bool | None = None) -> str:
    """The backend that runs ``method``: the one asked for, else the GPU for the methods it runs
    from `GPU_MIN_VERTICES` vertices where one is ``usable`` (None: `gpu_available`)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "gpu":
        ok, why = gpu_available(explicit=True)
        if not ok:
            raise BackendUnavailableError(f"the GPU backend cannot run here: {why}")
        return backend
    if backend == "auto" and method in ("fw", "nd-fw", "bfs") and n >= GPU_MIN_VERTICES and (
            gpu_available()[0] if usable is None else usable):
        return "gpu"
    return "cpu"


def choose_method(g: Graph, method: str, backend: str = "auto", estimates: dict | None = None) -> str:
    """The documented automatic choice (see README, "Choosing a method"): the method of `auto_pick`,
    or ``method`` itself when one was asked for. ``estimates``, when given, receives the estimates
    compared ("method/backend" -> seconds)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if method != "auto":
        return method
    pick, _ = auto_pick(g, backend, None, estimates)
    return pick


def auto_pick(g: Graph, backend: str = "auto", rows: int | None = None, estimates: dict | None = None,
              methods: tuple[str, ...] | None = None, machine: tuple | None = None) -> tuple[str, str]:
    """The ``(method, backend)`` with the smallest estimated time (`apsp.costs.fastest`, at this
    machine's rates) among those that solve ``g`` exactly on ``backend`` ("auto": the CPU, and the
    GPU from `GPU_MIN_VERTICES` vertices where one is usable); ``methods`` limits them (a
    checkpoint: "fw"). nd-fw's ordering is built only where it may win (`apsp.costs.nd_plausible`).

    ``rows``: only that many source rows are asked for. A search method then runs one search per
    row (BFS only while `few_sources_for_bfs`; else its bit-parallel sweep of every source), so
    its price is scaled by rows / n; a full solve keeps its price (its rows are kept), and nested
    dissection is not a candidate (a whole-graph dissection is never computed for some rows).
    ``machine``: `machine_facts`'s ``(GPU usable, its rates)``, when the caller has asked already."""
    usable, rates = machine or machine_facts()
    gpu = backend == "gpu" or (backend == "auto" and g.n >= GPU_MIN_VERTICES and usable)
    pairs = [(m, b) for m, b in costs.applicable(g, backend, gpu=gpu)
             if not (rows is not None and m == "nd-fw") and (methods is None or m in methods)]
    table = costs.estimates(g, pairs, rates=rates)
    if rows is not None and g.n:
        for (m, b) in table:
            if b == "cpu" and (m in ("dijkstra", "johnson") or (m == "bfs" and few_sources_for_bfs(g, rows))):
                table[(m, b)] *= rows / g.n
    method, where = min(table, key=table.__getitem__)
    if estimates is not None:
        estimates.update({f"{m}/{b}": s for (m, b), s in table.items()})
    return method, where


def machine_facts() -> tuple[bool, costs.Rates]:
    """Whether the automatic choice may use a GPU here (`gpu_available`), and the rates that price
    this machine's methods (`apsp.costs.rates_for` its GPU: a GPU host's CPU is not a laptop's)."""
    usable, name = gpu_available()
    return usable, costs.rates_for(name if usable else None)


def few_sources_for_bfs(g: Graph, k: int) -> bool:
    """k breadth-first searches beat one bit-parallel BFS of all n (64 sources a sweep)?"""
    return 16 * k <= g.n


def _method_reason(chosen: str, where: str, method: str, estimates: dict) -> str:
    if method != "auto":
        return "asked for"
    mine = estimates.get(f"{chosen}/{where}")
    if mine is None:
        return "the only candidate"
    others = [(s, k) for k, s in estimates.items() if k != f"{chosen}/{where}"]
    nearest = f"; next {min(others)[1]} {min(others)[0]:.3g} s" if others else ""
    return f"the smallest estimated time, {mine:.3g} s{nearest}"


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
def _attempts(g: Graph, chosen: str, where: str, dtype, rows_by_search: bool, options: dict,
              rates: costs.Rates):
    """The dtype attempts, narrowest first, and the narrow ones skipped (with why)."""
    skipped: list[str] = []
    if chosen == "bfs" and rows_by_search:
        # one breadth-first search per source writes straight into the dtype: narrowest for n - 1 hops
        dt: np.dtype | None
        dt = (exactness.as_dtype(dtype, exactness.SUPPORTED + exactness.HOP_ONLY) if dtype is not None
              else np.dtype(np.uint8 if g.n < 255 else np.uint16 if g.n < 65535 else np.int32))
        return [exactness.Attempt(dt)], skipped
    if chosen == "bfs":
        # hop counts: BFS picks the narrowest type that holds the diameter it finds,
        # and checks a user's dtype against it (DtypeError if a distance does not fit)
        dt = None if dtype is None else exactness.as_dtype(dtype, exactness.SUPPORTED + exactness.HOP_ONLY)
        return [exactness.Attempt(dt)], skipped
    if chosen in ("fw", "nd-fw"):
        # Floyd-Warshall's kernels, dense or in nested-dissection order, saturate at INF
        # (apsp.exactness): narrowest first (int16: half the memory traffic, twice the GPU's min-plus
        # rate), verified after the solve when only the data can show that it fits
        attempts = exactness.dtype_attempts(g.distance_bound, g.has_negative_weights, g.integral,
                                            g.max_abs_weight, dtype)
        if options.get("checkpoint") and options.get("resume"):
            attempts = _resumable(attempts, options["checkpoint"])
        if attempts[0].checked and len(attempts) > 1 and costs.worth_searching(g, chosen, where,
                                                                               attempts[0].dtype, rates):
            # a few searches find a distance that rules a narrow dtype out before its solve
            attempts, skipped = exactness.skip_bound_to_fail(attempts, g.longest_distance_found(),
                                                          g.max_abs_weight)
    else:
        # the searches and the oracle compute in their output dtype without saturating: the
        # worst-case bound decides (a requested narrower dtype is a checked cast of the result)
        attempts = exactness.dtype_attempts(g.distance_bound, g.has_negative_weights, g.integral, g.max_abs_weight,
                                            dtype, saturating=False)
    for attempt in attempts:
        exactness.check_float_range(attempt.dtype, g.n, g.max_abs_weight, chosen, g.has_negative_weights)
    return attempts, skipped


def _resumable(attempts: list, path) -> list:
    """Resuming the checkpoint ``path``: start the dtype plan at the dtype it was saved in."""
    if not (len(attempts) > 1 and Path(path).is_file()):
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
    estimates: dict = {}
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    picked = None
    machine = machine_facts()
    if method == "auto":
        only = ("fw",) if options.get("checkpoint") or options.get("out_of_core") else None
        picked = auto_pick(g, backend, None if sources is None else len(sources), estimates, methods=only,
                           machine=machine)
    chosen = method if picked is None else picked[0]
    if chosen == "bfs" and not g.unit_weights:
        raise ValueError("method='bfs' needs unit weights: pass unweighted=True or choose another method")
    if chosen in ("dijkstra", "johnson") and backend == "gpu":
        raise BackendUnavailableError(f"method {chosen!r} runs on the CPU only; use method='fw' on the GPU")
    if picked is not None and backend == "auto":
        where = picked[1]
    else:
        where = choose_backend(backend, chosen, g.n, machine[0])
    # a few sources: one search each, on the CPU (the GPU runs BFS for all sources at once)
    rows_by_search = sources is not None and (chosen in ("dijkstra", "johnson") or (
        chosen == "bfs" and backend != "gpu" and few_sources_for_bfs(g, len(sources))))
    if rows_by_search:
        where = "cpu"
    attempts, skipped = _attempts(g, chosen, where, dtype, rows_by_search, options, machine[1])
    checkpoint = options.get("checkpoint")
    if options.get("resume") and checkpoint and not Path(checkpoint).exists():
        from .checkpoint import CheckpointError

        raise CheckpointError(f"checkpoint {checkpoint} does not exist, so there is nothing to resume; "
                              "drop resume=True (--resume) to start a solve that saves to it")
    if checkpoint and chosen != "fw":
        raise ValueError(f"checkpoints are available for method 'fw' only, not {chosen!r}")
    steps, fallback, runtime = [], None, None
    budget = options.get("host_memory")  # one reading of the RAM for every attempt
    host_limit = parse_size(budget) if budget is not None else memory_allowed()[0]
    for attempt in attempts:
        band = exactness.cutoff_band(attempt.dtype, g.max_abs_weight) if attempt.checked else None
        opts = SolveOptions(dtype=attempt.dtype, block_size=block_size, predecessors=predecessors,
                            successors=successors, progress=progress,
                            sources=sources if rows_by_search else None, cutoff_band=band, **options)
        step_method, refusal = ("fw" if fallback else chosen), None
        try:
            memory = plan_memory(g, step_method, where, opts, cast_to=attempt.cast_to, host_limit=host_limit)
        except MemoryPlanError as exc:
            memory, refusal = None, exc
            if method == "auto" and step_method == "nd-fw":
                # the automatic choice refuses only where no route fits: dense FW can stream
                fallback = fallback or f"nd-fw does not fit: {str(exc).split('. Ways out')[0]}"
                step_method = "fw"
                try:
                    memory, refusal = plan_memory(g, step_method, where, opts, cast_to=attempt.cast_to,
                                                  host_limit=host_limit), None
                except MemoryPlanError as again:
                    refusal = again
        if step_method == "fw" and where == "gpu" and memory is not None and not memory.out_of_core:
            runtime = runtime or gpu_runtime(opts)
            opts = replace(opts, runtime=runtime)
        solver = (f"{step_method}-out-of-core" if memory is not None and memory.out_of_core
                  else "bfs-rows" if chosen == "bfs" and rows_by_search else step_method)
        steps.append(Step(step_method, solver, replace(opts, memory=memory), attempt.checked,
                          attempt.cast_to, refusal))
        log.info("n=%d edges=%d: method %s (asked %s), backend %s (asked %s), dtype %s%s, memory plan %s",
                 g.n, g.nnz, step_method, method, where, backend,
                 "by diameter" if attempt.dtype is None else attempt.dtype.name,
                 " (to be verified)" if attempt.checked else "",
                 refusal if memory is None else memory.summary())
    first = steps[0].method
    reasons = {"method": (fallback + "; dense Floyd-Warshall can stream the matrix") if fallback and
               first == "fw" else _method_reason(first, where, method, estimates),
               "backend": "asked for" if backend != "auto" else (
                   "the searches run on the CPU" if rows_by_search else
                   "with the method" if picked is not None else f"the usable one for {first}")}
    streamed = steps[0].opts.memory is not None and steps[0].opts.memory.out_of_core
    block = block_size if block_size is not None else (DEFAULT_BLOCK[where] if first == "fw" and not streamed else None)
    return Plan(method=first, backend=where, steps=tuple(steps), requested=(method, backend, dtype),
                runtime=runtime, sources=sources, rows_by_search=rows_by_search, block=block,
                skipped=tuple(skipped), fallback=fallback if first == "fw" else None,
                estimates=estimates, reasons=reasons, distance_bound=g.distance_bound, integral=g.integral)


# ----------------------------------------------------------------------------- memory

#: headroom kept free on the GPU when the budget is "what is free now" (Triton, cuBLAS workspaces)
GPU_HEADROOM = 256 << 20


@dataclass
class MemoryPlan:
    """Where a solve keeps its data and what it needs (bytes)."""

    method: str
    backend: str
    n: int
    dtype: np.dtype
    host_bytes: int
    gpu_bytes: int = 0
    host_limit: int = 0
    gpu_limit: int = 0
    #: the matrix is streamed through the GPU (or RAM) in stripes
    out_of_core: bool = False
    #: the streamed matrix lives in a scratch file (else in RAM)
    matrix_on_disk: bool = False
    scratch_dir: str | None = None
    #: `StreamPlan` when out_of_core
    stream: StreamPlan | None = None

    def summary(self) -> dict:
        out = {"host_bytes": self.host_bytes, "gpu_bytes": self.gpu_bytes, "out_of_core": self.out_of_core}
        if self.out_of_core:
            out["matrix_on_disk"] = self.matrix_on_disk
            if self.stream is not None:  # nd-fw streams node by node, without a stripe plan
                out.update(self.stream.summary())
        return out


def incore_needs(n: int, dtype, method: str, backend: str, paths: int = 0,
                 dense_input: bool = False, block: int = 128, interpreted: bool = False,
                 layout: int = 0, checked: bool = False) -> tuple[int, int]:
    """(host bytes, GPU bytes) of the in-core solver's large allocations.

    ``paths`` is how many of successors/predecessors were asked for (int32
    n x n each). Small allocations (the graph's CSR, tiles) are not counted.
    ``layout``: nd-fw's layout size (vertices and the tree nodes' padding);
    ``checked``: the result is checked for cut-off distances.
    """
    dt = np.dtype(dtype)
    m = matrix_bytes(n, dt)
    m32 = matrix_bytes(n, np.int32)
    host = m + paths * m32
    gpu = 0
    if method == "reference":
        # the oracle's 8-byte work matrix, each step's candidate matrix and its comparison mask;
        # with paths both pointer matrices and their per-step replacements
        host += 2 * matrix_bytes(n, np.float64) + matrix_bytes(n, np.bool_)
        if paths:
            host += (4 - paths) * m32 + matrix_bytes(n, np.bool_)
    elif method in ("fw", "nd-fw") and backend == "cpu":
        host += matrix_bytes(n, np.bool_) if paths else 0  # the reachable mask of path recovery
        host += exactness.row_pass_bytes(n * n)  # the cut-off check's and finalize's row chunks
    if backend == "gpu" and method == "nd-fw":
        gpu = nd_needs(n, dt, paths, block, interpreted, layout or n, checked)
    elif backend == "gpu":
        gpu = fw_needs(n, dt, paths, block, interpreted)
    if backend == "gpu" and dense_input:
        host += m  # the start matrix is built on the host first
    return host, gpu


def search_bytes(n: int, m: int, itemsize: int, method: str, workers: int = 1) -> int:
    """Host bytes of searches on a graph of ``n`` vertices and ``m`` edges beyond the graph itself
    (`apsp.cpu.searches`, `apsp.query`): the kernels' copy of the edges, per worker the labels,
    predecessors and queue of one search, and what ``method`` adds (a reversed copy of the edges
    for "bidirectional-dijkstra" and "bellman-ford", Johnson's potentials). Result rows are not
    counted.

    Examples
    --------
    >>> search_bytes(1000, 5000, 4, "dijkstra") < search_bytes(1000, 5000, 4, "bidirectional-dijkstra")
    True
    """
    edges = (n + 1) * 8 + m * (8 + max(itemsize, 8))  # int32/int64 indices, weights in the dtype
    # one search: labels, predecessors and hops, and the heap, bucket or BFS queue arrays
    one = n * (itemsize + 8) + max(n, m + 1) * 4 + (m + 1) * (itemsize + 8 + 4)
    need = edges + workers * one
    if method in ("bidirectional-dijkstra", "bellman-ford"):
        need += 2 * edges + n * (itemsize + 4) + (m + 1) * (itemsize + 4)  # scipy's transpose, its copy
    if method in ("bellman-ford", "johnson"):
        need += n * (8 + 8 + 8 + 3) + m * 8  # wide labels, predecessors, queue, flags; wide weights
    return need


def _interpreted() -> bool:
    from .gpu import interpreting

    if not interpreting():  # answered without importing torch (the torch-free GPU path needs that)
        return False
    try:
        import torch

        return interpreting() and not torch.cuda.is_available()
    except ImportError:  # pragma: no cover - the GPU backend needs torch anyway
        return False


#: what a CPU worker thread holds beyond the arrays it is given: its stack's and its allocator
#: arena's touched pages (16 workers of blocked FW and of nd-fw rose 4-5 MB beyond their plan on the
#: 16-core H100 host, 2026-11-26; `tests/test_memory_peaks.py`)
WORKER_BYTES = 320 << 10


def thread_bytes(method: str, n: int, threads: int, itemsize: int, paths: int = 0, block: int = 256) -> int:
    """Host bytes a CPU solve's ``threads`` workers hold beyond the result.

    Blocked FW in core: each worker of phase 2 copies its panel piece, and a column piece once
    more transposed (`apsp.cpu.blocked._panel_piece`: two ``block x PANEL_BYTES`` arrays, 1 MiB at
    the default block). Bit-parallel BFS: each worker's work arrays (`apsp.cpu.bfs._bfs_batches`:
    three uint64 n-long bit arrays, the n x 64 levels found in the distance dtype, with paths the
    parents and hops, and two int64 frontier lists, of which at most n entries are ever written
    between them: the levels they hold in turn are disjoint). Each worker of blocked FW and nd-fw
    also keeps `WORKER_BYTES` of its own (stack and allocator pages).
    """
    if method == "fw" and n > 0:
        from .cpu.blocked import PANEL_BYTES, SMALL_N

        if n <= SMALL_N:  # solved whole, on one thread, without the panel copies
            return 0
        cols = max(PANEL_BYTES // itemsize, 1)
        workers = min(threads, 2 * -(-n // cols))
        return workers * (2 * min(block, n) * min(cols, n) * itemsize + WORKER_BYTES)
    if method == "nd-fw" and n > 0:
        return threads * WORKER_BYTES
    if method == "bfs":
        return threads * (3 * 8 * n + 8 * n + 64 * n * max(itemsize, 1) + (2 * 64 * 4 * n if paths else 0))
    return 0


def _smaller_dtypes(graph, dt: np.dtype) -> list:
    """dtypes narrower than ``dt`` that still hold every distance of ``graph``."""
    out = []
    for cand in (np.int16, np.int32, np.float32):
        c = np.dtype(cand)
        if c.itemsize >= dt.itemsize or (c.kind in "iu" and not graph.integral):
            continue
        if exactness.dtype_fits(c, graph.distance_bound, graph.has_negative_weights, graph.integral):
            out.append(c)
    return out


def plan_memory(graph, method: str, backend: str, opts, cast_to=None, host_limit: int | None = None) -> MemoryPlan:
    """Check that the solve fits, decide in-core or out-of-core, or refuse.

    Reads the planning options of ``opts`` (`apsp.engine.SolveOptions`):
    ``gpu_memory`` (GPU budget; default the card's free memory),
    ``host_memory`` (RAM budget; default what the OS reports available),
    ``out_of_core`` (None = stream through the GPU only when the matrix does
    not fit its budget; True = always stream; False = never), ``scratch_dir``
    (where a host matrix too big for RAM is kept; default the system
    temporary directory), ``block_size`` / ``ooc_rows`` (stream tile sizes).
    ``cast_to``: the dtype the result is cast to after the solve (`apsp.exactness.cast_checked`),
    whose copy is held beside it. ``host_limit``: the RAM allowed, when the caller has read it.

    Returns
    -------
    MemoryPlan
        The caller passes it to the out-of-core solver when ``out_of_core``.

    Raises
    ------
    MemoryPlanError
        The solve cannot fit; the message says what it needs and suggests
        what would fit.

    Examples
    --------
    >>> import numpy as np
    >>> from apsp.graph import Graph
    >>> from apsp.engine import SolveOptions
    >>> g = Graph.from_dense(np.ones((1000, 1000)))
    >>> opts = SolveOptions(dtype=np.dtype(np.int32), host_memory="1MB")
    >>> plan_memory(g, "fw", "cpu", opts)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    apsp.errors.MemoryPlanError: the fw solver on the cpu needs ... MiB of RAM for n=1000 with int32 distances, but 977 KiB are allowed (host_memory). Ways out: dtype int16 needs ... MiB; out_of_core=True (--out-of-core) streams ...
    """
    n = graph.n
    dt = np.dtype(opts.dtype if opts.dtype is not None else np.uint8)  # BFS picks its own, narrowest first
    paths = int(bool(opts.successors)) + int(bool(opts.predecessors))
    interpreted = backend == "gpu" and _interpreted()
    if host_limit is None:
        host_limit = parse_size(opts.host_memory) if opts.host_memory is not None else memory_allowed()[0]
    gpu_limit = 0
    if backend == "gpu":
        if opts.gpu_memory is not None:
            gpu_limit = parse_size(opts.gpu_memory)
        elif interpreted:
            gpu_limit = host_limit
        else:
            from .gpu import device_memory

            free, _ = device_memory(opts.device)
            gpu_limit = max(0, free - GPU_HEADROOM)
    scratch = str(opts.scratch_dir) if opts.scratch_dir else tempfile.gettempdir()
    force = opts.out_of_core
    block = opts.block_size or DEFAULT_BLOCK["gpu"]
    layout, nd = 0, None
    if method == "nd-fw" and backend == "gpu":
        from .dissection import dissection_for

        nd, block = dissection_for(graph, opts, backend)  # the solver reuses it
        layout = nd.size
    host, gpu = incore_needs(n, dt, method, backend, paths, graph.dense is not None, block, interpreted,
                             layout, opts.cutoff_band is not None)
    if getattr(opts, "sources", None) is not None:  # searches write k rows only
        k = len(opts.sources)
        host = k * n * (dt.itemsize + 4 * paths) + search_bytes(
            n, graph.nnz, dt.itemsize, method, workers=min(k, 4 * thread_count()))
    if backend == "cpu" and n > 0 and not force:  # out of core the stream's own buffers count
        host += thread_bytes(method, n, thread_count(), dt.itemsize, paths,
                             opts.block_size or DEFAULT_BLOCK["cpu"])
    if cast_to is not None and not opts.out_of_core:  # the cast result beside the solved one
        rows = n if getattr(opts, "sources", None) is None else len(opts.sources)
        host += rows * n * np.dtype(cast_to).itemsize
    plan = MemoryPlan(method=method, backend=backend, n=n, dtype=dt, host_bytes=host, gpu_bytes=gpu,
                      host_limit=host_limit, gpu_limit=gpu_limit, scratch_dir=scratch)
    if method == "nd-fw" and backend == "gpu" and n > 0 and not paths and (force or (force is None and gpu > gpu_limit)):
        _plan_nd_stream(plan, nd, interpreted)
        return plan
    streamable = method == "fw" and backend in ("cpu", "gpu")
    if force and not streamable:
        raise ValueError("out-of-core solving is available for method 'fw', and 'nd-fw' on the GPU "
                         f"(distances only), not {method!r} on the {backend}")
    if force and paths:
        raise ValueError("out-of-core solving computes distances only; drop return_predecessors/"
                         "return_successors (or solve in core)")
    wants_stream = n > 0 and (bool(force) or (
        force is None and backend == "gpu" and streamable and not paths and gpu > gpu_limit))
    if wants_stream:
        _plan_stream(plan, graph, opts, bool(force), interpreted)
    else:
        _check_incore(plan, graph, streamable and not paths, force, interpreted)
    return plan


def _plan_nd_stream(plan: MemoryPlan, nd, interpreted: bool) -> None:
    """nd-fw with its layout matrix in RAM, streamed through the GPU (`apsp.gpu.ndfw.HostEngine`):
    RAM for the layout matrix and the result in vertex order; on the GPU the round's column panel
    and the panels of the widest separator, the rest for node buffers and stripes."""
    dt = plan.dtype
    size = nd_aligned(nd.size, interpreted)
    widest = int((nd.end - nd.own_start).max(initial=1))
    plan.host_bytes = matrix_bytes(size, dt) + matrix_bytes(plan.n, dt)
    plan.gpu_bytes = (nd.tile + 2 * widest) * size * dt.itemsize
    plan.out_of_core = True
    where = f"nd-fw streamed through the GPU (n={plan.n}, {dt.name})"
    if plan.host_bytes > plan.host_limit:
        raise MemoryPlanError(
            f"{where} keeps its matrix and the result in RAM: {format_size(plan.host_bytes)}, but "
            f"{format_size(plan.host_limit)} are allowed (host_memory). Ways out: method='fw' streams "
            f"from a scratch file (out_of_core=True); the distributed solver splits the matrix")
    if plan.gpu_bytes > plan.gpu_limit:
        raise MemoryPlanError(
            f"{where} needs {format_size(plan.gpu_bytes)} of GPU memory for its panels, but "
            f"{format_size(plan.gpu_limit)} are allowed. Ways out: method='fw' with out_of_core=True")


def _plan_stream(plan: MemoryPlan, graph, opts, forced: bool, interpreted: bool) -> None:
    n, dt = plan.n, plan.dtype
    gpu = plan.backend == "gpu"
    align = (INTERPRETER_PAD if interpreted else GPU_PAD) if gpu else 1
    n_host = gpu_padded(n, interpreted) if gpu else n
    m = matrix_bytes(n_host, dt)
    # the host matrix: RAM when it fits (pinned for fast copies), else a scratch file
    on_disk = (not gpu) or m + (m if graph.dense is not None else 0) > plan.host_limit
    if on_disk and gpu and not forced:
        raise MemoryPlanError(
            f"n={n} {dt.name} distances ({format_size(m)}) fit neither the GPU budget "
            f"({format_size(plan.gpu_limit)}) nor the RAM allowed ({format_size(plan.host_limit)}). "
            f"Ways out: {_ways_out(plan, graph)}")
    budget = plan.gpu_limit if gpu else plan.host_limit
    depth = 3 if (gpu and not interpreted) else 1
    from .outofcore import plan_stream

    stream = plan_stream(n_host, n, dt.itemsize, budget, depth=depth, align=align,
                         block=opts.block_size, rows=opts.ooc_rows,
                         where="GPU" if gpu else "RAM")
    plan.out_of_core = True
    plan.matrix_on_disk = on_disk
    plan.stream = stream
    plan.gpu_bytes = stream.device_bytes if gpu else 0
    plan.host_bytes = (0 if on_disk else m) + (stream.device_bytes if not gpu else stream.staging_bytes)
    if on_disk:
        free = disk_available(plan.scratch_dir)
        if m > free:
            raise MemoryPlanError(
                f"the out-of-core matrix file (n={n}, {dt.name}) needs {format_size(m)} in "
                f"{plan.scratch_dir}, but only {format_size(free)} are free there; give another "
                f"directory with scratch_dir= (--scratch-dir DIR), or a smaller dtype")


def _check_incore(plan: MemoryPlan, graph, streamable: bool, force, interpreted: bool) -> None:
    where = f"the {plan.method} solver on the {plan.backend}"
    if plan.host_bytes > plan.host_limit:
        raise MemoryPlanError(
            f"{where} needs {format_size(plan.host_bytes)} of RAM for n={plan.n} with {plan.dtype.name} "
            f"distances, but {format_size(plan.host_limit)} are allowed (host_memory). "
            f"Ways out: {_ways_out(plan, graph, streamable=streamable)}")
    if plan.backend == "gpu" and plan.gpu_bytes > plan.gpu_limit:
        because = "" if force is not False else " (out_of_core=False)"
        raise MemoryPlanError(
            f"{where} needs {format_size(plan.gpu_bytes)} of GPU memory for n={plan.n} with "
            f"{plan.dtype.name} distances, but {format_size(plan.gpu_limit)} are allowed{because}. "
            f"Ways out: {_ways_out(plan, graph, streamable=streamable, gpu=True)}")


def _ways_out(plan: MemoryPlan, graph, streamable: bool = True, gpu: bool = False) -> str:
    ways = []
    for cand in _smaller_dtypes(graph, plan.dtype):
        need = (plan.gpu_bytes * cand.itemsize / plan.dtype.itemsize if gpu else  # the matrices scale
                plan.host_bytes - matrix_bytes(plan.n, plan.dtype) + matrix_bytes(plan.n, cand))
        ways.append(f"dtype {cand.name} needs {format_size(need)}")
        break
    if plan.method != "fw":
        ways.append("method='fw' streams out of core (out_of_core=True)")
    elif streamable:
        m = matrix_bytes(plan.n, plan.dtype)
        free = disk_available(plan.scratch_dir)
        ways.append(f"out_of_core=True (--out-of-core) streams the matrix from a file in "
                    f"{plan.scratch_dir} ({format_size(m)} needed, {format_size(free)} free) through "
                    f"{'the GPU' if plan.backend == 'gpu' else 'RAM'}")
    ways.append("the distributed solver (mpiexec -n P apsp ... --distributed) splits the matrix "
                "across P processes and nodes")
    return "; ".join(ways) + "."
