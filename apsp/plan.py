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
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import costs, exactness, sizes
from .costs import search_bytes
from .cpu.threads import thread_count
from .decisions import MemoryPlan, Plan, StatsPlan, Step
from .engine import DEFAULT_BLOCK, SolveOptions, SolveRequest
from .errors import BackendUnavailableError, MemoryPlanError
from .gpu import MachineFacts, gpu_available  # noqa: F401  (`gpu_available`: the public layer asks the plan)
from .gpu.footprint import GPU_PAD, INTERPRETER_PAD, gpu_padded, nd_aligned, staging_bytes
from .graph import Graph
from .methods import BACKENDS, FUNCTIONS, METHOD, METHODS, STATS_METHODS, TABLE, Method
from .rowsplan import cpu_rows_memory, rows_on_gpu
from .sizes import disk_available, format_size, matrix_bytes, memory_allowed, parse_size

#: decisions are logged here at INFO level
log = logging.getLogger("apsp.api")  # the public layer's log: decisions are what users ask it about

#: the GPU is considered for "auto" from this many vertices (a smaller solve never repays its start)
GPU_MIN_VERTICES = 256


# ----------------------------------------------------------------------------- method and backend
def choose_backend(backend: str, method: str, n: int, usable: bool | None = None,
                   facts: MachineFacts | None = None) -> str:
    """The backend that runs ``method``: the one asked for, else the GPU for the methods it runs
    from `GPU_MIN_VERTICES` vertices where one is ``usable`` (None: ``facts``, the plan's, or
    `apsp.gpu.machine_facts` asked here)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    facts = facts if facts is not None or (usable is not None and backend != "gpu") else _facts()
    if backend == "gpu":
        assert facts is not None
        ok, why = facts.available(explicit=True)
        if not ok:
            raise BackendUnavailableError(f"the GPU backend cannot run here: {why}")
        return backend
    if backend == "auto" and "gpu" in METHOD[method].backends and n >= GPU_MIN_VERTICES and (
            facts.available()[0] if usable is None and facts is not None else usable):
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
    ``machine``: `machine_facts`'s ``(facts, rates)``, when the caller has asked already."""
    facts, rates = machine or machine_facts()
    usable = facts.available()[0]
    gpu = backend == "gpu" or (backend == "auto" and g.n >= GPU_MIN_VERTICES and usable)
    pairs = []
    for m, b in costs.applicable(g, backend, gpu=gpu):  # nd-fw's ordering is of the whole graph
        if not (rows is not None and METHOD[m].rows == "whole") and (methods is None or m in methods):
            pairs.append((m, b))
    table = costs.estimates(g, pairs, rates=rates)
    if rows is not None and g.n:
        for (m, b) in table:
            if b == "cpu" and searches_rows(METHOD[m], g, rows):
                table[(m, b)] *= rows / g.n
    method, where = min(table, key=table.__getitem__)
    if estimates is not None:
        estimates.update({f"{m}/{b}": s for (m, b), s in table.items()})
    return method, where


def _facts(device=None) -> MachineFacts:
    from . import gpu

    return gpu.machine_facts(device)


def machine_facts(device=None) -> tuple[MachineFacts, costs.Rates]:
    """The machine, asked once a plan: `apsp.gpu.machine_facts` (the GPU, whether the automatic
    choice may use it, this process's ``device``), and the rates that price this machine's methods
    (`apsp.costs.rates_for` its GPU: a GPU host's CPU is not a laptop's)."""
    facts = _facts(device)
    usable, name = facts.available()
    return facts, costs.rates_for(name if usable else None)


def few_sources_for_bfs(g: Graph, k: int) -> bool:
    """k breadth-first searches beat one bit-parallel BFS of all n (64 sources a sweep)?"""
    return 16 * k <= g.n


def searches_rows(method: Method, g: Graph, k: int) -> bool:
    """Whether ``method`` computes ``k`` source rows by one search each (`Method.rows`)."""
    return method.rows == "search" or (method.rows == "few" and few_sources_for_bfs(g, k))


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
    torch's import alone costs 3-5 s of a short command), for a distances-only blocked solve on
    device 0 while torch is not imported whose result goes to the host; else "torch" (a GPU array's
    input imports torch: `apsp.gpu.devinput`). ``APSP_GPU_RUNTIME=torch|driver`` forces one."""
    forced = os.environ.get("APSP_GPU_RUNTIME", "")
    if forced in ("torch", "driver"):
        return forced
    from . import gpu

    plain = (opts.request.variant == "blocked" and not (opts.successors or opts.predecessors)
             and opts.device in (None, 0, "cuda", "cuda:0") and opts.request.output != "torch")
    return "driver" if plain and gpu.torch_free() else "torch"


# ----------------------------------------------------------------------------- dtypes
#: the most RAM `Graph.longest_distance_found` may hold, as a share of the narrow attempt's result
SWEEP_SHARE = 1 / 32


def _attempts(g: Graph, chosen: str, where: str, dtype, rows_by_search: bool, request: SolveRequest,
              rates: costs.Rates, integral: bool):
    """The dtype attempts, narrowest first, and the narrow ones skipped (with why); ``integral``:
    integer dtypes may hold the distances (the graph's whole weights, unless a caller's rule says
    otherwise: `make_plan`'s ``integers_below``)."""
    skipped: list[str] = []
    ladder = METHOD[chosen].ladder
    if ladder == "hops" and rows_by_search:
        # one breadth-first search per source writes straight into the dtype: narrowest for n - 1 hops
        dt: np.dtype | None
        dt = (exactness.as_dtype(dtype, exactness.SUPPORTED + exactness.HOP_ONLY) if dtype is not None
              else np.dtype(np.uint8 if g.n < 255 else np.uint16 if g.n < 65535 else np.int32))
        return [exactness.Attempt(dt)], skipped
    if ladder == "hops":
        # hop counts: BFS picks the narrowest type that holds the diameter it finds,
        # and checks a user's dtype against it (DtypeError if a distance does not fit)
        dt = None if dtype is None else exactness.as_dtype(dtype, exactness.SUPPORTED + exactness.HOP_ONLY)
        return [exactness.Attempt(dt)], skipped
    if ladder == "saturating":
        # Floyd-Warshall's kernels, dense or in nested-dissection order, saturate at INF
        # (apsp.exactness): narrowest first (int16: half the memory traffic, twice the GPU's min-plus
        # rate), verified after the solve when only the data can show that it fits
        attempts = exactness.dtype_attempts(g.distance_bound, g.has_negative_weights, integral,
                                            g.max_abs_weight, dtype)
        if request.checkpoint and request.resume:
            attempts = _resumable(attempts, request.checkpoint)
        # the searches run only where what they hold is small next to the solve (the allocator may
        # keep their freed pages until the solve's peak): on sparse graphs, where they pay
        if attempts[0].checked and len(attempts) > 1 and costs.worth_searching(g, chosen, where,
                                                                               attempts[0].dtype, rates) \
                and g.sweep_bytes() <= SWEEP_SHARE * matrix_bytes(g.n, attempts[0].dtype):
            # a few searches find a distance that rules a narrow dtype out before its solve
            attempts, skipped = exactness.skip_bound_to_fail(attempts, g.longest_distance_found(),
                                                          g.max_abs_weight)
    else:
        # the searches and the oracle compute in their output dtype without saturating: the
        # worst-case bound decides (a requested narrower dtype is a checked cast of the result)
        attempts = exactness.dtype_attempts(g.distance_bound, g.has_negative_weights, integral, g.max_abs_weight,
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
              progress: bool | None = None, sources: np.ndarray | None = None,
              integers_below: int | float | None = None, request: SolveRequest | None = None,
              **options: Any) -> Plan:
    """The plan of `apsp.shortest_paths` for ``g`` (arguments as there; ``sources`` as indices).

    ``request``: the keyword options as the public layer validated them (`SolveRequest`); else
    ``progress`` and ``options`` make one.

    ``integers_below``: integer dtypes only where every distance is below it (the scipy drop-in:
    float64 sums are exact to 2**53, and larger ones must round as scipy's do).

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
    request = request or SolveRequest(progress=progress, **options)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    picked = None
    machine = machine_facts(request.device)
    if method == "auto":
        only = None  # a checkpoint, or streaming asked for: the methods that can
        if request.checkpoint or request.out_of_core:
            only = tuple(m.name for m in TABLE if (m.checkpointable or not request.checkpoint) and (
                m.streams_everywhere or not request.out_of_core))
        picked = auto_pick(g, backend, None if sources is None else len(sources), estimates, methods=only,
                           machine=machine)
    chosen = method if picked is None else picked[0]
    record = METHOD[chosen]
    if not (record.weighted or g.unit_weights):
        raise ValueError(f"method={chosen!r} needs unit weights: pass unweighted=True or choose another method")
    if backend == "gpu" and "gpu" not in record.backends:
        raise BackendUnavailableError(f"method {chosen!r} runs on the CPU only; use method='fw' on the GPU")
    where = picked[1] if picked is not None and backend == "auto" else choose_backend(
        backend, chosen, g.n, facts=machine[0])
    # a few sources: one search each, on the CPU (the GPU runs BFS for all sources at once)
    rows_by_search = sources is not None and (record.rows == "search" or (
        backend != "gpu" and searches_rows(record, g, len(sources))))
    if rows_by_search:
        where = "cpu"
    integral = g.integral_for(dtype) and (integers_below is None or g.distance_bound <= integers_below)
    attempts, skipped = _attempts(g, chosen, where, dtype, rows_by_search, request, machine[1], integral)
    if request.checkpoint:
        _check_checkpoint(request.checkpoint, request.resume, record)
    facts = machine[0].measured() if where == "gpu" else machine[0]  # free memory: read once
    steps, fallback, runtime = _steps(g, method, record, where, attempts, rows_by_search, dict(
        block_size=block_size, predecessors=predecessors, successors=successors,
        sources=sources if rows_by_search else None, request=request,
        device=facts.device if where == "gpu" else request.device), facts)
    first = METHOD[steps[0].method]
    fell_back = fallback is not None and first.name != chosen
    reasons = {"method": (f"{fallback}; dense Floyd-Warshall can stream the matrix" if fell_back
                          else _method_reason(first.name, where, method, estimates)),
               "backend": "asked for" if backend != "auto" else (
                   "the searches run on the CPU" if rows_by_search else
                   "with the method" if picked is not None else f"the usable one for {first.name}")}
    return Plan(method=first.name, backend=where, steps=tuple(steps), requested=(method, backend, dtype),
                runtime=runtime, sources=sources, rows_by_search=rows_by_search,
                block=steps[0].opts.block_size, block_note=None if block_size is None or first.blocks else
                f"block {block_size} not used: method {first.name} has no block",
                skipped=tuple(skipped), fallback=fallback if fell_back else None, estimates=estimates,
                reasons=reasons, distance_bound=g.distance_bound, integral=integral, machine=facts)


def _check_checkpoint(checkpoint, resume, record: Method) -> None:
    if resume and checkpoint and not Path(checkpoint).exists():
        from .checkpoint import CheckpointError

        raise CheckpointError(f"checkpoint {checkpoint} does not exist, so there is nothing to resume; "
                              "drop resume=True (--resume) to start a solve that saves to it")
    if checkpoint and not record.checkpointable:
        kept = ", ".join(repr(m.name) for m in TABLE if m.checkpointable)
        raise ValueError(f"checkpoints are available for method {kept} only, not {record.name!r}")


def _steps(g: Graph, method: str, record: Method, where: str, attempts: list, rows_by_search: bool,
           asked: dict, facts: MachineFacts) -> tuple[list[Step], str | None, str | None]:
    """One `Step` per dtype attempt: its memory route (or refusal), solver and options with the
    block its engine runs with; and why nd-fw gave way (its fallback), the GPU runtime."""
    steps: list[Step] = []
    fallback, runtime = None, None
    host_limit = RamAllowed(asked["request"].host_memory)  # one reading of the RAM for every attempt
    for attempt in attempts:
        band = exactness.cutoff_band(attempt.dtype, g.max_abs_weight) if attempt.checked else None
        opts = SolveOptions(dtype=attempt.dtype, cutoff_band=band, **asked)
        step = METHOD[record.fallback] if fallback and record.fallback else record
        try:
            memory, refusal = plan_memory(g, step.name, where, opts, cast_to=attempt.cast_to,
                                          host_limit=host_limit, facts=facts), None
        except MemoryPlanError as exc:
            memory, refusal = None, exc
            if method == "auto" and step.fallback:
                # the automatic choice refuses only where no route fits: dense FW can stream
                fallback = fallback or f"{step.name} does not fit: {str(exc).split('. Ways out')[0]}"
                step = METHOD[step.fallback]
                try:
                    memory, refusal = plan_memory(g, step.name, where, opts, cast_to=attempt.cast_to,
                                                  host_limit=host_limit, facts=facts), None
                except MemoryPlanError as again:
                    refusal = again
        streamed = memory is not None and memory.out_of_core
        if where == "gpu" and step.ladder == "hops":
            opts = replace(opts, hops=exactness.gpu_hop_dtypes(attempt.dtype))
        if where == "gpu" and step.leaves and memory is not None:
            opts = replace(opts, nd_gpu=costs.nd_gpu_budget(g, opts, facts, memory))
        if step.driver_runtime and where == "gpu" and memory is not None and not streamed:
            runtime = runtime or gpu_runtime(opts)
            opts = replace(opts, runtime=runtime)
        # the block its engine runs with: none for a method without one; else the one asked for, or
        # the method's own here; left to the engine where another rule owns it: a stream's tile plan,
        # a resumed checkpoint's block (`_resumed_block`), the GPU's other variants (the benchmark's)
        block = opts.block_size if step.blocks else None
        if step.blocks and block is None and not streamed and opts.request.variant == "blocked":
            block = step.blocks.get(where)
            if opts.request.resume and opts.request.checkpoint:
                block = _resumed_block(opts.request.checkpoint, block)
        steps.append(Step(step.name, step.keys[2 if streamed else 1 if rows_by_search else 0],
                          replace(opts, block_size=block, memory=memory), attempt.checked, attempt.cast_to,
                          refusal))
        log.info("n=%d edges=%d: method %s (asked %s), backend %s, dtype %s%s, memory plan %s",
                 g.n, g.nnz, step.name, method, where,
                 "by diameter" if attempt.dtype is None else attempt.dtype.name,
                 " (to be verified)" if attempt.checked else "",
                 refusal if memory is None else memory.summary())
    return steps, fallback, runtime


def _resumed_block(path, default: int | None) -> int | None:
    """The block a resumed solve runs with (`apsp.checkpoint.CheckpointSession.block_for`): the
    default where it divides the vertices done, else the saved one; None where neither does (the
    skeleton then names the block to pass)."""
    from .checkpoint import read_header

    try:
        header = read_header(path)
        done, saved = int(header["vertices_done"]), int(header["block"])
    except Exception:  # noqa: BLE001 - the solver's own checks name what is wrong with the file
        return None
    return next((b for b in (default, saved) if b and done % b == 0), None)


# ----------------------------------------------------------------------------- memory

class RamAllowed:
    """The RAM a plan's attempts may take: the budget given (``host_memory``), else the machine's
    (`apsp.sizes.memory_allowed`), read once a plan and only for an attempt that needs
    `apsp.sizes.RAM_READ_FROM` or more (as `apsp.sizes.check_memory`)."""

    def __init__(self, budget=None):
        self.value: int | None = parse_size(budget) if budget is not None else None

    def __call__(self, need: int) -> int:
        if self.value is None:
            if sizes.unread_below(need):
                return sizes.RAM_READ_FROM  # what the attempt may take unread: more than it needs
            self.value = memory_allowed()[0]
        return self.value

#: headroom kept free on the GPU when the budget is "what is free now" (Triton, cuBLAS workspaces)
GPU_HEADROOM = 256 << 20


def incore_needs(n: int, dtype, method: str, backend: str, paths: int = 0,
                 dense_input: bool = False, block: int = 128, interpreted: bool = False,
                 layout: int = 0, checked: bool = False) -> tuple[int, int]:
    """(host bytes, GPU bytes) of the in-core solver's large allocations.

    ``paths`` is how many of successors/predecessors were asked for (int32
    n x n each). Small allocations (the graph's CSR, tiles) are not counted.
    ``layout``: nd-fw's layout size (vertices and the tree nodes' padding);
    ``checked``: the result is checked for cut-off distances.
    """
    host, gpu = FUNCTIONS[METHOD[method].memory](n, np.dtype(dtype), backend, paths, block, interpreted, layout,
                                            checked)
    if backend == "gpu" and dense_input:  # the start matrix goes up in bands through the staging buffers
        host += staging_bytes(matrix_bytes(n, dtype), interpreted)
    return host, gpu


def thread_bytes(method: str, n: int, threads: int, itemsize: int, paths: int = 0, block: int = 256) -> int:
    """Host bytes a CPU solve's ``threads`` workers hold beyond the result.

    Blocked FW in core: each worker of phase 2 copies its panel piece, and a column piece once
    more transposed (`apsp.cpu.blocked._panel_piece`: two ``block x PANEL_BYTES`` arrays, 1 MiB at
    the default block). Bit-parallel BFS: each worker's work arrays (`apsp.cpu.bfs._bfs_batches`:
    three uint64 n-long bit arrays, the n x 64 levels found in the distance dtype, with paths the
    parents and hops, and two int64 frontier lists, of which at most n entries are ever written
    between them: the levels they hold in turn are disjoint). Each worker of blocked FW and nd-fw
    also keeps `apsp.costs.WORKER_BYTES` of its own (stack and allocator pages).
    """
    workers = METHOD[method].workers
    return FUNCTIONS[workers](n, threads, itemsize, paths, block) if workers and n > 0 else 0  # apsp.costs


#: nested dissection's ordering (`apsp.dissection.dissect`: the symmetric pattern, each level's
#: piece, METIS and the separators' matchings), bytes per stored edge and per vertex at most: 212
#: and 66 per edge were measured on random graphs of 10 and 1,000 edges a vertex, 80-90 on grids
#: (2-core box, 2026-11-28)
ORDERING_BYTES_PER_EDGE = 224
ORDERING_BYTES_PER_VERTEX = 64


def ordering_bytes(graph) -> int:
    """RAM nested dissection's ordering of ``graph`` may hold at its largest."""
    return ORDERING_BYTES_PER_EDGE * graph.nnz + ORDERING_BYTES_PER_VERTEX * graph.n


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


def plan_memory(graph, method: str, backend: str, opts: SolveOptions, cast_to=None,
                host_limit: int | RamAllowed | None = None,
                facts: MachineFacts | None = None) -> MemoryPlan:
    """Check that the solve fits, decide in-core or out-of-core, or refuse.

    Reads the planning options of ``opts`` (`apsp.engine.SolveOptions`):
    ``gpu_memory`` (GPU budget; default the card's free memory),
    ``host_memory`` (RAM budget; default what the OS reports available),
    ``out_of_core`` (None = stream through the GPU only when the matrix does
    not fit its budget; True = always stream; False = never), ``scratch_dir``
    (where a host matrix too big for RAM is kept; default the system
    temporary directory), ``block_size`` / ``ooc_rows`` (stream tile sizes).
    ``cast_to``: the dtype the result is cast to after the solve (`apsp.exactness.cast_checked`),
    whose copy is held beside it. ``host_limit``: the RAM allowed, when the caller has read it, or
    the caller's `RamAllowed` (default: a new one, which reads the RAM only from
    `apsp.sizes.RAM_READ_FROM` needed).
    ``facts``: the plan's `apsp.gpu.MachineFacts` (default: asked here, for ``opts.device``).

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
    >>> opts = SolveOptions(dtype=np.dtype(np.int32), request=SolveRequest(host_memory="1MB"))
    >>> plan_memory(g, "fw", "cpu", opts)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    apsp.errors.MemoryPlanError: the fw solver on the cpu needs ... MiB of RAM for n=1000 with int32 distances, but 977 KiB are allowed (host_memory). Ways out: dtype int16 needs ... MiB; out_of_core=True (--out-of-core) streams ...
    """
    n = graph.n
    dt = np.dtype(opts.dtype if opts.dtype is not None else np.uint8)  # BFS picks its own, narrowest first
    paths = int(bool(opts.successors)) + int(bool(opts.predecessors))
    if backend == "gpu" and facts is None:
        facts = _facts(opts.device)
    interpreted = backend == "gpu" and facts is not None and facts.interpreted
    scratch = str(opts.request.scratch_dir) if opts.request.scratch_dir else tempfile.gettempdir()
    force = opts.request.out_of_core
    block = opts.block_size or DEFAULT_BLOCK["gpu"]
    layout, nd = 0, None
    record = METHOD[method]
    ordering = ordering_bytes(graph) if record.leaves and not graph.derived.dissections else 0
    ordered = bool(record.leaves) and backend == "gpu"  # its device matrix is its ordering's layout
    if ordered:
        from .dissection import dissection_for

        nd, block = dissection_for(graph, opts, backend)  # the solver reuses it
        layout = nd.size
    host, gpu = incore_needs(n, dt, method, backend, paths, graph.dense is not None, block, interpreted,
                             layout, opts.cutoff_band is not None)
    if backend == "gpu" and method == "fw" and opts.request.output == "torch":
        host -= matrix_bytes(n, dt) + paths * matrix_bytes(n, np.int32)  # the result stays on the device
    if opts.sources is not None:  # searches write k rows only
        k = len(opts.sources)
        host = k * n * (dt.itemsize + 4 * paths) + search_bytes(
            n, graph.nnz, dt.itemsize, method, workers=min(k, 4 * thread_count()))
    if backend == "cpu" and n > 0 and not force:  # out of core the stream's own buffers count
        host += thread_bytes(method, n, thread_count(), dt.itemsize, paths,
                             opts.block_size or DEFAULT_BLOCK["cpu"])
    # what the call holds beside the solve's own arrays: nd-fw's ordering when it is made here
    # (the allocator may keep its freed pages), a dense input's edge mask where numpy makes one
    # (`Graph.edge_mask`; the kernels that read the dtypes of `apsp.dense` make none) and the pages
    # of the threads that read it by rows (counted as a worker's each)
    dense = 0
    if graph.dense is not None:
        dense = (matrix_bytes(n, np.bool_) if graph.holds_edge_mask else 0) + thread_count() * costs.WORKER_BYTES
    host += ordering + dense
    if cast_to is not None and not opts.request.out_of_core:  # the cast result beside the solved one
        rows = n if opts.sources is None else len(opts.sources)
        host += rows * n * np.dtype(cast_to).itemsize
    if not isinstance(host_limit, int):
        host_limit = (host_limit or RamAllowed(opts.request.host_memory))(host + (gpu if interpreted else 0))
    gpu_limit = 0
    if backend == "gpu":
        if opts.request.gpu_memory is not None:
            gpu_limit = parse_size(opts.request.gpu_memory)
        elif interpreted:
            gpu_limit = host_limit
        else:
            assert facts is not None  # asked above for every GPU plan
            facts = facts.measured()
            gpu_limit = max(0, (facts.free or 0) - GPU_HEADROOM)
    plan = MemoryPlan(method=method, backend=backend, n=n, dtype=dt, host_bytes=host, gpu_bytes=gpu,
                      host_limit=host_limit, gpu_limit=gpu_limit, scratch_dir=scratch,
                      padded=gpu_padded(n, interpreted) if backend == "gpu" and record.driver_runtime else None)
    if ordered and backend in record.streamed and n > 0 and not paths and (
            force or (force is None and gpu > gpu_limit)):
        return _plan_nd_stream(plan, nd, interpreted)
    streamable = backend in record.streamed and not ordered  # the matrix in stripes
    if force and not streamable:
        raise ValueError("out-of-core solving is available for method 'fw', and 'nd-fw' on the GPU "
                         f"(distances only), not {method!r} on the {backend}")
    if force and paths:
        raise ValueError("out-of-core solving computes distances only; drop return_predecessors/"
                         "return_successors (or solve in core)")
    wants_stream = n > 0 and (bool(force) or (
        force is None and backend == "gpu" and streamable and not paths and gpu > gpu_limit))
    if wants_stream:
        return _plan_stream(plan, graph, opts, bool(force), interpreted)
    _check_incore(plan, graph, streamable and not paths, force, interpreted)
    return plan


def _plan_nd_stream(plan: MemoryPlan, nd, interpreted: bool) -> MemoryPlan:
    """nd-fw with its layout matrix in RAM, streamed through the GPU (`apsp.gpu.ndfw.HostEngine`):
    RAM for the layout matrix, which becomes the result in place where it is n x n (tree nodes
    unpadded), else for it and the result; on the GPU the round's column panel and the panels of
    the widest separator, the rest for node buffers and stripes."""
    dt = plan.dtype
    size = nd_aligned(nd.size, interpreted)
    widest = int((nd.end - nd.own_start).max(initial=1))
    host = matrix_bytes(plan.n, dt) if nd.size == plan.n else matrix_bytes(nd.size, dt) + matrix_bytes(plan.n, dt)
    plan = replace(plan, host_bytes=host,
                   gpu_bytes=(nd.tile + 2 * widest) * size * dt.itemsize, out_of_core=True)
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
    return plan


def _plan_stream(plan: MemoryPlan, graph, opts: SolveOptions, forced: bool, interpreted: bool) -> MemoryPlan:
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
                         block=opts.block_size, rows=opts.request.ooc_rows,
                         where="GPU" if gpu else "RAM")
    plan = replace(plan, out_of_core=True, matrix_on_disk=on_disk, stream=stream,
                   gpu_bytes=stream.device_bytes if gpu else 0,
                   host_bytes=(0 if on_disk else m) + (stream.device_bytes if not gpu else stream.staging_bytes))
    if on_disk:
        free = disk_available(plan.scratch_dir)
        if m > free:
            raise MemoryPlanError(
                f"the out-of-core matrix file (n={n}, {dt.name}) needs {format_size(m)} in "
                f"{plan.scratch_dir}, but only {format_size(free)} are free there; give another "
                f"directory with scratch_dir= (--scratch-dir DIR), or a smaller dtype")
    return plan


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
    if not METHOD[plan.method].streams_everywhere:
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


# ----------------------------------------------------------------------------- the other routes
#: vertices from which bidirectional Dijkstra pays for building the reversed edges (random
#: graphs with 5n edges, per query: 0.06 vs 0.05 ms at n = 1000, 0.09 vs 0.16 ms at 3000,
#: 2.1 vs 7.5 ms at 100,000)
BIDIRECTIONAL_MIN_N = 2000


def choose_search(g: Graph, dtype) -> tuple[str, str]:
    """(search, reason) of a single-pair query (`apsp.shortest_path_between`) on ``g`` with
    distances in ``dtype``: a search of `apsp.methods.SEARCHES`."""
    if g.unit_weights:
        return "bfs", "every edge weight is 1"
    if g.has_negative_weights:
        return "bellman-ford", "some edge weight is negative"
    if np.dtype(dtype).kind in "iu" and g.n >= BIDIRECTIONAL_MIN_N:
        return "bidirectional-dijkstra", (f"edge weights are non-negative and n >= "
                                          f"{BIDIRECTIONAL_MIN_N:,}: a search from each end settles "
                                          "fewer vertices than the reversed edges cost")
    return "dijkstra", "edge weights are non-negative"


def choose_stats_method(graph: Graph, method: str = "auto") -> tuple[str, str]:
    """The search that produces the statistics' rows, and why: ``(method, reason)``: the one asked
    for, else the first search of `apsp.methods.STATS_METHODS` that takes the graph's weights.

    Every weight 1: breadth-first search (bit-parallel, 64 sources a sweep, unless few sources
    are asked for); non-negative weights: Dijkstra; some negative weight: Johnson (one
    Bellman-Ford, then Dijkstra on reweighted edges; a negative cycle raises `NegativeCycleError`).
    """
    if method not in STATS_METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(STATS_METHODS)}")
    unit, negative = graph.unit_weights, graph.has_negative_weights
    if method != "auto":
        record = METHOD[method]
        if not record.takes(unit, False):
            raise ValueError(f"method {method!r} counts hops: every weight must be 1 (unweighted=True, "
                             "--unweighted, ignores the weights)")
        if not record.takes(unit, negative):
            raise ValueError(f"method {method!r} needs non-negative weights; use method='johnson'")
        return method, f"method {method!r} requested"
    record = next(METHOD[m] for m in STATS_METHODS[1:] if METHOD[m].takes(unit, negative))
    return record.name, record.why


def make_stats_plan(g: Graph, method: str = "auto", backend: str = "auto", dtype=None, *,
                    sources: int, histogram: bool = False, host_memory=None, gpu_memory=None,
                    device=None) -> StatsPlan:
    """The plan of `apsp.distance_stats` on ``g`` for ``sources`` source rows (arguments as there).

    The search (`choose_stats_method`); its dtype (hop counts in int64, else the narrowest exact
    one); where it runs (the GPU runs the bit-parallel BFS without the histogram, and for
    non-negative weights under "auto" nd-fw in core when it is estimated faster than Dijkstra
    here and fits the card: `_weighted_on_gpu`; nd-rows there, `_rows_on_gpu`, where it is
    estimated faster than those and the CPU's rows, or asked for with backend "gpu"); the working
    set (`plan_stats_memory`, `apsp.rowsplan.cpu_rows_memory` and `gpu_rows_memory`). The machine
    is asked once (``device``: this process's GPU, default `apsp.gpu.rank_device`'s), unless the
    backend is "cpu".
    """
    chosen, reason = choose_stats_method(g, method)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be 'auto', 'cpu' or 'gpu', not {backend!r}")
    facts = None if backend == "cpu" else _facts(device)
    record = METHOD[chosen]
    if record.ladder == "hops":
        if dtype is not None:
            raise ValueError("dtype applies to weighted searches; hop counts are integers")
        dt = np.dtype(np.int64)
    else:
        dt = exactness.choose_dtype(g.distance_bound, g.has_negative_weights, g.integral_for(dtype), dtype)
    if histogram and dt.kind == "f":
        raise ValueError("histogram=True needs integer distances; these weights are fractional")
    batched = record.rows == "few" and not few_sources_for_bfs(g, sources)
    rows_note = ""
    if facts is not None and method in ("auto", _ROWS.name) and chosen in ("dijkstra", _ROWS.name):
        rows_memory, rows_note, facts = _rows_on_gpu(g, dt, sources, method, backend, histogram, host_memory,
                                                     gpu_memory, facts)
        if rows_memory is not None:
            return StatsPlan(_ROWS.name, rows_note, "gpu", dt, False, rows_memory, facts.measured())
    if facts is not None and method == "auto" and "gpu" not in record.backends and not g.has_negative_weights \
            and _weighted_on_gpu(g, dt, backend, histogram, gpu_memory, chosen, facts):
        where, chosen, reason = "gpu", _STATS_ON_GPU.name, _STATS_ON_GPU.why
    else:
        where = _stats_backend(backend, record, batched or backend == "gpu", histogram, facts)
    memory = None
    if where == "cpu" and (chosen == _ROWS.name or (method == "auto" and chosen == "dijkstra")):
        memory, why = _rows_by_dissection(g, dt, sources, histogram, host_memory, forced=chosen == _ROWS.name)
        if memory is not None:
            chosen, reason = _ROWS.name, why
        else:
            reason = f"{reason} ({why})"
    if memory is None:
        memory = plan_stats_memory(g, dt, batched or where == "gpu", histogram, host_memory)
    if rows_note:
        reason = f"{reason}; the nested dissection's rows on the GPU: {rows_note}"
    if where == "gpu":
        assert facts is not None
        facts = facts.measured()
    return StatsPlan(chosen, reason, where, dt, batched, memory, facts)


#: weighted statistics from the nested dissection's rows (`apsp.supernodal`), reduced block by block
_ROWS = METHOD["nd-rows"]
#: the row solve's proxy estimate may be this many times Dijkstra's before its ordering is built to
#: count its work (the proxy's error on grids and k-NN graphs)
ROWS_PROXY_SPREAD = 2.0
#: the automatic choice weighs the dissection's rows from this many vertices (below, Dijkstra's
#: searches take milliseconds, less than the row solve's first compile)
ROWS_MIN_N = 2000


def _rows_by_dissection(g: Graph, dt: np.dtype, sources: int, histogram: bool, host_memory,
                        forced: bool) -> tuple[dict | None, str]:
    """The working set of the row solve's statistics and why it is chosen, or ``(None, why not)``:
    weighted non-negative statistics where the graph's separators are small and the cost model
    prices the ordering, the elimination and every source's row below Dijkstra's searches
    (``forced``: asked for by name, only the memory plan decides)."""
    from .dissection import plan as dissect

    if not forced:
        if g.n < ROWS_MIN_N:
            return None, f"fewer than {ROWS_MIN_N} vertices: the searches take milliseconds"
        if not costs.nd_rows_plausible(g):
            return None, "no small separators for the nested dissection's rows"
        rates = costs.this_machine()
        searches = costs.estimate(g, "dijkstra", "cpu", dtype=dt, rates=rates, result=False) * sources / max(g.n, 1)
        proxy = costs.nd_rows_stats_seconds(g, sources, dt.itemsize, rates)
        if proxy > ROWS_PROXY_SPREAD * searches:
            return None, f"the nested dissection's rows estimated {proxy:.3g} s against {searches:.3g} s"
    nd = dissect(g, 1, _ROWS.leaves["cpu"], 1)
    if not forced:
        counted = costs.nd_rows_stats_seconds(g, sources, dt.itemsize, rates, ordering=nd)
        if counted >= searches:
            return None, f"the nested dissection's rows estimated {counted:.3g} s against {searches:.3g} s"
    try:
        memory = cpu_rows_memory(g, nd, dt, histogram, host_memory)
    except MemoryPlanError as exc:
        if forced:
            raise
        return None, f"the nested dissection's rows do not fit: {exc}"
    if forced:
        return memory, f"method {_ROWS.name!r} requested"
    return memory, (f"{_ROWS.why}: estimated {counted:.3g} s (ordering built, elimination and "
                    f"{sources} rows) against {searches:.3g} s for Dijkstra's searches")


def _rows_on_gpu(g: Graph, dt: np.dtype, sources: int, method: str, backend: str, histogram: bool, host_memory,
                 gpu_memory, facts: MachineFacts) -> tuple[dict | None, str, MachineFacts]:
    """`apsp.rowsplan.rows_on_gpu` against the routes this call could take instead: Dijkstra's
    searches and the CPU row solve unless the GPU is asked for, nd-fw's in-core statistics where its
    matrix fits the card (method "auto")."""
    if backend == "cpu" or g.has_negative_weights:
        return None, "", facts

    def others(nd, facts: MachineFacts) -> dict[str, float]:
        rates = costs.rates_for(facts.name)
        out = {}
        if backend == "auto":
            out["the CPU's rows"] = costs.nd_rows_stats_seconds(g, sources, dt.itemsize, rates, ordering=nd)
            if method == "auto":
                out["Dijkstra's searches"] = costs.estimate(g, "dijkstra", "cpu", dtype=dt, rates=rates,
                                                            result=False) * sources / max(g.n, 1)
        if method == "auto" and _weighted_on_gpu(g, dt, "gpu", histogram, gpu_memory, "dijkstra", facts):
            out["nd-fw in core"] = costs.estimate(g, _STATS_ON_GPU.name, "gpu", dtype=dt, rates=rates, result=False)
        return out

    return rows_on_gpu(g, dt, sources, method == _ROWS.name, backend == "gpu", histogram, host_memory, gpu_memory,
                       facts, GPU_HEADROOM, others, ROWS_MIN_N, _ROWS.leaves["cpu"])


#: weighted statistics on the GPU: nested-dissection FW in core, its rows reduced on the device
_STATS_ON_GPU = METHOD["nd-fw"]


def _weighted_on_gpu(g: Graph, dt: np.dtype, backend: str, histogram: bool, gpu_memory, search: str,
                     facts: MachineFacts) -> bool:
    """Whether weighted reductions run as nested-dissection FW on the GPU: a usable GPU (asked
    for, or "auto"), no histogram, distances of at most 32 bits, nd-fw cheaper there than
    ``search`` on the CPU, and its matrix in core on the card."""
    from .dissection import dissection_for

    if backend == "cpu" or histogram or dt.itemsize > 4 or g.n == 0 or not facts.available(
            explicit=backend == "gpu")[0]:
        return False
    nd = _STATS_ON_GPU.name
    if backend == "auto" and costs.estimate(g, nd, "gpu", result=False) > costs.estimate(
            g, search, "cpu", result=False):
        return False
    # the device's share of the in-core plan: the reductions copy no matrix to the host
    ordering, tile = dissection_for(g, SolveOptions(dtype=dt), "gpu")
    _, need = incore_needs(g.n, dt, nd, "gpu", block=tile, layout=ordering.size)
    if gpu_memory is not None:
        return need <= parse_size(gpu_memory)
    return need <= (facts.measured().free or 0) - GPU_HEADROOM


def _stats_backend(backend: str, method: Method, bit_parallel: bool, histogram: bool,
                   facts: MachineFacts | None) -> str:
    """"cpu" or "gpu": the GPU runs the bit-parallel BFS, without the histogram (``facts``: the
    call's `apsp.gpu.MachineFacts`, None for backend "cpu")."""
    if backend == "cpu" or facts is None:
        return "cpu"
    on_gpu = "gpu" in method.backends
    if backend == "gpu":
        if not on_gpu:
            raise ValueError("backend='gpu' reduces hop distances (unit weights, by BFS) and non-negative "
                             "weights (method='auto': nd-fw in core or the nested dissection's rows; "
                             "method='nd-rows'); this graph needs "
                             f"{method.name!r} here: use backend='cpu'")
        if histogram:
            raise ValueError("histogram=True runs on the CPU only: use backend='cpu'")
        ok, why = facts.available(explicit=True)
        if not ok:
            raise BackendUnavailableError(f"backend='gpu': {why}")
        return "gpu"
    return "gpu" if on_gpu and bit_parallel and not histogram and facts.available()[0] else "cpu"


def plan_stats_memory(g: Graph, dtype: np.dtype, batched: bool, histogram: bool, host_memory=None) -> dict:
    """The working set of `apsp.distance_stats` (`apsp.costs.stats_bytes`) and the block of search
    rows that fits, or `MemoryPlanError`."""
    from .sizes import host_available

    threads = thread_count()
    limit = parse_size(host_memory) if host_memory is not None else host_available()
    need, block_rows = costs.stats_bytes(g.n, g.nnz, dtype.itemsize, batched, histogram, threads, limit)
    if need > limit:
        raise MemoryPlanError(
            f"distance statistics for n={g.n}, m={g.nnz} need {format_size(need)} of RAM "
            f"({threads} threads), but {format_size(limit)} are allowed (host_memory). "
            f"Ways out: fewer threads (NUMBA_NUM_THREADS), or the distributed solver")
    return {"host_bytes": int(need), "host_limit": int(limit), "threads": threads,
            "block_rows": int(block_rows)}


# ----------------------------------------------------------------------------- distributed runs
#: the method the distributed solver runs: the one whose record has blocks for the distributed engines
DISTRIBUTED = next(m for m in TABLE if "distributed-cpu" in m.blocks)


def distributed_method(method: str) -> str:
    """The method of `apsp.distributed.solve`: blocked FW, asked for or chosen ("auto")."""
    if method not in ("auto", DISTRIBUTED.name):
        raise ValueError(f"the distributed solver runs blocked Floyd-Warshall only, not {method!r}")
    return DISTRIBUTED.name


def distributed_backend(backend: str, verdicts: Callable[[bool], list]) -> tuple[str, tuple[int, str] | None]:
    """The backend every rank uses, and the first rank that cannot run a forced "gpu" with why.
    ``verdicts(forced)``: every rank's ``(usable, why)`` (a collective); "gpu" only if every rank can."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose auto, cpu or gpu")
    if backend == "cpu":
        return "cpu", None
    usable = verdicts(backend == "gpu")
    if all(ok for ok, _ in usable):
        return "gpu", None
    if backend == "gpu":
        rank = next(r for r, (ok, _) in enumerate(usable) if not ok)
        return "gpu", (rank, usable[rank][1])
    return "cpu", None


def distributed_block(block_size: int | None, backend: str) -> int:
    """The block of the distributed engines: the one asked for, else the method's own for them."""
    return block_size or DISTRIBUTED.blocks[f"distributed-{backend}"]
