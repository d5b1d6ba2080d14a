"""``apsp stats``: reductions of all distances (closeness, eccentricity, diameter, ...) without the
matrix."""
from __future__ import annotations

import json
import math
import sys
import time

from ..errors import require
from ..methods import BACKENDS, STATS_METHODS, WEIGHTED_DTYPES
from .options import add_report_options
from .report import print_stages
from .startup import start_command
from .vertices import api_vertices, sources_arg


STATS_EPILOG = """Searches from every vertex (or --sources), each row of distances reduced as it is
found and dropped: the n x n matrix is never held. Vertices are named as the input
names them: SNAP ids and GraphML node ids as labels (--sources, center, periphery and
the CSV's vertex column alike), else numbers from the format's first (1 for homework
text, DIMACS, Matrix Market, METIS; 0 otherwise).
Distances are from each source (--direction out) or to it (--direction in; networkx's
closeness on directed graphs). Unreachable pairs make the diameter, radius, average
distance and Wiener index infinite (null in --json) and count as 1/inf = 0 in the
harmonic centrality and the efficiency.

--csv FILE writes one row per source:
  vertex,reachable,total_distance,eccentricity,reaches_all,closeness,harmonic
(closeness as networkx's, wf_improved; eccentricity: the largest finite distance).
--json prints one object (schema_version 1):
  {"schema_version", "n", "edges", "sources", "direction", "method", "reason", "backend", "dtype",
   "connected", "diameter", "radius", "center", "periphery", "average_distance",
   "wiener_index", "global_efficiency", "histogram", "timings_s"}
  ("schema", the same number under its former name, goes in the next release)

examples:
  apsp stats graph.txt
  apsp stats web.snap --format snap --direction in --csv closeness.csv --json
"""


def add_stats_parser(command) -> None:
    """``apsp stats``'s parser; ``command``: the subparsers' ``add_parser``."""
    from ..cli_messages import add_renamed_option

    p = command("stats", help="closeness, eccentricity, diameter, ... of every vertex "
                              "(streams rows, no n x n matrix)", epilog=STATS_EPILOG)
    p.add_argument("input", help="graph file")
    p.add_argument("--csv", metavar="FILE", default=None, help="write the per-vertex values (see below)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--sources", metavar="V,V,...", default=None,
                   help="reduce the rows of these vertices only, in this order (numbered as in the input)")
    p.add_argument("--direction", default="out", choices=("out", "in"),
                   help="distances from each source (out, default) or to it (in)")
    p.add_argument("--histogram", action="store_true",
                   help="also count the distances by value (integer distances only)")
    p.add_argument("--method", default="auto", choices=STATS_METHODS,
                   help="the searches (default: BFS for unit weights, Dijkstra, Johnson with "
                        "negative weights; nd-rows, the nested dissection's rows, where the cost "
                        "model prices them below Dijkstra)")
    p.add_argument("--dtype", default=None, choices=WEIGHTED_DTYPES,
                   help="distance type of weighted searches (default: the narrowest exact one)")
    p.add_argument("--backend", default="auto", choices=BACKENDS,
                   help="where to search (default: the GPU for unit weights when one is usable; "
                        "weighted graphs and --histogram on the CPU)")
    p.add_argument("--format", dest="fmt", help="input format (default: from the suffix; homework for .txt)")
    p.add_argument("--unweighted", action="store_true", help="treat every edge as weight 1")
    p.add_argument("--undirected", action="store_true", help="edges go both ways")
    add_renamed_option(p, "--host-memory", metavar="SIZE", default=None,
                       help="RAM the searches may use (default: what the OS reports available)")
    p.add_argument("--gpu-memory", metavar="SIZE", default=None,
                   help="GPU memory for a block of sources' bit arrays (default: what is free)")
    p.add_argument("--distributed", action="store_true",
                   help="split the sources over MPI ranks: launch with 'mpiexec -n P apsp stats ...' "
                        "(needs mpi4py; every rank reads the graph; NUMBA_NUM_THREADS per rank)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or notes")
    add_report_options(p, "the graph's size, the search chosen and why, and the memory planned",
                       "read, search, write")


def _stats_value(x):
    """A JSON value: ints stay ints, inf becomes null."""
    return None if isinstance(x, float) and math.isinf(x) else x


def cmd_stats(args) -> int:
    if args.distributed:
        require("mpi4py", "--distributed")
        from ..distributed.cli import run_stats

        return run_stats(args, stats_command)
    from ..stats import distance_stats

    return stats_command(args, distance_stats)


def stats_command(args, compute) -> int:
    """``apsp stats``: read, ``compute(graph, sources, **options)`` (`apsp.distance_stats` or
    its distributed form, which returns None on ranks other than 0: they print nothing), report."""
    from ..api import as_graph
    from ..io import FIRST_VERTEX, check_outputs, detect_format
    from ..jit import book_compile, compile_seconds

    if args.csv is not None and args.json and args.csv == "-":
        raise ValueError("--json and --csv - would mix on standard output; write the CSV to a file")
    check_outputs({"--csv": (args.csv, None, "file")}, inputs={"the input": args.input})
    first = FIRST_VERTEX[detect_format(args.input, args.fmt)]
    startup = start_command(args)
    compiled = compile_seconds()
    t0 = time.perf_counter()
    g = as_graph(args.input, fmt=args.fmt, directed=not args.undirected, unweighted=args.unweighted)
    t_read = time.perf_counter() - t0
    args._labels = g.labels  # --sources names vertices as the input does
    sources = sources_arg(args, g.n)
    if sources is not None:
        sources = api_vertices(g.labels, sources)
    t0 = time.perf_counter()
    st = compute(g, sources, direction=args.direction, method=args.method, backend=args.backend,
                 dtype=args.dtype, histogram=args.histogram, progress=False if args.quiet else None,
                 host_memory=args.host_memory, gpu_memory=args.gpu_memory)
    if st is None:
        return 0
    timings = {**startup, "read": t_read, "search": time.perf_counter() - t0}
    if args.csv is not None:
        t0 = time.perf_counter()
        _write_stats_csv(args.csv, st, first)
        timings["write"] = time.perf_counter() - t0
    timings = book_compile(timings, compile_seconds() - compiled, ("read", "search"))
    if args.verbose:
        plan = st.info["memory"]
        print(f"apsp: n={g.n} edges={g.nnz}; {len(st.sources)} sources, direction {st.direction}; "
              f"method={st.method} ({st.reason}) on the {st.info['backend']}; "
              f"dtype={st.dtype.name}; working set "
              f"{plan['host_bytes']} bytes on {plan['threads']} threads"
              f"{', ' + str(plan['gpu_bytes']) + ' bytes on the card' if 'gpu_bytes' in plan else ''}"
              f"{', blocks of ' + str(plan['block_rows']) + ' sources' if st.method == 'nd-rows' else ''}"
              f"{' per rank, ' + str(st.info['ranks']) + ' ranks' if 'ranks' in st.info else ''}",
              file=sys.stderr)
    if args.profile:
        print_stages(timings)
    summary = _stats_summary(g, st, first, timings)
    if args.json:
        print(json.dumps(summary))
    else:
        _print_stats(summary)
    return 0


def _stats_summary(g, st, first: int, timings: dict) -> dict:
    return {
        "schema_version": 1, "schema": 1, "n": g.n, "edges": g.nnz, "sources": len(st.sources),
        "direction": st.direction, "method": st.method, "reason": st.reason,
        "backend": st.info["backend"], "dtype": st.dtype.name, "connected": bool(st.reaches_all.all()),
        "diameter": _stats_value(st.diameter()), "radius": _stats_value(st.radius()),
        "center": _shown(st, st.center(), first),
        "periphery": _shown(st, st.periphery(), first),
        "average_distance": _stats_value(st.average_distance()),
        "wiener_index": _stats_value(st.wiener_index()),
        "global_efficiency": st.global_efficiency(),
        "histogram": None if st.histogram is None else st.histogram.tolist(),
        "timings_s": {k: round(v, 6) for k, v in timings.items()},
    }


def _shown(st, vertices, first: int) -> list:
    """Vertices as the input names them: its labels, or numbers from its first one."""
    return vertices.tolist() if st.labels is not None else [int(v) + first for v in vertices]


def _print_stats(summary: dict) -> None:
    print(f"vertices {summary['n']}, edges {summary['edges']}, sources {summary['sources']} "
          f"(distances {summary['direction']}), method {summary['method']}")
    for name in ("diameter", "radius", "center", "periphery", "average distance", "Wiener index",
                 "global efficiency"):
        value = summary[name.lower().replace(" ", "_")]
        if isinstance(value, list):  # the first 20 vertices
            more = f" ... ({len(value)} in all)" if len(value) > 20 else ""
            value = " ".join(map(str, value[:20])) + more
        print(f"{name} {'inf (some pair has no path)' if value is None else value}")
    if summary["histogram"] is not None:
        print("histogram (distance: pairs) " + ", ".join(
            f"{d}: {c}" for d, c in enumerate(summary["histogram"]) if c))


def _write_stats_csv(target, st, first: int) -> None:
    """One row per source, written whole or not at all."""
    from itertools import islice

    from ..io.atomic import atomic_write

    rows = zip(_shown(st, st.vertices, first), st.reachable.tolist(), st.total.tolist(),
               st.eccentricity.tolist(), st.reaches_all.tolist(), st.closeness().tolist(), st.harmonic.tolist())
    lines = (f"{v},{r},{t!r},{e!r},{int(a)},{c!r},{h!r}\n" for v, r, t, e, a, c, h in rows)
    with atomic_write(target) as f:
        f.write(b"vertex,reachable,total_distance,eccentricity,reaches_all,closeness,harmonic\n")
        while chunk := "".join(islice(lines, 4096)):
            f.write(chunk.encode())
