"""Nested-dissection Floyd-Warshall on the GPU: a 350 x 350 grid and a k-NN graph of the same n.

For each graph: order it, build the layout matrix on the device, run the schedule
(first run compiles the kernels, then ``--repeat`` timed runs), check sampled
rows against scipy's Dijkstra on the device's result (every row entry, exact),
report compute seconds, updates done against dense n^3 and T updates/s; then
(``--wall``) one whole ``apsp.shortest_paths(method="nd-fw")`` with the copy to
the host, whose result rows are checked too. Writes a JSON summary with ``--out``.

``python benchmarks/nd_gpu.py --side 350 --knn 122500 --out nd_gpu.json``
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from scipy.sparse.csgraph import dijkstra  # noqa: E402

from nd_graphs import grid, knn  # noqa: E402

import apsp  # noqa: E402
from apsp import exactness  # noqa: E402
from apsp.dissection import plan  # noqa: E402
from apsp.gpu import default_device  # noqa: E402
from apsp.gpu import ndfw as gnd  # noqa: E402
from apsp.graph import Graph  # noqa: E402


def _expected_rows(csr, sources, dt):
    ref = dijkstra(csr, directed=True, indices=sources)
    out = np.full(ref.shape, exactness.unreachable_value(dt), dtype=dt)
    fin = np.isfinite(ref)
    out[fin] = ref[fin].astype(dt)
    return out


def schedule_run(g, dt, device, tile, leaf, nd=None, batch=True):
    """One schedule on the device (``batch`` False: every tree node on its own); returns
    (nd, d, engine, seconds)."""
    import dataclasses

    from apsp.engine import SolveOptions
    from apsp.gpu import machine_facts
    from apsp.costs import nd_gpu_budget

    nd = nd or plan(g, tile, leaf)
    # the plan's gather budget and batch model, as a solve gets them (batch False: launches are free)
    budget = nd_gpu_budget(g, SolveOptions.build(dtype=np.dtype(dt), block_size=tile, leaf_size=leaf),
                           machine_facts(str(device)))
    if not batch:
        budget = dataclasses.replace(budget, launch_seconds=0.0)
    engine = gnd.Engine(nd, dt, tile, g.has_negative_weights, device, budget)
    engine.load(g)  # synchronised: the layout matrix is on the device
    t0 = time.perf_counter()
    for _ in engine.rounds(tile):  # the skeleton's loop, without its bar (the last step synchronises)
        pass
    return nd, engine.d, engine, time.perf_counter() - t0


def fingerprint(d, band: int = 4096):
    """Per-row int64 sums of the device matrix times fixed random column weights (wrapping): equal
    matrices give equal fingerprints; a single differing entry changes its row's."""
    w = torch.from_numpy(np.random.default_rng(11).integers(1, 1 << 20, d.shape[1])).to(d.device)
    return torch.cat([(d[i:i + band].long() * w).sum(1) for i in range(0, d.shape[0], band)])


def check_rows(nd, d, csr, dt, sources) -> int:
    """Mismatching entries of the sampled rows (device result vs Dijkstra)."""
    pos = torch.from_numpy(nd.position).to(d.device)
    rows = d.index_select(0, pos[torch.from_numpy(sources).to(d.device)]).index_select(1, pos).cpu().numpy()
    rows = rows.copy()
    exactness.finalize_unreachable(rows, False)
    return int((rows != _expected_rows(csr, sources, dt)).sum())


def bench_graph(name, csr, args, device, summary):
    g = Graph.from_sparse(csr)
    n = g.n
    dt = exactness.choose_dtype(g.distance_bound, g.has_negative_weights, g.integral,
                                None if args.dtype == "auto" else args.dtype)
    rng = np.random.default_rng(7)
    sources = np.sort(rng.choice(n, size=min(args.check_rows, n), replace=False))
    t0 = time.perf_counter()
    nd = plan(g, args.tile, args.leaf)
    t_order = time.perf_counter() - t0
    updates = nd.updates()
    print(f"{name}: n={n} dtype={dt.name} layout={nd.size} nodes={nd.nodes} updates={updates:.3g} "
          f"= {100 * updates / n ** 3:.3f}% of n^3; ordering {t_order:.2f} s", flush=True)
    times = []
    for rep in range(args.repeat + 1):  # the first run compiles the kernels
        nd, d, engine, secs = schedule_run(g, dt, device, args.tile, args.leaf, nd)
        label = "compile+run" if rep == 0 else "run"
        print(f"  {label}: compute {secs:.3f} s ({updates / secs / 1e12:.2f} T updates/s), "
              f"batched nodes {engine.batched}, gathered nodes {engine.gathered}", flush=True)
        if rep == 0:
            bad = check_rows(nd, d, csr, dt, sources)
            print(f"  check: {len(sources)} rows vs Dijkstra: {'OK' if bad == 0 else f'{bad} MISMATCHES'}",
                  flush=True)
            batched_print = fingerprint(d)
        else:
            times.append(secs)
        del d, engine
        if device.type == "cuda":
            torch.cuda.empty_cache()
    if args.compare_unbatched:  # every node on its own: the time it takes, and the same matrix?
        _, d, engine, secs = schedule_run(g, dt, device, args.tile, args.leaf, nd, batch=False)
        same = bool(torch.equal(fingerprint(d), batched_print))
        print(f"  unbatched: compute {secs:.3f} s, gathered nodes {engine.gathered}; whole matrix "
              f"{'equal to the batched run' if same else 'DIFFERS from the batched run'}", flush=True)
        unbatched = {"compute_s": secs, "equal": same}
        del d, engine
        if device.type == "cuda":
            torch.cuda.empty_cache()
    del batched_print
    entry = {"graph": name, "n": n, "dtype": dt.name, "unbatched": unbatched if args.compare_unbatched else None, "layout": nd.size, "tree_nodes": nd.nodes,
             "updates": updates, "dense_updates": n ** 3, "share_of_dense": updates / n ** 3,
             "ordering_s": t_order, "compute_s": times, "best_compute_s": min(times) if times else None,
             "rows_checked": len(sources), "mismatches": bad}
    for leaf in args.more_leaves:
        nd2 = plan(g, args.tile, leaf)
        nd2, d, engine, secs = schedule_run(g, dt, device, args.tile, leaf, nd2)
        bad2 = check_rows(nd2, d, csr, dt, sources)
        up2 = nd2.updates()
        print(f"  leaf {leaf}: nodes {nd2.nodes}, updates {up2:.3g} = {100 * up2 / n ** 3:.3f}% of n^3, compute "
              f"{secs:.3f} s ({up2 / secs / 1e12:.2f} T updates/s); check {'OK' if bad2 == 0 else f'{bad2} MISMATCHES'}",
              flush=True)
        entry.setdefault("other_leaves", []).append({"leaf": leaf, "updates": up2, "compute_s": secs,
                                                     "mismatches": bad2})
        del d, engine
        if device.type == "cuda":
            torch.cuda.empty_cache()
    if args.wall:
        t0 = time.perf_counter()
        r = apsp.shortest_paths(g, method="nd-fw", backend="gpu", dtype=dt, progress=False,
                               block_size=args.tile, leaf_size=args.leaf)
        wall = time.perf_counter() - t0
        bad_wall = int((r.distances[sources] != _expected_rows(csr, sources, dt)).sum())
        print(f"  whole solve: wall {wall:.2f} s, stages "
              + ", ".join(f"{k} {v:.2f}" for k, v in r.timings.items())
              + f"; rows check {'OK' if bad_wall == 0 else f'{bad_wall} MISMATCHES'}", flush=True)
        entry.update(wall_s=wall, timings=r.timings, wall_mismatches=bad_wall)
        del r
    summary.append(entry)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", type=int, nargs="*", default=[350])
    ap.add_argument("--knn", type=int, nargs="*", default=[122500])
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--dtype", default="auto", help="auto (apsp's choice), int16, int32, ...")
    ap.add_argument("--tile", type=int, default=gnd.DEFAULT_TILE)
    ap.add_argument("--leaf", type=int, default=gnd.DEFAULT_LEAF)
    ap.add_argument("--more-leaves", type=int, nargs="*", default=[1000],
                    help="also time these leaf sizes (one run each, rows checked)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--check-rows", type=int, default=64)
    ap.add_argument("--wall", action="store_true", help="also one whole solve with the copy to the host")
    ap.add_argument("--compare-unbatched", action="store_true",
                    help="also one run with every tree node on its own (time; whole matrix compared)")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    device = torch.device(default_device())
    print(f"device: {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'interpreter'}")
    summary = []
    graphs = [(f"grid {s}x{s}", lambda s=s: grid(s)) for s in args.side]
    graphs += [(f"knn n={m} k={args.k}", lambda m=m: knn(m, args.k)) for m in args.knn]
    for name, make in graphs:
        bench_graph(name, make(), args, device, summary)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
