"""``apsp gen``: write a random graph."""
from __future__ import annotations

import json
import sys
import time

from .options import add_report_options
from .report import print_stages
from .startup import start_command


def add_gen_parser(command) -> None:
    """``apsp gen``'s parser; ``command``: the subparsers' ``add_parser``."""
    p = command("gen", help="write a random graph",
                epilog="example:\n  apsp gen 1000 --density 0.05 --weights 0 100 --seed 1 -o g.txt")
    p.add_argument("n", type=int, help="number of vertices")
    p.add_argument("--density", type=float, default=None,
                   help="fraction of the n(n-1) possible edges (default: 0.1; link-graph: 0.001)")
    p.add_argument("--weights", type=_number, nargs=2, default=None, metavar=("LO", "HI"),
                   help="weights drawn uniformly from LO..HI, integers when both are "
                        "(default: 0 100; link-graph: every weight 1); homework text (.txt) "
                        "holds integers only")
    p.add_argument("--kind", default="uniform", choices=("uniform", "link-graph"),
                   help="uniform (every pair equally likely) or link-graph (directed, power-law "
                        "degrees, like a web or Wikipedia link graph)")
    p.add_argument("--seed", type=int, default=None, help="random seed")
    p.add_argument("-o", "--output", required=True, help="graph file to write")
    p.add_argument("--format", dest="fmt", default=None, help="output format (default: from suffix)")
    p.add_argument("--json", action="store_true",
                   help="print a JSON summary on stdout (schema_version 1): n, edges, kind, density, "
                        "weights, seed, output, format, timings_s")
    p.add_argument("-q", "--quiet", action="store_true", help="no notes (the first run's compile notice)")
    add_report_options(p, "the parameters used (with the defaults filled in), the edges drawn "
                          "and the output format", "generate, write")


def cmd_gen(args) -> int:
    from ..generate import random_graph
    from ..io import check_outputs, guess_format, write_graph

    check_outputs({"-o": (args.output, args.fmt, "graph")})
    start_command(args)
    if args.n < 1:  # no graph file format holds a graph without vertices
        raise ValueError(f"n must be at least 1, got {args.n}")
    weights = tuple(args.weights) if args.weights else (None if args.kind == "link-graph" else (0, 100))
    fractional = weights is not None and not all(isinstance(w, int) for w in weights)
    # refused before drawing
    if fractional and weights is not None and guess_format(args.output, args.fmt) == "homework":
        raise ValueError(f"homework text holds integer weights, but --weights {weights[0]} {weights[1]} "
                         "draws fractional ones: give integer bounds (e.g. --weights 0 100), or write "
                         f"{args.output!r} as .snap, .mtx or .gr")
    t0 = time.perf_counter()
    edges = random_graph(args.n, args.density, weights=weights, seed=args.seed, kind=args.kind)
    t1 = time.perf_counter()
    write_graph(args.output, edges, fmt=args.fmt)
    t2 = time.perf_counter()
    density_used = args.density if args.density is not None else (0.001 if args.kind == "link-graph" else 0.1)
    if args.verbose:
        density = args.density if args.density is not None else (
            f"{0.001 if args.kind == 'link-graph' else 0.1} (default for {args.kind})")
        drawn = "every weight 1" if weights is None else (
            f"weights {weights[0]}..{weights[1]} ({'floats' if fractional else 'integers'}"
            f"{'' if args.weights else ', default'})")
        print(f"apsp: gen n={args.n} kind={args.kind} density={density}, {drawn}, "
              f"seed={args.seed if args.seed is not None else 'none (a different graph each run)'}; "
              f"{len(edges.src)} edges drawn; wrote {args.output} as {guess_format(args.output, args.fmt)} "
              f"({'as asked' if args.fmt else 'from the suffix'})", file=sys.stderr)
    if args.profile:
        print_stages({"generate": t1 - t0, "write": t2 - t1})
    if args.json:
        print(json.dumps({
            "schema_version": 1, "n": args.n, "edges": len(edges.src), "kind": args.kind,
            "density": density_used, "weights": None if weights is None else list(weights), "seed": args.seed,
            "output": args.output, "format": guess_format(args.output, args.fmt),
            "timings_s": {"generate": round(t1 - t0, 6), "write": round(t2 - t1, 6)}}))
    return 0


def _number(text: str):
    """An int when the text is one (so '0 100' gives integer weights), else a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)
