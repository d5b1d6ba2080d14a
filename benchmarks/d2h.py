"""Device-to-host result copies on a GPU: exact first, then GB/s; optionally a whole API call vs its compute.

    python benchmarks/d2h.py                       # 4 GiB int32 (n = 32768) and odd shapes
    python benchmarks/d2h.py --whole 65536         # also apsp.shortest_paths at n = 65536: wall vs compute

Every copy lands in a destination filled with a poison byte first and is compared entry by
entry with the device tensor (fetched the plain way). Rates: `apsp.gpu.transfer.to_host`
into a fresh array (first-touch page faults included, as a solve sees them) and into an
already touched one, against ``tensor.cpu()``. Needs CUDA.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def log(*a):
    print(*a, flush=True)


def check_exact(transfer, torch) -> int:
    """Odd shapes and every dtype, poisoned destinations: return the number of cases checked."""
    cases = 0
    gen = torch.Generator(device="cuda").manual_seed(int(time.time()))
    for dtype in (torch.int16, torch.int32, torch.float32, torch.float64):
        for rows, cols in ((10007, 9973), (3, 7_000_001), (65537, 129), (8191, 8193)):
            if dtype.is_floating_point:
                t = torch.randn(rows, cols, device="cuda", dtype=dtype, generator=gen) * 1e4
            else:
                info = torch.iinfo(dtype)
                t = torch.randint(info.min, info.max, (rows, cols), device="cuda", dtype=dtype, generator=gen)
            for view in (t, t[1:, 2:]):  # contiguous, and the visible part of a padded matrix
                expected = view.cpu().numpy()
                out = np.empty(expected.shape, dtype=expected.dtype)
                out.view(np.uint8)[...] = 0xA5
                transfer.to_host(view, out=out)
                if not np.array_equal(out.view(np.uint8), expected.view(np.uint8)):
                    raise SystemExit(f"MISMATCH: {dtype} {tuple(view.shape)}")
                got = transfer.to_host(view)
                if not np.array_equal(got.view(np.uint8), expected.view(np.uint8)):
                    raise SystemExit(f"MISMATCH (fresh array): {dtype} {tuple(view.shape)}")
                cases += 2
            del t
    return cases


def rates(transfer, torch, n: int, repeats: int) -> dict:
    t = torch.randint(0, 2**31 - 1, (n, n), device="cuda", dtype=torch.int32)
    gb = t.numel() * 4 / 1e9
    expected_sum = int(t.sum(dtype=torch.int64))
    out = {}

    def best(fn):
        times = []
        for _ in range(repeats):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            res = fn()
            times.append(time.perf_counter() - t0)
        return min(times), res

    transfer._staging(t.device)  # the pinned staging buffers: allocated once per process, not timed
    s, res = best(lambda: transfer.to_host(t))
    assert int(res.sum(dtype=np.int64)) == expected_sum, "fresh to_host differs"
    out["to_host_fresh_s"] = s
    touched = np.empty((n, n), dtype=np.int32)
    touched.fill(7)
    s, res = best(lambda: transfer.to_host(t, out=touched))
    assert int(res.sum(dtype=np.int64)) == expected_sum, "to_host into a touched array differs"
    out["to_host_touched_s"] = s
    s, res = best(lambda: t.cpu())
    out["tensor_cpu_s"] = s
    for k in list(out):
        out[k.replace("_s", "_GBps")] = gb / out[k]
    out["GB"] = gb
    return out


def whole(n: int, density: float) -> dict:
    import apsp
    from apsp.graph import EdgeList, Graph

    rng = np.random.default_rng(1)
    m = int(density * n * n)
    src = rng.integers(0, n, size=m)
    dst = rng.integers(0, n, size=m)
    keep = src != dst
    g = Graph.from_edges(EdgeList(n, src[keep], dst[keep], rng.integers(1, 101, size=int(keep.sum()))))
    g.to_csr()
    apsp.shortest_paths(Graph.from_edges(EdgeList(300, [0], [1], [1])), method="fw", backend="gpu", dtype="int32")
    t0 = time.perf_counter()
    r = apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int32")
    wall = time.perf_counter() - t0
    rec = {"n": n, "edges": g.nnz, "wall_s": wall, "timings_s": r.timings,
           "wall_over_compute": wall / r.timings["compute"]}
    # spot check against single-source Dijkstra from a few sources
    from scipy.sparse.csgraph import dijkstra

    csr = g.to_csr().astype(np.float64)
    for s in rng.integers(0, n, size=3):
        ref = dijkstra(csr, indices=int(s))
        got = r.distances[int(s)].astype(np.float64)
        got[~r.reachable[int(s)]] = np.inf
        if not np.array_equal(got, ref):
            raise SystemExit(f"MISMATCH: row {s} of the n={n} solve differs from Dijkstra")
    return rec


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=32768, help="square int32 matrix for the rates (default 32768: 4 GiB)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--whole", type=int, default=None, metavar="N", help="also a whole API call at this n")
    p.add_argument("--density", type=float, default=0.001)
    p.add_argument("--out", type=Path, default=None, help="JSON results")
    args = p.parse_args()
    import torch

    from apsp.gpu import transfer

    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA device")
    res = {"device": torch.cuda.get_device_name(0)}
    t0 = time.perf_counter()
    res["exact_cases"] = check_exact(transfer, torch)
    log(f"exact: {res['exact_cases']} copies equal the device tensors byte for byte "
        f"(int16/int32/float32/float64, odd shapes, strided views, poisoned destinations) "
        f"in {time.perf_counter() - t0:.1f} s")
    r = rates(transfer, torch, args.n, args.repeats)
    res["rates"] = r
    log(f"d2h n={args.n} int32 ({r['GB']:.2f} GB): to_host fresh {r['to_host_fresh_s']:.3f} s "
        f"({r['to_host_fresh_GBps']:.1f} GB/s), into a touched array {r['to_host_touched_s']:.3f} s "
        f"({r['to_host_touched_GBps']:.1f} GB/s); tensor.cpu() {r['tensor_cpu_s']:.3f} s "
        f"({r['tensor_cpu_GBps']:.1f} GB/s)")
    if args.whole:
        w = whole(args.whole, args.density)
        res["whole"] = w
        log(f"whole API call n={w['n']} ({w['edges']} edges): wall {w['wall_s']:.2f} s, compute "
            f"{w['timings_s']['compute']:.2f} s: {w['wall_over_compute']:.3f}x; stages "
            + ", ".join(f"{k} {v:.2f}" for k, v in w["timings_s"].items()))
    if args.out:
        args.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
