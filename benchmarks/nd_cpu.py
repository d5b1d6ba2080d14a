"""Nested-dissection Floyd-Warshall on the CPU against networkit's parallel APSP and dense FW, same run.

Each method runs ``--repeat`` times after one warm-up on a small grid (Numba and the
memory allocator warmed); the best time is reported. Results are compared
entry by entry with networkit's (and with dense FW's when it runs).

``python benchmarks/nd_cpu.py --side 100 [--no-dense] [--tiles 64 128 256] [--leaves 250 500 1000]``
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from nd_graphs import grid  # noqa: E402

import apsp  # noqa: E402


def _best(fn, repeat):
    """Best wall time of ``fn`` over ``repeat`` runs, and its result. ``fn`` may return
    ``(result, finish)``: then ``finish()`` (untimed) turns it into the result."""
    best, out = None, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    if isinstance(out, tuple) and callable(out[1]):
        out = out[1]()
    return best, out


def networkit_apsp(csr, threads):
    import networkit as nk

    nk.setNumberOfThreads(threads)
    n = csr.shape[0]
    g = nk.Graph(n, weighted=True, directed=False)  # the grid is undirected: each edge once
    coo = csr.tocoo()
    once = coo.row < coo.col
    g.addEdges((coo.data[once].astype(np.float64), (coo.row[once].astype(np.uint64),
                                                    coo.col[once].astype(np.uint64))))

    def run():  # timed: the solve; not timed: networkit's list-of-lists result turned into an array
        a = nk.distance.APSP(g)
        a.run()
        return a, lambda: np.asarray(a.getDistances())

    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--tiles", type=int, nargs="*", default=[128])
    ap.add_argument("--leaves", type=int, nargs="*", default=[500])
    ap.add_argument("--no-dense", action="store_true")
    ap.add_argument("--no-networkit", action="store_true")
    ap.add_argument("--dtype", default=None, help="apsp's dtype (default: its narrow-dtype policy's choice)")
    args = ap.parse_args(argv)
    a = grid(args.side)
    n = a.shape[0]
    print(f"grid {args.side}x{args.side}: n={n}, m={a.nnz}, weights 1..100, {args.threads} threads", flush=True)
    apsp.shortest_paths(grid(20), method="nd-fw", backend="cpu", progress=False)  # warm-up (Numba cache)
    apsp.shortest_paths(grid(20), method="fw", backend="cpu", progress=False)
    times = {}
    ref = None
    if not args.no_networkit:
        t, nk_d = _best(networkit_apsp(a, args.threads), args.repeat)
        times["networkit APSP"] = t
        ref = nk_d
        print(f"networkit APSP: {t:.2f} s", flush=True)
    for tile in args.tiles:
        for leaf in args.leaves:
            t, r = _best(lambda: apsp.shortest_paths(a, method="nd-fw", backend="cpu", block_size=tile,
                                                     leaf_size=leaf, dtype=args.dtype, progress=False), args.repeat)
            same = "" if ref is None else f", equal to networkit: {np.array_equal(r.to_float(), ref)}"
            stages = ", ".join(f"{k} {v:.2f}" for k, v in r.timings.items())
            print(f"nd-fw tile {tile} leaf {leaf}: {t:.2f} s ({r.dtype}; {r.info['updates']:.3g} updates = "
                  f"{100 * r.info['updates'] / n ** 3:.2f}% of n^3; {stages}){same}", flush=True)
            times[f"nd-fw tile {tile} leaf {leaf}"] = t
            if ref is None:
                ref = r.to_float()
    if not args.no_dense:
        t, r = _best(lambda: apsp.shortest_paths(a, method="fw", backend="cpu", dtype=args.dtype,
                                                      progress=False), 1)
        times["dense fw"] = t
        print(f"dense fw: {t:.2f} s ({r.dtype}), equal: {np.array_equal(r.to_float(), ref)}", flush=True)
    best_nd = min(v for k, v in times.items() if k.startswith("nd-fw"))
    for k, v in times.items():
        print(f"  {k:>28}: {v:7.2f} s   nd-fw speed-up {v / best_nd:5.1f}x")


if __name__ == "__main__":
    main()
