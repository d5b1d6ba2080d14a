"""Benchmark the scipy drop-in and the networkx backend against scipy and networkx.

Run ``python -m apsp.bench.ecosystem`` (``--help`` for sizes). Every apsp
result is checked against the library it replaces before its time is printed.

``--overhead-only`` swaps apsp's solvers for scipy's Dijkstra, so the apsp
columns then time only what the drop-in and the backend add around a solver
(reading the graph, building networkx's dicts); use it to see that overhead
apart from solver speed.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform

import numpy as np

from .timing import timed_call


def _best_time(fn, repeat):
    best, value = float("inf"), None
    for _ in range(repeat):
        t, value, _ = timed_call(fn)
        best = min(best, t)
    return best, value


def _use_scipy_dijkstra_as_solver():
    """Route every apsp solver lookup to scipy's Dijkstra (for --overhead-only)."""
    import apsp.api
    from scipy.sparse.csgraph import shortest_path

    from apsp import exactness
    from apsp.engine import SolveOutput

    def solve(graph, opts):
        d, p = shortest_path(graph.to_csr(), method="D", return_predecessors=True)
        dtype = opts.dtype if opts.dtype is not None else np.dtype(np.int32)  # BFS leaves it to the solver
        dist = d.astype(dtype) if dtype.kind == "f" else np.where(
            np.isfinite(d), d, exactness.unreachable_value(dtype)).astype(dtype)
        return SolveOutput(dist=dist, predecessors=p if opts.predecessors else None)

    apsp.api.get_solver = lambda method, backend: solve


def bench_scipy(sizes, repeat):
    import scipy.sparse.csgraph as csgraph

    import apsp

    print("\nscipy.sparse.csgraph.floyd_warshall vs apsp.floyd_warshall "
          "(dense random graph, half the pairs are edges)")
    print(f"{'n':>6} {'weights':>9} {'scipy s':>10} {'apsp s':>10} {'speed-up':>9}")
    rng = np.random.default_rng(1)
    for n in sizes:
        for kind in ("int", "float"):
            w = rng.integers(1, 101, size=(n, n)).astype(np.float64)
            if kind == "float":
                w = w + rng.random((n, n))
            w[rng.random((n, n)) < 0.5] = 0
            t_scipy, ref = _best_time(lambda: csgraph.floyd_warshall(w), repeat)
            t_apsp, ours = _best_time(lambda: apsp.floyd_warshall(w), repeat)
            np.testing.assert_allclose(ours, ref, rtol=1e-12)
            print(f"{n:>6} {kind:>9} {t_scipy:>10.3f} {t_apsp:>10.3f} {t_scipy / t_apsp:>8.1f}x")


def bench_networkx(sizes, repeat, nx_fw_limit):
    import networkx as nx

    from apsp import networkx_backend as nxb

    print("\nnetworkx vs the apsp backend (G(n, p) with average degree 10, weights 1..9; "
          "generators consumed into dicts; apsp times include graph conversion)")
    print(f"{'n':>6} {'function':<42} {'networkx s':>11} {'apsp s':>9} {'speed-up':>9}")
    for n in sizes:
        G = nx.gnp_random_graph(n, min(1.0, 10 / max(n - 1, 1)), seed=1)
        for u, v, d in G.edges(data=True):
            d["weight"] = (u * 31 + v * 17) % 9 + 1
        for name in [f for f in nxb.FUNCTIONS if f.startswith(("floyd_warshall", "all_pairs"))]:
            def call(module, *args, **kwargs):
                out = getattr(module, name)(*args, **kwargs)
                return dict(out) if name.startswith("all_pairs") else out

            t_apsp, mine = _best_time(lambda: call(nxb, nxb.ApspGraph.from_networkx(G, {"weight": 1})),
                                      repeat)
            if name.startswith("floyd_warshall") and name != "floyd_warshall_numpy" \
                    and n > nx_fw_limit:
                print(f"{n:>6} {name:<42} {'(skipped)':>11} {t_apsp:>9.3f} {'':>9}")
                continue
            t_nx, ref = _best_time(lambda: call(nx, G, backend="networkx"),
                                   1 if t_apsp * repeat > 30 else repeat)
            _check_same(name, mine, ref)
            print(f"{n:>6} {name:<42} {t_nx:>11.3f} {t_apsp:>9.3f} {t_nx / t_apsp:>8.1f}x")


def _check_same(name, mine, ref):
    if name == "floyd_warshall_numpy":
        np.testing.assert_array_equal(mine, ref)
    elif name == "floyd_warshall_predecessor_and_distance":
        assert mine[1] == ref[1]
    else:
        assert mine == ref, name


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apsp.bench.ecosystem", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scipy-sizes", type=int, nargs="*", default=[500, 1000],
                        help="n for the scipy comparison (default: 500 1000)")
    parser.add_argument("--nx-sizes", type=int, nargs="*", default=[100, 500, 1500],
                        help="n for the networkx comparison (default: 100 500 1500)")
    parser.add_argument("--nx-fw-limit", type=int, default=500,
                        help="skip networkx's pure-Python Floyd-Warshall above this n (default 500)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--overhead-only", action="store_true",
                        help="replace apsp's solvers by scipy's Dijkstra (times the wrapping only)")
    args = parser.parse_args(argv)
    if args.overhead_only:
        _use_scipy_dijkstra_as_solver()
    from .environment import git_info

    print(f"apsp ecosystem benchmark - {datetime.date.today()} - commit {(git_info()['commit'] or 'unknown')[:7]} - "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
          f"{' - OVERHEAD ONLY: scipy Dijkstra stands in for apsp solvers' if args.overhead_only else ''}")
    if args.scipy_sizes and not args.overhead_only:  # with scipy's Dijkstra inside, FW is moot
        bench_scipy(args.scipy_sizes, args.repeat)
    if args.nx_sizes:
        bench_networkx(args.nx_sizes, args.repeat, args.nx_fw_limit)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
