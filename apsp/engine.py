"""What a solve is given, what it returns, which solver runs it, and the round skeleton they run under.

**The contract.** A solver is a function ``solve(graph: Graph, opts: SolveOptions) -> SolveOutput``
living beside its kernels (``apsp/cpu/...``, ``apsp/gpu/...``). It may assume the
graph is validated and ``opts.dtype`` holds every distance. It returns distances
with unreachable pairs as ``exactness.unreachable_value(dtype)`` and raises
``NegativeCycleError`` when the graph has a negative cycle. ``opts`` is one step of
the call's `apsp.plan.Plan`: the dtype, the GPU runtime and the memory plan are decided.

Solvers are named ``"module:function"`` and imported only when chosen, so
``import apsp`` never imports numba, torch, triton or mpi4py.

**The skeleton** (`run`, `drive`): every Floyd-Warshall solver (in core on the CPU or the GPU, out of core
through either) is one loop of rounds around an engine. The skeleton owns what
surrounds the rounds, so it is written once:

* the block size, and the checkpoint session (`apsp.checkpoint`): start from
  the graph or resume from a saved state;
* the rounds, with a progress bar, ``on_round`` and checkpoints after each;
* Ctrl-C (the state is saved when checkpointing, then the interrupt goes on);
* the negative-cycle check and the final pass that turns sentinels into
  ``exactness.unreachable_value``.

An engine owns where the matrix lives and how a round runs:

* tile kernels (the tile-engine protocol, `TileEngine`: allocate, copy, close
  a block, min-plus update, synchronise), shared with the out-of-core stream
  and the distributed driver;
* ``rounds(block, start_vertex)``: run the rounds from ``start_vertex``,
  yielding the vertices done after each. This is the engine's fast path: one
  Numba call per round on the CPU, the look-ahead pipeline on the GPU, the
  stripe stream out of core;
* ``n``, ``negative``, ``kind``; ``load(graph)`` / ``write_rows(i0, i1, rows)``
  (resume), ``read_rows(i0, i1)`` (checkpoints), ``negative_diagonal()`` (the
  vertices on a negative cycle) and ``finalize()`` (the result);
* flags: ``early_cycle_check`` (check the diagonal after each round: cheap on
  a host matrix), ``sync_for_progress`` (wait for queued work before moving the
  bar: the GPU's bar shows finished work), ``resumes_anywhere`` (else only at a
  multiple of the block size).

A schedule that is not a sequence of rounds plugs in as an engine whose
``rounds`` runs its own products over the tile kernels: nested-dissection FW
(`apsp.dissection.ScheduleEngine`; DEVELOPING.md, "Solve skeleton and engines").
"""
from __future__ import annotations

import dataclasses
import difflib
import importlib
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Generator, Protocol

import numpy as np

from .errors import BackendUnavailableError
from .methods import METHOD, REGISTRY
from .progress import progress_bar

if TYPE_CHECKING:
    from .exactness import HopDtypes
    from .memory_plans import MemoryPlan

#: Floyd-Warshall's default tile edge per engine (measured; the one table is `apsp.methods.TABLE`)
DEFAULT_BLOCK = METHOD["fw"].blocks

#: GPU FW variants (the benchmark's ladder; ``apsp.gpu.fw``)
GPU_VARIANTS = ("blocked", "classic", "naive")


@dataclass(frozen=True)
class NdGpuBudget:
    """What GPU nested-dissection FW's rounds may hold and how they weigh a batch, decided by the plan
    (`apsp.costs.nd_gpu_budget`) and read by the engine (`apsp.gpu.ndfw.Engine`)."""

    #: device bytes the gathered node buffers (and a level's batch) may take
    gather_bytes: int
    #: the batch model: a kernel launch costs ``launch_seconds``; the extra updates of a batch's
    #: common shape run at ``batch_rate`` per second
    launch_seconds: float
    batch_rate: float
    #: the layout matrix and the node buffers are rounded up to this (`apsp.gpu.footprint.GPU_ALIGN`)
    align: int


def check_block(value, name: str = "block_size") -> int | None:
    """``value`` as a positive int (None stays None); ValueError otherwise.

    Examples
    --------
    >>> check_block(64.0), check_block(None)
    (64, None)
    >>> check_block(0)
    Traceback (most recent call last):
    ...
    ValueError: block_size must be a positive integer, got 0
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)) or int(value) != value \
            or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class SolveRequest:
    """The keyword options of `apsp.shortest_paths`, as the caller asked for them; validated when built.

    The public layer builds one per call; `apsp.plan.make_plan` reads it (budgets, checkpoints,
    streaming asked for) and hands it, unchanged, to every step's `SolveOptions` beside the plan's
    decisions. Engines read their knobs here and never a decision: ``device`` is the one asked for,
    the step's is `SolveOptions.device`.
    """

    #: show a progress bar: True, False, or None = only on a terminal
    progress: bool | None = None
    #: the distances as "numpy" arrays on the host, or as "torch" tensors (left on the GPU where the
    #: solve ran there; `apsp.shortest_paths` resolves None from the input: a GPU array in, "torch")
    output: str | None = None
    # -- checkpoints (`apsp.checkpoint`, method "fw")
    #: checkpoint file; None = no checkpoints
    checkpoint: str | os.PathLike | None = None
    #: continue from ``checkpoint``
    resume: bool = False
    #: seconds between checkpoints (None: `apsp.checkpoint.DEFAULT_EVERY`)
    checkpoint_every: float | None = None
    #: called with the number of vertices done after each FW round
    on_round: Callable[[int], None] | None = None
    # -- memory (`apsp.plan.plan_memory`)
    #: GPU memory budget (bytes or "8GB"); None = the card's free memory
    gpu_memory: int | str | None = None
    #: RAM budget; None = what the OS reports available
    host_memory: int | str | None = None
    #: None: stream through the GPU when the matrix does not fit its budget; True: always; False: never
    out_of_core: bool | None = None
    #: where an out-of-core matrix too big for RAM is memory-mapped (default: the temporary directory)
    scratch_dir: str | os.PathLike | None = None
    #: stripe height of the out-of-core stream; None = the planner's choice
    ooc_rows: int | None = None
    # -- engine knobs
    #: GPU FW variant: "blocked", "classic" (block 32, a cell per thread) or "naive" (a launch per k)
    variant: str = "blocked"
    #: torch device of the GPU backend (default: the current CUDA device)
    device: str | None = None
    #: CPU threads of the out-of-core CPU engine (default: Numba's, `apsp.jit.thread_count`: every core)
    threads: int | None = None
    #: page-lock an out-of-core host matrix in RAM (False: copies go through bounce buffers)
    pin_host: bool = True
    #: CPU BFS: frontier size (as a fraction of n, inverted) at which a level switches to pulling
    push_factor: int | None = None
    #: GPU BFS tile: vertices and 32-bit words per program, and warps
    block_vertices: int | None = None
    block_words: int | None = None
    num_warps: int | None = None
    #: nested-dissection FW: largest leaf of the separator tree (vertices)
    leaf_size: int | None = None

    def __post_init__(self):
        set_ = object.__setattr__.__get__(self)  # frozen: normalise in place once, while building
        for name in ("ooc_rows", "threads", "push_factor", "block_vertices", "block_words", "num_warps",
                     "leaf_size"):
            set_(name, check_block(getattr(self, name), name))
        if self.out_of_core not in (None, True, False):
            raise ValueError(f"out_of_core must be None, True or False, got {self.out_of_core!r}")
        if self.output not in (None, "numpy", "torch"):
            raise ValueError(f"unknown output {self.output!r}; choose one of numpy, torch")
        if self.variant not in GPU_VARIANTS:
            raise ValueError(f"unknown GPU variant {self.variant!r}; choose {', '.join(GPU_VARIANTS)}")
        every = self.checkpoint_every
        if every is not None and (isinstance(every, bool) or not isinstance(every, (int, float))
                                  or not every >= 0):
            raise ValueError(f"checkpoint_every must be a number of seconds >= 0, got {every!r}")
        if self.resume and not self.checkpoint:
            raise ValueError("resume=True needs checkpoint=FILE (the file to resume from)")
        if self.on_round is not None and not callable(self.on_round):
            raise TypeError(f"on_round must be callable, got {type(self.on_round).__name__}")
        if self.checkpoint is not None:
            set_("checkpoint", os.fspath(self.checkpoint))


#: the keyword options of `apsp.shortest_paths` (the fields of `SolveRequest`)
KEYWORD_OPTIONS = tuple(f.name for f in dataclasses.fields(SolveRequest))


@dataclass(frozen=True)
class SolveOptions:
    """One step of a plan, as its solver runs it: the plan's decisions, and the caller's `SolveRequest`.

    The decisions: the dtype, the block, the path matrices and source rows asked for, the cut-off
    band, the device, and the GPU runtime, memory plan, nd-fw budget (`NdGpuBudget`) and BFS hop
    dtypes. Made by `apsp.plan.make_plan` (or, for an engine's own inner solve, by that engine).
    """

    #: distance dtype; None only for BFS, which then picks it from the diameter
    dtype: np.dtype | None
    #: blocking factor for Floyd-Warshall (the pivot panel width out of core); None = the engine's default
    block_size: int | None = None
    #: also return a predecessor matrix (scipy convention: int32, -9999 for none)
    predecessors: bool = False
    #: also return a successor (next-hop) matrix (int32, -9999 for none)
    successors: bool = False
    #: only these source rows (int array); None = all n (searches only: Dijkstra, Johnson, BFS)
    sources: np.ndarray | None = None
    #: ``(lo, hi)`` of `apsp.exactness.cutoff_band` when the result must be checked for cut-off
    #: distances; an engine that can read its result cheaply on its device reports
    #: ``info["cutoff_suspected"]``, else the public layer checks on the host
    cutoff_band: tuple[int, int] | None = None
    #: the torch device the GPU engines run on (`apsp.gpu.MachineFacts.device`); None = the current one
    device: str | None = None
    #: the GPU runtime the plan chose for in-core FW: "torch" or "driver" (the CUDA driver, no torch);
    #: None = torch
    runtime: str | None = None
    #: the plan's `apsp.memory_plans.MemoryPlan` for this attempt (the streamed solvers read their tiles there)
    memory: MemoryPlan | None = None
    #: GPU nd-fw's gather budget and batch model (`NdGpuBudget`), decided by the plan
    nd_gpu: NdGpuBudget | None = None
    #: GPU BFS's hop-count dtypes (`apsp.exactness.HopDtypes`), decided by the plan
    hops: HopDtypes | None = None
    #: what the caller asked for besides (progress, checkpoints, budgets, engine knobs)
    request: SolveRequest = SolveRequest()

    @classmethod
    def build(cls, dtype: np.dtype | None, **fields) -> SolveOptions:
        """Options from one flat set of keywords, each sorted to the decisions or to the request:
        an engine's own inner solve, a test, a benchmark.

        >>> SolveOptions.build(np.dtype(np.int32), block_size=8, progress=False).request.progress
        False
        """
        asked = {k: fields.pop(k) for k in KEYWORD_OPTIONS if k in fields and k != "device"}
        return cls(dtype, **fields, request=SolveRequest(**asked))

    def __post_init__(self):
        object.__setattr__(self, "block_size", check_block(self.block_size, "block_size"))
        if self.runtime not in (None, "torch", "driver"):
            raise ValueError(f"unknown GPU runtime {self.runtime!r}; choose 'torch' or 'driver'")


def check_keywords(options: dict, parameters: tuple = ()) -> None:
    """TypeError for a keyword that is not a `SolveOptions` keyword, naming the nearest valid one
    (of those and ``parameters``).

    Examples
    --------
    >>> check_keywords({"chekpoint": "run.ckpt"})
    Traceback (most recent call last):
    ...
    TypeError: unexpected keyword argument 'chekpoint'; did you mean 'checkpoint'?
    """
    for name in options:
        if name not in KEYWORD_OPTIONS:
            valid = KEYWORD_OPTIONS + tuple(parameters)
            close = difflib.get_close_matches(name, valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; valid options: {', '.join(sorted(set(valid)))}"
            raise TypeError(f"unexpected keyword argument {name!r}{hint}")


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


# the registry, (solver key, backend) -> "module:function", is `apsp.methods.REGISTRY`


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


@dataclass
class Finalized:
    """What every engine's ``finalize`` returns: the distances on the host, the path matrices it
    recovered, and the verdict of its cut-off check (None: it made none)."""

    dist: np.ndarray
    successors: np.ndarray | None = None
    predecessors: np.ndarray | None = None
    cutoff_suspected: bool | None = None


class TileEngine(Protocol):
    """Tile kernels over one kind of memory (numpy arrays, torch tensors). ``c``, ``a``, ``b``
    and ``t`` are 2-D arrays of the engine; every operation may be asynchronous until `sync`."""

    kind: str
    negative: bool

    def empty(self, shape): ...

    def copy(self, dst, src) -> None: ...

    def close_block(self, t) -> None:
        """Floyd-Warshall on the square tile ``t`` in place (phase 1)."""

    def minplus(self, c, a, b) -> None:
        """``c = min(c, a (x) b)`` in place; ``c`` may overlap ``a`` or ``b`` when the other is closed."""

    def sync(self) -> None: ...


class RoundsEngine(Protocol):
    """What the skeleton (`run`, `drive`) drives: where the matrix lives and how a round runs (the
    module docstring). `apsp.cpu.blocked.CPUEngine`, `apsp.gpu.fw.GPUEngine`,
    `apsp.outofcore.StreamSolve` and `apsp.dissection.ScheduleEngine`'s engines have it."""

    n: int
    negative: bool
    kind: str
    #: check the diagonal after each round (cheap on a host matrix)
    early_cycle_check: bool
    #: wait for queued work before moving the bar
    sync_for_progress: bool
    #: resume at any vertex (else at a multiple of the block)
    resumes_anywhere: bool

    def load(self, graph) -> None: ...

    def write_rows(self, i0: int, i1: int, rows: np.ndarray) -> None: ...

    def read_rows(self, i0: int, i1: int) -> np.ndarray: ...

    def rounds(self, block: int, start_vertex: int = 0) -> Generator[int, None, None]:
        """Run the rounds from ``start_vertex``, yielding the vertices done after each."""

    def negative_diagonal(self) -> np.ndarray: ...

    def finalize(self) -> Finalized: ...

    def sync(self) -> None: ...


def run(graph, opts: SolveOptions, engine: RoundsEngine, solver: str, block: int | None = None,
        default_block: int | None = None) -> SolveOutput:
    """Solve ``graph`` with ``engine``: the `SolveOutput` of ``engine.finalize()`` (a `Finalized`),
    the block, ``prepare``, ``compute`` and ``finalize`` seconds, the checkpoint session's info and
    ``info["cutoff_suspected"]`` where the engine checked.

    ``block`` fixes the round width (out of core: the planned pivot panel);
    otherwise ``opts.block_size`` or ``default_block``, or on resume the
    saved one when that is what divides the resume point. ``solver`` names
    the schedule in checkpoints.
    """
    t0 = time.perf_counter()
    requested = block or opts.block_size
    block = requested or default_block
    assert block is not None, "run() needs block, opts.block_size or default_block"
    session = None
    asked = opts.request
    if asked.checkpoint:  # checkpoints only where asked for: their module is not even loaded otherwise
        from .checkpoint import CheckpointSession

        session = CheckpointSession(asked.checkpoint, graph, opts.dtype, solver, block, asked.checkpoint_every,
                                    asked.resume)
    if session is not None and not engine.resumes_anywhere:
        block = session.block_for(requested, block)  # block: default_block unless one was requested
    start = 0
    if session is not None and session.resuming:
        session.restore(engine.write_rows)
        start = session.start_vertex
    else:
        engine.load(graph)
    t1 = time.perf_counter()
    drive(engine, block, start, asked.progress, asked.on_round, session)
    if session is not None:
        session.finish()
    t2 = time.perf_counter()
    bad = engine.negative_diagonal()
    if len(bad):
        from .errors import NegativeCycleError  # here: building it imports scipy

        raise NegativeCycleError("Negative cycle detected", vertices=bad)
    result = engine.finalize()
    info = session.info() if session is not None else {}
    if result.cutoff_suspected is not None:
        info["cutoff_suspected"] = result.cutoff_suspected
    return SolveOutput(dist=result.dist, predecessors=result.predecessors, successors=result.successors,
                       block_size=block, info=info,
                       timings=dict(prepare=t1 - t0, compute=t2 - t1, finalize=time.perf_counter() - t2))


def drive(engine: RoundsEngine, block: int, start_vertex: int = 0, progress=None, on_round=None, session=None) -> None:
    """The rounds of ``engine`` from ``start_vertex``: progress bar, negative-cycle stop,
    checkpoints (``session``), ``on_round(vertices_done)``, Ctrl-C."""
    n = engine.n
    rounds_total = -(-n // block) if n else 0
    label = getattr(engine, "label", "fw")
    with progress_bar(rounds_total, progress, desc=f"apsp {label} {engine.kind} n={n}", unit="round",
                      initial=-(-start_vertex // block)) as bar:
        sync_every = max(1, rounds_total // 100)
        rounds = engine.rounds(block, start_vertex)
        try:
            for vertices_done in rounds:
                rounds_done = -(-vertices_done // block)
                if bar.shown and (rounds_done % sync_every == 0 or rounds_done == rounds_total):
                    if engine.sync_for_progress:
                        engine.sync()
                    bar.set_to(rounds_done)
                if engine.early_cycle_check and engine.negative and len(engine.negative_diagonal()):
                    break  # a negative cycle: the rest of the solve is meaningless
                if session is not None:
                    session.after_round(vertices_done, engine.read_rows, sync=engine.sync)
                if on_round is not None:
                    on_round(vertices_done)
        except KeyboardInterrupt as exc:
            rounds.close()  # the engine finishes what it queued
            if session is not None:
                session.interrupted(engine.read_rows, sync=engine.sync, exc=exc)
            raise
        finally:
            rounds.close()
