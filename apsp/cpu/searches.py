"""Single-source searches on a CSR graph, and a parallel driver running many of them.

* `bfs_row`: breadth-first search (every weight 1);
* `dijkstra_row`: Dijkstra with a lazy binary heap (non-negative weights);
  `dijkstra_pair` the bidirectional search for one pair;
  `dijkstra_row_packed` the same with one-int64 entries in a 4-ary heap, for
  distances below 2^31;
  `bucket_row` the same with a bucket queue (Dial) for small whole-number
  weights, which gives way to the heap where its scan would cost more;
* `spfa`: Bellman-Ford with a FIFO queue (negative weights), which names a
  negative cycle when one is reachable;
* Johnson: `potentials` (one SPFA from a virtual source joined to every
  vertex) make every reduced weight ``w(u, v) + h(u) - h(v)`` non-negative, then
  Dijkstra runs on the reduced weights and the distances are shifted back.

Distances are computed and stored in the dtype reported (int16, int32, int64,
float32, float64), never through float64, so integer results are exact
however large. The caller picks a dtype that holds every distance (see
`apsp.exactness`); then a tentative distance ``d(u) + w`` cannot overflow:
settled distances are at most the bound and the sum is taken in 64 bits.

`search_rows` runs one search per source, the sources spread over threads
(`apsp.cpu.threads`), each writing its row of a k x n block (plus predecessor
and first-hop rows on request). It calls the kernel for a chunk of sources at
a time, sized to take a fraction of a second, so Ctrl-C (and SIGTERM, which
the CLI turns into Ctrl-C) stops it between chunks.

The solvers of methods "dijkstra" and "johnson" (and of BFS rows for a few sources) are
`solve_dijkstra`, `solve_johnson` and `solve_bfs_rows`: one search per source, in parallel; Johnson
reweights with one Bellman-Ford first, so it also takes negative weights (and raises
`NegativeCycleError` naming a negative cycle, a negative self-loop included).

>>> import apsp
>>> apsp.shortest_paths([(0, 1, 4), (1, 2, 1), (0, 2, 7)], method="dijkstra").distances[0].tolist()
[0, 4, 5]
>>> import numpy as np, scipy.sparse as sp
>>> csr = sp.csr_matrix(np.array([[0, 4, 7], [0, 0, 1], [0, 0, 0]]))
>>> g = SearchGraph.from_csr(csr, np.int32)
>>> search_rows(g, np.array([0, 1]), "dijkstra").dist.tolist()
[[0, 4, 5], [2147483647, 0, 1]]
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from .. import exactness
from ..engine import SolveOptions, SolveOutput
from .threads import run_split, thread_count

if TYPE_CHECKING:
    from ..errors import NegativeCycleError

#: scipy's "no vertex" marker in predecessor (and apsp's in successor) rows
NO_VERTEX = -9999
#: seconds one chunk of sources should take: short enough for Ctrl-C to land promptly
CHUNK_SECONDS = 0.25
#: the bucket queue is used up to this many buckets (largest whole-number weight + 1)
MAX_BUCKETS = 1 << 16


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------

@njit(cache=True, nogil=True, inline="always")
def _heap_pop(keys, verts, size):
    """Remove the root of the binary heap ``keys``/``verts`` of ``size`` entries; return the new size."""
    size -= 1
    last_key = keys[size]
    last_vert = verts[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        kc = keys[c]
        if c + 1 < size and keys[c + 1] < kc:
            c += 1
            kc = keys[c]
        if kc >= last_key:
            break
        keys[i] = kc
        verts[i] = verts[c]
        i = c
    keys[i] = last_key
    verts[i] = last_vert
    return size


@njit(cache=True, nogil=True, inline="always")
def _heap_push(keys, verts, size, key, v):
    """Add (key, v) to the binary heap of ``size`` entries; return the new size."""
    i = size
    while i > 0:
        p = (i - 1) >> 1
        if keys[p] <= key:
            break
        keys[i] = keys[p]
        verts[i] = verts[p]
        i = p
    keys[i] = key
    verts[i] = v
    return size + 1


@njit(cache=True, nogil=True, inline="always")
def _start_row(s, dist, pred, hop, want_pred, want_hop, unreachable):
    """A search's start: every vertex unreached and unlabelled, ``s`` at distance 0."""
    for v in range(dist.shape[0]):
        dist[v] = unreachable
    if want_pred:
        pred[:] = NO_VERTEX
    if want_hop:
        hop[:] = NO_VERTEX
    dist[s] = 0


@njit(cache=True, nogil=True, inline="always")
def _label(v, u, s, pred, hop, want_pred, want_hop):
    """``v`` reached from ``u``: its predecessor, and its first hop on the way from ``s``, where asked for."""
    if want_pred:
        pred[v] = u
    if want_hop:
        hop[v] = v if u == s else hop[u]


@njit(cache=True, nogil=True)
def dijkstra_row(indptr, indices, weights, s, target, dist, pred, hop, want_pred, want_hop,
                 unreachable, heap_keys, heap_verts):
    """Dijkstra from ``s`` into ``dist`` (length n, ``unreachable`` where no path).

    ``pred[v]``: the vertex before v; ``hop[v]``: the vertex after s, on the
    tree path to v (``NO_VERTEX`` for s and unreached vertices). Stops once
    ``target`` is settled (``target < 0``: never). The binary heap holds
    (distance, vertex) in two arrays of length m + 1 and is lazy: a vertex is
    pushed again on each improvement and stale entries are skipped when
    popped (measured faster than decrease-key with a position array).
    Returns how many vertices were settled.
    """
    _start_row(s, dist, pred, hop, want_pred, want_hop, unreachable)
    heap_keys[0] = 0
    heap_verts[0] = s
    size = 1
    settled = 0
    while size > 0:
        du = heap_keys[0]
        u = heap_verts[0]
        size = _heap_pop(heap_keys, heap_verts, size)
        if du > dist[u]:
            continue  # stale: u was pushed again with a smaller distance
        settled += 1
        if u == target:
            break
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = du + weights[e]
            if nd < dist[v]:
                dist[v] = nd
                _label(v, u, s, pred, hop, want_pred, want_hop)
                size = _heap_push(heap_keys, heap_verts, size, nd, v)
    return settled


#: children per node of `dijkstra_row_packed`'s heap (4 measured faster than 2: a shallower sift-down)
HEAP_ARITY = 4


@njit(cache=True, nogil=True)
def dijkstra_row_packed(indptr, indices, weights, s, target, dist, pred, hop, want_pred, want_hop,
                        unreachable, heap):
    """`dijkstra_row` for distances below 2^31 (int16/int32): each heap entry is one int64
    ``distance << 32 | vertex``, so one comparison orders entries and one load moves them, in a
    4-ary lazy heap (``heap`` of length m + 1). Measured 1.3x faster than the two-array binary
    heap on random sparse graphs; same results, same ``pred``/``hop`` conventions."""
    _start_row(s, dist, pred, hop, want_pred, want_hop, unreachable)
    heap[0] = np.int64(s)
    size = 1
    settled = 0
    while size > 0:
        top = heap[0]
        du = top >> 32
        u = top & 0xFFFFFFFF
        size -= 1
        last = heap[size]
        i = 0
        while True:  # move the last entry down from the root
            c = HEAP_ARITY * i + 1
            if c >= size:
                break
            best = c
            kb = heap[c]
            for j in range(c + 1, min(c + HEAP_ARITY, size)):
                if heap[j] < kb:
                    kb = heap[j]
                    best = j
            if kb >= last:
                break
            heap[i] = kb
            i = best
        heap[i] = last
        if du > dist[u]:
            continue  # stale: u was pushed again with a smaller distance
        settled += 1
        if u == target:
            break
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = du + weights[e]
            if nd < dist[v]:
                dist[v] = nd
                _label(v, u, s, pred, hop, want_pred, want_hop)
                key = (np.int64(nd) << 32) | np.int64(v)
                i = size
                size += 1
                while i > 0:
                    p = (i - 1) // HEAP_ARITY
                    kp = heap[p]
                    if kp <= key:
                        break
                    heap[i] = kp
                    i = p
                heap[i] = key
    return settled


@njit(cache=True, nogil=True)
def dijkstra_pair(indptr, indices, weights, rindptr, rindices, rweights, s, t, dist_f, dist_b,
                  pred, succ, unreachable, no_route):
    """Bidirectional Dijkstra from ``s`` to ``t`` (non-negative weights; ``r*``: the reversed edges).

    The two searches take turns, each settling one vertex (the one whose heap
    has the smaller top). Every edge relaxed into a vertex the other side has
    labelled gives a route; ``best`` keeps the shortest. Once the two tops sum
    to at least ``best`` no shorter route can exist (lazy heaps: a top may be
    stale, which only makes the bound smaller, so the stop stays safe).
    Returns ``(length, meeting vertex, settled)``; the route is ``pred`` back
    from the meeting vertex to s and ``succ`` on to t. ``no_route`` (the widest
    value of the sum's type) when t cannot be reached. Needs ``s != t``.
    """
    _start_row(s, dist_f, pred, pred, True, False, unreachable)
    _start_row(t, dist_b, succ, succ, True, False, unreachable)
    m = max(indices.shape[0], 1) + 1
    fk = np.empty(m, dtype=dist_f.dtype)
    fv = np.empty(m, dtype=np.int32)
    bk = np.empty(m, dtype=dist_f.dtype)
    bv = np.empty(m, dtype=np.int32)
    fk[0] = 0
    fv[0] = s
    bk[0] = 0
    bv[0] = t
    fsize = 1
    bsize = 1
    best = no_route
    meet = -1
    settled = 0
    while fsize > 0 and bsize > 0:
        if fk[0] + bk[0] >= best:
            break
        if fk[0] <= bk[0]:
            fsize, best, meet, done = _pair_step(indptr, indices, weights, fk, fv, fsize, dist_f, dist_b,
                                                 pred, unreachable, best, meet)
        else:
            bsize, best, meet, done = _pair_step(rindptr, rindices, rweights, bk, bv, bsize, dist_b, dist_f,
                                                 succ, unreachable, best, meet)
        settled += done
    return best, meet, settled


@njit(cache=True, nogil=True, inline="always")
def _pair_step(indptr, indices, weights, keys, verts, size, dist, other, ptr, unreachable, best, meet):
    """One step of one side of `dijkstra_pair`: settle its heap's top (``ptr``: its tree, ``other``:
    the other side's labels). Returns ``(size, best, meet, settled)``, settled 0 for a stale top."""
    du = keys[0]
    u = verts[0]
    size = _heap_pop(keys, verts, size)
    if du > dist[u]:
        return size, best, meet, 0
    for e in range(indptr[u], indptr[u + 1]):
        v = indices[e]
        nd = du + weights[e]
        if nd < dist[v]:
            dist[v] = nd
            ptr[v] = u
            size = _heap_push(keys, verts, size, nd, v)
        if other[v] != unreachable and dist[v] + other[v] < best:
            best = dist[v] + other[v]
            meet = v
    return size, best, meet, 1


@njit(cache=True, nogil=True)
def bucket_row(indptr, indices, weights, s, target, dist, pred, hop, want_pred, want_hop,
               unreachable, head, nxt, vert, budget):
    """Dijkstra for small whole-number weights with buckets (Dial); like `dijkstra_row`.

    ``head`` has one more bucket than the largest weight: every queued vertex
    lies within that span of the current distance, so the buckets are used in
    a circle. A bucket is a linked list in ``nxt``/``vert`` (length m + 1; a
    vertex is added again on each improvement and stale entries are skipped).
    Each step is O(1) instead of a heap's O(log m), but the scan crosses every
    empty bucket between distances: past ``budget`` empty buckets the search
    gives up and returns -1 (the caller runs `dijkstra_row` instead).
    Otherwise returns how many vertices were settled.
    """
    nbuckets = head.shape[0]
    _start_row(s, dist, pred, hop, want_pred, want_hop, unreachable)
    head[:] = -1
    vert[0] = s
    nxt[0] = -1
    head[0] = 0
    used = 1
    queued = 1
    d = 0  # the distance of bucket b
    b = 0
    empty = 0
    settled = 0
    while queued > 0:
        while head[b] < 0:
            d += 1
            b = b + 1 if b + 1 < nbuckets else 0
            empty += 1
        if empty > budget:
            return -1
        x = head[b]
        head[b] = nxt[x]
        queued -= 1
        u = vert[x]
        if dist[u] != d:
            continue  # stale: u was added again with a smaller distance
        settled += 1
        if u == target:
            break
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            w = weights[e]
            nd = d + w
            if nd < dist[v]:
                dist[v] = nd
                _label(v, u, s, pred, hop, want_pred, want_hop)
                bv = b + w
                if bv >= nbuckets:
                    bv -= nbuckets
                vert[used] = v
                nxt[used] = head[bv]
                head[bv] = used
                used += 1
                queued += 1
    return settled


@njit(cache=True, nogil=True)
def bfs_row(indptr, indices, s, target, dist, pred, hop, want_pred, want_hop, unreachable, queue):
    """Breadth-first search from ``s`` (every edge counts 1); like `dijkstra_row`."""
    _start_row(s, dist, pred, hop, want_pred, want_hop, unreachable)
    queue[0] = s
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        if u == target:
            break
        du = dist[u] + 1
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if dist[v] == unreachable:
                dist[v] = du
                _label(v, u, s, pred, hop, want_pred, want_hop)
                queue[tail] = v
                tail += 1
    return head


@njit(cache=True, nogil=True)
def _parent_cycle(pred, n, color):
    """A cycle of the parent graph ``v -> pred[v]`` as its vertices in path order, or an empty array."""
    color[:n] = 0
    for x0 in range(n):
        if color[x0] != 0:
            continue
        x = x0
        while x >= 0 and color[x] == 0:
            color[x] = 1  # on the current walk
            x = pred[x]
        if x >= 0 and color[x] == 1:
            # the walk came back to itself: x is on a cycle; collect it forwards
            length = 1
            y = pred[x]
            while y != x:
                length += 1
                y = pred[y]
            cycle = np.empty(length, dtype=np.int64)
            y = x
            for i in range(length - 1, -1, -1):
                cycle[i] = y
                y = pred[y]
            return cycle
        x = x0
        while x >= 0 and color[x] == 1:
            color[x] = 2  # done: leads to a root or an earlier walk
            x = pred[x]
    return np.empty(0, dtype=np.int64)


@njit(cache=True, nogil=True)
def spfa(indptr, indices, weights, s, allowed, dist, pred, unreachable):
    """Bellman-Ford with a FIFO queue from ``s`` (``s < 0``: from every vertex at distance 0).

    Only vertices with ``allowed[v]`` are entered (pass an all-True array for
    the whole graph). Fills ``dist`` and ``pred`` and returns an empty array,
    or stops and returns the vertices of a negative cycle, in path order. The
    parent graph of strict relaxations can only close a cycle of negative
    weight, and with a reachable negative cycle it eventually does; it is
    checked every n relaxations.
    """
    n = dist.shape[0]
    queue = np.empty(n, dtype=np.int64)
    queued = np.zeros(n, dtype=np.bool_)
    color = np.empty(n, dtype=np.int8)
    pred[:] = -1
    head = 0
    count = 0
    if s < 0:
        for v in range(n):
            dist[v] = 0
            queue[v] = v
            queued[v] = True
        count = n
    else:
        dist[:] = unreachable
        dist[s] = 0
        queue[0] = s
        queued[s] = True
        count = 1
    relaxations = 0
    while count > 0:
        u = queue[head]
        head = head + 1 if head + 1 < n else 0
        count -= 1
        queued[u] = False
        du = dist[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if not allowed[v]:
                continue
            nd = du + weights[e]
            if nd < dist[v]:
                dist[v] = nd
                pred[v] = u
                relaxations += 1
                if relaxations % n == 0 or v == s or pred[u] == v:
                    cycle = _parent_cycle(pred, n, color)
                    if cycle.shape[0]:
                        return cycle
                if not queued[v]:
                    tail = head + count
                    queue[tail if tail < n else tail - n] = v
                    queued[v] = True
                    count += 1
    return np.empty(0, dtype=np.int64)


@njit(cache=True, nogil=True)
def _reduced_weights(indptr, indices, weights, h, out):
    """``out[e] = w(u, v) + h(u) - h(v)`` (non-negative for potentials h; float rounding clamped)."""
    n = indptr.shape[0] - 1
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            r = weights[e] + h[u] - h[indices[e]]
            out[e] = r if r > 0 else 0


@njit(cache=True, nogil=True)
def _search_chunk(indptr, indices, weights, sources, lo, hi, kind, dist, pred, hop, want_pred,
                  want_hop, unreachable, h, shift, groups, packed, to_float, fdist, nbuckets,
                  small_weights, g0, g1):
    """Groups ``g0..g1-1`` (one thread's share, `apsp.cpu.threads`) of the searches from
    ``sources[lo:hi]`` into rows ``lo..hi-1`` of the blocks.

    ``kind`` 0: BFS, 1: Dijkstra (``packed``: `dijkstra_row_packed`), 2: Dijkstra
    with ``nbuckets`` buckets (`bucket_row` on the int32 ``small_weights``; a
    worker whose search gives up uses the heap from then on). With
    ``shift`` (Johnson), distances found on reduced weights are shifted back by
    ``h[t] - h[s]``. Sources are dealt to ``groups`` workers in turn, each with its
    own scratch arrays. With ``to_float``, ``dist`` holds one
    scratch row per worker and each finished row is written to ``fdist`` as
    float64 (inf where unreachable), so no integer k x n block is kept.
    """
    n = indptr.shape[0] - 1
    for g in range(g0, g1):
        heap_keys = np.empty(indices.shape[0] + 1, dtype=dist.dtype)
        heap_verts = np.empty(max(n, indices.shape[0] + 1), dtype=np.int32)
        heap_packed = np.empty(indices.shape[0] + 1 if packed else 1, dtype=np.int64)
        buckets = kind == 2
        head = np.empty(nbuckets if buckets else 0, dtype=np.int32)
        nxt = np.empty(indices.shape[0] + 1 if buckets else 0, dtype=np.int32)
        budget = 4 * (n + indices.shape[0])  # empty buckets crossed: about a heap search's cost
        for i in range(lo + g, hi, groups):
            s = sources[i]
            row = dist[g] if to_float else dist[i]
            row_pred = pred[i] if want_pred else pred[0]
            row_hop = hop[i] if want_hop else hop[0]
            found = -1
            if buckets:
                found = bucket_row(indptr, indices, small_weights, s, -1, row, row_pred, row_hop,
                                   want_pred, want_hop, unreachable, head, nxt, heap_verts, budget)
                buckets = found >= 0
            if found >= 0:
                pass
            elif kind == 0:
                bfs_row(indptr, indices, s, -1, row, row_pred, row_hop, want_pred, want_hop,
                        unreachable, heap_verts)
            elif packed:
                dijkstra_row_packed(indptr, indices, weights, s, -1, row, row_pred, row_hop,
                                    want_pred, want_hop, unreachable, heap_packed)
            else:
                dijkstra_row(indptr, indices, weights, s, -1, row, row_pred, row_hop, want_pred,
                             want_hop, unreachable, heap_keys, heap_verts)
            if shift:
                hs = h[s]
                for t in range(n):
                    if row[t] != unreachable:
                        row[t] = row[t] + h[t] - hs
            if to_float:
                out = fdist[i]
                for t in range(n):
                    x = row[t]
                    out[t] = np.inf if x == unreachable else np.float64(x)


# ---------------------------------------------------------------------------
# Python drivers
# ---------------------------------------------------------------------------

@dataclass
class SearchGraph:
    """CSR arrays in the layout the kernels read: int32 indices (int64 past 2^31), weights in the
    distance dtype."""

    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    dtype: np.dtype

    @property
    def n(self) -> int:
        return self.indptr.shape[0] - 1

    @classmethod
    def from_csr(cls, csr, dtype) -> "SearchGraph":
        dt = np.dtype(dtype)
        index = np.int32 if max(csr.shape[0], csr.nnz) < 2**31 - 1 else np.int64
        weights = csr.data
        if dt.kind in "iu" and weights.dtype.kind == "f":
            weights = weights.astype(np.int64)  # whole numbers (the dtype was chosen for them)
        return cls(indptr=np.ascontiguousarray(csr.indptr, dtype=index),
                   indices=np.ascontiguousarray(csr.indices, dtype=index),
                   weights=np.ascontiguousarray(weights, dtype=dt), dtype=dt)

    @property
    def negative(self) -> bool:
        return bool(self.weights.size and self.weights.min() < 0)


@dataclass
class Rows:
    """Results of searches from k sources: k x n blocks (pred/hop None unless asked for)."""

    dist: np.ndarray
    pred: np.ndarray | None = None
    hop: np.ndarray | None = None


def negative_cycle_error(cycle) -> NegativeCycleError:
    """A `NegativeCycleError` naming the cycle's vertices (0-based)."""
    from ..errors import NegativeCycleError  # here: the class imports scipy.sparse.csgraph (0.04-0.4 s)

    verts = [int(v) for v in cycle]
    route = " -> ".join(map(str, verts + verts[:1]))
    return NegativeCycleError(f"Negative cycle detected: {route}", vertices=verts)


def potentials(g: SearchGraph) -> np.ndarray:
    """Johnson's potentials h (h(v) = shortest distance from a virtual source with 0-edges to all).

    Raises `NegativeCycleError` naming a negative cycle if there is one.
    """
    wide = wide_dtype(g.dtype)
    h = np.empty(g.n, dtype=wide)
    pred = np.empty(g.n, dtype=np.int64)
    cycle = spfa(g.indptr, g.indices, g.weights.astype(wide), -1, np.ones(g.n, dtype=np.bool_), h,
                 pred, exactness.unreachable_value(wide))
    if cycle.shape[0]:
        raise negative_cycle_error(cycle)
    return h.astype(g.dtype)


def wide_dtype(dtype) -> np.dtype:
    """int64 or float64: Bellman-Ford's labels may run far below any true distance around a
    negative cycle before it is found, so they are kept where they cannot wrap."""
    return np.dtype(np.float64 if np.dtype(dtype).kind == "f" else np.int64)


def bucket_count(g: SearchGraph) -> int:
    """Buckets for `bucket_row` (largest weight + 1), or 0 where the heap is the better queue:
    float weights, or weights so large that the scan over empty buckets would cost more."""
    if g.dtype.kind not in "iu" or not g.weights.size:
        return 0
    largest = int(g.weights.max())
    return largest + 1 if largest < MAX_BUCKETS else 0


def search_rows(g: SearchGraph, sources: np.ndarray, kind: str, *, want_pred: bool = False,
                want_hop: bool = False, progress: bool | None = False,
                as_float: bool = False) -> Rows:
    """One search per source (``kind``: "bfs", "dijkstra" or "johnson"), in parallel.

    Returns k x n blocks in ``g.dtype`` (``unreachable_value`` where no path),
    and int32 predecessor / first-hop blocks on request. Johnson raises
    `NegativeCycleError` for a negative cycle anywhere in the graph; Dijkstra
    needs non-negative weights (the caller checks). Ctrl-C stops between chunks.
    ``as_float``: the distance block is float64 with inf where no path (scipy's
    convention), converted row by row inside the parallel searches.
    """
    from ..progress import progress_bar

    sources = np.ascontiguousarray(sources, dtype=np.int64)
    k, n = sources.shape[0], g.n
    unreachable = exactness.unreachable_value(g.dtype)
    h = np.zeros(1, dtype=g.dtype)
    shift = False
    if kind == "johnson":
        if g.negative:
            h = potentials(g)
            reduced = np.empty_like(g.weights)
            _reduced_weights(g.indptr, g.indices, g.weights, h, reduced)
            g = SearchGraph(g.indptr, g.indices, reduced, g.dtype)
            shift = True
        kind = "dijkstra"
    code = {"bfs": 0, "dijkstra": 1}[kind]
    nbuckets = bucket_count(g) if code == 1 else 0
    small_weights = np.zeros(0, dtype=np.int32)
    if nbuckets:
        code = 2
        small_weights = g.weights.astype(np.int32, copy=False)
    threads = thread_count()
    # distances below 2^31 and vertex numbers below 2^32 fit one int64 heap entry
    packed = code >= 1 and g.dtype in (np.dtype(np.int16), np.dtype(np.int32)) and n < 2**31
    dist = np.empty((4 * threads if as_float else k, n), dtype=g.dtype)
    fdist = np.empty((k, n) if as_float else (1, 1), dtype=np.float64)
    pred = np.empty((k, n) if want_pred else (1, 1), dtype=np.int32)
    hop = np.empty((k, n) if want_hop else (1, 1), dtype=np.int32)
    chunk = min(k, 4 * threads)  # first chunk: small, to time it
    done = 0
    with progress_bar(k, progress, desc=f"{kind} n={n}", unit="source") as bar:
        while done < k:
            hi = min(k, done + chunk)
            groups = min(hi - done, 4 * threads)
            t0 = time.perf_counter()
            run_split(_search_chunk, groups, g.indptr, g.indices, g.weights, sources, done, hi, code, dist,
                      pred, hop, want_pred, want_hop, unreachable, h, shift, groups, packed, as_float,
                      fdist, nbuckets, small_weights)
            bar.update(hi - done)
            per_source = (time.perf_counter() - t0) / (hi - done)
            done = hi
            chunk = max(4 * threads, int(CHUNK_SECONDS / max(per_source, 1e-9)))
    return Rows(dist=fdist if as_float else dist, pred=pred if want_pred else None,
                hop=hop if want_hop else None)


# ----------------------------------------------------------------------------- the solvers
def solve_dijkstra(graph, opts: SolveOptions) -> SolveOutput:
    """Shortest paths by one Dijkstra per source (non-negative weights only)."""
    if graph.has_negative_weights:
        raise ValueError("method='dijkstra' needs non-negative weights; use method='johnson' "
                         "(or 'fw') for graphs with negative edges")
    return run_searches(graph, opts, "dijkstra")


def solve_johnson(graph, opts: SolveOptions) -> SolveOutput:
    """Shortest paths by Johnson's algorithm (negative weights allowed)."""
    return run_searches(graph, opts, "johnson")


def solve_bfs_rows(graph, opts: SolveOptions) -> SolveOutput:
    """Hop distances from some sources (every weight 1), one breadth-first search each.

    The searches write an integer dtype only if it holds every hop count (at most n - 1):
    a narrower one asked for gets the rows of a wider search after a check, refused with
    `DtypeError` as the all-pairs BFS refuses it when a distance does not fit (never wrapped).
    """
    from dataclasses import replace

    from .bfs import AUTO_DTYPES, max_level, recast, refuse_dtype

    asked = None if opts.dtype is None else np.dtype(opts.dtype)
    if asked is None or asked.kind == "f" or max_level(asked) >= graph.n - 1:
        return run_searches(graph, opts, "bfs")
    wide = next(np.dtype(t) for t in AUTO_DTYPES if max_level(t) >= graph.n - 1)
    out = run_searches(graph, replace(opts, dtype=wide), "bfs")
    reached = out.dist != exactness.unreachable_value(wide)
    if reached.any() and int(out.dist[reached].max()) > max_level(asked):
        refuse_dtype(asked)
    out.dist = recast(out.dist, asked)
    return out


def run_searches(graph, opts: SolveOptions, kind: str) -> SolveOutput:
    """Searches of ``kind`` from ``opts.sources`` (None: every vertex) packaged as a SolveOutput."""
    from .paths import loops_possible, successors_checked

    n = graph.n
    dt = np.dtype(opts.dtype if opts.dtype is not None else np.int32)
    sources = np.arange(n, dtype=np.int64) if opts.sources is None else np.asarray(opts.sources)
    g = SearchGraph.from_csr(graph.to_csr(), dt)
    rows = search_rows(g, sources, kind, want_pred=bool(opts.predecessors),
                       want_hop=bool(opts.successors), progress=opts.request.progress)
    info = {"searches": int(len(sources))}
    succ = rows.hop
    if succ is not None and opts.sources is None and loops_possible(graph, dt):
        # first hops of different sources' trees can loop along a zero-weight cycle
        succ, info["paths_repaired"] = successors_checked(succ, rows.dist, graph)
    return SolveOutput(dist=rows.dist, predecessors=rows.pred, successors=succ, info=info)
