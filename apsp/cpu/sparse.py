"""Sparse weighted graphs: one Dijkstra (or Johnson) search per source, in parallel.

One Dijkstra per source costs O(n (n + m) log n), far below Floyd-Warshall's
n^3 when the graph is sparse. Johnson reweights with one Bellman-Ford first, so
it also takes negative weights (and raises `NegativeCycleError` naming a
negative cycle, a negative self-loop included). The searches
(`apsp.cpu.searches`) compute in ``opts.dtype`` itself, so integer distances
are exact at any size; ``opts.sources`` limits them to some source rows.
Predecessors (scipy's int32, -9999) and successors (next hops) on request.

>>> import apsp
>>> r = apsp.shortest_paths([(0, 1, 4), (1, 2, 1), (0, 2, 7)], method="dijkstra")
>>> r.distances[0].tolist()
[0, 4, 5]
"""
from __future__ import annotations

import numpy as np

from ..solvers import SolveOptions, SolveOutput


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

    from .. import dtypes
    from .bfs import AUTO_DTYPES, max_level, recast, refuse_dtype

    asked = None if opts.dtype is None else np.dtype(opts.dtype)
    if asked is None or asked.kind == "f" or max_level(asked) >= graph.n - 1:
        return run_searches(graph, opts, "bfs")
    wide = next(np.dtype(t) for t in AUTO_DTYPES if max_level(t) >= graph.n - 1)
    out = run_searches(graph, replace(opts, dtype=wide), "bfs")
    reached = out.dist != dtypes.unreachable_value(wide)
    if reached.any() and int(out.dist[reached].max()) > max_level(asked):
        refuse_dtype(asked)
    out.dist = recast(out.dist, asked)
    return out


def run_searches(graph, opts: SolveOptions, kind: str) -> SolveOutput:
    """Searches of ``kind`` from ``opts.sources`` (None: every vertex) packaged as a SolveOutput."""
    from .paths import loops_possible, successors_checked
    from .searches import SearchGraph, search_rows

    n = graph.n
    dt = np.dtype(opts.dtype if opts.dtype is not None else np.int32)
    sources = np.arange(n, dtype=np.int64) if opts.sources is None else np.asarray(opts.sources)
    g = SearchGraph.from_csr(graph.to_csr(), dt)
    rows = search_rows(g, sources, kind, want_pred=bool(opts.predecessors),
                       want_hop=bool(opts.successors), progress=opts.progress)
    info = {"searches": int(len(sources))}
    succ = rows.hop
    if succ is not None and opts.sources is None and loops_possible(graph, dt):
        # first hops of different sources' trees can loop along a zero-weight cycle
        succ, info["paths_repaired"] = successors_checked(succ, rows.dist, graph)
    return SolveOutput(dist=rows.dist, predecessors=rows.pred, successors=succ, info=info)
