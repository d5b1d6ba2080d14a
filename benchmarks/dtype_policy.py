"""The dtype from the data (``dtype=None``) against a forced int32: whole public API calls.

Checks before it times: the default's distances equal int32's (same values, unreachable
pairs alike) and, with ``--require-dtype``, that the default picked that dtype; then it times
both, alternating, and reports the median whole-call seconds and the speed-up::

    python benchmarks/dtype_policy.py --backend cpu --sizes 2000,4000
    python benchmarks/dtype_policy.py --backend gpu --sizes 16384,32768 --require-dtype int16 \\
        --require-speedup 1.8
    python benchmarks/dtype_policy.py --method nd-fw --graph grid --sizes 4096,16384

``--graph grid`` / ``knn`` take the nested-dissection benchmarks' sparse graphs (`nd_graphs`;
a grid's side is the square root of the size).

Exit status 1 when a check or a requirement fails.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apsp  # noqa: E402
from apsp import exactness  # noqa: E402
from apsp.graph import EdgeList, Graph  # noqa: E402


def log(*args) -> None:
    print(*args, flush=True)


def random_graph(rng, n: int, density: float, lo: int, hi: int) -> Graph:
    mask = rng.random((n, n), dtype=np.float32) < density
    np.fill_diagonal(mask, False)
    src, dst = np.nonzero(mask)
    del mask
    g = Graph.from_edges(EdgeList(n, src, dst, rng.integers(lo, hi + 1, size=src.size)))
    g.to_csr()
    _ = g.max_abs_weight
    return g


def same_distances(a: np.ndarray, b: np.ndarray, rows: int = 1024) -> bool:
    """Equal values and equal unreachable pairs, whatever the two dtypes (compared in row chunks)."""
    if a.shape != b.shape:
        return False
    ua, ub = exactness.unreachable_value(a.dtype), exactness.unreachable_value(b.dtype)
    for i in range(0, a.shape[0], rows):
        x, y = a[i:i + rows], b[i:i + rows]
        gone = x == ua
        if not np.array_equal(gone, y == ub) or not np.array_equal(x[~gone].astype(np.int64),
                                                                   y[~gone].astype(np.int64)):
            return False
    return True


def sparse_graph(kind: str, n: int, lo: int, hi: int, seed: int) -> Graph:
    from nd_graphs import grid, knn

    csr = grid(int(np.sqrt(n)), lo, hi, seed) if kind == "grid" else knn(n, lo=lo, hi=hi, seed=seed)
    g = apsp.as_graph(csr)
    _ = g.max_abs_weight
    return g


def timed(g, method: str, backend: str, dtype):
    t0 = time.perf_counter()
    r = apsp.shortest_paths(g, method=method, backend=backend, dtype=dtype, progress=False)
    return time.perf_counter() - t0, r


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu"))
    p.add_argument("--method", default="fw", choices=("fw", "nd-fw"))
    p.add_argument("--graph", default="random", choices=("random", "grid", "knn"),
                   help="random: each pair an edge with probability --density")
    p.add_argument("--sizes", default="2000,4000")
    p.add_argument("--density", type=float, default=0.05)
    p.add_argument("--weights", type=int, nargs=2, default=(1, 100), metavar=("LO", "HI"))
    p.add_argument("--repeat", type=int, default=3, help="timed calls of each kind (median reported)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--require-dtype", default=None, help="fail unless dtype=None picks this dtype")
    p.add_argument("--require-speedup", type=float, default=None,
                   help="fail unless dtype=None is at least this many times faster than int32")
    p.add_argument("--out", default=None, help="also write the rows as JSON here")
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows, ok = [], True
    for n in (int(x) for x in args.sizes.split(",")):
        t0 = time.perf_counter()
        g = (random_graph(rng, n, args.density, *args.weights) if args.graph == "random"
             else sparse_graph(args.graph, n, *args.weights, args.seed))
        n = g.n
        log(f"n={n}: {g.nnz} edges, weights {args.weights[0]}..{args.weights[1]}, worst-case bound "
            f"{g.distance_bound:.0f}, built in {time.perf_counter() - t0:.1f} s")
        # warm: kernels compiled or loaded, the device started; these results are the checked ones
        _, auto = timed(g, args.method, args.backend, None)
        _, wide = timed(g, args.method, args.backend, "int32")
        equal = same_distances(auto.distances, wide.distances)
        picked = auto.distances.dtype.name
        log(f"  dtype=None picked {picked} (tried {auto.info['dtype_tried']}, {auto.info['dtype_check']}); "
            f"distances {'equal' if equal else 'DIFFER from'} int32's")
        ok &= equal
        if args.require_dtype and picked != args.require_dtype:
            log(f"  FAIL: expected dtype {args.require_dtype}")
            ok = False
        del auto, wide
        t_auto, t_wide = [], []
        for _ in range(args.repeat):
            s, r = timed(g, args.method, args.backend, None)
            t_auto.append(s)
            stages_auto = r.timings
            del r
            s, r = timed(g, args.method, args.backend, "int32")
            t_wide.append(s)
            stages_wide = r.timings
            del r
        row = {"n": n, "edges": g.nnz, "method": args.method, "graph": args.graph, "backend": args.backend,
               "density": args.density, "dtype": picked,
               "default_s": statistics.median(t_auto), "int32_s": statistics.median(t_wide),
               "default_runs": t_auto, "int32_runs": t_wide,
               "default_stages": stages_auto, "int32_stages": stages_wide}
        row["speedup"] = row["int32_s"] / row["default_s"]
        rows.append(row)
        log(f"  whole call, median of {args.repeat}: dtype=None ({picked}) {row['default_s']:.3f} s, "
            f"int32 {row['int32_s']:.3f} s: {row['speedup']:.2f}x")
        log("  stages (dtype=None): " + ", ".join(f"{k} {v:.3f}" for k, v in stages_auto.items()))
        log("  stages (int32):      " + ", ".join(f"{k} {v:.3f}" for k, v in stages_wide.items()))
        if args.require_speedup and row["speedup"] < args.require_speedup:
            log(f"  FAIL: speed-up below {args.require_speedup}")
            ok = False
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    log("all checks passed" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
