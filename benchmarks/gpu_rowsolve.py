"""The row solve's downward pass on the GPU (`apsp.gpu.rowsolve`): min-plus updates per second.

Two workloads, random factors in both (the arithmetic does not depend on the values):

* a synthetic level: ``--nodes`` nodes of ``--v`` own vertices and ``--b`` boundary entries each, drawn
  from a column range above them, one launch of the level kernel (``down_level``);
* the dissection of a k x k grid (``--side``, leaves of ``--leaf``), boundaries from the symbolic
  elimination (each node's neighbours outside its subtree, with its children's boundaries: the
  fill of a real elimination); the whole downward pass (one launch per level) and the whole
  ``rows_block`` (the upward pass too) on blocks of ``--rows`` sources, with the per-level split.
  ``--check`` compares the first rows of a block against a numpy evaluation of the definition.

Updates are ``rows x sum(|B_t| |V_t|)`` (the downward pass's min-plus additions); with ``--ceiling`` the
card's register-only rate (`apsp.gpu.ceiling`) is printed beside them. The first call of each shape
compiles and is not timed.

``python benchmarks/gpu_rowsolve.py --side 1000 --leaf 64 --rows 1024 --nodes 16384 --v 64 --b 256 --check --ceiling``
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from nd_graphs import grid  # noqa: E402

from apsp import exactness  # noqa: E402
from apsp.dissection import plan  # noqa: E402
from apsp.gpu import default_device  # noqa: E402
from apsp.gpu import rowsolve  # noqa: E402
from apsp.graph import Graph  # noqa: E402


def timed(fn, repeat: int) -> float:
    """Median seconds of ``fn()`` over ``repeat`` runs after one untimed (compiling) run."""
    fn()
    times = []
    for _ in range(repeat):
        if torch.cuda.is_available():
            from apsp.gpu.timing import event_timed_call

            times.append(event_timed_call(fn)[0])
        else:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def _values(rng, shape, dt):
    return rng.integers(1, 100, size=shape).astype(dt)


def synthetic_level(args, dt, device, config):
    """One level of ``--nodes`` equal nodes: seconds and updates/s of one launch."""
    rng = np.random.default_rng(0)
    n, v, b = args.nodes, args.v, args.b
    below = n * v
    size = below + max(b, args.top)
    bidx = np.concatenate([np.sort(rng.choice(np.arange(below, size), b, replace=False)) for _ in range(n)])
    arange = lambda x: torch.tensor(x, dtype=torch.int64, device=device)  # noqa: E731
    level = rowsolve.Level(tuple(range(n)), arange(np.arange(n) * v), arange([v] * n), arange([b] * n),
                           arange(np.arange(n) * b), arange(np.arange(n) * v * b), width=v, depth=b)
    down = torch.randint(1, 100, (n * b * v,), device=device).to(getattr(torch, dt.name))
    d = rowsolve._column_major(args.rows, size, down.dtype, device).fill_(7)
    bidx_t = torch.from_numpy(bidx.astype(np.int32)).to(device)
    seconds = timed(lambda: rowsolve.down_level(d, level, down, bidx_t, False, config), args.repeat)
    updates = args.rows * n * v * b
    return {"workload": f"synthetic level: {n} nodes |V|={v} |B|={b}", "rows": args.rows, "seconds": seconds,
            "updates": updates, "updates_per_s": updates / seconds}


def symbolic_boundaries(nd, csr) -> list[np.ndarray]:
    """Each node's boundary in a real elimination: the layout positions outside its subtree adjacent to
    its own vertices or in a child's boundary (all in its ancestors' own ranges)."""
    pos = np.asarray(nd.position)
    order = np.asarray(nd.order)
    children = [[] for _ in range(nd.nodes)]
    for t in range(nd.nodes):
        if nd.parent[t] >= 0:
            children[nd.parent[t]].append(t)
    out = []
    for t in range(nd.nodes):
        verts = order[nd.own_start[t]:nd.end[t]]
        verts = verts[verts >= 0]
        near = pos[np.concatenate([csr.indices[csr.indptr[u]:csr.indptr[u + 1]] for u in verts] or [[]]).astype(np.int64)]
        near = np.union1d(near, np.concatenate([out[c] for c in children[t]] or [[]]).astype(np.int64))
        out.append(near[near >= nd.end[t]].astype(np.int64))
    return out


def grid_factors(side, leaf, dt, rng):
    csr = grid(side)
    nd = plan(Graph.from_sparse(csr), tile=1, leaf_size=leaf, pad=1)
    boundary = symbolic_boundaries(nd, csr)
    v = np.asarray(nd.end) - np.asarray(nd.own_start)
    return SimpleNamespace(nd=nd, boundary=tuple(boundary), dtype=dt, negative=False,
                           closure=tuple(_values(rng, (v[t], v[t]), dt) for t in range(nd.nodes)),
                           up=tuple(_values(rng, (v[t], len(boundary[t])), dt) for t in range(nd.nodes)),
                           down=tuple(_values(rng, (len(boundary[t]), v[t]), dt) for t in range(nd.nodes)))


def rows_numpy(f, s0, s1):
    """The definition in numpy (non-negative factors: no clamping), int64 or float64 arithmetic."""
    nd = f.nd
    wide = np.float64 if f.dtype.kind == "f" else np.int64
    inf = wide(exactness.inf_value(f.dtype))
    d = np.full((s1 - s0, nd.size), inf, dtype=wide)
    d[np.arange(s1 - s0), s0 + np.arange(s1 - s0)] = 0

    def product(a, b):
        return (a[:, :, None] + b[None].astype(wide)).min(axis=1) if a.shape[1] else np.full((len(a), b.shape[1]), inf)

    for t in range(nd.nodes):
        if nd.start[t] < s1 and nd.end[t] > s0:
            v, b = slice(nd.own_start[t], nd.end[t]), f.boundary[t]
            d[:, v] = product(d[:, v], f.closure[t])
            d[:, b] = np.minimum(d[:, b], product(d[:, v], f.up[t]))
    for t in reversed(range(nd.nodes)):
        v = slice(nd.own_start[t], nd.end[t])
        d[:, v] = np.minimum(d[:, v], product(d[:, f.boundary[t]], f.down[t]))
    return np.minimum(d, inf).astype(f.dtype)


def grid_rows(args, dt, device, config):
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    f = grid_factors(args.side, args.leaf, dt, rng)
    nd = f.nd
    prepare = time.perf_counter() - t0
    t0 = time.perf_counter()
    packed = rowsolve.upload(f, device)
    upload = time.perf_counter() - t0
    rows = min(args.rows, nd.size)
    s0 = (nd.size - rows) // 2
    d = rowsolve.new_rows(packed, rows)
    work = [sum(len(f.boundary[t]) * (nd.end[t] - nd.own_start[t]) for t in level.nodes) for level in packed.levels]
    updates = rows * sum(work)
    down = timed(lambda: rowsolve.downward(packed, d, config), args.repeat)
    whole = timed(lambda: rowsolve.rows_block(packed, s0, s0 + rows, out=d, config=config), args.repeat)
    per_level = []
    for level, upd in zip(packed.levels, work):
        sec = timed(lambda level=level: rowsolve.down_level(d, level, packed.down, packed.bidx, False, config), 1)
        per_level.append({"nodes": len(level.nodes), "widest_v": level.width, "widest_b": level.depth,
                          "seconds": sec, "updates_per_s": rows * upd / sec if sec else None})
    out = {"workload": f"grid {args.side}x{args.side} leaf {args.leaf}", "n": int(nd.n), "nodes": int(nd.nodes),
           "levels": len(packed.levels), "rows": rows, "device_bytes": rowsolve.device_bytes(f),
           "prepare_s": prepare, "upload_s": upload, "seconds": down, "rows_block_s": whole,
           "updates": updates, "updates_per_s": updates / down, "per_level": per_level}
    if args.check:
        k = min(args.check_rows, rows)
        got = rowsolve.rows_block(packed, s0, s0 + k).cpu().numpy()
        out["check"] = bool(np.array_equal(got, rows_numpy(f, s0, s0 + k)))
        print(f"check of {k} rows: {'equal' if out['check'] else 'DIFFERENT'}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="int32")
    ap.add_argument("--rows", type=int, default=1024, help="sources per row block")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=4096, help="synthetic level: nodes (0: skip)")
    ap.add_argument("--v", type=int, default=64, help="synthetic level: own vertices per node")
    ap.add_argument("--b", type=int, default=256, help="synthetic level: boundary per node")
    ap.add_argument("--top", type=int, default=2048, help="synthetic level: columns the boundaries come from")
    ap.add_argument("--side", type=int, nargs="*", default=[300], help="grid sides (none: skip)")
    ap.add_argument("--leaf", type=int, default=64)
    ap.add_argument("--config", help="the level kernel's tile for every level: block_m,block_n,warps,unroll,stages")
    ap.add_argument("--check", action="store_true", help="compare rows against numpy")
    ap.add_argument("--check-rows", type=int, default=8)
    ap.add_argument("--ceiling", action="store_true", help="also measure the card's min-plus ceiling")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    device = torch.device(default_device())
    dt = np.dtype(args.dtype)
    config = rowsolve.LevelConfig(*map(int, args.config.split(","))) if args.config else None
    summary = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "interpreter",
               "dtype": dt.name, "config": args.config, "results": []}
    print(f"device: {summary['device']}")
    if args.ceiling:
        from apsp.gpu.ceiling import best_ceiling

        summary["ceiling_updates_per_s"] = best_ceiling(dt.name)
        print(f"ceiling {dt.name}: {summary['ceiling_updates_per_s'] / 1e12:.2f} T updates/s")
    runs = ([lambda: synthetic_level(args, dt, device, config)] if args.nodes else [])
    runs += [lambda s=s: grid_rows(argparse.Namespace(**{**vars(args), "side": s}), dt, device, config)
             for s in args.side]
    for run in runs:
        r = run()
        summary["results"].append(r)
        ceiling = summary.get("ceiling_updates_per_s")
        share = f" ({r['updates_per_s'] / ceiling:.0%} of the ceiling)" if ceiling else ""
        print(f"{r['workload']}: {r['rows']} rows, {r['updates'] / 1e9:.2f} G updates, "
              f"{r['seconds'] * 1e3:.2f} ms, {r['updates_per_s'] / 1e12:.3f} T updates/s{share}")
        for i, lv in enumerate(r.get("per_level", [])):
            rate = f"{lv['updates_per_s'] / 1e12:.3f} T/s" if lv["updates_per_s"] else "-"
            print(f"  level {i}: {lv['nodes']} nodes, |V| <= {lv['widest_v']}, |B| <= {lv['widest_b']}: "
                  f"{lv['seconds'] * 1e3:.3f} ms, {rate}")
        if args.out:
            with open(args.out, "w") as fh:
                json.dump(summary, fh, indent=1, default=float)  # numpy integers among the counts


if __name__ == "__main__":
    main()
