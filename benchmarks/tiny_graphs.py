"""Tiny graphs: apsp's default call against its own pick asked for by name, scipy's
``shortest_path`` and networkx, in one run.

Every round times each call once, in a new random order, so the noise of a shared machine falls
on all of them alike; each figure is the median over ``--repeat`` rounds (milliseconds), with the
automatic choice's overhead (default less by name) and the default call against scipy's. Then the
networkx backend's first call in a fresh process (``backend="apsp"`` and by automatic dispatch,
``NETWORKX_BACKEND_PRIORITY=apsp``) against networkx's own, each in its own process.

    python benchmarks/tiny_graphs.py [les_miserables knuth-miles roget] [--repeat 301]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import apsp  # noqa: E402
from real_graphs import SUITE  # noqa: E402

#: the overhead the automatic choice may add to its pick asked for by name (milliseconds)
OVERHEAD_GOAL_MS = 0.25
#: the networkx backend's first call on les_miserables_graph() (seconds)
FIRST_CALL_GOAL_S = 0.05


def calls(name: str) -> dict:
    from scipy.sparse.csgraph import shortest_path

    g = apsp.as_graph(SUITE[name][0]())
    pick = apsp.shortest_paths(g, progress=False)
    csr = g.to_csr()
    unweighted = bool(g.unit_weights)
    import networkx as nx

    G = nx.DiGraph()
    G.add_nodes_from(range(g.n))
    coo = csr.tocoo()
    G.add_weighted_edges_from(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()))
    return {
        "apsp default": lambda: apsp.shortest_paths(g, progress=False),
        f"apsp {pick.method}/{pick.backend}": lambda: apsp.shortest_paths(g, method=pick.method,
                                                                           backend=pick.backend, progress=False),
        "scipy shortest_path": lambda: shortest_path(csr, unweighted=unweighted),
        "networkx floyd_warshall_numpy": lambda: nx.floyd_warshall_numpy(G, backend="networkx"),
    }


def table(name: str, repeat: int) -> None:
    todo = calls(name)
    rng = np.random.default_rng(0)
    seen: dict = {k: [] for k in todo}
    for f in todo.values():  # warm: kernels loaded, conversions cached
        f()
    for _ in range(repeat):
        for k in rng.permutation(list(todo)):
            t0 = time.perf_counter()
            todo[k]()
            seen[k].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) * 1e3 for k, v in seen.items()}
    keys = list(todo)
    print(f"{name}: " + ", ".join(f"{k} {med[k]:.3f} ms" for k in keys))
    over = med[keys[0]] - med[keys[1]]
    print(f"  automatic choice {over:+.3f} ms over its pick by name (goal <= {OVERHEAD_GOAL_MS}); "
          f"default / scipy {med[keys[0]] / med[keys[2]]:.2f}x (goal <= 1)", flush=True)


FIRST_CALL = r"""
import json, os, sys, time
import networkx as nx
nx.config.warnings_to_ignore.add("cache")
G = nx.les_miserables_graph()
f = getattr(nx, sys.argv[1])
kw = {} if sys.argv[2] == "priority" else {"backend": sys.argv[2]}
t0 = time.perf_counter()
out = f(G, **kw)
out = dict(out) if sys.argv[1].startswith("all_pairs") else out
print(json.dumps({"seconds": time.perf_counter() - t0, "numba": "numba" in sys.modules}))
"""


def first_calls(functions, repeat: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]) + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    print(f"\nnetworkx backend, first call in a fresh process on les_miserables_graph() "
          f"(median of {repeat}, seconds; goal <= {FIRST_CALL_GOAL_S})")
    for fn in functions:
        cells = []
        for how in ("networkx", "apsp", "priority"):
            run_env = dict(env, NETWORKX_BACKEND_PRIORITY="apsp") if how == "priority" else env
            xs, ran = [], False
            for _ in range(repeat):
                out = subprocess.run([sys.executable, "-c", FIRST_CALL, fn, how], env=run_env,
                                     capture_output=True, text=True, check=True)
                got = json.loads(out.stdout.strip().splitlines()[-1])
                xs.append(got["seconds"])
                ran = ran or got["numba"]
            label = {"networkx": "networkx", "apsp": 'backend="apsp"', "priority": "priority=apsp"}[how]
            cells.append(f"{label} {np.median(xs):.3f}" + (" (apsp's kernels)" if ran and how != "networkx" else ""))
        print(f"  {fn}: " + ", ".join(cells), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="*", default=["les_miserables", "knuth-miles"], help=", ".join(sorted(SUITE)))
    ap.add_argument("--repeat", type=int, default=301)
    ap.add_argument("--first-calls", nargs="*", default=["floyd_warshall", "floyd_warshall_numpy",
                                                         "all_pairs_dijkstra_path_length"])
    ap.add_argument("--first-repeat", type=int, default=3)
    args = ap.parse_args()
    for name in args.graphs:
        table(name, args.repeat)
    if args.first_calls:
        first_calls(args.first_calls, args.first_repeat)


if __name__ == "__main__":
    main()
