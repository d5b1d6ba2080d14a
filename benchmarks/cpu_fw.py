"""CPU blocked Floyd-Warshall vs scipy, side by side in one run (issues 2 and 4).

    python benchmarks/cpu_fw.py                         # n=2000, every dtype, vs scipy, path ratio
    python benchmarks/cpu_fw.py --n 1000 --dtypes int32 --rounds 5
    python benchmarks/cpu_fw.py --sweep 32,64,96,128,192,256   # block-size sweep (no scipy)

The graph is dense and random: every ordered pair an edge with probability
``--density`` (default 1), integer weights 1..100, the same graph for every
dtype and for scipy (``scipy.sparse.csgraph.floyd_warshall`` on the float64
dense matrix). Times are wall-clock, best over ``--rounds`` rounds that
interleave scipy and every dtype (``--repeat`` runs of each per round),
after a warm-up that compiles the kernels; ours include building the start
matrix and turning sentinels into the unreachable value, as scipy's include
its input conversion. Every result is checked equal to scipy's. updates/s =
n^3 / time. The machine is shared, so the load average is printed, and CPU
seconds too: scipy's CPU time over ours divided by the thread count is the
wall-clock speed-up an idle machine would show.

The paths table times ``solve`` with successors and predecessors against the
distance-only solve and checks a sample of paths.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apsp import exactness  # noqa: E402
from apsp.cpu import blocked  # noqa: E402
from apsp.engine import SolveOptions  # noqa: E402
from apsp.graph import Graph  # noqa: E402
from apsp.paths import reconstruct_path  # noqa: E402


def log(*a):
    print(*a, flush=True)


def best_time(fn, repeat: int):
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def make_graph(n: int, density: float, seed: int):
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 101, size=(n, n)).astype(np.float64)
    w[rng.random((n, n)) >= density] = 0.0  # scipy's dense convention: 0 = no edge
    np.fill_diagonal(w, 0.0)
    return w, Graph.from_dense(w)


def our_solve(graph, dt, block, paths=False):
    opts = SolveOptions.build(dtype=np.dtype(dt), block_size=block, progress=False,
                        successors=paths, predecessors=paths)
    return blocked.solve(graph, opts)


def warm_up(dts, block):
    # above SMALL_N, so the blocked kernels compile here (smaller graphs take a plain loop)
    _, g = make_graph(getattr(blocked, "SMALL_N", 0) + 10, 0.5, 0)
    for dt in dts:
        our_solve(g, dt, block)
        our_solve(g, dt, block, paths=True)


def as_float(dist):
    out = dist.astype(np.float64)
    out[dist == exactness.unreachable_value(dist.dtype)] = np.inf
    return out


def check_paths(out, w, samples=200, seed=1):
    rng = np.random.default_rng(seed)
    n = w.shape[0]
    dist = as_float(out.dist)
    for i, j in rng.integers(0, n, size=(samples, 2)):
        for kind, matrix in (("successors", out.successors), ("predecessors", out.predecessors)):
            route = reconstruct_path(matrix, i, j, kind=kind)
            length = sum(w[u, v] for u, v in zip(route, route[1:]))
            assert all(w[u, v] != 0 for u, v in zip(route, route[1:])), "path uses a non-edge"
            assert length == dist[i, j], f"path {i}->{j} has the wrong length"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--dtypes", default="auto,int16,int32,int64,float32,float64",
                    help="'auto' is the dtype apsp.shortest_paths picks for this graph")
    ap.add_argument("--density", type=float, default=1.0)
    ap.add_argument("--block", type=int, default=None, help=f"default: {blocked.DEFAULT_BLOCK}")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of scipy + every dtype, interleaved")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each dtype per round")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--no-scipy", action="store_true")
    ap.add_argument("--no-paths", action="store_true")
    ap.add_argument("--sweep", default=None, help="comma-separated block sizes: time each, then stop")
    args = ap.parse_args(argv)
    n = args.n
    block = args.block or blocked.DEFAULT_BLOCK

    log(f"# CPU blocked FW benchmark: n={n} density={args.density} weights 1..100 seed={args.seed}")
    log(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, numba threads "
        f"{__import__('numba').get_num_threads()}, load average {os.getloadavg()}, {time.strftime('%Y-%m-%d %H:%M')}")
    w, graph = make_graph(n, args.density, args.seed)
    auto = exactness.choose_dtype(graph.distance_bound, graph.has_negative_weights, graph.integral).name
    dts = [auto if dt == "auto" else dt for dt in args.dtypes.split(",")]
    labels = {dt: (f"{dt}*" if dt == auto and "auto" in args.dtypes.split(",") else dt) for dt in dts}
    dts = list(dict.fromkeys(dts))
    log(f"# * = the dtype apsp.shortest_paths picks for this graph (bound (n-1)*max|w| = {graph.distance_bound:.0f})")
    warm_up(dts, block)

    if args.sweep:
        log(f"{'dtype':>8} {'block':>6} {'time s':>8} {'updates/s':>10}")
        for dt in dts:
            for b in map(int, args.sweep.split(",")):
                t, _ = best_time(lambda: our_solve(graph, dt, b), args.repeat)
                log(f"{dt:>8} {b:>6} {t:>8.3f} {n ** 3 / t / 1e9:>9.1f}G")
        log(f"# load average after: {os.getloadavg()}")
        return 0

    # Rounds interleave scipy and every dtype, so a quiet (or busy) spell of the shared
    # machine favours neither; each figure is the best over all rounds.
    wall, cpu = {}, {}

    def record(key, fn):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        t, c = time.perf_counter() - t0, time.process_time() - c0
        wall[key] = min(wall.get(key, np.inf), t)
        cpu[key] = min(cpu.get(key, np.inf), c)
        return result

    expected = None
    threads = __import__("numba").get_num_threads()
    for _ in range(args.rounds):
        if not args.no_scipy:
            from scipy.sparse.csgraph import floyd_warshall

            expected = record("scipy", lambda: floyd_warshall(w, directed=True))
        for dt in dts:
            for _ in range(args.repeat):
                out = record(dt, lambda: our_solve(graph, dt, block))
            if expected is not None:
                assert np.array_equal(as_float(out.dist), expected), f"{dt}: result differs from scipy"
            if not args.no_paths:
                out = record((dt, "paths"), lambda: our_solve(graph, dt, block, paths=True))
                check_paths(out, w)
    log(f"{'n':>6} {'dtype':>8} {'block':>6} {'ours s':>8} {'scipy s':>8} {'speed-up':>9} {'updates/s':>10}"
        f" | {'ours cpu-s':>10} {'scipy cpu-s':>11} {'cpu speed-up':>12}")
    for key in dts + (["scipy"] if "scipy" in wall else []):
        t = wall[key]
        s_wall, s_cpu = wall.get("scipy"), cpu.get("scipy")
        speedup = f"{s_wall / t:>8.1f}x" if s_wall else f"{'-':>9}"
        cpu_speedup = f"{s_cpu / (cpu[key] / (1 if key == 'scipy' else threads)):>11.1f}x" if s_cpu else f"{'-':>12}"
        log(f"{n:>6} {labels.get(key, key):>8} {block if key != 'scipy' else '-':>6} {t:>8.3f} "
            f"{f'{s_wall:.3f}' if s_wall else '-':>8} {speedup} {n ** 3 / t / 1e9:>9.1f}G | "
            f"{cpu[key]:>10.3f} {f'{s_cpu:.3f}' if s_cpu else '-':>11} {cpu_speedup}")
    log("# cpu speed-up = scipy's CPU seconds / (ours / numba threads): the wall speed-up on an idle machine")

    if not args.no_paths:
        log("")
        log(f"{'n':>6} {'dtype':>8} {'dist s':>8} {'paths s':>8} {'ratio':>6} | {'cpu ratio':>9}"
            "   (paths = successors + predecessors)")
        for dt in dts:
            t_plain, t_paths = wall[dt], wall[(dt, "paths")]
            log(f"{n:>6} {labels[dt]:>8} {t_plain:>8.3f} {t_paths:>8.3f} {t_paths / t_plain:>5.2f}x | "
                f"{cpu[(dt, 'paths')] / cpu[dt]:>8.2f}x")
    log(f"# load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
