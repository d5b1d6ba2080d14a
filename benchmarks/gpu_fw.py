"""GPU Floyd-Warshall benchmark (issue 3): ceiling, correctness, tile sweep, full solves.

Run on a CUDA machine from the repository root:

    python benchmarks/gpu_fw.py --out results.json                 # everything
    python benchmarks/gpu_fw.py --stages ceiling,check,solve --sizes 8192,16384,32768

Every timed solve is checked: against a plain torch Floyd-Warshall on the GPU
(one rank-1 min-plus update per k) at the check sizes, and across dtypes at
the timed sizes (int16 and float32 results must equal int32's). Timing uses
CUDA events, one warm-up, median of several runs; updates/s = n^3 / time.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apsp.gpu import ceiling  # noqa: E402
from apsp.gpu import minplus  # noqa: E402
from apsp.gpu import rounds  # noqa: E402
from apsp.gpu.footprint import gpu_padded  # noqa: E402

DTYPES = {"int32": torch.int32, "int16": torch.int16, "float32": torch.float32, "float64": torch.float64}


def log(*a):
    print(*a, flush=True)


def cuda_time(fn, repeats: int, warmup: int = 1) -> list[float]:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / 1e3)
    return out


def random_start(n: int, dtype: torch.dtype, density: float, wmax: int, gen: torch.Generator,
                 negative: bool = False) -> torch.Tensor:
    """Random dense start matrix on the GPU, padded: INF off-edge, diagonal 0."""
    n_pad = gpu_padded(n, interpreted=False)
    d = torch.empty((n_pad, n_pad), dtype=dtype, device="cuda")
    d.fill_(minplus.inf_for(d))
    w = torch.randint(0 if not negative else 0, wmax + 1, (n, n), device="cuda", generator=gen)
    if negative:  # w + p[i] - p[j] has no negative cycle but has negative edges
        p = torch.randint(0, wmax, (n,), device="cuda", generator=gen)
        w = w + p[:, None] - p[None, :]
    keep = torch.rand((n, n), device="cuda", generator=gen) < density
    sub = d[:n, :n]
    sub[keep] = w[keep].to(dtype)
    torch.diagonal(sub).clamp_(max=0)
    return d


def torch_reference(d: torch.Tensor, n: int) -> torch.Tensor:
    """Plain FW, one rank-1 min-plus update per k, in float64 on the GPU (inf for INF)."""
    inf = minplus.inf_for(d)
    ref = d[:n, :n].to(torch.float64)
    if d.dtype.is_floating_point is False:
        ref[d[:n, :n] >= inf] = float("inf")
    for k in range(n):
        torch.minimum(ref, ref[:, k:k + 1] + ref[k:k + 1, :], out=ref)
    return ref


def as_float(d: torch.Tensor, n: int, negative: bool) -> torch.Tensor:
    inf = minplus.inf_for(d)
    out = d[:n, :n].to(torch.float64)
    if not d.dtype.is_floating_point:
        out[d[:n, :n] > (inf // 2 if negative else inf - 1)] = float("inf")
    return out


def stage_ceiling(results):
    log("== min-plus ceiling (register-only micro-kernel)")
    rows = []
    for name, asm in (("int32", 0), ("int32", 1), ("int16", 0), ("int16", 2), ("float32", 0), ("float32", 3)):
        r = ceiling.measure_ceiling(name, asm=asm)
        rows.append(r)
        log(f"  {name:8s} asm={asm} {r['updates_per_s'] / 1e12:7.2f} T updates/s")
    results["ceiling"] = rows
    best = {}
    for r in rows:  # int16: the faster of packed inline PTX and plain (compiler-packed) code
        best[r["dtype"]] = max(best.get(r["dtype"], 0.0), r["updates_per_s"])
    return best


def stage_check(results, gen):
    log("== correctness vs plain torch FW on the GPU (fresh random graphs, poisoned buffers)")
    cases = []
    for n in (1, 2, 31, 127, 128, 129, 300, 1000, 2500):
        for dname in ("int32", "int16", "float32", "float64"):
            for block in (7, 32, 128, 200):
                if n > 1000 and block != 128 and dname != "int32":
                    continue
                negative = dname in ("int32", "float64") and n % 2 == 1
                wmax = 3 if dname == "int16" else 100
                d = random_start(n, DTYPES[dname], 0.3, wmax, gen, negative=negative)
                ref = torch_reference(d, n)
                buf = torch.full((max(block, 1), d.shape[0]), 12345, dtype=d.dtype, device="cuda")  # poison
                rounds.fw_inplace(d, block, negative=negative, col_buffer=buf, n_pivots=n)
                got = as_float(d, n, negative)
                if dname.startswith("float"):
                    ok = bool(torch.allclose(torch.nan_to_num(got, posinf=1e300),
                                             torch.nan_to_num(ref, posinf=1e300), rtol=1e-6))
                else:
                    ok = bool(torch.equal(got, ref))
                cases.append({"n": n, "dtype": dname, "block": block, "negative": negative, "ok": ok})
                if not ok:
                    log(f"  MISMATCH n={n} dtype={dname} block={block} negative={negative}")
    bad = [c for c in cases if not c["ok"]]
    log(f"  {len(cases) - len(bad)}/{len(cases)} cases equal the reference")
    results["check"] = cases
    return not bad


#: (config, asm) candidates, config in apsp.gpu.minplus.MinplusConfig's order (BLOCK_M, BLOCK_N, warps,
#: UNROLL, CHUNK_A, STAGES); the first of each dtype is the default of the commit that added it; asm 4 on
#: int16 = the product as int32 pairs (apsp.gpu.minplus.PAIRS), config in pair units
SWEEP = {
    "int32": [((256, 64, 4, 8, True, 3), 1), ((256, 64, 4, 8, False, 3), 1), ((256, 64, 4, 8, True, 1), 1),
              ((256, 64, 4, 8, False, 1), 1)],
    "int16": [((256, 64, 4, 8, True, 3), 4), ((256, 64, 4, 8, True, 3), 2), ((128, 64, 4, 8, True, 3), 4),
              ((256, 64, 4, 8, True, 2), 4), ((256, 64, 4, 8, True, 1), 2), ((64, 64, 2, 16, False, 1), 2)],
    "float32": [((64, 128, 4, 8, True, 3), 3), ((128, 64, 4, 16, True, 3), 3), ((128, 64, 4, 8, True, 3), 3),
                ((256, 64, 4, 8, False, 1), 3)],
}


def stage_sweep(results, gen, n=16384, k=128):
    log(f"== tile sweep on a phase-3 product: C {n}x{n}, K={k}")
    rows = []
    for dname in ("int32", "int16", "float32"):
        dt = DTYPES[dname]
        wmax = 3 if dname == "int16" else 100
        base = random_start(n, dt, 0.5, wmax, gen)
        a_t = random_start(k, dt, 0.9, wmax, gen)[:k, :k].repeat(1, n // k).contiguous()  # K x n
        b = base[:k, :].clone()
        ref = base[:n, :n].clone()
        for kk in range(k):
            torch.minimum(ref, a_t[kk, :n][:, None] + b[kk:kk + 1, :n], out=ref)
        variants = SWEEP[dname]
        default_asm = minplus.ASM_MODE.get(dt, 0)
        for cfg, asm in variants:
            pairs = asm == minplus.ASM_PAIRS  # int16 as int32 pairs (minplus.PAIRS), not an ASM_MODE
            if not pairs:
                minplus.ASM_MODE[dt] = asm
            c = base.clone()
            minplus.minplus_update(c, a_t.t(), b, config=cfg, pairs=pairs)
            ok = bool(torch.equal(c[:n, :n], ref))
            times = cuda_time(lambda: minplus.minplus_update(c, a_t.t(), b, config=cfg, pairs=pairs), repeats=5)
            t = statistics.median(times)
            rate = n * n * k / t
            rows.append({"dtype": dname, "config": list(cfg), "block_m": cfg[0], "block_n": cfg[1],
                         "warps": cfg[2], "unroll": cfg[3], "chunk_a": cfg[4], "stages": cfg[5],
                         "asm": asm, "seconds": t, "updates_per_s": rate, "ok": ok})
            log(f"  {dname:8s} {cfg!s:24s} asm={asm} {rate / 1e12:7.2f} T/s  ok={ok}")
        minplus.ASM_MODE[dt] = default_asm
        base = a_t = b = ref = c = None
        torch.cuda.empty_cache()
    results["sweep"] = rows
    return rows


def stage_tune(results, sweep_rows, ceilings, n=32768, top=2, repeats=2):
    """Whole solves at n with the sweep's fastest products: a product's rate at one size did not
    predict the whole solve (2026-11-22), so the default table is chosen from these."""
    log(f"== whole solves at n={n} with the {top} fastest products per dtype")
    rows = []
    for dname in ("int32", "int16", "float32"):
        dt = DTYPES[dname]
        cands = sorted((r for r in sweep_rows if r["dtype"] == dname and r["ok"]),
                       key=lambda r: -r["updates_per_s"])[:top]
        default_asm = minplus.ASM_MODE.get(dt, 0)
        saved_pairs = dict(minplus.PAIRS)
        first = None
        # the fastest product also without look-ahead (phases 1-2 in line): what the overlap gains
        runs = [(r, True) for r in cands] + [(cands[0], False)] if cands else []
        for r, lookahead in runs:
            cfg = tuple(r["config"])
            pairs = r["asm"] == minplus.ASM_PAIRS
            minplus.PAIRS.update(enabled=pairs, config=cfg if pairs else saved_pairs["config"])
            # pairs: the products that can run as pairs use PAIRS' config; phase 2's transposed
            # column update keeps the packed-int16 kernel and its default config
            run_cfg = None if pairs else cfg
            if not pairs:
                minplus.ASM_MODE[dt] = r["asm"]
            g = torch.Generator(device="cuda")
            g.manual_seed(n)
            start = random_start(n, dt, 0.5, 3, g)
            d = start.clone()
            buf = torch.empty((128, d.shape[0]), dtype=dt, device="cuda")

            def run():
                d.copy_(start)
                rounds.fw_inplace(d, 128, col_buffer=buf, n_pivots=n, config=run_cfg, lookahead=lookahead)

            copy_t = statistics.median(cuda_time(lambda: d.copy_(start), repeats=3))
            times = [t - copy_t for t in cuda_time(run, repeats=repeats)]
            t = statistics.median(times)
            rate = n ** 3 / t
            frac = rate / ceilings[dname] if dname in ceilings else float("nan")
            result = as_float(d, n, False)
            # the phase-3 products alone (same launches, on the closed matrix): what phases 1-2 cost
            col_t = d[:, :128].t().contiguous()

            def phase3_only():
                for r0 in range(0, n, 128):
                    minplus.minplus_update(d, col_t.t(), d[r0:r0 + 128, :], config=run_cfg)

            t3 = statistics.median(cuda_time(phase3_only, repeats=1))
            same = None if first is None else bool(torch.equal(result, first))
            first = result if first is None else first
            rows.append({"n": n, "dtype": dname, "config": list(cfg), "asm": r["asm"], "seconds": t,
                         "updates_per_s": rate, "fraction_of_ceiling": frac, "equal_to_first": same,
                         "phase3_only_s": t3, "lookahead": lookahead})
            log(f"  n={n} {dname:8s} {cfg!s:24s} asm={r['asm']} lookahead={lookahead:d} {t:7.3f} s {rate / 1e12:6.2f} T/s "
                f"{frac:6.1%} of ceiling same-as-first={same}; phase 3 alone {t3:.3f} s")
            d = start = buf = result = col_t = None
            torch.cuda.empty_cache()
        minplus.ASM_MODE[dt] = default_asm
        minplus.PAIRS.update(saved_pairs)
        first = None
        torch.cuda.empty_cache()
    results["tune"] = rows


def stage_solve(results, gen, sizes, dtypes, blocks, ceilings, repeats):
    log("== full blocked FW solves (device-resident, padded)")
    rows = []
    for n in sizes:
        answers = {}
        for dname in dtypes:
            for block in blocks:
                dt = DTYPES[dname]
                wmax = 3 if dname == "int16" else 3  # same graph family for every dtype: results comparable
                g = torch.Generator(device="cuda")
                g.manual_seed(n)
                start = random_start(n, dt, 0.5, wmax, g)
                d = start.clone()
                buf = torch.empty((block, d.shape[0]), dtype=dt, device="cuda")

                def run():
                    d.copy_(start)
                    rounds.fw_inplace(d, block, col_buffer=buf, n_pivots=n)

                copy_t = statistics.median(cuda_time(lambda: d.copy_(start), repeats=3))
                times = [t - copy_t for t in cuda_time(run, repeats=repeats)]
                t = statistics.median(times)
                rate = n ** 3 / t
                key = "int16" if dname == "int16" else dname
                frac = rate / ceilings[key] if key in ceilings else float("nan")
                result = as_float(d, n, False)
                same = None
                if answers:
                    ref = next(iter(answers.values()))
                    same = bool(torch.equal(result, ref))
                answers.setdefault(block, result)
                rows.append({"n": n, "dtype": dname, "block": block, "seconds": t, "spread": [min(times), max(times)],
                             "updates_per_s": rate, "fraction_of_ceiling": frac, "equal_to_first": same,
                             "gpu_mem_gib": torch.cuda.max_memory_allocated() / 2**30})
                log(f"  n={n:6d} {dname:8s} B={block:4d} {t:8.3f} s  {rate / 1e12:6.2f} T/s  "
                    f"{frac:6.1%} of ceiling  same-as-first={same}")
                d = start = buf = None  # free the GPU memory before the next size
                torch.cuda.empty_cache()
    results["solve"] = rows


def stage_sass(results):
    log("== SASS of the phase-3 kernel (fused add-min instructions)")
    out = {}
    for dname in ("int32", "int16", "float32"):
        dt = DTYPES[dname]
        c = torch.zeros((256, 256), dtype=dt, device="cuda")
        a = torch.zeros((256, 128), dtype=dt, device="cuda")
        b = torch.zeros((128, 256), dtype=dt, device="cuda")
        bm, bn, w, u, chunk_a, stages = minplus.MinplusConfig(*minplus.MINPLUS_CONFIG[dt])
        k = minplus._minplus_kernel[(4,)](c, a, b, c, 256, 256, 128, 256, 1, 1, 256, 256, 1, 256, 1,
                                            minplus.inf_for(c), CLAMP=False, HAS_C2=False, EVEN=True,
                                            BLOCK_M=bm, BLOCK_N=bn, GROUP_M=8,
                                            ASM=minplus.ASM_MODE.get(dt, 0), UNROLL=u,
                                            CHUNK_A=chunk_a, STAGES=stages, num_warps=w)
        sass = ""
        try:  # disassemble the cubin with the cuobjdump Triton ships or the system's
            import subprocess, tempfile, shutil
            tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
            with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
                f.write(k.asm["cubin"]); f.flush()
                sass = subprocess.run([tool, "--dump-sass", f.name], capture_output=True, text=True).stdout
        except Exception as exc:  # noqa: BLE001
            log(f"  (no SASS: {exc})")
        ops = [ln.split()[1] if len(ln.split()) > 1 else "" for ln in sass.splitlines() if "/*" in ln]
        counts = {}
        for op in ops:
            base_op = op.split(".")[0].strip(";")
            if base_op.isupper() and base_op.isalpha() or base_op[:1].isupper():
                counts[base_op] = counts.get(base_op, 0) + 1
        counts = dict(sorted(counts.items(), key=lambda kv: -kv[1])[:12])
        out[dname] = {"counts": counts, "n_regs": getattr(k, "n_regs", None), "n_spills": getattr(k, "n_spills", None)}
        log(f"  {dname}: regs={out[dname]['n_regs']} spills={out[dname]['n_spills']} {counts}")
    results["sass"] = out


def stage_paths(results, sizes=(8192, 16384), densities=(0.01,), repeats=2):
    """Issue 4: whole API solve with successors vs distance-only, side by side."""
    import apsp
    from apsp.graph import EdgeList, Graph

    log("== paths: successors recovered after the solve vs distance-only (API, int32)")
    rows = []
    rng = np.random.default_rng(int(time.time()))
    for n in sizes:
        for dens in densities:
            mask = rng.random((n, n), dtype=np.float32) < dens
            np.fill_diagonal(mask, False)
            src, dst = np.nonzero(mask)
            del mask
            t0 = time.perf_counter()
            g = Graph.from_edges(EdgeList(n, src, dst, rng.integers(1, 101, size=src.size)))
            g.to_csr()
            _ = g.max_abs_weight
            log(f"  n={n} density={dens}: graph of {g.nnz} edges built in {time.perf_counter() - t0:.1f} s")
            t0 = time.perf_counter()
            apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int32")  # warm
            log(f"  warm distance-only solve {time.perf_counter() - t0:.1f} s")
            t0 = time.perf_counter()
            apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int32", return_successors=True)
            log(f"  warm solve with successors {time.perf_counter() - t0:.1f} s")
            t_plain, t_paths, c_plain, c_paths = [], [], [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                r0 = apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int32")
                t_plain.append(time.perf_counter() - t0)
                c_plain.append(r0.timings["compute"])
                t0 = time.perf_counter()
                r1 = apsp.shortest_paths(g, method="fw", backend="gpu", dtype="int32", return_successors=True)
                t_paths.append(time.perf_counter() - t0)
                c_paths.append(r1.timings["compute"] + r1.timings["paths"])
            same = bool(np.array_equal(r0.distances, r1.distances))
            csr = g.to_csr()
            bad = 0
            for _ in range(2000):
                i, j = (int(x) for x in rng.integers(0, n, size=2))
                if i == j or r1.distances[i, j] == r1.unreachable:
                    continue
                path, total = [i], 0
                while path[-1] != j and len(path) <= n:
                    u, v = path[-1], int(r1.successors[path[-1], j])
                    lo, hi = csr.indptr[u], csr.indptr[u + 1]
                    pos = lo + np.searchsorted(csr.indices[lo:hi], v)
                    if v < 0 or pos >= hi or csr.indices[pos] != v:
                        bad += 1
                        break
                    total += int(csr.data[pos])
                    path.append(v)
                bad += path[-1] == j and total != r1.distances[i, j]
            row = {"n": n, "density": dens, "total_plain_s": statistics.median(t_plain),
                   "total_paths_s": statistics.median(t_paths), "gpu_plain_s": statistics.median(c_plain),
                   "gpu_paths_s": statistics.median(c_paths), "same_distances": same, "bad_paths_of_2000": bad}
            row["ratio_total"] = row["total_paths_s"] / row["total_plain_s"]
            row["ratio_gpu"] = row["gpu_paths_s"] / row["gpu_plain_s"]
            row["timings_plain"], row["timings_paths"] = r0.timings, r1.timings
            log("  stages without / with successors (s): "
                + ", ".join(f"{k} {r0.timings.get(k, 0):.3f}/{v:.3f}" for k, v in r1.timings.items()))
            rows.append(row)
            log(f"  n={n} density={dens}: distance-only {row['total_plain_s']:.3f} s (GPU {row['gpu_plain_s']:.3f}), "
                f"with successors {row['total_paths_s']:.3f} s (GPU {row['gpu_paths_s']:.3f}); "
                f"ratio {row['ratio_total']:.2f}x total, {row['ratio_gpu']:.2f}x on the GPU; "
                f"same distances={same}, bad sampled paths={bad}")
    results["paths"] = rows


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--stages", default="ceiling,sass,check,sweep,solve")
    p.add_argument("--sizes", default="8192,16384,32768")
    p.add_argument("--dtypes", default="int32,int16,float32")
    p.add_argument("--blocks", default="128")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None)
    p.add_argument("--int16-pairs", choices=("default", "on", "off"), default="default",
                   help="int16 products as int32 pairs (apsp.gpu.minplus.PAIRS) in every stage but tune: "
                        "on = every product that can, whatever its size; off = never")
    args = p.parse_args()
    if args.int16_pairs != "default":
        minplus.PAIRS.update(enabled=args.int16_pairs == "on", min_size=0)
    stages = args.stages.split(",")
    results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
               "int16_pairs": {k: minplus.PAIRS[k] for k in ("enabled", "min_size")},
               "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    log(f"device: {results['device']}  torch {results['torch']}  triton {results['triton']}")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(int(time.time()))
    ceilings = {}
    ok = True
    try:
        if "ceiling" in stages:
            ceilings = stage_ceiling(results)
        if "sweep" in stages or "tune" in stages:
            sweep_rows = stage_sweep(results, gen)
        if "tune" in stages:
            stage_tune(results, sweep_rows, ceilings)
        if "sass" in stages:
            stage_sass(results)
        if "check" in stages:
            ok = stage_check(results, gen)
        if "paths" in stages:
            stage_paths(results)
        if "solve" in stages:
            stage_solve(results, gen, [int(s) for s in args.sizes.split(",")], args.dtypes.split(","),
                        [int(b) for b in args.blocks.split(",")], ceilings, args.repeats)
    finally:
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
