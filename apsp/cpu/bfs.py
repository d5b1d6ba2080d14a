"""Bit-parallel multi-source BFS: all-pairs hop distances of an unweighted graph on the CPU.

Sources go in batches of 64, one bit each in a ``uint64`` word per vertex, so
one sweep over the edges advances 64 breadth-first searches by one level:

    next(v) = OR over in-neighbours u of frontier(u), minus visited(v)

Levels with a small frontier go top-down (push each frontier vertex's bits to
its out-neighbours); the others bottom-up (pull over the transposed CSR,
stopping at a vertex once every source of the batch has reached it). Batches
run in parallel, one range of batches per thread (`apsp.cpu.threads`). Cost: at
most O(n/64 * levels * m) word operations, plus one write per pair.

Distances come in the smallest unsigned type that holds the graph's diameter
(``uint8`` up to 254 hops, then ``uint16``, then ``int32``); unreachable pairs
hold the dtype's maximum (`apsp.exactness.unreachable_value`). The diameter is
unknown before the search, so batches start in ``uint8`` and only a batch
whose search outgrows the type is run again after the matrix is widened.

>>> import numpy as np, apsp
>>> chain = [(0, 1), (1, 2), (2, 3)]
>>> apsp.shortest_paths(chain, method="bfs", backend="cpu").distances[0]
array([0, 1, 2, 3], dtype=uint8)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import exactness
from ..engine import SolveOptions, SolveOutput
from ..errors import DtypeError
from .threads import run_split

#: sources per batch (bits in a word)
WORD = 64
#: no predecessor / successor (scipy's convention)
NO_VERTEX = -9999
#: a level goes top-down when its frontier's out-edges times this are fewer than all edges
PUSH_FACTOR = 4
#: distance dtypes BFS picks from, narrowest first
AUTO_DTYPES = (np.uint8, np.uint16, np.int32, np.int64)

# de Bruijn sequence for the index of a word's lowest set bit (Numba has no ctz)
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_LOW_BIT_INDEX = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _LOW_BIT_INDEX[((1 << _i) * int(_DEBRUIJN) % 2**64) >> 58] = _i


@njit(cache=True, inline="always")
def _low_bit(word, table):
    """Index of the lowest set bit of a non-zero uint64."""
    low = word & (np.uint64(0) - word)
    return table[(low * _DEBRUIJN) >> np.uint64(58)]


@njit(cache=True, inline="always")
def _record_parents(bits, u, v, s0, parent, hop, table):
    """For each source bit j that reaches v through u: last hop u, first hop as u's (or v)."""
    while bits != np.uint64(0):
        j = _low_bit(bits, table)
        parent[v, j] = u
        hop[v, j] = v if u == s0 + j else hop[u, j]
        bits &= bits - np.uint64(1)


@njit(cache=True, inline="always")
def _reduce_level(stats, s0, j0, j1, level, source):
    """Fold level ``level``'s counts ``stats[0][j]`` (sources ``s0 + j``, j in ``j0..j1-1``) into
    their reachable count, distance sum, eccentricity, sum of 1/d and (sources marked in
    ``counted``) the histogram; a ``source`` >= 0 counts that source itself (distance 0) when
    it is a target."""
    per_source, count, total, ecc, harmonic, hist, targets, counted = stats
    if source >= 0:
        if targets[source]:
            count[source] += 1
            if counted[source]:
                hist[0] += 1
        return
    for j in range(j0, j1):
        c = per_source[j]
        if c == 0:
            continue
        s = s0 + j
        count[s] += c
        total[s] += c * level
        ecc[s] = level
        harmonic[s] += c / level
        if counted[s]:
            hist[level] += c
        per_source[j] = 0


@njit(cache=True)
def _bfs_batch(out_ptr, out_idx, in_ptr, in_idx, s0, ns, dist, max_level, unreachable, not_found, pred,
               succ, want_pred, want_succ, table, push_factor, ws_bits, ws_lists, found, parent, hop, stats=None):
    """Searches from sources ``s0 .. s0+ns-1``; fills their rows of dist (and pred/succ).

    With ``stats`` (`apsp.cpu.reductions.bfs_stats_tasks`' tuple), nothing is
    written to ``dist`` or ``found``: each level's new vertices are counted per
    source as they are found and reduced when the level ends, so no row exists.

    Levels whose frontier has few out-edges go top-down (push over the CSR),
    the others bottom-up (pull over the transposed CSR, stopping at a vertex
    once every source has reached it). Results are first kept per vertex in
    ``found[v, j]`` (one cache line per vertex), then written out row by row.
    Returns the deepest level reached, or -1 as soon as a vertex is found
    deeper than ``max_level``. ``found`` holds ``not_found`` where no path is known; such pairs
    get ``unreachable`` in dist (the integer sentinel, or inf: float distances are written here,
    with no second pass, while ``found`` stays a narrow integer type that fits the cache).
    """
    n = in_ptr.shape[0] - 1
    m = in_idx.shape[0]
    zero = np.uint64(0)
    one = np.uint64(1)
    full = ~zero if ns == WORD else (one << np.uint64(ns)) - one
    want_parent = want_pred or want_succ
    ws_bits[:] = zero
    visited, frontier, nxt = ws_bits[0], ws_bits[1], ws_bits[2]
    flist, nlist = ws_lists[0], ws_lists[1]
    if stats is None:
        found[:, :] = not_found
    nfront = 0
    front_edges = 0
    for j in range(ns):
        s = s0 + j
        bit = one << np.uint64(j)
        visited[s] = bit
        frontier[s] = bit
        if stats is None:
            found[s, j] = 0
        else:
            _reduce_level(stats, s0, j, j + 1, np.int64(0), s)
        flist[nfront] = s
        nfront += 1
        front_edges += out_ptr[s + 1] - out_ptr[s]
    level = 0
    while nfront > 0:
        level += 1
        nnext = 0
        if front_edges * push_factor < m:
            # top-down: scatter each frontier vertex's bits to its out-neighbours
            for i in range(nfront):
                u = flist[i]
                f = frontier[u]
                for k in range(out_ptr[u], out_ptr[u + 1]):
                    v = out_idx[k]
                    bits = f & ~(visited[v] | nxt[v])
                    if bits == zero:
                        continue
                    if nxt[v] == zero:
                        nlist[nnext] = v
                        nnext += 1
                    nxt[v] |= bits
                    if want_parent:
                        _record_parents(bits, u, v, s0, parent, hop, table)
        else:
            # bottom-up: each vertex not yet reached by every source gathers from its in-neighbours
            for v in range(n):
                seen = visited[v]
                if seen == full:
                    continue
                fresh = zero
                for k in range(in_ptr[v], in_ptr[v + 1]):
                    u = in_idx[k]
                    bits = frontier[u] & ~(seen | fresh)
                    if bits == zero:
                        continue
                    fresh |= bits
                    if want_parent:
                        _record_parents(bits, u, v, s0, parent, hop, table)
                    if seen | fresh == full:
                        break
                if fresh != zero:
                    nxt[v] = fresh
                    nlist[nnext] = v
                    nnext += 1
        if nnext > 0 and level > max_level:
            return -1
        front_edges = 0
        for i in range(nnext):
            v = nlist[i]
            fresh = nxt[v]
            visited[v] |= fresh
            front_edges += out_ptr[v + 1] - out_ptr[v]
            if stats is None:
                while fresh != zero:
                    found[v, _low_bit(fresh, table)] = level
                    fresh &= fresh - one
            elif stats[6][v]:  # a target: count it for each source that found it
                per_source = stats[0]
                while fresh != zero:
                    per_source[_low_bit(fresh, table)] += 1
                    fresh &= fresh - one
        if stats is not None:
            _reduce_level(stats, s0, 0, ns, np.int64(level), -1)
        for i in range(nfront):
            frontier[flist[i]] = zero
        frontier, nxt = nxt, frontier
        flist, nlist = nlist, flist
        nfront = nnext
    if stats is not None:
        return level - 1
    # write the batch's rows: found (n x 64) transposed into dist (64 x n), blocks of 64 vertices
    for v0 in range(0, n, WORD):
        v1 = min(v0 + WORD, n)
        for j in range(ns):
            s = s0 + j
            for v in range(v0, v1):
                level_v = found[v, j]
                dist[s, v] = unreachable if level_v == not_found else level_v
            if want_parent:
                for v in range(v0, v1):
                    reached = found[v, j] != not_found and v != s
                    if want_pred:
                        pred[s, v] = parent[v, j] if reached else NO_VERTEX
                    if want_succ:
                        succ[s, v] = hop[v, j] if reached else NO_VERTEX
    return level - 1


@njit(cache=True, nogil=True)
def _bfs_batches(out_ptr, out_idx, in_ptr, in_idx, batches, dist, max_level, unreachable, not_found,
                 pred, succ, want_pred, want_succ, table, push_factor, levels, lo, hi):
    """Batches ``lo..hi-1`` one after another (one thread's share: `apsp.cpu.threads`), on one
    set of work arrays; ``levels[i]``: batch i's deepest level, -1 if it outgrew ``max_level``."""
    n = in_ptr.shape[0] - 1
    rows = n if (want_pred or want_succ) else 1
    ws_bits = np.empty((3, n), dtype=np.uint64)
    ws_lists = np.empty((2, n), dtype=np.int64)
    found = np.empty((n, WORD), dtype=type(not_found))
    parent = np.empty((rows, WORD), dtype=np.int32)
    hop = np.empty((rows, WORD), dtype=np.int32)
    for i in range(lo, hi):
        s0 = batches[i] * WORD
        ns = min(WORD, n - s0)
        levels[i] = _bfs_batch(out_ptr, out_idx, in_ptr, in_idx, s0, ns, dist, max_level, unreachable,
                               not_found, pred, succ, want_pred, want_succ, table, push_factor, ws_bits, ws_lists,
                               found, parent, hop)


def csr_arrays(graph):
    """``(out_ptr, out_idx, in_ptr, in_idx)``: CSR of the out-neighbours and of the in-neighbours
    (``graph``: a `Graph`, or a scipy CSR matrix whose stored entries are the edges)."""
    csr = graph.to_csr() if hasattr(graph, "to_csr") else graph
    csr_t = graph.reversed_csr() if hasattr(graph, "reversed_csr") else csr.T.tocsr()
    index_type = np.int32 if csr.shape[0] < 2**31 - 1 and csr.nnz < 2**31 - 1 else np.int64
    return tuple(a.astype(index_type) for a in (csr.indptr, csr.indices, csr_t.indptr, csr_t.indices))


def recast(dist: np.ndarray, dtype) -> np.ndarray:
    """Hop counts ``dist`` in another dtype, unreachable mapped to its sentinel (``inf`` for floats).

    The caller makes sure every finite distance fits ``dtype``.
    """
    wide = dist.astype(dtype)
    wide[dist == exactness.unreachable_value(dist.dtype)] = exactness.unreachable_value(dtype)
    return wide


def max_level(dtype) -> int:
    """The longest hop distance ``dtype`` stores (its maximum means unreachable)."""
    return int(exactness.unreachable_value(dtype)) - 1


def finish_dtype(dist: np.ndarray, requested) -> np.ndarray:
    """Convert BFS distances to a requested float dtype (unreachable -> inf)."""
    if requested is None or np.dtype(requested) == dist.dtype:
        return dist
    return recast(dist, requested)


def refuse_dtype(dtype):
    raise DtypeError(
        f"dtype {np.dtype(dtype).name} cannot hold this graph's hop distances: some shortest path "
        f"is longer than {max_level(dtype)} edges; choose a wider dtype or leave dtype unset")


def solve(graph, opts: SolveOptions) -> SolveOutput:
    """All-pairs hop distances of ``graph`` (every edge weight 1) by bit-parallel BFS.

    ``opts.dtype`` None picks the narrowest of uint8/uint16/int32 that holds
    the diameter; an integer dtype is used as given (`DtypeError` if a distance
    does not fit); a float dtype is written by the searches directly, ``inf``
    for unreachable pairs. ``graph``: a `Graph`, or a scipy CSR matrix (`csr_arrays`).
    """
    n = graph.shape[0] if hasattr(graph, "shape") else graph.n
    arrays = csr_arrays(graph)
    push_factor = opts.request.push_factor or PUSH_FACTOR
    may_widen = opts.dtype is None  # no dtype asked for: the narrowest that holds every distance
    dt = np.dtype(AUTO_DTYPES[0] if may_widen else opts.dtype)
    dist = np.empty((n, n), dtype=dt)
    want_pred, want_succ = bool(opts.predecessors), bool(opts.successors)
    pred = np.empty((n, n) if want_pred else (1, 1), dtype=np.int32)
    succ = np.empty((n, n) if want_succ else (1, 1), dtype=np.int32)
    batches = np.arange((n + WORD - 1) // WORD, dtype=np.int64)
    diameter = 0
    while len(batches):
        levels = np.empty(len(batches), dtype=np.int64)
        # a float dtype holds every level (at most n - 1), and inf for unreachable; the levels
        # found are kept in int32 meanwhile
        not_found: np.generic
        if dt.kind == "f":
            limit, unreachable, not_found = n, dt.type(np.inf), np.int32(np.iinfo(np.int32).max)
        else:
            limit = max_level(dt)
            unreachable = not_found = dt.type(limit + 1)
        run_split(_bfs_batches, len(batches), *arrays, batches, dist, np.int64(limit), unreachable, not_found,
                  pred, succ, want_pred, want_succ, _LOW_BIT_INDEX, push_factor, levels)
        diameter = max(diameter, int(levels.max(initial=0)))
        batches = batches[levels < 0]
        if len(batches):
            if not may_widen:
                refuse_dtype(dt)
            dt = np.dtype(AUTO_DTYPES[[np.dtype(t) for t in AUTO_DTYPES].index(dt) + 1])
            dist = recast(dist, dt)
    dist = finish_dtype(dist, opts.dtype)
    return SolveOutput(dist=dist, predecessors=pred if want_pred else None,
                       successors=succ if want_succ else None,
                       info={"diameter": diameter, "sources_per_word": WORD})
