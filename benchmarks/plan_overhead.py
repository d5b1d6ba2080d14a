"""Whole calls of `apsp.shortest_paths` on the GPU, to compare two trees of the package on one card.

Dense FW at n = 32768 in int32 (a random graph, 16 edges per vertex: the work is n^3 whatever the
edges) and nd-fw on the 350 x 350 grid (weights 1..100), each solved ``--runs`` times after a
warm-up, in one process. Prints one JSON line per graph: the medians of the compute stage and of
the whole call, every run's figures, and a check of 32 sampled rows against scipy's Dijkstra.
Which tree runs is whichever ``apsp`` is first on ``sys.path`` (``PYTHONPATH=old/tree``), so the
same script times the tree before and after a change in one device session.

``python benchmarks/plan_overhead.py --runs 5``
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.sparse.csgraph import dijkstra  # noqa: E402

from nd_graphs import grid  # noqa: E402

import apsp  # noqa: E402


def random_graph(n: int, degree: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    m = n * degree
    return sp.csr_matrix((rng.integers(1, 101, m).astype(np.int32),
                          (rng.integers(0, n, m), rng.integers(0, n, m))), shape=(n, n))


def rows_equal(csr, dist) -> bool:
    src = np.random.default_rng(1).choice(csr.shape[0], 32, replace=False)
    ref = dijkstra(csr, indices=src)
    got = dist[src].astype(np.float64)
    got[dist[src] == np.iinfo(dist.dtype).max] = np.inf
    return bool(np.array_equal(ref, got))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=32768)
    ap.add_argument("--side", type=int, default=350)
    args = ap.parse_args()
    cases = [("fw int32 n=%d" % args.n, lambda: random_graph(args.n, 16), dict(method="fw", dtype="int32")),
             ("nd-fw grid %dx%d" % (args.side, args.side), lambda: grid(args.side), dict(method="nd-fw"))]
    for name, make, options in cases:
        csr = make()
        runs = []
        for run in range(args.runs + 1):  # the first run warms up (compiles, caches the ordering)
            t0 = time.perf_counter()
            r = apsp.shortest_paths(csr, backend="gpu", **options)
            wall = time.perf_counter() - t0
            if run == 0:
                ok = rows_equal(csr, r.distances)
            else:
                runs.append(dict(wall_s=wall, compute_s=r.timings.get("compute"), dtype=str(r.dtype)))
            del r
        print(json.dumps(dict(case=name, tree=os.path.dirname(apsp.__file__), rows_equal_dijkstra=ok,
                              compute_median_s=statistics.median(x["compute_s"] for x in runs),
                              wall_median_s=statistics.median(x["wall_s"] for x in runs), runs=runs)),
              flush=True)


if __name__ == "__main__":
    main()
