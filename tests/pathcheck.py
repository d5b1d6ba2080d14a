"""Shared checks for predecessor and successor matrices (scipy's convention: int32, -9999 = none)."""
from __future__ import annotations

import numpy as np

from apsp import exactness

NONE = -9999


def as_float(d):
    """Distances as float64 with inf for no path (whatever apsp's dtype)."""
    out = d.astype(np.float64)
    if d.dtype.kind != "f":
        out[d == exactness.unreachable_value(d.dtype)] = np.inf
    return out


def check_predecessors(pred, dist_float, weight):
    """Every reachable pair (i != j) names a last hop p with d(i,p) + w(p,j) == d(i,j).

    ``dist_float``: distances with inf for no path; ``weight``: dense weights, inf for no edge.
    """
    n = dist_float.shape[0]
    assert pred.shape == (n, n) and pred.dtype == np.int32
    reach = np.isfinite(dist_float) & ~np.eye(n, dtype=bool)
    assert (pred[~reach] == NONE).all()
    i, j = np.nonzero(reach)
    p = pred[i, j]
    assert ((p >= 0) & (p < n)).all()
    assert np.allclose(dist_float[i, p] + weight[p, j], dist_float[i, j])


def check_successors(succ, dist_float, weight):
    """Every reachable pair (i != j) names a first hop h with w(i,h) + d(h,j) == d(i,j)."""
    n = dist_float.shape[0]
    assert succ.shape == (n, n) and succ.dtype == np.int32
    reach = np.isfinite(dist_float) & ~np.eye(n, dtype=bool)
    assert (succ[~reach] == NONE).all()
    i, j = np.nonzero(reach)
    h = succ[i, j]
    assert ((h >= 0) & (h < n)).all()
    assert np.allclose(weight[i, h] + dist_float[h, j], dist_float[i, j])


def dense_weights(edges_src, edges_dst, weights, n):
    """Dense matrix of the lightest edge weight (inf where no edge); later repeats win, as in apsp."""
    w = np.full((n, n), np.inf)
    w[edges_src, edges_dst] = weights
    return w
