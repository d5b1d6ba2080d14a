"""Out-of-core Floyd-Warshall on the CPU: a matrix file streamed through a RAM budget, against in-core.

    python benchmarks/outofcore_cpu.py                      # n = 2048, 4096; budget = 1/8 of the matrix
    python benchmarks/outofcore_cpu.py --sizes 8192 --fraction 0.05 --checkpoint-every 0

Every out-of-core answer is checked against the in-core one (identical).
Speed = n^3 / compute seconds. With ``--checkpoint-every S`` the out-of-core
runs also save checkpoints (S = 0: after every round) and report their cost.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apsp import shortest_paths  # noqa: E402
from apsp.graph import EdgeList, Graph  # noqa: E402
from apsp.sizes import format_size, matrix_bytes  # noqa: E402


def random_graph(n: int, degree: int, seed: int) -> Graph:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, n * degree), rng.integers(0, n, n * degree)
    keep = src != dst
    return Graph.from_edges(EdgeList(n, src[keep], dst[keep], rng.integers(1, 101, int(keep.sum()))))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="2048,4096")
    p.add_argument("--fraction", type=float, default=0.125, help="RAM budget as a fraction of the matrix")
    p.add_argument("--dtype", default="int32")
    p.add_argument("--checkpoint-every", type=float, default=None)
    p.add_argument("--seed", type=int, default=int(time.time()))
    args = p.parse_args(argv)
    print(f"{os.cpu_count()} cores, seed {args.seed}", flush=True)
    shortest_paths(random_graph(300, 8, 1), method="fw", backend="cpu", out_of_core=True,
                   host_memory="200KB")  # compile the kernels first
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        g = random_graph(n, 16, args.seed + n)
        t0 = time.perf_counter()
        want = shortest_paths(g, method="fw", backend="cpu", dtype=args.dtype)
        rows.append((n, "in-core", want.timings["compute"], time.perf_counter() - t0, ""))
        budget = int(matrix_bytes(n, args.dtype) * args.fraction)
        extra = {}
        scratch = tempfile.mkdtemp()
        if args.checkpoint_every is not None:
            extra = dict(checkpoint=os.path.join(scratch, "b.ckpt"), checkpoint_every=args.checkpoint_every)
        t0 = time.perf_counter()
        r = shortest_paths(g, method="fw", backend="cpu", dtype=args.dtype, out_of_core=True,
                           host_memory=budget, scratch_dir=scratch, **extra)
        total = time.perf_counter() - t0
        if not np.array_equal(r.distances, want.distances):
            raise SystemExit(f"n={n}: out-of-core result differs from in-core")
        plan = (f"B={r.info['ooc_block']} rows={r.info['ooc_rows']} budget {format_size(budget)}"
                + (f", {r.info['checkpoints_saved']} checkpoints" if extra else ""))
        rows.append((n, "out-of-core (file)", r.timings["compute"], total, plan))
    print(f"\n{'n':>6} {'mode':<20} {'compute s':>10} {'total s':>9} {'Gupd/s':>7}  plan")
    for n, mode, comp, total, plan in rows:
        print(f"{n:>6} {mode:<20} {comp:>10.2f} {total:>9.2f} {n ** 3 / comp / 1e9:>7.2f}  {plan}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
