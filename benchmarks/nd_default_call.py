"""The default call on large sparse graphs: ``apsp.shortest_paths(g)`` as a user makes it.

For a 350 x 350 grid and a k-NN graph with n = 122,500 (weights 1..100): the whole call's wall time,
the method, dtypes tried and skipped, the stages, GPU memory free before and after, and 64 sampled
rows of the result against scipy's Dijkstra (exact). Each graph runs twice in one process (the
first run compiles). ``--ordering levels`` measures the dissection that needs no pymetis;
``--stream --gpu-memory 20GB`` the layout matrix in host memory streamed through that much of the GPU.

``python benchmarks/nd_default_call.py --out nd_default.json``
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from scipy.sparse.csgraph import dijkstra  # noqa: E402

from nd_graphs import grid, knn  # noqa: E402

import apsp  # noqa: E402
from apsp import dissection  # noqa: E402


def gpu_free() -> int:
    from apsp.gpu import device_memory

    return device_memory()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", type=int, default=350)
    ap.add_argument("--knn", type=int, default=122_500)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--ordering", choices=["metis", "levels"], default=None)
    ap.add_argument("--stream", action="store_true")
    ap.add_argument("--gpu-memory")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.ordering == "levels":
        dissection._pymetis = lambda: None
    rows = []
    options = dict(out_of_core=True, method="nd-fw") if args.stream else {}
    if args.gpu_memory:
        options["gpu_memory"] = args.gpu_memory
    graphs = [(f"grid {args.side}x{args.side}", lambda: grid(args.side))]
    graphs += [(f"knn n={args.knn}", lambda: knn(args.knn))] if args.knn else []
    for name, make in graphs:
        csr = make()
        for run in range(1, args.runs + 1):
            free0 = gpu_free()
            t0 = time.perf_counter()
            r = apsp.shortest_paths(csr, **options)
            wall = time.perf_counter() - t0
            rng = np.random.default_rng(run)
            src = rng.choice(csr.shape[0], 64, replace=False)
            ref = dijkstra(csr, indices=src)
            got = r.distances[src]
            ok = bool(np.array_equal(np.where(np.isfinite(ref), ref, -1),
                                     np.where(got == np.iinfo(got.dtype).max, -1, got).astype(np.float64)))
            row = dict(graph=name, run=run, n=int(csr.shape[0]), wall_s=round(wall, 3), method=r.method,
                       backend=r.backend, dtype=str(r.dtype), rows_equal_dijkstra=ok,
                       timings={k: round(v, 3) for k, v in r.timings.items()},
                       dtype_tried=r.info.get("dtype_tried"), dtype_skipped=r.info.get("dtype_skipped"),
                       gathered=r.info.get("gathered_nodes"), batched=r.info.get("batched_nodes"),
                       streamed=r.info.get("streamed_nodes"), prefaulted=r.info.get("result_prefaulted"),
                       layout=r.info.get("layout"), gpu_free_before=free0)
            del r, got
            row["gpu_free_after"] = gpu_free()
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
