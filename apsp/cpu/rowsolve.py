"""The CPU engine of `apsp.supernodal`: the row solve (the elimination's front kernels are in
`apsp.cpu.fronts`).

`solve_block` runs the upward and downward passes of one block of sources through the whole
tree in one kernel call (no Python per node); `rows_stats` splits sorted sources over threads
(`run_split`: each thread its own blocks and its own k x n buffer, no barriers), reduces each
finished block into the statistics' accumulators (`apsp.cpu.reductions`' row kernels) and drops
it; `rows` returns the rows themselves. Inner loops run over a node's own vertices, a contiguous
range of the layout, so they vectorize.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from .reductions import CARRY_UNIT, _add_compensated
from .threads import run_split, thread_count

if TYPE_CHECKING:
    from ..engine import SolveOptions


@njit(cache=True, nogil=True)
def solve_block(start, own_start, end, bnd, boff, clo_t, coff, up_t, down_t, poff, src, d, tmp, inf):
    """Distances from the sources at sorted layout positions ``src`` as columns: ``d[p, i]`` is
    the distance from source i to layout position p (``d``: size x k, each source a lane of the
    inner loops). The upward pass over the nodes whose subtree holds a source, then the downward
    pass over every node. The factors come transposed (`Packed`): ``clo_t`` |V| x |V| (row j:
    closure column j), ``up_t`` |B| x |V|, ``down_t`` |V| x |B|. ``tmp``: scratch of the widest
    node x k."""
    k = src.shape[0]
    size = d.shape[0]
    nodes = start.shape[0]
    kind = d.dtype.type
    for p in range(size):
        row = d[p]
        for i in range(k):
            row[i] = inf
    for i in range(k):
        d[src[i], i] = 0
    for t in range(nodes):
        r0 = np.searchsorted(src, start[t])
        r1 = np.searchsorted(src, end[t])
        if r0 >= r1:
            continue
        a = own_start[t]
        nv = end[t] - a
        b0 = boff[t]
        nb = boff[t + 1] - b0
        c0 = coff[t]
        p0 = poff[t]
        for j in range(nv):  # d[V, sources] = closure^T (x) d[V, sources]
            acc = tmp[j, r0:r1]
            for i in range(r1 - r0):
                acc[i] = inf
            for q in range(nv):
                c = clo_t[c0 + j * nv + q]
                if c < inf:
                    col = d[a + q, r0:r1]
                    for i in range(r1 - r0):
                        acc[i] = min(acc[i], kind(col[i] + c))
        for j in range(nv):
            acc = tmp[j, r0:r1]
            own = d[a + j, r0:r1]
            for i in range(r1 - r0):
                own[i] = acc[i]
        for jb in range(nb):  # d[B] = min(d[B], up^T (x) d[V])
            out = d[bnd[b0 + jb], r0:r1]
            for q in range(nv):
                u = up_t[p0 + jb * nv + q]
                if u < inf:
                    col = d[a + q, r0:r1]
                    for i in range(r1 - r0):
                        out[i] = min(out[i], kind(col[i] + u))
    for t in range(nodes - 1, -1, -1):
        a = own_start[t]
        nv = end[t] - a
        b0 = boff[t]
        nb = boff[t + 1] - b0
        p0 = poff[t]
        for j in range(nv):  # d[V] = min(d[V], down^T (x) d[B])
            p = a + j
            for q in range(nb):
                w = down_t[p0 + j * nb + q]
                if w < inf:
                    b = bnd[b0 + q]
                    for i in range(k):  # the sum in the dtype (it fits: both <= INF): no widening
                        d[p, i] = min(d[p, i], kind(d[b, i] + w))


@njit(cache=True, nogil=True)
def reduce_integer_columns(d, inf, position, targets, count, total, carry, ecc, harmonic):
    """The k sources' columns of ``d`` (size x k, layout rows) into their accumulators, targets
    in vertex order (the order `apsp.cpu.reductions` sums rows in, so the sums agree bit for bit),
    each sum in two int64 words as there. Branch-free per lane so that the lanes vectorize: an
    unreachable target adds 0 to every sum, which leaves a compensated sum exactly as it was."""
    k = d.shape[1]
    c = np.zeros(k, dtype=np.int64)
    s = np.zeros(k, dtype=np.int64)
    words = np.zeros(k, dtype=np.int64)
    top = np.zeros(k, dtype=np.int64)
    h = np.zeros(k)
    hc = np.zeros(k)
    for v in range(position.shape[0]):
        if not targets[v]:
            continue
        col = d[position[v], :k]
        for i in range(k):
            x = np.int64(col[i])
            ok = x != inf
            x = x if ok else np.int64(0)
            c[i] += 1 if ok else 0
            t = s[i] + x
            over = t >= CARRY_UNIT
            s[i] = t - CARRY_UNIT if over else t
            words[i] += 1 if over else 0
            top[i] = max(top[i], x)
            inv = 1.0 / np.float64(x) if x != 0 else 0.0
            a = h[i]
            y = a + inv
            hc[i] += ((a - y) + inv) if abs(a) >= abs(inv) else ((inv - y) + a)
            h[i] = y
    for i in range(k):
        count[i] = c[i]
        total[i] = s[i]
        carry[i] = words[i]
        ecc[i] = top[i]
        harmonic[i] = h[i] + hc[i]


@njit(cache=True, nogil=True)
def reduce_float_columns(d, inf, position, targets, count, total, ecc, harmonic):
    """Float columns of ``d`` into their accumulators (compensated sums, targets in vertex order)."""
    k = d.shape[1]
    s = np.zeros(k)
    sc = np.zeros(k)
    h = np.zeros(k)
    hc = np.zeros(k)
    for v in range(position.shape[0]):
        if not targets[v]:
            continue
        col = d[position[v], :k]
        for i in range(k):
            x = np.float64(col[i])
            if col[i] != inf:
                count[i] += 1
                s[i], sc[i] = _add_compensated(s[i], sc[i], x)
                if x > ecc[i]:
                    ecc[i] = x
                if x != 0.0:
                    h[i], hc[i] = _add_compensated(h[i], hc[i], 1.0 / x)
    for i in range(k):
        total[i] = s[i] + sc[i]
        harmonic[i] = h[i] + hc[i]


@njit(cache=True, nogil=True)
def histogram_columns(d, inf, position, targets, hist):
    """Count the finite distances of ``d``'s columns to the targets into ``hist``."""
    k = d.shape[1]
    for v in range(position.shape[0]):
        if targets[v]:
            col = d[position[v], :k]
            for i in range(k):
                if col[i] != inf:
                    hist[col[i]] += 1


def _scratch(f, k: int) -> np.ndarray:
    nd = f.nd
    widest = int((nd.end - nd.own_start).max(initial=0))
    return np.empty((max(1, widest), k), dtype=f.dtype)


def rows(f, positions: np.ndarray, block_rows: int = 64, columns: np.ndarray | None = None) -> np.ndarray:
    """Rows of the sources at layout positions ``positions`` (any order), ``f.inf`` for 'no path';
    blocks of ``block_rows`` sorted sources over the threads. Columns in layout order, or those
    ``columns`` lists (`Dissection.position`: vertex order), written straight into the result."""
    positions = np.asarray(positions, dtype=np.int64)
    order = np.argsort(positions, kind="stable")
    srt = positions[order]
    cols = np.arange(f.nd.size, dtype=np.int64) if columns is None else np.asarray(columns, dtype=np.int64)
    out = np.empty((len(srt), len(cols)), dtype=f.dtype)
    arrays = f.packed.arrays()
    inf = f.inf
    nblocks = -(-len(srt) // block_rows)

    def work(lo, hi):
        d = np.empty((f.nd.size, block_rows), dtype=f.dtype)
        tmp = _scratch(f, block_rows)
        for blk in range(lo, hi):
            r0, r1 = blk * block_rows, min(len(srt), (blk + 1) * block_rows)
            solve_block(*arrays, srt[r0:r1], d, tmp, inf)
            out[order[r0:r1]] = d[cols, :r1 - r0].T

    if nblocks:
        run_split(work, nblocks)
    return out


def rows_stats(f, positions: np.ndarray, vertex_position: np.ndarray, targets: np.ndarray, histogram: bool,
               block_rows: int, threads: int | None = None, max_bins: int = 1 << 24, on_block=None):
    """The statistics' accumulators of the sources at layout positions ``positions`` (in that
    order), distances counted to the vertices where ``targets`` (vertex order) is true
    (``vertex_position``: each vertex's layout position): ``((count, total, carry, ecc,
    harmonic), histogram or None)``; carry None for float distances. Each thread solves its
    blocks of ``block_rows`` sorted sources in its own buffer, reduces them and drops them. A
    histogram of more than ``max_bins`` bins is refused (`ValueError`). ``on_block(rows)`` is
    called after each block (a progress bar); an error or Ctrl-C in one thread stops the others
    after their current block."""
    positions = np.asarray(positions, dtype=np.int64)
    order = np.argsort(positions, kind="stable")
    srt = positions[order]
    k = len(srt)
    integer = f.dtype.kind in "iu"
    kept = np.int64 if integer else np.float64
    count, total, ecc, harmonic = (np.zeros(k, dtype=t) for t in (np.int64, kept, kept, np.float64))
    carry = np.zeros(k, dtype=np.int64) if integer else None
    arrays = f.packed.arrays()
    inf = f.inf
    block_rows = max(1, min(block_rows, k))
    nblocks = -(-k // block_rows)
    threads = min(threads or thread_count(), max(nblocks, 1))
    hists: list = []  # one per thread, appended when it finishes
    stopped: list = []

    def work(lo, hi):
        try:
            blocks(lo, hi)
        except BaseException:
            stopped.append(True)
            raise

    def blocks(lo, hi):
        d = np.empty((f.nd.size, block_rows), dtype=f.dtype)
        tmp = _scratch(f, block_rows)
        hist = np.zeros(1, dtype=np.int64)
        for blk in range(lo, hi):
            if stopped:
                return
            r0, r1 = blk * block_rows, min(k, (blk + 1) * block_rows)
            cols = d[:, :r1 - r0]
            solve_block(*arrays, srt[r0:r1], d, tmp, inf)
            if carry is not None:
                reduce_integer_columns(cols, inf, vertex_position, targets, count[r0:r1], total[r0:r1],
                                       carry[r0:r1], ecc[r0:r1], harmonic[r0:r1])
            else:
                reduce_float_columns(cols, inf, vertex_position, targets, count[r0:r1], total[r0:r1],
                                     ecc[r0:r1], harmonic[r0:r1])
            if histogram:
                bins = int(ecc[r0:r1].max(initial=0)) + 1
                if bins > max_bins:
                    raise ValueError(f"histogram=True: a distance of {bins - 1} needs more than "
                                     f"{max_bins} bins; leave the histogram out")
                if bins > len(hist):
                    hist = np.pad(hist, (0, bins - len(hist)))
                histogram_columns(cols, inf, vertex_position, targets, hist)
            if on_block is not None:
                on_block(r1 - r0)
        hists.append(hist)

    if nblocks:
        run_split(work, nblocks, threads=threads)
    back = np.empty(k, dtype=np.int64)
    back[order] = np.arange(k)
    acc = tuple(None if a is None else a[back] for a in (count, total, carry, ecc, harmonic))
    total_hist = None
    if histogram:
        total_hist = np.zeros(max((len(h) for h in hists), default=1), dtype=np.int64)
        for h in hists:
            total_hist[:len(h)] += h
    return acc, total_hist


def solve(graph, opts: SolveOptions):
    """Method nd-rows: rows of ``opts.sources`` (None: every vertex) from the nested dissection's
    factors (distances only; non-negative weights), in ``opts.dtype``."""
    from .. import exactness
    from ..dissection import plan
    from ..engine import SolveOutput
    from ..supernodal import ROWS_LEAF, eliminate

    if opts.predecessors or opts.successors:
        raise ValueError("method 'nd-rows' computes distances only; for paths use method 'dijkstra' "
                         "or leave the method to the plan")
    if graph.has_negative_weights:
        raise ValueError("method 'nd-rows' needs non-negative weights; use method='johnson' (or 'fw')")
    dt = np.dtype(opts.dtype if opts.dtype is not None else np.int32)
    n = graph.n
    sources = np.arange(n, dtype=np.int64) if opts.sources is None else np.asarray(opts.sources, dtype=np.int64)
    t0 = time.perf_counter()
    nd = plan(graph, 1, ROWS_LEAF, 1)
    t1 = time.perf_counter()
    f = eliminate(graph, dt, nd)
    t2 = time.perf_counter()
    dist = rows(f, nd.position[sources], columns=nd.position) if n else np.zeros((len(sources), 0), dtype=dt)
    dist = exactness.finalize_unreachable(dist, False)
    t3 = time.perf_counter()
    return SolveOutput(dist=dist, timings={"order": t1 - t0, "eliminate": t2 - t1, "compute": t3 - t2},
                       info={"tree_nodes": nd.nodes, "factor_bytes": f.nbytes, "searches": int(len(sources))})
