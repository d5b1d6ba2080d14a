"""Drop-in replacements for ``scipy.sparse.csgraph.floyd_warshall`` and ``shortest_path``.

Same parameters, same input conventions, same outputs (float64 distances with
``inf``, int32 predecessors with ``-9999``), same exceptions and messages.
Floyd-Warshall distances run on apsp's blocked solvers (CPU, or the GPU when one
is usable); with ``return_predecessors`` it runs scipy's own loop order in Numba
(`apsp.cpu.scipyfw`), so where shortest paths tie the predecessor is scipy's.
Dijkstra and Johnson (``method='D'``, ``'J'``, and ``unweighted=True``) run
apsp's parallel searches with scipy's conventions (a tie may name another
predecessor); Bellman-Ford (``'BF'``) is scipy's own.

How scipy reads a graph, and so how these functions read it:

* dense array: ``0``, ``inf`` and ``nan`` mean "no edge" (so a zero-weight
  edge cannot be expressed densely);
* masked array: masked entries mean "no edge" (and, for Floyd-Warshall, so
  do unmasked zeros, as in scipy);
* sparse matrix (any format): every stored entry is an edge, explicit zeros
  included; where a CSR/CSC/LIL matrix stores the same entry twice the
  smaller weight wins;
* the diagonal is set to 0 before Floyd-Warshall, so self-loops (even
  negative ones) are ignored;
* ``directed=False``: an edge either way is an edge both ways; with both
  present the smaller weight wins. A negative edge is then a negative cycle.

Weights that are whole numbers (with every possible distance below 2**53, so
that float64 is exact too) are solved in the smallest integer dtype that
holds every distance, which is faster and gives scipy's results bit for bit.
Other weights are solved in float64; sums may then differ from scipy's in
the last bits, as the order of additions differs.

Beyond scipy: ``floyd_warshall`` also accepts COO, DOK, BSR and DIA matrices
(scipy's raises ``ValueError`` for them); they are converted with ``tocsr()``,
which adds up duplicate entries, as scipy's Dijkstra does.

Examples
--------
>>> import numpy as np
>>> from apsp import floyd_warshall
>>> graph = np.array([[0, 1, 2, 0],
...                   [0, 0, 0, 1],
...                   [2, 0, 0, 3],
...                   [0, 0, 0, 0]])
>>> dist, pred = floyd_warshall(graph, directed=False, return_predecessors=True)
>>> dist
array([[0., 1., 2., 2.],
       [1., 0., 3., 1.],
       [2., 3., 0., 3.],
       [2., 1., 3., 0.]])
>>> pred[0]
array([-9999,     0,     0,     1], dtype=int32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from .errors import NegativeCycleError
from .graph import Graph
from .methods import METHOD

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: integer-valued float64 sums are exact below this bound
_FLOAT64_EXACT = 2.0 ** 53


def _pydata_to_scipy(csgraph):
    """pydata/sparse arrays become scipy sparse, as in scipy's own validation; torch tensors and
    arrays on a GPU (DLPack, ``__cuda_array_interface__``) become numpy or scipy arrays on the host:
    scipy's functions return numpy's float64 arrays, and so do these (`_on_host`)."""
    csgraph = _on_host(csgraph)
    try:
        from scipy.sparse._sputils import convert_pydata_sparse_to_scipy
    except ImportError:  # pragma: no cover - older or newer scipy without the helper
        return csgraph
    return convert_pydata_sparse_to_scipy(csgraph, accept_fv=[0, np.inf, np.nan])


def _on_host(csgraph):
    """A torch tensor (dense or sparse, any device) or an array on a GPU as the host array scipy would
    read: one copy from the device (the drop-in's results are numpy arrays, as scipy's are; for
    distances that stay on the GPU, `apsp.shortest_paths` with ``output="torch"``)."""
    from .inputs import _library, on_device

    if _library(csgraph) == "torch" and hasattr(csgraph, "layout"):
        if str(csgraph.layout) != "torch.strided":
            from .gpu.tensors import sparse_to_scipy

            return sparse_to_scipy(csgraph)
        from .gpu.tensors import as_numpy

        return as_numpy(csgraph.float() if str(csgraph.dtype) in ("torch.bfloat16", "torch.float16") else csgraph)
    if _library(csgraph) == "cupyx" and hasattr(csgraph, "get") and hasattr(csgraph, "format"):
        return csgraph.get()
    if on_device(csgraph):
        from .gpu.tensors import as_numpy, wrap

        return as_numpy(wrap(csgraph))
    return csgraph


def _check_square(csgraph, sparse_message: str) -> None:
    """Raise the ValueError scipy raises for a graph that is not N x N."""
    import scipy.sparse as sp

    if sp.issparse(csgraph):
        not_2d = not_square = sparse_message
    elif np.ma.isMaskedArray(csgraph):
        not_2d = "compressed-sparse graph must be 2-D"
        not_square = "compressed-sparse graph must be shape (N, N)"
    else:
        not_2d, not_square = "graph should have two dimensions", "graph should be a square array"
    shape = np.shape(csgraph)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(not_square if len(shape) == 2 else not_2d)


def _ready_for_floyd_warshall(w: np.ndarray, directed: bool, unweighted: bool) -> np.ndarray:
    """What scipy's loop does first, in place: every edge 1 if ``unweighted``, a zero diagonal
    (self-loops are ignored) and, for an undirected graph, the lighter of the two directions both ways."""
    if unweighted:
        w[~np.isinf(w)] = 1
    w.flat[:: w.shape[0] + 1] = 0
    if not directed:
        _symmetrize_min(w)
    return w


def _weights_matrix(csgraph, overwrite: bool) -> np.ndarray:
    """The float64 C-contiguous matrix scipy's Floyd-Warshall starts from (inf = no edge).

    With ``overwrite`` and a C-contiguous float64 array, this is the caller's
    own memory (scipy's ``overwrite`` contract); otherwise a fresh array.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import csgraph_masked_from_dense, csgraph_to_dense
    from scipy.sparse.csgraph._validation import validate_graph

    _check_square(csgraph, "csgraph should be a square matrix")
    if sp.issparse(csgraph):
        if csgraph.format not in ("csr", "csc", "lil"):
            # CSR exactly as scipy's own solvers read a COO/DOK/BSR/DIA matrix: how explicit zeros
            # and duplicates of those formats survive conversion has changed between scipy versions
            csgraph = validate_graph(csgraph, directed=True, dense_output=False)
        # explicit zeros stay edges; duplicate entries keep the smallest weight
        w = csgraph_to_dense(csgraph, null_value=np.inf)
        return np.ascontiguousarray(w, dtype=np.float64)
    if np.ma.isMaskedArray(csgraph):
        mask = np.ma.getmaskarray(csgraph)
        w = (np.asarray if overwrite else np.array)(csgraph.data, dtype=np.float64, order="C")
        w[mask | (w == 0)] = np.inf  # scipy: for non-sparse input a zero is never an edge
        return w
    # only an ndarray can be overwritten (scipy on numpy 2 fails for lists here)
    in_place = overwrite and isinstance(csgraph, np.ndarray)
    masked = csgraph_masked_from_dense(csgraph, copy=not in_place, null_value=0,
                                       nan_null=True, infinity_null=True)
    w = np.ascontiguousarray(masked.data, dtype=np.float64)
    w[masked.mask] = np.inf
    return w


def _symmetrize_min(w: np.ndarray) -> None:
    """``w = minimum(w, w.T)`` in place, a band of rows at a time (no n x n temporary)."""
    n = w.shape[0]
    rows = max(1, (1 << 22) // max(n, 1))
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        band = np.minimum(w[lo:hi, :], w[:, lo:hi].T)
        w[lo:hi, :] = band
        w[:, lo:hi] = band.T


def _scipys(function: str, csgraph, **options):
    """scipy's own ``scipy.sparse.csgraph.<function>``, its NegativeCycleError re-raised as apsp's
    subclass (same message)."""
    from scipy.sparse import csgraph as scipy_csgraph

    try:
        return getattr(scipy_csgraph, function)(csgraph, **options)
    except NegativeCycleError:
        raise
    except scipy_csgraph.NegativeCycleError as exc:
        raise NegativeCycleError(str(exc)) from exc


@overload
def floyd_warshall(csgraph: ArrayLike, directed: bool = ..., return_predecessors: Literal[False] = ...,
                   unweighted: bool = ..., overwrite: bool = ...) -> np.ndarray: ...
@overload
def floyd_warshall(csgraph: ArrayLike, directed: bool = ..., *, return_predecessors: Literal[True],
                   unweighted: bool = ..., overwrite: bool = ...) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def floyd_warshall(csgraph: ArrayLike, directed: bool, return_predecessors: Literal[True],
                   unweighted: bool = ..., overwrite: bool = ...) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def floyd_warshall(csgraph: ArrayLike, directed: bool = ..., return_predecessors: bool = ...,
                   unweighted: bool = ..., overwrite: bool = ...
                   ) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...
def floyd_warshall(csgraph: ArrayLike, directed: bool = True, return_predecessors: bool = False,
                   unweighted: bool = False, overwrite: bool = False
                   ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """All-pairs shortest path lengths by Floyd-Warshall; drop-in for scipy's.

    Parameters
    ----------
    csgraph : array_like, masked array or scipy sparse matrix, shape (N, N)
        The graph. Dense: 0, inf and nan mean no edge. Sparse: every stored
        entry is an edge (explicit zeros are zero-weight edges).
    directed : bool, optional
        If False, edges go both ways (the smaller weight wins where both are given).
    return_predecessors : bool, optional
        Also return the (N, N) int32 predecessor matrix (-9999 where there is none).
    unweighted : bool, optional
        Count edges instead of adding weights.
    overwrite : bool, optional
        Write the result into ``csgraph`` when it is a dense C-ordered float64
        array (saves one N x N copy).

    Returns
    -------
    dist_matrix : ndarray of float64, shape (N, N)
        ``dist_matrix[i, j]`` is the shortest distance from i to j, ``inf`` if none.
    predecessors : ndarray of int32, shape (N, N)
        Only with ``return_predecessors``: ``predecessors[i, j]`` is the vertex
        before j on a shortest path from i (-9999 on the diagonal and where
        there is no path). Computed by scipy's own loop order (rows over
        threads), so where several shortest paths tie it names scipy's choice.

    Raises
    ------
    NegativeCycleError
        If the graph has a negative cycle (apsp's class subclasses scipy's).

    Examples
    --------
    >>> import numpy as np
    >>> from apsp import floyd_warshall
    >>> floyd_warshall(np.array([[0, 3, 0], [0, 0, 4], [1, 0, 0]]))
    array([[0., 3., 7.],
           [5., 0., 4.],
           [1., 4., 0.]])
    """
    from .api import run_plan
    from .plan import make_plan

    csgraph = _pydata_to_scipy(csgraph)
    w = _weights_matrix(csgraph, overwrite)
    n = w.shape[0]
    if n and np.isneginf(w).any():
        # only a sparse matrix can store -inf as an edge; no dtype of ours holds
        # such distances, so scipy computes them (same semantics by construction)
        return _scipys("floyd_warshall", csgraph, directed=directed, return_predecessors=return_predecessors,
                       unweighted=unweighted, overwrite=overwrite)
    _ready_for_floyd_warshall(w, directed, unweighted)
    if n == 0:
        return (w, np.empty((0, 0), dtype=np.int32)) if return_predecessors else w
    if return_predecessors:
        # which of two tied paths a predecessor names depends on scipy's loop order: run it
        predecessors = _scipys_loop(w, return_predecessors=True)
        assert predecessors is not None  # asked for
        return w, predecessors
    g = Graph.from_dense(w, null_value=np.inf)
    try:
        # whole numbers with every distance below 2**53 go to an integer dtype (exact, and so is float64:
        # the results are scipy's); larger ones are summed in float64 too, as no integer dtype rounds
        # as scipy's sums: a constraint of the plan
        result = run_plan(g, make_plan(g, "fw", "auto", progress=False, integers_below=_FLOAT64_EXACT), {})
    except NegativeCycleError:
        # scipy's message names the vertices its own loop leaves negative: run it to know them
        _scipys_loop(_ready_for_floyd_warshall(_weights_matrix(csgraph, False), directed, unweighted),
                     return_predecessors=False)
        raise
    np.copyto(w, result.distances, casting="unsafe")
    if result.distances.dtype != np.float64:
        w[~result.reachable] = np.inf
    return w


def _scipys_loop(dist: np.ndarray, return_predecessors: bool) -> np.ndarray | None:
    """scipy's own Floyd-Warshall loop on ``dist``, in place (`apsp.cpu.scipyfw`): its predecessors
    (None without), or scipy's `NegativeCycleError`, word for word, where it leaves a negative diagonal."""
    from .cpu.scipyfw import scipy_floyd_warshall

    pred = scipy_floyd_warshall(dist, return_predecessors=return_predecessors)
    negative = np.where(dist.diagonal() < 0)[0]
    if negative.size:
        raise NegativeCycleError("Negative cycle in nodes %s" % negative, vertices=negative)
    return pred


#: scipy's search methods and the apsp method each runs on (None: scipy's own code runs it)
_SEARCHES = {"D": "dijkstra", "J": "johnson", "BF": None}


def _auto_method(csgraph, indices) -> str:
    """scipy's own choice: FW when dense enough and no ``indices``, else D (J with negative weights).
    Kept here, not in the plan: ``method='auto'`` promises scipy's pick, and which method runs
    decides scipy's conventions (``indices`` refused with FW, whose predecessors name which tie)."""
    import scipy.sparse as sp

    n = csgraph.shape[0]
    if sp.issparse(csgraph):
        edges = csgraph.data if csgraph.format in ("csr", "csc", "coo") else csgraph.tocoo().data
    elif np.ma.isMaskedArray(csgraph):
        edges = csgraph.compressed()
    else:
        a = np.asarray(csgraph)
        edges = a[np.isfinite(a) & (a != 0)]
    if indices is not None or edges.size < n * n / 4:
        return "J" if np.any(edges < 0) else "D"
    return "FW"


def _source_rows(indices, n: int):
    """scipy's reading of ``indices``: (flat int64 sources, output shape); negatives count from the end."""
    if indices is None:
        return np.arange(n, dtype=np.int64), (n, n)
    idx = np.array(indices, order="C", dtype=np.int32, copy=True)
    shape = idx.shape + (n,)
    idx = np.atleast_1d(idx).reshape(-1)
    idx[idx < 0] += n
    if np.any(idx < 0) or np.any(idx >= n):
        raise ValueError("indices out of range 0...N")
    return idx.astype(np.int64), shape


def _both_ways(csr):
    """Every edge in both directions, parallel edges kept apart (a search takes the lighter)."""
    import scipy.sparse as sp

    n = csr.shape[0]
    coo = csr.tocoo()
    rows = np.concatenate([coo.row, coo.col])
    order = np.argsort(rows, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    cols = np.concatenate([coo.col, coo.row])[order]
    data = np.concatenate([coo.data, coo.data])[order]
    return sp.csr_matrix((data, cols, indptr), shape=(n, n))  # no summing of duplicates


def _searches(csgraph, method, directed, return_predecessors, unweighted, indices):
    """``method`` 'D' or 'J' on apsp's parallel searches, or None where scipy's own code runs:
    Bellman-Ford, an empty graph, -inf weights, and Dijkstra on negative weights (scipy warns
    and runs it anyway)."""
    from scipy.sparse.csgraph._validation import validate_graph

    from .cpu.searches import SearchGraph, search_rows
    from .exactness import choose_dtype, distance_bound

    search = _SEARCHES[method]
    if search is None:
        return None
    csr = validate_graph(csgraph, directed, np.float64, dense_output=False)  # as scipy reads it
    n = csr.shape[0]
    if n == 0 or np.isneginf(csr.data).any() or not (unweighted or METHOD[search].takes(
            False, bool((csr.data < 0).any()))):
        return None
    sources, shape = _source_rows(indices, n)
    if not directed:
        csr = _both_ways(csr)
    if unweighted and indices is None and not return_predecessors:
        # every source: the bit-parallel BFS (64 sources a pass) writes the float64 matrix itself
        from .cpu.bfs import solve as all_pairs_hops
        from .engine import SolveOptions

        return all_pairs_hops(csr, SolveOptions(dtype=np.dtype(np.float64))).dist
    weights = np.ones_like(csr.data) if unweighted else csr.data
    integral = bool(np.all(np.floor(weights) == weights)) if weights.size else True
    negative = bool((weights < 0).any())
    bound = distance_bound(n, float(np.abs(weights).max()) if weights.size else 0.0)
    # whole numbers whose sums float64 holds exactly: an integer dtype gives scipy's numbers exactly
    dt = choose_dtype(bound, negative, integral) if integral and bound <= _FLOAT64_EXACT \
        else np.dtype(np.float64)
    g = SearchGraph.from_csr(csr, dt)
    if unweighted:
        g.weights = np.ones_like(g.weights)
    rows = search_rows(g, sources, "bfs" if unweighted else search, want_pred=return_predecessors, as_float=True)
    dist = rows.dist.reshape(shape)
    return (dist, rows.pred.reshape(shape)) if return_predecessors else dist


@overload
def shortest_path(csgraph: ArrayLike, method: str = ..., directed: bool = ...,
                  return_predecessors: Literal[False] = ..., unweighted: bool = ...,
                  overwrite: bool = ..., indices: ArrayLike | None = ...) -> np.ndarray: ...
@overload
def shortest_path(csgraph: ArrayLike, method: str = ..., directed: bool = ..., *,
                  return_predecessors: Literal[True], unweighted: bool = ..., overwrite: bool = ...,
                  indices: ArrayLike | None = ...) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def shortest_path(csgraph: ArrayLike, method: str, directed: bool, return_predecessors: Literal[True],
                  unweighted: bool = ..., overwrite: bool = ..., indices: ArrayLike | None = ...
                  ) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def shortest_path(csgraph: ArrayLike, method: str = ..., directed: bool = ...,
                  return_predecessors: bool = ..., unweighted: bool = ..., overwrite: bool = ...,
                  indices: ArrayLike | None = ...) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...
def shortest_path(csgraph: ArrayLike, method: str = "auto", directed: bool = True,
                  return_predecessors: bool = False, unweighted: bool = False, overwrite: bool = False,
                  indices: ArrayLike | None = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Shortest-path search; drop-in for ``scipy.sparse.csgraph.shortest_path``.

    ``method='FW'`` (and ``'auto'`` when it picks Floyd-Warshall: no
    ``indices`` and at least N*N/4 edges) runs `floyd_warshall`; ``'D'`` and
    ``'J'`` run apsp's parallel Dijkstra and Johnson searches, ``'BF'``
    scipy's Bellman-Ford. Parameters, conventions and results are scipy's; see
    `floyd_warshall` for the graph conventions.

    Parameters
    ----------
    csgraph : array_like, masked array or scipy sparse matrix, shape (N, N)
    method : {'auto', 'FW', 'D', 'BF', 'J'}, optional
    directed, return_predecessors, unweighted, overwrite : bool, optional
        As in `floyd_warshall` (``overwrite`` only matters for ``'FW'``).
    indices : int or array_like of int, optional
        Compute only from these sources (not with ``method='FW'``).

    Returns
    -------
    dist_matrix : ndarray of float64
        Shape (N, N), or (len(indices), N), or (N,) for a single index.
    predecessors : ndarray of int32
        Only with ``return_predecessors``; same shape.

    Raises
    ------
    NegativeCycleError
        If the graph has a negative cycle (apsp's class subclasses scipy's).
    ValueError
        For a graph that is not N x N, an unknown method, or ``indices`` with 'FW'.

    Examples
    --------
    >>> import numpy as np
    >>> from apsp import shortest_path
    >>> g = np.array([[0, 1, 2, 0], [0, 0, 0, 1], [2, 0, 0, 3], [0, 0, 0, 0]])
    >>> shortest_path(g, directed=False, indices=0)
    array([0., 1., 2., 2.])
    >>> shortest_path(g, method="FW")[0]
    array([0., 1., 2., 2.])
    """
    csgraph = _pydata_to_scipy(csgraph)
    _check_square(csgraph, "compressed-sparse graph must be shape (N, N)")
    if method == "auto":
        method = _auto_method(csgraph, indices)
    if method == "FW":
        if indices is not None:
            raise ValueError("Cannot specify indices with method == 'FW'.")
        return floyd_warshall(csgraph, directed, return_predecessors=return_predecessors,
                              unweighted=unweighted, overwrite=overwrite)
    if method in _SEARCHES:
        try:
            found = _searches(csgraph, method, directed, return_predecessors, unweighted, indices)
        except NegativeCycleError:
            found = None  # scipy's own search raises it, naming the vertex scipy's check finds
        if found is not None:
            return found
        # only an ndarray can be overwritten (scipy on numpy 2 fails for lists)
        return _scipys("shortest_path", csgraph, method=method, directed=directed,
                       return_predecessors=return_predecessors, unweighted=unweighted,
                       overwrite=overwrite and isinstance(csgraph, np.ndarray), indices=indices)
    raise ValueError("unrecognized method '%s'" % (method,))
