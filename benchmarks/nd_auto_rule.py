"""Measure the work rates behind ``method="auto"``: dense FW, nested-dissection FW, Dijkstra (CPU).

For each graph it times the methods (best of ``--repeat``, after a warm-up) and
divides each one's work estimate by its time:

* dense FW: n^3 updates;
* nd-fw: the updates its schedule does (`Dissection.updates`), ordering timed apart;
* dijkstra: n (m + n) log2 n.

It then prints which method the rule in `apsp.plan.choose_method` picks and which was fastest.
``python benchmarks/nd_auto_rule.py [--repeat 2]``
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from nd_graphs import _symmetric, grid, knn  # noqa: E402

import apsp  # noqa: E402
from apsp.dissection import default_plan  # noqa: E402
from apsp.plan import choose_method
from apsp.costs import estimate  # noqa: E402
from apsp.graph import Graph  # noqa: E402


def random_sparse(n, m, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, n, m)
    v = rng.integers(0, n, m)
    return _symmetric(n, u, v, rng.integers(1, 101, m).astype(np.int32))


def _time(fn, repeat):
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    graphs = [("grid 50x50", grid(50)), ("grid 80x80", grid(80)), ("knn 4000", knn(4000)),
              ("random n=3000 m=6000", random_sparse(3000, 3000)),
              ("random n=3000 m=30000", random_sparse(3000, 15000)),
              ("random n=2000 m=200000", random_sparse(2000, 100000))]
    for m in ("fw", "nd-fw", "dijkstra"):  # warm-up: Numba caches, allocator
        for side in (20, 60):
            apsp.shortest_paths(grid(side), method=m, backend="cpu", progress=False)
    print(f"{'graph':>24} {'method':>9} {'work':>9} {'seconds':>8} {'rate':>9} {'estimate s':>10}")
    for name, a in graphs:
        g = Graph.from_sparse(a)
        n, m = g.n, g.nnz
        t0 = time.perf_counter()
        nd = default_plan(g, "cpu")
        t_order = time.perf_counter() - t0
        work = {"fw": float(n) ** 3, "nd-fw": float(nd.updates()), "dijkstra": n * (m + n) * np.log2(n)}
        best = None
        for method in ("fw", "nd-fw", "dijkstra"):
            t = _time(lambda: apsp.shortest_paths(g, method=method, backend="cpu", progress=False), args.repeat)
            est = estimate(g, method, "cpu")
            print(f"{name:>24} {method:>9} {work[method]:>9.3g} {t:>8.3f} {work[method] / t:>9.3g} {est:>10.3f}",
                  flush=True)
            best = (t, method) if best is None or t < best[0] else best
        print(f"{name:>24} ordering {t_order:.3f} s; fastest {best[1]}, auto picks "
              f"{choose_method(g, 'auto', 'cpu')}", flush=True)


if __name__ == "__main__":
    main()
