"""Where the automatic call's own time goes on small graphs: ``method="auto"`` against its pick asked
for by name (medians of ``--repeat`` whole calls, the ordering dropped before each, as
`real_graphs.py` times them), then a profile of the automatic calls.

``python benchmarks/auto_overhead.py les_miserables rmat-12 --profile prof.txt``
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import apsp  # noqa: E402
from real_graphs import SUITE  # noqa: E402


def timed(g, repeat, after=(), **kw):
    times, res = [], None
    for _ in range(repeat):
        for method, backend in after:  # untimed: the state a call finds after these
            apsp.shortest_paths(g, method=method, backend=backend, progress=False)
        g.__dict__.pop("_dissections", None)
        t0 = time.perf_counter()
        res = apsp.shortest_paths(g, progress=False, **kw)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("graphs", nargs="+", choices=sorted(SUITE))
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--profile")
    ap.add_argument("--after", nargs="*", default=[], metavar="METHOD/BACKEND",
                    help="before each timed call, call these (untimed), as a suite's rounds do")
    args = ap.parse_args()
    after = [tuple(a.split("/")) for a in args.after]
    try:
        import torch  # noqa: F401  (as real_graphs.py: GPU methods at their running cost)
    except ImportError:
        pass
    report = io.StringIO()
    for name in args.graphs:
        g = apsp.as_graph(SUITE[name][0]())
        _, r = timed(g, 2)
        pick = dict(method=r.method, backend=r.backend)
        timed(g, 2, **pick)
        auto, r = timed(g, args.repeat, after)
        named, _ = timed(g, args.repeat, after, **pick)
        auto2, _ = timed(g, args.repeat, after)
        print(f"{name}{' after ' + ' '.join(args.after) if after else ''}: auto {auto * 1e3:.2f} / {auto2 * 1e3:.2f} ms, {pick} {named * 1e3:.2f} ms; "
              f"timings {({k: round(v * 1e3, 2) for k, v in r.timings.items()})}, dtype {r.dtype}, "
              f"tried {r.info.get('dtype_tried')}", flush=True)
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            timed(g, args.repeat, after)
            prof.disable()
            report.write(f"===== {name} auto x{args.repeat}\n")
            pstats.Stats(prof, stream=report).sort_stats("cumtime").print_stats(35)
            prof = cProfile.Profile()
            prof.enable()
            timed(g, args.repeat, after, **pick)
            prof.disable()
            report.write(f"===== {name} {pick} x{args.repeat}\n")
            pstats.Stats(prof, stream=report).sort_stats("cumtime").print_stats(25)
    if args.profile:
        Path(args.profile).write_text(report.getvalue())


if __name__ == "__main__":
    main()
