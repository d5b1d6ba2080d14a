"""Drop-in replacements for ``scipy.sparse.csgraph.dijkstra``, ``johnson`` and ``bellman_ford``.

Same parameters, same input conventions, same outputs as scipy's (float64 distances with
``inf``, int32 predecessors with ``-9999``; ``dijkstra``'s ``limit`` and ``min_only``, the
latter's sources array), same exceptions and messages. The searches run on apsp's parallel
Dijkstra / Johnson (`apsp.cpu.searches`), whole-number weights in an integer dtype (exact, so the
distances are scipy's bit for bit); where several shortest paths tie, a predecessor may name
another of them than scipy's. ``bellman_ford`` runs Johnson's searches: Bellman-Ford's
potentials once, then a Dijkstra per source, which give Bellman-Ford's distances.

scipy's own code runs where apsp's would not give scipy's answer: Dijkstra on negative weights
(scipy warns and runs it anyway), ``-inf`` or ``nan`` weights, a negative cycle (so that the
message names the vertex scipy's check finds), and the empty graph. See `apsp.scipy_compat` for
how a graph is read (dense zeros, ``inf`` and ``nan`` are no edge; every stored sparse entry is one).

Examples
--------
>>> import numpy as np
>>> from apsp.scipy_searches import dijkstra
>>> graph = np.array([[0, 1, 2, 0], [0, 0, 0, 1], [0, 0, 0, 3], [0, 0, 0, 0]])
>>> dist, pred = dijkstra(graph, directed=False, indices=0, return_predecessors=True)
>>> dist
array([0., 1., 2., 2.])
>>> pred
array([-9999,     0,     0,     1], dtype=int32)
>>> dijkstra(graph, indices=[1, 2], min_only=True)
array([inf,  0.,  0.,  1.])
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from .errors import NegativeCycleError
from .scipy_compat import _FLOAT64_EXACT, _both_ways, _pydata_to_scipy, _scipys, _searches, _source_rows

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

NULL = -9999


def _cut_at_limit(found, limit: float, return_predecessors: bool):
    """scipy's ``limit``: a distance beyond it is ``inf`` (no path found), its predecessor -9999."""
    if limit == np.inf:
        return found
    dist, pred = found if return_predecessors else (found, None)
    beyond = dist > limit
    dist[beyond] = np.inf
    if pred is not None:
        pred[beyond] = NULL
    return found


def _multi_source(csgraph, directed: bool, indices, return_predecessors: bool, unweighted: bool):
    """``min_only``: one Dijkstra from a virtual vertex with a zero-weight edge to each source,
    so each vertex gets its distance from the nearest source; (dist, pred, sources), or None where
    scipy's own code runs (as in `apsp.scipy_compat._searches`)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph._validation import validate_graph

    from .cpu.searches import SearchGraph, search_rows
    from .exactness import choose_dtype, distance_bound

    csr = validate_graph(csgraph, directed, np.float64, dense_output=False)
    n = csr.shape[0]
    if n == 0 or not np.isfinite(csr.data).all() or (not unweighted and (csr.data < 0).any()):
        return None
    sources, _ = _source_rows(indices, n)
    if not directed:
        csr = _both_ways(csr)
    weights = np.ones_like(csr.data) if unweighted else csr.data
    integral = bool(np.all(np.floor(weights) == weights)) if weights.size else True
    bound = distance_bound(n + 1, float(weights.max()) if weights.size else 0.0)
    dt = choose_dtype(bound, False, integral) if integral and bound <= _FLOAT64_EXACT \
        else np.dtype(np.float64)
    first = np.sort(np.unique(sources, return_index=True)[1])  # each source once, in the given order
    starts = sources[first]
    extended = sp.csr_matrix(
        (np.concatenate([weights, np.zeros(starts.size)]), np.concatenate([csr.indices, starts]),
         np.concatenate([csr.indptr, [csr.indptr[-1] + starts.size]])), shape=(n + 1, n + 1))
    rows = search_rows(SearchGraph.from_csr(extended, dt), np.array([n]), "dijkstra",
                       want_pred=return_predecessors, as_float=True)
    dist = np.ascontiguousarray(rows.dist[0, :n])
    if not return_predecessors:
        return dist, None, None
    assert rows.pred is not None  # asked for
    pred = np.ascontiguousarray(rows.pred[0, :n])
    pred[pred == n] = NULL  # a source is reached from the virtual vertex: no predecessor
    return dist, pred, _tree_roots(pred, dist)


def _tree_roots(pred: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """The source each vertex's predecessor chain starts from (pointer doubling), -9999 where none."""
    root = np.where(pred == NULL, np.arange(pred.size), pred).astype(np.int64)
    while True:
        nxt = root[root]
        if np.array_equal(nxt, root):
            break
        root = nxt
    out = root.astype(np.int32)
    out[np.isinf(dist)] = NULL
    return out


@overload
def dijkstra(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ...,
             return_predecessors: Literal[False] = ..., unweighted: bool = ..., limit: float = ...,
             min_only: bool = ...) -> np.ndarray: ...
@overload
def dijkstra(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ..., *,
             return_predecessors: Literal[True], unweighted: bool = ..., limit: float = ...,
             min_only: Literal[False] = ...) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def dijkstra(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ..., *,
             return_predecessors: Literal[True], unweighted: bool = ..., limit: float = ...,
             min_only: Literal[True]) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
@overload
def dijkstra(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ...,
             return_predecessors: bool = ..., unweighted: bool = ..., limit: float = ...,
             min_only: bool = ...) -> (np.ndarray | tuple[np.ndarray, np.ndarray]
                                       | tuple[np.ndarray, np.ndarray, np.ndarray]): ...
def dijkstra(csgraph: ArrayLike, directed: bool = True, indices: ArrayLike | None = None,
             return_predecessors: bool = False, unweighted: bool = False, limit: float = np.inf,
             min_only: bool = False
             ) -> np.ndarray | tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dijkstra's searches; drop-in for ``scipy.sparse.csgraph.dijkstra``.

    Parameters
    ----------
    csgraph : array_like, masked array or scipy sparse matrix, shape (N, N)
        Non-negative weights (with negative ones scipy's own search runs, with scipy's warning).
    directed : bool, optional
        If False, an edge either way is an edge both ways.
    indices : int or array_like of int, optional
        Search only from these sources (negative ones count from the end).
    return_predecessors : bool, optional
        Also return the int32 predecessors (-9999 where none).
    unweighted : bool, optional
        Count edges instead of adding weights.
    limit : float, optional
        Distances beyond it are ``inf`` (must be >= 0).
    min_only : bool, optional
        One distance per vertex: from the nearest of ``indices`` (all vertices when None).

    Returns
    -------
    dist_matrix : ndarray of float64
        Shape (len(indices), N) (``indices``' shape + (N,)), or (N,) with ``min_only``.
    predecessors : ndarray of int32
        Only with ``return_predecessors``; the same shape.
    sources : ndarray of int32, shape (N,)
        Only with ``min_only`` and ``return_predecessors``: the source each vertex's shortest
        path starts from (-9999 where none within ``limit``).

    Examples
    --------
    >>> import numpy as np
    >>> from apsp.scipy_searches import dijkstra
    >>> g = np.array([[0, 3, 0], [0, 0, 4], [1, 0, 0]])
    >>> dijkstra(g, indices=0, limit=5)
    array([ 0.,  3., inf])
    """
    csgraph = _pydata_to_scipy(csgraph)
    found = None
    if float(limit) >= 0:  # else scipy's own raises its ValueError, after checking what it checks first
        if min_only:
            found = _multi_source(csgraph, directed, indices, return_predecessors, unweighted)
            if found is not None:
                dist, pred, sources = found
                if limit != np.inf:
                    beyond = dist > limit
                    dist[beyond] = np.inf
                    if return_predecessors:
                        pred[beyond] = NULL
                        sources[beyond] = NULL
                return (dist, pred, sources) if return_predecessors else dist
        else:
            found = _searches(csgraph, "D", directed, return_predecessors, unweighted, indices)
            if found is not None:
                return _cut_at_limit(found, float(limit), return_predecessors)
    return _scipys("dijkstra", csgraph, directed=directed, indices=indices,
                   return_predecessors=return_predecessors, unweighted=unweighted, limit=limit,
                   min_only=min_only)


def _johnsons(function: str, csgraph, directed: bool, indices, return_predecessors: bool,
              unweighted: bool):
    """apsp's Johnson searches, or scipy's own ``function`` where they would not answer as it does."""
    csgraph = _pydata_to_scipy(csgraph)
    try:
        found = _searches(csgraph, "J", directed, return_predecessors, unweighted, indices)
    except NegativeCycleError:
        found = None  # scipy's own search raises it, naming the vertex scipy's check finds
    if found is not None:
        return found
    return _scipys(function, csgraph, directed=directed, indices=indices,
                   return_predecessors=return_predecessors, unweighted=unweighted)


@overload
def johnson(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ...,
            return_predecessors: Literal[False] = ..., unweighted: bool = ...) -> np.ndarray: ...
@overload
def johnson(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ..., *,
            return_predecessors: Literal[True], unweighted: bool = ...) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def johnson(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ...,
            return_predecessors: bool = ..., unweighted: bool = ...
            ) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...
def johnson(csgraph: ArrayLike, directed: bool = True, indices: ArrayLike | None = None,
            return_predecessors: bool = False, unweighted: bool = False
            ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Johnson's algorithm (negative weights allowed); drop-in for ``scipy.sparse.csgraph.johnson``.

    Parameters
    ----------
    csgraph : array_like, masked array or scipy sparse matrix, shape (N, N)
        The graph; negative weights are allowed.
    directed, indices, return_predecessors, unweighted
        As in `dijkstra`.

    Returns
    -------
    dist_matrix : ndarray of float64
        Shape (len(indices), N) (``indices``' shape + (N,)).
    predecessors : ndarray of int32
        Only with ``return_predecessors``; the same shape (-9999 where none).

    Raises
    ------
    NegativeCycleError
        If the graph has a negative cycle (apsp's class subclasses scipy's; scipy's message).

    Examples
    --------
    >>> import numpy as np
    >>> from apsp.scipy_searches import johnson
    >>> johnson(np.array([[0, 2, 0], [0, 0, -1], [0, 0, 0]]), indices=0)
    array([0., 2., 1.])
    """
    return _johnsons("johnson", csgraph, directed, indices, return_predecessors, unweighted)


@overload
def bellman_ford(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ...,
                 return_predecessors: Literal[False] = ..., unweighted: bool = ...) -> np.ndarray: ...
@overload
def bellman_ford(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ..., *,
                 return_predecessors: Literal[True], unweighted: bool = ...
                 ) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def bellman_ford(csgraph: ArrayLike, directed: bool = ..., indices: ArrayLike | None = ...,
                 return_predecessors: bool = ..., unweighted: bool = ...
                 ) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...
def bellman_ford(csgraph: ArrayLike, directed: bool = True, indices: ArrayLike | None = None,
                 return_predecessors: bool = False, unweighted: bool = False
                 ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Bellman-Ford's distances; drop-in for ``scipy.sparse.csgraph.bellman_ford``.

    Runs Johnson's searches (one Bellman-Ford pass for the potentials, then Dijkstra from each
    source), whose distances are Bellman-Ford's.

    Parameters
    ----------
    csgraph : array_like, masked array or scipy sparse matrix, shape (N, N)
        The graph; negative weights are allowed.
    directed, indices, return_predecessors, unweighted
        As in `dijkstra`.

    Returns
    -------
    dist_matrix : ndarray of float64
        Shape (len(indices), N) (``indices``' shape + (N,)).
    predecessors : ndarray of int32
        Only with ``return_predecessors``; the same shape (-9999 where none).

    Raises
    ------
    NegativeCycleError
        If the graph has a negative cycle (apsp's class subclasses scipy's; scipy's message).

    Examples
    --------
    >>> import numpy as np
    >>> from apsp.scipy_searches import bellman_ford
    >>> bellman_ford(np.array([[0, 2, 0], [0, 0, -1], [0, 0, 0]]), indices=[0, 1])
    array([[ 0.,  2.,  1.],
           [inf,  0., -1.]])
    """
    return _johnsons("bellman_ford", csgraph, directed, indices, return_predecessors, unweighted)
