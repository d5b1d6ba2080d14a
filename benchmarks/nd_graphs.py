"""Sparse test graphs for the nested-dissection benchmarks: grids and k-nearest-neighbour graphs.

Both are undirected (each edge stored both ways, one weight), weights uniform in ``lo..hi``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _symmetric(n, u, v, w):
    keep = u != v
    u, v, w = u[keep], v[keep], w[keep]
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    key = lo * n + hi
    key, first = np.unique(key, return_index=True)
    lo, hi, w = lo[first], hi[first], w[first]
    a = sp.csr_matrix((np.concatenate([w, w]), (np.concatenate([lo, hi]), np.concatenate([hi, lo]))),
                      shape=(n, n))
    a.sort_indices()
    return a


def grid(side: int, lo: int = 1, hi: int = 100, seed: int = 0):
    """A side x side 4-neighbour grid, n = side^2, random integer weights lo..hi."""
    rng = np.random.default_rng(seed)
    idx = np.arange(side * side, dtype=np.int64).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = rng.integers(lo, hi + 1, size=len(u)).astype(np.int32)
    return _symmetric(side * side, u, v, w)


def knn(n: int, k: int = 6, lo: int = 1, hi: int = 100, seed: int = 0):
    """Random geometric graph: n points uniform in the unit square, each joined to its k nearest."""
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    _, nbr = cKDTree(pts).query(pts, k=k + 1)
    u = np.repeat(np.arange(n, dtype=np.int64), k)
    v = nbr[:, 1:].ravel().astype(np.int64)
    w = rng.integers(lo, hi + 1, size=len(u)).astype(np.int32)
    return _symmetric(n, u, v, w)
