"""The validated graph every solver receives, and the edge-list container readers return.

Solvers never see user input directly: the public layer turns whatever the
user gave (dense array, scipy sparse matrix, edge list, file) into a `Graph`,
which knows its size, weight range and sign, and converts itself on demand to
the dense Floyd-Warshall start matrix or to CSR for BFS/Dijkstra.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import exactness, sizes

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from scipy.sparse import csr_matrix


@dataclass(init=False)
class EdgeList:
    """Edges of a directed graph on vertices ``0..n-1``, in input order.

    When the same (src, dst) appears more than once, the later one wins
    (the homework rule); ``Graph.from_edges`` applies it.

    Attributes
    ----------
    n : int
        Number of vertices.
    src, dst : numpy.ndarray of int64, shape (m,)
        Endpoints of each edge (0-based).
    weight : numpy.ndarray, shape (m,)
        Weight of each edge (any real dtype).
    source : str or None
        Where the edges came from (a path), for messages.
    labels : numpy.ndarray or None, shape (n,)
        The input's name of each vertex (``labels[i]`` names vertex i: the ids of a SNAP
        file, the node ids of a GraphML file), or None when the vertices are numbered
        by index (see `vertex_labels`).
    m : int
        Number of edges.

    Examples
    --------
    >>> from apsp import EdgeList
    >>> EdgeList(3, [0, 1], [1, 2], [5, 7]).m
    2
    """

    n: int
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    #: where the edges came from (a path), for messages
    source: str | None = None
    labels: np.ndarray | None = None

    def __init__(self, n: int, src: ArrayLike, dst: ArrayLike, weight: ArrayLike, source: str | None = None,
                 labels: ArrayLike | None = None) -> None:
        self.n = n
        self.src = np.asarray(src, dtype=np.int64)
        self.dst = np.asarray(dst, dtype=np.int64)
        self.weight = np.asarray(weight)
        self.source = source
        if not (self.src.shape == self.dst.shape == self.weight.shape) or self.src.ndim != 1:
            raise ValueError("src, dst and weight must be 1-D arrays of the same length")
        self.labels = None if labels is None else vertex_labels(labels, n)

    @property
    def m(self) -> int:
        """Number of edges (repeated pairs counted each time)."""
        return int(self.src.shape[0])


#: held while a graph makes its scipy matrix from its CSR arrays (`Graph.csr`)
_CSR_MADE = threading.Lock()


def _weight_facts(w: np.ndarray) -> tuple:
    """(count, max |w|, any negative, all integral, all 1) of some weights; NaN refused. Integer
    weights' max as a Python int: a float rounds int64 weights near the limit."""
    if w.dtype.kind == "f" and np.isnan(w).any():
        raise ValueError("edge weights contain NaN")
    top = (0 if not w.size else max(int(w.max()), -int(w.min())) if w.dtype.kind in "iu"
           else float(np.max(np.abs(w.astype(np.float64)))))
    return (int(w.size), top, bool((w < 0).any()), bool(w.dtype.kind in "iu" or np.all(np.floor(w) == w)),
            bool(np.all(w == 1)))


def vertex_labels(labels, n: int) -> np.ndarray | None:
    """``labels`` as a 1-D array of n distinct integer or string labels, or None.

    Labels equal to ``0..n-1`` are None: the vertices are then named by their index, as
    for inputs without labels. Raises ValueError for a wrong length, repeats or another kind.
    """
    if labels is None:
        return None
    arr = np.asarray(labels)
    strings = arr.dtype.kind == "O" and arr.ndim == 1 and all(isinstance(x, str) for x in arr.tolist())
    if arr.dtype.kind == "O" and not strings:  # e.g. a list of str and int: labels are one kind or the other
        arr = np.asarray([str(x) for x in arr.tolist()])
    # an object array of str stays one: each id its own length (fixed width pads all to the longest)
    if arr.ndim != 1 or arr.shape[0] != n or (arr.dtype.kind not in "iuU" and not strings):
        raise ValueError(f"labels must be {n} integers or strings, one per vertex; got "
                         f"shape {arr.shape}, dtype {arr.dtype}")
    if arr.dtype.kind in "iu":
        if arr.dtype.kind == "u" and n and arr.max() > np.iinfo(np.int64).max:
            raise ValueError("integer labels must fit int64")
        arr = arr.astype(np.int64)
        if np.array_equal(arr, np.arange(n)):
            return None
    if (len(set(arr.tolist())) if strings else np.unique(arr).shape[0]) != n:
        raise ValueError("labels must be distinct: two vertices have the same label")
    return arr


#: the most memory `compact_ids` takes beyond its input, per edge (the sort: both ends' ids, a
#: mask, the labels and the two index arrays)
COMPACT_BYTES_PER_EDGE = 48
#: edges the Floyd-Warshall start matrix is filled with at a time (`Graph.fw_matrix`): their row
#: numbers, columns and weights (at most 24 bytes an edge, 1.5 MiB) stay below what the solve's
#: workers and row passes hold later, which the memory plan counts
START_CHUNK_EDGES = 1 << 16
#: searches holding more than this hand their freed memory back before the solve allocates
RELEASE_BYTES = 8 << 20


def compact_ids(src_ids: np.ndarray, dst_ids: np.ndarray):
    """Vertex ids as they appear (integers with gaps) -> ``(labels, src, dst)``.

    ``labels`` holds the distinct ids sorted (numerically for integers), so vertex i is
    the i-th smallest id; ``src``/``dst`` are the edges' endpoints as indices into it.
    Memory is O(m) in the number of edges, whatever the ids' size (`COMPACT_BYTES_PER_EDGE`
    at most): a table by id only when the ids are non-negative and below 2m + 1 (linear
    time), else a sort.

    >>> labels, s, d = compact_ids(np.array([5, 1000000]), np.array([77, 5]))
    >>> labels.tolist(), s.tolist(), d.tolist()
    ([5, 77, 1000000], [0, 2], [1, 0])
    """
    m = src_ids.shape[0]
    if not m:
        return np.zeros(0, dtype=np.int64), src_ids, dst_ids
    lo = min(int(src_ids.min()), int(dst_ids.min()))
    top = max(int(src_ids.max()), int(dst_ids.max())) + 1
    if lo >= 0 and top <= 2 * m + 1:
        present = np.zeros(top, dtype=bool)
        present[src_ids] = True
        present[dst_ids] = True
        labels = np.flatnonzero(present)
        if labels.shape[0] == top:  # no gaps: every id is its index
            return labels, src_ids, dst_ids
        index = np.cumsum(present, dtype=np.int64) - 1
        return labels, index[src_ids], index[dst_ids]
    labels = sorted_distinct(np.concatenate([src_ids, dst_ids]))  # np.unique would add an inverse: 2x
    return labels, np.searchsorted(labels, src_ids), np.searchsorted(labels, dst_ids)


def sorted_distinct(a: np.ndarray) -> np.ndarray:
    """The distinct values of ``a``, sorted; sorts ``a`` in place. A sort and a neighbour compare:
    many times faster than np.unique (hash based) on millions of keys."""
    a.sort()
    keep = np.ones(a.shape[0], dtype=bool)
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def vertex_index(labels: np.ndarray | None, n: int, label, what: str = "vertex") -> int:
    """The index (0..n-1) of the vertex named ``label``; with ``labels`` None the label is the index.

    Integer labels match integers (and their decimal text); string labels match ``str(label)``.
    Raises ValueError naming ``what`` when no vertex has that label.

    >>> vertex_index(np.array(["a", "b"]), 2, "b"), vertex_index(None, 3, 2)
    (1, 2)
    """
    if labels is None or labels.dtype.kind in "iu":
        try:
            value = _integer_label(label)
        except ValueError:
            value = None
        if labels is None:
            if value is None or not 0 <= value < n:
                raise ValueError(f"{what} {label!r} is not in 0..{n - 1}")
            return value
        found = np.searchsorted(labels, value) if value is not None else labels.shape[0]
        if found < labels.shape[0] and labels[found] == value:  # integer labels are sorted
            return int(found)
        at = np.flatnonzero(labels == value) if value is not None else np.empty(0, dtype=np.intp)
    else:
        at = np.flatnonzero(labels == str(label))
    if len(at) == 0:
        shown = ", ".join(str(x) for x in labels[:3].tolist()) + (", ..." if labels.shape[0] > 3 else "")
        raise ValueError(f"{what} {label!r} is not a vertex label of this graph (its labels: {shown})")
    return int(at[0])


def vertex_indices(labels: np.ndarray | None, n: int, wanted, what: str = "vertex") -> np.ndarray:
    """`vertex_index` of each of ``wanted``, as an int64 array (a sort and a binary search, not
    a scan per label)."""
    items = np.atleast_1d(np.asarray(wanted, dtype=object)).reshape(-1).tolist()
    if labels is None:
        return np.array([vertex_index(None, n, v, what) for v in items], dtype=np.int64)
    try:
        values = (np.array([_integer_label(v) for v in items], dtype=np.int64) if labels.dtype.kind in "iu"
                  else np.array([str(v) for v in items], dtype=str))
    except (ValueError, OverflowError):
        values = None
    if values is not None and values.size:
        order = np.argsort(labels, kind="stable")
        pos = np.minimum(np.searchsorted(labels[order], values), n - 1)
        if n and (labels[order][pos] == values).all():
            return order[pos].astype(np.int64)
    for v in items:  # the first one missing, named in the error
        vertex_index(labels, n, v, what)
    return np.zeros(0, dtype=np.int64)


def _integer_label(label) -> int:
    if isinstance(label, (bool, np.bool_)):
        raise ValueError("a bool is not a vertex")
    if isinstance(label, (str, bytes)):
        return int(label)
    if isinstance(label, (int, np.integer)) or (isinstance(label, (float, np.floating))
                                                and float(label).is_integer()):
        return int(label)
    raise ValueError(f"{label!r} is not a vertex number")


def vertex_name(labels: np.ndarray | None, i: int, first: int = 0):
    """The name of vertex ``i``: its label (a Python int or str), else ``i + first``."""
    return (int(i) + first) if labels is None else labels[[int(i)]].tolist()[0]


def _csr_last_wins_impl(n, src, dst, weight, indptr, indices, data):
    """Numba kernel (compiled lazily by `_last_assignment_wins`): the CSR matrix of the edges,
    the last (src, dst) given winning.

    Fills ``indptr`` (n + 1 entries) and returns nnz; the first nnz entries of
    ``indices`` and ``data`` (m entries each, also used as scratch) become the distinct
    columns of each row, in input order (sorted where the row is dense enough to scan),
    and the weight of the last edge given for each. Endpoints must lie in ``0..n-1``.
    """
    m = src.shape[0]
    # stable counting sort by source row: row r's edges, in input order, at start[r]..start[r+1]-1
    start = np.zeros(n + 1, dtype=np.int64)
    for k in range(m):
        start[src[k] + 1] += 1
    for r in range(n):
        start[r + 1] += start[r]
    fill = start[:n].copy()
    for k in range(m):
        r = src[k]
        j = fill[r]
        indices[j] = dst[k]
        data[j] = weight[k]
        fill[r] = j + 1
    # Per row, in input order, each edge overwrites last_w[its column], so the last one wins;
    # stamp[c] == r marks the columns seen in row r, so neither is cleared between rows.
    # Output entries first..nnz-1 of a row never pass its own start[r + 1], so the rows
    # not yet read are intact.
    stamp = np.full(n, -1, dtype=np.int64)
    last_w = np.empty(n, dtype=weight.dtype)
    nnz = 0
    indptr[0] = 0
    for r in range(n):
        first = nnz
        for j in range(start[r], start[r + 1]):
            c = indices[j]
            if stamp[c] != r:
                stamp[c] = r
                indices[nnz] = c  # nnz <= j: the row's distinct columns, compacted
                nnz += 1
            last_w[c] = data[j]
        d = nnz - first
        if d > 0 and 4 * d * (1 + np.log2(d)) >= n:
            # many distinct columns for n: scanning the stamps beats sorting them
            t = first
            for c in range(n):
                if stamp[c] == r:
                    indices[t] = c
                    data[t] = last_w[c]
                    t += 1
        else:
            for t in range(first, nnz):
                data[t] = last_w[indices[t]]
        indptr[r + 1] = nnz
    return nnz


_CSR_KERNEL = None

#: weight dtypes the kernel carries itself; others go through it as input positions
_KERNEL_WEIGHT_DTYPES = frozenset(map(np.dtype, ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8")))


def _last_assignment_wins(n: int, src, dst, weight):
    """CSR arrays ``(indptr, indices, data)`` of the edges, dropping earlier duplicates
    of the same (src, dst) and keeping the last one given; columns distinct within rows, not
    all sorted.

    Endpoints must already lie in ``0..n-1``. Index arrays are int32 when they fit
    (as scipy would choose), int64 otherwise; ``data`` holds ``weight``'s entries,
    dtype unchanged.
    """
    m = int(src.shape[0])
    idx = np.int32 if max(n, m) <= np.iinfo(np.int32).max else np.int64
    carried = weight.dtype in _KERNEL_WEIGHT_DTYPES and weight.dtype.isnative
    values = np.ascontiguousarray(weight if carried else np.arange(m, dtype=np.int64))
    indptr = np.empty(n + 1, dtype=idx)
    indices = np.empty(m, dtype=idx)
    data = np.empty(m, dtype=values.dtype)  # the weights carried, else which edge won
    global _CSR_KERNEL
    if _CSR_KERNEL is None:
        import numba  # lazily: ``import apsp`` stays numpy-only

        _CSR_KERNEL = numba.njit(cache=True)(_csr_last_wins_impl)
    nnz = _CSR_KERNEL(n, np.ascontiguousarray(src, dtype=np.int64),
                      np.ascontiguousarray(dst, dtype=np.int64), values, indptr, indices, data)
    if nnz < m:  # give the rest back (shrinks in place; nothing else refers to them)
        indices.resize(nnz, refcheck=False)
        data.resize(nnz, refcheck=False)
    return indptr, indices, (data if carried else weight[data])


def lightest_edges(n: int, rows, cols, data):
    """The n x n CSR matrix of the entries, the lightest of each repeated (row, col) kept."""
    import scipy.sparse as sp

    rows, cols, data = np.asarray(rows), np.asarray(cols), np.asarray(data)
    order = np.lexsort((data, cols, rows))  # lightest first within each (row, col)
    rows, cols, data = rows[order], cols[order], data[order]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    return sp.csr_matrix((data[first], (rows[first], cols[first])), shape=(n, n))  # columns sorted by tocsr


@dataclass
class Derived:
    """What the planner and the solvers work out about one graph and keep on it (`Graph.derived`),
    so that every estimate, plan and solve of the graph asks once."""

    #: `Graph.longest_distance_found` (None: not searched yet)
    longest_found: float | None = None
    #: `apsp.costs.dijkstra_units` per ``reweighted``
    dijkstra_units: dict[bool, float] = field(default_factory=dict)
    #: `apsp.costs.solve_itemsize` per ``(method, longest distance searched)``
    solve_itemsize: dict[tuple[str, bool], int] = field(default_factory=dict)
    #: the symmetric 0/1 pattern nested dissection orders (scipy CSR)
    structure: Any = None
    #: `apsp.costs`'s BFS sweep: ``(separator width, component size, levels)``
    sweep: tuple[int, int, int] | None = None
    #: `apsp.dissection.plan`'s dissections per ``(tile, leaf, pad, seed)``
    dissections: dict[tuple[int, int, int, int], Any] = field(default_factory=dict)
    #: `apsp.supernodal.boundaries` of one of those dissections: ``{id: (dissection, boundaries)}``
    boundaries: dict[int, Any] = field(default_factory=dict)
    #: the reversed edges' CSR (`Graph.reversed_csr`), and whether it equals the graph's own
    reversed_csr: Any = None
    symmetric: bool | None = None


@dataclass(init=False)
class Graph:
    """A validated directed graph: ``n`` vertices and weighted edges (CSR or dense).

    Exactly one of ``csr`` or ``dense`` (with ``edge_mask``, or ``null_value``) is set at creation;
    the other form is built on request and cached. Build one with `from_edges`,
    `from_dense`, `from_sparse` or `apsp.as_graph`.

    Attributes
    ----------
    n : int
        Number of vertices.
    csr : scipy.sparse.csr_matrix or None
        The edges as a CSR matrix (explicit entries are edges, zeros included).
    dense : numpy.ndarray or None
        Dense weights, meaningful where ``edge_mask`` is True.
    edge_mask : numpy.ndarray of bool or None
        Where ``dense`` holds an edge: as given, else made on request from ``null_value`` (the
        solvers read ``dense`` in place, testing each entry as they go: no mask is kept).
    null_value : float or None
        With ``dense`` and no ``edge_mask``: the entry that means "no edge" besides inf and nan
        (default 0, as `from_dense`; None: only inf and nan).
    source : str or None
        Where the graph came from (a path), for messages.
    labels : numpy.ndarray or None
        The input's name of each vertex (from `EdgeList.labels`), None for plain indices.
    nnz : int
        Number of edges (self-loops included).
    max_abs_weight : int or float
        Largest absolute edge weight: a Python int (exact) for integer weight types, else a
        float (0 without edges).
    has_negative_weights : bool
        Some edge weight is negative.
    integral : bool
        All weights are whole numbers (so integer dtypes compute exactly).
    float_weights : bool
        The weights are stored as floats (whole or not): see `integral_for`.
    unit_weights : bool
        All edge weights equal 1 (BFS computes exact distances).
    distance_bound : int or float
        Largest magnitude any shortest distance can have, ``(n - 1) * max|w|``
        (`apsp.exactness.distance_bound`: a Python int, exact, for whole-number weights).
    derived : Derived
        What estimates, plans and solvers worked out about this graph once and keep on it (the
        BFS sweeps, the dissections, the longest distance searched).

    The weight facts are read once, when the graph is built (a NaN weight is a ValueError).

    Examples
    --------
    >>> from apsp import EdgeList, Graph
    >>> g = Graph.from_edges(EdgeList(3, [0, 1, 0], [1, 2, 1], [5, 7, 4]))
    >>> g.nnz, g.max_abs_weight
    (2, 7)
    """

    n: int
    _csr: csr_matrix | None  # the edges as scipy's matrix, made on first use (`csr`)
    _csr_arrays: tuple | None  # its (indptr, indices, data)
    dense: np.ndarray | None = None  # weights where edge_mask is True
    source: str | None = None
    labels: np.ndarray | None = None
    #: a dense matrix's "no edge" entry besides inf and nan (None: those alone), where no mask is given
    null_value: Any = field(default=0.0, repr=False)
    _mask: np.ndarray | None = field(default=None, repr=False, compare=False)
    _rule: Any = field(default=None, repr=False, compare=False)
    nnz: int = field(init=False, repr=False, compare=False)
    max_abs_weight: int | float = field(init=False, repr=False, compare=False)
    has_negative_weights: bool = field(init=False, repr=False, compare=False)
    integral: bool = field(init=False, repr=False, compare=False)
    float_weights: bool = field(init=False, repr=False, compare=False)
    unit_weights: bool = field(init=False, repr=False, compare=False)
    distance_bound: int | float = field(init=False, repr=False, compare=False)
    #: what estimates, plans and solvers derived from this graph (`Derived`)
    derived: Derived = field(init=False, repr=False, compare=False, default_factory=Derived)

    def __init__(self, n: int, csr: csr_matrix | None = None, dense: np.ndarray | None = None,
                 edge_mask: np.ndarray | None = None, source: str | None = None, labels: np.ndarray | None = None,
                 null_value: Any = 0.0, csr_arrays: tuple | None = None) -> None:
        self.n, self.dense, self._mask = n, dense, edge_mask
        self.csr = csr
        if csr_arrays is not None:  # (indptr, indices, data): the scipy matrix made when asked for
            self._csr_arrays = csr_arrays
        self.source, self.labels, self.null_value = source, labels, null_value
        self.derived = Derived()
        self._rule = None  # the dense edges' `apsp.dense.NullRule`, where the kernels read them
        if dense is not None and edge_mask is None:
            self._dense_rule(dense)
        if self._csr_arrays is not None:
            facts = _weight_facts(self._csr_arrays[2])
            float_weights = self._csr_arrays[2].dtype.kind == "f"
        else:
            assert self.dense is not None, "a graph holds its edges densely or as CSR"
            facts, float_weights = self._dense_facts(self.dense), self.dense.dtype.kind == "f"
        self.nnz, self.max_abs_weight, self.has_negative_weights, self.integral, self.unit_weights = facts
        self.float_weights = float_weights
        self.distance_bound = exactness.distance_bound(self.n, self.max_abs_weight)

    @property
    def csr(self) -> csr_matrix | None:
        """The edges as a scipy CSR matrix with sorted, distinct columns in each row; None for a
        graph kept dense (`to_csr` builds one). A graph built from an edge list keeps its CSR arrays
        and makes the matrix on first use: scipy.sparse's import (0.25 s) is not on the way of a
        solve that reads the arrays alone (the dense FW start matrix, the weight facts)."""
        if self._csr is None and self._csr_arrays is not None:
            import scipy.sparse as sp

            with _CSR_MADE:  # the sort works in place on the arrays: one thread makes the matrix
                if self._csr is None:
                    indptr, indices, data = self._csr_arrays
                    csr = sp.csr_matrix((data, indices, indptr), shape=(self.n, self.n))
                    csr.sort_indices()  # scipy's C++ sort: Numba's own takes seconds to compile
                    csr.has_canonical_format = True  # and the columns are distinct within each row
                    self._csr, self._csr_arrays = csr, (csr.indptr, csr.indices, csr.data)
        return self._csr

    @csr.setter
    def csr(self, matrix: csr_matrix | None) -> None:
        self._csr = matrix
        self._csr_arrays = None if matrix is None else (matrix.indptr, matrix.indices, matrix.data)

    def _dense_facts(self, dense: np.ndarray) -> tuple:
        if self._rule is not None:  # one threaded pass over the matrix, no mask made
            from .dense import facts as dense_facts

            return dense_facts(dense, self._rule)
        assert self._mask is not None  # the rule's or the given mask
        rows = max(1, exactness.ROW_CHUNK // max(self.n, 1))  # a row chunk at a time: never a copy of all
        parts = [_weight_facts(dense[i:i + rows][self._mask[i:i + rows]]) for i in range(0, self.n, rows)]
        return (sum(p[0] for p in parts), max((p[1] for p in parts), default=0),
                any(p[2] for p in parts), all(p[3] for p in parts), all(p[4] for p in parts))

    def _dense_rule(self, dense: np.ndarray) -> None:
        """Edges of ``dense`` by ``null_value``: the kernels' rule for the dtypes they read (booleans
        as int8, in place), else the mask made here by numpy, a row chunk at a time."""
        from .dense import KERNEL_DTYPES, NullRule, kernel_view

        a = kernel_view(dense)
        if a.dtype in KERNEL_DTYPES and a.dtype.isnative:
            self.dense, self._rule = a, NullRule.of(a.dtype, self.null_value)
            return
        mask = np.empty(a.shape, dtype=np.bool_)
        rows = max(1, exactness.ROW_CHUNK // max(self.n, 1))
        for i in range(0, self.n, rows):  # a row chunk's comparison at a time, not n x n
            mask[i:i + rows] = self.edges_in_rows(i, i + rows)
        self._mask = mask

    @property
    def edge_mask(self) -> np.ndarray | None:
        """Where ``dense`` holds an edge (None for a CSR graph); made on each request where the graph
        keeps no mask (`edges_in_rows` makes a part of it)."""
        if self.dense is None:
            return None
        return self._mask if self._mask is not None else self.edges_in_rows(0, self.n)

    @property
    def holds_edge_mask(self) -> bool:
        """Whether the graph keeps an n x n mask of its dense edges (given, or made by numpy for a
        dtype the kernels of `apsp.dense` do not read)."""
        return self._mask is not None

    def edges_in_rows(self, i0: int, i1: int) -> np.ndarray:
        """Where rows ``i0:i1`` of ``dense`` hold an edge: finite entries other than ``null_value``.

        Parameters
        ----------
        i0, i1 : int
            The rows, ``i0:i1``.

        Returns
        -------
        numpy.ndarray
            A boolean ``(i1 - i0) x n`` array.
        """
        return self.edges_at(np.s_[i0:i1])

    def edges_at(self, index) -> np.ndarray:
        """Where the entries ``dense[index]`` hold an edge (the kept mask's part, else numpy's test of them).

        Parameters
        ----------
        index : numpy index
            Any index of ``dense`` (a slice of rows, a boolean or integer selection).

        Returns
        -------
        numpy.ndarray
            Booleans shaped as ``dense[index]``.
        """
        assert self.dense is not None, "edges_at of a dense graph"
        if self._mask is not None:
            return self._mask[index]
        block = self.dense[index]
        mask = np.isfinite(block)  # all True for integers
        null = self.null_value
        if null is not None and not (isinstance(null, float) and np.isinf(null)):
            mask &= block != null
        return mask

    def integral_for(self, dtype) -> bool:
        """Whether a solve in ``dtype`` owes exact integer distances.

        Parameters
        ----------
        dtype : dtype or None
            The dtype asked for (None: chosen by apsp).

        Returns
        -------
        bool
            Whole-number weights, unless they are floats and a float dtype is asked for, which
            sums them in that float as it would fractional ones (as scipy and networkx do).
        """
        if dtype is not None and self.float_weights and np.dtype(dtype).kind == "f":
            return False
        return self.integral

    # -- construction -----------------------------------------------------
    @classmethod
    def from_edges(cls, edges: EdgeList) -> "Graph":
        """The graph of an edge list; where a (src, dst) pair repeats, the last one wins.

        Parameters
        ----------
        edges : EdgeList
            Edges on vertices ``0..edges.n-1``.

        Returns
        -------
        Graph
            Backed by a CSR matrix with sorted, distinct columns in each row.

        Raises
        ------
        ValueError
            If an endpoint lies outside ``0..n-1`` or a weight type is not supported.
        """
        from .sizes import check_memory

        n, m = int(edges.n), len(edges.src)
        src, dst, w = edges.src, edges.dst, edges.weight
        if m and (src.min() < 0 or dst.min() < 0 or src.max() >= n or dst.max() >= n):
            raise ValueError(f"edge endpoints must lie in 0..{n - 1}")
        # refused before allocating: the build keeps per vertex four int64 arrays (row starts, fill
        # positions, stamps, the index pointer) and a weight, and per edge an index and a weight
        check_memory((n + 1) * (4 * 8 + w.dtype.itemsize) + m * (8 + w.dtype.itemsize),
                     f"building the graph of n = {n} vertices and {m} edges")
        if m:
            indptr, indices, w = _last_assignment_wins(n, src, dst, w)
        else:
            indptr = np.zeros(n + 1, dtype=np.int32)
            indices = np.zeros(0, dtype=np.int32)
        if w.dtype.kind not in "iuf":
            w = w.astype(np.float64)
        if w.dtype not in _KERNEL_WEIGHT_DTYPES:
            import scipy.sparse as sp

            # scipy's own dtype check (float16, byte-swapped, ...), which only its COO path makes
            sp.coo_matrix((w[:0], (indices[:0], indices[:0])), shape=(n, n))
        return cls(n=n, csr_arrays=(indptr, indices, w), source=edges.source, labels=edges.labels)

    @classmethod
    def from_dense(cls, matrix: np.ndarray, null_value: float | None = 0.0,
                   source: str | None = None) -> "Graph":
        """The graph of a dense weight matrix, in scipy's convention.

        Parameters
        ----------
        matrix : array_like, shape (n, n)
            Weights; booleans count as 0/1.
        null_value : float or None, optional
            The entry that means "no edge" (default 0); inf and nan always do.
        source : str, optional
            Where the matrix came from, for messages.

        Returns
        -------
        Graph

        Raises
        ------
        ValueError
            If the matrix is not square or not numeric.
        """
        a = np.asarray(matrix)
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ValueError(f"a dense graph must be a square 2-D array, got shape {a.shape}")
        if a.dtype.kind not in "biuf":
            raise ValueError(f"graph weights must be numeric, got dtype {a.dtype}")
        # booleans are read as int8 in place; the edges are tested where the matrix is read
        return cls(n=a.shape[0], dense=a, null_value=null_value, source=source)

    @classmethod
    def from_sparse(cls, matrix: Any, source: str | None = None) -> "Graph":
        """The graph of a scipy sparse matrix: every stored entry is an edge, zeros included.

        Parameters
        ----------
        matrix : scipy sparse matrix or array, shape (n, n)
            An entry stored more than once is parallel edges: the lightest wins, as in
            scipy's csgraph on CSR input (never their sum).
        source : str, optional
            Where the matrix came from, for messages.

        Returns
        -------
        Graph

        Raises
        ------
        ValueError
            If the matrix is not square.
        """
        import scipy.sparse as sp

        coo = sp.issparse(matrix) and matrix.format in ("coo", "dok")
        # csr_matrix(coo) would add duplicates up; csr_matrix(csr) keeps a CSR's duplicates
        given = sp.coo_matrix(matrix) if coo else sp.csr_matrix(matrix)
        n = given.shape[0]
        if given.shape[1] != n:
            raise ValueError(f"a graph's matrix must be square, got shape {given.shape}")
        if coo:
            csr = lightest_edges(n, given.row, given.col, given.data)
        else:
            csr = given
            csr.sort_indices()
            row_of = np.repeat(np.arange(n), np.diff(csr.indptr))
            if ((row_of[1:] == row_of[:-1]) & (csr.indices[1:] == csr.indices[:-1])).any():
                csr = lightest_edges(n, row_of, csr.indices, csr.data)
        if csr.dtype.kind not in "iuf":
            csr = csr.astype(np.float64)
        return cls(n=csr.shape[0], csr=csr, source=source)

    # -- facts about the weights -------------------------------------------
    @property
    def density(self) -> float:
        """Edges per vertex pair: ``nnz / n**2``."""
        return self.nnz / float(self.n * self.n) if self.n else 0.0

    def longest_distance_found(self, sweeps: int = 4) -> float:
        """A lower bound on the largest finite shortest distance, found by a few searches.

        Every distance a search finds is a real one, so the largest is a lower bound; on roads,
        meshes and grids it is close to the diameter. Only for sparse graphs with non-negative
        weights (a search costs O(m log n) there, nothing next to an all-pairs solve); cached.

        Parameters
        ----------
        sweeps : int
            Dijkstra searches (scipy's), each from the farthest vertex the last one reached,
            alternately along and against the edges.

        Returns
        -------
        float
            The largest finite distance found, or 0.0 when nothing was searched (a dense
            graph, negative weights, no edges).
        """
        if self.derived.longest_found is None:
            found = 0.0
            if self._csr_arrays is not None and self.n and self.nnz and not self.has_negative_weights:
                from scipy.sparse.csgraph import dijkstra

                forward = self.to_csr()
                backward = forward.T.tocsr()
                start = int(np.argmax(np.diff(forward.indptr)))
                for sweep in range(sweeps):
                    d = dijkstra(backward if sweep % 2 else forward, indices=start)
                    d[~np.isfinite(d)] = -1.0
                    start = int(np.argmax(d))
                    found = max(found, float(d[start]))
                del forward, backward
                if self.sweep_bytes() > RELEASE_BYTES:
                    sizes.release_freed_memory()  # the sweeps' copies, before the solve allocates
            self.derived.longest_found = found
        return self.derived.longest_found

    def sweep_bytes(self) -> int:
        """RAM `longest_distance_found` holds while it searches: the reversed edges, scipy's
        float64 copy of a direction with its int32 columns, and its n-long outputs."""
        w = self._csr_arrays[2].itemsize if self._csr_arrays is not None else 8
        return self.nnz * (4 + w + 8 + 4) + (self.n + 1) * (4 + 4 + 8 + 8 + 8)

    # -- conversions ---------------------------------------------------------
    def to_csr(self):
        """The edges as a scipy CSR matrix (built from the dense form once, then cached)."""
        import scipy.sparse as sp

        if self.csr is None:
            rows, cols = np.nonzero(self.edge_mask)
            self.csr = sp.csr_matrix((self.dense[rows, cols], (rows, cols)), shape=(self.n, self.n))
        return self.csr

    def reversed_csr(self):
        """The CSR of the reversed edges, sorted (kept: the statistics' symmetry test, direction "in"
        and BFS's in-neighbours all ask for it)."""
        if self.derived.reversed_csr is None:
            self.derived.reversed_csr = self.to_csr().T.tocsr()
        return self.derived.reversed_csr

    def is_symmetric(self) -> bool:
        """Whether every edge's reverse is an edge of the same weight (an explicit zero weight is an
        edge): the distances are then symmetric. One transpose, compared array by array where both
        CSRs are canonical (sorted rows, no repeats), as `to_csr`'s are."""
        if self.derived.symmetric is None:
            csr, rev = self.to_csr(), self.reversed_csr()
            if csr.has_canonical_format and rev.has_canonical_format:
                same = (np.array_equal(csr.indptr, rev.indptr) and np.array_equal(csr.indices, rev.indices)
                        and np.array_equal(csr.data, rev.data))
            else:
                pattern = csr.copy()
                pattern.data = np.ones(pattern.nnz, dtype=np.int8)
                same = (csr != rev).nnz == 0 and (pattern != pattern.T).nnz == 0
            self.derived.symmetric = self.n == 0 or bool(same)
        return self.derived.symmetric

    def fw_matrix(self, dtype, out: np.ndarray | None = None, rows: tuple[int, int] | None = None) -> np.ndarray:
        """The Floyd-Warshall start matrix.

        Parameters
        ----------
        dtype : dtype-like
            The matrix's type.
        out : numpy.ndarray, optional
            An array of ``dtype`` and the result's shape to fill instead of a new one.
        rows : (int, int), optional
            Only rows ``i0:i1`` (an (i1 - i0) x n block), so a matrix streamed out of
            core is built a stripe at a time.

        Returns
        -------
        numpy.ndarray
            w(i,j) on edges, the INF sentinel (`apsp.exactness.inf_value`) elsewhere,
            ``min(0, w(i,i))`` on the diagonal.
        """
        dt = np.dtype(dtype)
        i0, i1 = (0, self.n) if rows is None else rows
        d = out if out is not None else np.empty((i1 - i0, self.n), dtype=dt)
        if self._rule is not None and self.dense is not None:  # one threaded pass: edges tested as converted
            from .dense import start_rows

            start_rows(self.dense, self._rule, dt, d, i0, i1)
            return d
        if self.dense is not None:
            d.fill(exactness.inf_value(dt))
            np.copyto(d, self.dense[i0:i1], where=self.edges_in_rows(i0, i1), casting="unsafe")
        else:
            assert self._csr_arrays is not None  # a graph holds its edges densely or as CSR
            d.fill(exactness.inf_value(dt))
            indptr, indices, data = self._csr_arrays
            a = i0
            while a < i1:  # rows of at most START_CHUNK_EDGES edges (or one row): bounded temporaries
                b = max(a + 1, min(i1, int(np.searchsorted(indptr, indptr[a] + START_CHUNK_EDGES, "right")) - 1))
                lo, hi = indptr[a], indptr[b]
                r = np.repeat(np.arange(a - i0, b - i0, dtype=np.intp), np.diff(indptr[a:b + 1]))
                d[r, indices[lo:hi]] = data[lo:hi].astype(dt)
                a = b
        diagonal = np.arange(i0, i1)
        d[diagonal - i0, diagonal] = np.minimum(d[diagonal - i0, diagonal], 0)
        return d
