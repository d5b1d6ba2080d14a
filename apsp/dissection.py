"""Nested dissection: the ordering, the supernodal layout and the round schedule both nd-fw engines share.

The vertices are split by recursive bisection with vertex separators: a set of
vertices is cut by METIS (``pymetis``) into two halves, the smaller side of the
cut's boundary becomes the separator, and each half (minus the separator) is
split again until at most ``leaf_size`` vertices remain. Disconnected pieces
need no separator: they become children of a node whose separator is empty.
That gives the *dissection tree*: every node owns a vertex set (a leaf: its
vertices; an inner node: its separator), and the vertices of a node's subtree
have edges (either direction) only to its subtree and to the separators of its
ancestors, because every separator cut its node into pieces with no edges
between them.

The *layout* puts the nodes in postorder (children before their parent), each
node's own vertices padded to whole tiles with padding vertices (isolated: no
edges, distance 0 to themselves). So every subtree is one contiguous range of
the layout with its node's own vertices last, and every separator is a range
of whole tiles.

Which entries can be finite during Floyd-Warshall in this order (the pivot
order is the layout order). Before the round whose pivots are the own vertices
of node X, ``D[k, j]`` (k owned by X) is finite only if a path k -> j exists
whose intermediate vertices all come before the current pivot. Follow such a
path from k: while it stays in subtree(X) fine; the first vertex outside
subtree(X) is adjacent to subtree(X), so it lies in an ancestor's separator,
which comes after X in postorder and cannot be an intermediate yet, so it is
j. Hence row k (and, with edges reversed, column k) is finite only over
``subtree(X) + separators of X's ancestors``: `Dissection.reach` as a few
contiguous ranges. A round then only needs the min-plus products among those
ranges: every product that is skipped has an all-unreachable operand, so it
could not change any entry, and the result equals dense Floyd-Warshall's. The
argument needs only the edge structure, so it holds for any weights, negative
ones and negative cycles included.

**The schedule** (`ScheduleEngine`, `solve_with`), an engine of the FW skeleton (`apsp.engine`).
The ordering and layout decide, for each pivot round, the
few contiguous layout ranges where the pivot rows and columns can be finite;
the round is Floyd-Warshall's three phases restricted to them (close the pivot
tile, update the row and column panels over the ranges, then the min-plus
products of every pair of ranges). All rounds of one tree node share their
ranges, so an engine is handed a node's rounds at once, on its own matrix:
``pivots(a, b, ranges)`` runs the rounds of pivot layout positions ``a:b``
(whole tiles, in order), ``ranges`` a list of ``(start, end)`` layout ranges
(sorted, disjoint, one contains ``a:b``); after it, every entry in
``ranges x ranges`` has been relaxed through those pivots.

`ScheduleEngine` is what the skeleton sees of such an engine: ``rounds`` walks
the tree nodes and yields the layout positions done (so the skeleton's bar,
``on_round``, Ctrl-C and negative-cycle checks are dense FW's), and the
negative-cycle check names vertices, not layout positions. The engines
(`apsp.cpu.ndfw`, `apsp.gpu.ndfw`) add the layout matrix, ``pivots`` and the
result in vertex order.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING
from dataclasses import dataclass

import numpy as np

from .methods import METHOD

if TYPE_CHECKING:
    from .engine import SolveOptions

_ND = METHOD["nd-fw"]

#: vertices per leaf of the dissection tree. Tile products counted on grids with
#: ``benchmarks/nd_counts.py`` (BENCHMARKS.md): leaves of 2-4k vertices minimise the work at B = 128
DEFAULT_LEAF = 3000


def _pymetis():
    """pymetis, or None where it is not installed (no wheel for the platform)."""
    try:
        import pymetis
    except ImportError:
        return None
    return pymetis


def bfs_levels(sub, start: int = 0, sweeps: int = 2) -> np.ndarray:
    """Breadth-first levels of the symmetric pattern ``sub`` from a pseudo-peripheral vertex of
    ``start``'s component: ``sweeps`` searches, each from the farthest vertex the last reached
    (-1 outside the component)."""
    from scipy.sparse.csgraph import shortest_path

    def levels(start):
        level = shortest_path(sub, method="D", directed=False, unweighted=True, indices=start)
        return np.nan_to_num(level, posinf=-1).astype(np.int64)  # -1: unreachable (inf)

    level = levels(start)
    for _ in range(sweeps):  # the farthest vertex of the last level is nearly peripheral
        level = levels(len(level) - 1 - int(np.argmax(level[::-1])))  # the last of the farthest
    return level


def _level_bisection(sub) -> np.ndarray:
    """Two halves of a connected graph by breadth-first levels from a pseudo-peripheral vertex
    (George and Liu's level-structure bisection): the vertices up to the level that holds the
    median vertex against the rest, so the cut runs between two adjacent levels. Needs only
    scipy; METIS, where installed, finds smaller cuts on irregular graphs."""
    level = bfs_levels(sub)
    # cut after the thinnest level among those that leave 35-65% of the vertices on each side
    counts = np.bincount(level)
    below = np.cumsum(counts)
    n = len(level)
    middle = np.flatnonzero((below >= 0.35 * n) & (below <= 0.65 * n))
    if len(middle):
        cut = middle[np.argmin(counts[middle] + counts[np.minimum(middle + 1, len(counts) - 1)])]
    else:
        cut = np.sort(level)[n // 2]
    part = (level > cut).astype(np.int64)
    if part.min() == part.max():
        part = (level >= cut).astype(np.int64)
    return part


@dataclass
class Dissection:
    """A dissection tree in postorder and its tile-padded layout.

    Node ``t`` (postorder: children before parents, the root last) owns layout
    positions ``own_start[t]:end[t]`` (a whole number of tiles) and its subtree
    spans ``start[t]:end[t]``. ``order[p]`` is the vertex at layout position
    ``p`` (-1: padding); ``position[v]`` is the layout position of vertex ``v``.
    """

    n: int
    tile: int
    parent: np.ndarray  # int64, -1 for the root
    start: np.ndarray
    own_start: np.ndarray
    end: np.ndarray
    order: np.ndarray
    position: np.ndarray

    @property
    def size(self) -> int:
        """Layout size (vertices plus padding)."""
        return len(self.order)

    @property
    def nodes(self) -> int:
        return len(self.parent)

    def ancestors(self, t: int):
        p = self.parent[t]
        while p >= 0:
            yield int(p)
            p = self.parent[p]

    def reach(self, t: int) -> list[tuple[int, int]]:
        """Layout ranges where rows and columns of node ``t``'s pivots can be finite:
        its subtree and its ancestors' separators, adjacent ranges merged, in order."""
        ranges = [(int(self.start[t]), int(self.end[t]))]
        ranges += [(int(self.own_start[a]), int(self.end[a])) for a in self.ancestors(t)]
        ranges = [r for r in sorted(ranges) if r[1] > r[0]]
        merged: list[tuple[int, int]] = []
        for a, b in ranges:
            if merged and merged[-1][1] == a:
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        return merged

    def steps(self):
        """The schedule, node by node in postorder: ``(a, b, reach ranges)`` where the pivots are
        layout positions ``a:b`` (a whole number of tiles, one round per tile)."""
        for t in range(self.nodes):
            a, b = int(self.own_start[t]), int(self.end[t])
            if b > a:
                yield a, b, self.reach(t)

    def rounds(self):
        """The pivot rounds in order: ``(k0, k1, reach ranges)``, one per tile of each node."""
        for a, b, ranges in self.steps():
            for k0 in range(a, b, self.tile):
                yield k0, min(k0 + self.tile, b), ranges

    def depths(self) -> np.ndarray:
        """Each node's number of ancestors (the root: 0)."""
        depth = np.zeros(self.nodes, dtype=np.int64)
        for t in range(self.nodes - 2, -1, -1):  # parents come after their children
            depth[t] = depth[self.parent[t]] + 1 if self.parent[t] >= 0 else 0
        return depth

    def levels(self) -> list[list[int]]:
        """The nodes that have pivots, grouped by height (leaves first, the root's level last).

        Nodes of one level may run their rounds together, each from the matrix as the
        levels below left it, with the results merged by an entry-wise minimum where their
        ranges meet (their common ancestors' separators): a shortest path whose intermediate
        vertices all lie in the levels below and in the own vertices of two nodes X and Y of
        one level cannot use both X and Y, because leaving X's subtree means passing a
        separator of one of X's ancestors, whose height is above the level (not yet a pivot).
        """
        height = np.zeros(self.nodes, dtype=np.int64)
        for t in range(self.nodes):  # children come before their parents
            if self.parent[t] >= 0:
                height[self.parent[t]] = max(height[self.parent[t]], height[t] + 1)
        busy = [t for t in range(self.nodes) if self.end[t] > self.own_start[t]]
        return [[t for t in busy if height[t] == h] for h in range(int(height.max(initial=0)) + 1)
                if any(height[t] == h for t in busy)]

    def updates(self) -> int:
        """Min-plus updates (additions) of the whole schedule: per round ``|reach|^2 x tile``."""
        return sum(sum(b - a for a, b in ranges) ** 2 * (k1 - k0) for k0, k1, ranges in self.rounds())


def _structure(csr) -> "object":
    """Symmetric 0/1 pattern of the graph without self-loops (CSR, int32 indices)."""
    import scipy.sparse as sp

    a = sp.csr_matrix(csr, copy=False)
    pattern = sp.csr_matrix((np.ones(a.nnz, dtype=np.int8), a.indices, a.indptr), shape=a.shape)
    sym = (pattern + pattern.T).tocsr()
    sym.setdiag(0)
    sym.eliminate_zeros()
    sym.sort_indices()
    return sym


def _tree(sym, leaf: int, seed: int, ordering: str, workers: int = 1) -> tuple[list[np.ndarray], list[list[int]]]:
    """The dissection tree of the symmetric pattern ``sym`` (leaves of at most ``leaf`` vertices):
    every node's own vertices and children ids, in the order made. The pieces' splits
    (`_decisions`) come first, on ``workers`` processes where more than one; the tree is then
    made from them in one pass, the same whoever made them."""
    decided = _decisions(sym, leaf, seed, ordering, workers)
    own: list[np.ndarray] = []
    children: list[list[int]] = []

    def node(verts, kids) -> int:
        own.append(np.asarray(verts, dtype=np.int64))
        children.append(list(kids))
        return len(own) - 1

    def build(verts: np.ndarray) -> int:
        if len(verts) <= leaf:
            return node(verts, [])
        ncomp, label = decided[_piece_key(verts)]
        if ncomp > 1:
            return split_pieces(verts, ncomp, label)
        kids = [build(verts[label == side]) for side in (0, 1)]
        return node(verts[label < 0], kids)  # the separator: -1, in neither half

    def split_pieces(verts, ncomp, label) -> int:
        """Disconnected pieces: large ones are dissected, small ones packed into leaves."""
        sizes = np.bincount(label, minlength=ncomp)
        # members of every piece from one sort (not a scan per piece: isolated vertices
        # would make that quadratic)
        by_piece = verts[np.argsort(label, kind="stable")]
        first = np.concatenate(([0], np.cumsum(sizes)))
        pack: list[np.ndarray] = []
        kids, packed = [], 0
        for c in np.argsort(-sizes, kind="stable"):
            members = by_piece[first[c]:first[c + 1]]
            if sizes[c] > leaf:
                kids.append(build(members))
                continue
            if packed + sizes[c] > leaf and pack:
                kids.append(node(np.concatenate(pack), []))
                pack, packed = [], 0
            pack.append(members)
            packed += sizes[c]
        if pack:
            kids.append(node(np.concatenate(pack), []))
        if len(kids) == 1:
            return kids[0]
        return node(np.zeros(0, dtype=np.int64), kids)

    if sym.shape[0]:
        build(np.arange(sym.shape[0], dtype=np.int64))
    else:
        node(np.zeros(0, dtype=np.int64), [])
    return own, children


def _piece_key(verts: np.ndarray) -> tuple[int, int]:
    """A piece's name among all pieces of one dissection: pieces are disjoint or nested, and a
    nested one is strictly smaller, so its first vertex and size tell it apart."""
    return int(verts[0]), len(verts)


def _split(indptr, indices, leaf: int, seed: int, ordering: str):
    """One piece's split, from its pattern (CSR arrays, ascending vertex order): ``(ncomp, label)``,
    the components' labels where ``ncomp > 1``, else the bisection's sides 0/1 with -1 on the
    separator; and ``(local vertices, indptr, indices)`` of each part still larger than ``leaf``
    (what `_tree` will split next, in the same ascending order)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    size = len(indptr) - 1
    sub = sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr), shape=(size, size))
    ncomp, label = connected_components(sub, directed=False)
    label = label.astype(np.int64)
    if ncomp == 1:
        label = _bisect(sub, ordering, seed)
        label[_separator(sub, label)] = -1
    counts = np.bincount(label[label >= 0], minlength=max(ncomp, 2))
    parts = []
    for c in np.flatnonzero(counts > leaf):
        local = np.flatnonzero(label == c)
        part = sub[local][:, local]
        parts.append((local, part.indptr, part.indices))
    return (ncomp, label), parts


def _decisions(sym, leaf: int, seed: int, ordering: str, workers: int) -> dict:
    """Every piece's split (`_split`) by `_piece_key`: pieces handed out as their parents' splits
    come back, to a pool of ``workers`` processes (METIS holds the GIL) where more than one."""
    decided: dict = {}
    n = sym.shape[0]
    if n <= leaf:
        return decided
    if workers > 1:
        from .ordering_pool import WorkerLost, run_tasks, start_workers

        def follow(verts, answer):
            decided[_piece_key(verts)], parts = answer
            return [(verts[local], _split, (ip, ix, leaf, seed, ordering)) for local, ip, ix in parts]

        try:
            start_workers(workers)  # they start up while this process splits the whole graph
            root = np.arange(n, dtype=np.int64)
            run_tasks(workers, follow(root, _split(sym.indptr, sym.indices, leaf, seed, ordering)), follow)
            return decided
        except WorkerLost:  # no processes here (a sandbox, memory): this one splits every piece
            decided.clear()
    todo = [(np.arange(n, dtype=np.int64), sym.indptr, sym.indices)]
    while todo:
        verts, indptr, indices = todo.pop()
        decided[_piece_key(verts)], parts = _split(indptr, indices, leaf, seed, ordering)
        todo += [(verts[local], ip, ix) for local, ip, ix in parts]
    return decided


def _bisect(sub, ordering: str, seed: int) -> np.ndarray:
    pymetis = _pymetis() if ordering == "metis" else None
    if pymetis is None:
        return _level_bisection(sub)
    opts = pymetis.Options(seed=seed)
    _, parts = pymetis.part_graph(2, pymetis.CSRAdjacency(sub.indptr, sub.indices), options=opts)
    part = np.asarray(parts, dtype=np.int64)
    if part.min() == part.max():  # METIS gave up (tiny or odd graphs): split by index
        part = (np.arange(len(part)) >= len(part) // 2).astype(np.int64)
    return part


def _separator(sub, part) -> np.ndarray:
    """A vertex separator from a bisection: a minimum vertex cover of the cut edges
    (Koenig's theorem on the bipartite cut graph), which separates the two sides."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    coo = sub.tocoo()
    cut = (part[coo.row] == 0) & (part[coo.col] == 1)
    left = np.flatnonzero(part == 0)
    right = np.flatnonzero(part == 1)
    li = np.where(part == 0, np.cumsum(part == 0), np.cumsum(part == 1)) - 1  # index within its side
    rows, cols = li[coo.row[cut]], li[coo.col[cut]]
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64)
    bip = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(len(left), len(right)))
    match = maximum_bipartite_matching(bip, perm_type="column")  # left -> right or -1
    # Koenig: Z = vertices reachable from unmatched left vertices by alternating paths;
    # cover = (left not in Z) + (right in Z)
    match_right = np.full(len(right), -1, dtype=np.int64)
    matched = match >= 0
    match_right[match[matched]] = np.flatnonzero(matched)
    z_left = ~matched
    z_right = np.zeros(len(right), dtype=bool)
    frontier = np.flatnonzero(z_left)
    while len(frontier):
        nbrs = np.unique(bip[frontier].indices)  # the frontier's neighbours, one row gather (no loop)
        new_right = nbrs[~z_right[nbrs]]
        z_right[new_right] = True
        # a new right vertex's partner was not reached before (the matching pairs them one to one)
        frontier = match_right[new_right]
        frontier = frontier[frontier >= 0]
        z_left[frontier] = True
    # every left vertex outside Z is matched, so it has a cut edge
    return np.sort(np.concatenate([left[~z_left], right[z_right]]))


#: graphs from this many vertices are split on several processes (below it one process is quicker
#: than handing the pieces out), at most `ORDERING_WORKERS` of them
PARALLEL_ORDERING_VERTICES = 30_000
ORDERING_WORKERS = 16


def ordering_workers(n: int) -> int:
    """Processes `dissect` splits ``n`` vertices' pieces on: one per usable core up to
    `ORDERING_WORKERS` for large graphs where there are 4 cores or more, else 1 (this one)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if n < PARALLEL_ORDERING_VERTICES or cores < 4:
        return 1
    return min(cores, ORDERING_WORKERS)


def dissect(csr, leaf_size: int = DEFAULT_LEAF, tile: int = 128, seed: int = 0, pad: int | None = None,
            ordering: str | None = None, workers: int | None = None) -> Dissection:
    """The dissection tree of a graph (its CSR matrix; direction ignored) and its layout.

    ``leaf_size``: dissect until pieces have at most this many vertices; ``tile``: the
    width of a pivot round; ``pad`` (default ``tile``): pad every node's own vertices to a
    multiple of it. ``ordering``: how pieces are bisected, ``"metis"`` (pymetis) or
    ``"levels"`` (breadth-first levels, scipy only); by default METIS where installed.
    Deterministic for a given ``seed``. ``workers``: processes that split the pieces (the
    same tree for any number; default `ordering_workers`).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> path = sp.diags([1, 1], [-1, 1], shape=(7, 7), format="csr")
    >>> nd = dissect(path, leaf_size=3, tile=1)
    >>> nd.size, sorted(nd.order.tolist()) == list(range(7))
    (7, True)
    """
    n = csr.shape[0]
    tile = max(1, int(tile))
    pad = tile if pad is None else max(1, int(pad))
    if ordering is None:  # METIS where installed
        ordering = "metis" if _pymetis() is not None else "levels"
    if ordering not in ("metis", "levels"):
        raise ValueError(f"unknown ordering {ordering!r}; choose 'metis' or 'levels'")
    if ordering == "metis" and _pymetis() is None:
        raise ImportError("the METIS ordering needs pymetis: pip install pymetis")
    workers = ordering_workers(n) if workers is None else max(1, int(workers))
    own, children = _tree(_structure(csr), max(1, int(leaf_size)), seed, ordering, workers)
    # every node was made after its children, each subtree in one run: the order made is a postorder
    padded = np.array([-(-len(verts) // pad) * pad for verts in own], dtype=np.int64)
    end = np.cumsum(padded)
    own_start = end - padded
    parent = np.full(len(padded), -1, dtype=np.int64)
    start = own_start.copy()
    for t, kids in enumerate(children):  # a subtree starts where its first child's does
        parent[kids] = t
        start[t] = start[kids[0]] if kids else own_start[t]
    order = np.concatenate([np.pad(verts, (0, size - len(verts)), constant_values=-1)
                            for verts, size in zip(own, padded)])
    position = np.empty(n, dtype=np.int64)
    real = order >= 0
    position[order[real]] = np.flatnonzero(real)
    return Dissection(n=n, tile=tile, parent=parent, start=start, own_start=own_start, end=end,
                      order=order, position=position)


# ----------------------------------------------------------------------------- the schedule
def plan(graph, tile: int, leaf_size: int | None = None, pad: int = 1, seed: int = 0) -> Dissection:
    """The dissection of ``graph``: rounds ``tile`` wide, leaves of at most ``leaf_size`` vertices,
    every node's vertices padded to a multiple of ``pad``. Cached on the graph (the automatic
    method choice orders it first, then the solver reuses the ordering)."""
    leaf = DEFAULT_LEAF if leaf_size is None else int(leaf_size)
    key = (int(tile), leaf, int(pad), seed)
    cache = graph.derived.dissections
    if key not in cache:
        csr = graph.to_csr()
        shared = (structure_fingerprint(csr), *key)
        nd = _ORDERINGS.get(shared)
        if nd is None:
            nd = dissect(csr, leaf_size=leaf, tile=tile, pad=pad, seed=seed)
            _ORDERINGS.put(shared, nd)
        cache[key] = nd
    return cache[key]


def structure_fingerprint(csr) -> bytes:
    """A digest of a CSR matrix's edge structure (shape, row pointers, column indices; not the
    weights, which the ordering ignores): equal graphs, built afresh call after call, share it."""
    import hashlib

    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr((csr.shape, csr.indptr.dtype.str, csr.indices.dtype.str)).encode())
    digest.update(np.ascontiguousarray(csr.indptr).data)
    digest.update(np.ascontiguousarray(csr.indices).data)
    return digest.digest()


class OrderingCache:
    """The process's last dissections by structure fingerprint and plan key (least recently used
    dropped first), at most ``entries`` of them and ``max_bytes`` of their arrays: a graph made
    again from the same arrays (every call of `apsp.shortest_paths` on a scipy matrix) is not
    ordered again. Dissections are shared: no caller changes one."""

    def __init__(self, entries: int = 16, max_bytes: int = 256 << 20):
        from collections import OrderedDict

        import threading

        self.entries, self.max_bytes = entries, max_bytes
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def nbytes(nd: Dissection) -> int:
        return sum(a.nbytes for a in (nd.parent, nd.start, nd.own_start, nd.end, nd.order, nd.position))

    def get(self, key) -> Dissection | None:
        with self._lock:
            nd = self._items.get(key)
            if nd is not None:
                self._items.move_to_end(key)
            return nd

    def put(self, key, nd: Dissection) -> None:
        if self.nbytes(nd) > self.max_bytes:
            return
        with self._lock:
            self._items[key] = nd
            while len(self._items) > self.entries or sum(map(self.nbytes, self._items.values())) > self.max_bytes:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_ORDERINGS = OrderingCache()


#: (tile, leaf size) the engines use by default, per backend (from nd-fw's record, `apsp.methods`)
DEFAULTS = {b: (_ND.blocks[b], _ND.leaves[b]) for b in _ND.leaves}


def dissection_for(graph, opts: SolveOptions, backend: str) -> tuple[Dissection, int]:
    """The dissection the ``backend``'s solver runs with these options, and its tile: the tile
    ``opts.block_size``, leaves of ``opts.request.leaf_size``, else `DEFAULTS` (cached on the graph, so the
    memory plan and the solver share it)."""
    tile = opts.block_size or DEFAULTS[backend][0]  # `SolveOptions` holds positive ints or None
    return plan(graph, tile, opts.request.leaf_size or DEFAULTS[backend][1]), tile


def default_plan(graph, backend: str) -> Dissection:
    """The dissection the ``backend``'s engine uses with its default tile and leaf size."""
    return plan(graph, *DEFAULTS[backend])


def layout_edges(graph, nd: Dissection):
    """The graph's edges in layout positions: ``(rows, cols, weights)`` (int64, int64, graph dtype)."""
    csr = graph.to_csr()
    rows = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(csr.indptr))
    return nd.position[rows], nd.position[csr.indices.astype(np.int64)], csr.data


class ScheduleEngine:
    """The skeleton's side of a nested-dissection engine over the dissection ``nd``: subclasses
    give ``pivots(a, b, ranges)``, ``layout_diagonal()`` (host numpy, layout order), ``load``,
    ``sync`` and ``finalize``. No checkpoints (the public layer refuses them for nd-fw), so no
    ``read_rows``/``write_rows``."""

    label = "nd-fw"
    resumes_anywhere = False  # rounds end where tree nodes do
    early_cycle_check = True  # a negative cycle found in one node makes the rest meaningless

    def __init__(self, nd: Dissection, negative: bool):
        self.nd = nd
        self.n = nd.size  # the skeleton counts layout positions
        self.negative = bool(negative)

    def pivots(self, a: int, b: int, ranges) -> None:
        raise NotImplementedError

    def layout_diagonal(self) -> np.ndarray:
        raise NotImplementedError

    def sync(self) -> None:
        raise NotImplementedError

    def rounds(self, block: int, start_vertex: int = 0):
        for a, b, ranges in self.nd.steps():
            if b > start_vertex:
                self.pivots(a, b, ranges)
                yield b
        self.sync()  # the compute stage ends when the work does

    def negative_diagonal(self) -> np.ndarray:
        """The vertices (input numbering, sorted) whose diagonal entry is negative."""
        bad = self.nd.order[np.flatnonzero(self.layout_diagonal()[:self.nd.size] < 0)]
        return np.sort(bad[bad >= 0])


def solve_with(graph, opts: SolveOptions, backend: str, make_engine, stage_names=("prepare", "compute", "finalize")):
    """Both solvers' common part: the dissection (tile ``opts.block_size``, leaf ``leaf_size=``, else
    ``DEFAULTS[backend]``) and ``make_engine(nd, tile)`` run by the skeleton. Returns ``(out, engine)``,
    the skeleton's `SolveOutput` with ``order`` and its three stages under ``stage_names`` in its timings."""
    from .engine import run

    t0 = time.perf_counter()
    nd, tile = dissection_for(graph, opts, backend)
    order = time.perf_counter() - t0
    engine = make_engine(nd, tile)
    out = run(graph, opts, engine, solver=f"nd-fw-{backend}", block=tile)
    out.timings = {"order": order, **{name: out.timings[stage]
                                      for stage, name in zip(("prepare", "compute", "finalize"), stage_names)}}
    out.info.update(layout=nd.size, tree_nodes=nd.nodes, updates=nd.updates(), tile=tile)
    return out, engine
