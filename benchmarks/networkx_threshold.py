"""Where the apsp networkx backend starts to beat networkx's own code (the `should_run` thresholds).

For each implemented function and n, times networkx's implementation and apsp's through the
dispatcher (``backend="networkx"`` vs ``backend="apsp"``, conversion included, a fresh graph each
call so nothing is cached), on connected random graphs with integer weights 1..100 and about
8 edges per vertex. Prints one Markdown row per (function, n); the smallest n from which apsp is
faster at every larger n measured is the threshold `apsp.networkx_backend.SHOULD_RUN_FROM` records.

    python benchmarks/networkx_threshold.py [--sizes 50 100 200 300 500 1000] [--repeat 3]

``--cold``: apsp's first call in a fresh process instead (imports and kernel loads included: what
a script calling one function once pays), the smallest n from which that beats networkx's own call
is what `apsp.networkx_backend.COLD_FROM` records.
"""
from __future__ import annotations

import argparse
import random
import time

import networkx as nx

from apsp import networkx_backend as nxb

# networkx's pure-Python Floyd-Warshall takes minutes beyond this; apsp has long won there
PURE_PYTHON_LIMIT = 300


def graph(n: int, seed: int) -> nx.Graph:
    rng = random.Random(seed)
    G = nx.connected_watts_strogatz_graph(n, 8, 0.3, seed=seed)
    for u, v in G.edges:
        G[u][v]["weight"] = rng.randint(1, 100)
    return G


def run(name: str, G, backend: str):
    out = getattr(nx, name)(G, backend=backend)
    return dict(out) if name.startswith("all_pairs") else out  # generators run when consumed


def best_time(name: str, n: int, backend: str, repeat: int) -> float:
    best = float("inf")
    for k in range(repeat):
        G = graph(n, k)
        t0 = time.perf_counter()
        run(name, G, backend)
        best = min(best, time.perf_counter() - t0)
    return best


COLD_CALL = r"""
import sys, time
import networkx as nx
sys.path.insert(0, sys.argv[3])
from networkx_threshold import graph, run
nx.config.warnings_to_ignore.add("cache")
G = graph(int(sys.argv[2]), 0)
t0 = time.perf_counter()
run(sys.argv[1], G, "apsp")
print(time.perf_counter() - t0)
"""


def cold_time(name: str, n: int, repeat: int) -> float:
    """apsp's first call in a fresh process (median of ``repeat`` processes)."""
    import statistics
    import subprocess
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    times = [float(subprocess.run([sys.executable, "-c", COLD_CALL, name, str(n), here], check=True,
                                  capture_output=True, text=True).stdout.split()[-1]) for _ in range(repeat)]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 300, 500, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--functions", nargs="+", default=[f for f in nxb.FUNCTIONS
                                                           if f != "all_pairs_shortest_path"])
    parser.add_argument("--cold", action="store_true", help="apsp's first call in a fresh process")
    args = parser.parse_args()
    nx.config.cache_converted_graphs = False
    for name in args.functions:  # compile apsp's kernels and load networkx's code first
        run(name, graph(60, 0), "apsp")
    print("| function | n | networkx ms | apsp ms | apsp speed-up |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in args.functions:
        for n in args.sizes:
            if name in ("floyd_warshall", "floyd_warshall_predecessor_and_distance") and n > PURE_PYTHON_LIMIT:
                continue
            t_nx = best_time(name, n, "networkx", args.repeat)
            t_apsp = cold_time(name, n, args.repeat) if args.cold else best_time(name, n, "apsp", args.repeat)
            print(f"| {name} | {n} | {t_nx * 1e3:.1f} | {t_apsp * 1e3:.1f} | {t_nx / t_apsp:.2f}x |",
                  flush=True)


if __name__ == "__main__":
    main()
