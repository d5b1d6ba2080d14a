"""One route between two vertices, found by one search instead of an all-pairs solve.

`shortest_path_between` picks the search from the weights:

* every weight 1 (or ``unweighted=True``): breadth-first search;
* non-negative weights: Dijkstra, stopping once the target is settled; on
  large graphs with integer distances, bidirectional Dijkstra (a search from
  each end over the edges and the reversed edges, stopping once no shorter
  route can meet), which settles far fewer vertices but pays for the reversed
  edges;
* some weight negative: Bellman-Ford (FIFO queue) over the vertices that can
  still reach the target. A negative cycle there makes the distance undefined
  and raises `NegativeCycleError` naming it; a negative cycle elsewhere (not
  reachable from the source, or unable to reach the target) does not matter.

Lengths are computed in the dtype reported (exact for integer weights at any
size). Vertices are 0-based here, or the graph's labels when it has them (a
SNAP or GraphML file: `apsp.graph.EdgeList.labels`); the CLI (``apsp path``)
takes and prints them in the input's own numbering or labels.

>>> import apsp
>>> r = apsp.shortest_path_between([(0, 1, 4), (1, 2, 1), (0, 2, 7)], 0, 2)
>>> r.path, r.length, r.method
([0, 1, 2], 5, 'dijkstra')
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from . import exactness
from .graph import vertex_index
from .methods import SEARCHES
from .paths import walk_back

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from .api import GraphLike

#: version of the JSON object `Route.to_json` returns (and ``apsp path --json`` prints)
ROUTE_SCHEMA = 1


@dataclass
class Route:
    """A shortest route from ``source`` to ``target`` (0-based vertices, or labels).

    Attributes
    ----------
    source, target : int or str
        The end points, 0-based, or their labels when ``by_label``.
    path : list or None
        The vertices from source to target inclusive, named as the end points;
        None when there is no path.
    length : int, float or None
        The route's total weight (a Python int for integer dtypes); None when there is no path.
    method : str
        The search that ran: ``"bfs"``, ``"dijkstra"``, ``"bidirectional-dijkstra"`` or
        ``"bellman-ford"``.
    dtype : numpy.dtype
        The dtype the length was computed in.
    reason : str
        Why that search was chosen.
    visited : int
        Vertices the search settled (labelled, for Bellman-Ford).
    timings : dict of str to float
        Seconds per stage (``validate``, ``search``).
    by_label : bool
        The vertices are the graph's labels (a SNAP id, a GraphML node id), not indices.
    reachable : bool
        Whether a path exists.
    """

    source: int | str
    target: int | str
    path: list | None
    length: int | float | None
    method: str
    dtype: np.dtype
    #: why this search was chosen
    reason: str = ""
    #: vertices the search settled (scanned, for Bellman-Ford)
    visited: int = 0
    timings: dict = field(default_factory=dict)
    by_label: bool = False

    def named(self, labels) -> "Route":
        """This route with its vertices (indices) replaced by their ``labels`` (None: unchanged).

        Parameters
        ----------
        labels : numpy.ndarray or None
            The graph's labels, ``labels[i]`` naming vertex i.

        Returns
        -------
        Route
            A copy speaking labels (``by_label`` True), or this route when ``labels`` is None.
        """
        if labels is None:
            return self
        return replace(self, source=labels[[self.source]].tolist()[0], target=labels[[self.target]].tolist()[0],
                       path=None if self.path is None else labels[self.path].tolist(), by_label=True)

    @property
    def reachable(self) -> bool:
        """Whether the target can be reached from the source."""
        return self.path is not None

    def to_json(self, first_vertex: int = 0) -> dict:
        """The route as a JSON-ready dict of stable shape (``schema_version`` `ROUTE_SCHEMA`).

        Parameters
        ----------
        first_vertex : int, optional
            The number of the first vertex in the caller's numbering (1 for a
            1-based file format); added to every vertex. Ignored when the route
            speaks labels (``by_label``): vertices are then the labels, and
            ``first_vertex`` is null.

        Returns
        -------
        dict
            ``schema_version``, ``source``, ``target``, ``reachable``, ``length``, ``path``,
            ``hops``, ``first_vertex``, ``method``, ``dtype``, ``timings_s``; and ``schema``,
            the same number under its former name, until the next release.
        """
        shift = 0 if self.by_label else int(first_vertex)
        return {
            "schema_version": ROUTE_SCHEMA,
            "schema": ROUTE_SCHEMA,  # its former name, kept until the next release
            "source": int(self.source) + shift if shift else self.source,  # shift: vertices, not labels
            "target": int(self.target) + shift if shift else self.target,
            "reachable": self.reachable,
            "length": self.length,
            "path": None if self.path is None else [v + shift if shift else v for v in self.path],
            "hops": None if self.path is None else len(self.path) - 1,
            "first_vertex": None if self.by_label else shift,
            "method": self.method,
            "dtype": np.dtype(self.dtype).name,
            "timings_s": {k: round(v, 6) for k, v in self.timings.items()},
        }


def shortest_path_between(graph: GraphLike, source: int, target: int, *, directed: bool = True,
                          unweighted: bool = False, null_value: float = 0.0,
                          dtype: DTypeLike | None = None, host_memory: int | str | None = None) -> Route:
    """A shortest path from ``source`` to ``target`` (0-based), by a single search.

    Parameters
    ----------
    graph : array_like, scipy sparse matrix, EdgeList, list of tuples, Graph, or path
        The directed graph (see `apsp.as_graph`).
    source, target : int or str
        The end points, 0-based, or labels when the graph has them.
    directed, unweighted, null_value
        As in `apsp.shortest_paths`.
    dtype : optional
        Distance dtype; default the smallest that holds every distance.
    host_memory : int or str, optional
        RAM the read, the graph and the search may use (``"2GB"``; default what is available),
        checked before each allocation proportional to the graph.

    Returns
    -------
    Route
        ``route.path`` and ``route.length``, None when there is no path; its
        vertices are labels when the graph has them.

    Raises
    ------
    ValueError
        A vertex outside ``0..n-1``, or a label the graph does not have.
    DtypeError
        ``dtype`` cannot hold every possible distance, or a float sum could overflow to ``inf``.
    NegativeCycleError
        A negative cycle lies on some walk from source to target (named in the message).
    MemoryPlanError
        The graph or the search does not fit the memory allowed (the message says how much it needs).

    Examples
    --------
    >>> import apsp
    >>> apsp.shortest_path_between([(0, 1, 2), (1, 2, -1)], 0, 2).length
    1
    >>> apsp.shortest_path_between([(0, 1, 2)], 1, 0).path is None
    True
    """
    from .api import as_graph
    from .costs import search_bytes
    from .plan import choose_search
    from .sizes import check_memory, memory_limit

    t0 = time.perf_counter()
    with memory_limit(host_memory):
        g = as_graph(graph, directed=directed, unweighted=unweighted, null_value=null_value)
        s, t = (vertex_index(g.labels, g.n, v, f"{name} vertex")
                for name, v in (("source", source), ("target", target)))
        dt = exactness.choose_dtype(g.distance_bound, g.has_negative_weights, g.integral_for(dtype), dtype)
        method, reason = choose_search(g, dt)
        # a sum past the float dtype's range would be inf, read as "no path": refuse, as solves do
        exactness.check_float_range(dt, g.n, g.max_abs_weight, method, g.has_negative_weights)
        check_memory(search_bytes(g.n, g.nnz, np.dtype(dt).itemsize, method),
                     f"a {method} search on n = {g.n} vertices and {g.nnz} edges")
    t1 = time.perf_counter()
    route = _search(g, s, t, method, dt).named(g.labels)
    t2 = time.perf_counter()
    route.reason = reason
    route.timings = {"validate": t1 - t0, "search": t2 - t1}
    return route


def _search(g, s: int, t: int, method: str, dt) -> Route:
    from .cpu import searches

    sg = searches.SearchGraph.from_csr(g.to_csr(), dt)
    n = g.n
    search = SEARCHES[method]
    if search.bidirectional:
        return _bidirectional(g, sg, s, t, dt)
    if search.negative:
        wide = searches.wide_dtype(dt)
        dist = np.empty(n, dtype=wide)
        pred = np.empty(n, dtype=np.int64)
        unreachable = exactness.unreachable_value(wide)
        cycle = searches.spfa(sg.indptr, sg.indices, sg.weights.astype(wide), s, _reaches(g, t), dist,
                              pred, unreachable)
        if cycle.shape[0]:
            raise searches.negative_cycle_error(cycle)
        visited = int(np.count_nonzero(dist != unreachable))
    else:
        unreachable = exactness.unreachable_value(dt)
        dist = np.empty(n, dtype=dt)
        pred = np.empty(n, dtype=np.int32)
        none = np.empty(1, dtype=np.int32)
        queue = np.empty(max(n, sg.indices.shape[0] + 1), dtype=np.int32)
        if search.hops:
            visited = searches.bfs_row(sg.indptr, sg.indices, s, t, dist, pred, none, True, False,
                                       unreachable, queue)
        else:
            keys = np.empty(sg.indices.shape[0] + 1, dtype=dt)
            visited = searches.dijkstra_row(sg.indptr, sg.indices, sg.weights, s, t, dist, pred, none,
                                            True, False, unreachable, keys, queue)
    reached = dist[t] != unreachable
    # a Python number of the dtype reported (a Bellman-Ford sum's range was checked before the search)
    return Route(source=s, target=t, path=walk_back(pred, s, t) if reached else None,
                 length=dist[t].astype(dt).item() if reached else None, method=method, dtype=np.dtype(dt),
                 visited=int(visited))


def _bidirectional(g, sg, s: int, t: int, dt) -> Route:
    """`searches.dijkstra_pair` on ``sg`` and its reversed edges (integer distances)."""
    from .cpu import searches

    n = g.n
    found = np.int64(np.iinfo(np.int64).max)
    if s == t:
        length, meet, visited = 0, s, 1
    else:
        rev = searches.SearchGraph.from_csr(g.to_csr().T.tocsr(), dt)
        dist_f, dist_b = np.empty(n, dtype=dt), np.empty(n, dtype=dt)
        pred, succ = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
        length, meet, visited = searches.dijkstra_pair(
            sg.indptr, sg.indices, sg.weights, rev.indptr, rev.indices, rev.weights, s, t, dist_f,
            dist_b, pred, succ, exactness.unreachable_value(dt), found)
    path = None
    if length != found:  # s -> meet along the predecessors, then meet -> t along the successors
        path = [s] if s == t else walk_back(pred, s, int(meet)) + walk_back(succ, t, int(meet))[::-1][1:]
    return Route(source=s, target=t, path=path, length=None if path is None else int(length),
                 method="bidirectional-dijkstra", dtype=np.dtype(dt), visited=int(visited))


def _reaches(g, t: int) -> np.ndarray:
    """Mask of the vertices with a path to ``t`` (a search over the reversed edges)."""
    from .cpu import searches

    # float64: the weights go unread, so no integer cast
    sg = searches.SearchGraph.from_csr(g.to_csr().T.tocsr(), np.float64)
    dist = np.empty(g.n, dtype=np.int32)
    none = np.empty(1, dtype=np.int32)
    queue = np.empty(g.n, dtype=np.int32)
    unreachable = exactness.unreachable_value(np.int32)
    searches.bfs_row(sg.indptr, sg.indices, t, -1, dist, none, none, False, False, unreachable, queue)
    return dist != unreachable
