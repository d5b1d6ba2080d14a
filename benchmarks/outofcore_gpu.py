"""Out-of-core GPU Floyd-Warshall against in-core on the same card (issue 9).

Run on a CUDA machine from the repository root (about 3 minutes on an H200):

    python benchmarks/outofcore_gpu.py                       # check, then time n = 32768 and 65536
    python benchmarks/outofcore_gpu.py --sizes 16384 --budget 2GB --out ooc.json
    TRITON_INTERPRET=1 python benchmarks/outofcore_gpu.py --interpreter   # smoke test without a GPU

1. check: on fresh random graphs (negative weights too, n not a multiple of
   128) the out-of-core solver under small budgets -- automatic plan, pivot
   panels straddling stripes, staged copies, a host matrix in a file -- must
   equal the in-core GPU solver exactly;
2. time: in-core, then out-of-core with ``gpu_memory=BUDGET`` (forced even
   where the matrix would fit), through `apsp.shortest_paths`; the two answers
   must be identical. Speed = n^3 / compute seconds; the ratio column is
   out-of-core speed / in-core speed (the issue's target: >= 60% at n = 65536,
   int32, 8 GB).

The in-core run at n = 65536 needs about 21 GiB of GPU memory and both runs
about 40 GiB of host memory.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apsp import shortest_paths  # noqa: E402
from apsp.graph import EdgeList, Graph  # noqa: E402
from apsp.sizes import format_size, parse_size  # noqa: E402


def log(*a):
    print(*a, flush=True)


CUDA = torch.cuda.is_available()


def sync():
    if CUDA:
        torch.cuda.synchronize()


def fresh_peak():
    if CUDA:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()  # cached blocks count as used in the planner's free-memory query
        torch.cuda.reset_peak_memory_stats()


def peak_bytes() -> int:
    return torch.cuda.max_memory_allocated() if CUDA else 0


def random_graph(n: int, degree: int, wmax: int, seed: int, negative: bool = False) -> Graph:
    """n vertices, about n*degree random edges with weights 1..wmax (w + p[u] - p[v] if negative)."""
    rng = np.random.default_rng(seed)
    m = n * degree
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    w = rng.integers(1, wmax + 1, src.size)
    if negative:
        p = rng.integers(0, wmax, n)
        w = w + p[src] - p[dst]
    return Graph.from_edges(EdgeList(n, src, dst, w))


def equal_chunked(a: np.ndarray, b: np.ndarray, rows: int = 4096) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return all(np.array_equal(a[i:i + rows], b[i:i + rows]) for i in range(0, a.shape[0], rows))


def warm_up(dtype: str) -> None:
    """Compile every kernel variant the timed runs use, so no run pays for compilation."""
    from apsp.gpu import minplus

    g = random_graph(1024, 8, 100, seed=1)
    shortest_paths(g, method="fw", backend="gpu", dtype=dtype)
    shortest_paths(g, method="fw", backend="gpu", dtype=dtype, out_of_core=True, gpu_memory="6MB")
    # in core past n = 46340 the kernels take 64-bit offsets (another variant): compile it too
    real = minplus._max_offset
    minplus._max_offset = lambda t: 2 ** 31
    try:
        shortest_paths(g, method="fw", backend="gpu", dtype=dtype)
    finally:
        minplus._max_offset = real
    sync()


CHECK_CASES = [  # n, options
    (3000, dict(gpu_memory="16MB")),                                   # planner's choice
    (3000, dict(gpu_memory="64MB", block_size=256, ooc_rows=384)),      # pivots straddle stripes
    (4096, dict(gpu_memory="128MB", block_size=512, ooc_rows=1024, pin_host=False)),  # staged copies
    (2500, dict(gpu_memory="32MB", host_memory="8MB")),                # host matrix in a file
]
#: --interpreter: the same cases scaled down for Triton's CPU interpreter (a smoke test of this script)
INTERPRETER_CASES = [
    (70, dict(gpu_memory="40KB")),
    (70, dict(gpu_memory="64KB", block_size=16, ooc_rows=24)),
    (64, dict(gpu_memory="64KB", block_size=32, ooc_rows=16, pin_host=False)),
    (50, dict(gpu_memory="32KB", host_memory="4KB")),
]


def stage_check(dtype: str, seed: int, cases) -> list[dict]:
    out = []
    for k, (n, opts) in enumerate(cases):
        for negative in (False, True):
            g = random_graph(n, 16, 100, seed=seed + 2 * k + negative, negative=negative)
            want = shortest_paths(g, method="fw", backend="gpu", dtype=dtype).distances
            t0 = time.perf_counter()
            r = shortest_paths(g, method="fw", backend="gpu", dtype=dtype, out_of_core=True, **opts)
            ok = equal_chunked(r.distances, want)
            row = {"n": n, "negative": negative, "options": opts, "equal": ok,
                   "seconds": round(time.perf_counter() - t0, 3),
                   **{k2: r.info.get(k2) for k2 in ("ooc_block", "ooc_rows", "ooc_buffers", "host_copies",
                                                    "matrix_on_disk")}}
            log(f"check n={n:5d} negative={negative!s:5} {opts}: {'equal' if ok else 'DIFFERENT'} "
                f"(B={row['ooc_block']}, rows={row['ooc_rows']}, {row['host_copies']})")
            out.append(row)
            if not ok:
                raise SystemExit("out-of-core result differs from in-core")
    return out


def timed(g: Graph, dtype: str, **opts) -> tuple[dict, np.ndarray]:
    fresh_peak()
    t0 = time.perf_counter()
    r = shortest_paths(g, method="fw", backend="gpu", dtype=dtype, **opts)
    total = time.perf_counter() - t0
    row = {"total_s": total, "compute_s": r.timings["compute"], "gpu_peak_bytes": peak_bytes(),
           "timings": {k: round(v, 4) for k, v in r.timings.items()}}
    for k in ("ooc_block", "ooc_rows", "ooc_buffers", "ooc_stripes", "host_copies"):
        if k in r.info:
            row[k] = r.info[k]
    return row, r.distances


def stage_time(sizes, dtype: str, budget: str, seed: int) -> list[dict]:
    rows = []
    for n in sizes:
        g = random_graph(n, 16, 100, seed=seed + n)
        log(f"n={n}: in core ...")
        incore, want = timed(g, dtype)
        log(f"n={n}: out of core, gpu_memory={budget} ...")
        ooc, got = timed(g, dtype, gpu_memory=budget, out_of_core=True)
        same = equal_chunked(got, want)
        del got, want
        for mode, row in (("in-core", incore), (f"out-of-core {budget}", ooc)):
            row.update(n=n, dtype=dtype, mode=mode, updates_per_s=n ** 3 / row["compute_s"])
        ooc["speed_ratio_compute"] = incore["compute_s"] / ooc["compute_s"]
        ooc["speed_ratio_total"] = incore["total_s"] / ooc["total_s"]
        ooc["equal_to_in_core"] = same
        rows += [incore, ooc]
        if not same:
            raise SystemExit(f"n={n}: out-of-core result differs from in-core")
        if CUDA and ooc["gpu_peak_bytes"] > parse_size(budget):
            log(f"WARNING: out-of-core peak {format_size(ooc['gpu_peak_bytes'])} exceeds the budget {budget}")
    return rows


def print_table(rows: list[dict]) -> None:
    log("")
    log(f"{'n':>6} {'mode':<20} {'compute s':>10} {'total s':>9} {'Gupd/s':>8} {'GPU peak':>10} "
        f"{'vs in-core':>11}  plan")
    for r in rows:
        ratio = (f"{r['speed_ratio_compute']:.0%} / {r['speed_ratio_total']:.0%}"
                 if "speed_ratio_compute" in r else "")
        plan = (f"B={r['ooc_block']} rows={r['ooc_rows']} x{r['ooc_buffers']} {r.get('host_copies', '')}"
                if "ooc_block" in r else "")
        log(f"{r['n']:>6} {r['mode']:<20} {r['compute_s']:>10.2f} {r['total_s']:>9.2f} "
            f"{r['updates_per_s'] / 1e9:>8.0f} {format_size(r['gpu_peak_bytes']):>10} {ratio:>11}  {plan}")
    log("(vs in-core: out-of-core speed / in-core speed, compute stage / end to end)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="32768,65536")
    p.add_argument("--budget", default="8GB", help="GPU memory for the out-of-core runs")
    p.add_argument("--dtype", default="int32")
    p.add_argument("--seed", type=int, default=int(time.time()))
    p.add_argument("--skip-check", action="store_true")
    p.add_argument("--out", default=None, help="write the results as JSON")
    p.add_argument("--interpreter", action="store_true",
                   help="smoke-test this script on CPU tensors (TRITON_INTERPRET=1, tiny sizes)")
    args = p.parse_args(argv)
    if args.interpreter:
        if CUDA or os.environ.get("TRITON_INTERPRET") != "1":
            raise SystemExit("--interpreter needs TRITON_INTERPRET=1 and no visible GPU")
        if args.sizes == p.get_default("sizes"):
            args.sizes, args.budget = "64,96", "64KB"
    elif not CUDA:
        raise SystemExit("needs a CUDA GPU (or --interpreter with TRITON_INTERPRET=1 for a smoke test)")
    device = torch.cuda.get_device_name(0) if CUDA else "triton-interpreter"
    t_start = time.perf_counter()
    log(f"device: {device}, seed {args.seed}")
    if CUDA:
        warm_up(args.dtype)
    results = {"device": device, "seed": args.seed, "date": time.strftime("%Y-%m-%d")}
    if not args.skip_check:
        results["check"] = stage_check(args.dtype, args.seed, CHECK_CASES if CUDA else INTERPRETER_CASES)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results["time"] = stage_time(sizes, args.dtype, args.budget, args.seed)
    print_table(results["time"])
    log(f"benchmark wall time {time.perf_counter() - t_start:.0f} s")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
