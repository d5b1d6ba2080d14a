"""scipy's Floyd-Warshall loop, step for step, for the scipy drop-in where the loop order decides.

A predecessor is replaced only on a strict improvement, so where two shortest paths tie the
answer depends on the order of ``k``, ``i`` and ``j``; likewise which diagonal entries a
negative cycle leaves negative. This runs scipy's ``_floyd_warshall`` in float64 (the same
sums, so the same bits), with the rows of each step ``k`` split over threads: while
``dist[k, k]`` is 0, row and column ``k`` do not change during step ``k``, so the split is
exactly the sequential loop. Once a negative cycle makes ``dist[k, k]`` negative, they do, and
that step runs in one thread as scipy's loop is written (``dist[i, k]`` re-read at every ``j``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .threads import run_split

#: scipy's "no predecessor" marker
NULL_PREDECESSOR = -9999


@njit(cache=True, nogil=True)
def _step_rows(dist, pred, k, store_pred, in_order, lo, hi):
    """Rows ``lo..hi-1`` of step ``k``. ``in_order`` (None or True, pruned by Numba): after a
    negative cycle made ``dist[k, k]`` negative, scipy's loop as written, ``dist[i, k]`` re-read."""
    n = dist.shape[1]
    for i in range(lo, hi):
        dik = dist[i, k]  # fixed during step k while dist[k, k] is 0
        if dik == np.inf:
            continue
        for j in range(n):
            if in_order is not None:
                dik = dist[i, k]
            through = dik + dist[k, j]
            if through < dist[i, j]:
                dist[i, j] = through
                if store_pred:
                    pred[i, j] = pred[k, j]


def scipy_floyd_warshall(dist: np.ndarray, return_predecessors: bool) -> np.ndarray | None:
    """scipy's Floyd-Warshall in place on ``dist`` (float64, C order, inf = no edge, zero
    diagonal, already symmetrized for an undirected graph); the int32 predecessors, or None."""
    n = dist.shape[0]
    pred = np.full((n, n) if return_predecessors else (1, 1), NULL_PREDECESSOR, dtype=np.int32)
    if return_predecessors:
        rows, cols = np.nonzero(~np.isinf(dist))
        pred[rows, cols] = rows
        pred.flat[:: n + 1] = NULL_PREDECESSOR
    for k in range(n):
        if dist[k, k] < 0:
            _step_rows(dist, pred, np.int64(k), return_predecessors, True, 0, n)
        else:
            run_split(_step_rows, n, dist, pred, np.int64(k), return_predecessors, None)
    return pred if return_predecessors else None
