"""``apsp bench calibrate``: this machine's rates for the automatic choice (`apsp.costs.Rates`).

Times a few small whole `apsp.shortest_paths` calls (about 20 s on 2 cores; each after an
untimed call that compiles or loads its kernels) and turns them into rates: the work units are
`apsp.costs.estimate`'s, and the result's fill (or, on the GPU, its copy to the host) is taken
out first. The table is cached by machine (`apsp.costs.cache_path`, keyed by
`apsp.costs.machine_key`), where `apsp.costs.rates_for` finds it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

import numpy as np

from .. import costs
from .timing import timed_call


def _median_seconds(call, repeat: int) -> float:
    call()  # compile or load the kernels, warm the caches
    return float(np.median([timed_call(call)[0] for _ in range(repeat)]))


def _solver(g, method, backend, dtype=None):
    from ..api import shortest_paths

    return lambda: shortest_paths(g, method=method, backend=backend, dtype=dtype, progress=False)


def _random(n, m, unit=False, seed=0):
    from ..generate import random_graph
    from ..graph import Graph

    return Graph.from_edges(random_graph(n, m / (n * (n - 1.0)), None if unit else (1, 100), seed=seed))


def _grid(side, seed=0):
    """A side x side 4-neighbour grid, weights 1..100."""
    import scipy.sparse as sp

    from ..graph import Graph

    path = sp.diags([1, 1], [-1, 1], shape=(side, side), dtype=np.int8)
    pattern = sp.triu(sp.kron(sp.eye(side), path) + sp.kron(path, sp.eye(side))).tocoo()
    w = np.random.default_rng(seed).integers(1, 101, pattern.nnz)
    rows, cols = np.concatenate([pattern.row, pattern.col]), np.concatenate([pattern.col, pattern.row])
    csr = sp.csr_matrix((np.concatenate([w, w]), (rows, cols)), shape=(side * side, side * side))
    return Graph.from_sparse(csr)


def _nd_fit(points, rate_cap: float) -> tuple[float, float]:
    """(updates/s, seconds per round) through two measured nd-fw solves ``(updates, rounds, s)``."""
    (u1, r1, t1), (u2, r2, t2) = points
    det = u1 * r2 - u2 * r1
    inv_rate = (t1 * r2 - t2 * r1) / det if det else 0.0
    per_round = (u1 * t2 - u2 * t1) / det if det else 0.0
    rate = min(1.0 / inv_rate, rate_cap) if inv_rate > 0 else rate_cap
    if per_round <= 0:
        per_round = max(0.0, min((t - u / rate) / r for u, r, t in points))
    return rate, per_round


def _nd_points(backend: str, sides, speed: dict, overhead, repeat: int, log) -> list[tuple[float, float, float]]:
    """nd-fw on grids of these sides, its ordering built first: ``(updates in int32 equivalents,
    rounds, seconds less the call's ``overhead(graph, itemsize)``)`` each."""
    from ..dissection import default_plan

    points = []
    for side in sides:
        g = _grid(side)
        nd = default_plan(g, backend)
        itemsize = costs.solve_itemsize(g, "nd-fw")
        t = _median_seconds(_solver(g, "nd-fw", backend), repeat) - overhead(g, itemsize)
        points.append((nd.updates() / speed.get(itemsize, 1.0), costs.nd_rounds(nd, backend), t))
        log(f"nd-fw on the {backend}, grid {side} x {side}: {t:.4f} s, {nd.updates():.3g} updates, "
            f"{points[-1][1]:.0f} rounds")
    return points


def calibrate_cpu(base: costs.Rates, repeat: int = 3, log=print) -> costs.Rates:
    """CPU rates measured here (fill, dense FW int32 and int16, Dijkstra, BFS, nd-fw)."""
    fill = 4000 * 4000 * 4 / _median_seconds(lambda: np.full((4000, 4000), 7, dtype=np.int32), 3)  # bytes/s
    log(f"result fill: {fill / 1e9:.2f} GB/s")
    n = 2000
    g = _random(n, 0.02 * n * n)
    fw = {}
    for dtype in ("int32", "int16"):
        t = _median_seconds(_solver(g, "fw", "cpu", dtype), repeat) - n * n * np.dtype(dtype).itemsize / fill
        fw[dtype] = n ** 3 / t
        log(f"fw {dtype}, n = {n}: {t:.3f} s, {fw[dtype] / 1e9:.1f} G updates/s")
    speed = dict(base.fw_dtype_speedup) | dict.fromkeys((1, 2), fw["int16"] / fw["int32"])
    n = 3000
    g = _random(n, 5 * n)
    t = _median_seconds(_solver(g, "dijkstra", "cpu"), repeat) - n * n * costs.solve_itemsize(g, "dijkstra") / fill
    dijkstra = costs.dijkstra_units(g) / t
    log(f"dijkstra, n = {n}, m = {g.nnz}: {t:.3f} s, {dijkstra / 1e9:.2f} G steps/s")
    n = 4000
    g = _random(n, 5 * n, unit=True)
    t = _median_seconds(_solver(g, "bfs", "cpu"), repeat) - n * n / fill
    bfs = costs.search_units(g) / t
    log(f"bfs, n = {n}, m = {g.nnz}: {t:.3f} s, {bfs / 1e9:.2f} G visits/s")
    nd_rate, nd_round = _nd_fit(_nd_points("cpu", (40, 80), speed, lambda g, size: g.n * g.n * size / fill,
                                           repeat, log), fw["int32"])
    busy = costs.cpu_oversubscribed()
    log(f"nd-fw: {nd_rate / 1e9:.1f} G updates/s, {nd_round * 1e3:.2f} ms per round"
        + (" (cores oversubscribed: kept as the busy figure)" if busy else ""))
    return replace(base, fw_cpu=fw["int32"], fw_dtype_speedup=tuple(sorted(speed.items())),
                   dijkstra_cpu=dijkstra, bfs_cpu=bfs, result_fill=fill, ndfw_cpu=nd_rate,
                   nd_round_cpu_busy_seconds=nd_round if busy else base.nd_round_cpu_busy_seconds,
                   nd_round_cpu_seconds=base.nd_round_cpu_seconds if busy else nd_round)


def calibrate_gpu(base: costs.Rates, repeat: int = 3, log=print) -> costs.Rates:
    """GPU rates measured here: a small call's fixed cost, dense FW int32 and int16, BFS, nd-fw."""
    def gpu_time(g, method, dtype=None):
        return _median_seconds(_solver(g, method, "gpu", dtype), repeat)

    fixed = gpu_time(_random(256, 2000), "fw", "int32")
    call = gpu_time(_random(256, 2000, unit=True), "bfs")
    log(f"gpu call, n = 256: fw {fixed * 1e3:.2f} ms, bfs {call * 1e3:.2f} ms")
    rates = replace(base, gpu_fw_call_seconds=fixed, gpu_call_seconds=call)
    # n = 2048: 16 rounds whose GPU work (under a millisecond) waits for their launches
    small = 2048
    t = gpu_time(_random(small, 0.01 * small * small), "fw", "int32")
    launch = max(t - fixed - small * small * 4 / rates.d2h, 0.0) / np.ceil(small / 128)
    log(f"gpu fw int32, n = {small}: {t * 1e3:.2f} ms, {launch * 1e3:.2f} ms to launch a round")
    rates = replace(rates, fw_round_gpu_seconds=launch)
    n = 8192
    g = _random(n, 0.01 * n * n)
    fw = {}
    for dtype in ("int32", "int16"):
        size = np.dtype(dtype).itemsize
        t = gpu_time(g, "fw", dtype)
        rest = t - fixed - n * n * size / rates.d2h  # the launches overlap the rounds' work here
        fw[dtype] = n ** 3 / max(rest, 1e-6) * (n + rates.fw_gpu_half_n) / n
        log(f"gpu fw {dtype}, n = {n}: {t:.3f} s, {fw[dtype] / 1e12:.2f} T updates/s at full size")
    speed = dict(base.fw_gpu_dtype_speedup) | dict.fromkeys((1, 2), fw["int16"] / fw["int32"])
    rates = replace(rates, fw_gpu=fw["int32"], fw_gpu_dtype_speedup=tuple(sorted(speed.items())))
    g = _random(n, 8 * n, unit=True)
    t = gpu_time(g, "bfs")
    bfs = costs.search_units(g) / max(t - call - n * n / rates.d2h, 1e-6)
    log(f"gpu bfs, n = {n}: {t:.3f} s, {bfs / 1e12:.2f} T visits/s")
    side = 160
    nd_rate, nd_round = _nd_fit(_nd_points("gpu", (64, side), speed,
                                           lambda g, size: fixed + g.n * g.n * size / rates.d2h, repeat, log),
                                fw["int32"])
    log(f"gpu nd-fw: {nd_rate / 1e12:.2f} T updates/s, {nd_round * 1e3:.3f} ms per batched round")
    full = nd_rate * (side * side + rates.ndfw_gpu_half_n) / (side * side)  # as `fw` above: at full size
    return replace(rates, bfs_gpu=bfs, ndfw_gpu=full, nd_round_gpu_seconds=nd_round)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="apsp bench calibrate",
                                description="Measure this machine's rates for the automatic method choice "
                                            "and cache them (apsp.costs.rates_for reads them).")
    p.add_argument("--repeat", type=int, default=3, help="timed calls per measurement (median; default 3)")
    p.add_argument("--no-gpu", action="store_true",
                   help="CPU rates only, even with a GPU here (its shipped table kept)")
    p.add_argument("--dry-run", action="store_true", help="print the table, do not cache it")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the table (JSON)")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error(f"--repeat must be positive, got {args.repeat}")
    name = costs.gpu_name()

    def log(text: str) -> None:
        if not args.quiet:
            print(f"apsp bench calibrate: {text}", file=sys.stderr, flush=True)

    key = costs.machine_key(name)  # the machine's key whether its GPU is measured or not
    base = costs.shipped_rates(name)
    rates = calibrate_cpu(base, args.repeat, log)
    if name and not args.no_gpu:
        rates = calibrate_gpu(rates, args.repeat, log)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rates = replace(rates, name=key, source=f"apsp bench calibrate, {when}")
    print(json.dumps(rates.to_json()))
    if not args.dry_run:
        path = costs.save_calibration(rates, key)
        log(f"cached for {key!r} in {path}")
    return 0
