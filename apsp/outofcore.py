"""Out-of-core blocked Floyd-Warshall: the matrix stays on the host, stripes stream through a device.

The distance matrix lives in host memory (pinned RAM, or a memory-mapped
scratch file when it is bigger than RAM); the device (a GPU, or RAM itself
for a matrix on disk) holds only what the memory budget allows:

* the pivot row panel ``R`` (B x n) and column panel ``C`` (n x B, stored
  transposed on the GPU so its loads are contiguous) of the current round,
  and the same two panels of the next round, filled as stripes go by;
* ``buffers`` stripe buffers of ``rows`` x n (three on a GPU: one loading,
  one computing, one storing, on separate CUDA streams).

Round ``r`` with pivot vertices ``k0:k1``::

    phase 1   P = close(R[:, k0:k1])                     (resident, B x B)
    phase 2   R = min(R, P (x) R),  C = min(C, C (x) P)   (resident panels)
    phase 3   for each stripe of rows I (streamed in, updated, streamed out):
                  D[I, J] = min(D[I, J], C[I] (x) R[J])   for J outside k0:k1
                  D[I, k0:k1] = C[I];  D[k0:k1, :] = R     (the phase-2 results)
                  next round's panels <- this stripe's rows/columns k1:k1+B

so each round moves the matrix through the device once and does ``B`` min-plus
updates per element moved: a wide pivot panel (B in the thousands) makes the
stream compute-bound. No round needs a strided host read: the next round's
column panel is gathered from the stripes while they are on the device
(one read-only pass gathers the first round's panels).

The driver (`stream_fw`) only talks to an engine: `CPUEngine` here (numpy
buffers, the Numba tile kernels of `apsp.cpu.blocked`) and
`apsp.gpu.outofcore.GPUEngine` (torch buffers, the Triton kernels of
`apsp.gpu.minplus`, copies on their own streams). Both produce exactly the
in-core result for integer dtypes.
"""
from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import dtypes
from .errors import MemoryPlanError, NegativeCycleError

__all__ = ["StreamPlan", "plan_stream", "HostMatrix", "CPUEngine", "stream_fw", "solve"]

#: widest pivot panel the planner picks: phase 1 closes a B x B block per round
MAX_BLOCK = 8192
#: shortest stripe worth streaming on a GPU (kernel grid, per-copy overhead)
MIN_GPU_ROWS = 256
#: kernels index a buffer with 32-bit offsets
MAX_BUFFER_ELEMENTS = 2 ** 31 - 1


# ----------------------------------------------------------------------------- planning
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
        # current and next round's row and column panels, the pivot block and its transpose
        return (4 * self.block * self.n + 2 * self.block * self.block) * self.itemsize

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
        from .sizes import format_size

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
    >>> plan_stream(100, 100, 4, 5000, depth=1, block=2, rows=3, where="RAM").describe()
    '50 rounds of pivot width 2, 34 stripes of 3 rows, 1 buffer, 4.33 KiB of 4.88 KiB RAM budget'
    """
    from .sizes import format_size

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


# ----------------------------------------------------------------------------- the host matrix
class HostMatrix:
    """The n x n matrix an out-of-core solve streams: page-aligned RAM or a scratch file.

    The scratch file is unlinked as soon as it is mapped (on POSIX), so no
    file is left behind whatever happens to the process; the mapping lives as
    long as ``array`` (and any view of it, such as the returned distances).

    Examples
    --------
    >>> h = HostMatrix(3, np.int32, on_disk=True)
    >>> h.array[:] = 7
    >>> int(h.array.sum()), h.on_disk
    (63, True)
    """

    def __init__(self, n: int, dtype, on_disk: bool = False, scratch_dir=None):
        self.n = int(n)
        self.dtype = np.dtype(dtype)
        self.on_disk = bool(on_disk)
        nbytes = max(1, self.n * self.n * self.dtype.itemsize)
        if on_disk:
            directory = scratch_dir or tempfile.gettempdir()
            fd, path = tempfile.mkstemp(prefix="apsp-matrix-", suffix=".bin", dir=directory)
            try:
                os.ftruncate(fd, nbytes)
                self._map = mmap.mmap(fd, nbytes)
            finally:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(path)  # the mapping keeps the data; nothing is left on disk
        else:
            self._map = mmap.mmap(-1, nbytes)  # anonymous: page-aligned, so the GPU can pin it
        self.array = np.frombuffer(self._map, dtype=self.dtype, count=self.n * self.n).reshape(self.n, self.n)

    @property
    def nbytes(self) -> int:
        return self.array.nbytes


def _row_chunks(n_rows: int, n_cols: int, itemsize: int, chunk_bytes: int = 64 << 20):
    step = max(1, chunk_bytes // max(1, n_cols * itemsize))
    for i0 in range(0, n_rows, step):
        yield i0, min(n_rows, i0 + step)


# ----------------------------------------------------------------------------- the CPU engine
class CPUEngine:
    """Engine for a matrix on disk streamed through RAM: numpy buffers, Numba tile kernels.

    Copies are synchronous (``buffers`` = 1 is enough); big min-plus products
    are split by rows over a thread pool (the kernels release the GIL).
    """

    kind = "cpu"
    transposed_col_panel = False

    def __init__(self, dtype, negative: bool, host: np.ndarray, threads: int | None = None):
        from .cpu import blocked

        self._k = blocked
        self.dtype = np.dtype(dtype)
        self.negative = bool(negative)
        self.host = host
        self.threads = max(1, threads or len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                           else (os.cpu_count() or 1))
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None

    def empty(self, shape):
        return np.empty(shape, dtype=self.dtype)

    @staticmethod
    def transpose(x):
        return x.T

    @staticmethod
    def copy(dst, src) -> None:
        dst[...] = src

    def close_block(self, t) -> None:
        work = np.ascontiguousarray(t)
        if work.shape[0] > 128:
            self._k.fw_inplace(work, 128, negative=self.negative, progress=False)
        else:
            self._k.close_block(work, self.negative)
        if work is not t:
            t[...] = work

    def minplus(self, c, a, b) -> None:
        rows = c.shape[0]
        if np.shares_memory(b, c):
            b = np.array(b, order="C")
        else:
            b = np.ascontiguousarray(b)
        work = max(1, c.shape[0] * c.shape[1] * a.shape[1])
        parts = min(self.threads, rows, max(1, work // (1 << 22)))
        if parts <= 1 or self._pool is None:
            self._k.minplus_update(c, a, b, self.negative)
            return
        cuts = np.linspace(0, rows, parts + 1).astype(int)
        jobs = [self._pool.submit(self._k.minplus_update, c[r0:r1], a[r0:r1], b, self.negative)
                for r0, r1 in zip(cuts[:-1], cuts[1:]) if r1 > r0]
        for job in jobs:
            job.result()

    # stripes: host rows <-> buffers, synchronously
    def load(self, slot: int, buf, i0: int, i1: int) -> None:
        buf[...] = self.host[i0:i1]

    def wait_loaded(self, slot: int) -> None:
        pass

    def store(self, slot: int, buf, i0: int, i1: int) -> None:
        self.host[i0:i1] = buf

    def release(self, slot: int) -> None:
        pass

    def sync(self) -> None:
        pass

    @staticmethod
    def context():
        return contextlib.nullcontext()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


# ----------------------------------------------------------------------------- the driver
def _outside(k0: int, k1: int, n: int):
    """The ranges of 0..n outside k0..k1."""
    return [(a, b) for a, b in ((0, k0), (k1, n)) if b > a]


def stream_fw(host: np.ndarray, engine, plan: StreamPlan, start_vertex: int = 0, on_round=None) -> None:
    """Blocked Floyd-Warshall on the host matrix, in place, streaming stripes through ``engine``.

    Parameters
    ----------
    host : (n, n) ndarray
        The start matrix (`apsp.graph.Graph.fw_matrix`), or a saved state in
        which vertices ``0..start_vertex-1`` already served as intermediates.
    engine : CPUEngine or apsp.gpu.outofcore.GPUEngine
    plan : StreamPlan
    start_vertex : int
        First pivot vertex (resume from a checkpoint).
    on_round : callable(rounds_done, vertices_done), optional
        Called after each round's stripes are queued; call ``engine.sync()``
        before reading ``host``. An exception from it stops the solve (after
        the queued copies finish), leaving a valid state to resume from.

    Examples
    --------
    >>> d = np.array([[0, 3, 50], [50, 0, 4], [1, 50, 0]], dtype=np.int32)
    >>> eng = CPUEngine(np.int32, negative=False, host=d, threads=1)
    >>> stream_fw(d, eng, plan_stream(3, 3, 4, 10**6, depth=1, block=2, rows=2))
    >>> d.tolist()
    [[0, 3, 7], [5, 0, 4], [1, 4, 0]]
    """
    n = host.shape[0]
    if plan.n != n:
        raise ValueError(f"plan for n={plan.n}, matrix of {n}")
    block, height, nbuf = plan.block, plan.rows, plan.buffers
    pivots = [(k, min(k + block, plan.n_pivots)) for k in range(start_vertex, plan.n_pivots, block)]
    if not pivots:
        return
    stripes = [(i, min(i + height, n)) for i in range(0, n, height)]
    transposed = engine.transposed_col_panel

    def panels():
        return engine.empty((block, n)), engine.empty((block, n) if transposed else (n, block))

    def col_rows(col, r0, r1, width):
        """Rows r0:r1 of a column panel, as an (r1-r0) x width view."""
        return engine.transpose(col[:width, r0:r1]) if transposed else col[r0:r1, :width]

    cur = panels()
    nxt = panels() if len(pivots) > 1 else None
    bufs = [engine.empty((height, n)) for _ in range(nbuf)]
    pivot = engine.empty((block, block))
    pivot_t = engine.empty((block, block)) if transposed else None

    def phase12(pv):
        k0, k1 = pv
        kb = k1 - k0
        row, col = cur
        p = pivot[:kb, :kb]
        engine.copy(p, row[:kb, k0:k1])
        engine.close_block(p)
        engine.copy(row[:kb, k0:k1], p)
        if transposed:  # left factors are read down columns: give the kernel contiguous ones
            engine.copy(pivot_t[:kb, :kb], engine.transpose(p))
            left = engine.transpose(pivot_t[:kb, :kb])
        else:
            left = p
        for a, b in _outside(k0, k1, n):
            engine.minplus(row[:kb, a:b], left, row[:kb, a:b])
            c = col_rows(col, a, b, kb)
            engine.minplus(c, c, p)
        engine.copy(col_rows(col, k0, k1, kb), p)

    def phase3(buf, i0, i1, pv):
        k0, k1 = pv
        kb = k1 - k0
        row, col = cur
        for ra, rb in ((max(i0, a), min(i1, b)) for a, b in _outside(k0, k1, n)):
            if ra >= rb:
                continue
            left = col_rows(col, ra, rb, kb)
            for ca, cb in _outside(k0, k1, n):
                engine.minplus(buf[ra - i0:rb - i0, ca:cb], left, row[:kb, ca:cb])
            engine.copy(buf[ra - i0:rb - i0, k0:k1], left)  # pivot columns: the phase-2 panel
        pa, pb = max(i0, k0), min(i1, k1)
        if pa < pb:
            engine.copy(buf[pa - i0:pb - i0, :], row[pa - k0:pb - k0, :])  # pivot rows: the row panel

    def capture(buf, i0, i1, pv, into):
        n0, n1 = pv
        nb = n1 - n0
        row, col = into
        engine.copy(col_rows(col, i0, i1, nb), buf[:, n0:n1])
        pa, pb = max(i0, n0), min(i1, n1)
        if pa < pb:
            engine.copy(row[pa - n0:pb - n0, :], buf[pa - i0:pb - i0, :])

    # one read-only pass gathers the first round's panels, then every round updates every stripe
    items = [(-1, s) for s in stripes] + [(r, s) for r in range(len(pivots)) for s in stripes]
    # a stripe may be fetched ahead only when its rows were stored in an earlier step
    prefetch = nbuf > 1 and len(stripes) > 1

    def load(g):
        _, (i0, i1) = items[g]
        engine.load(g % nbuf, bufs[g % nbuf][:i1 - i0], i0, i1)

    try:
        load(0)
        for g, (r, (i0, i1)) in enumerate(items):
            if r >= 0 and items[g - 1][0] != r:
                phase12(pivots[r])
            if prefetch and g + 1 < len(items):
                load(g + 1)
            slot = g % nbuf
            buf = bufs[slot][:i1 - i0]
            engine.wait_loaded(slot)
            if r < 0:
                capture(buf, i0, i1, pivots[0], cur)
                engine.release(slot)
            else:
                phase3(buf, i0, i1, pivots[r])
                if r + 1 < len(pivots):
                    capture(buf, i0, i1, pivots[r + 1], nxt)
                engine.store(slot, buf, i0, i1)
            if not prefetch and g + 1 < len(items):
                load(g + 1)
            if r >= 0 and (g + 1 == len(items) or items[g + 1][0] != r):
                cur, nxt = nxt, cur
                if on_round is not None:
                    on_round(r + 1, pivots[r][1])
    finally:
        # queued copies finish either way, so the host matrix holds whole stripes
        engine.sync()


# ----------------------------------------------------------------------------- the solver
def _finalize_rows(dist: np.ndarray, negative: bool) -> None:
    for i0, i1 in _row_chunks(dist.shape[0], dist.shape[1], dist.itemsize):
        dtypes.finalize_unreachable(dist[i0:i1], negative)


def fill_start_matrix(graph, host: np.ndarray, dtype) -> None:
    """The FW start matrix of ``graph`` in the top-left n x n of ``host``; padding isolated."""
    _pad_only(host, graph.n, dtype)
    graph.fw_matrix(dtype, out=host[:graph.n, :graph.n])


def make_engine(backend: str, dtype, negative: bool, host: HostMatrix, plan: StreamPlan, opts):
    """The engine for ``backend``; options ``device``, ``pin_host``, ``threads``."""
    if backend == "gpu":
        from .gpu.outofcore import GPUEngine

        # a matrix in a file (bigger than RAM) is not page-locked: copies are staged
        pin = opts.pin_host and not host.on_disk
        return GPUEngine(dtype, negative, host.array, plan, device=opts.device, pin_host=pin)
    return CPUEngine(dtype, negative, host.array, threads=opts.threads)


def solve(graph, opts, memplan):
    """Out-of-core Floyd-Warshall solver (when `apsp.planner.plan_memory` says so).

    Follows the plan ``memplan``: the host matrix in RAM or
    in a scratch file, the stream tile sizes, and the engine (GPU or CPU).
    Honours ``checkpoint=`` / ``resume=`` / ``checkpoint_every=`` like the
    in-core solvers (`apsp.checkpoint`).

    Examples
    --------
    >>> from apsp import shortest_paths
    >>> r = shortest_paths([(0, 1, 2), (1, 2, 3), (2, 0, 1)], method="fw", backend="cpu",
    ...                    out_of_core=True, host_memory="1KB", block_size=1, ooc_rows=2)
    >>> r.distances.tolist(), r.info["ooc_rounds"], r.info["matrix_on_disk"]
    ([[0, 2, 5], [4, 0, 3], [1, 3, 0]], 3, True)
    """
    from .checkpoint import open_session
    from .solvers import SolveOutput

    stream: StreamPlan = memplan.stream
    dt = np.dtype(opts.dtype)
    n = graph.n
    negative = graph.has_negative_weights
    t0 = time.perf_counter()
    session = open_session(graph, opts, solver="fw-out-of-core", block=stream.block)
    host = HostMatrix(stream.n, dt, on_disk=memplan.matrix_on_disk, scratch_dir=memplan.scratch_dir)
    start = 0
    if session is not None and session.resuming:
        _pad_only(host.array, n, dt)
        session.restore(lambda i0, i1, rows: host.array.__setitem__((slice(i0, i1), slice(0, n)), rows))
        start = session.start_vertex
    else:
        fill_start_matrix(graph, host.array, dt)
    engine = make_engine(memplan.backend, dt, negative, host, stream, opts)
    t1 = time.perf_counter()
    from .progress import progress_bar

    done_before = -(-start // stream.block)  # rounds of a resumed solve, as far as the bar can tell
    rounds_total = done_before + -(-(n - start) // stream.block)
    with progress_bar(rounds_total, opts.progress, desc=f"apsp out-of-core {memplan.backend}") as bar:
        bar.set_to(done_before)

        def on_round(rounds_done, vertices_done):
            if session is not None:
                session.after_round(vertices_done, lambda i0, i1: host.array[i0:i1, :n], sync=engine.sync)
            bar.set_to(min(rounds_total, rounds_done + done_before))
            if opts.on_round is not None:
                opts.on_round(vertices_done)

        try:
            with engine.context():
                stream_fw(host.array, engine, stream, start_vertex=start, on_round=on_round)
        except KeyboardInterrupt as exc:
            if session is not None:
                session.interrupted(lambda i0, i1: host.array[i0:i1, :n], exc=exc)
            raise
        finally:
            engine.close()
    t2 = time.perf_counter()
    dist = host.array[:n, :n]
    diag = np.diagonal(dist)
    if (diag < 0).any():
        if session is not None:
            session.finish()
        raise NegativeCycleError("Negative cycle detected", vertices=np.flatnonzero(diag < 0))
    _finalize_rows(dist, negative)
    if session is not None:
        session.finish()
    t3 = time.perf_counter()
    info = {"out_of_core": True, "matrix_on_disk": memplan.matrix_on_disk, **stream.summary(),
            **engine_info(engine)}
    if session is not None:
        info.update(session.info())
    return SolveOutput(dist=dist, block_size=stream.block,
                       timings={"prepare": t1 - t0, "compute": t2 - t1, "finalize": t3 - t2}, info=info)


def _pad_only(host: np.ndarray, n: int, dtype) -> None:
    """Padding rows/columns of a resumed matrix: isolated vertices."""
    if host.shape[0] > n:
        inf = dtypes.inf_value(dtype)
        host[n:, :] = inf
        host[:n, n:] = inf
        pad = np.arange(n, host.shape[0])
        host[pad, pad] = 0


def engine_info(engine) -> dict:
    info = getattr(engine, "info", None)
    return info() if callable(info) else {"engine": engine.kind}
