"""A dense numpy call, stage by stage, against the machine's limits.

In one run: the host-device copy bandwidth, pinned and pageable, both ways (the limits of the
start matrix's upload and the result's download); the Floyd-Warshall kernels alone (device
events, median of several runs); and the whole default call ``apsp.shortest_paths(matrix)`` on a
float64 numpy matrix (warm, median of ``--repeats``), each stage printed beside its limit or goal.
Without a GPU it measures the CPU backend's call against its compute.

    python benchmarks/dense_call.py [--sizes 4096 8192] [--repeats 5] [--weights int|float]
                                    [--density 0.5] [--json out.json]

torch is never imported, so the default call takes the torch-free CUDA driver runtime, as a
program that only imports apsp does.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

#: the goals of the whole default call, seconds, by n (a GPU host)
GOALS = {4096: 0.05, 8192: 0.15}
#: bytes each bandwidth is measured with
COPY_BYTES = 256 << 20


def matrix(n: int, weights: str, density: float, seed: int = 0) -> np.ndarray:
    """A float64 weight matrix: ``density`` of the pairs edges (weights 1..99, whole or not), zeros
    (no edge) elsewhere."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 100, (n, n)).astype(np.float64)
    if weights == "float":
        a += rng.random((n, n))
    a[rng.random((n, n)) >= density] = 0
    return a


def copy_bandwidth(repeats: int) -> dict:
    """GB/s of host-device copies through the CUDA driver: pinned and pageable, each way (median)."""
    from apsp.gpu import cuda

    cuda.start()
    stream = cuda.Stream()
    device = cuda.Allocation(COPY_BYTES)
    pinned = cuda.PinnedBuffer(COPY_BYTES)
    pageable = np.ones(COPY_BYTES, dtype=np.uint8)  # touched: its pages are mapped
    out = {}
    width = 1 << 20  # 1 MiB rows
    for name, host in (("pinned", pinned.ptr), ("pageable", pageable.ctypes.data)):
        for way in ("h2d", "d2h"):
            times = []
            for _ in range(repeats):
                t = time.perf_counter()  # wall clock: a pageable copy blocks the host while it stages
                if way == "h2d":
                    cuda.copy_2d(device.ptr, width, host, width, width, COPY_BYTES // width, src_host=True,
                                 stream=stream.handle)
                else:
                    cuda.copy_2d(host, width, device.ptr, width, width, COPY_BYTES // width, dst_host=True,
                                 stream=stream.handle)
                stream.synchronize()
                times.append(time.perf_counter() - t)
            out[f"{name}_{way}"] = COPY_BYTES / statistics.median(times) / 1e9
    return out


def kernel_seconds(a: np.ndarray, dtype, repeats: int) -> float:
    """The blocked FW rounds alone on the device, on the call's start matrix (median of device events)."""
    from apsp.gpu import cuda
    from apsp.gpu.fw import GPUEngine
    from apsp.gpu.rounds import DEFAULT_BLOCK, DriverRuntime
    from apsp.graph import Graph

    g = Graph.from_dense(a)
    engine = GPUEngine(dtype, g.has_negative_weights, g.n, runtime=DriverRuntime())
    engine.load(g)
    start_matrix = engine.d
    times = []
    for _ in range(repeats):
        engine.d = start_matrix.new_empty(tuple(start_matrix.shape))
        engine.d.copy_(start_matrix)
        begin = cuda.current().record_event(timing=True)
        for _ in engine.rounds(DEFAULT_BLOCK):
            pass
        end = cuda.current().record_event(timing=True)
        end.synchronize()
        times.append(end.seconds_since(begin))
    return statistics.median(times)


def whole_call(a: np.ndarray, repeats: int, backend: str) -> tuple[float, dict, object]:
    """The default call's wall time and stages (each the median over ``repeats`` warm calls)."""
    import apsp

    kwargs = {} if backend == "auto" else {"backend": backend}
    first = apsp.shortest_paths(a, **kwargs)  # compiles and warms what the call uses
    walls, stages = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        r = apsp.shortest_paths(a, **kwargs)
        walls.append(time.perf_counter() - t)
        stages.append(r.timings)
        assert np.array_equal(r.distances, first.distances)
        del r
    names = [k for k in stages[0] if all(k in s for s in stages)]
    return statistics.median(walls), {k: statistics.median(s[k] for s in stages) for k in names}, first


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--weights", choices=["int", "float"], default="int")
    p.add_argument("--density", type=float, default=0.5)
    p.add_argument("--backend", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args(argv)
    from apsp.gpu import gpu_available

    gpu = args.backend != "cpu" and gpu_available(explicit=args.backend == "gpu")[0]
    report: dict = {"gpu": gpu, "weights": args.weights, "density": args.density, "sizes": {}}
    if gpu:
        bw = copy_bandwidth(args.repeats)
        report["bandwidth_gb_s"] = bw
        print("copies, GB/s (median of %d, %d MiB): " % (args.repeats, COPY_BYTES >> 20)
              + ", ".join(f"{k} {v:.1f}" for k, v in bw.items()))
    for n in args.sizes:
        a = matrix(n, args.weights, args.density)
        wall, stages, r = whole_call(a, args.repeats, args.backend)
        dt = np.dtype(r.dtype)
        row: dict = {"wall_s": wall, "stages_s": stages, "dtype": dt.name, "method": r.method, "backend": r.backend}
        print(f"\nn = {n}: {r.method} on the {r.backend} in {dt.name}; whole call {wall:.4f} s"
              + (f" (goal <= {GOALS[n]} s: {'met' if wall <= GOALS[n] else 'NOT met'})"
                 if gpu and n in GOALS else ""))
        input_gb, matrix_gb = a.nbytes / 1e9, n * n * dt.itemsize / 1e9
        limits = {}
        if gpu:
            kernel = kernel_seconds(a, dt, args.repeats)
            row["kernel_s"] = kernel
            limits = {"h2d": matrix_gb / bw["pinned_h2d"], "d2h": matrix_gb / bw["pinned_d2h"], "compute": kernel}
        for stage, seconds in stages.items():
            note = ""
            if stage in limits:
                note = f"   limit {limits[stage]:.4f} s ({limits[stage] / max(seconds, 1e-9):.0%} of it)"
            if stage == "validate":
                note = f"   {input_gb / max(seconds, 1e-9):.1f} GB/s of the {input_gb:.2f} GB input read"
            print(f"  {stage:<10} {seconds:8.4f} s{note}")
        if not gpu and "compute" in stages:
            print(f"  compute is {stages['compute'] / wall:.0%} of the call")
        report["sizes"][n] = row
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
