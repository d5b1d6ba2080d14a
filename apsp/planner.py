"""The solve planner: how much host, GPU and disk memory a solve needs, checked before allocating.

`plan_memory` runs in `apsp.shortest_paths` after the method, backend and dtype
are chosen. It estimates the solver's largest allocations from ``n``, the
dtype and the options, compares them with what is available (or with the
budget the user allows: ``gpu_memory=``, ``host_memory=``), and either

* returns a `MemoryPlan` saying where the matrix lives: in core, or streamed
  through the GPU (or through RAM) from a host matrix in pinned RAM or in a
  scratch file (``out_of_core``); or
* raises `apsp.errors.MemoryPlanError` naming what does not fit, how much it
  needs, and what would fit instead (a smaller dtype, out-of-core streaming,
  the distributed solver).

Budgets accept `apsp.sizes.parse_size` strings (``"8GB"``, ``"8GiB"``) or bytes.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass

import numpy as np

from . import dtypes
from .errors import MemoryPlanError
from .gpu.footprint import GPU_PAD, INTERPRETER_PAD, fw_needs, gpu_padded, nd_aligned, nd_needs
from .sizes import disk_available, format_size, matrix_bytes, memory_allowed, parse_size

__all__ = ["MemoryPlan", "plan_memory", "incore_needs", "gpu_padded", "StreamPlan", "plan_stream",
           "search_bytes"]

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
    stream: object = None

    def summary(self) -> dict:
        out = {"host_bytes": self.host_bytes, "gpu_bytes": self.gpu_bytes, "out_of_core": self.out_of_core}
        if self.out_of_core:
            out["matrix_on_disk"] = self.matrix_on_disk
            if self.stream is not None:  # nd-fw streams node by node, without a stripe plan
                out.update(self.stream.summary())
        return out


# ----------------------------------------------------------------------------- out-of-core streams
#: widest pivot panel the planner picks: phase 1 closes a B x B block per round
MAX_BLOCK = 8192
#: shortest stripe worth streaming on a GPU (kernel grid, per-copy overhead)
MIN_GPU_ROWS = 256
#: kernels index a buffer with 32-bit offsets
MAX_BUFFER_ELEMENTS = 2 ** 31 - 1


@dataclass
class StreamPlan:
    """Tile sizes of an out-of-core solve.

    ``n`` is the host matrix's side (padded on a GPU), ``n_pivots`` the real
    vertices, ``block`` the pivot panel width B, ``rows`` the stripe height,
    ``buffers`` the number of stripe buffers.
    """

    n: int
    n_pivots: int
    itemsize: int
    block: int
    rows: int
    buffers: int
    budget: int
    where: str = "GPU"

    @property
    def panel_bytes(self) -> int:
        # current and next round's row and column panels, the pivot block and (on a GPU) its
        # transpose; in RAM also phase 2's copy of the panel it updates (the old values it reads)
        in_ram = self.where == "RAM"
        return ((4 + in_ram) * self.block * self.n + (2 - in_ram) * self.block * self.block) * self.itemsize

    @property
    def device_bytes(self) -> int:
        return self.panel_bytes + self.buffers * self.rows * self.n * self.itemsize

    @property
    def staging_bytes(self) -> int:
        """Pinned bounce buffers when the host matrix is not pinned (two in, two out)."""
        return 4 * self.rows * self.n * self.itemsize if self.where == "GPU" else 0

    @property
    def rounds(self) -> int:
        return -(-self.n_pivots // self.block) if self.n_pivots else 0

    @property
    def stripes(self) -> int:
        return -(-self.n // self.rows)

    def describe(self) -> str:
        return (f"{self.rounds} rounds of pivot width {self.block}, {self.stripes} stripes of "
                f"{self.rows} rows, {self.buffers} buffer{'s' if self.buffers > 1 else ''}, "
                f"{format_size(self.device_bytes)} of {format_size(self.budget)} {self.where} budget")

    def summary(self) -> dict:
        return {"ooc_block": self.block, "ooc_rows": self.rows, "ooc_buffers": self.buffers,
                "ooc_rounds": self.rounds, "ooc_stripes": self.stripes, "ooc_device_bytes": self.device_bytes}


def plan_stream(n: int, n_pivots: int, itemsize: int, budget: int, depth: int = 3, align: int = 1,
                block: int | None = None, rows: int | None = None, where: str = "GPU") -> StreamPlan:
    """The widest pivot panel, then the tallest stripes, that fit ``budget`` bytes.

    Phase 3 does ``block`` min-plus updates per element moved, so the planner
    maximises ``block`` (a multiple of ``align``, at most `MAX_BLOCK`) while
    ``depth`` stripe buffers of at least a minimum height still fit; fewer
    buffers are accepted before a narrower panel. ``block`` and ``rows`` may
    be fixed by the caller.

    Examples
    --------
    >>> p = plan_stream(65536, 65536, 4, 8 * 10**9, depth=3, align=128)
    >>> p.block, p.rows, p.buffers, p.device_bytes <= 8 * 10**9
    (4096, 4480, 3, True)
    >>> plan_stream(100, 100, 4, 6000, depth=1, block=2, rows=3, where="RAM").describe()
    '50 rounds of pivot width 2, 34 stripes of 3 rows, 1 buffer, 5.09 KiB of 5.86 KiB RAM budget'
    """
    if n < 1 or n_pivots < 0 or n_pivots > n:
        raise ValueError(f"bad matrix size n={n}, n_pivots={n_pivots}")
    for name, value in (("block_size", block), ("ooc_rows", rows)):
        if value is not None and (int(value) != value or value < 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    top = max(1, min(MAX_BLOCK, n_pivots or 1))
    if block is not None:
        blocks = [min(int(block), max(1, n_pivots))]
    else:  # align * 2**k, widest first, down to min(align, top)
        widths, b = {min(align, top)}, align
        while b <= top:
            widths.add(b)
            b *= 2
        blocks = sorted(widths, reverse=True)
    gpu = where == "GPU" and align > 1
    # first pass: stripes tall enough to keep a GPU busy; second: any that fit
    for strict in (True, False):
        for b in blocks:
            panels = StreamPlan(n, n_pivots, itemsize, b, 1, 0, budget, where).panel_bytes
            if b * n > MAX_BUFFER_ELEMENTS or panels >= budget:
                continue
            for buffers in range(max(1, depth), 0, -1):
                if rows is not None:
                    h = min(int(rows), n)
                else:
                    h = (budget - panels) // (buffers * n * itemsize)
                    h = min(h, n, MAX_BUFFER_ELEMENTS // n)
                    if h >= align:
                        h -= h % align
                    wanted = min(n, max(MIN_GPU_ROWS, b // 2)) if (gpu and strict) else 1
                    if h < wanted:
                        continue
                plan = StreamPlan(n, n_pivots, itemsize, b, h, buffers, budget, where)
                if plan.device_bytes <= budget and h * n <= MAX_BUFFER_ELEMENTS:
                    return plan
    smallest = StreamPlan(n, n_pivots, itemsize, blocks[-1], min(n, rows or 1), 1, budget, where)
    raise MemoryPlanError(
        f"a {where} budget of {format_size(budget)} cannot stream an {n} x {n} matrix: even pivot "
        f"panels of width {smallest.block} and one stripe of {smallest.rows} rows need "
        f"{format_size(smallest.device_bytes)}; allow more memory (gpu_memory= / host_memory=)")


# ----------------------------------------------------------------------------- estimates
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
        host += dtypes.row_pass_bytes(n * n)  # the cut-off check's and finalize's row chunks
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


# ----------------------------------------------------------------------------- the plan
def _interpreted(backend: str) -> bool:
    if backend != "gpu":
        return False
    from .gpu import interpreting

    if not interpreting():  # answered without importing torch (the torch-free GPU path needs that)
        return False
    try:
        import torch

        return interpreting() and not torch.cuda.is_available()
    except ImportError:  # pragma: no cover - the GPU backend needs torch anyway
        return False


def thread_bytes(method: str, n: int, threads: int, itemsize: int, paths: int = 0, block: int = 256) -> int:
    """Host bytes a CPU solve's ``threads`` workers hold beyond the result.

    Blocked FW in core: each worker of phase 2 copies its panel piece, and a column piece once
    more transposed (`apsp.cpu.blocked._panel_piece`: two ``block x PANEL_BYTES`` arrays, 1 MiB at
    the default block). Bit-parallel BFS: each worker's work arrays (`apsp.cpu.bfs._bfs_batches`:
    three uint64 n-long bit arrays, the n x 64 levels found in the distance dtype, with paths the
    parents and hops, and two int64 frontier lists, of which at most n entries are ever written
    between them: the levels they hold in turn are disjoint).
    """
    if method == "fw" and n > 0:
        from .cpu.blocked import PANEL_BYTES, SMALL_N

        if n <= SMALL_N:  # solved whole, on one thread, without the panel copies
            return 0
        cols = max(PANEL_BYTES // itemsize, 1)
        workers = min(threads, 2 * -(-n // cols))
        return workers * 2 * min(block, n) * min(cols, n) * itemsize
    if method == "bfs":
        return threads * (3 * 8 * n + 8 * n + 64 * n * max(itemsize, 1) + (2 * 64 * 4 * n if paths else 0))
    return 0


def _search_threads() -> int:
    from .cpu.threads import thread_count

    return thread_count()


def _smaller_dtypes(graph, dt: np.dtype) -> list:
    """dtypes narrower than ``dt`` that still hold every distance of ``graph``."""
    out = []
    for cand in (np.int16, np.int32, np.float32):
        c = np.dtype(cand)
        if c.itemsize >= dt.itemsize or (c.kind in "iu" and not graph.integral):
            continue
        if dtypes.dtype_fits(c, graph.distance_bound(), graph.has_negative_weights, graph.integral):
            out.append(c)
    return out


def plan_memory(graph, method: str, backend: str, opts, cast_to=None) -> MemoryPlan:
    """Check that the solve fits, decide in-core or out-of-core, or refuse.

    Reads the planning options of ``opts`` (`apsp.solvers.SolveOptions`):
    ``gpu_memory`` (GPU budget; default the card's free memory),
    ``host_memory`` (RAM budget; default what the OS reports available),
    ``out_of_core`` (None = stream through the GPU only when the matrix does
    not fit its budget; True = always stream; False = never), ``scratch_dir``
    (where a host matrix too big for RAM is kept; default the system
    temporary directory), ``block_size`` / ``ooc_rows`` (stream tile sizes).
    ``cast_to``: the dtype the result is cast to after the solve (`apsp.dtypes.cast_checked`),
    whose copy is held beside it.

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
    >>> from apsp.solvers import SolveOptions
    >>> g = Graph.from_dense(np.ones((1000, 1000)))
    >>> opts = SolveOptions(dtype=np.dtype(np.int32), host_memory="1MB")
    >>> plan_memory(g, "fw", "cpu", opts)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    apsp.errors.MemoryPlanError: the fw solver on the cpu needs ... MiB of RAM for n=1000 with int32 distances, but 977 KiB are allowed (host_memory). Ways out: dtype int16 needs ... MiB; out_of_core=True (--out-of-core) streams ...
    """
    from .solvers import DEFAULT_BLOCK

    n = graph.n
    dt = np.dtype(opts.dtype if opts.dtype is not None else np.uint8)  # BFS picks its own, narrowest first
    paths = int(bool(opts.successors)) + int(bool(opts.predecessors))
    interpreted = _interpreted(backend)
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
        from .ndfw import dissection_for

        nd, block = dissection_for(graph, opts, backend)  # the solver reuses it
        layout = nd.size
    host, gpu = incore_needs(n, dt, method, backend, paths, graph.dense is not None, block, interpreted,
                             layout, opts.cutoff_band is not None)
    if getattr(opts, "sources", None) is not None:  # searches write k rows only
        k = len(opts.sources)
        host = k * n * (dt.itemsize + 4 * paths) + search_bytes(
            n, graph.nnz, dt.itemsize, method, workers=min(k, 4 * _search_threads()))
    if backend == "cpu" and n > 0 and not force:  # out of core the stream's own buffers count
        host += thread_bytes(method, n, _search_threads(), dt.itemsize, paths,
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
