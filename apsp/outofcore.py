"""Out-of-core blocked Floyd-Warshall: the matrix stays on the host, stripes stream through a device.

The distance matrix lives in host memory (pinned RAM, or a scratch file
when it is bigger than RAM, read and written a stripe at a time); the device (a GPU, or RAM itself
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

The schedule (`stream_fw`) only talks to a tile engine with stripe copies:
`cpu_stream_engine` here (`apsp.cpu.blocked.CPUEngine`, the Numba tile
kernels) and `apsp.gpu.outofcore.GPUStreamEngine` (`apsp.gpu.fw.GPUEngine`,
the Triton kernels, copies on their own streams). `StreamSolve` runs it under
the FW skeleton (`apsp.engine`). Both produce exactly the in-core result for
integer dtypes.
"""
from __future__ import annotations

import contextlib
import functools
import mmap
import os
import tempfile
from dataclasses import dataclass

import numpy as np

from .memory_plans import StreamPlan
from . import exactness
from .engine import Finalized, SolveOptions, SolveOutput, check_block, run
from .errors import MemoryPlanError
from .sizes import disk_available, format_size

__all__ = ["HostMatrix", "cpu_stream_engine", "stream_fw", "StreamSolve", "solve"]

# ----------------------------------------------------------------------------- the host matrix
class HostMatrix:
    """The n x n matrix an out-of-core solve streams: page-aligned RAM or a scratch file.

    The scratch file is unlinked as soon as it is made (on POSIX), so no file
    is left behind whatever happens to the process, and no other process can
    truncate it. Its blocks are allocated first (``posix_fallocate``): a disk
    too small is an `apsp.errors.MemoryPlanError` naming the file at once,
    never a store into a sparse file on a disk that filled meanwhile (SIGBUS
    under a memory map). Stripes move with plain reads and writes (`read`,
    `write`), so the file's pages never count as this process's memory;
    ``array``, the whole matrix as a memory map, is made only when asked for
    (the result, the GPU engine) and brings pages into RAM only as they are used.

    Examples
    --------
    >>> h = HostMatrix(3, np.int32, on_disk=True)
    >>> h.write(0, np.full((3, 3), 7, dtype=np.int32))
    >>> int(h.read(1, 3).sum()), int(h.array.sum()), h.on_disk
    (42, 63, True)
    """

    def __init__(self, n: int, dtype, on_disk: bool = False, scratch_dir=None):
        self.n = int(n)
        self.dtype = np.dtype(dtype)
        self.on_disk = bool(on_disk)
        self._nbytes = max(1, self.n * self.n * self.dtype.itemsize)
        self._fd: int | None = None
        if on_disk:
            fd, self.path = tempfile.mkstemp(prefix="apsp-matrix-", suffix=".bin", dir=scratch_dir or None)
            try:
                _allocate(fd, self._nbytes, self.path)
            except BaseException:
                os.close(fd)
                raise
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(self.path)  # the open file keeps the data; nothing is left on disk
            self._fd = fd
        else:
            self._map = mmap.mmap(-1, self._nbytes)  # anonymous: page-aligned, so the GPU can pin it

    @functools.cached_property
    def array(self) -> np.ndarray:
        """The whole matrix (for a file: a memory map of it, made on first use)."""
        if self._fd is not None:
            self._map = mmap.mmap(self._fd, self._nbytes)
        return np.frombuffer(self._map, dtype=self.dtype, count=self.n * self.n).reshape(self.n, self.n)

    def read(self, i0: int, i1: int, out: np.ndarray | None = None) -> np.ndarray:
        """Rows ``i0:i1`` copied into ``out`` (C-contiguous; default a new array)."""
        out = np.empty((i1 - i0, self.n), dtype=self.dtype) if out is None else out
        if self._fd is None:
            np.copyto(out, self.array[i0:i1])
            return out
        view = out.reshape(-1).view(np.uint8).data
        offset, got = i0 * self.n * self.dtype.itemsize, 0
        while got < len(view):
            k = os.preadv(self._fd, [view[got:]], offset + got)
            if k <= 0:
                raise OSError(f"cannot read rows {i0}..{i1 - 1} of the out-of-core matrix file {self.path}")
            got += k
        return out

    def write(self, i0: int, rows: np.ndarray) -> None:
        """Rows ``i0:i0+len(rows)`` (full width) from ``rows``."""
        if self._fd is None:
            self.array[i0:i0 + rows.shape[0]] = rows
            return
        view = np.ascontiguousarray(rows, dtype=self.dtype).reshape(-1).view(np.uint8).data
        offset, done = i0 * self.n * self.dtype.itemsize, 0
        while done < len(view):
            done += os.pwritev(self._fd, [view[done:]], offset + done)

    def diagonal(self, n: int) -> np.ndarray:
        """The first ``n`` diagonal entries."""
        if self._fd is None:
            return np.diagonal(self.array[:n, :n]).copy()
        step = (self.n + 1) * self.dtype.itemsize
        return np.frombuffer(b"".join(os.pread(self._fd, self.dtype.itemsize, i * step) for i in range(n)),
                             dtype=self.dtype)

    def __del__(self):
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # an existing map keeps the file's data
            self._fd = None


# ----------------------------------------------------------------------------- the stream's tiles
#: widest pivot panel the planner picks: phase 1 closes a B x B block per round
MAX_BLOCK = 8192
#: shortest stripe worth streaming on a GPU (kernel grid, per-copy overhead)
MIN_GPU_ROWS = 256
#: kernels index a buffer with 32-bit offsets
MAX_BUFFER_ELEMENTS = 2 ** 31 - 1


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
    >>> p = plan_stream(100, 100, 4, 6000, depth=1, block=2, rows=3, where="RAM")
    >>> p.rounds, p.stripes, p.buffers, p.device_bytes
    (50, 34, 1, 5216)
    """
    if n < 1 or n_pivots < 0 or n_pivots > n:
        raise ValueError(f"bad matrix size n={n}, n_pivots={n_pivots}")
    block, rows = check_block(block), check_block(rows, "ooc_rows")
    top = max(1, min(MAX_BLOCK, n_pivots or 1))
    if block is not None:
        blocks = [min(block, max(1, n_pivots))]
    else:  # align * 2**k, widest first, down to min(align, top)
        widths = {align << k for k in range(top.bit_length()) if align << k <= top}
        blocks = sorted(widths | {min(align, top)}, reverse=True)
    gpu = where == "GPU" and align > 1
    # first pass: stripes tall enough to keep a GPU busy; second: any that fit
    for strict in (True, False):
        for b in blocks:
            panels = StreamPlan(n, n_pivots, itemsize, b, 1, 0, budget, where).panel_bytes
            if b * n > MAX_BUFFER_ELEMENTS or panels >= budget:
                continue
            for buffers in range(max(1, depth), 0, -1):
                if rows is not None:
                    h = min(rows, n)
                else:
                    h = min((budget - panels) // (buffers * n * itemsize), n, MAX_BUFFER_ELEMENTS // n)
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




def _allocate(fd: int, nbytes: int, path: str) -> None:
    """Reserve every block of the scratch file, or raise MemoryPlanError saying what is missing."""
    try:
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(fd, 0, nbytes)
        else:  # pragma: no cover - no such call (macOS): the file stays sparse
            os.ftruncate(fd, nbytes)
    except OSError as exc:
        raise MemoryPlanError(
            f"cannot allocate the out-of-core matrix file {path} ({format_size(nbytes)}): {exc.strerror} "
            f"({format_size(disk_available(os.path.dirname(path)))} free there); give another directory "
            "with scratch_dir= (--scratch DIR), or a smaller dtype") from exc


# ----------------------------------------------------------------------------- the CPU engine
def cpu_stream_engine(dtype, negative: bool, host: HostMatrix, threads: int | None = None):
    """Engine for a matrix on disk streamed through RAM: `apsp.cpu.blocked.CPUEngine`'s tile kernels
    (big products split by rows over threads) plus synchronous stripe reads and writes of ``host``
    (one buffer is enough)."""
    from .cpu.blocked import CPUEngine, fw_inplace

    class CPUStreamEngine(CPUEngine):
        def close_block(self, t) -> None:
            """Wide pivot panels: closed as a blocked solve of their own (parallel phases 2-3)."""
            work = np.ascontiguousarray(t)
            if work.shape[0] > 128:
                fw_inplace(work, 128, negative=self.negative, progress=False)
            else:
                super().close_block(work)
            if work is not t:
                t[...] = work

        def load_stripe(self, slot: int, buf, i0: int, i1: int) -> None:
            host.read(i0, i1, out=buf)

        def store(self, slot: int, buf, i0: int, i1: int) -> None:
            host.write(i0, buf)

        def release(self, slot: int) -> None:
            pass  # copies are synchronous: nothing to wait for before a buffer is reused or read

        wait_loaded = release
        context = staticmethod(contextlib.nullcontext)

    return CPUStreamEngine(dtype, negative, threads=threads)


# ----------------------------------------------------------------------------- the driver
def _outside(k0: int, k1: int, n: int):
    """The ranges of 0..n outside k0..k1."""
    return [(a, b) for a, b in ((0, k0), (k1, n)) if b > a]


def stream_fw(engine, plan: StreamPlan, start_vertex: int = 0):
    """Blocked Floyd-Warshall on the engine's host matrix, in place, streaming stripes through ``engine``.

    A generator: yields the vertices done after each round's stripes are queued
    (call ``engine.sync()`` before reading the host matrix). Stopping it early (an
    exception in the caller, Ctrl-C) lets the queued copies finish, leaving a
    valid state to resume from.

    Parameters
    ----------
    engine : `cpu_stream_engine` or apsp.gpu.outofcore.GPUStreamEngine
        Over the start matrix (`apsp.graph.Graph.fw_matrix`), or a saved state in
        which vertices ``0..start_vertex-1`` already served as intermediates.
    plan : StreamPlan
    start_vertex : int
        First pivot vertex (resume from a checkpoint).

    Examples
    --------
    >>> h = HostMatrix(3, np.int32, on_disk=True)
    >>> h.write(0, np.array([[0, 3, 50], [50, 0, 4], [1, 50, 0]], dtype=np.int32))
    >>> from apsp.outofcore import plan_stream
    >>> eng = cpu_stream_engine(np.int32, negative=False, host=h, threads=1)
    >>> list(stream_fw(eng, plan_stream(3, 3, 4, 10**6, depth=1, block=2, rows=2)))
    [2, 3]
    >>> h.read(0, 3).tolist()
    [[0, 3, 7], [5, 0, 4], [1, 4, 0]]
    """
    n = plan.n
    block, height, nbuf = plan.block, plan.rows, plan.buffers
    pivots = [(k, min(k + block, plan.n_pivots)) for k in range(start_vertex, plan.n_pivots, block)]
    if not pivots:
        return
    stripes = [(i, min(i + height, n)) for i in range(0, n, height)]
    panels = _RoundPanels(engine, n, block, rounds=len(pivots))
    bufs = [engine.empty((height, n)) for _ in range(nbuf)]
    # one read-only pass gathers the first round's panels, then every round updates every stripe
    items = [(-1, s) for s in stripes] + [(r, s) for r in range(len(pivots)) for s in stripes]
    # a stripe may be fetched ahead only when its rows were stored in an earlier step
    prefetch = nbuf > 1 and len(stripes) > 1

    def load(g):
        _, (i0, i1) = items[g]
        engine.load_stripe(g % nbuf, bufs[g % nbuf][:i1 - i0], i0, i1)

    try:
        load(0)
        for g, (r, (i0, i1)) in enumerate(items):
            if r >= 0 and items[g - 1][0] != r:
                panels.close_pivot(*pivots[r])
            if prefetch and g + 1 < len(items):
                load(g + 1)
            slot = g % nbuf
            buf = bufs[slot][:i1 - i0]
            engine.wait_loaded(slot)
            if r < 0:
                panels.capture(buf, i0, i1, panels.cur, *pivots[0])
                engine.release(slot)
            else:
                panels.update(buf, i0, i1, *pivots[r])
                if r + 1 < len(pivots):
                    panels.capture(buf, i0, i1, panels.nxt, *pivots[r + 1])
                engine.store(slot, buf, i0, i1)
            if not prefetch and g + 1 < len(items):
                load(g + 1)
            if r >= 0 and (g + 1 == len(items) or items[g + 1][0] != r):
                panels.cur, panels.nxt = panels.nxt, panels.cur
                yield pivots[r][1]
    finally:
        # queued copies finish either way, so the host matrix holds whole stripes
        engine.sync()


class _RoundPanels:
    """`stream_fw`'s arithmetic, apart from its schedule of stripe loads and stores: a round's
    pivot block closed and its row and column panels updated (phases 1 and 2), a stripe updated
    from them (phase 3), and the next round's panels captured from the stripe as it passes.

    ``cur`` holds this round's (row, column) panels and ``nxt`` the next round's; the caller
    swaps them between rounds. Column panels are stored transposed when the engine says so
    (``transposed_col_panels``)."""

    def __init__(self, engine, n: int, block: int, rounds: int):
        self.engine, self.n = engine, n
        self.transposed = engine.transposed_col_panels
        self.cur = self._panels(block)
        self.nxt = self._panels(block) if rounds > 1 else None
        self.pivot = engine.empty((block, block))
        self.pivot_t = engine.empty((block, block)) if self.transposed else None

    def _panels(self, block: int):
        shape = (block, self.n) if self.transposed else (self.n, block)
        return self.engine.empty((block, self.n)), self.engine.empty(shape)

    def col_rows(self, col, r0: int, r1: int, width: int):
        """Rows r0:r1 of a column panel, as an (r1-r0) x width view."""
        return self.engine.transpose(col[:width, r0:r1]) if self.transposed else col[r0:r1, :width]

    def close_pivot(self, k0: int, k1: int) -> None:
        engine, n, kb = self.engine, self.n, k1 - k0
        row, col = self.cur
        p = self.pivot[:kb, :kb]
        engine.copy(p, row[:kb, k0:k1])
        engine.close_block(p)
        engine.copy(row[:kb, k0:k1], p)
        if self.transposed:  # left factors are read down columns: give the kernel contiguous ones
            assert self.pivot_t is not None  # allocated with the engine's transposed panels
            engine.copy(self.pivot_t[:kb, :kb], engine.transpose(p))
            left = engine.transpose(self.pivot_t[:kb, :kb])
        else:
            left = p
        for a, b in _outside(k0, k1, n):
            engine.minplus(row[:kb, a:b], left, row[:kb, a:b])
            c = self.col_rows(col, a, b, kb)
            engine.minplus(c, c, p)
        engine.copy(self.col_rows(col, k0, k1, kb), p)

    def update(self, buf, i0: int, i1: int, k0: int, k1: int) -> None:
        """Stripe ``buf`` (rows i0:i1) through the round of pivots k0:k1."""
        engine, n, kb = self.engine, self.n, k1 - k0
        row, col = self.cur
        for ra, rb in ((max(i0, a), min(i1, b)) for a, b in _outside(k0, k1, n)):
            if ra >= rb:
                continue
            left = self.col_rows(col, ra, rb, kb)
            for ca, cb in _outside(k0, k1, n):
                engine.minplus(buf[ra - i0:rb - i0, ca:cb], left, row[:kb, ca:cb])
            engine.copy(buf[ra - i0:rb - i0, k0:k1], left)  # pivot columns: the phase-2 panel
        pa, pb = max(i0, k0), min(i1, k1)
        if pa < pb:
            engine.copy(buf[pa - i0:pb - i0, :], row[pa - k0:pb - k0, :])  # pivot rows: the row panel

    def capture(self, buf, i0: int, i1: int, into, n0: int, n1: int) -> None:
        """The parts of stripe ``buf`` (rows i0:i1) that the panels ``into`` of pivots n0:n1 hold."""
        nb = n1 - n0
        row, col = into
        self.engine.copy(self.col_rows(col, i0, i1, nb), buf[:, n0:n1])
        pa, pb = max(i0, n0), min(i1, n1)
        if pa < pb:
            self.engine.copy(row[pa - n0:pb - n0, :], buf[pa - i0:pb - i0, :])


# ----------------------------------------------------------------------------- the solver
class StreamSolve:
    """The out-of-core solve as an engine of the FW skeleton (`apsp.engine`): the host matrix,
    its rounds streamed through ``engine`` (a tile engine with stripe copies).

    Loading, resuming, finalizing and the cut-off check (``cutoff_band``) also go a stripe
    of ``stream.rows`` rows at a time, so RAM holds no more than the plan's stripes."""

    early_cycle_check = False
    sync_for_progress = False
    #: every round's state is exact whatever the pivot width, so a resume may start anywhere
    resumes_anywhere = True

    def __init__(self, graph, host: HostMatrix, engine, stream: StreamPlan, cutoff_band=None):
        self.host, self.engine, self.stream = host, engine, stream
        self.kind = f"out-of-core {engine.kind}"
        self.n = graph.n
        self.negative = engine.negative
        self.cutoff_band = cutoff_band

    def _stripes(self):
        """(i0, i1, rows) over the host matrix; one stripe buffer of the plan's height, reused."""
        side, height = self.host.n, self.stream.rows
        buf = np.empty((min(height, side), side), dtype=self.host.dtype)
        for i0 in range(0, side, height):
            i1 = min(i0 + height, side)
            yield i0, i1, buf[:i1 - i0]

    def _isolated(self, i0: int, i1: int, rows: np.ndarray) -> None:
        """Rows ``i0:i1`` set to INF, 0 on the padding vertices' diagonal (the caller fills the
        real part; padding vertices are isolated)."""
        rows.fill(exactness.inf_value(self.host.dtype))
        pad = np.arange(max(i0, self.n), i1)
        rows[pad - i0, pad] = 0

    def load(self, graph) -> None:
        """The FW start matrix in the top-left n x n of the host matrix; padding isolated."""
        for i0, i1, rows in self._stripes():
            self._isolated(i0, i1, rows)
            if i0 < self.n:
                i1 = min(i1, self.n)
                graph.fw_matrix(self.host.dtype, out=rows[:i1 - i0, :self.n], rows=(i0, i1))
            self.host.write(i0, rows)

    def write_rows(self, i0: int, i1: int, rows: np.ndarray) -> None:
        if self.host.n == self.n:
            self.host.write(i0, rows)
            return
        if i0 == 0:  # a resume's first rows: its padding rows first (a checkpoint streams from row 0)
            for p0, p1, part in self._stripes():
                if p1 > self.n:
                    self._isolated(p0, p1, part)
                    self.host.write(p0, part)
        wide = np.empty((i1 - i0, self.host.n), dtype=self.host.dtype)
        self._isolated(i0, i1, wide)
        wide[:, :self.n] = rows
        self.host.write(i0, wide)

    def rounds(self, block: int, start_vertex: int = 0):
        with self.engine.context():
            yield from stream_fw(self.engine, self.stream, start_vertex)

    def read_rows(self, i0: int, i1: int) -> np.ndarray:
        return self.host.read(i0, i1)[:, :self.n]

    def sync(self) -> None:
        self.engine.sync()

    def negative_diagonal(self) -> np.ndarray:
        return np.flatnonzero(self.host.diagonal(self.n) < 0)

    def finalize(self) -> Finalized:
        """Unreachable pairs marked, and the cut-off check made, a stripe at a time."""
        suspect = None if self.cutoff_band is None else False
        for i0, i1, rows in self._stripes():
            if i0 >= self.n:
                break
            real = self.host.read(i0, i1, out=rows)[:min(i1, self.n) - i0, :self.n]
            suspect = exactness.finalize_checked(real, self.negative, self.cutoff_band) or suspect
            self.host.write(i0, rows)
        return Finalized(self.host.array[:self.n, :self.n], cutoff_suspected=suspect)


def solve(graph, opts: SolveOptions) -> SolveOutput:
    """Out-of-core Floyd-Warshall solver (when `apsp.plan.plan_memory` says so): the skeleton
    (`apsp.engine`) over `StreamSolve`.

    Follows the memory plan ``opts.memory``: the host matrix in RAM or in a scratch file,
    the stream tile sizes, and the engine (GPU or CPU). Honours ``checkpoint=``
    / ``resume=`` / ``checkpoint_every=`` like the in-core solvers (`apsp.checkpoint`).

    Examples
    --------
    >>> from apsp import shortest_paths
    >>> r = shortest_paths([(0, 1, 2), (1, 2, 3), (2, 0, 1)], method="fw", backend="cpu",
    ...                    out_of_core=True, host_memory="1KB", block_size=1, ooc_rows=2)
    >>> r.distances.tolist(), r.info["ooc_rounds"], r.info["matrix_on_disk"]
    ([[0, 2, 5], [4, 0, 3], [1, 3, 0]], 3, True)
    """

    memplan = opts.memory
    assert memplan is not None and memplan.stream is not None, "the plan streams this solve"
    stream: StreamPlan = memplan.stream
    dt = np.dtype(opts.dtype)
    host = HostMatrix(stream.n, dt, on_disk=memplan.matrix_on_disk, scratch_dir=memplan.scratch_dir)
    if memplan.backend == "gpu":
        from .gpu.outofcore import GPUStreamEngine

        # a matrix in a file (bigger than RAM) is not page-locked: copies are staged
        engine = GPUStreamEngine(dt, graph.has_negative_weights, host.array, stream, device=opts.device,
                                 pin_host=opts.request.pin_host and not host.on_disk)
    else:
        engine = cpu_stream_engine(dt, graph.has_negative_weights, host, threads=opts.request.threads)
    try:
        out = run(graph, opts, StreamSolve(graph, host, engine, stream, cutoff_band=opts.cutoff_band),
                  solver="fw-out-of-core", block=stream.block)
    finally:
        engine.close()
    out.info.update({"out_of_core": True, "matrix_on_disk": memplan.matrix_on_disk, **stream.summary(),
                     **(engine.info() if hasattr(engine, "info") else {"engine": engine.kind})})
    return out
