"""The kernels of `apsp.supernodal`'s elimination: a front's pivots closed (`eliminate_front`)
and the edges and children's Schur complements added into a front (`extend_add`,
`extend_add_block`) by an entry-wise minimum."""
from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def eliminate_front(front, nv, inf):
    """Floyd-Warshall with pivots ``0..nv-1`` on the whole square ``front``, in place."""
    m = front.shape[0]
    for k in range(nv):
        rowk = front[k]
        for i in range(m):
            x = front[i, k]
            if x < inf:
                ri = front[i]
                for j in range(m):
                    ri[j] = min(ri[j], x + rowk[j])


@njit(cache=True, nogil=True)
def extend_add(front, li, lj, w):
    """``front[li[e], lj[e]] = min(front[li[e], lj[e]], w[e])`` for every edge e."""
    for e in range(li.shape[0]):
        if w[e] < front[li[e], lj[e]]:
            front[li[e], lj[e]] = w[e]


@njit(cache=True, nogil=True)
def extend_add_block(front, at, s):
    """``front[at][:, at] = min(front[at][:, at], s)``: a child's Schur complement."""
    for i in range(at.shape[0]):
        fi = front[at[i]]
        si = s[i]
        for j in range(at.shape[0]):
            if si[j] < fi[at[j]]:
                fi[at[j]] = si[j]
