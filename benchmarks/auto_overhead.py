"""Where the automatic call's own time goes on small graphs: ``method="auto"`` against its pick asked
for by name (medians of ``--repeat`` whole calls, the ordering dropped before each, as
`real_graphs.py` times them), then a profile of the automatic calls.

``python benchmarks/auto_overhead.py les_miserables rmat-12 --profile prof.txt``

``--fresh`` leaves torch out (GPU FW then runs on the CUDA driver, as a one-off command does);
``--stages`` alternates the automatic and the named call, in a random order each round, and prints
each stage's median for both, and whether their plans differ.
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
        g.derived.dissections.clear()
        t0 = time.perf_counter()
        res = apsp.shortest_paths(g, progress=False, **kw)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), res


def stages(name, g, pick, repeat, after):
    rng = np.random.default_rng(0)
    calls = {"auto": {}, "named": pick}
    seen: dict = {c: [] for c in calls}
    plans: dict = {}
    for _ in range(repeat):
        for c in rng.permutation(list(calls)):
            for method, backend in after:
                apsp.shortest_paths(g, method=method, backend=backend, progress=False)
            g.derived.dissections.clear()
            t0 = time.perf_counter()
            r = apsp.shortest_paths(g, progress=False, **calls[c])
            seen[c].append(dict(r.timings, total=time.perf_counter() - t0))
            plans[c] = {k: v for k, v in r.info["plan"].items() if k not in ("why", "estimates", "reasons")}
    for c in calls:
        keys = seen[c][-1]
        print(f"{name} {c:5s}: " + ", ".join(
            f"{k} {np.median([s.get(k, 0.0) for s in seen[c]]) * 1e3:.2f}" for k in keys), flush=True)
    differ = {k: (plans["auto"].get(k), plans["named"].get(k)) for k in plans["auto"].keys() | plans["named"].keys()
              if plans["auto"].get(k) != plans["named"].get(k)}
    print(f"{name} plans differ in: {differ or 'nothing'}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("graphs", nargs="+", choices=sorted(SUITE))
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--profile")
    ap.add_argument("--after", nargs="*", default=[], metavar="METHOD/BACKEND",
                    help="before each timed call, call these (untimed), as a suite's rounds do")
    ap.add_argument("--fresh", action="store_true", help="leave torch out, as a one-off command does")
    ap.add_argument("--stages", action="store_true",
                    help="alternate the automatic and the named call; each stage's median for both")
    args = ap.parse_args()
    after = [tuple(a.split("/")) for a in args.after]
    if not args.fresh:
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
        if args.stages:
            stages(name, g, pick, args.repeat, after)
            continue
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
