"""Blocked Floyd-Warshall on the CPU, in Numba: parallel over tiles, SIMD inner loops.

The matrix is cut into ``block x block`` tiles (the last row/column of tiles may
be smaller, so any ``n`` and any block size >= 1 work). Round ``K`` closes the
pivot tile (phase 1, itself blocked), updates the pivot row and column panels
with it (phase 2, parallel over pieces ``PANEL_BYTES`` wide; the column panel
is processed transposed so its rows are long too), then every entry outside
the pivot rows and columns with the min-plus product of its column-panel and
row-panel parts (phase 3, parallel over ``STRIP_ROWS`` x ``STRIP_BYTES`` pieces).
See DEVELOPING.md, "Conventions every solver follows". Each round is one
short Numba call, so Ctrl-C and the progress bar act between rounds.

The hot loop (generated, `apsp.cpu._kernels_gen`) is
``c[i, j] = min(c[i, j], a[i, k..k+3] + b[k..k+3, j])`` over a contiguous ``j``
for four rows of ``c`` at once: each load of ``b`` serves four rows and each
store to ``c`` carries four updates. Sums are cast back to the matrix dtype
so int16/int32/float32 run at full SIMD width (16/8/8 lanes with AVX2).
No fastmath: ``inf`` must stay ``inf``.

Kernels never overflow (see `apsp.exactness`): with ``negative=True`` every value
they write is clamped at ``floor`` (``-INF`` for integers, ``-max/4`` for
floats), so a sum of two entries always fits, and a negative cycle shows as a
negative diagonal entry. Paths come afterwards from the distances
(`apsp.cpu.paths.pointers_from_distances`).
"""
from __future__ import annotations

import os

import numpy as np
from numba import njit

from .. import exactness
from ..engine import DEFAULT_BLOCK as SOLVER_BLOCKS
from ..engine import Finalized, SolveOptions, SolveOutput, drive, run
from ._kernels import _relax1, _relax4
from .threads import run_split, thread_count

#: default tile edge (measured: `apsp.engine.DEFAULT_BLOCK`)
DEFAULT_BLOCK = SOLVER_BLOCKS["cpu"]
#: phase-2 piece width, in bytes of a row (so in entries: ``PANEL_BYTES // itemsize``)
PANEL_BYTES = 2048
#: phase-3 piece shape: rows x (``STRIP_BYTES // itemsize``) columns, so that the row-panel
#: part a piece reads (block x columns) stays in L2 and rows stay long
STRIP_ROWS = 32
STRIP_BYTES = 4096
#: tile edge inside the pivot closure (phase 1), see `_close`
SUB_BLOCK = 32
#: `solve` runs plain Floyd-Warshall (`_close_small`) up to this n: a few milliseconds at most,
#: and it compiles in about a second where the blocked kernels take many (first run only)
SMALL_N = 256


def clamp_floor(dtype):
    """Lowest value kernels write when weights may be negative (``-INF``; ``-max/4`` for floats)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return dt.type(-np.finfo(dt).max / 4)
    return dt.type(-exactness.inf_value(dt))


# ---------------------------------------------------------------------------
# Numba kernels. Arguments are C-contiguous 2-D arrays plus offsets, so each
# kernel compiles once per dtype and variant whatever the tile shapes. The
# variant lives in argument types, never in runtime flags, so a call compiles
# only its own loops: ``floor`` is None when weights are non-negative. Tests on
# the argument itself (``if floor is None``) are pruned by Numba at compile time.
# The unrolled row kernels live in the generated module `_kernels`.
# Every Numba function that calls a kernel links in its code and optimises it all
# over again (about a second each on the first run), so the helpers between the
# entry points (`_close`, `_tasks`) and the kernels are inlined (inline="always"),
# and offsets are passed as int64, never as literal constants (a Literal[int]
# argument compiles the kernels once more).
# ---------------------------------------------------------------------------

@njit(cache=True, nogil=True, inline="always")
def _relax(c, ci, cj, a, ai, ak, b, bk, bj, r, kk, s, floor, inf):
    """``c[ci+i, cj+j] = min(c[ci+i, cj+j], a[ai+i, ak+k] + b[bk+k, bj+j])``
    for ``i < r, k < kk, j < s``, in place."""
    # _relax4 takes k in fours; the last kk % 4 of its rows and every k of the rows past the
    # last four go to _relax1 (each entry sees its k in the same order)
    passes = kk - kk % 4
    i = 0
    while i + 4 <= r:
        _relax4(c, ci + i, cj, a, ai + i, ak, b, bk, bj, passes, s, floor, inf)
        i += 4
    for row in range(r):
        k0 = passes if row < i else 0
        if k0 < kk:
            _relax1(c, ci + row, cj, a, ai + row, ak + k0, b, bk + k0, bj, kk - k0, s, floor, inf)


@njit(cache=True, nogil=True)
def _close_small(t, floor, inf):
    """Plain Floyd-Warshall on the square C-contiguous ``t`` in place.

    Also the whole solve of small matrices (`SMALL_N`): one short loop nest compiles in a
    fraction of the time the blocked kernels take.
    """
    m = t.shape[0]
    cast = t.dtype.type
    for k in range(m):
        tk = t[k]
        for i in range(m):
            tik = t[i, k]
            if tik >= inf:
                continue
            ti = t[i]
            if floor is not None:
                for j in range(m):
                    v = cast(tik + tk[j])
                    ti[j] = min(ti[j], v if v > floor else floor)
            else:
                for j in range(m):
                    ti[j] = min(ti[j], cast(tik + tk[j]))


@njit(cache=True, nogil=True)
def _close(t, floor, inf):
    """Floyd-Warshall on the square C-contiguous ``t`` in place (phase 1), itself blocked.

    Tiles of ``SUB_BLOCK`` are closed by `_close_small`; the rest of each
    sub-round runs on the unrolled kernels, which the plain triple loop
    cannot match. Same conventions as the whole solve.
    """
    m = t.shape[0]
    if m <= SUB_BLOCK:
        _close_small(t, floor, inf)
        return
    for s0 in range(0, m, SUB_BLOCK):
        s1 = min(s0 + SUB_BLOCK, m)
        w = s1 - s0
        p = np.empty((w, w), dtype=t.dtype)
        for i in range(w):
            for j in range(w):
                p[i, j] = t[s0 + i, s0 + j]
        _close_small(p, floor, inf)
        for i in range(w):
            for j in range(w):
                t[s0 + i, s0 + j] = p[i, j]
        sides = _pieces(m, s0, s1, m, 0)  # the ranges before and after the sub-pivot
        # pieces 0-1: row panel left/right of the sub-pivot, 2-3: column panel above/below,
        # 4-7: the four rectangles outside the sub-pivot rows and columns
        for piece in range(8):
            lo, hi = sides[piece % 2]  # the range beside the sub-pivot this piece covers
            if hi <= lo:
                continue
            if piece < 2:  # R = min(R, P (x) R) with a copy of R as b (exact: P is closed)
                b = np.empty((w, hi - lo), dtype=t.dtype)
                for i in range(w):
                    for j in range(hi - lo):
                        b[i, j] = t[s0 + i, lo + j]
                a, ci, cj, ai, ak, bk, bj, r, s = p, s0, lo, 0, 0, 0, 0, w, hi - lo
            elif piece < 4:  # C = min(C, C (x) P)
                a, b, ci, cj, ai, ak, bk, bj, r, s = t, p, lo, s0, lo, s0, 0, 0, hi - lo, w
            else:  # D = min(D, C (x) R)
                lo2, hi2 = sides[(piece - 4) // 2]
                if hi2 <= lo2:
                    continue
                a, b, ci, cj, ai, ak, bk, bj, r, s = t, t, lo2, lo, lo2, s0, s0, lo, hi2 - lo2, hi - lo
            _relax(t, ci, cj, a, ai, ak, b, bk, bj, r, w, s, floor, inf)


@njit(cache=True, nogil=True, inline="always")
def _pieces(n, k0, k1, width, t):
    """Piece ``t`` of ``[0, n)`` cut every ``width``, minus ``[k0, k1)``: two ranges, either may be empty."""
    j0 = t * width
    j1 = min(j0 + width, n)
    return (j0, min(j1, k0)), (max(j0, k1), j1)


@njit(cache=True, nogil=True, inline="always")
def _panel_piece(d, pivot, pivot_t, k0, k1, column_panel, lo, hi, floor, inf):
    """Phase 2 on one piece: pivot rows, columns ``lo:hi`` (``R = min(R, P (x) R)``), or with
    ``column_panel`` pivot columns, rows ``lo:hi``, done transposed (``C.T = min(C.T, P.T (x) C.T)``)
    so its rows are long too. The right operand is a copy of the piece's old values: since
    ``P`` is closed, old and new values give the same result."""
    m = k1 - k0
    w = hi - lo
    b = np.empty((m, w), dtype=d.dtype)
    if column_panel:
        c = np.empty((m, w), dtype=d.dtype)
        for i in range(w):
            for k in range(m):
                c[k, i] = d[lo + i, k0 + k]
        a, ci, cj = pivot_t, 0, 0
    else:
        c, a, ci, cj = d, pivot, k0, lo
    for k in range(m):
        for j in range(w):
            b[k, j] = c[ci + k, cj + j]
    zero = np.int64(0)  # not a literal 0: see the note above the kernels
    _relax(c, ci, cj, a, zero, zero, b, zero, zero, m, m, w, floor, inf)
    if column_panel:
        for i in range(w):
            for k in range(m):
                d[lo + i, k0 + k] = c[k, i]


@njit(cache=True, nogil=True)
def _tasks(d, pivot, pivot_t, k0, k1, phase, panel_cols, strip_cols, floor, inf, t0, t1):
    """Tasks ``t0..t1-1`` of phase 2 or 3 of the round with pivot rows/columns ``k0:k1``.

    Phase 2: tasks ``0..2*npieces`` update a piece (``panel_cols`` wide) of the
    pivot row panel, then of the pivot column panel (`_panel_piece`).
    Phase 3: one ``STRIP_ROWS x strip_cols`` piece of ``D = min(D, C (x) R)``,
    minus the pivot rows and columns; long rows keep the SIMD loop long and
    the row panel in L2.
    """
    n = d.shape[0]
    for t in range(t0, t1):
        if phase == 2:
            npieces = (n + panel_cols - 1) // panel_cols
            column_panel = t >= npieces
            for lo, hi in _pieces(n, k0, k1, panel_cols, t - npieces if column_panel else t):
                if hi > lo:
                    _panel_piece(d, pivot, pivot_t, k0, k1, column_panel, lo, hi, floor, inf)
            continue
        ncs = (n + strip_cols - 1) // strip_cols
        cols = _pieces(n, k0, k1, strip_cols, t % ncs)
        for ia, ib in _pieces(n, k0, k1, STRIP_ROWS, t // ncs):
            for ja, jb in cols:
                if ia < ib and ja < jb:
                    _relax(d, ia, ja, d, ia, k0, d, k0, ja, ib - ia, k1 - k0, jb - ja, floor, inf)


def _round(d, k0, k1, floor, inf):
    """One round of blocked FW with pivot rows/columns ``k0:k1`` (all three phases)."""
    n = d.shape[0]
    # phase 1 on a copy of the pivot tile; numpy copies it, so that no further Numba function
    # links in the kernels (see the note above the kernels)
    pivot = np.array(d[k0:k1, k0:k1])
    _close(pivot, floor, inf)
    d[k0:k1, k0:k1] = pivot
    pivot_t = np.ascontiguousarray(pivot.T)
    panel_cols = max(PANEL_BYTES // d.itemsize, 1)
    strip_cols = max(STRIP_BYTES // d.itemsize, 1)
    # each phase's tasks, one contiguous range per thread
    run_split(_tasks, 2 * -(-n // panel_cols), d, pivot, pivot_t, k0, k1, 2, panel_cols, strip_cols, floor, inf)
    ntasks = -(-n // STRIP_ROWS) * -(-n // strip_cols)
    run_split(_tasks, ntasks, d, pivot, pivot_t, k0, k1, 3, panel_cols, strip_cols, floor, inf)


# ---------------------------------------------------------------------------
# Public tile-level API (shared with apsp.distributed)
# ---------------------------------------------------------------------------

def _kernel_args(dtype, negative) -> tuple[np.generic | None, np.generic]:
    """``(floor, inf)`` as the kernels take them: ``floor`` None when weights are non-negative."""
    dt = np.dtype(dtype)
    return (clamp_floor(dt) if negative else None), exactness.inf_value(dt)


def _check_dtype(*arrays):
    dt = arrays[0].dtype
    exactness.as_dtype(dt)
    for arr in arrays[1:]:
        if arr.dtype != dt:
            raise TypeError(f"all tiles must share one dtype, got {dt} and {arr.dtype}")
    return dt


def close_block(t: np.ndarray, negative: bool = False) -> np.ndarray:
    """Floyd-Warshall on the square tile ``t``, in place (phase 1 of blocked FW).

    Parameters
    ----------
    t : (m, m) ndarray of a supported dtype, INF sentinel for "no path"
    negative : bool
        True when weights may be negative: values are clamped at ``clamp_floor``.

    Returns
    -------
    t, updated.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.array([[0, 3, 50], [50, 0, 4], [1, 50, 0]], dtype=np.int32)
    >>> close_block(t).tolist()
    [[0, 3, 7], [5, 0, 4], [1, 4, 0]]
    """
    if t.ndim != 2 or t.shape[0] != t.shape[1]:
        raise ValueError(f"close_block needs a square tile, got shape {t.shape}")
    _check_dtype(t)
    work = t if t.flags.c_contiguous else np.ascontiguousarray(t)
    _close(work, *_kernel_args(t.dtype, negative))
    if work is not t:
        t[...] = work
    return t


def minplus_update(c: np.ndarray, a: np.ndarray, b: np.ndarray, negative: bool = False) -> np.ndarray:
    """``c = min(c, a (x) b)`` in place, where ``(a (x) b)[i, j] = min_k a[i, k] + b[k, j]``.

    ``a`` is r x k, ``b`` is k x s, ``c`` is r x s, all of one dtype. ``c`` may share
    memory with ``a`` or ``b`` as in phase 2 of blocked FW (``R = min(R, P (x) R)``,
    ``C = min(C, C (x) P)`` with ``P`` closed): such operands are read as copies
    of their values on entry, as `fw_inplace` does, so a distributed driver built
    on these kernels reproduces the single-process solve bit for bit, floats included.

    Examples
    --------
    >>> import numpy as np
    >>> c = np.full((1, 2), 100, dtype=np.int32)
    >>> a = np.array([[1, 5]], dtype=np.int32)
    >>> b = np.array([[10, 1], [1, 10]], dtype=np.int32)
    >>> minplus_update(c, a, b).tolist()
    [[6, 2]]
    """
    if a.ndim != 2 or b.ndim != 2 or c.ndim != 2:
        raise ValueError("minplus_update needs 2-D tiles")
    r, kk = a.shape
    if b.shape[0] != kk or c.shape != (r, b.shape[1]):
        raise ValueError(f"shapes do not chain: c {c.shape}, a {a.shape}, b {b.shape}")
    _check_dtype(c, a, b)
    s = b.shape[1]
    # Operands sharing memory with c are read as copies of their old values, exactly as
    # fw_inplace's phase 2 reads them, so that float results agree bit for bit with the
    # single-process solve (in exact arithmetic either way gives the same result). Other
    # blocks of C-contiguous arrays (stripes, panels) are read and written where they lie.
    if np.shares_memory(b, c) or _block_of(b) is None:
        b = np.array(b, order="C")
    if np.shares_memory(a, c) or _block_of(a) is None:
        a = np.array(a, order="C")
    target = _block_of(c)
    work, ci, cj = target if target is not None else (np.ascontiguousarray(c), 0, 0)
    if r and kk and s:
        a_block, b_block = _block_of(a), _block_of(b)
        assert a_block is not None and b_block is not None  # made C-contiguous above
        _relax(work, ci, cj, *a_block, *b_block, r, kk, s, *_kernel_args(c.dtype, negative))
    if target is None:
        c[...] = work
    return c


def _block_of(x: np.ndarray) -> tuple[np.ndarray, int, int] | None:
    """``(array, row, column)``: the C-contiguous 2-D array ``x`` is a block of, and where it
    starts; None for other layouts."""
    base = x if x.base is None else x.base
    if (not isinstance(base, np.ndarray) or base.ndim != 2 or not base.flags.c_contiguous
            or base.dtype != x.dtype or (x.size > 1 and base.strides != x.strides)):
        return None
    offset = (x.ctypes.data - base.ctypes.data) // x.itemsize
    return base, offset // base.shape[1], offset % base.shape[1]


def fw_inplace(d: np.ndarray, block: int = DEFAULT_BLOCK, negative: bool = False, progress=None) -> np.ndarray:
    """Blocked Floyd-Warshall on the start matrix ``d``, in place.

    Parameters
    ----------
    d : (n, n) C-contiguous ndarray, INF sentinel off the edges (`Graph.fw_matrix`)
    block : int
        Tile edge, any value >= 1 (need not divide n).
    negative : bool
        Weights may be negative: clamp at ``clamp_floor`` and stop early once a
        diagonal entry turns negative (a negative cycle; the caller raises).
    progress : bool or None
        Show a bar over rounds (None: only when stderr is a terminal).

    Returns
    -------
    d. Ctrl-C interrupts between rounds (d is then partially updated).

    Examples
    --------
    >>> d = np.array([[0, 3, 50], [50, 0, 4], [1, 50, 0]], dtype=np.int16)
    >>> fw_inplace(d, block=2, progress=False).tolist()
    [[0, 3, 7], [5, 0, 4], [1, 4, 0]]
    """
    if int(block) != block or block < 1:
        raise ValueError(f"block size must be a positive integer, got {block!r}")
    engine = CPUEngine(d.dtype, negative)
    engine.use(d)
    drive(engine, int(block), 0, progress)
    return d


class CPUEngine:
    """The CPU engine of the FW skeleton (`apsp.engine`): numpy arrays, the Numba kernels above.

    Tile kernels (``empty``, ``copy``, ``close_block``, ``minplus``, ``sync``) for the
    out-of-core stream and the distributed driver; the in-core fast path
    ``rounds`` runs each round as one parallel Numba call on a matrix in RAM.
    Big products are split by rows over ``threads`` threads (the kernels release the GIL).
    """

    kind = "cpu"
    early_cycle_check = True
    sync_for_progress = False
    resumes_anywhere = False
    #: the kernel wants the left factor with contiguous rows
    transposed_col_panels = False
    #: ragged tiles cost the Numba kernels nothing
    pads_tiles = False

    def __init__(self, dtype, negative: bool, threads: int | None = None, n: int = 0, whole_when_small: bool = False,
                 cutoff_band: tuple[int, int] | None = None):
        self.dtype = exactness.as_dtype(dtype)
        self.negative = bool(negative)
        #: `SolveOptions.cutoff_band`: `finalize` checks the result in the pass that marks it
        self.cutoff_band = cutoff_band
        #: a small matrix is solved by one plain loop nest (no rounds to checkpoint)
        self.whole_when_small = whole_when_small
        self.threads = max(1, threads or thread_count())  # as the rounds split (`run_split`)
        self.d: np.ndarray | None = None  # the in-core matrix, from use()
        self.n = n

    # -- tile kernels ----------------------------------------------------------------
    def empty(self, shape):
        return np.empty(shape, dtype=self.dtype)

    @staticmethod
    def transpose(x):
        return x.T

    @staticmethod
    def copy(dst, src) -> None:
        dst[...] = src

    def close_block(self, t) -> None:
        """Phase 1 exactly as the in-core rounds close a pivot (so that floats agree bit for bit)."""
        if t.size:
            close_block(t, self.negative)

    def minplus(self, c, a, b, parallel: bool = True) -> None:
        """``c = min(c, a (x) b)``; big products split by rows over the threads (``parallel``
        only where ``c`` overlaps neither factor's rows it splits)."""
        rows = c.shape[0]
        if c.size == 0 or a.shape[1] == 0:
            return
        # operands overlapping c are copied here, once, not by each thread: one copy at a time
        # (a thread's freed copy would stay in its own malloc arena, beyond the memory plan)
        if np.shares_memory(b, c):
            b = np.array(b, order="C")
        if np.shares_memory(a, c):
            a = np.array(a, order="C")
        work = max(1, c.shape[0] * c.shape[1] * a.shape[1])
        parts = min(self.threads, rows, max(1, work // (1 << 22))) if parallel else 1
        run_split(_minplus_rows, rows, c, a, b, self.negative, threads=parts)

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass

    # -- the in-core matrix --------------------------------------------------------------
    def use(self, d: np.ndarray) -> None:
        """Solve on ``d`` (C-contiguous, writeable, square) in place."""
        if d.ndim != 2 or d.shape[0] != d.shape[1]:
            raise ValueError(f"fw_inplace needs a square matrix, got shape {d.shape}")
        if not d.flags.c_contiguous or not d.flags.writeable:
            raise ValueError("fw_inplace needs a writeable C-contiguous matrix")
        if d.dtype != self.dtype:
            raise TypeError(f"matrix dtype {d.dtype}, engine dtype {self.dtype}")
        self.d, self.n = d, d.shape[0]

    def load(self, graph) -> None:
        self.use(graph.fw_matrix(self.dtype))

    def write_rows(self, i0: int, i1: int, rows: np.ndarray) -> None:
        if self.d is None:
            self.use(np.empty((self.n, self.n), dtype=self.dtype))
        assert self.d is not None
        self.d[i0:i1] = rows

    def read_rows(self, i0: int, i1: int) -> np.ndarray:
        assert self.d is not None
        return self.d[i0:i1]

    def rounds(self, block: int, start_vertex: int = 0):
        """One parallel Numba call per round (so Ctrl-C and the progress bar act between rounds)."""
        d, n = self.d, self.n
        if n == 0:
            return
        assert d is not None
        floor, inf = _kernel_args(d.dtype, self.negative)
        if self.whole_when_small and n <= SMALL_N and start_vertex == 0:
            # milliseconds either way, and this loop nest compiles in a fraction of the time
            _close_small(d, floor, inf)
            yield n
            return
        block = min(int(block), n)
        for k0 in range(start_vertex, n, block):
            k1 = min(k0 + block, n)
            _round(d, k0, k1, floor, inf)
            yield k1

    def negative_diagonal(self) -> np.ndarray:
        assert self.d is not None
        return np.flatnonzero(np.diagonal(self.d) < 0)

    def finalize(self) -> Finalized:
        assert self.d is not None
        suspect = exactness.finalize_checked(self.d, self.negative, self.cutoff_band)
        return Finalized(self.d, cutoff_suspected=suspect)


def _minplus_rows(c, a, b, negative, lo, hi) -> None:
    minplus_update(c[lo:hi], a[lo:hi], b, negative)


def available_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


# ---------------------------------------------------------------------------
# The solver
# ---------------------------------------------------------------------------

def solve(graph, opts: SolveOptions) -> SolveOutput:
    """Blocked Floyd-Warshall solver, registered as ``("fw", "cpu")``: the skeleton
    (`apsp.engine`) over `CPUEngine`.

    ``opts.block_size`` defaults to `DEFAULT_BLOCK`. With ``opts.successors``
    or ``opts.predecessors``, `apsp.cpu.paths.pointers_from_distances` recovers
    next-hop / predecessor matrices from the final distances.

    Examples
    --------
    >>> import numpy as np
    >>> from apsp.graph import Graph
    >>> from apsp.engine import SolveOptions, SolveRequest
    >>> g = Graph.from_dense(np.array([[0, 3, 0], [0, 0, 4], [1, 0, 0]]))
    >>> out = solve(g, SolveOptions(dtype=np.dtype(np.int32), successors=True,
    ...                          request=SolveRequest(progress=False)))
    >>> out.dist.tolist(), out.successors[0].tolist()
    ([[0, 3, 7], [5, 0, 4], [1, 4, 0]], [-9999, 1, 1])
    """
    dt = exactness.as_dtype(opts.dtype)
    want_paths = bool(opts.successors or opts.predecessors)
    if opts.request.checkpoint and want_paths:
        raise ValueError("checkpoints save distances only; solve paths without checkpoint= "
                         "(or use the GPU backend, which recovers paths after the distances)")
    engine = CPUEngine(dt, graph.has_negative_weights, n=graph.n, whole_when_small=not opts.request.checkpoint,
                       cutoff_band=opts.cutoff_band)
    out = run(graph, opts, engine, solver="fw-cpu", default_block=DEFAULT_BLOCK)
    if want_paths:
        from .paths import recover_pointers

        recover_pointers(out, graph, dt, opts)
    return out
