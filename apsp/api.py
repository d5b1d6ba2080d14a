"""The public Python API: validate, choose method and backend, dispatch, package the result."""
from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import dtypes
from .errors import BackendUnavailableError, MemoryPlanError
from .graph import EdgeList, Graph, lightest_edges, vertex_index, vertex_indices, vertex_labels
from .jit import book_compile, compile_seconds, compiling
from .costs import GPU_FIXED_COST, SEARCH_COST, estimated_seconds, worth_searching
from .solvers import BACKENDS, KEYWORD_OPTIONS, METHODS, SolveOptions, get_solver, gpu_available, unknown_option

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike

    #: what `shortest_paths` and `as_graph` accept as a graph (scipy sparse matrices too)
    GraphLike = Union[Graph, EdgeList, ArrayLike, str, "os.PathLike[str]", Any]


#: decisions (method, backend, dtype, memory plan) are logged here at INFO level
log = logging.getLogger(__name__)


@dataclass
class Result:
    """All-pairs shortest paths of one graph, as `shortest_paths` returns them.

    ``distances[i, j]`` is the length of a shortest path from i to j; pairs with
    no path hold ``unreachable`` (``inf`` for float dtypes, the dtype's maximum
    for integer dtypes). Use ``reachable`` for a boolean mask, ``to_float()`` for
    scipy's float64-with-inf convention.

    Attributes
    ----------
    distances : numpy.ndarray, shape (n, n), or (k, n) with ``sources``
        Shortest distances, of ``dtype``; ``unreachable`` where there is no path.
        Row r holds the distances from ``sources[r]`` when sources were given.
    method : str
        The method that ran: ``"fw"``, ``"bfs"``, ``"dijkstra"``, ``"johnson"`` or ``"reference"``.
    backend : str
        Where it ran: ``"cpu"`` or ``"gpu"``.
    dtype : numpy.dtype
        The distances' type (chosen from the weights unless one was asked for).
    block_size : int or None
        Floyd-Warshall's blocking factor (None for other methods).
    predecessors : numpy.ndarray or None
        With ``return_predecessors=True``: int32, ``predecessors[i, j]`` is the
        vertex before j on a shortest path from i, -9999 where there is none.
    successors : numpy.ndarray or None
        With ``return_successors=True``: int32, ``successors[i, j]`` is the
        vertex after i on a shortest path to j, -9999 where there is none.
    timings : dict of str to float
        Seconds spent in each stage (``validate``, ``setup``, the solver's own
        stages such as ``h2d``, ``compute``, ``d2h``, and ``other``).
    info : dict
        Facts about the run worth keeping, e.g. the out-of-core plan.
    sources : numpy.ndarray or None
        The source vertices of the rows (``sources=``) as indices, None for all pairs.
    labels : numpy.ndarray or None
        The input's name of each vertex, ``labels[i]`` for row/column i (SNAP ids,
        GraphML node ids), or None when the input numbered its vertices by index.
        Methods that name vertices (`path`, `distance`, `index_of`, `to_frame`)
        take and give labels when there are labels, indices otherwise.
    n : int
        Number of vertices.
    unreachable : scalar
        The value of ``distances`` where there is no path.
    reachable : numpy.ndarray of bool, shape (n, n)
        Where a path exists.
    """

    distances: np.ndarray
    method: str
    backend: str
    dtype: np.dtype
    block_size: int | None = None
    predecessors: np.ndarray | None = None
    successors: np.ndarray | None = None
    timings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    sources: np.ndarray | None = None
    labels: np.ndarray | None = None

    def __post_init__(self):
        self.labels = vertex_labels(self.labels, self.distances.shape[1])

    @property
    def n(self) -> int:
        """Number of vertices."""
        return self.distances.shape[1]

    @property
    def unreachable(self) -> np.generic:
        """The value of ``distances`` where there is no path (`apsp.unreachable_value`)."""
        return dtypes.unreachable_value(self.distances.dtype)

    @property
    def reachable(self) -> np.ndarray:
        """Boolean (n, n) mask: True where a path exists."""
        return self.distances != self.unreachable

    def to_float(self) -> np.ndarray:
        """Distances as float64 with ``inf`` where there is no path (scipy's convention)."""
        out = self.distances.astype(np.float64)
        out[~self.reachable] = np.inf
        return out

    def index_of(self, label: Any) -> int:
        """The row/column index of the vertex named ``label``.

        Parameters
        ----------
        label : int or str
            A label of `labels`; without labels, the index itself (checked).

        Returns
        -------
        int
            ``i`` with ``labels[i] == label``.

        Raises
        ------
        ValueError
            If no vertex has that label.

        Examples
        --------
        >>> import apsp
        >>> r = apsp.shortest_paths(apsp.EdgeList(2, [0], [1], [4], labels=[10, 20]))
        >>> r.index_of(20), int(r.distances[r.index_of(10), r.index_of(20)])
        (1, 4)
        """
        return vertex_index(self.labels, self.n, label)

    def distance(self, u: Any, v: Any) -> int | float:
        """The length of a shortest path from ``u`` to ``v`` (labels, or indices without labels).

        Parameters
        ----------
        u, v : int or str
            Start and end vertex; ``u`` must be one of the rows' sources.

        Returns
        -------
        int or float
            A Python int for integer dtypes, a float otherwise; ``math.inf`` when
            there is no path.
        """
        i, j = self._row_of(u), self.index_of(v)
        value = self.distances[i, j]
        if value == self.unreachable:
            return float("inf")
        return int(value) if self.distances.dtype.kind in "iu" else float(value)

    def _row_of(self, label) -> int:
        """The row of ``distances`` that holds the vertex named ``label``'s distances."""
        return int(self._rows_of([label])[0])

    def _rows_of(self, labels) -> np.ndarray:
        """The rows of ``distances`` of the vertices named ``labels``."""
        wanted = vertex_indices(self.labels, self.n, labels)
        if self.sources is None:
            return wanted
        order = np.argsort(self.sources, kind="stable")
        if not order.size:
            raise ValueError("the result holds no rows (sources=[])")
        pos = np.minimum(np.searchsorted(self.sources[order], wanted), len(order) - 1)
        missing = self.sources[order][pos] != wanted
        if missing.any():
            name = np.atleast_1d(np.asarray(labels, dtype=object)).reshape(-1)[np.argmax(missing)]
            raise ValueError(f"vertex {name!r} is not one of the sources")
        return order[pos]

    def path(self, i: Any, j: Any) -> list[Any]:
        """Vertices of a shortest path from i to j.

        Parameters
        ----------
        i, j : int or str
            Start and end vertex: labels when the result has `labels`, else 0-based indices.

        Returns
        -------
        list
            From ``i`` to ``j`` inclusive, named as ``i`` and ``j`` are.

        Raises
        ------
        ValueError
            If the solve kept neither predecessors nor successors (predecessors
            with ``sources``), or ``i`` is not one of the sources.
        apsp.paths.NoPathError
            If there is no path from ``i`` to ``j``.
        """
        from .paths import NoPathError, reconstruct_path

        a, b = self.index_of(i), self.index_of(j)
        try:
            if self.sources is not None:
                route = self._path_from_rows(self._row_of(i), a, b)
            elif self.successors is not None:
                route = reconstruct_path(self.successors, a, b, kind="successors")
            elif self.predecessors is not None:
                route = reconstruct_path(self.predecessors, a, b, kind="predecessors")
            else:
                raise ValueError("solve with return_predecessors=True or return_successors=True to get paths")
        except NoPathError:
            if self.labels is None:
                raise
            raise NoPathError(f"there is no path from {i!r} to {j!r}") from None
        return route if self.labels is None else self.labels[route].tolist()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the whole result to one ``.npz`` file, whole or not at all (`apsp.load_result` reads it).

        Parameters
        ----------
        path : str or os.PathLike
            The file: distances, the predecessor and successor matrices and
            sources when present, labels, and method, backend, block size,
            timings and info as JSON (`apsp.io.result`).

        Examples
        --------
        >>> import apsp, numpy as np, tempfile, os
        >>> r = apsp.shortest_paths(np.array([[0, 3], [1, 0]]))
        >>> p = os.path.join(tempfile.mkdtemp(), "r.npz")
        >>> r.save(p)
        >>> back = apsp.load_result(p)
        >>> np.array_equal(back.distances, r.distances), back.method == r.method
        (True, True)
        """
        from .io.result import save_result

        save_result(path, self)

    def to_frame(self, library: str = "pandas", sources: ArrayLike | None = None,
                 max_rows: int = 10_000_000) -> Any:
        """The reachable pairs as an edge table: columns ``source``, ``target``, ``distance``.

        Parameters
        ----------
        library : {"pandas", "polars"}
            The data frame library (imported only now; ``pip install 'apsp[frames]'``).
        sources : sequence, optional
            Only the rows of these vertices (labels, or indices without labels); default all rows.
        max_rows : int, optional
            Refuse, before building anything, a table of more reachable pairs than this.

        Returns
        -------
        pandas.DataFrame or polars.DataFrame
            One row per reachable pair (a vertex reaches itself at distance 0), by
            source then target; ``source`` and ``target`` are labels when the
            result has them, else indices; ``distance`` keeps the result's dtype.

        Raises
        ------
        ValueError
            For an unknown library, a vertex not among the rows, or more pairs than ``max_rows``.
        apsp.errors.MissingDependencyError
            When the library is not installed.
        """
        from .frames import edge_table

        return edge_table(self, library, sources, max_rows)

    def _path_from_rows(self, row: int, i: int, j: int) -> list[int]:
        """A route from source i's predecessor row (each row is a whole shortest-path tree)."""
        from .paths import NoPathError

        if self.predecessors is None:
            raise ValueError("with sources=, solve with return_predecessors=True to get paths")
        pred = self.predecessors[row]
        if i != j and pred[j] < 0:
            raise NoPathError(f"there is no path from {i} to {j}")
        route = [int(j)]
        while route[-1] != i:
            route.append(int(pred[route[-1]]))
            if len(route) > self.n:
                raise ValueError(f"the predecessor row of {i} loops")
        return route[::-1]


def load_result(path: str | os.PathLike[str]) -> Result:
    """Read a result file written by `Result.save` (or ``apsp solve -o result.npz``).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file (`apsp.io.result` describes it).

    Returns
    -------
    Result
        The arrays bit for bit as saved, labels, and method, backend, block size,
        timings and info as JSON gave them back (tuples as lists).

    Raises
    ------
    GraphFormatError
        For a file that is not an apsp result file (any other ``.npz`` or zip included).
    MemoryPlanError
        Before reading arrays the memory available cannot hold.
    """
    from .io.result import read_result

    return Result(**read_result(path))


def as_graph(graph: GraphLike, *, directed: bool = True, unweighted: bool = False,
             null_value: float | None = 0.0, fmt: str | None = None) -> Graph:
    """Turn user input into a validated `Graph`.

    Parameters
    ----------
    graph : Graph, EdgeList, array_like, scipy sparse matrix, list of tuples, str or os.PathLike
        A `Graph` (used as is), an `EdgeList`, a square dense array
        (``null_value``, inf and nan mean no edge, as in scipy), a scipy sparse
        matrix (explicit entries are edges), a sequence of ``(u, v)`` or
        ``(u, v, w)`` tuples (0-based; ``n`` = largest vertex + 1), or a path to
        a graph file.
    directed : bool, optional
        If False, an edge either way is an edge both ways (the lighter wins
        where both are given).
    unweighted : bool, optional
        Give every edge weight 1.
    null_value : float or None, optional
        For dense arrays: the entry that means "no edge" (default 0; None: only
        inf and nan do).
    fmt : str, optional
        For files: the format name (default: from the suffix), as in `apsp.read_graph`.

    Returns
    -------
    Graph

    Raises
    ------
    TypeError
        For input of another kind.
    ValueError
        For a non-square array, negative or non-integer vertex numbers, or NaN weights.
    GraphFormatError
        For a malformed file (naming file, line and problem).
    """
    if isinstance(graph, Graph):
        g = graph
    elif isinstance(graph, (str, os.PathLike)):
        from .io import read_graph

        loaded = read_graph(Path(graph), fmt=fmt)
        return as_graph(loaded, directed=directed, unweighted=unweighted, null_value=null_value)
    elif isinstance(graph, EdgeList):
        g = Graph.from_edges(graph)
    elif _is_scipy_sparse(graph):
        g = Graph.from_sparse(graph)
    elif isinstance(graph, np.ndarray):
        g = Graph.from_dense(graph, null_value=null_value)
    elif isinstance(graph, (list, tuple)):
        g = Graph.from_edges(_edges_from_tuples(graph))
    else:
        raise TypeError(
            f"cannot read a graph from {type(graph).__name__}: give a square array, a scipy sparse "
            "matrix, an apsp.EdgeList, a list of (u, v[, w]) tuples, or a file path")
    if unweighted:
        g = _unit_weights(g)
    if not directed:
        g = _symmetrized(g)
    return g


def _is_scipy_sparse(obj) -> bool:
    """A scipy sparse matrix or array? Without importing scipy.sparse (50 ms) when it is not
    loaded: then ``obj`` cannot be one."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(obj)


def _edges_from_tuples(items) -> EdgeList:
    arr = np.asarray(items)
    if arr.dtype.kind not in "biuf":  # strings, None, mixed objects
        bad = next((x for t in items for x in (t if isinstance(t, (list, tuple)) else [t])
                    if isinstance(x, (str, bytes)) or x is None), None)
        raise TypeError(f"edge tuples must hold numbers (u, v[, w]), found {bad!r}"
                        if bad is not None else "edge tuples must hold numbers (u, v[, w])")
    if arr.size == 0:
        return EdgeList(0, [], [], np.zeros(0))
    if arr.ndim != 2 or arr.shape[1] not in (2, 3):
        raise ValueError("an edge list must hold (u, v) or (u, v, w) tuples")
    u = arr[:, 0].astype(np.int64)
    v = arr[:, 1].astype(np.int64)
    if (arr[:, :2] != np.floor(arr[:, :2])).any() or min(u.min(), v.min()) < 0:
        raise ValueError("edge endpoints must be non-negative integers (0-based)")
    w = arr[:, 2] if arr.shape[1] == 3 else np.ones(len(u), dtype=np.int64)
    return EdgeList(int(max(u.max(), v.max())) + 1, u, v, w)


def _unit_weights(g: Graph) -> Graph:
    csr = g.to_csr().copy()
    csr.data = np.ones_like(csr.data, dtype=np.int8)
    return Graph(n=g.n, csr=csr, source=g.source, labels=g.labels)


def _symmetrized(g: Graph) -> Graph:
    """Undirected: an edge either way is an edge both ways; with both present the lighter wins."""
    csr = g.to_csr().tocoo()
    sym = lightest_edges(g.n, np.concatenate([csr.row, csr.col]), np.concatenate([csr.col, csr.row]),
                         np.concatenate([csr.data, csr.data]))
    return Graph(n=g.n, csr=sym, source=g.source, labels=g.labels)


#: the automatic rule's thresholds (see `choose_method`)
GPU_MIN_VERTICES = 256
SPARSE_EDGES_PER_VERTEX = 2
#: nested-dissection FW is considered from this many vertices, up to this many edges per vertex
#: (denser graphs have separators too large for it to win; the ordering is not even computed)
ND_MIN_VERTICES = 1000
ND_MAX_EDGES_PER_VERTEX = 16
def _nd_usable(g: Graph) -> bool:
    return ND_MIN_VERTICES <= g.n and g.nnz <= ND_MAX_EDGES_PER_VERTEX * g.n


def choose_backend(backend: str, method: str, n: int) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "gpu":
        ok, why = gpu_available(explicit=True)
        if not ok:
            raise BackendUnavailableError(f"the GPU backend cannot run here: {why}")
        return backend
    if backend == "auto" and method in ("fw", "nd-fw", "bfs") and n >= GPU_MIN_VERTICES and gpu_available()[0]:
        return "gpu"
    return "cpu"


def choose_method(g: Graph, method: str, backend: str = "auto", rows: bool = False) -> str:
    """The documented automatic choice (see README, "Choosing a method").

    * every weight 1: multi-source BFS (bit-parallel), on the CPU or the GPU;
    * other weights, on the GPU (``backend="gpu"``, or ``"auto"`` with a CUDA
      GPU and n >= 256): Floyd-Warshall, since Dijkstra/Johnson run on the CPU only;
    * other weights on the CPU: Dijkstra (Johnson when some weight is negative)
      when the graph is very sparse, at most 2 edges per vertex on average;
      otherwise blocked Floyd-Warshall;
    * then, from 1000 vertices and up to 16 edges per vertex,
      nested-dissection Floyd-Warshall (``"nd-fw"``) replaces that pick when
      its estimated time is lower: `estimated_seconds` counts its updates from
      the graph's ordering (grids, meshes, road and geometric graphs have small
      separators; random graphs do not) against n^3 for dense FW and
      n (m + n) log2 n for Dijkstra, at the rates in `WORK_RATES`; not for ``rows``
      (some source rows asked for: `method_for_sources` weighs searches against dense FW,
      and the ordering, a whole-graph dissection, is never computed for them).

    "A GPU" follows `apsp.solvers.gpu_available`, the same rule as
    `choose_backend`: the Triton interpreter never counts for ``"auto"``.

    Measured with ``benchmarks/auto_rule.py`` (2-core machine, n = 500..4000,
    density 0.001..0.5): BFS beat FW and Dijkstra on every unit-weight graph
    with n >= 1000 (by 8x to 30x); with weights 1..100, Dijkstra beat FW only up
    to about 2 edges per vertex (n=1000, m=1000: 0.02 s vs 0.20 s; n=2000,
    m=4000: 0.56 s vs 0.69 s; n=4000, m=16000: 7.9 s vs 4.4 s).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if method != "auto":
        return method
    if g.unit_weights:
        return "bfs"
    on_gpu = backend == "gpu" or (backend == "auto" and g.n >= GPU_MIN_VERTICES and gpu_available()[0])
    pick = "fw"
    if not on_gpu and g.nnz <= SPARSE_EDGES_PER_VERTEX * g.n:
        pick = "johnson" if g.has_negative_weights else "dijkstra"
    if not rows and _nd_usable(g):
        where = "gpu" if on_gpu else "cpu"
        if estimated_seconds(g, "nd-fw", where) < estimated_seconds(g, pick, where):
            pick = "nd-fw"
    return pick


def shortest_paths(graph: GraphLike, method: str = "auto", backend: str = "auto",
                   dtype: DTypeLike | None = None, *, block_size: int | None = None,
                   directed: bool = True, unweighted: bool = False,
                   return_predecessors: bool = False, return_successors: bool = False,
                   null_value: float | None = 0.0, progress: bool | None = None,
                   sources: ArrayLike | None = None, **options: Any) -> Result:
    """All-pairs shortest paths (or from some sources only).

    Parameters
    ----------
    graph : array_like, scipy sparse matrix, EdgeList, Graph, list of tuples, str or os.PathLike
        The directed graph (see `as_graph`).
    method : {"auto", "fw", "nd-fw", "bfs", "dijkstra", "johnson", "reference"}
        ``"fw"`` is blocked Floyd-Warshall; ``"nd-fw"`` the same in nested-dissection
        order, skipping products that cannot change anything (sparse graphs with
        small separators; METIS orders it where pymetis is installed, ``leaf_size=`` tunes it); ``"bfs"`` multi-source BFS (unit
        weights); ``"dijkstra"`` / ``"johnson"`` apsp's parallel Numba searches (CPU
        only; Johnson for negative weights); ``"reference"`` the plain O(n^3)
        oracle; ``"auto"`` chooses as the README's "Choosing a method" says.
    backend : {"auto", "cpu", "gpu"}
        ``"auto"`` uses the GPU when torch sees one and the method has a GPU solver.
    dtype : {None, "int16", "int32", "int64", "float32", "float64"}
        Distance type. None picks the narrowest that holds the actual
        distances: for ``"fw"`` and ``"nd-fw"`` with non-negative integer weights it solves in int16 (then
        int32, int64), verifies that no distance was cut off, and solves again
        one type wider only if one may have been (`apsp.dtypes`); otherwise it
        takes the narrowest that holds the worst case ``(n-1)*max|w|``. With
        integer weights a dtype narrower than the worst case is not refused up
        front: Floyd-Warshall checks its result in it as above; where that check
        cannot tell (negative weights, a float dtype, the searches, the oracle)
        the solve runs in the integer dtype of the worst case and the result is
        cast after checking every distance (float32 holds integers up to 2**24).
        A dtype the distances do not fit is refused with `DtypeError`. ``info`` says which dtypes were tried
        (``dtype_tried``), whether a retry happened (``dtype_retry``) and why
        the result can be trusted (``dtype_check``: "bound", "verified", or "cast":
        a search or the oracle solved in the dtype the worst case needs and
        every distance was checked to fit the one asked for, which it is cast to).
        ``method="bfs"`` also takes "uint8" and "uint16", and None there picks
        uint8, uint16 or int32 by the diameter found.
    block_size : int, optional
        Blocking factor for Floyd-Warshall (any positive value; None = the backend's best);
        out of core, the width of the pivot panels streamed.
    directed : bool, optional
        If False, an edge either way is an edge both ways (the lighter wins
        where both are given); a negative edge is then a negative cycle.
    unweighted : bool, optional
        Give every edge weight 1 (distances count edges; ``method="bfs"`` needs this
        unless every weight already is 1).
    sources : sequence of int, optional
        Only these source vertices (0-based; the labels when the graph has labels,
        e.g. read from a SNAP or GraphML file): the result holds a (k, n) block,
        row r for ``sources[r]``. k single-source searches run when they cost
        less than the full solve (see `method_for_sources`), else the full
        solve runs and the rows are kept.
    return_predecessors, return_successors : bool, optional
        Also return scipy-style predecessor and/or next-hop matrices (int32, -9999 = none).
    null_value : float or None, optional
        For dense arrays: the entry that means "no edge" (default 0, as in scipy;
        inf and nan always do; None: only they do).
    progress : bool or None, optional
        Show a progress bar during long solves: True, False, or None (default)
        for a bar on a terminal or in a Jupyter notebook only.
    **options
        The fields of `apsp.solvers.SolveOptions`; an unknown name is a `TypeError`.
        Memory (`apsp.planner`): ``gpu_memory="8GB"`` (GPU budget, default the
        card's free memory), ``host_memory=`` (RAM budget, default what the OS
        and the container's memory limit allow), ``out_of_core``
        (None: stream through the GPU when the matrix does not fit its budget;
        True: always stream, from a scratch file on the CPU backend; False:
        never), ``scratch_dir=``, ``ooc_rows=``. Checkpoints (`apsp.checkpoint`,
        method "fw"): ``checkpoint="state.ckpt"``, ``resume=True``,
        ``checkpoint_every=300`` (seconds), ``on_round=callable(vertices_done)``.
        Engines: ``variant``, ``device``, ``threads``, ``pin_host``, and the BFS tiles.

    Returns
    -------
    Result
        Distances, the method, backend and dtype used, timings, and the
        predecessor / successor matrices when asked for.

    Raises
    ------
    NegativeCycleError
        The graph has a cycle of negative total weight.
    DtypeError
        ``dtype`` cannot hold every possible distance, or is not supported.
    BackendUnavailableError
        ``backend="gpu"`` without a usable GPU, or a CPU-only method on the GPU.
    MemoryPlanError
        The solve does not fit the memory available (the message says what would).
    GraphFormatError
        A graph file is malformed.
    ValueError
        Unknown method or backend, ``method="bfs"`` with weights other than 1,
        a bad ``block_size``, or malformed input.
    TypeError
        ``graph`` is of a kind apsp cannot read, or an option name is unknown.

    Examples
    --------
    >>> import numpy as np, apsp
    >>> w = np.array([[0, 3, 0], [0, 0, 4], [1, 0, 0]])
    >>> r = apsp.shortest_paths(w, backend="cpu")
    >>> r.distances
    array([[0, 3, 7],
           [5, 0, 4],
           [1, 4, 0]], dtype=int16)
    """
    t0 = time.perf_counter()
    for name in options:
        if name not in KEYWORD_OPTIONS:
            raise unknown_option(name, KEYWORD_OPTIONS + _PARAMETERS)
    from .sizes import memory_limit

    with memory_limit(options.get("host_memory")):  # a file read and the graph built within the budget
        g = as_graph(graph, directed=directed, unweighted=unweighted, null_value=null_value)
    src = None if sources is None else source_vertices(sources, g.n, g.labels)
    t_query = time.perf_counter()
    if backend == "auto" and g.n >= GPU_MIN_VERTICES:
        gpu_available()  # asking for a GPU may import torch: booked as "setup", not as validation
    t_query = time.perf_counter() - t_query
    chosen = choose_method(g, method, backend, rows=src is not None)
    if src is not None:
        chosen = method_for_sources(g, chosen, method, backend, len(src))
    if chosen == "bfs" and not g.unit_weights:
        raise ValueError("method='bfs' needs unit weights: pass unweighted=True or choose another method")
    if chosen in ("dijkstra", "johnson") and backend == "gpu":
        raise BackendUnavailableError(f"method {chosen!r} runs on the CPU only; use method='fw' on the GPU")
    t_setup = time.perf_counter()
    where = choose_backend(backend, chosen, g.n)  # GPU: imports torch and starts CUDA
    t_setup = time.perf_counter() - t_setup + t_query
    skipped: list[str] = []
    fallback = None
    rows_by_search = src is not None and (chosen in ("dijkstra", "johnson") or (
        chosen == "bfs" and few_sources_for_bfs(g, len(src))))
    if chosen == "bfs" and rows_by_search:
        # one breadth-first search per source writes straight into the dtype: narrowest for n - 1 hops
        dt = (dtypes.as_dtype(dtype, dtypes.SUPPORTED + dtypes.HOP_ONLY) if dtype is not None
              else np.dtype(np.uint8 if g.n < 255 else np.uint16 if g.n < 65535 else np.int32))
    elif chosen == "bfs":
        # hop counts: BFS picks the narrowest type that holds the diameter it finds,
        # and checks a user's dtype against it (DtypeError if a distance does not fit)
        dt = None if dtype is None else dtypes.as_dtype(dtype, dtypes.SUPPORTED + dtypes.HOP_ONLY)
    elif chosen in ("fw", "nd-fw"):
        # Floyd-Warshall's kernels, dense or in nested-dissection order, saturate at INF
        # (apsp.dtypes): narrowest first (int16: half the memory traffic, twice the GPU's min-plus
        # rate), verified after the solve when only the data can show that it fits
        attempts = _resumable(g.dtype_attempts(dtype), options)
        if any(a.checked for a in attempts[:-1]) and worth_searching(g, chosen, where):
            # a few searches find a distance that rules a narrow dtype out before its solve
            attempts, skipped = dtypes.skip_bound_to_fail(attempts, g.longest_distance_found(),
                                                          g.max_abs_weight)
    else:
        # the searches and the oracle compute in their output dtype without saturating: the
        # worst-case bound decides (a requested narrower dtype is a checked cast of the result)
        attempts = g.dtype_attempts(dtype, saturating=False)
    if chosen != "bfs":
        for attempt in attempts:
            dtypes.check_float_range(attempt.dtype, dtypes.largest_float_sum(
                g.n, g.max_abs_weight, chosen, g.has_negative_weights))
    else:
        attempts = [dtypes.Attempt(dt)]
    checkpoint = options.get("checkpoint")
    if options.get("resume") and checkpoint and not Path(checkpoint).exists():
        from .checkpoint import CheckpointError

        raise CheckpointError(f"checkpoint {checkpoint} does not exist, so there is nothing to resume; "
                              "drop resume=True (--resume) to start a solve that saves to it")
    from .planner import plan_memory

    t_first = time.perf_counter()
    tried = []
    compiled = compile_seconds()
    for number, attempt in enumerate(attempts, 1):
        t_try = time.perf_counter()
        dt = attempt.dtype
        band = dtypes.cutoff_band(dt, g.max_abs_weight) if attempt.checked else None
        opts = SolveOptions(dtype=dt, block_size=block_size, predecessors=return_predecessors,
                            successors=return_successors, progress=progress,
                            sources=src if rows_by_search else None, cutoff_band=band, **options)
        if opts.checkpoint and chosen != "fw":
            raise ValueError(f"checkpoints are available for method 'fw' only, not {chosen!r}")
        # refuse early what cannot fit (MemoryPlanError) in the dtype tried now; stream out of
        # core when the plan says so
        t_plan = time.perf_counter()
        try:
            # GPU: asks the card for its free memory
            plan = plan_memory(g, chosen, where, opts, cast_to=attempt.cast_to)
        except MemoryPlanError as exc:
            if not (method == "auto" and chosen == "nd-fw"):
                raise
            # the automatic choice refuses only where no route fits: dense FW can stream
            fallback = f"nd-fw does not fit: {str(exc).split('. Ways out')[0]}"
            chosen = "fw"
            plan = plan_memory(g, chosen, where, opts, cast_to=attempt.cast_to)
        t1 = time.perf_counter()
        log.info("n=%d edges=%d: method %s (asked %s), backend %s (asked %s), dtype %s%s, memory plan %s",
                 g.n, g.nnz, chosen, method, where, backend,
                 "by diameter" if dt is None else np.dtype(dt).name,
                 " (to be verified)" if attempt.checked else "", plan.summary())
        with compiling(f"CPU kernels for {dt.name if dt is not None else chosen.upper()}"):
            try:
                if plan.out_of_core:
                    out = get_solver(f"{chosen}-out-of-core", where)(g, opts, plan)
                elif chosen == "bfs" and rows_by_search:
                    from .cpu.sparse import solve_bfs_rows

                    out = solve_bfs_rows(g, opts)
                else:
                    out = get_solver(chosen, where)(g, opts)
            except BaseException as exc:
                if where == "gpu":  # a failed attempt leaves the card as it found it
                    from .gpu import give_back_memory

                    give_back_memory(exc)
                raise
            if where == "gpu":  # so that a retry, or the next call, plans against the whole card
                from .gpu import give_back_memory

                give_back_memory()
            if src is not None and not rows_by_search:  # a full solve was cheaper: keep the rows asked for
                out.dist = out.dist[src]
                out.predecessors = None if out.predecessors is None else out.predecessors[src]
                out.successors = None if out.successors is None else out.successors[src]
        t_solved = time.perf_counter()
        if dt is not None:
            tried.append(np.dtype(out.dist.dtype).name)
        # an engine that can read its result on its device has checked it; else the host reads it
        suspect = out.info.pop("cutoff_suspected", None)
        if attempt.checked and suspect is None:
            suspect = dtypes.cutoff_suspected(out.dist, band)
        t_checked = time.perf_counter()
        if not (attempt.checked and suspect):
            break
        if number == len(attempts):
            raise dtypes.cutoff_error(dt, g.max_abs_weight, requested=dtype is not None)
        log.info("dtype %s may have cut off a distance (a value within max|w| of its limit): solving "
                 "again in %s", dt.name, attempts[number].dtype.name)
        del out  # the wider solve may need the memory
    cast_to = attempt.cast_to
    if cast_to is not None:
        target = None
        if plan.out_of_core and plan.matrix_on_disk and out.dist.shape == (g.n, g.n):
            from .outofcore import HostMatrix  # the result stays off RAM, as the solve's did

            target = HostMatrix(g.n, cast_to, on_disk=True, scratch_dir=plan.scratch_dir).array
        out.dist = dtypes.cast_checked(out.dist, cast_to, g.has_negative_weights, out=target)
        t_checked = time.perf_counter()
    if skipped:
        out.info["dtype_skipped"] = skipped
    if fallback:
        out.info["method_fallback"] = fallback
    if dt is not None:
        out.info.update(dtype_tried=tried, dtype_retry=len(tried) > 1,
                        dtype_check="cast" if cast_to is not None else "verified" if attempt.checked else "bound")
    out.info.setdefault("why", explain_choice(g, chosen, method, backend, where, dtype, src,
                                              rows_by_search, out.info))
    compiled = compile_seconds() - compiled
    t_end = time.perf_counter()
    # stages add up to the whole call: "setup" is choosing and starting the backend (on a GPU
    # mostly torch's import and CUDA's start) and planning; "retry" the narrower solves that
    # were cut off, whole; "check" verifying the result; "other" what the solver's stages miss
    timings = {"validate": (t_first - t0 - t_setup) + (t_plan - t_try), "setup": t_setup + (t1 - t_plan)}
    if len(tried) > 1:
        timings["retry"] = t_try - t_first
    timings.update(out.timings)
    checked = attempt.checked or cast_to is not None
    if checked:
        timings["check"] = t_checked - t_solved
    elapsed = (t_solved if checked else t_checked) - t1
    if out.timings:  # stages add up: what the solver's own stages do not cover is "other"
        timings["other"] = max(0.0, elapsed - sum(out.timings.values()))
    else:
        timings["solve"] = elapsed
    # the explanation and the bookkeeping after the check (a first call imports for them)
    timings["other"] = timings.get("other", 0.0) + (t_end - t_checked)
    # a first run compiles its kernels inside the solve: book those seconds as "compile"
    book_compile(timings, compiled, [*out.timings, "other", "solve", "retry"])
    return Result(distances=out.dist, method=chosen, backend=where, dtype=out.dist.dtype,
                  block_size=out.block_size, predecessors=out.predecessors, successors=out.successors,
                  timings=timings, info=out.info, sources=src, labels=g.labels)


def _resumable(attempts: list, options: dict) -> list:
    """Resuming a checkpoint: start the dtype plan at the dtype the checkpoint was saved in."""
    path = options.get("checkpoint")
    if not (path and options.get("resume") and len(attempts) > 1 and Path(path).is_file()):
        return attempts
    from .checkpoint import read_header

    try:
        saved = np.dtype(read_header(path)["dtype"])
    except Exception:  # noqa: BLE001 - the solver's own checks name what is wrong with the file
        return attempts
    names = [a.dtype for a in attempts]
    return attempts[names.index(saved):] if saved in names else attempts


def explain_choice(g: Graph, chosen: str, method: str, backend: str, where: str, dtype, src,
                   rows_by_search: bool, info: dict | None = None) -> str:
    """Why this method, backend and dtype ran, in a few words (for ``-v``)."""
    if method != "auto":
        why_method = "asked for"
    elif (info or {}).get("method_fallback"):
        why_method = info["method_fallback"] + "; dense Floyd-Warshall can stream the matrix"
    elif g.unit_weights:
        why_method = "every edge weight is 1"
    elif chosen in ("dijkstra", "johnson") and src is not None:
        why_method = f"{len(src)} searches cost less than the full solve"
    elif chosen in ("dijkstra", "johnson"):
        why_method = (f"sparse: {g.nnz} edges for {g.n} vertices"
                      + ("; negative weights need Johnson" if chosen == "johnson" else ""))
    else:
        why_method = f"{g.nnz} edges for {g.n} vertices: dense enough for Floyd-Warshall"
    parts = [f"method {chosen} ({why_method})",
             f"backend {where} ({'asked for' if backend != 'auto' else 'the usable one for ' + chosen})"]
    if src is not None:
        parts.append(f"{len(src)} source rows ({'one search each' if rows_by_search else 'rows of the full solve'})")
    tried = (info or {}).get("dtype_tried", [])
    check = (info or {}).get("dtype_check")
    reason = check and dtypes.explain_check(tried, check, g.distance_bound())
    if check == "verified":
        parts.append(f"dtype {tried[-1]} ({'as asked for, ' if dtype is not None else 'the narrowest, '}{reason})")
    elif check == "cast":
        parts.append(f"dtype as asked for ({reason})")
    elif dtype is not None:
        parts.append("dtype as asked for")
    elif chosen == "bfs":
        parts.append("dtype the narrowest that holds the hop counts")
    else:
        parts.append(f"dtype {tried[-1]}, the smallest that {reason}" if g.integral and tried
                     else "dtype float64 (fractional weights)")
    parts += [f"not tried: {why}" for why in (info or {}).get("dtype_skipped", [])]
    return "; ".join(parts)


def source_vertices(sources, n: int, labels: np.ndarray | None = None) -> np.ndarray:
    """``sources=`` as an int64 array of vertices in ``0..n-1`` (ValueError otherwise); with
    ``labels``, the sources are labels."""
    if labels is not None:
        return vertex_indices(labels, n, sources, "source")
    arr = np.atleast_1d(np.asarray(sources))
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError("sources must be a sequence of vertex numbers (0-based integers)")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"sources must be vertices in 0..{n - 1}")
    return arr


def few_sources_for_bfs(g: Graph, k: int) -> bool:
    """k breadth-first searches beat one bit-parallel BFS of all n (64 sources a sweep)?"""
    return 16 * k <= g.n


def method_for_sources(g: Graph, chosen: str, requested: str, backend: str, k: int) -> str:
    """The method for ``k`` sources: searches when k of them cost less than the full solve.

    An explicit method stays. Under "auto", k Dijkstra searches cost about
    ``SEARCH_COST * k * (m + n) * log2(n)`` against ``n^3`` for Floyd-Warshall
    (on a GPU, about 1000x fewer, plus `GPU_FIXED_COST` for the launches of
    its n/B rounds and the copies, which no small solve avoids); unit weights
    compare k BFS with the bit-parallel all-pairs BFS.
    """
    if requested != "auto" or chosen in ("dijkstra", "johnson") or g.n < 2:
        return chosen
    if chosen == "bfs":
        return chosen  # few_sources_for_bfs decides between k searches and the full BFS
    n = float(g.n)
    searches = SEARCH_COST * k * (g.nnz + n) * np.log2(n)
    on_gpu = backend == "gpu" or (backend == "auto" and g.n >= GPU_MIN_VERTICES and gpu_available()[0])
    full = n ** 3 / 1000.0 + GPU_FIXED_COST if on_gpu else n ** 3
    if searches < full:
        return "johnson" if g.has_negative_weights else "dijkstra"
    return chosen


#: the named parameters of `shortest_paths` (for the nearest-name hint of an unknown keyword)
_PARAMETERS = ("method", "backend", "dtype", "block_size", "directed", "unweighted", "return_predecessors",
               "return_successors", "null_value", "progress")
