"""``apsp info``: the backends found here, and why any is missing."""
from __future__ import annotations

import json
import sys

from .options import add_report_options
from .report import print_stages


def add_info_parser(command) -> None:
    """``apsp info``'s parser; ``command``: the subparsers' ``add_parser``."""
    p = command("info", help="show the backends found here and why any is missing")
    p.add_argument("--json", action="store_true", help="print as JSON")
    add_report_options(p, "every backend's facts and which backend --backend auto picks here, "
                          "and why", "each backend's probe")


def cmd_info(args) -> int:
    from ..info import backend_report

    timings: dict[str, float] = {}
    report = {"apsp": _apsp_entry(), **backend_report(timings)}
    if args.verbose:
        for name, entry in report.items():
            facts = ", ".join(f"{k}={v}" for k, v in entry.items()
                              if k not in ("available", "detail", "hint"))
            print(f"apsp: {name}: {facts}", file=sys.stderr)
        from ..plan import GPU_MIN_VERTICES

        gpu = report["gpu"]["available"]
        print("apsp: --backend auto picks "
              + (f"the GPU for Floyd-Warshall (dense and nd-fw) and BFS solves from "
                 f"{GPU_MIN_VERTICES} vertices (a GPU is usable), the CPU for smaller graphs "
                 "and for Dijkstra/Johnson"
                 if gpu else f"the CPU for every solve: {report['gpu']['detail']}"), file=sys.stderr)
    if args.profile:
        print_stages(timings)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, entry in report.items():
            print(f"{name:<10} {'yes' if entry['available'] else 'no '}  {entry['detail']}")
    return 0


def _apsp_entry() -> dict:
    """apsp itself, first: its version and where it is installed, in a backend entry's shape."""
    from pathlib import Path

    from .. import __version__

    where = str(Path(__file__).resolve().parent.parent)
    return {"available": True, "detail": f"version {__version__} ({where})", "hint": None,
            "version": __version__, "path": where}
