"""The automatic choice against every method on real and realistic graphs: regret = auto / best.

For each graph of the suite (bundled real graphs, road-like and mesh graphs, grids, k-NN, random,
R-MAT, social): every applicable method on the backend asked (fw, nd-fw, dijkstra or johnson on the
CPU, bfs for unit weights) and ``method="auto"``, ``--repeat`` rounds of whole
`apsp.shortest_paths` calls, each round calling every one once in its own (seeded random) order
(medians); every result checked
equal to the first one entry by entry. The table gives
auto's pick and time, the fastest method and its time, the regret (auto / best), what
`apsp.costs.fastest` would pick and its regret, and the estimates beside the measured times.

    python benchmarks/real_graphs.py --backend cpu [--json OUT] [--only NAME ...] [--max-n N]
    python benchmarks/real_graphs.py --backend gpu --json gpu.json   # includes the GPU-only graphs
    python benchmarks/real_graphs.py --backend auto --json both.json # CPU and GPU methods side by side
    python benchmarks/real_graphs.py --proxy      # nd-fw's separator proxy against its counted work

Needs only numpy, scipy, networkx (social graphs) and pymetis (nd-fw's ordering; BFS levels
without it); no network. A method whose estimate exceeds ``--time-limit`` seconds is not run
(shown as ``skip``; the one estimated fastest always runs); the best is the fastest of those run.
The automatic call's reasons (what ``-v`` prints) are checked against the graph, its estimates
and its result (`false_reasons`); the exit code is 1 on a false one or a mismatch.

With a GPU among the backends, torch is imported before the first graph (``--fresh`` leaves it
out): every GPU method is then timed at its running cost, as in a session that has used it, and the
automatic choice sees torch loaded. In a fresh process the estimates charge the GPU methods that
need torch its import (`apsp.costs.TORCH_IMPORT_SECONDS`), so a one-off command there keeps to the
methods that do not (dense FW runs on the CUDA driver without it).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import nd_graphs  # noqa: E402

import apsp  # noqa: E402
from apsp import costs, exactness  # noqa: E402
from apsp.graph import EdgeList, Graph  # noqa: E402


# -- graphs ---------------------------------------------------------------

def _graph(n, src, dst, w, name, undirected=True) -> Graph:
    src, dst, w = (np.asarray(a, dtype=np.int64) for a in (src, dst, w))
    if undirected:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([w, w])
    g = Graph.from_edges(EdgeList(int(n), src, dst, w, source=name))
    return g


def _points(n, seed):
    return np.random.default_rng(seed).random((n, 2))


def _lengths(p, a, b, scale=1000.0):
    return np.maximum(1, np.rint(np.linalg.norm(p[a] - p[b], axis=1) * scale * np.sqrt(len(p)) / 10)).astype(np.int64)


def delaunay_edges(p):
    from scipy.spatial import Delaunay

    tri = Delaunay(p).simplices
    e = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [0, 2]]])
    e = np.unique(np.sort(e, axis=1), axis=0)
    return e[:, 0], e[:, 1]


def mesh(n, seed=0):
    """A 2-D triangulated mesh: Delaunay triangulation of n random points, weights = lengths."""
    p = _points(n, seed)
    a, b = delaunay_edges(p)
    return _graph(n, a, b, _lengths(p, a, b), f"mesh-{n}")


def road(n, extra=0.3, seed=0):
    """Road-like: the Euclidean minimum spanning tree of n random points plus a share ``extra`` of
    the other Delaunay edges (about 1.3-1.5 edges per vertex each way, like OSM street graphs),
    weights = lengths."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree

    p = _points(n, seed)
    a, b = delaunay_edges(p)
    w = _lengths(p, a, b)
    mst = minimum_spanning_tree(coo_matrix((w, (a, b)), shape=(n, n))).tocoo()
    in_tree = set(zip(mst.row.tolist(), mst.col.tolist())) | set(zip(mst.col.tolist(), mst.row.tolist()))
    rest = np.array([(x, y) not in in_tree for x, y in zip(a.tolist(), b.tolist())])
    keep = rest & (np.random.default_rng(seed + 1).random(len(a)) < extra)
    a2, b2 = np.concatenate([mst.row, a[keep]]), np.concatenate([mst.col, b[keep]])
    return _graph(n, a2, b2, _lengths(p, a2, b2), f"road-{n}")


def grid(side):
    """side x side 4-neighbour grid, weights 1..100 (`nd_graphs.grid`)."""
    return Graph.from_sparse(nd_graphs.grid(side), source=f"grid-{side}x{side}")


def knn(n, k=6, potentials=False):
    """Each of n random points joined to its k nearest, weights 1..100 (`nd_graphs.knn`); with
    ``potentials``, w(u, v) + p(u) - p(v) for random p (some weights negative, no negative cycle:
    Johnson's case)."""
    csr = nd_graphs.knn(n, k).astype(np.int64)
    rows, w = np.repeat(np.arange(n), np.diff(csr.indptr)), csr.data
    if potentials:
        pot = np.random.default_rng(2).integers(0, 30, n)
        w = w + pot[rows] - pot[csr.indices]
    return _graph(n, rows, csr.indices, w, f"knn{k}-{n}" + ("-neg" if potentials else ""), undirected=False)


def random_graph(n, m, seed=0, unit=False):
    """Erdős–Rényi G(n, m), directed, weights 1..100 (or 1)."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    w = np.ones(m, dtype=np.int64) if unit else rng.integers(1, 101, m)
    return _graph(n, a, b, w, f"random-{n}-{m}" + ("-unit" if unit else ""), undirected=False)


def rmat(scale, edge_factor=8, seed=0, unit=False, probs=(0.57, 0.19, 0.19, 0.05)):
    """R-MAT (Graph500's parameters): 2^scale vertices, edge_factor * 2^scale directed edges,
    web-like skewed degrees; weights 1..100 (or 1)."""
    rng = np.random.default_rng(seed)
    n, m = 1 << scale, edge_factor << scale
    a = np.zeros(m, dtype=np.int64)
    b = np.zeros(m, dtype=np.int64)
    cum = np.cumsum(probs)
    for bit in range(scale):
        r = rng.random(m)
        quad = np.searchsorted(cum, r, side="right")
        a |= (quad >= 2).astype(np.int64) << bit
        b |= (quad % 2 == 1).astype(np.int64) << bit
    w = np.ones(m, dtype=np.int64) if unit else rng.integers(1, 101, m)
    return _graph(n, a, b, w, f"rmat-{scale}" + ("-unit" if unit else ""), undirected=False)


def bundled(name):
    return Graph.from_edges(apsp.datasets.load(name))


def social(name):
    """networkx's bundled social graphs (les_miserables: co-appearance weights)."""
    import networkx as nx

    G = nx.convert_node_labels_to_integers(getattr(nx, f"{name}_graph")())
    e = np.array([(u, v, d.get("weight", 1)) for u, v, d in G.edges(data=True)], dtype=np.int64)
    return _graph(G.number_of_nodes(), e[:, 0], e[:, 1], e[:, 2], name)


#: name -> (builder, GPU only): the CPU table takes seconds per method on a 2-core machine; the
#: GPU-only graphs hold two n x n results on the host at once (n = 62,500, int32: 31 GB)
SUITE = {
    "roget": (lambda: bundled("roget"), False),
    "knuth-miles": (lambda: bundled("knuth-miles"), False),
    "les_miserables": (lambda: social("les_miserables"), False),
    "road-1500": (lambda: road(1500), False),
    "road-10000": (lambda: road(10000), False),
    "mesh-5000": (lambda: mesh(5000), False),
    "grid-100x100": (lambda: grid(100), False),
    "knn6-10000": (lambda: knn(10000), False),
    "knn6-3000-neg": (lambda: knn(3000, potentials=True), False),
    "random-2000-10000": (lambda: random_graph(2000, 10000), False),
    "random-10000-50000": (lambda: random_graph(10000, 50000), False),
    "random-5000-25000-unit": (lambda: random_graph(5000, 25000, unit=True), False),
    "rmat-12": (lambda: rmat(12), False),
    "rmat-13-unit": (lambda: rmat(13, unit=True), False),
    "road-50000": (lambda: road(50000), True),
    "mesh-40000": (lambda: mesh(40000), True),
    "grid-250x250": (lambda: grid(250), True),
    "knn6-60000": (lambda: knn(60000), True),
}


# -- measuring ------------------------------------------------------------

def label(method: str, backend: str, all_backends: bool) -> str:
    """A column's name: the method, with its backend when both backends are measured."""
    return f"{method}-{backend}" if all_backends else method


def same_distances(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal entry by entry, unreachable pairs alike, whatever the two dtypes (row chunks)."""
    ua, ub = exactness.unreachable_value(a.dtype), exactness.unreachable_value(b.dtype)
    step = max(1, (1 << 24) // max(a.shape[1], 1))
    for r in range(0, a.shape[0], step):
        x, y = a[r:r + step], b[r:r + step]
        mx, my = x == ua, y == ub
        if not np.array_equal(mx, my) or not np.array_equal(x[~mx].astype(np.float64), y[~my].astype(np.float64)):
            return False
    return True


NARROWER = {"int32": "int16", "int64": "int32", "uint16": "uint8", "int16": None, "uint8": None}


def false_reasons(g, res) -> list[str]:
    """The claims of the automatic call's reasons (``res.info["why"]``, what ``-v`` prints) that
    the graph, the plan's estimates or the result contradict; empty when every one holds."""
    why, plan, wrong = res.info["why"], res.info["plan"], []
    est = plan["estimates"]
    picked = f"{res.method}/{res.backend}"
    m = re.search(r"method (\S+) \(the smallest estimated time, (\S+) s(?:; next (\S+) (\S+) s)?\)", why)
    if est and m is None:
        wrong.append(f"no estimated-time reason: {why}")
    elif est:
        ranked = sorted(est, key=est.get)
        if m.group(1) != res.method or ranked[0] != picked or m.group(2) != f"{est[picked]:.3g}":
            wrong.append(f"the pick {picked} ({m.group(2)} s) is not the smallest estimate: {est}")
        if len(ranked) > 1 and (m.group(3), m.group(4)) != (ranked[1], f"{est[ranked[1]]:.3g}"):
            wrong.append(f"'next {m.group(3)} {m.group(4)} s' is not the second smallest: {est}")
    if f"backend {res.backend} (" not in why:
        wrong.append(f"the backend named is not {res.backend}: {why}")
    d, dt = res.distances, np.dtype(res.dtype)
    finite = d[d != exactness.unreachable_value(dt)] if dt.kind != "f" else d[np.isfinite(d)]
    longest = int(np.abs(finite).max()) if finite.size else 0
    narrower = NARROWER.get(dt.name)
    if "verified: no distance within max|w| of its limit" in why:
        if exactness.cutoff_suspected(d, exactness.cutoff_band(dt, g.max_abs_weight)):
            wrong.append(f"'verified' but a distance lies within max|w| of {dt.name}'s limit")
    b = re.search(r"bound \(n-1\)\*max\|w\| = ([0-9.e+]+)", why)
    if b is not None:
        bound = int(b.group(1)) if b.group(1).isdigit() else float(b.group(1))
        if bound != g.distance_bound or not exactness.dtype_fits(dt, bound, g.has_negative_weights):
            wrong.append(f"bound {bound}: not the graph's ({g.distance_bound}) or {dt.name} does not hold it")
        if "the smallest that" in why and narrower and exactness.dtype_fits(narrower, bound, g.has_negative_weights):
            wrong.append(f"{narrower} holds the bound {bound} too: {dt.name} is not the smallest")
    if "the narrowest that holds the hop counts" in why and narrower and longest < exactness.unreachable_value(narrower):
        wrong.append(f"hop counts up to {longest} fit {narrower}, narrower than {dt.name}")
    for found in re.findall(r"a shortest distance of (\d+) was found", why):
        if int(found) > longest:
            wrong.append(f"'a shortest distance of {found} was found', but the longest is {longest}")
    return wrong


def timed_once(g, method, backend):
    g.derived.dissections.clear()  # the ordering counts in each nd-fw call, as a user's first call pays it
    t0 = time.perf_counter()
    res = apsp.shortest_paths(g, method=method, backend=backend, progress=False)
    return time.perf_counter() - t0, res


def run_graph(name, g, backend, repeat, time_limit):
    """Every applicable (method, backend) on ``backend`` ("auto": both, where a GPU is here) and
    ``method="auto"``, timed in ``repeat`` interleaved rounds (each round calls every one once, so a
    drift of the process's or the machine's state reaches all alike), medians; one row of the table."""
    from apsp.plan import gpu_available

    cands = costs.applicable(g, backend, gpu=gpu_available()[0])
    both = backend == "auto"
    t0 = time.perf_counter()
    pick, _, est = costs.fastest(g, backend, cands)
    est_seconds = time.perf_counter() - t0
    row = {"graph": name, "n": g.n, "m": g.nnz, "unit": g.unit_weights, "negative": g.has_negative_weights,
           "estimates": {label(*c, both): est[c] for c in cands}, "estimate_seconds": est_seconds,
           "estimate_dissected": bool(g.derived.dissections), "fastest_pick": label(*pick, both),
           "times": {}, "match": True}
    apsp.shortest_paths(g, method=pick[0], backend=pick[1], progress=False)  # compile / warm once
    run = [c for c in cands if est[c] <= time_limit] or [pick]  # the best to compare with, at least
    row["times"].update({label(*c, both): None for c in cands if c not in run})
    calls = run + [("auto", backend)]
    for c in calls:  # a first call of each (compiles), untimed
        timed_once(g, *c)
    samples: dict = {c: [] for c in calls}
    phases: dict = {c: [] for c in calls}
    ref, picked = None, None
    order = np.random.default_rng(0)
    for _ in range(repeat):
        # each round in its own order: no call always follows the same one (a CPU call right
        # after a GPU call finds its threads asleep, a GPU call after one the card's memory freed)
        for c in [calls[i] for i in order.permutation(len(calls))]:
            t, res = timed_once(g, *c)
            samples[c].append(t)
            phases[c].append(res.timings)
            if c[0] == "auto":
                picked = label(res.method, res.backend, both)
                row["why"], row["false_reasons"] = res.info["why"], false_reasons(g, res)
                for claim in row["false_reasons"]:
                    print(f"  FALSE REASON {name}: {claim}", file=sys.stderr)
            if ref is None:
                ref = res.distances
            elif not same_distances(ref, res.distances):
                row["match"] = False
                print(f"  MISMATCH {name}: {label(*c, both) if c[0] != 'auto' else 'auto'} differs", file=sys.stderr)
            del res
    for c in run:
        row["times"][label(*c, both)] = float(np.median(samples[c]))
    t = float(np.median(samples[("auto", backend)]))
    row["auto_pick"], row["auto_time"] = picked, t
    row["phases"] = {("auto" if c[0] == "auto" else label(*c, both)): {
        k: float(np.median([p.get(k, 0.0) for p in phases[c]])) for k in phases[c][-1]} for c in calls}
    row["samples"] = {("auto" if c[0] == "auto" else label(*c, both)): samples[c] for c in calls}
    done = {k: v for k, v in row["times"].items() if v is not None}
    best = min(done, key=done.__getitem__)
    row["best"], row["best_time"] = best, done[best]
    row["regret_auto"] = t / done[best]
    # the same with auto's pick timed as the others were (calls apart differ by the machine's load)
    auto_time = done.get(row["auto_pick"])
    row["regret_auto_pick"] = None if auto_time is None else auto_time / done[best]
    ft = done.get(row["fastest_pick"])
    row["regret_fastest"] = None if ft is None else ft / done[best]
    return row


def fmt(x):
    if x is None:
        return "skip"
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def table(rows):
    order = ["bfs", "fw", "nd-fw", "dijkstra", "johnson"]
    methods = sorted({k for r in rows for k in r["times"]},
                     key=lambda k: (order.index(k.rsplit("-", 1)[0] if k.endswith(("-cpu", "-gpu")) else k), k))
    head = ["graph", "n", "m", "auto pick", "auto", "best", "best time", "regret auto", "(its pick)",
            "fastest() pick", "regret fastest()"] + [f"{m} meas / est" for m in methods]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        cells = [r["graph"], str(r["n"]), str(r["m"]), r["auto_pick"], fmt(r["auto_time"]), r["best"],
                 fmt(r["best_time"]), f"{r['regret_auto']:.2f}",
                 "-" if r.get("regret_auto_pick") is None else f"{r['regret_auto_pick']:.2f}", r["fastest_pick"],
                 "-" if r["regret_fastest"] is None else f"{r['regret_fastest']:.2f}"]
        for mth in methods:
            if mth in r["estimates"]:
                cells.append(f"{fmt(r['times'].get(mth))} / {fmt(r['estimates'][mth])}")
            else:
                cells.append("")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def proxy_rows(names):
    """The separator proxy against the ordering's counted updates (CPU and GPU plans)."""
    from apsp.dissection import default_plan

    print("| graph | n | m | s (middle BFS level) | component | counted cpu | proxy cpu | counted/proxy cpu |"
          " counted gpu | proxy gpu | proxy s | order s |")
    print("|" + " --- |" * 12)
    for name in names:
        g = SUITE[name][0]()
        t0 = time.perf_counter()
        s, c = costs.separator_proxy(g)
        t_proxy = time.perf_counter() - t0
        cells = [name, g.n, g.nnz, s, c]
        t0 = time.perf_counter()
        for b in ("cpu", "gpu"):
            counted = float(default_plan(g, b).updates())
            proxy = costs.nd_proxy_work(g, b)[0]
            cells += [f"{counted:.3g}", f"{proxy:.3g}"] + ([f"{counted / proxy:.2f}"] if b == "cpu" else [])
        cells += [f"{t_proxy:.3f}", f"{time.perf_counter() - t0:.3f}"]
        print("| " + " | ".join(map(str, cells)) + " |", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backend", choices=("cpu", "gpu", "auto"), default="cpu",
                   help="the methods of this backend; auto: both (where a GPU is here), as the automatic "
                        "choice sees them")
    p.add_argument("--json", type=Path, help="write the rows here")
    p.add_argument("--only", nargs="+", choices=sorted(SUITE), help="these graphs only")
    p.add_argument("--max-n", type=int, default=None, help="skip graphs with more vertices")
    p.add_argument("--repeat", type=int, default=3,
                   help="rounds of timed calls, one per method a round (median; default 3)")
    p.add_argument("--time-limit", type=float, default=30.0,
                   help="do not run a method estimated slower than this many seconds (default 30)")
    p.add_argument("--proxy", action="store_true", help="print nd-fw's proxy against counted work and stop")
    p.add_argument("--table", type=Path, help="print the table of a --json file written earlier and stop")
    p.add_argument("--fresh", action="store_true",
                   help="do not import torch first: the GPU methods that need it are priced with its import")
    args = p.parse_args(argv)
    if args.table:
        print(table(json.loads(args.table.read_text())["rows"]))
        return 0
    names = args.only or [k for k, (_, gpu_only) in SUITE.items() if args.backend != "cpu" or not gpu_only]
    if args.proxy:
        proxy_rows(names)
        return 0
    from apsp.plan import gpu_available

    if args.backend != "cpu" and not args.fresh and gpu_available()[0]:
        import torch  # noqa: F401 - every GPU method at its running cost (module docstring)
    rows = []
    for name in names:
        g = SUITE[name][0]()
        if args.max_n and g.n > args.max_n:
            continue
        print(f"{name}: n = {g.n}, m = {g.nnz}", file=sys.stderr, flush=True)
        rows.append(run_graph(name, g, args.backend, args.repeat, args.time_limit))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        if args.json:
            args.json.write_text(json.dumps({"backend": args.backend, "rates": costs.this_machine().to_json(),
                                             "torch_loaded": "torch" in sys.modules,
                                             "rows": rows}, indent=1) + "\n")
    print(table(rows))
    return 0 if all(r["match"] and not r.get("false_reasons") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
