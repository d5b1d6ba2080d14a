"""Queries and searches on the CPU: one route, k sources, all-pairs Dijkstra, paths overhead.

Every stage checks results before timing them (against scipy, or against the
full solve), then prints one line per measurement. Stages:

* ``query``: ``apsp path`` on a random sparse graph (n vertices, 5n edges,
  weights 1..100) as a whole command in a fresh process, against a plain
  scipy single-source Dijkstra script (numpy reads the same file) in a fresh
  process; also the search alone in milliseconds.
* ``sources``: ``shortest_paths(g, sources=k first vertices)`` for several k
  on n = 20000 (5n edges), against all n searches (the full solve).
* ``dijkstra``: all pairs of a random n = 10000, m = 50000 graph: apsp's
  parallel Dijkstra, networkit's parallel APSP (if installed), scipy's
  Dijkstra and apsp's scipy drop-in (``method='D'``).
* ``paths``: ``apsp solve g.txt -o d.npy`` with and without ``--paths``
  (``apsp gen N`` graphs, the CLI's own --profile stages).

    python benchmarks/queries.py --stages query sources dijkstra paths
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import apsp  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": ROOT}


def random_sparse(n: int, m: int, seed: int = 1) -> apsp.EdgeList:
    """About m distinct random edges (no self-loops), weights 1..100."""
    rng = np.random.default_rng(seed)
    pairs = np.unique(rng.integers(0, n, (m, 2)), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return apsp.EdgeList(n, pairs[:, 0], pairs[:, 1], rng.integers(1, 101, len(pairs)))


def fresh(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=ENV, check=True).stdout
    return time.perf_counter() - t0, out


SCIPY_ONE = """
import sys, numpy as np, scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra
e = np.loadtxt(sys.argv[1], skiprows=1, dtype=np.int64)
n = int(open(sys.argv[1]).readline().split()[0])
g = sp.csr_matrix((e[:, 2].astype(float), (e[:, 0] - 1, e[:, 1] - 1)), shape=(n, n))
d = dijkstra(g, indices=int(sys.argv[2]) - 1)
print(int(d[int(sys.argv[3]) - 1]))
"""


def stage_query(sizes, repeat: int) -> None:
    from apsp.io import write_graph

    tmp = tempfile.mkdtemp()
    for n in sizes:
        path = os.path.join(tmp, f"g{n}.txt")
        e = random_sparse(n, 5 * n, seed=n)
        write_graph(path, e)
        s, t = 1, n  # 1-based homework numbering
        cli = [sys.executable, "-m", "apsp", "path", path, "--from", str(s), "--to", str(t), "--json"]
        ref = [sys.executable, "-c", SCIPY_ONE, path, str(s), str(t)]
        fresh(cli)  # compile / warm the Numba cache once
        ours = min(fresh(cli)[0] for _ in range(repeat))
        theirs = min(fresh(ref)[0] for _ in range(repeat))
        import json

        got = json.loads(fresh(cli)[1])
        want = int(fresh(ref)[1])
        assert got["length"] == want, (got, want)
        g = apsp.as_graph(e)
        search = min(apsp.shortest_path_between(g, s - 1, t - 1).timings["search"] for _ in range(5))
        print(f"query n={n} m={5 * n}: apsp path {ours:.3f} s, scipy script {theirs:.3f} s "
              f"(ratio {ours / theirs:.2f}); the search alone {search * 1e3:.2f} ms "
              f"({got['method']}, length {want})", flush=True)


def stage_sources(n: int, ks, repeat: int) -> None:
    e = random_sparse(n, 5 * n, seed=7)
    g = apsp.as_graph(e)
    apsp.shortest_paths(g, method="dijkstra", sources=[0])  # warm
    t0 = time.perf_counter()
    full = apsp.shortest_paths(g, method="dijkstra", progress=False)
    t_full = time.perf_counter() - t0
    print(f"sources n={n} m={5 * n}: full solve (all {n} searches) {t_full:.2f} s, dtype "
          f"{full.dtype}", flush=True)
    for k in ks:
        src = np.arange(k)
        best = np.inf
        for _ in range(repeat):
            t0 = time.perf_counter()
            r = apsp.shortest_paths(g, sources=src, progress=False)
            best = min(best, time.perf_counter() - t0)
        np.testing.assert_array_equal(r.distances, full.distances[:k])
        print(f"sources k={k}: {best:.3f} s ({r.method}), {t_full / best:.0f}x faster than the full "
              f"solve", flush=True)


def stage_dijkstra(n: int, m: int) -> None:
    import scipy.sparse.csgraph as csgraph

    e = random_sparse(n, m, seed=3)
    g = apsp.as_graph(e)
    csr = g.to_csr().astype(np.float64)
    apsp.shortest_paths(g, method="dijkstra", sources=[0])  # warm
    t0 = time.perf_counter()
    ours = apsp.shortest_paths(g, method="dijkstra", progress=False)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    drop = apsp.shortest_path(csr, method="D")
    t_drop = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = csgraph.shortest_path(csr, method="D")
    t_scipy = time.perf_counter() - t0
    np.testing.assert_array_equal(drop, ref)
    np.testing.assert_array_equal(ours.to_float(), ref)
    line = (f"dijkstra n={n} m={m}: apsp {t_ours:.2f} s ({ours.dtype}), scipy drop-in D {t_drop:.2f} s, "
            f"scipy D {t_scipy:.2f} s (drop-in {t_scipy / t_drop:.2f}x scipy)")
    try:
        import networkit as nk
    except ImportError:
        print(line + "; networkit not installed", flush=True)
        return
    G = nk.graph.Graph(n, weighted=True, directed=True)
    c = g.to_csr()
    rows = np.repeat(np.arange(n), np.diff(c.indptr))
    for u, v, w in zip(rows.tolist(), c.indices.tolist(), c.data.tolist()):
        G.addEdge(u, v, w)
    t0 = time.perf_counter()
    a = nk.distance.APSP(G)
    a.run()
    t_nk = time.perf_counter() - t0
    for v in range(0, n, 97):  # spot checks (getDistances() would build n*n Python floats)
        if np.isfinite(ref[0, v]):
            assert a.getDistance(0, v) == ref[0, v]
    print(line + f", networkit APSP {t_nk:.2f} s (apsp {t_nk / t_ours:.2f}x networkit)", flush=True)


def stage_paths(sizes) -> None:
    tmp = tempfile.mkdtemp()
    for n in sizes:
        path = os.path.join(tmp, f"g{n}.txt")
        subprocess.run([sys.executable, "-m", "apsp", "gen", str(n), "--seed", "1", "-o", path],
                       env=ENV, check=True)
        base = [sys.executable, "-m", "apsp", "solve", path, "-q", "--profile"]

        def stages(extra):
            err = subprocess.run(base + extra, capture_output=True, text=True, env=ENV, check=True).stderr
            return {ln.split()[0]: float(ln.split()[1]) for ln in err.splitlines()
                    if len(ln.split()) >= 2 and ln.split()[0] in ("compute", "paths")}

        plain = os.path.join(tmp, "d.npy")
        stages(["-o", plain])  # warm
        a = stages(["-o", plain])
        b = stages(["-o", os.path.join(tmp, "d2.npy"), "--paths", os.path.join(tmp, "next.npy")])
        assert np.array_equal(np.load(plain), np.load(os.path.join(tmp, "d2.npy")))
        with_paths = b["compute"] + b["paths"]
        print(f"paths n={n}: compute {a['compute']:.2f} s; with --paths compute {b['compute']:.2f} s + "
              f"paths {b['paths']:.2f} s = {with_paths / a['compute']:.2f}x the distance-only compute",
              flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stages", nargs="+", default=["query", "sources", "dijkstra", "paths"],
                   choices=["query", "sources", "dijkstra", "paths"])
    p.add_argument("--query-n", type=int, nargs="+", default=[8000, 100000])
    p.add_argument("--sources-n", type=int, default=20000)
    p.add_argument("--k", type=int, nargs="+", default=[1, 10, 100, 1000])
    p.add_argument("--paths-n", type=int, nargs="+", default=[2000, 4000])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    print(f"apsp {apsp.__version__}, {os.cpu_count()} CPUs, numba threads "
          f"{__import__('numba').get_num_threads()}", flush=True)
    if "query" in args.stages:
        stage_query(args.query_n, args.repeat)
    if "sources" in args.stages:
        stage_sources(args.sources_n, args.k, args.repeat)
    if "dijkstra" in args.stages:
        stage_dijkstra(10000, 50000)
    if "paths" in args.stages:
        stage_paths(args.paths_n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
