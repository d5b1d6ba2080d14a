"""Weighted grid statistics: the nested dissection's rows (method nd-rows) against Dijkstra's rows
and networkit's exact closeness, in the same run, values checked equal, peak RSS of each.

    python benchmarks/supernodal_stats.py 100 300 [--rounds 3] [--routes nd-rows,dijkstra,networkit]
    python benchmarks/supernodal_stats.py 500 1000 --backend gpu [--routes nd-rows,nd-fw,auto]

With ``--backend gpu`` the routes are the nested dissection's rows on the GPU (method nd-rows,
backend gpu: the elimination on the host, the rows solved and reduced on the card), nd-fw's in-core
statistics (backend gpu with the rows left out of the plan: where the n x n layout matrix does not
fit the card the run says so and is left out) and ``auto`` (the plan's own choice on the GPU), all
in int32; the warm-up is a 150 x 150 grid, so that the level kernel's small and wide tiles are
compiled before the timing.

Each call runs in a fresh interpreter (so its peak RSS is its own; Numba's kernels are compiled
by a warm-up call first, outside the timing), the routes alternating in a different order each
round (paired). A side x side grid with 4-neighbour edges both ways, integer weights 1..100 drawn
from ``--seed``. Dijkstra's and networkit's routes run only up to ``--search-max-n`` vertices
(the 300 x 300 grid takes them minutes): the nd-rows route is checked against the others where
they ran, and every run's closeness must agree. Prints one line a call and a JSON summary
(``--json FILE`` writes it).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def grid_edges(side: int, seed: int):
    rng = np.random.default_rng(seed)
    idx = np.arange(side * side).reshape(side, side)
    s = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    d = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    return s, d, rng.integers(1, 101, len(s))


def _peak_rss_bytes() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kilobytes


def _cpu_seconds() -> float:
    """This process's CPU time, every thread's (on a loaded machine, CPU time over the threads
    says what the wall time would be on idle cores)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


#: the warm-up grid of the GPU routes: its top separators are wider than the level kernel's
#: `WIDE_NODE`, so both tile configurations compile outside the timing
GPU_WARMUP_SIDE = 150


def _stats_call(route: str, backend: str):
    """``(distance_stats keywords, warm-up matrix)`` of ``route`` on ``backend``."""
    import scipy.sparse as sp

    if backend == "cpu":
        small = sp.csr_matrix(([1.0, 2.0], ([0, 1], [1, 2])), shape=(3, 3))
        return {"method": "auto" if route == "nd-rows" else route}, small
    s, d, w = grid_edges(GPU_WARMUP_SIDE, 1)
    n = GPU_WARMUP_SIDE ** 2
    warm = sp.csr_matrix((w.astype(np.float64), (s, d)), shape=(n, n))
    if route == "dijkstra":
        return {"method": "dijkstra", "backend": "cpu", "dtype": "int32"}, warm
    if route == "nd-fw":
        import apsp.plan

        # the plan's other GPU route alone: nd-fw in core where its matrix fits the card
        apsp.plan._rows_on_gpu = lambda *a, **k: (None, "")
        return {"method": "auto", "backend": "gpu", "dtype": "int32"}, warm
    return {"method": "auto" if route == "auto" else "nd-rows", "backend": "gpu", "dtype": "int32"}, warm


def worker(route: str, side: int, seed: int, out: str, backend: str = "cpu") -> None:
    s, d, w = grid_edges(side, seed)
    n = side * side
    if route == "networkit":
        import networkit as nk

        g = nk.Graph(n, weighted=True, directed=False)
        for a, b, x in zip(s.tolist(), d.tolist(), w.tolist()):
            g.addEdge(a, b, float(x))
        t0, c0 = time.perf_counter(), _cpu_seconds()
        c = nk.centrality.Closeness(g, True, nk.centrality.ClosenessVariant.GENERALIZED)
        c.run()
        seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
        closeness = np.array(c.scores())
        extra: dict = {}
    else:
        import scipy.sparse as sp

        import apsp

        m = sp.csr_matrix((w.astype(np.float64), (s, d)), shape=(n, n))
        call, warm = _stats_call(route, backend)
        try:
            apsp.distance_stats(warm, directed=False, progress=False, **call)  # compile outside the timing
            t0, c0 = time.perf_counter(), _cpu_seconds()
            st = apsp.distance_stats(m, directed=False, progress=False, **call)
        except (ValueError, apsp.MemoryPlanError) as exc:  # nd-fw's matrix past the card
            print(json.dumps({"route": route, "n": n, "skipped": str(exc)}))
            return
        seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
        closeness = st.closeness()
        extra = {"method": st.method, "reason": st.reason, "wiener": int(st.wiener_index()),
                 "diameter": int(st.diameter()), "radius": int(st.radius()),
                 "planned_bytes": st.info["memory"]["host_bytes"], "backend": st.info["backend"],
                 "planned_gpu_bytes": st.info["memory"].get("gpu_bytes"),
                 "block_rows": st.info["memory"].get("block_rows")}
        np.savez(out, total=np.asarray(st.total, dtype=np.int64), ecc=st.eccentricity, harmonic=st.harmonic,
                 closeness=closeness)
    if route == "networkit":
        np.savez(out, closeness=closeness)
    print(json.dumps({"route": route, "n": n, "seconds": seconds, "cpu_seconds": cpu, "peak_rss": _peak_rss_bytes(),
                      **extra}))


def run_one(route: str, side: int, seed: int, tmp: str, backend: str = "cpu") -> tuple[dict, dict | None]:
    out = os.path.join(tmp, f"{route}-{side}.npz")
    proc = subprocess.run([sys.executable, __file__, "--worker", route, str(side), str(seed), out, backend],
                          capture_output=True, text=True, check=True)
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    if "skipped" in rec:
        return rec, None
    with np.load(out) as z:
        arrays = {k: z[k] for k in z.files}
    return rec, arrays


def check_equal(side: int, results: dict, backend: str = "cpu") -> str:
    """The routes' statistics against nd-rows': equal, the harmonic sums (and closeness) within
    rounding where the GPU reduces them (torch's sums run in their own order)."""
    if "nd-rows" not in results:
        return "no nd-rows run"
    ref = results["nd-rows"]
    said = []
    for route, arrays in results.items():
        if route == "nd-rows":
            continue
        if route == "networkit":
            np.testing.assert_allclose(ref["closeness"], arrays["closeness"], rtol=1e-12)
        else:
            for k in ("total", "ecc", "harmonic", "closeness"):
                if backend == "gpu" and k in ("harmonic", "closeness"):
                    np.testing.assert_allclose(ref[k], arrays[k], rtol=1e-12, err_msg=f"{route} {k} at side {side}")
                else:
                    np.testing.assert_array_equal(ref[k], arrays[k], err_msg=f"{route} {k} at side {side}")
        said.append(route)
    return "equal to " + (", ".join(said) if said else "nothing else run")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sides", nargs="*", type=int, default=[100, 300])
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--routes", default=None,
                   help="default: nd-rows,dijkstra,networkit; with --backend gpu: nd-rows,nd-fw,auto")
    p.add_argument("--backend", choices=("cpu", "gpu"), default="cpu",
                   help="gpu: the rows on the GPU beside nd-fw's in-core statistics there")
    p.add_argument("--search-max-n", type=int, default=20000,
                   help="run Dijkstra's and networkit's routes only up to this many vertices")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None)
    p.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        route, side, seed, out, backend = args.worker
        worker(route, int(side), int(seed), out, backend)
        return
    default = "nd-rows,nd-fw,auto" if args.backend == "gpu" else "nd-rows,dijkstra,networkit"
    routes = [r for r in (args.routes or default).split(",") if r]
    if "networkit" in routes:
        try:
            import networkit  # noqa: F401
        except ImportError:
            print("networkit is not installed: its route is left out")
            routes.remove("networkit")
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for side in args.sides:
            n = side * side
            here = [r for r in routes if r not in ("dijkstra", "networkit") or n <= args.search_max_n]
            for rnd in range(args.rounds):
                order = here[rnd % len(here):] + here[:rnd % len(here)]  # rotate: each route leads a round
                results = {}
                for route in order:
                    rec, arrays = run_one(route, side, args.seed, tmp, args.backend)
                    rec.update(side=side, round=rnd)
                    summary.append(rec)
                    if arrays is None:
                        print(f"side {side} round {rnd} {route:10s} left out: {rec['skipped']}", flush=True)
                        continue
                    results[route] = arrays
                    print(f"side {side} round {rnd} {route:10s} {rec['seconds']:8.3f} s  CPU "
                          f"{rec['cpu_seconds']:8.3f} s  peak RSS "
                          f"{rec['peak_rss'] / 2**20:8.1f} MiB  (n^2 int32: {4 * n * n / 2**20:.0f} MiB)"
                          f"  {rec.get('method', route)} on the {rec.get('backend', 'cpu')}", flush=True)
                print(f"side {side} round {rnd}: {check_equal(side, results, args.backend)}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(summary, fh, indent=1)


if __name__ == "__main__":
    main()
