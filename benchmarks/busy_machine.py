"""The many-round CPU methods on a busy machine: each method idle and with one core kept busy by
another process (``python -c "while True: pass"``), in its default threading and under other
settings, against its one-thread time under the same load (the goal: at most 1.5x).

Each measurement is a fresh process (Numba's threading layer and OpenMP's wait policy are fixed
when a process first runs a parallel kernel) that solves the graph ``--reps`` times and reports the
median call; the settings and the idle/busy phases alternate in a new random order every round,
so a neighbour's load on a shared machine falls on all of them alike. The table gives each
setting's median over the rounds, [min-max] beside it.

    python benchmarks/busy_machine.py [--methods nd-fw bfs dijkstra] [--rounds 3] [--reps 3]

Settings: ``default`` (as apsp runs), ``one-thread`` (``NUMBA_NUM_THREADS=1``), ``workqueue``
(``NUMBA_THREADING_LAYER=workqueue``), ``passive`` (``OMP_WAIT_POLICY=passive``), ``spin``
(``OMP_WAIT_POLICY=active``: OpenMP threads spin at barriers, the runs before apsp chose).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: method -> the suite graph it runs on (benchmarks/real_graphs.py), unit weights for BFS
GRAPHS = {"nd-fw": "road-6000", "bfs": "random-5000-25000-unit", "dijkstra": "road-6000",
          "johnson": "road-6000"}

SETTINGS = {
    "default": {},
    "one-thread": {"NUMBA_NUM_THREADS": "1"},
    "workqueue": {"NUMBA_THREADING_LAYER": "workqueue"},
    "passive": {"OMP_WAIT_POLICY": "passive"},
    "spin": {"OMP_WAIT_POLICY": "active"},
}

GOAL = 1.5


def child(method: str, graph: str, reps: int) -> None:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT))
    import apsp
    from real_graphs import SUITE, road

    g = road(6000) if graph == "road-6000" else SUITE[graph][0]()
    apsp.shortest_paths(g, method=method, backend="cpu", progress=False)  # compile or load the kernels
    times = []
    for _ in range(reps):
        g.derived.dissections.clear()
        t0 = time.perf_counter()
        r = apsp.shortest_paths(g, method=method, backend="cpu", progress=False)
        times.append(time.perf_counter() - t0 - r.timings.get("order", 0.0))  # the ordering is serial
    print(json.dumps({"seconds": float(np.median(times))}))


def measure(method: str, setting: str, reps: int, compare: str | None = None) -> float:
    root, script = ROOT, __file__
    if setting == "compare":  # another checkout, in its default setting
        root = Path(compare or ".")
        script, setting = str(root / "benchmarks" / "busy_machine.py"), "default"
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER",
                                                             "OMP_WAIT_POLICY")}
    env.update(SETTINGS[setting])
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, script, "--child", method, GRAPHS[method], str(reps)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def busy_loop() -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.5)
    return proc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", nargs="+", default=["nd-fw", "bfs", "dijkstra"], choices=sorted(GRAPHS))
    ap.add_argument("--settings", nargs="+", default=["default", "one-thread", "spin", "workqueue"],
                    choices=sorted(SETTINGS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--compare", metavar="DIR", help="another checkout of apsp (with this script in its "
                    "benchmarks/), measured in its default setting beside these as 'compare'")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    settings = list(dict.fromkeys(["default", "one-thread", *args.settings] + (["compare"] if args.compare else [])))
    rng = np.random.default_rng(0)
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    for method in args.methods:
        seen: dict = {(s, phase): [] for s in settings for phase in ("idle", "busy")}
        for _ in range(args.rounds):
            for phase in rng.permutation(["idle", "busy"]):
                loop = busy_loop() if phase == "busy" else None
                try:
                    for s in rng.permutation(settings):
                        seen[(s, phase)].append(measure(method, s, args.reps, args.compare))
                finally:
                    if loop is not None:
                        loop.kill()
                        loop.wait()
        print(f"\n{method} on {GRAPHS[method]} (medians of {args.rounds} rounds, seconds; busy/one-thread "
              f"busy against the goal {GOAL}x)")
        one = {phase: float(np.median(seen[("one-thread", phase)])) for phase in ("idle", "busy")}
        for s in settings:
            cells = []
            for phase in ("idle", "busy"):
                xs = seen[(s, phase)]
                cells.append(f"{phase} {np.median(xs):.3f} [{min(xs):.3f}-{max(xs):.3f}]")
            ratio = float(np.median(seen[(s, "busy")])) / one["busy"]
            print(f"  {s:10s} " + "  ".join(cells) + f"  busy/one-thread {ratio:.2f}x "
                  f"{'ok' if ratio <= GOAL else 'OVER'}", flush=True)


if __name__ == "__main__":
    main()
