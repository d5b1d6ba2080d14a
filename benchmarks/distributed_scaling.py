"""Strong and weak scaling of the MPI-distributed blocked Floyd-Warshall, with the time split.

Two sub-commands:

``run`` - one configuration; launch it under MPI. Every rank generates its own
tiles of the same random graph (a hash of (i, j), so the graph does not depend
on the rank count and no rank reads or holds n^2), then all ranks solve and
optionally write the result in parallel to one ``.npy``. Rank 0 prints one JSON
line: wall time, rate, and every rank's seconds per stage (compute, comm,
copy, write)::

    mpiexec -n 4 python benchmarks/distributed_scaling.py run --n 2048 --backend cpu

``sweep`` - launches ``run`` for each rank count and prints the strong-scaling
table (fixed n) and the weak-scaling table (n grown by sqrt(2) per doubling of
ranks, so memory per rank stays constant)::

    python benchmarks/distributed_scaling.py sweep --ranks 1 2 4 --strong-n 2048 --weak-n 1448
    python benchmarks/distributed_scaling.py sweep --ranks 1 2 --strong-n 65536 --weak-n 46341 \\
        --backend gpu --dtype int32 --mpiexec "mpirun -n {ranks}"

Efficiencies: strong ``T1 / (P * TP)``; weak ``(nP / n1)^3 * T1 / (P * TP)``
(useful work per rank-second, relative to one rank).

On GPUs ``run`` times twice: once without waits (the wall time reported) and,
with ``--profile``, once waiting after each kernel group so the split is exact.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def local_random_graph(layout, coords, dtype, density=0.1, max_weight=100, seed=0, chunk_rows=256):
    """This rank's tiles of the start matrix of a random directed graph.

    Edge (i, j), i != j, exists with probability ``density`` and weighs
    1..max_weight, both from a hash of (seed, i, j): any rank count sees the
    same graph.
    """
    from apsp import exactness

    dt = np.dtype(dtype)
    rows = layout.global_indices(coords[0], 0)
    cols = layout.global_indices(coords[1], 1).astype(np.uint64)
    out = np.empty((len(rows), len(cols)), dtype=dt)
    inf = exactness.inf_value(dt)
    threshold = np.uint64(int(density * 2 ** 32))
    salt = np.uint64(seed) * np.uint64(0xD1B54A32D192ED03)
    n = np.uint64(layout.n)

    def fill(r0):
        r = rows[r0:r0 + chunk_rows].astype(np.uint64)
        with np.errstate(over="ignore"):
            h = _splitmix64(r[:, None] * n + cols[None, :] + salt)
        edge = (h & np.uint64(0xFFFFFFFF)) < threshold
        weight = (np.uint64(1) + (h >> np.uint64(32)) % np.uint64(max_weight)).astype(dt)
        out[r0:r0 + chunk_rows] = np.where(edge, weight, inf)

    # numpy releases the GIL in these loops: the rank's share of the cores hashes in parallel
    # (n = 65536 is 4.3e9 hashes, minutes on one core)
    ranks_here = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE", os.environ.get("MPI_LOCALNRANKS", 1)))
    workers = max(1, (os.cpu_count() or 1) // max(1, ranks_here))
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(fill, range(0, len(rows), chunk_rows)))
    di, dj, _ = layout.local_diagonal(coords)
    out[di, dj] = 0
    return out


def cmd_run(args) -> int:
    from mpi4py import MPI

    from apsp.distributed.api import _resolve_cuda_aware
    from apsp import exactness
    from apsp.distributed.fw import DistributedFW, solve_layout
    from apsp.distributed.grid import ProcessGrid
    from apsp.distributed.layout import BlockCyclic
    from apsp.distributed.local import make_engine
    from apsp.distributed.profile import StageTimer

    comm = MPI.COMM_WORLD
    grid = ProcessGrid.create(comm)
    from apsp.engine import DEFAULT_BLOCK

    block = args.block or DEFAULT_BLOCK[f"distributed-{args.backend}"]
    layout = BlockCyclic(args.n, block, grid.shape)
    aware = _resolve_cuda_aware(args.cuda_aware) if args.backend == "gpu" else False
    engine = make_engine(args.backend, grid, aware, np.dtype(args.dtype), False, threads=args.threads)
    host = local_random_graph(layout, grid.coords, args.dtype, args.density, seed=args.seed)
    rows, cols = host.shape
    padded = solve_layout(layout, engine)  # as the API solves: GPU engines on whole tiles

    def one_solve(profile: bool):
        timer = StageTimer(sync=engine.sync if profile else None)
        with timer("copy", sync=True):
            if not engine.pads_tiles:
                d = engine.from_host(host.copy())
            else:
                d = engine.full(padded.local_shape(grid.coords), exactness.inf_value(host.dtype))
                engine.copy(d[:rows, :cols], host)
        engine.sync()
        comm.Barrier()
        t0 = time.perf_counter()
        DistributedFW(grid, padded, engine, d, timer, lookahead=not args.no_lookahead).run()
        engine.sync()
        comm.Barrier()
        wall = time.perf_counter() - t0
        d = d[:rows, :cols]
        if args.write:
            from apsp.distributed.output import write_npy

            with timer("copy", sync=True):
                result = engine.to_host(d)
            path = os.path.join(args.write, f"bench-{args.n}-{comm.size}.npy")
            with timer("write"):
                write_npy(grid, layout, result, path)
            comm.Barrier()
            if comm.rank == 0:
                os.remove(path)
        return wall, timer.summary(), d

    warm = 3 * block  # compile every kernel (Numba/Triton) outside the timed solve
    if args.n > warm:
        small = BlockCyclic(warm, min(block, warm), grid.shape)
        tiny = local_random_graph(small, grid.coords, args.dtype, args.density)
        DistributedFW(grid, small, engine, engine.from_host(tiny), StageTimer()).run()
    wall, summary, d = one_solve(profile=False)
    if args.profile and engine.kind == "gpu":
        _, summary, d = one_solve(profile=True)
    rank_timings = comm.gather(summary, root=0)
    checked = None
    if args.check:
        from apsp.distributed.output import gather_to_root

        full = gather_to_root(grid, layout, engine.to_host(d))
        if comm.rank == 0:
            from apsp.cpu.blocked import fw_inplace

            whole = BlockCyclic(args.n, block, (1, 1))
            ref = local_random_graph(whole, (0, 0), args.dtype, args.density, seed=args.seed)
            fw_inplace(ref, block=block, progress=False)
            checked = bool(np.array_equal(full, ref))
    if comm.rank == 0:
        stages = sorted({k for row in rank_timings for k in row})
        print(json.dumps({
            "ranks": comm.size, "grid": list(grid.shape), "n": args.n, "block": block,
            "backend": args.backend, "dtype": np.dtype(args.dtype).name, "lookahead": not args.no_lookahead,
            "threads_per_rank": getattr(engine, "threads", None), "device": str(engine.device),
            "cuda_aware": engine.cuda_aware, "wall_s": wall, "gops": args.n ** 3 / wall / 1e9,
            "max_s": {s: max(r.get(s, 0.0) for r in rank_timings) for s in stages},
            "rank_timings_s": rank_timings, "check": checked}), flush=True)
    grid.free()
    return 0 if checked in (None, True) else 1


def _launch(args, ranks: int, n: int) -> dict:
    template = args.mpiexec if "{ranks}" in args.mpiexec else args.mpiexec + " -n {ranks}"
    cmd = shlex.split(template.format(ranks=ranks)) + [
        sys.executable, os.path.abspath(__file__), "run", "--n", str(n), "--backend", args.backend,
        "--dtype", args.dtype, "--density", str(args.density), "--seed", str(args.seed),
        "--cuda-aware", args.cuda_aware]
    for flag, value in (("--block", args.block), ("--threads", args.threads), ("--write", args.write)):
        if value:
            cmd += [flag, str(value)]
    if args.profile:
        cmd.append("--profile")
    if args.no_lookahead:
        cmd.append("--no-lookahead")
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"run failed ({' '.join(cmd)}):\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _split_cols(row) -> str:
    m = row["max_s"]
    return "".join(f"{m.get(s, 0.0):>9.3f}" for s in ("compute", "comm", "copy", "write"))


def cmd_sweep(args) -> int:
    results = {"strong": [], "weak": []}
    head = f"{'ranks':>5} {'grid':>5} {'n':>7} {'wall_s':>9} {'GOPS':>8} {'eff':>6}" \
           f"{'compute':>9}{'comm':>9}{'copy':>9}{'write':>9}"
    if args.strong_n:
        print(f"strong scaling, n = {args.strong_n} ({args.backend}, {args.dtype}); "
              "time split = max over ranks, seconds")
        print(head)
        base = None
        for p in args.ranks:
            row = _launch(args, p, args.strong_n)
            base = base or row
            eff = base["wall_s"] * base["ranks"] / (p * row["wall_s"])
            row["efficiency"] = eff
            results["strong"].append(row)
            print(f"{p:>5} {row['grid'][0]}x{row['grid'][1]:<3} {row['n']:>7} {row['wall_s']:>9.3f} "
                  f"{row['gops']:>8.2f} {eff:>6.2f}{_split_cols(row)}", flush=True)
    if args.weak_n:
        print(f"weak scaling, n = {args.weak_n} * sqrt(ranks) ({args.backend}, {args.dtype})")
        print(head)
        base = None
        for p in args.ranks:
            n = int(round(args.weak_n * math.sqrt(p / args.ranks[0])))
            row = _launch(args, p, n)
            base = base or row
            eff = (row["n"] / base["n"]) ** 3 * base["wall_s"] * base["ranks"] / (p * row["wall_s"])
            row["efficiency"] = eff
            results["weak"].append(row)
            print(f"{p:>5} {row['grid'][0]}x{row['grid'][1]:<3} {row['n']:>7} {row['wall_s']:>9.3f} "
                  f"{row['gops']:>8.2f} {eff:>6.2f}{_split_cols(row)}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "sweep"):
        p = sub.add_parser(name)
        p.add_argument("--backend", default="cpu", choices=("cpu", "gpu"))
        p.add_argument("--dtype", default="int32")
        p.add_argument("--block", type=int, default=None, help="tile edge (default 128 CPU, 256 GPU)")
        p.add_argument("--density", type=float, default=0.1)
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--threads", type=int, default=None,
                       help="Numba threads per CPU rank (run default: cores / ranks on the node)")
        p.add_argument("--cuda-aware", default="auto", choices=("auto", "yes", "no"))
        p.add_argument("--write", default=None, metavar="DIR",
                       help="also write the result as one .npy in DIR (parallel MPI-IO), timed as 'write'")
        p.add_argument("--profile", action="store_true", help="GPU: a second, synchronised run for the split")
        p.add_argument("--no-lookahead", action="store_true",
                       help="run the rounds one after the other (to measure what look-ahead gains)")
        if name == "run":
            p.add_argument("--n", type=int, required=True)
            p.add_argument("--check", action="store_true", help="compare with the serial solve (small n)")
        else:
            p.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
            p.add_argument("--strong-n", type=int, default=None)
            p.add_argument("--weak-n", type=int, default=None, help="n at the first rank count")
            p.add_argument("--mpiexec", default="mpiexec", help="launcher; '{ranks}' is replaced, "
                           "else '-n RANKS' is appended")
            p.add_argument("--json", default=None, help="save every result here")
    args = parser.parse_args(argv)
    return cmd_run(args) if args.command == "run" else cmd_sweep(args)


if __name__ == "__main__":
    sys.exit(main())
