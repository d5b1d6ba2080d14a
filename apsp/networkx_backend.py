"""The ``apsp`` networkx backend: networkx's all-pairs functions on apsp's solvers.

Registered through the ``networkx.backends`` and ``networkx.backend_info``
entry points when apsp is installed, so that

>>> import networkx as nx                                        # doctest: +SKIP
>>> nx.floyd_warshall_numpy(nx.karate_club_graph(), backend="apsp")  # doctest: +SKIP

or ``NETWORKX_BACKEND_PRIORITY=apsp`` runs apsp. Implemented (same arguments,
results and return types as networkx): `floyd_warshall_numpy`,
`floyd_warshall`, `floyd_warshall_predecessor_and_distance`,
`all_pairs_shortest_path_length`, `all_pairs_dijkstra_path_length`,
`all_pairs_bellman_ford_path_length`, `all_pairs_shortest_path`; and on
`apsp.distance_stats` (rows reduced as they are searched, no n x n matrix):
`closeness_centrality`, `harmonic_centrality`, `eccentricity`, `diameter`,
`radius`, `center`, `periphery`, `average_shortest_path_length`,
`wiener_index`, `global_efficiency`.

How results relate to networkx's:

* distances are equal (bit for bit for whole-number weights; float weights
  may differ in the last bits, as additions happen in another order);
* where several shortest paths exist, `floyd_warshall_predecessor_and_distance`
  may name another (equally short) predecessor; `all_pairs_shortest_path`
  follows networkx's breadth-first search order exactly, so its paths are
  networkx's own;
* dictionaries of path lengths list the source first, then the other nodes by
  distance (networkx's order among nodes at the same distance may differ);
* lengths have networkx's Python types: ints for int weights, floats for
  float weights (the source's own 0 an int, as networkx starts it);
* graphs networkx's own algorithms treat specially are handed back to them,
  so the outcome is networkx's: negative cycles (networkx's Floyd-Warshall
  returns whatever its loops leave; Bellman-Ford raises
  ``NetworkXUnbounded``), negative weights given to Dijkstra, weights too
  large for exact arithmetic, and int weights mixed with float ones (an edge
  without the attribute counts as networkx reads it: 1.0 in Floyd-Warshall,
  1 elsewhere), where the type of each length follows the path networkx
  happened to find: int along int edges, float through a float one.

`can_run` declines weight functions (``weight=callable``) and non-graph
inputs, so networkx falls back to its own code when the backend is chosen
through ``backend_priority``. In that mode `should_run` also declines graphs
smaller than where apsp was measured to win (`SHOULD_RUN_FROM`, from
``benchmarks/networkx_threshold.py``; apsp's start-up costs tens of
milliseconds, networkx's numpy Floyd-Warshall needs 1 ms at n = 100) and
leaves ``all_pairs_shortest_path`` to networkx (building the path lists
dominates, and networkx's breadth-first search is as fast). ``backend="apsp"``
always runs apsp.

Configuration (``nx.config.backends.apsp``, or ``get_info()["default_config"]``):
``backend`` ("auto", "cpu" or "gpu"), ``dtype`` (None for the narrowest exact
type, or a dtype name as in `apsp.shortest_paths`) and ``block_size`` (the
Floyd-Warshall blocking factor, None for the backend's best; its former name
``block`` still works in this release, with a DeprecationWarning). For example
``nx.config.backends.apsp.backend = "cpu"``.

Graphs convert once per weight attribute (edge arrays are built in one pass
over networkx's adjacency, no per-matrix-cell Python loop), kept in apsp's slot
of ``G.__networkx_cache__`` (`apsp.networkx_cache`: networkx's own cache note,
25 lines on every reuse, never shows; apsp says its three-line note once per
process); the converted graph keeps the apsp graphs built from it (and the
reversed one that closeness and harmonic centrality search), so a later call
builds none of them again. The kept conversion is right as long as ``G`` was
changed only through its methods (``G.add_edge(u, v, weight=w)``), not by
writing to ``G[u][v]`` directly. ``nx.config.warnings_to_ignore.add("cache")``
silences the note; ``G.__networkx_cache__.clear()`` drops a stale conversion.
"""
from __future__ import annotations

import inspect
import logging
import math
from collections import defaultdict

import numpy as np

from .networkx_graph import BACKEND_NAME, ApspGraph, node_indices as _node_indices


log = logging.getLogger(__name__)

#: function name -> note shown in networkx's docstring under "Backends" (filled by `_implements`)
FUNCTIONS: dict[str, str] = {}

#: function name -> the smallest number of nodes for which automatic dispatch picks apsp, None for
#: never; measured with benchmarks/networkx_threshold.py (BENCHMARKS.md, "networkx backend")
SHOULD_RUN_FROM: dict[str, int | None] = {}

#: function name -> the smallest number of nodes for which automatic dispatch picks apsp while apsp
#: has not yet solved in this process: its first call pays Numba's import and the kernels' load
#: (0.3-0.7 s on the 2-core box), which networkx's own code outruns on smaller graphs
#: (benchmarks/networkx_threshold.py --cold, 2-core box under load, 2026-11-28: apsp's first call
#: against networkx's reached 0.46x / 1.50x at 150 / 300 nodes for floyd_warshall, 0.31x / 1.21x
#: at 300 / 600 for the Dijkstra lengths, 0.69x at 600 for floyd_warshall_numpy, 0.39x and 0.25x
#: at 600 for the BFS lengths and closeness centrality); unlisted functions: `COLD_FROM_OTHERS`
COLD_FROM: dict[str, int] = {"floyd_warshall": 300, "floyd_warshall_predecessor_and_distance": 300,
                             "floyd_warshall_numpy": 800, "all_pairs_dijkstra_path_length": 600,
                             "all_pairs_bellman_ford_path_length": 600}
COLD_FROM_OTHERS = 1000

#: whether apsp has solved through this backend in this process (its kernels are loaded)
_STARTED = {"solved": False}

#: ``nx.config.backends.apsp`` starts from these (see the module docstring)
DEFAULT_CONFIG = {"backend": "auto", "dtype": None, "block_size": None, "block": None}


def get_info() -> dict:
    """Metadata for networkx's ``networkx.backend_info`` entry point (imports nothing heavy)."""
    return {
        "backend_name": BACKEND_NAME,
        "project": "apsp",
        "package": "apsp",
        "short_summary": "All-pairs shortest paths on CPU (Numba) and GPU (Triton).",
        "default_config": dict(DEFAULT_CONFIG),
        # "extra_docstring" is the key networkx < 3.4 reads
        "functions": {name: {"additional_docs": note, "extra_docstring": note}
                      for name, note in FUNCTIONS.items()},
    }


class _BackendInterface:
    """What the ``networkx.backends`` entry point loads: the functions and the converters."""

    def __repr__(self):
        return "<apsp networkx backend>"


backend_interface = _BackendInterface()


#: node count from which automatic dispatch picks the reductions (benchmarks/networkx_threshold.py:
#: apsp faster for 9 of the 10 functions at n = 100, for all at 200; BENCHMARKS.md section 16)
STATS_FASTER_FROM = 100


def _implements(note: str, *, faster_from: int | None = STATS_FASTER_FROM):
    """Register a networkx function's apsp version: its docs note, the node count from which
    automatic dispatch picks it (None: never; by default that of the reductions of
    `apsp.distance_stats`), and its place on the backend interface."""

    def register(fn):
        FUNCTIONS[fn.__name__] = note
        SHOULD_RUN_FROM[fn.__name__] = faster_from
        setattr(_BackendInterface, fn.__name__, staticmethod(fn))
        return fn

    return register


# -- backend interface ----------------------------------------------------------

def can_run(name, args, kwargs):
    """Whether apsp can run ``name`` with these arguments (a string says why not)."""
    import networkx as nx

    if name not in FUNCTIONS:
        return f"apsp does not implement {name}"
    try:
        bound = inspect.signature(getattr(nx, name)).bind(*args, **kwargs)
    except TypeError as exc:
        return f"arguments do not match networkx's {name}: {exc}"
    if bound.arguments.get("backend_kwargs"):
        return f"unknown arguments {sorted(bound.arguments['backend_kwargs'])}"
    if callable(bound.arguments.get("weight")):
        return "weight functions are not supported: networkx runs them"
    G = bound.arguments.get("G")
    if not isinstance(G, (nx.Graph, ApspGraph)):
        return f"G is a {type(G).__name__}, not a networkx graph"
    return True


def should_run(name, args, kwargs):
    """Whether automatic dispatch (``backend_priority``) should pick apsp (a string says why not).

    Graphs with fewer nodes than `SHOULD_RUN_FROM` measured stay with
    networkx, whose code is faster there; until apsp has solved once in this
    process, so do graphs below `COLD_FROM` (its first call loads Numba and the
    kernels). ``all_pairs_shortest_path`` builds
    the same n^2 path lists as networkx, which dominates its time, so apsp is
    no faster there at any size. ``backend="apsp"`` runs apsp regardless.
    """
    if name not in SHOULD_RUN_FROM:
        return f"apsp does not implement {name}"
    smallest = SHOULD_RUN_FROM[name]
    if smallest is None:
        return "building the path lists dominates; networkx's own breadth-first search is as fast"
    G = args[0] if args else kwargs.get("G")
    try:
        n = len(G)
    except TypeError:
        return True
    cold = COLD_FROM.get(name, COLD_FROM_OTHERS) if not _STARTED["solved"] else 0
    if n < cold:
        log.debug("networkx backend: %s on %d nodes left to networkx (apsp's first call in this process "
                  "wins from %d)", name, n, cold)
        return f"networkx is faster on graphs with fewer than {cold} nodes until apsp's kernels are loaded"
    if n < smallest:
        log.debug("networkx backend: %s on %d nodes left to networkx (apsp wins from %d)",
                  name, n, smallest)
        return f"networkx is faster on graphs with fewer than {smallest} nodes"
    return True


def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                    preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                    graph_name=None, **extra):
    """networkx graph -> `ApspGraph` (called by networkx's dispatcher)."""
    if isinstance(G, ApspGraph):
        return G
    if preserve_edge_attrs is True or isinstance(preserve_edge_attrs, dict):
        raise NotImplementedError("apsp keeps named numeric edge weights only")
    from .networkx_cache import converted

    return converted(G, edge_attrs, ApspGraph.from_networkx)


def convert_to_nx(obj, *, name=None):
    """`ApspGraph` -> networkx graph; results (already networkx types) pass through."""
    if isinstance(obj, ApspGraph):
        return obj.to_networkx()
    return obj


def _as_apsp(G, weight):
    """Accept a networkx graph too (direct calls, not through the dispatcher)."""
    if isinstance(G, ApspGraph):
        return G
    return ApspGraph.from_networkx(G, None if weight is None else {weight: 1})


def _networkx(name, G, *args, **kwargs):
    """networkx's own implementation, on the networkx graph behind ``G``."""
    import networkx as nx

    return getattr(nx, name)(G.to_networkx(), *args, backend="networkx", **kwargs)


def configured_options() -> dict:
    """`apsp.shortest_paths` keywords from ``nx.config.backends.apsp`` (defaults without networkx's config)."""
    try:
        import networkx as nx

        config = nx.config.backends.apsp
        values = {key: getattr(config, key, default) for key, default in DEFAULT_CONFIG.items()}
    except (ImportError, AttributeError):
        values = dict(DEFAULT_CONFIG)
    block_size = values["block_size"]
    if values["block"] is not None:
        import warnings

        warnings.warn("nx.config.backends.apsp.block is now block_size; the old name goes in the next "
                      "release", DeprecationWarning, stacklevel=2)
        block_size = values["block"] if block_size is None else block_size
    return {"backend": values["backend"], "dtype": values["dtype"], "block_size": block_size}


def _solve(G, weight, method, predecessors=False, drop_self_loops=False, nonnegative=False):
    """apsp's result, or None where networkx's own code must decide (see module doc).

    ``nonnegative``: also None when some weight is negative (networkx's Dijkstra).
    """
    from .api import shortest_paths
    from .errors import DtypeError, NegativeCycleError

    graph = G.to_apsp_graph(weight, drop_self_loops=drop_self_loops)
    if nonnegative and graph.has_negative_weights:
        return None
    options = configured_options()
    # weights too large for an exact dtype go back to networkx; a dtype the user configured does not
    fallback = (NegativeCycleError, DtypeError) if options["dtype"] is None else NegativeCycleError
    try:
        result = shortest_paths(graph, method=method, return_predecessors=predecessors,
                                progress=False, **options)
    except fallback as exc:
        log.info("networkx backend: %s; networkx's own code decides", exc)
        return None
    _STARTED["solved"] = True
    if predecessors and result.predecessors is None:
        raise RuntimeError(f"the {result.backend} {result.method} solver returned no predecessors")
    return result


def _mixed_numbers(G, weight, missing) -> bool:
    """Whether networkx would add ints and floats (``missing``: what it reads for an edge without
    ``weight``): each length's type then follows the path it happened to find, so it decides."""
    if weight is None or weight not in G.number_types:
        return False
    has_int, has_float = G.number_types[weight]
    if G.missing_weights.get(weight, False):
        has_int |= isinstance(missing, int)
        has_float |= isinstance(missing, float)
    return has_int and has_float


def _rows_as_python(result, int_values):
    """Distances as a 2-D array of Python numbers' source: int64 rows or float64 rows with inf."""
    if int_values and result.distances.dtype.kind in "iu":
        return result.distances, result.reachable
    return result.to_float(), None


def _row_values(dist, reach, i, columns):
    """Python values of ``dist[i, columns]``: ints (inf where unreachable) or floats."""
    row = dist[i, columns]
    if reach is None or reach[i, columns].all():
        return row.tolist()
    values = row.astype(object)
    values[~reach[i, columns]] = math.inf
    return values.tolist()


# -- the functions -----------------------------------------------------------------

@_implements("Blocked Floyd-Warshall on CPU (Numba) or GPU (Triton).", faster_from=400)
def floyd_warshall_numpy(G, nodelist=None, weight="weight"):
    import networkx as nx

    G = _as_apsp(G, weight)
    n = len(G)
    if nodelist is not None:
        if not (len(nodelist) == n == len(set(nodelist))):
            raise nx.NetworkXError(
                "nodelist must contain every node in G with no repeats."
                "If you wanted a subgraph of G use G.subgraph(nodelist)")
        if unknown := set(nodelist) - set(G.nodes):
            raise nx.NetworkXError(f"Nodes {unknown} in nodelist is not in G")
    if n == 0:
        return np.zeros((0, 0))
    # networkx zeroes the diagonal, so self-loops (even negative ones) never count
    result = _solve(G, weight, "fw", drop_self_loops=True)
    if result is None:
        return _networkx("floyd_warshall_numpy", G, nodelist=nodelist, weight=weight)
    dist = result.to_float()
    if nodelist is not None:
        order = _node_indices(G.nodes, nodelist)
        dist = dist[np.ix_(order, order)]
    return dist


def _floyd_warshall(name, G, weight, empty, predecessors=False):
    """``(G, apsp's result, its distance dicts)``, or ``(G, None, the answer)``: ``empty`` for a
    graph without nodes, else networkx's own."""
    G = _as_apsp(G, weight)
    if len(G) == 0:
        return G, None, empty
    result = None if _mixed_numbers(G, weight, 1.0) else _solve(G, weight, "fw", predecessors=predecessors)
    if result is None:
        return G, None, _networkx(name, G, weight=weight)
    # networkx's Floyd-Warshall reads a missing weight as 1.0, so ints need every edge's own int
    int_values = (weight is not None and G.int_weights.get(weight, False)
                  and not G.missing_weights.get(weight, True))
    dist_matrix, reach = _rows_as_python(result, int_values)
    everyone = np.arange(len(G))
    float_zero = G.float_zero_loops.get(weight, ())
    dist = {}
    for i, u in enumerate(G.nodes):
        row = defaultdict(lambda: math.inf, zip(G.nodes, _row_values(dist_matrix, reach, i, everyone)))
        row[u] = 0.0 if i in float_zero else 0  # networkx's diagonal: see _float_zero_loops
        dist[u] = row
    return G, result, dist


@_implements("Blocked Floyd-Warshall on CPU (Numba) or GPU (Triton).", faster_from=50)
def floyd_warshall(G, weight="weight"):
    return _floyd_warshall("floyd_warshall", G, weight, {})[2]


@_implements("Blocked Floyd-Warshall with predecessors; where several shortest paths exist the predecessor "
             "named may differ from networkx's.", faster_from=100)
def floyd_warshall_predecessor_and_distance(G, weight="weight"):
    G, result, dist = _floyd_warshall("floyd_warshall_predecessor_and_distance", G, weight, ({}, {}),
                                      predecessors=True)
    if result is None:
        return dist
    labels = G.node_array
    pred_matrix = result.predecessors
    self_loops = set(G.indices[G.loop_edges()].tolist())
    pred = {}
    for i, u in enumerate(G.nodes):
        row = pred_matrix[i]
        columns = np.flatnonzero(row >= 0)
        entries = dict(zip(labels[columns].tolist(), labels[row[columns]].tolist()))
        if i in self_loops:
            entries[u] = u  # networkx records a self-loop edge as its own predecessor
        if entries:
            pred[u] = entries
    return pred, dist


def _all_lengths(name, G, used, keep=None, nonnegative=False, **nx_kwargs):
    """Yield (node, {node: length}) per source, the source first, then the others by length, from
    apsp's automatic method on edge attribute ``used``; networkx's own (called with ``nx_kwargs``)
    where it must decide: a negative cycle (its Bellman-Ford raises NetworkXUnbounded where it
    meets it), negative weights given to Dijkstra (``nonnegative``), mixed int and float weights."""
    G = _as_apsp(G, used)
    if len(G) == 0:
        return
    result = None if _mixed_numbers(G, used, 1) else _solve(G, used, "auto", nonnegative=nonnegative)
    if result is None:
        yield from _networkx(name, G, **nx_kwargs)
        return
    dist_matrix, reach = _rows_as_python(result, _int_values(G, used))
    labels = G.node_array
    for i, u in enumerate(G.nodes):
        ok = result.reachable[i].copy()
        if keep is not None:
            ok &= keep(result.distances[i])
        ok[i] = False
        others = np.flatnonzero(ok)
        others = others[np.argsort(result.distances[i, others], kind="stable")]
        columns = np.concatenate(([i], others))
        values = _row_values(dist_matrix, reach, i, columns)
        values[0] = 0  # networkx starts every source at the int 0
        yield u, dict(zip(labels[columns].tolist(), values))


@_implements("apsp's unweighted all-pairs solver (BFS or Floyd-Warshall).", faster_from=300)
def all_pairs_shortest_path_length(G, cutoff=None):
    # networkx expands level L while cutoff > L, so it reports lengths L < cutoff + 1
    keep = None if cutoff is None else (lambda row: row < cutoff + 1)
    return _all_lengths("all_pairs_shortest_path_length", G, None, keep, cutoff=cutoff)


@_implements("apsp's automatic method (Dijkstra or Floyd-Warshall); negative weights go to networkx.",
             faster_from=100)
def all_pairs_dijkstra_path_length(G, cutoff=None, weight="weight"):
    keep = None if cutoff is None else (lambda row: row <= cutoff)
    return _all_lengths("all_pairs_dijkstra_path_length", G, weight, keep, nonnegative=True,
                        cutoff=cutoff, weight=weight)


@_implements("apsp's automatic method (Johnson or Floyd-Warshall); negative cycles go to networkx, which "
             "raises NetworkXUnbounded.", faster_from=100)
def all_pairs_bellman_ford_path_length(G, weight="weight"):
    return _all_lengths("all_pairs_bellman_ford_path_length", G, weight, weight=weight)


def _bfs_tree(indptr, indices, source, cutoff):
    """Breadth-first search from ``source`` in networkx's order: (discovery order, parents).

    networkx scans the current level in discovery order and each node's
    neighbours in adjacency order; a node's parent is the first scanned node
    that reaches it. One vectorised step per level does the same.
    """
    n = indptr.shape[0] - 1
    seen = np.zeros(n, dtype=bool)
    seen[source] = True
    parent = np.full(n, -1, dtype=np.int64)
    frontier = np.array([source], dtype=np.int64)
    discovered = [frontier]
    level = 0
    while frontier.size and (cutoff is None or cutoff > level):
        starts = indptr[frontier]
        counts = indptr[frontier + 1] - starts
        # positions of the frontier's edges, frontier order first, adjacency order second
        positions = np.arange(counts.sum()) + np.repeat(starts + counts - np.cumsum(counts), counts)
        neighbours = indices[positions]
        owners = np.repeat(frontier, counts)
        new = ~seen[neighbours]
        neighbours, owners = neighbours[new], owners[new]
        _, first = np.unique(neighbours, return_index=True)
        first.sort()
        frontier = neighbours[first]
        parent[frontier] = owners[first]
        seen[frontier] = True
        discovered.append(frontier)
        level += 1
    return np.concatenate(discovered), parent


@_implements("Vectorised breadth-first search with networkx's exact tie-breaking.", faster_from=None)
def all_pairs_shortest_path(G, cutoff=None):
    G = _as_apsp(G, None)
    labels = G.nodes
    for i, u in enumerate(labels):
        order, parent = _bfs_tree(G.indptr, G.indices, i, cutoff)
        paths = {u: [u]}
        for v, p in zip(order[1:].tolist(), parent[order[1:]].tolist()):
            paths[labels[v]] = paths[labels[p]] + [labels[v]]
        yield u, paths


# -- distance reductions (apsp.stats: rows reduced as they are searched, no n x n matrix) --------

def _reduced(G, weight, direction, sources=None, targets=None, lengths=False):
    """`apsp.distance_stats` of ``G`` under networkx's search semantics, or None where networkx's
    own code must decide: negative weights, self-loops included (networkx's Dijkstra has its own
    answer), weights too
    large for an exact dtype, and, where the caller returns lengths (``lengths``), int weights
    mixed with float ones (the type of each length follows the path networkx found)."""
    from .errors import DtypeError
    from .stats import distance_stats

    if lengths and _mixed_numbers(G, weight, 1):
        return None
    if weight is not None and weight in G.weights and (G.weights[weight][G.loop_edges()] < 0).any():
        return None  # networkx's Dijkstra meets the negative self-loop it reaches and raises
    # a search never uses a self-loop; distances *to* a node are searched on the reversed graph,
    # kept on G with the graph itself so that neither is built again
    graph = G.to_apsp_graph(weight, drop_self_loops=True, reverse=direction == "in")
    if graph.has_negative_weights:
        return None
    try:
        stats = distance_stats(graph, sources, targets=targets, direction="out", progress=False)
        _STARTED["solved"] = True
        return stats
    except DtypeError as exc:
        log.info("networkx backend: %s; networkx's own code decides", exc)
        return None


def _int_values(G, weight) -> bool:
    return weight is None or G.int_weights.get(weight, False)


@_implements("Breadth-first or Dijkstra searches reduced row by row (no n x n matrix).")
def closeness_centrality(G, u=None, distance=None, wf_improved=True):
    G = _as_apsp(G, distance)
    nodes = G.nodes if u is None else [u]
    if not nodes:
        return {}
    # networkx's closeness counts the distances *to* each node (the reversed graph when directed)
    stats = None if u is not None and u not in set(G.nodes) else _reduced(
        G, distance, "in", sources=_node_indices(G.nodes, nodes))
    if stats is None:
        return _networkx("closeness_centrality", G, u=u, distance=distance, wf_improved=wf_improved)
    values = stats.closeness(wf_improved).tolist()
    return values[0] if u is not None else dict(zip(nodes, values))


@_implements("Breadth-first or Dijkstra searches reduced row by row (no n x n matrix).")
def harmonic_centrality(G, nbunch=None, distance=None, sources=None):
    G = _as_apsp(G, distance)
    nxg = G.to_networkx()
    nbunch = set(nxg.nbunch_iter(nbunch) if nbunch is not None else nxg.nodes)
    sources_set = set(nxg.nbunch_iter(sources) if sources is not None else nxg.nodes)
    rows = list(nbunch)  # networkx's dict follows this set's order
    if not rows:
        return {}
    stats = _reduced(G, distance, "in", sources=_node_indices(G.nodes, rows),
                     targets=_node_indices(G.nodes, list(sources_set)))
    if stats is None:
        return _networkx("harmonic_centrality", G, nbunch=nbunch, distance=distance,
                         sources=sources_set)
    # a node no source reaches keeps networkx's starting value, the int 0
    return {u: (h if h > 0 else 0) for u, h in zip(rows, stats.harmonic.tolist())}


@_implements("Breadth-first or Dijkstra searches reduced row by row (no n x n matrix).")
def eccentricity(G, v=None, sp=None, weight=None):
    import networkx as nx

    G = _as_apsp(G, weight)
    if sp is not None:
        return _networkx("eccentricity", G, v=v, sp=sp, weight=weight)
    nxg = G.to_networkx()
    nodes = list(nxg.nbunch_iter(v))
    e = {}
    if nodes:
        stats = _reduced(G, weight, "out", sources=_node_indices(G.nodes, nodes), lengths=True)
        if stats is None:
            return _networkx("eccentricity", G, v=v, weight=weight)
        if not stats.reaches_all.all():
            raise nx.NetworkXError("Found infinite path length because the " + (
                "digraph is not strongly connected" if G.directed else "graph is not connected"))
        values = list(map(int if _int_values(G, weight) else float, stats.eccentricity))
        # networkx takes max() over lengths starting with the source's int 0: a tie keeps it
        e = {u: (0 if x == 0 else x) for u, x in zip(nodes, values)}
    return e[v] if v in nxg else e


def _extreme(name, note):
    """networkx's ``name`` (diameter, radius, center or periphery), registered with ``note``: from ``e``
    or from the eccentricities; the bounding algorithm (``usebounds``) and the center of a tree (its
    walk) stay networkx's."""
    def extreme(G, e=None, usebounds=False, weight=None):
        import networkx as nx

        G = _as_apsp(G, weight)
        tree_walk = (name == "center" and e is None and weight is None and not G.directed
                     and nx.is_tree(G.to_networkx()))
        if (usebounds is True and e is None and not G.directed) or tree_walk:
            return _networkx(name, G, e=e, usebounds=usebounds, weight=weight)
        if e is None:
            e = eccentricity(G, weight=weight)
        best = (max if name in ("diameter", "periphery") else min)(e.values())
        return best if name in ("diameter", "radius") else [v for v in e if e[v] == best]

    extreme.__name__ = extreme.__qualname__ = name
    return _implements(note)(extreme)


diameter = _extreme("diameter", "The largest eccentricity, from searches reduced row by row.")
radius = _extreme("radius", "The smallest eccentricity, from searches reduced row by row.")
center = _extreme("center", "Nodes of the smallest eccentricity, from searches reduced row by row.")
periphery = _extreme("periphery", "Nodes of the largest eccentricity, from searches reduced row by row.")


@_implements("Exact sum of all distances from searches reduced row by row.")
def average_shortest_path_length(G, weight=None, method=None):
    import networkx as nx

    supported = ["unweighted", "dijkstra", "bellman-ford", "floyd-warshall", "floyd-warshall-numpy"]
    if method is None:
        method = "unweighted" if weight is None else "dijkstra"
    if method not in supported:
        raise ValueError(f"method not supported: {method}")
    G = _as_apsp(G, weight)
    n = len(G)
    if n == 0:
        raise nx.NetworkXPointlessConcept(
            "the null graph has no paths, thus there is no average shortest path length")
    if n == 1:
        return 0
    used = None if method == "unweighted" else weight
    stats = _reduced(G, used, "out")
    if stats is None:
        return _networkx("average_shortest_path_length", G, weight=weight, method=method)
    if not stats.reaches_all.all():
        raise nx.NetworkXError("Graph is not strongly connected." if G.directed
                               else "Graph is not connected.")
    return stats.total_distance() / (n * (n - 1))


@_implements("Exact sum of all distances from searches reduced row by row.")
def wiener_index(G, weight=None):
    G = _as_apsp(G, weight)
    # the null graph: networkx's error
    stats = _reduced(G, weight, "out", lengths=True) if len(G) else None
    if stats is None:
        return _networkx("wiener_index", G, weight=weight)
    if not stats.reaches_all.all():
        return float("inf")
    total = stats.total_distance()
    if not G.directed:
        return total / 2
    # networkx sums float lengths where the weights are floats, whole or not (a lone vertex sums none: 0)
    return float(total) if len(G) > 1 and not _int_values(G, weight) else total


@_implements("Sums of 1/d from breadth-first searches reduced level by level.")
def global_efficiency(G):
    G = _as_apsp(G, None)
    if G.directed:
        return _networkx("global_efficiency", G)  # networkx raises NetworkXNotImplemented
    n = len(G)
    if n * (n - 1) == 0:
        return 0
    return _reduced(G, None, "out").global_efficiency()


for _hook in (can_run, should_run, convert_from_nx, convert_to_nx):
    setattr(_BackendInterface, _hook.__name__, staticmethod(_hook))
