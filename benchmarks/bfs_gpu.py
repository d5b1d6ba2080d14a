"""GPU BFS-APSP vs our GPU Floyd-Warshall vs scipy's unweighted shortest_path (the issue-5 benchmark).

On a CUDA machine, for each n (density 1/1000 by default, fresh random graphs):

1. checks our GPU BFS against scipy's BFS (every row for n <= --check-full-max,
   else --check-rows random rows; scipy's ``indices=`` runs only those sources),
2. times, warm, median of --repeat, with torch.cuda.Event around the whole call
   (host graph in, numpy distances out): our GPU BFS, our GPU FW
   (``apsp.shortest_paths(..., method="fw", backend="gpu")``, skipped if it is
   not there), our CPU BFS, and scipy's ``shortest_path(unweighted=True)``.
   scipy runs one BFS per source, so above --scipy-full-max its time is measured
   on --scipy-rows sources and scaled to n (marked ``*``).

Prints a table with the ratios the issue asks for (FW/BFS and scipy/BFS).

    python benchmarks/bfs_gpu.py
    python benchmarks/bfs_gpu.py --n 5000 10000 --kind link-graph
    python benchmarks/bfs_gpu.py --sweep --n 40000     # tile shapes of the level kernel
"""
from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import apsp  # noqa: E402
from apsp.generate import random_graph  # noqa: E402


def cuda_time(fn, repeat: int):
    """Median seconds of ``fn()`` over ``repeat`` warm runs (one warm-up first), and its last result."""
    import torch

    out = fn()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        out = fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times), out


def wall_time(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def check_against_scipy(result, a, rows) -> None:
    from scipy.sparse.csgraph import shortest_path

    ref = shortest_path(a, unweighted=True, indices=rows)
    got = result.to_float()[rows]
    if not np.array_equal(got, ref):
        bad = np.argwhere(got != ref)[:5]
        raise SystemExit(f"MISMATCH against scipy at (row, col) {bad.tolist()}")


def gpu_bfs(g, **extra):
    return apsp.shortest_paths(g, method="bfs", backend="gpu", **extra)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, nargs="+", default=[5000, 10000, 20000, 40000])
    p.add_argument("--density", type=float, default=1e-3)
    p.add_argument("--kind", default="uniform", choices=("uniform", "link-graph"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=None, help="default: fresh")
    p.add_argument("--check-full-max", type=int, default=10000)
    p.add_argument("--check-rows", type=int, default=256)
    p.add_argument("--scipy-full-max", type=int, default=10000)
    p.add_argument("--scipy-rows", type=int, default=500)
    p.add_argument("--no-fw", action="store_true", help="skip our GPU FW")
    p.add_argument("--no-cpu", action="store_true", help="skip our CPU BFS")
    p.add_argument("--sweep", action="store_true", help="time tile shapes of the GPU BFS kernel instead")
    args = p.parse_args(argv)

    import scipy.sparse as sp
    import torch
    from scipy.sparse.csgraph import shortest_path

    if not torch.cuda.is_available():
        print("no CUDA device: this benchmark needs a GPU", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(__file__)).stdout.strip()
    print(f"# {torch.cuda.get_device_name(0)}, {os.cpu_count()} CPU cores, "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit or '?'}, "
          f"kind={args.kind}, density={args.density:g}, seed={seed}")
    gpu_bfs(random_graph(300, 0.02, weights=None, seed=0))  # compile the kernels

    if args.sweep:
        return sweep(args, seed)

    rng = np.random.default_rng(seed)
    header = (f"{'n':>6} {'edges':>9} {'diam':>4} {'BFS gpu s':>10} {'(kernels)':>10} {'FW gpu s':>9} "
              f"{'BFS cpu s':>10} {'scipy s':>10} {'FW/BFS':>7} {'scipy/BFS':>10}")
    print(header)
    print("-" * len(header))
    for n in args.n:
        e = random_graph(n, args.density, weights=None, seed=seed + n, kind=args.kind)
        g = apsp.as_graph(e)
        a = sp.csr_matrix((np.ones(e.m), (e.src, e.dst)), shape=(n, n))
        t_bfs, res = cuda_time(lambda: gpu_bfs(g), args.repeat)
        rows = np.arange(n) if n <= args.check_full_max else np.sort(
            rng.choice(n, size=min(args.check_rows, n), replace=False))
        check_against_scipy(res, a, rows)
        kernels = res.timings.get("compute", float("nan"))
        diameter = res.info["diameter"]
        stages = ", ".join(f"{k} {v:.4f}" for k, v in res.timings.items())
        print(f"# n={n}: GPU BFS whole call {t_bfs:.4f} s; stages (s): {stages}", flush=True)
        del res

        t_fw = float("nan")
        if not args.no_fw:
            try:
                t_fw, fw = cuda_time(lambda: apsp.shortest_paths(g, method="fw", backend="gpu"),
                                     max(1, args.repeat // 2))
                check_against_scipy(fw, a, rows[: min(len(rows), 64)])
                del fw
            except (apsp.BackendUnavailableError, ImportError, AttributeError) as exc:
                print(f"# GPU FW skipped: {exc}", file=sys.stderr)
                args.no_fw = True
        torch.cuda.empty_cache()

        t_cpu = float("nan")
        if not args.no_cpu:
            t_cpu, _ = wall_time(lambda: apsp.shortest_paths(g, method="bfs", backend="cpu"), 1)

        if n <= args.scipy_full_max:
            t_scipy, _ = wall_time(lambda: shortest_path(a, unweighted=True), 1)
            mark = " "
        else:
            some = np.sort(rng.choice(n, size=min(args.scipy_rows, n), replace=False))
            t_part, _ = wall_time(lambda: shortest_path(a, unweighted=True, indices=some), 1)
            t_scipy, mark = t_part * n / len(some), "*"
        print(f"{n:>6} {e.m:>9} {diameter:>4} {t_bfs:>10.4f} {kernels:>10.4f} "
              f"{t_fw:>9.3f} {t_cpu:>10.3f} {t_scipy:>9.2f}{mark} {t_fw / t_bfs:>6.1f}x "
              f"{t_scipy / t_bfs:>9.0f}x", flush=True)
    print("# times: median of warm runs, whole call (graph on host -> numpy distances); (kernels) = "
          "GPU BFS level kernels only; * scipy timed on --scipy-rows sources and scaled to n")
    return 0


def sweep(args, seed) -> int:
    import torch

    n = args.n[-1]
    g = apsp.as_graph(random_graph(n, args.density, weights=None, seed=seed + n, kind=args.kind))
    print(f"{'block_v':>7} {'block_w':>7} {'warps':>5} {'BFS gpu s':>10} {'(kernels)':>10}")
    for block_v in (32, 64, 128, 256):
        for block_w in (1, 2, 4, 8, 16):
            for warps in (4, 8):
                if block_v * block_w * 32 > 1 << 17:
                    continue
                opts = dict(block_vertices=block_v, block_words=block_w, num_warps=warps)
                try:
                    t, res = cuda_time(lambda: gpu_bfs(g, **opts), args.repeat)
                except Exception as exc:  # a shape that does not compile: say so, keep going
                    print(f"{block_v:>7} {block_w:>7} {warps:>5} failed: {type(exc).__name__}: {exc}")
                    continue
                print(f"{block_v:>7} {block_w:>7} {warps:>5} {t:>10.4f} "
                      f"{res.timings.get('compute', float('nan')):>10.4f}", flush=True)
                del res
                torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
