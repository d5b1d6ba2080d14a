"""Nested-dissection Floyd-Warshall on the CPU: the round engine in Numba and the solver.

Each round of the schedule (`apsp.dissection`) works on the layout matrix in
place: close the pivot tile (`apsp.cpu.blocked`'s phase 1), update the pivot
row and column panels over the round's ranges (phase 2, the column panel
transposed into a buffer so its rows are long), then the min-plus products of
every pair of ranges, pivot rows and columns excluded (phase 3), cut into
``STRIP_ROWS x strip`` pieces. Phases 2 and 3 run on Python threads over
``nogil`` kernels, their pieces handed out in small ranges to whichever thread
is free (`apsp.cpu.threads.run_split`), not in ``parallel=True``: OpenMP's
threads spin at each of the many rounds' barriers, and with one core held by
another process a round waited for the preempted thread (4-10x the one-thread
time, benchmarks/busy_machine.py). The products are
`apsp.cpu.blocked`'s unrolled kernels, so the inner loops and the overflow and
clamping conventions are those of dense blocked FW.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import exactness
from ..dissection import DEFAULTS, ScheduleEngine, layout_edges, solve_with
from ..engine import Finalized, SolveOptions, SolveOutput
from .blocked import PANEL_BYTES, STRIP_BYTES, STRIP_ROWS, _close, _kernel_args, _panel_piece, _relax
from .threads import run_split

#: pivot round width on the CPU; nodes are not padded (the kernels take any shape), so the
#: work does not depend on it, only the passes over memory (benchmarks/nd_cpu.py, BENCHMARKS.md)
#: leaf size of the dissection on the CPU: on a 100 x 100 grid 500 needs 1.74e10 updates,
#: 1000 2.09e10, 2000 3.31e10 (benchmarks/nd_counts.py --pad 1)
DEFAULT_TILE, DEFAULT_LEAF = DEFAULTS["cpu"]


@njit(cache=True, nogil=True)
def _panel_tasks(d, pivot, pivot_t, k0, k1, panels, floor, inf, t0, t1):
    """Phase 2 of a round: the panel pieces ``t0..t1-1`` of ``panels`` (kind, lo, hi)."""
    for t in range(t0, t1):
        _panel_piece(d, pivot, pivot_t, k0, k1, panels[t, 0] == 1, panels[t, 1], panels[t, 2], floor, inf)


@njit(cache=True, nogil=True)
def _product_tasks(d, k0, k1, rows, cols, floor, inf, t0, t1):
    """Phase 3 of a round: the ``rows x cols`` pieces ``t0..t1-1`` ((lo, hi) each), row-major."""
    m = k1 - k0
    ncols = cols.shape[0]
    for t in range(t0, t1):
        ti = np.int64(t) // ncols
        tj = np.int64(t) % ncols
        i0, i1 = rows[ti, 0], rows[ti, 1]
        j0, j1 = cols[tj, 0], cols[tj, 1]
        _relax(d, i0, j0, d, i0, k0, d, k0, j0, i1 - i0, m, j1 - j0, floor, inf)


#: a round's pieces are handed out in this many ranges a thread, to whichever thread is free
#: (`apsp.cpu.threads.run_split`): a thread another process preempts holds up a round by one range
CHUNKS_PER_THREAD = 8


def _round(d, k0, k1, panels, rows, cols, floor, inf):
    """One pivot round: phase 1 on a copy of the pivot tile (as dense blocked FW), phase 2 over
    ``panels`` (kind, lo, hi), phase 3 over ``rows x cols`` pieces ((lo, hi) each), each phase's
    pieces split over threads (`run_split`)."""
    pivot = np.array(d[k0:k1, k0:k1])
    _close(pivot, floor, inf)
    d[k0:k1, k0:k1] = pivot
    pivot_t = np.ascontiguousarray(pivot.T)
    run_split(_panel_tasks, panels.shape[0], d, pivot, pivot_t, k0, k1, panels, floor, inf,
              chunks_per_thread=CHUNKS_PER_THREAD)
    run_split(_product_tasks, rows.shape[0] * cols.shape[0], d, k0, k1, rows, cols, floor, inf,
              chunks_per_thread=CHUNKS_PER_THREAD)


def _pieces(ranges, k0, k1, width) -> np.ndarray:
    """The ranges minus ``k0:k1``, cut every ``width``: an (m, 2) array of (lo, hi)."""
    out = []
    for a, b in ranges:
        for lo, hi in ((a, min(b, k0)), (max(a, k1), b)):
            for s in range(lo, hi, width):
                out.append((s, min(s + width, hi)))
    return np.array(out, dtype=np.int64).reshape(-1, 2)


class Engine(ScheduleEngine):
    """The CPU engine: the layout matrix in host memory (nodes unpadded, so the layout is a
    permutation of the vertices), each round's phases split over threads (`_round`)."""

    kind = "cpu"
    sync_for_progress = False

    def __init__(self, nd, dtype, tile: int, negative: bool):
        super().__init__(nd, negative)
        assert nd.size == nd.n  # nodes unpadded on the CPU: the layout is a permutation of the vertices
        self.dtype = np.dtype(dtype)
        self.tile = tile
        self.args = _kernel_args(self.dtype, negative)
        self.panel_cols = max(PANEL_BYTES // self.dtype.itemsize, 1)
        self.strip_cols = max(STRIP_BYTES // self.dtype.itemsize, 1)
        self.d: np.ndarray | None = None  # the layout matrix, from load()

    def load(self, graph) -> None:
        size = self.nd.size
        self.d = np.empty((size, size), dtype=self.dtype)
        rows, cols, w = layout_edges(graph, self.nd)
        _start_matrix(self.d, rows, cols, w.astype(self.dtype), exactness.inf_value(self.dtype))

    def pivots(self, a, b, ranges):
        for k0 in range(a, b, self.tile):
            k1 = min(k0 + self.tile, b)
            panel = _pieces(ranges, k0, k1, self.panel_cols)
            panels = np.c_[np.repeat(np.arange(2, dtype=np.int64), len(panel)), np.tile(panel, (2, 1))]
            rows = _pieces(ranges, k0, k1, STRIP_ROWS)
            _round(self.d, k0, k1, panels, rows, _pieces(ranges, k0, k1, self.strip_cols), *self.args)

    def layout_diagonal(self) -> np.ndarray:
        assert self.d is not None
        return np.diagonal(self.d)

    def sync(self) -> None:
        pass

    def finalize(self) -> Finalized:
        """The distances in vertex order (in place), unreachable pairs marked (floats: inf already)."""
        assert self.d is not None
        inf = exactness.inf_value(self.dtype)
        limit = None if self.dtype.kind == "f" else inf // 2 if self.negative else inf - 1
        return Finalized(unpermute_inplace(self.d, self.nd.position, limit, exactness.unreachable_value(self.dtype)))


@njit(cache=True, parallel=True)
def _start_matrix(d, rows, cols, w, inf):
    """INF everywhere, the edges, ``min(0, w_ii)`` on the diagonal (padding vertices: 0)."""
    n = d.shape[0]
    for i in prange(n):
        d[i, :] = inf
        d[i, i] = 0
    for e in range(len(rows)):
        if rows[e] == cols[e]:
            d[rows[e], cols[e]] = min(w[e], 0)
        else:
            d[rows[e], cols[e]] = w[e]


@njit(cache=True, parallel=True)
def _permute_columns(d, position, limit, unreachable):
    """Each row in place: ``row[j] = row[position[j]]``, entries above ``limit`` ``unreachable``."""
    n = d.shape[0]
    for i in prange(n):
        row = d[i]
        tmp = row.copy()
        for j in range(n):
            v = tmp[position[j]]
            if v > limit:
                v = unreachable
            row[j] = v


@njit(cache=True)
def _permute_rows(d, position):
    """Rows in place: ``new row i = old row position[i]``, cycle by cycle with one row of scratch."""
    # rows copied element by element: a whole-row assignment makes Numba compile its
    # shape-mismatch error message (about 2 s of the first run)
    n = d.shape[0]
    width = d.shape[1]
    done = np.zeros(n, dtype=np.bool_)
    for start in range(n):
        if done[start] or position[start] == start:
            continue
        buf = d[start].copy()
        i = start
        while True:
            done[i] = True
            j = position[i]
            if j == start:
                for c in range(width):
                    d[i, c] = buf[c]
                break
            for c in range(width):
                d[i, c] = d[j, c]
            i = j


def unpermute_inplace(d: np.ndarray, position: np.ndarray, limit=None, unreachable=0) -> np.ndarray:
    """``d[i, j] = d_old[position[i], position[j]]`` in place (``position`` a permutation of
    ``0..n-1``); entries above ``limit`` (None: none) become ``unreachable``."""
    top = np.inf if d.dtype.kind == "f" else np.iinfo(d.dtype).max
    _permute_columns(d, position, d.dtype.type(top if limit is None else limit), d.dtype.type(unreachable))
    _permute_rows(d, position)
    return d


def solve(graph, opts: SolveOptions) -> SolveOutput:
    """Nested-dissection Floyd-Warshall, registered as ``("nd-fw", "cpu")``.

    ``opts.block_size`` is the tile (default `DEFAULT_TILE`); ``leaf_size=`` (backend
    option) the dissection's leaf size. Exact: equal to dense Floyd-Warshall.

    Examples
    --------
    >>> import numpy as np
    >>> from apsp.graph import Graph
    >>> from apsp.engine import SolveRequest
    >>> g = Graph.from_dense(np.array([[0, 3, 0], [0, 0, 4], [1, 0, 0]]))
    >>> solve(g, SolveOptions(dtype=np.dtype(np.int32), request=SolveRequest(progress=False))).dist.tolist()
    [[0, 3, 7], [5, 0, 4], [1, 4, 0]]
    """
    dt = exactness.as_dtype(opts.dtype)
    negative = graph.has_negative_weights
    result = solve_with(graph, opts, "cpu", lambda nd, tile: Engine(nd, dt, tile, negative))[0]
    if opts.successors or opts.predecessors:
        from .paths import recover_pointers

        recover_pointers(result, graph, dt, opts)
    return result
