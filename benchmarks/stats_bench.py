"""Distance reductions (`apsp.distance_stats`): timings, a sample checked, peak memory; JSON out.

Graphs are built from a seed: ``--kind random`` an undirected G(n, m) graph with m distinct
edges (unit weights), ``--kind grid`` a side x side grid with weights 1..100. A sample of
source rows is checked against scipy's searches (``--check`` rows: their closeness and
eccentricity must equal the values from scipy's distances). Stages:

* ``stats``: closeness and eccentricity of every vertex by `apsp.distance_stats` (``--repeat``
  runs; the first includes compiling);
* ``networkit``: networkit's exact ``Closeness`` (generalized variant, networkx's
  ``wf_improved``) in the same process, interleaved with ``stats`` (``--networkit``);
* ``peak_rss``: the process's peak resident memory (VmHWM) at the end: run alone in a fresh
  process to measure the reductions' working set.

Examples::

    python benchmarks/stats_bench.py --n 20000 --m 100000 --repeat 3 --networkit
    python benchmarks/stats_bench.py --n 40000 --m 200000 --repeat 1      # peak memory
    python benchmarks/stats_bench.py --n 1000000 --m 10000000 --repeat 2 --backend gpu
    python benchmarks/stats_bench.py --kind grid --side 350 --repeat 3
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def random_graph(n: int, m: int, seed: int):
    """Undirected G(n, m): m distinct unordered pairs without loops, as a symmetric CSR."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < m:
        k = int(1.2 * (m - chosen.size)) + 16
        a, b = rng.integers(0, n, k), rng.integers(0, n, k)
        keep = a != b
        key = np.minimum(a, b)[keep].astype(np.int64) * n + np.maximum(a, b)[keep]
        chosen = np.unique(np.concatenate([chosen, key]))
    chosen = rng.permutation(chosen)[:m]
    a, b = chosen // n, chosen % n
    data = np.ones(2 * m, dtype=np.int8)
    return sp.csr_matrix((data, (np.r_[a, b], np.r_[b, a])), shape=(n, n)), (a, b)


def grid_graph(side: int, seed: int):
    """A side x side grid, each undirected edge a weight in 1..100."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    idx = np.arange(side * side).reshape(side, side)
    a = np.r_[idx[:, :-1].ravel(), idx[:-1, :].ravel()]
    b = np.r_[idx[:, 1:].ravel(), idx[1:, :].ravel()]
    w = rng.integers(1, 101, a.size).astype(np.int32)
    n = side * side
    return sp.csr_matrix((np.r_[w, w], (np.r_[a, b], np.r_[b, a])), shape=(n, n)), (a, b)


def peak_rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def check_sample(csr, stats, rows: int, seed: int) -> int:
    """Closeness and eccentricity of ``rows`` random sources against scipy's distances."""
    from scipy.sparse.csgraph import shortest_path

    rng = np.random.default_rng(seed + 1)
    n = csr.shape[0]
    pick = rng.choice(n, size=min(rows, n), replace=False)
    unweighted = csr.data.min() == csr.data.max() == 1
    d = shortest_path(csr, indices=pick, unweighted=bool(unweighted))
    for i, s in enumerate(pick):
        row = d[i]
        finite = row[np.isfinite(row)]
        r, total = finite.size, finite.sum()
        close = 0.0 if total == 0 or n < 2 else (r - 1) / total * (r - 1) / (n - 1)
        assert stats.reachable[s] == r, (s, stats.reachable[s], r)
        assert int(stats.total[s]) == int(total), (s, stats.total[s], total)
        assert stats.eccentricity[s] == finite.max(), s
        assert np.isclose(stats.closeness()[s], close, rtol=1e-12), s
    return len(pick)


def run_stats(g, backend):
    import apsp

    t0 = time.perf_counter()
    stats = apsp.distance_stats(g, backend=backend, progress=False)
    closeness = stats.closeness()
    ecc = stats.eccentricity
    return time.perf_counter() - t0, stats, closeness, ecc


def run_networkit(edges, n):
    import networkit as nk

    G = nk.graph.Graph(n, weighted=False, directed=False)
    G.addEdges(edges)
    t0 = time.perf_counter()
    c = nk.centrality.Closeness(G, True, nk.centrality.ClosenessVariant.GENERALIZED)
    c.run()
    return time.perf_counter() - t0, np.asarray(c.scores())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", choices=("random", "grid"), default="random")
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--m", type=int, default=100000)
    p.add_argument("--side", type=int, default=350)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--check", type=int, default=20, help="source rows checked against scipy")
    p.add_argument("--networkit", action="store_true", help="also time networkit's exact Closeness")
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto",
                   help="distance_stats' backend (the GPU reduces unit-weight graphs only)")
    args = p.parse_args(argv)

    import apsp
    from apsp.graph import Graph

    t0 = time.perf_counter()
    if args.kind == "random":
        csr, edges = random_graph(args.n, args.m, args.seed)
    else:
        csr, edges = grid_graph(args.side, args.seed)
    g = Graph.from_sparse(csr)
    out = {"kind": args.kind, "n": g.n, "edges_undirected": int(len(edges[0])), "seed": args.seed,
           "build_s": round(time.perf_counter() - t0, 3), "stats_s": [], "networkit_s": []}
    for i in range(args.repeat):
        seconds, stats, closeness, ecc = run_stats(g, args.backend)
        out["stats_s"].append(round(seconds, 3))
        if i == 0:
            out["method"] = stats.method
            out["backend"] = stats.info["backend"]
            out["gpu"] = {k: stats.info[k] for k in ("words_per_block", "levels", "device", "timings")
                          if k in stats.info}
            out["working_set_bytes"] = stats.info["memory"]["host_bytes"]
            out["checked_rows"] = check_sample(csr, stats, args.check, args.seed)
            out["diameter"] = stats.diameter() if stats.reaches_all.all() else None
        if args.networkit:
            seconds, scores = run_networkit(edges, g.n)
            out["networkit_s"].append(round(seconds, 3))
            if i == 0:
                out["networkit_max_difference"] = float(np.abs(scores - closeness).max())
        del stats, closeness, ecc
    out["stats_median_s"] = statistics.median(out["stats_s"])
    warm = out["stats_s"][1:] or out["stats_s"]
    out["stats_warm_median_s"] = statistics.median(warm)
    if out["networkit_s"]:
        out["networkit_median_s"] = statistics.median(out["networkit_s"])
        out["speedup_median"] = round(out["networkit_median_s"] / out["stats_median_s"], 2)
    out["peak_rss_bytes"] = peak_rss_bytes()
    out["threads"] = apsp.cpu.threads.thread_count()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
