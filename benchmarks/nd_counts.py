"""Min-plus work of nested-dissection Floyd-Warshall, counted from the ordering (no solve).

For grids (and k-nearest-neighbour graphs) prints the dissection's layout size, tree nodes,
rounds, updates (per round |reach|^2 x tile) and their share of dense n^3, for a sweep of
leaf sizes. ``python benchmarks/nd_counts.py --side 200 350 --tile 128``
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nd_graphs import grid, knn  # noqa: E402

from apsp.dissection import dissect  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", type=int, nargs="*", default=[200, 350], help="grid sides (n = side^2)")
    ap.add_argument("--knn", type=int, nargs="*", default=[], help="k-NN graph sizes n (k = 6)")
    ap.add_argument("--tile", type=int, default=128)
    ap.add_argument("--pad", type=int, nargs="*", default=[None],
                    help="pad each node to a multiple of this (default: the tile)")
    ap.add_argument("--leaf", type=int, nargs="*", default=[1000, 2000, 3000, 4000, 6000])
    args = ap.parse_args(argv)
    graphs = [(f"grid {s}x{s}", lambda s=s: grid(s)) for s in args.side]
    graphs += [(f"knn n={n}", lambda n=n: knn(n)) for n in args.knn]
    print(f"{'graph':>16} {'leaf':>6} {'pad':>4} {'layout':>8} {'nodes':>6} {'rounds':>6} {'updates':>10} {'of n^3':>7} "
          f"{'order s':>7}")
    for name, make in graphs:
        a = make()
        n = a.shape[0]
        for leaf, pad in [(leaf, pad) for leaf in args.leaf for pad in args.pad]:
            t0 = time.perf_counter()
            nd = dissect(a, leaf_size=leaf, tile=args.tile, pad=pad)
            t1 = time.perf_counter()
            rounds = sum(1 for _ in nd.rounds())
            up = nd.updates()
            print(f"{name:>16} {leaf:>6} {pad or args.tile:>4} {nd.size:>8} {nd.nodes:>6} {rounds:>6} {up:>10.3g} "
                  f"{100 * up / n ** 3:>6.2f}% {t1 - t0:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
