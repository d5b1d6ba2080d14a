"""Per-source reductions of shortest distances on the CPU, computed where the rows are produced.

Two row sources feed the same accumulators (one entry per source vertex):
``count`` (targets reached, the source itself included), ``total`` (sum of
the finite distances), ``ecc`` (the largest finite distance), ``harmonic``
(sum of 1/d over finite d != 0) and a distance histogram.

* `bfs_stats_tasks`: the bit-parallel BFS (`apsp.cpu.bfs`) with its ``stats``
  variant: a level's new vertices are counted per source as they are found,
  so no distance row is ever written (per thread: five n-long work arrays and
  the histogram);
* `reduce_rows` / `histogram_rows`: a k x n block of search rows
  (`apsp.cpu.searches.search_rows`: Dijkstra, Johnson, single BFS) reduced
  row by row, each row by one thread.

Integer sums are exact: a row's sum is kept in two int64 words (``total`` the
low part below 2^62, ``carry`` how many 2^62 went out of it), so no
distance sum wraps however large the weights. Float sums are compensated
(Neumaier), within an ulp or two of the exact sum.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bfs import _LOW_BIT_INDEX, WORD, _bfs_batch
from .threads import run_split

#: a row's integer sum moves 2^62 into its carry word before it could wrap
CARRY_UNIT = 1 << 62


@njit(cache=True, nogil=True)
def _bfs_stats_tasks(out_ptr, out_idx, in_ptr, in_idx, batches, ntasks, push_factor, targets,
                     counted, count, total, ecc, harmonic, hist, lo, hi):
    """Tasks ``lo..hi-1`` of ``ntasks``: task q runs its share of ``batches`` (64 sources each)
    and adds the distances from the sources marked in ``counted`` to ``hist[q]``."""
    n = in_ptr.shape[0] - 1
    ws_bits = np.empty((3, n), dtype=np.uint64)
    ws_lists = np.empty((2, n), dtype=np.int64)
    unused = np.empty((1, 1), dtype=np.int64)
    unused32 = np.empty((1, 1), dtype=np.int32)
    per_source = np.zeros(WORD, dtype=np.int64)
    nb = batches.shape[0]
    for q in range(lo, hi):
        stats = (per_source, count, total, ecc, harmonic, hist[q], targets, counted)
        for i in range(nb * q // ntasks, nb * (q + 1) // ntasks):
            s0 = batches[i] * WORD
            ns = min(WORD, n - s0)
            _bfs_batch(out_ptr, out_idx, in_ptr, in_idx, s0, ns, unused, np.int64(n), np.int64(-1),
                       np.int64(n + 1), unused32, unused32, False, False, _LOW_BIT_INDEX, push_factor,
                       ws_bits, ws_lists, unused, unused32, unused32, stats)


def bfs_stats_tasks(arrays, batches, push_factor, targets, counted, acc, hist) -> None:
    """The batches ``batches`` (sources ``64 b .. 64 b + 63``) on every thread, reduced into
    ``acc`` (count, total, ecc, harmonic; indexed by vertex) and, for the sources marked in
    ``counted``, ``hist`` (threads x n, summed by the caller)."""
    ntasks = min(hist.shape[0], len(batches))
    run_split(_bfs_stats_tasks, ntasks, *arrays, batches, ntasks, push_factor, targets, counted, *acc, hist)


@njit(cache=True, nogil=True, inline="always")
def _add_compensated(s, comp, x):
    """Neumaier's step: ``s + x`` and the running correction with the low bits it dropped."""
    y = s + x
    if abs(s) >= abs(x):
        return y, comp + ((s - y) + x)
    return y, comp + ((x - y) + s)


@njit(cache=True, nogil=True, inline="always")
def _row_extremes(row, unreachable, targets, t, c, top):
    """Whether target ``t`` counts, and the running largest distance with it."""
    d = row[t]
    if d == unreachable or not targets[t]:
        return False, top
    return True, (d if c == 0 or d > top else top)


@njit(cache=True, nogil=True)
def _reduce_integer_rows(block, unreachable, targets, count, total, carry, ecc, harmonic, lo, hi):
    """Integer rows ``lo..hi-1`` of ``block`` into entries ``lo..hi-1`` of the accumulators, each
    sum in two int64 words (a kernel of its own: Numba types one accumulator for both kinds of
    rows, and a float one would round integer sums past 2^53)."""
    n = block.shape[1]
    zero = block.dtype.type(0)
    for r in range(lo, hi):
        row = block[r]
        c = 0
        top = zero
        s = np.int64(0)
        words = 0
        h = 0.0
        hc = 0.0
        for t in range(n):
            counts, top = _row_extremes(row, unreachable, targets, t, c, top)
            if not counts:
                continue
            c += 1
            d = row[t]
            s += np.int64(d)
            if s >= CARRY_UNIT:
                s -= CARRY_UNIT
                words += 1
            elif s <= -CARRY_UNIT:
                s += CARRY_UNIT
                words -= 1
            if d != zero:
                h, hc = _add_compensated(h, hc, 1.0 / np.float64(d))
        count[r] = c
        ecc[r] = top
        harmonic[r] = h + hc
        total[r] = s
        carry[r] = words


@njit(cache=True, nogil=True)
def _reduce_float_rows(block, unreachable, targets, count, total, ecc, harmonic, lo, hi):
    """Float rows ``lo..hi-1`` of ``block`` into entries ``lo..hi-1`` of the accumulators
    (compensated sums)."""
    n = block.shape[1]
    zero = block.dtype.type(0)
    for r in range(lo, hi):
        row = block[r]
        c = 0
        top = zero
        s = 0.0
        comp = 0.0
        h = 0.0
        hc = 0.0
        for t in range(n):
            counts, top = _row_extremes(row, unreachable, targets, t, c, top)
            if not counts:
                continue
            c += 1
            d = np.float64(row[t])
            s, comp = _add_compensated(s, comp, d)
            if d != 0.0:
                h, hc = _add_compensated(h, hc, 1.0 / d)
        count[r] = c
        ecc[r] = top
        harmonic[r] = h + hc
        total[r] = s + comp


def reduce_rows(block, unreachable, targets, acc) -> None:
    """Each row of ``block`` (k x n search rows) into entry i of ``acc`` (count, total, carry, ecc,
    harmonic: k-long arrays; carry None for float rows), one thread per range of rows."""
    count, total, carry, ecc, harmonic = acc
    if carry is None:
        run_split(_reduce_float_rows, block.shape[0], block, unreachable, targets, count, total, ecc, harmonic)
    else:
        run_split(_reduce_integer_rows, block.shape[0], block, unreachable, targets, count, total, carry,
                  ecc, harmonic)


@njit(cache=True, nogil=True)
def _histogram_rows(block, unreachable, targets, ntasks, hist, lo, hi):
    """Task q of ``ntasks`` counts its share of ``block``'s finite distances into ``hist[q]``."""
    k, n = block.shape
    for q in range(lo, hi):
        out = hist[q]
        for r in range(k * q // ntasks, k * (q + 1) // ntasks):
            row = block[r]
            for t in range(n):
                d = row[t]
                if d != unreachable and targets[t]:
                    out[d] += 1


def histogram_rows(block, unreachable, targets, hist) -> None:
    """The finite distances of ``block`` (integers in ``0..hist.shape[1]-1``) counted into
    ``hist`` (threads x bins, summed by the caller)."""
    ntasks = min(hist.shape[0], block.shape[0])
    run_split(_histogram_rows, ntasks, block, unreachable, targets, ntasks, hist)
