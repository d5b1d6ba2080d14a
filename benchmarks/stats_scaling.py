"""Distance statistics over MPI ranks (`apsp.distributed.distance_stats`): 1 rank against k, one GPU each.

``sweep`` launches ``run`` under the launcher once per rank count and prints, per count, the median
wall time of the statistics call (every rank waits at a barrier before and after it), the speedup
over the first count, the device each rank's reductions ran on (torch's peak allocation per visible
device, read on every rank after the call) and a digest of the results, which must be equal for
every rank count. The graph is stats_bench.py's undirected G(n, m) with unit weights, built from the
seed on every rank.

    python benchmarks/stats_scaling.py sweep --ranks 1 2 --n 1000000 --m 10000000 --backend gpu \
        --mpiexec "mpirun -n {ranks}" --json out.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def devices_used() -> list[int]:
    """The CUDA devices this process allocated on (torch's peak per device), [] without torch/CUDA."""
    if "torch" not in sys.modules:
        return []
    import torch

    if not torch.cuda.is_available():
        return []
    return [d for d in range(torch.cuda.device_count()) if torch.cuda.max_memory_allocated(d) > 0]


def cmd_run(args) -> int:
    import numpy as np
    from mpi4py import MPI

    import apsp.distributed as dist
    from apsp.graph import Graph
    from stats_bench import random_graph

    comm = MPI.COMM_WORLD
    csr, _ = random_graph(args.n, args.m, args.seed)
    g = Graph.from_sparse(csr)
    times = []
    stats = None
    for _ in range(args.repeat):
        comm.Barrier()
        t0 = time.perf_counter()
        stats = dist.distance_stats(g, backend=args.backend, progress=False)
        comm.Barrier()
        times.append(time.perf_counter() - t0)
    used = comm.gather(devices_used(), root=0)
    if comm.rank == 0:
        assert stats is not None
        digest = hashlib.sha256()
        for a in (stats.reachable, stats.total, stats.eccentricity):
            digest.update(np.ascontiguousarray(a).tobytes())
        print(json.dumps({"ranks": comm.size, "times": times, "warm_median": statistics.median(times[1:] or times),
                          "devices_per_rank": used, "digest": digest.hexdigest()[:16],
                          "info": {k: v for k, v in stats.info.items() if isinstance(v, (int, float, str))}}))
    return 0


def cmd_sweep(args) -> int:
    rows = []
    for ranks in args.ranks:
        template = args.mpiexec if "{ranks}" in args.mpiexec else args.mpiexec + " -n {ranks}"
        cmd = shlex.split(template.format(ranks=ranks)) + [
            sys.executable, os.path.abspath(__file__), "run", "--n", str(args.n), "--m", str(args.m),
            "--seed", str(args.seed), "--repeat", str(args.repeat), "--backend", args.backend]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        line = next((ln for ln in out.stdout.splitlines() if ln.startswith("{")), None)
        if out.returncode or line is None:
            print(out.stdout[-3000:], out.stderr[-3000:], file=sys.stderr)
            return 1
        rows.append(json.loads(line))
    base = rows[0]["warm_median"]
    print("| ranks | warm median (s) | speedup | devices per rank | digest |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['ranks']} | {r['warm_median']:.2f} | {base / r['warm_median']:.2f} | "
              f"{r['devices_per_rank']} | {r['digest']} |")
    same = len({r["digest"] for r in rows}) == 1
    print("results equal across rank counts:", same)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if same else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("run", "sweep"):
        q = sub.add_parser(name)
        q.add_argument("--n", type=int, default=1_000_000)
        q.add_argument("--m", type=int, default=10_000_000)
        q.add_argument("--seed", type=int, default=1)
        q.add_argument("--repeat", type=int, default=3, help="calls per run; the first is a warm-up")
        q.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="gpu")
        if name == "sweep":
            q.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
            q.add_argument("--mpiexec", default="mpiexec -n {ranks}")
            q.add_argument("--json")
    args = p.parse_args(argv)
    return cmd_run(args) if args.cmd == "run" else cmd_sweep(args)


if __name__ == "__main__":
    sys.exit(main())
