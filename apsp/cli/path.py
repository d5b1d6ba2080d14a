"""``apsp path``: one shortest route by one search (or read from an all-pairs solve)."""
from __future__ import annotations

import json
import sys
import time

from ..methods import TABLE
from .options import add_solve_options, solve_options
from .report import print_stages, report_result
from .startup import start_command
from .vertices import api_vertices, vertex_arg


PATH_EPILOG = """Vertices are named as the input names them, for --from/--to and the printed route:
  1-based numbers: homework text (.txt), DIMACS (.gr), Matrix Market (.mtx), METIS
  0-based numbers: .npy matrices
  ids: SNAP edge lists (the integers in the file, gaps allowed), GraphML (node ids)

With --method auto (the default) one search answers the query: breadth-first
search when every weight is 1, Dijkstra (stopping at the target; from both
ends on larger graphs) for non-negative weights, Bellman-Ford with negative weights (a negative cycle
that lies on a walk from --from to --to is an error naming it). Another
--method solves all pairs first (on --backend; fw and nd-fw with --block-size),
then reads the route.
Exit status 1 when there is no path. --json prints one object (schema_version 1):
  {"schema_version", "source", "target", "reachable", "length", "path", "hops",
   "first_vertex", "method", "dtype", "timings_s", "n", "edges"}
  ("schema", the same number under its former name, goes in the next release)

examples:
  apsp path graph.txt --from 1 --to 4
  apsp path road.gr --from 1 --to 264346 --json -v --profile
"""


def add_path_parser(command) -> None:
    """``apsp path``'s parser; ``command``: the subparsers' ``add_parser``."""
    p = command("path", help="print a shortest path and its length (one search, not all pairs)",
                epilog=PATH_EPILOG)
    p.add_argument("input", help="graph file")
    p.add_argument("--from", dest="source", required=True,
                   help="start vertex, named as in the input (see below)")
    p.add_argument("--to", dest="target", required=True,
                   help="end vertex, named as in the input")
    add_solve_options(p, route=True)


def unused_path_options(args) -> str | None:
    """What ``path`` would otherwise ignore: the all-pairs options beside the one search of --method auto."""
    blocked = [m.name for m in TABLE if m.blocks]
    if args.block_size is not None and args.method not in blocked:
        return (f"--block-size is the blocking factor of --method {' or '.join(blocked)}; "
                f"--method {args.method} takes none")
    if args.backend == "gpu" and args.method == "auto":
        return ("--backend gpu needs an all-pairs --method (e.g. fw): --method auto runs one search, "
                "on the CPU")
    return None


def cmd_path(args) -> int:
    from ..api import as_graph  # before the startup stage ends: a profile counts these imports
    from ..io import FIRST_VERTEX, detect_format
    from ..jit import book_compile, compile_seconds
    from ..query import shortest_path_between

    first = FIRST_VERTEX[detect_format(args.input, args.fmt)]
    all_pairs = args.method != "auto"  # an explicit all-pairs method: solve everything, then read the route
    startup = start_command(args, solve=all_pairs, paths=True)
    t0 = time.perf_counter()
    compiled = compile_seconds()
    g = as_graph(args.input, fmt=args.fmt, directed=not args.undirected, unweighted=args.unweighted)
    args._labels = g.labels
    t_read = time.perf_counter() - t0
    s, t = vertex_arg("--from", args.source, first, g), vertex_arg("--to", args.target, first, g)
    if all_pairs:
        return _route_by_solve(args, g, s, t, first, {**startup, "read": t_read}, compile_seconds() - compiled)
    route = shortest_path_between(g, *api_vertices(g.labels, [s, t]), dtype=args.dtype)
    route.timings = book_compile({**startup, "read": t_read, **route.timings}, compile_seconds() - compiled,
                                 ("read", "search"))
    if args.verbose:
        named = "named by the input's labels" if g.labels is not None else f"numbered from {first} as in the input"
        print(f"apsp: n={g.n} edges={g.nnz}; vertices {named}; "
              f"method={route.method} ({route.reason}): one search from {args.source} to "
              f"{args.target}; dtype={route.dtype.name} "
              f"({'as asked' if args.dtype else 'smallest holding (n-1)*max|w|'}); "
              f"{route.visited} vertices visited", file=sys.stderr)
    if args.profile:
        print_stages(route.timings)
    return _print_route(args, g, route, first)


def _print_route(args, g, route, first: int) -> int:
    """The route as JSON or as text; exit status 1 when there is none."""
    if args.json:
        print(json.dumps({**route.to_json(first), "n": g.n, "edges": g.nnz}))
    elif route.reachable:
        print(" -> ".join(str(v if route.by_label else v + first) for v in route.path))
        print(f"length {route.length}")
    else:
        print(f"no path from {args.source} to {args.target}")
    return 0 if route.reachable else 1


def _route_by_solve(args, g, i: int, j: int, first: int, timings: dict, compiled: float) -> int:
    """``path`` with an all-pairs --method: solve all pairs with next hops, then read the route
    from ``i`` to ``j``. ``timings``: the stages so far (startup, read); ``compiled``: seconds of
    them spent compiling."""
    from ..api import shortest_paths
    from ..jit import book_compile
    from ..paths import reconstruct_path
    from ..query import Route

    result = shortest_paths(g, return_successors=True, **solve_options(args))
    result.timings = book_compile({**timings, **result.timings}, compiled, "read")
    assert result.successors is not None  # asked for
    reachable = bool(result.reachable[i, j])
    route = Route(i, j, reconstruct_path(result.successors, i, j, kind="successors") if reachable else None,
                  result.distances[i, j].item() if reachable else None, result.method, result.dtype,
                  timings=result.timings).named(g.labels)
    if not args.json:
        report_result(args, g, result)
    return _print_route(args, g, route, first)
