"""Rows of the distance matrix from a nested dissection: min-plus multifrontal elimination.

The dissection (`apsp.dissection.plan`, no padding) puts every subtree in one contiguous layout
range with its node's own vertices ``V_t`` last. A subtree's vertices have edges only inside it and
to its *boundary* ``B_t``: the layout positions outside subtree(t) adjacent (either direction) to it,
``(neighbours of V_t outside subtree(t)) + (boundaries of t's children) - subtree(t)``, which lie in
the own ranges of t's ancestors. (Not `Dissection.reach`: every ancestor's whole separator is much
wider than the vertices a subtree actually touches.)

**Elimination** (`eliminate`), nodes in postorder: the *front* of t over ``V_t + B_t`` holds the
original edges among them that no descendant took, min-combined ("extend-add") with each child's
Schur complement on its boundary; Floyd-Warshall with the pivots ``V_t`` on the whole front leaves
``closure_t`` (paths inside subtree(t) between V_t vertices), ``down_t = F[B,V] (x) closure_t``
(paths B -> V inside subtree(t)) and the Schur complement ``F[B,B]`` (paths B -> B through
subtree(t)) for the parent. ``up_t = F[V,B]`` is kept from before the pivots (paths V -> B whose
intermediates lie in t's descendants).

**Rows** (`rows_reference`, `apsp.cpu.rowsolve`) for sources ``S``: upward over the nodes whose
subtree holds a source, ``D[:, V] = D[:, V] (x) closure`` and ``D[:, B] = min(D[:, B], D[:, V] (x) up)``;
then downward over every node, parents first, ``D[:, V] = min(D[:, V], D[:, B] (x) down)``. Why it is
exact: for a target v of node t, a shortest path either stays inside subtree(t) (then the source is
there too, and the upward pass found it: the last V_t vertex on it splits it into a part the closure
holds and a part the children's passes hold), or its last vertex outside subtree(t) is some b in B_t,
whose distance is final when t's turn comes (B_t lies in ancestors, done before t downward), and the
rest of the path, b -> v inside subtree(t), is in ``down_t``.

Weights must be non-negative (the method's record says so; the plan picks Johnson otherwise): every
value stays in ``[0, INF]`` (`apsp.exactness.inf_value`), so ``INF + INF`` fits the dtype.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .dissection import Dissection, layout_edges
from .exactness import inf_value
from .methods import METHOD

#: leaf size of the dissection the row solve runs over (its method record's): small leaves keep
#: ``|B_t| |V_t|``, the work of every source at every node, small (leaves of 32-128 on a 100x100
#: grid: 64 fastest within the noise, 2-core dev box, 2026-11-28)
ROWS_LEAF = METHOD["nd-rows"].leaves["cpu"]


@dataclass(frozen=True)
class Packed:
    """The factors as flat arrays for the Numba kernels, each block transposed (the row solve
    keeps a block of sources as the inner dimension): node t's closure is
    ``closure[coff[t]:coff[t+1]]`` (closure_t transposed, row-major), its up and down panels
    ``up[poff[t]:poff[t+1]]`` (up_t transposed: |B| x |V|) and ``down[...]`` (down_t transposed:
    |V| x |B|), its boundary ``boundary[boff[t]:boff[t+1]]``."""

    start: np.ndarray
    own_start: np.ndarray
    end: np.ndarray
    boundary: np.ndarray
    boff: np.ndarray
    closure: np.ndarray
    coff: np.ndarray
    up: np.ndarray
    down: np.ndarray
    poff: np.ndarray

    def arrays(self) -> tuple:
        return (self.start, self.own_start, self.end, self.boundary, self.boff, self.closure, self.coff,
                self.up, self.down, self.poff)


@dataclass(frozen=True)
class Factors:
    """What the row solves need of one graph: per node (postorder of ``nd``) its boundary (sorted
    int64 layout positions), ``closure`` (|V| x |V|), ``up`` (|V| x |B|, ``F[V,B]``, not multiplied
    by the closure) and ``down`` (|B| x |V|, ``F[B,V] (x) closure``), in ``dtype`` with
    `apsp.exactness.inf_value` for 'no path'."""

    nd: Dissection
    boundary: tuple
    closure: tuple
    up: tuple
    down: tuple
    dtype: np.dtype
    negative: bool

    @property
    def inf(self):
        return inf_value(self.dtype)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for part in (self.boundary, self.closure, self.up, self.down) for a in part)

    @cached_property
    def packed(self) -> Packed:
        """The flat arrays of the Numba row solve (built once)."""
        def flat(parts, dtype):
            sizes = np.array([p.size for p in parts], dtype=np.int64)
            offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
            body = np.concatenate([p.T.ravel() for p in parts]) if parts else np.zeros(0)
            return np.ascontiguousarray(body, dtype=dtype), offsets

        nd = self.nd
        bnd, boff = flat(self.boundary, np.int64)  # 1-D: transposing changes nothing
        clo, coff = flat(self.closure, self.dtype)
        up, poff = flat(self.up, self.dtype)
        down, _ = flat(self.down, self.dtype)
        return Packed(start=nd.start.astype(np.int64), own_start=nd.own_start.astype(np.int64),
                      end=nd.end.astype(np.int64), boundary=bnd, boff=boff, closure=clo, coff=coff, up=up,
                      down=down, poff=poff)


def children_of(nd: Dissection) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in range(nd.nodes)]
    for t in range(nd.nodes):
        if nd.parent[t] >= 0:
            kids[int(nd.parent[t])].append(t)
    return kids


def _layout_pattern(graph, nd: Dissection):
    """The symmetric adjacency of the layout positions (scipy CSR, no self-loops)."""
    import scipy.sparse as sp

    rows, cols, _ = layout_edges(graph, nd)
    size = nd.size
    ones = np.ones(len(rows), dtype=np.int8)
    a = sp.csr_matrix((ones, (rows, cols)), shape=(size, size))
    sym = (a + a.T).tocsr()
    sym.sort_indices()
    return sym


def boundaries(graph, nd: Dissection) -> tuple:
    """Every node's boundary: the sorted layout positions outside its subtree adjacent to it
    (cached on the graph beside its dissection)."""
    cache = graph.derived.boundaries
    if id(nd) in cache and cache[id(nd)][0] is nd:
        return cache[id(nd)][1]
    sym = _layout_pattern(graph, nd)
    kids = children_of(nd)
    out: list[np.ndarray] = []
    for t in range(nd.nodes):
        a, b, s = int(nd.own_start[t]), int(nd.end[t]), int(nd.start[t])
        parts = [sym.indices[sym.indptr[a]:sym.indptr[b]].astype(np.int64)] + [out[c] for c in kids[t]]
        near = np.unique(np.concatenate(parts))
        outside = near[(near < s) | (near >= b)]
        # a subtree touches only its ancestors' separators, which come after it in postorder
        assert not len(outside) or outside[0] >= b, "a subtree's neighbour lies before it in the layout"
        out.append(outside)
    result = tuple(out)
    cache.clear()  # one dissection's boundaries at a time
    cache[id(nd)] = (nd, result)
    return result


def factor_bytes(nd: Dissection, boundary, itemsize: int) -> tuple[int, int]:
    """``(kept, peak)`` bytes of the factors: what the row solves read (closures, panels,
    boundaries), and the elimination's peak beside them (the largest front and the pending
    children's Schur complements)."""
    nv = np.diff(np.stack([nd.own_start, nd.end]), axis=0)[0].astype(np.int64)
    nb = np.array([len(b) for b in boundary], dtype=np.int64)
    kept = int(((nv * nv + 2 * nv * nb) * itemsize + 8 * nb).sum())
    fronts = (nv + nb) ** 2 * itemsize
    pending = int((nb * nb * itemsize).sum())  # at most every Schur complement at once
    return kept, int(fronts.max(initial=0)) * 2 + pending


def node_work(nd: Dissection, boundary) -> tuple[int, int]:
    """Min-plus updates: ``(per source row, elimination)``. A row costs ``|B_t| |V_t|`` at every
    node (downward) plus ``|V_t|^2 + |V_t| |B_t|`` at the nodes holding its source (upward, about the
    depth of the tree: counted as the leaf's); the elimination ``|V_t| (|V_t| + |B_t|)^2``."""
    nv = (nd.end - nd.own_start).astype(np.float64)
    nb = np.array([len(b) for b in boundary], dtype=np.float64)
    row = float((nb * nv).sum()) + float((nv * nv + nv * nb).max(initial=0)) * max(1.0, np.log2(max(nd.nodes, 2)))
    return int(row), int((nv * (nv + nb) ** 2).sum())


def _front_edges(graph, nd: Dissection, dtype):
    """The edges grouped by the node that assembles them (the lower of their endpoints' nodes, a
    descendant of the other's): ``(rows, cols, weights, first)``, node t's edges at
    ``first[t]:first[t+1]``."""
    rows, cols, w = layout_edges(graph, nd)
    owner = np.repeat(np.arange(nd.nodes, dtype=np.int64), nd.end - nd.own_start)
    node = np.minimum(owner[rows], owner[cols])
    order = np.argsort(node, kind="stable")
    first = np.searchsorted(node[order], np.arange(nd.nodes + 1))
    return rows[order], cols[order], np.asarray(w, dtype=dtype)[order], first


def eliminate(graph, dtype, nd: Dissection) -> Factors:
    """The factors of ``graph`` over the dissection ``nd`` (no padding: ``pad=1``) in ``dtype``
    (non-negative weights; `ValueError` otherwise)."""
    from .cpu.fronts import eliminate_front, extend_add, extend_add_block

    dt = np.dtype(dtype)
    if graph.has_negative_weights:
        raise ValueError("the row solve of the nested dissection takes non-negative weights only")
    if (nd.order < 0).any():
        raise ValueError("the row solve needs a dissection without padding (pad=1)")
    inf = inf_value(dt)
    bnd = boundaries(graph, nd)
    kids = children_of(nd)
    rows, cols, w, first = _front_edges(graph, nd, dt)
    schur: dict[int, np.ndarray] = {}
    closure, up, down = [], [], []
    for t in range(nd.nodes):
        a, b = int(nd.own_start[t]), int(nd.end[t])
        nv, B = b - a, bnd[t]
        front = np.full((nv + len(B), nv + len(B)), inf, dtype=dt)
        np.fill_diagonal(front, 0)
        e0, e1 = first[t], first[t + 1]
        extend_add(front, _local(rows[e0:e1], a, b, B), _local(cols[e0:e1], a, b, B), w[e0:e1])
        for c in kids[t]:
            at = _local(bnd[c], a, b, B)
            extend_add_block(front, at, schur.pop(c))
        up.append(front[:nv, nv:].copy())
        eliminate_front(front, np.int64(nv), inf)
        closure.append(front[:nv, :nv].copy())
        down.append(front[nv:, :nv].copy())
        schur[t] = front[nv:, nv:].copy()
    return Factors(nd=nd, boundary=bnd, closure=tuple(closure), up=tuple(up), down=tuple(down), dtype=dt,
                   negative=False)


def _local(positions: np.ndarray, a: int, b: int, boundary: np.ndarray) -> np.ndarray:
    """Front indices of layout positions: own ones ``a:b`` first, then the boundary's."""
    positions = np.asarray(positions, dtype=np.int64)
    own = (positions >= a) & (positions < b)
    return np.where(own, positions - a, (b - a) + np.searchsorted(boundary, positions))


def _minplus(x: np.ndarray, y: np.ndarray, inf) -> np.ndarray:
    """``x (x) y`` by numpy (the reference's product; small graphs)."""
    if x.shape[1] == 0:
        return np.full((x.shape[0], y.shape[1]), inf, dtype=x.dtype)
    out = np.full((x.shape[0], y.shape[1]), inf, dtype=x.dtype)
    for k in range(x.shape[1]):
        np.minimum(out, x[:, k:k + 1] + y[k:k + 1, :], out=out)
    return out


def rows_reference(f: Factors, s0: int, s1: int) -> np.ndarray:
    """Rows of the distance matrix for the sources at layout positions ``s0:s1``, columns in layout
    order, `Factors.inf` for 'no path': the upward and downward passes in plain numpy (the oracle
    of the fast engines)."""
    nd, inf = f.nd, f.inf
    d = np.full((s1 - s0, nd.size), inf, dtype=f.dtype)
    d[np.arange(s1 - s0), np.arange(s0, s1)] = 0
    for t in range(nd.nodes):
        if not (nd.start[t] < s1 and nd.end[t] > s0):
            continue
        a, b, B = int(nd.own_start[t]), int(nd.end[t]), f.boundary[t]
        d[:, a:b] = _minplus(d[:, a:b], f.closure[t], inf)
        if len(B):
            d[:, B] = np.minimum(d[:, B], _minplus(d[:, a:b], f.up[t], inf))
    for t in range(nd.nodes - 1, -1, -1):
        a, b, B = int(nd.own_start[t]), int(nd.end[t]), f.boundary[t]
        if len(B) and b > a:
            d[:, a:b] = np.minimum(d[:, a:b], _minplus(d[:, B], f.down[t], inf))
    return d


__all__ = ["Factors", "Packed", "ROWS_LEAF", "boundaries", "eliminate", "factor_bytes", "node_work",
           "rows_reference"]
