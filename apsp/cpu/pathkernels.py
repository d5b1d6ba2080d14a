"""Numba kernels behind `apsp.paths`: pointer matrices from the final distances, their
check, and the repair of the trees that fail it.

A pointer matrix is a forest of trees, one per *root*: a predecessor matrix
has one per source row ``r`` (``x -> pred[r, x]`` leads back to ``r``), a
successor matrix one per target column ``r`` (``x -> succ[x, r]`` leads on to
``r``). ``by_rows`` says which: entry ``x`` of root ``r`` is ``M[r, x]`` when
True, ``M[x, r]`` when False. Column roots are handled in groups of
``GROUP`` adjacent columns so that the entries they touch share cache lines
(no transposed copies needed).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

NO_VERTEX = -9999
_UNSET = -2
GROUP = 16


@njit(cache=True, nogil=True)
def _at(m, r, x, by_rows):
    return m[r, x] if by_rows else m[x, r]


@njit(cache=True, nogil=True)
def _put(m, r, x, by_rows, value):
    if by_rows:
        m[r, x] = value
    else:
        m[x, r] = value


@njit(cache=True, nogil=True)
def _classify(ptr, reachable, r, by_rows, state, walk):
    """Mark each vertex of root ``r``'s tree good (2: its walk reaches ``r``) or bad (3).

    Returns the number of bad vertices. ``state`` and ``walk`` are scratch arrays of length >= n.
    """
    n = ptr.shape[0]
    state[:n] = 0
    state[r] = 2
    nbad = 0
    for x0 in range(n):
        if state[x0] != 0 or not _at(reachable, r, x0, by_rows):
            continue
        top = 0
        x = x0
        outcome = 3
        while True:
            if state[x] >= 2:
                outcome = state[x]
                break
            if state[x] == 1:
                break  # came back to this walk: a loop
            state[x] = 1
            walk[top] = x
            top += 1
            p = _at(ptr, r, x, by_rows)
            if p != r and (p < 0 or p >= n or not _at(reachable, r, p, by_rows)):
                break  # unset, out of range or unreachable: broken
            x = p
        while top > 0:
            top -= 1
            state[walk[top]] = outcome
            if outcome == 3:
                nbad += 1
    return nbad


@njit(cache=True, parallel=True)
def check(ptr, reachable, by_rows):
    """``bad[r]``: some reachable ``x != r`` of root ``r`` does not reach ``r`` along ``ptr``."""
    n = ptr.shape[0]
    bad = np.zeros(n, dtype=np.bool_)
    for g in prange((n + GROUP - 1) // GROUP):
        state = np.empty(n, dtype=np.int8)
        walk = np.empty(n + 1, dtype=np.int64)
        for r in range(g * GROUP, min(g * GROUP + GROUP, n)):
            bad[r] = _classify(ptr, reachable, r, by_rows, state, walk) > 0
    return bad


@njit(cache=True, parallel=True)
def repair(ptr, reachable, dist, by_rows, roots, indptr, indices, weights, tol):
    """Re-point the bad vertices of each tree in ``roots``; return how many trees failed.

    A bad vertex ``x`` gets a good neighbour ``y`` (``indices[indptr[x]:indptr[x+1]]``,
    weight ``w``) with ``dist(r, y) + w == dist(r, x)`` within ``tol`` (``dist(r, .)``
    read like ``ptr``), and becomes good. Pointing only at good vertices cannot
    make a loop, and a bad vertex always has such a neighbour (the next vertex
    on a fewest-edge shortest path), so passes repeat until none is left; a
    tree fails only if float rounding hides every tight edge. Use out-edges
    for successors and in-edges for predecessors.
    """
    n = ptr.shape[0]
    failed = np.zeros(roots.shape[0], dtype=np.bool_)
    for q in prange(roots.shape[0]):
        r = roots[q]
        state = np.empty(n, dtype=np.int8)
        walk = np.empty(n + 1, dtype=np.int64)
        nbad = _classify(ptr, reachable, r, by_rows, state, walk)
        while nbad > 0:
            progress = False
            for x in range(n):
                if state[x] != 3:
                    continue
                dx = _at(dist, r, x, by_rows)
                for e in range(indptr[x], indptr[x + 1]):
                    y = indices[e]
                    if state[y] != 2:
                        continue
                    gap = _at(dist, r, y, by_rows) + weights[e] - dx
                    if -tol <= gap <= tol:
                        _put(ptr, r, x, by_rows, y)
                        state[x] = 2
                        nbad -= 1
                        progress = True
                        break
            if not progress:
                failed[q] = True
                break
    return failed.sum()


# ---------------------------------------------------------------------------
# Pointer matrices from final distances (no tracking during the solve)
# ---------------------------------------------------------------------------

#: columns per task of `successors_from_distances`: one task's rows of D stay in cache
COLUMN_BLOCK = 256


@njit(cache=True, parallel=True)
def successors_from_distances(d, reachable, indptr, nbr, w, tol, skip_zero, nonneg):
    """``succ[i, j]``: the first out-neighbour u of i (in ``nbr`` order) with
    ``w(i, u) + d[u, j] == d[i, j]`` (within ``tol``); ``NO_VERTEX`` for i == j or no path.

    Neighbours come sorted by weight (self-loops dropped), so the tight one is
    usually among the first few tried; each task scans them for a block of
    columns and stops once every column has its hop. Where float rounding
    leaves no neighbour within ``tol``, the one with the smallest gap is taken
    (`check` and `repair` then catch anything that loops). With ``skip_zero``
    zero-weight edges are not taken: those pairs stay ``_UNSET`` for `zero_edges_by_columns`.
    With ``nonneg`` (no negative weight) an edge heavier than every distance
    still open cannot be tight, and neither can the heavier ones after it.
    """
    n = d.shape[0]
    succ = np.empty((n, n), dtype=np.int32)
    blocks = (n + COLUMN_BLOCK - 1) // COLUMN_BLOCK
    for task in prange(n * blocks):
        i = task // blocks
        c0 = (task % blocks) * COLUMN_BLOCK
        c1 = min(c0 + COLUMN_BLOCK, n)
        todo = 0
        longest = d[i, c0]
        for j in range(c0, c1):
            if reachable[i, j] and j != i:
                succ[i, j] = _UNSET
                todo += 1
                longest = max(longest, d[i, j])
            else:
                succ[i, j] = NO_VERTEX
        for e in range(indptr[i], indptr[i + 1]):
            if todo == 0:
                break
            u = nbr[e]
            wu = w[e]
            if nonneg and wu > longest + tol:
                break
            if skip_zero and wu == 0:
                continue
            for j in range(c0, c1):
                if succ[i, j] == _UNSET and reachable[u, j]:
                    gap = wu + d[u, j] - d[i, j]
                    if -tol <= gap <= tol:
                        succ[i, j] = u
                        todo -= 1
        if todo > 0 and not skip_zero:
            for j in range(c0, c1):
                if succ[i, j] != _UNSET:
                    continue
                best = np.inf
                for e in range(indptr[i], indptr[i + 1]):
                    u = nbr[e]
                    if reachable[u, j]:
                        gap = abs(w[e] + d[u, j] - d[i, j])
                        if gap < best:
                            best = gap
                            succ[i, j] = u
    return succ


@njit(cache=True, parallel=True)
def predecessors_from_distances(d, reachable, in_indptr, in_nbr, in_w, tol, skip_zero, nonneg):
    """``pred[i, j]``: the first in-neighbour p of j (in ``in_nbr`` order) with
    ``d[i, p] + w(p, j) == d[i, j]`` (within ``tol``); like `successors_from_distances`,
    one task per source row (its row of D stays in cache)."""
    n = d.shape[0]
    pred = np.empty((n, n), dtype=np.int32)
    for i in prange(n):
        for j in range(n):
            pred[i, j] = NO_VERTEX
            if j == i or not reachable[i, j]:
                continue
            best = np.inf
            if skip_zero:
                pred[i, j] = _UNSET
            for e in range(in_indptr[j], in_indptr[j + 1]):
                p = in_nbr[e]
                if nonneg and in_w[e] > d[i, j] + tol and pred[i, j] != NO_VERTEX:
                    break  # sorted by weight: no later edge is tight either
                if not reachable[i, p] or (skip_zero and in_w[e] == 0):
                    continue
                gap = d[i, p] + in_w[e] - d[i, j]
                if -tol <= gap <= tol:
                    pred[i, j] = p
                    break
                if abs(gap) < best and not skip_zero:
                    best = abs(gap)
                    pred[i, j] = p
    return pred


@njit(cache=True, nogil=True)
def zero_cycles(zout_indptr, zout_nbr, zin_indptr, zin_nbr):
    """The strongly connected parts of the zero-weight edges with two vertices or more.

    Every vertex of such a part P is at the same distance to any target (the
    others are reachable at cost 0), so inside P one fixed pair of trees can
    route every walk: ``to_root[u]``, the next vertex from u towards P's root
    r, and ``from_root[x]``, the vertex before x on a walk from r to x (both
    along zero-weight edges of P; -1 for roots and vertices outside any P).
    Returns ``(to_root, from_root, part_ptr, members, roots)``: the members of
    part k are ``members[part_ptr[k]:part_ptr[k + 1]]``, its root ``roots[k]``.
    Kosaraju's two passes, O(n + zero-weight edges).
    """
    n = zout_indptr.shape[0] - 1
    seen = np.zeros(n, dtype=np.bool_)
    finished = np.empty(n, dtype=np.int32)
    stack = np.empty(n, dtype=np.int32)
    cursor = np.empty(n, dtype=np.int64)
    done = 0
    for s in range(n):  # pass 1: depth-first over out-edges, vertices in order of finishing
        if seen[s]:
            continue
        seen[s] = True
        top = 0
        stack[0] = s
        cursor[0] = zout_indptr[s]
        while top >= 0:
            v = stack[top]
            if cursor[top] < zout_indptr[v + 1]:
                w = zout_nbr[cursor[top]]
                cursor[top] += 1
                if not seen[w]:
                    seen[w] = True
                    top += 1
                    stack[top] = w
                    cursor[top] = zout_indptr[w]
            else:
                finished[done] = v
                done += 1
                top -= 1
    part = np.full(n, -1, dtype=np.int64)
    to_root = np.full(n, -1, dtype=np.int32)
    from_root = np.full(n, -1, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    starts = np.empty(n + 1, dtype=np.int64)
    roots = np.empty(n, dtype=np.int32)
    members = np.empty(n, dtype=np.int32)
    starts[0] = 0
    parts = 0
    kept = 0
    for k in range(n - 1, -1, -1):  # pass 2: backwards from the last finished, one part each
        r = finished[k]
        if part[r] >= 0:
            continue
        part[r] = parts
        tail = _tree_from(r, zin_indptr, zin_nbr, part, -1, parts, to_root, queue)
        if tail > 1:  # a single vertex is left to the level search
            for i in range(tail):
                members[starts[kept] + i] = queue[i]
            roots[kept] = r
            starts[kept + 1] = starts[kept] + tail
            _tree_from(r, zout_indptr, zout_nbr, part, parts, parts, from_root, queue)  # the walks out of r
            kept += 1
        parts += 1
    return to_root, from_root, starts[:kept + 1].copy(), members[:starts[kept]].copy(), roots[:kept].copy()


@njit(cache=True, nogil=True, inline="always")
def _tree_from(r, indptr, nbr, part, allowed, label, tree, queue):
    """Breadth-first from ``r`` along ``nbr`` to the vertices ``y != r`` with ``part[y] == allowed``
    and ``tree[y]`` unset: ``part[y] = label``, ``tree[y]`` the vertex ``y`` was reached from.
    Leaves ``r`` and the vertices reached in ``queue``; returns how many."""
    queue[0] = r
    head = 0
    tail = 1
    while head < tail:
        x = queue[head]
        head += 1
        for e in range(indptr[x], indptr[x + 1]):
            y = nbr[e]
            if part[y] == allowed and y != r and tree[y] < 0:
                part[y] = label
                tree[y] = x
                queue[tail] = y
                tail += 1
    return tail


@njit(cache=True, parallel=True)
def zero_edges_by_columns(succ, d, zin_indptr, zin_nbr, zout_indptr, zout_nbr, to_root, from_root,
                          part_ptr, members, roots):
    """Fill the ``_UNSET`` successors of each target column j through zero-weight edges.

    Such a vertex u has no tight edge of positive weight, so its shortest paths
    start with zero-weight edges among vertices at its own distance. Integer
    distances, non-negative weights; ``zin_*``/``zout_*`` are the zero-weight
    in- and out-edges, the rest comes from `zero_cycles`.

    First, inside each zero-weight strongly connected part with a vertex
    already pointed along a positive edge (an "anchor") or j itself: the walk
    from the part's root to that vertex is pointed along, every other vertex
    of the part at its next vertex towards the root. Walks then reach the
    walk from the root, or an anchor, and leave the part strictly downwards:
    no loop, at O(part size) per column. What is left (vertices whose zero
    edges lead out of their part) is filled by a search backwards over tight
    zero-weight in-edges from the pointed vertices next to them, each pointed
    at the vertex it was found from: walks stay level until a pointed vertex,
    so they cannot loop either.

    Each task copies ``GROUP`` adjacent columns of ``succ`` and ``d`` into
    contiguous rows first (whole cache lines read once), works there, where
    a column's entries stay in the core's cache, and writes ``succ`` back.
    """
    n = d.shape[0]
    groups = (n + GROUP - 1) // GROUP
    for task in prange(groups):
        c0 = task * GROUP
        width = min(GROUP, n - c0)
        col_succ = np.empty((width, n), dtype=succ.dtype)
        col_d = np.empty((width, n), dtype=d.dtype)
        for u in range(n):
            for c in range(width):
                col_succ[c, u] = succ[u, c0 + c]
                col_d[c, u] = d[u, c0 + c]
        queue = np.empty(n, dtype=np.int32)
        queued = np.zeros(n, dtype=np.bool_)
        for c in range(width):
            j = c0 + c
            cs = col_succ[c]
            cd = col_d[c]
            for k in range(roots.shape[0]):
                anchor = -1
                for i in range(part_ptr[k], part_ptr[k + 1]):
                    x = members[i]
                    if cs[x] >= 0 or x == j:
                        anchor = x
                        break
                if anchor < 0:
                    continue
                y = anchor
                while y != roots[k]:
                    x = from_root[y]
                    if cs[x] == _UNSET:
                        cs[x] = y
                    y = x
                for i in range(part_ptr[k], part_ptr[k + 1]):
                    x = members[i]
                    if cs[x] == _UNSET:
                        cs[x] = to_root[x]
            tail = 0
            for u in range(n):
                if cs[u] != _UNSET:
                    continue
                du = cd[u]
                for e in range(zout_indptr[u], zout_indptr[u + 1]):
                    v = zout_nbr[e]
                    if not queued[v] and cd[v] == du and (cs[v] >= 0 or v == j):
                        queued[v] = True
                        queue[tail] = v
                        tail += 1
            head = 0
            while head < tail:
                v = queue[head]
                head += 1
                dv = cd[v]
                for e in range(zin_indptr[v], zin_indptr[v + 1]):
                    u = zin_nbr[e]
                    if cs[u] == _UNSET and cd[u] == dv:
                        cs[u] = v
                        queue[tail] = u
                        tail += 1
            for i in range(tail):
                queued[queue[i]] = False
        for u in range(n):
            for c in range(width):
                succ[u, c0 + c] = col_succ[c, u]


@njit(cache=True, parallel=True)
def zero_edges_by_rows(pred, d, reachable, zout_indptr, zout_nbr):
    """Fill the ``_UNSET`` predecessors of each source row i through zero-weight edges
    (forwards from i and the anchors); see `zero_edges_by_columns`."""
    n = d.shape[0]
    for i in prange(n):
        queue = np.empty(n, dtype=np.int64)
        tail = 0
        for v in range(n):
            if v == i or (reachable[i, v] and pred[i, v] >= 0):
                queue[tail] = v
                tail += 1
        head = 0
        while head < tail:
            p = queue[head]
            head += 1
            dp = d[i, p]
            for e in range(zout_indptr[p], zout_indptr[p + 1]):
                v = zout_nbr[e]
                if pred[i, v] == _UNSET and d[i, v] == dp:
                    pred[i, v] = p
                    queue[tail] = v
                    tail += 1
