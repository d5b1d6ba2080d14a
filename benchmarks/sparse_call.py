"""Large sparse graphs on the GPU, the default call stage by stage, each stage beside its limit.

    python benchmarks/sparse_call.py                         # grid 350, k-NN 122,500, grid 380; no cap and 79GB
    python benchmarks/sparse_call.py --grid 350 --knn 0 --big 0 --caps none --runs 3 --stages order,limits,calls

Stages:

* ``order``: `apsp.dissection.dissect` per graph on one process and on `ordering_workers` processes
  (the first parallel call starts the workers: timed apart), the tree's counted updates, and the
  cached plan's hit (`apsp.dissection.plan` on a graph made afresh from the same arrays).
* ``limits``: what the copy out can reach on this machine: a pinned device-to-host copy (GB/s),
  `apsp.gpu.transfer.to_host` of a ``--limit-gb`` int32 matrix into a fresh numpy array, into
  `huge_page_array`'s, and into one already faulted in; how fast `HostResult` faults pages in.
* ``calls``: ``apsp.shortest_paths(csr)`` (and with ``gpu_memory=`` each of ``--caps``), one compiling
  call, then ``--runs`` warm ones (median): wall, the stages, plan's route, 16 rows against scipy's
  Dijkstra (exact). ``--big`` runs only the caps in ``--big-caps`` (the capped 380 grid is the
  streamed engine's case, minutes before it was improved).

Keep a whole run under ~6 minutes on the H200 (the device's limit is 10 per command). JSON lines
on stdout; ``--out`` writes them as one file.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from nd_graphs import grid, knn  # noqa: E402

ROWS: list[dict] = []


def emit(**row) -> None:
    ROWS.append(row)
    print(json.dumps(row), flush=True)


def graphs(args) -> list[tuple[str, object, list[str]]]:
    caps = args.caps.split(",")
    out = [(f"grid{args.grid}", lambda: grid(args.grid), caps)] if args.grid else []
    out += [(f"knn{args.knn}", lambda: knn(args.knn), caps)] if args.knn else []
    out += [(f"grid{args.big}", lambda: grid(args.big), args.big_caps.split(","))] if args.big else []
    return out


def runs_for(args, name: str) -> int:
    return args.big_runs if args.big and name == f"grid{args.big}" else args.runs


def stage_order(args) -> None:
    from apsp import dissection
    from apsp.graph import Graph

    workers = dissection.ordering_workers(10 ** 9)
    for name, make, _ in graphs(args):
        csr = make()
        times: tuple[list[float], list[float]] = ([], [])
        nd = None
        for rep in range(3):  # alternate one process and many, paired
            for i, w in enumerate((1, workers)):
                t0 = time.perf_counter()
                nd = dissection.dissect(csr, leaf_size=dissection.DEFAULT_LEAF, tile=128, workers=w)
                times[i].append(time.perf_counter() - t0)
        dissection._ORDERINGS.clear()
        tile, leaf = dissection.DEFAULTS["gpu"]
        g = Graph.from_sparse(csr)
        t0 = time.perf_counter()
        dissection.plan(g, tile, leaf)
        first = time.perf_counter() - t0
        g = Graph.from_sparse(csr)  # the next call's graph: made afresh from the same arrays
        t0 = time.perf_counter()
        dissection.plan(g, tile, leaf)
        hit = time.perf_counter() - t0
        emit(stage="order", graph=name, n=int(csr.shape[0]), updates=float(nd.updates()), workers=workers,
             one_process_s=[round(t, 3) for t in times[0]], workers_s=[round(t, 3) for t in times[1]],
             plan_first_s=round(first, 3), plan_cached_s=round(hit, 4))


def stage_limits(args) -> None:
    import torch

    from apsp.gpu import transfer

    rows = int(args.limit_gb * 1e9 / 4 / 32768)
    t = torch.randint(0, 2 ** 31 - 1, (rows, 32768), device="cuda", dtype=torch.int32)
    gb = t.numel() * 4 / 1e9
    pinned = torch.empty(min(t.numel(), 1 << 29), dtype=torch.int32, pin_memory=True)
    src = t.view(-1)[:pinned.numel()]
    pinned.copy_(src)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(3):
        pinned.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    pinned_gbs = 3 * pinned.numel() * 4 / 1e9 / (time.perf_counter() - t0)
    del pinned
    transfer._staging(t.device)
    out = {}
    for label, make in (("fresh", lambda: np.empty(tuple(t.shape), np.int32)),
                        ("huge_pages", lambda: transfer.huge_page_array(tuple(t.shape), np.int32)),
                        ("faulted", lambda: np.ones(tuple(t.shape), np.int32))):
        dest = make()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        transfer.to_host(t, out=dest)
        out[label] = round(gb / (time.perf_counter() - t0), 1)
        ok = bool(np.array_equal(dest[-1], t[-1].cpu().numpy()))
        del dest
        gc.collect()
        out[label + "_ok"] = ok
    for huge in (False, True):  # HostResult's page faulting alone
        shape = tuple(t.shape)
        if not huge:
            saved, transfer.HUGE_PAGE_BYTES = transfer.HUGE_PAGE_BYTES, 1 << 62
        t0 = time.perf_counter()
        result = transfer.HostResult(shape, np.int32)
        for job in result._jobs:
            job.result()
        out["fault_gbs_" + ("huge" if huge else "small")] = round(gb / (time.perf_counter() - t0), 1)
        result.close()
        if not huge:
            transfer.HUGE_PAGE_BYTES = saved
        gc.collect()
    try:
        thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip()
    except OSError:
        thp = None
    emit(stage="limits", gb=round(gb, 2), pinned_d2h_gbs=round(pinned_gbs, 1), to_host_gbs=out,
         transparent_hugepage=thp, cores=os.cpu_count())


def one_call(csr, cap):
    import apsp

    options = {} if cap == "none" else {"gpu_memory": cap}
    t0 = time.perf_counter()
    r = apsp.shortest_paths(csr, **options)
    wall = time.perf_counter() - t0
    return r, wall


def stage_calls(args) -> None:
    from scipy.sparse.csgraph import dijkstra

    for name, make, caps in graphs(args):
        csr = make()
        rng = np.random.default_rng(0)
        src = rng.choice(csr.shape[0], 16, replace=False)
        ref = dijkstra(csr, indices=src)
        for cap in caps:
            walls, stages, last = [], [], {}
            for run in range(runs_for(args, name) + 1):  # the first compiles (kernels) and orders the graph
                r, wall = one_call(csr, cap)
                got = r.distances[src]
                ok = bool(np.array_equal(np.where(np.isfinite(ref), ref, -1),
                                         np.where(got == np.iinfo(got.dtype).max, -1, got).astype(np.float64)))
                last = dict(method=r.method, backend=r.backend, dtype=str(r.dtype), exact=ok,
                            info={k: r.info.get(k) for k in ("route", "out_of_core", "streamed_nodes",
                                                              "resident_nodes", "result_prefaulted", "gathered_nodes",
                                                              "batched_nodes", "updates")})
                if run:
                    walls.append(wall)
                    stages.append({k: round(v, 3) for k, v in r.timings.items()})
                else:
                    last["first_wall_s"] = round(wall, 2)
                del r, got
                gc.collect()
            emit(stage="calls", graph=name, n=int(csr.shape[0]), cap=cap, median_s=round(statistics.median(walls), 3),
                 walls=[round(w, 3) for w in walls], stages=stages, **last)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", type=int, default=350)
    ap.add_argument("--knn", type=int, default=122_500)
    ap.add_argument("--big", type=int, default=380)
    ap.add_argument("--caps", default="none,79GB")
    ap.add_argument("--big-caps", default="none")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--big-runs", type=int, default=3)
    ap.add_argument("--limit-gb", type=float, default=16.0)
    ap.add_argument("--stages", default="order,limits,calls")
    ap.add_argument("--out")
    args = ap.parse_args()
    for stage in args.stages.split(","):
        {"order": stage_order, "limits": stage_limits, "calls": stage_calls}[stage](args)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(ROWS, f, indent=1)


if __name__ == "__main__":
    main()
