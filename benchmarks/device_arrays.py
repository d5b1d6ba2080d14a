"""GPU arrays in and out: a whole `apsp.shortest_paths` call on a CUDA tensor beside the kernel's own time.

    python benchmarks/device_arrays.py                 # n = 8192 int32, 5 samples each
    python benchmarks/device_arrays.py --n 4096 --repeats 9 --out device_arrays.json

In one process, alternating the routes sample by sample (so no route always runs after the same
one), after a warm-up call of each (Triton's compiles, torch's allocator, the pinned staging):

* ``kernel``: the Floyd-Warshall rounds alone on the padded start matrix, in the dtype the call
  solved in and with the block it used (`apsp.gpu.fw.GPUEngine.rounds`), timed by CUDA events;
* ``device``: ``shortest_paths(tensor)``, a CUDA int32 tensor in, the result a CUDA tensor
  (``output`` left to its default), wall clock from the call to the result on the card
  (synchronised) - the promise is ``device / kernel <= 1.3``;
* ``device_to_host``: the same input with ``output="numpy"`` (the result copied to the host);
* ``host``: the numpy matrix in, numpy out (the host route: weight facts on the host, upload,
  solve, download).

Each route's samples, median and the ratios to the kernel's median are printed and, with ``--out``,
written as JSON (machine, torch and triton versions, commit when given in ``APSP_COMMIT``).
Every result is compared with the host route's before any timing. Needs CUDA.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: the promised bound on a whole call over the kernel's time
LIMIT = 1.3


def log(*a):
    print(*a, flush=True)


def kernel_seconds(torch, graph, dtype, block: int) -> float:
    """The FW rounds alone on the padded start matrix of ``graph`` (the call's dtype and block)."""
    from apsp.gpu.fw import GPUEngine
    from apsp.gpu.rounds import TorchRuntime

    engine = GPUEngine(dtype, graph.has_negative_weights, graph.n, runtime=TorchRuntime("cuda"))
    engine.load(graph)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in engine.rounds(block):
        pass
    end.record()
    end.synchronize()
    seconds = start.elapsed_time(end) / 1e3
    del engine
    return seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-weight", type=int, default=1000)
    ap.add_argument("--density", type=float, default=0.5, help="share of the pairs that are edges")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)

    import torch

    import apsp
    from apsp.gpu.devinput import device_graph

    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA device")
    gen = torch.Generator(device="cuda").manual_seed(12345)
    n = args.n
    t = torch.randint(1, args.max_weight + 1, (n, n), device="cuda", dtype=torch.int32, generator=gen)
    t[torch.rand((n, n), device="cuda", generator=gen) > args.density] = 0
    host = t.cpu().numpy()

    def device_call():
        r = apsp.shortest_paths(t, method="fw", backend="gpu")
        torch.cuda.synchronize()
        return r

    routes = {
        "device": device_call,
        "device_to_host": lambda: apsp.shortest_paths(t, method="fw", backend="gpu", output="numpy"),
        "host": lambda: apsp.shortest_paths(host, method="fw", backend="gpu"),
    }
    # warm-up and exactness: every route's result equals the host route's
    want = routes["host"]()
    first = device_call()
    assert isinstance(first.distances, torch.Tensor) and first.distances.device.type == "cuda"
    assert first.info["device_input"] == "kept on the device", first.info["device_input"]
    for name, call in routes.items():
        got = call().to_numpy()
        if not (got.dtype == want.dtype and np.array_equal(got.distances, want.distances)):
            raise SystemExit(f"MISMATCH: route {name} differs from the host route")
    log(f"n={n} int32 in, solved in {first.dtype.name}, block {first.block_size}, tried "
        f"{first.info.get('dtype_tried')}: every route equals the host route")
    graph = device_graph(t)
    dtype, block = first.dtype, first.block_size
    kernel_seconds(torch, graph, dtype, block)  # warm

    samples: dict[str, list[float]] = {name: [] for name in ["kernel", *routes]}
    order = ["kernel", *routes]
    for rep in range(args.repeats):
        for name in order[rep % len(order):] + order[:rep % len(order)]:  # rotate who goes first
            if name == "kernel":
                samples[name].append(kernel_seconds(torch, graph, dtype, block))
                continue
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            r = routes[name]()
            torch.cuda.synchronize()
            samples[name].append(time.perf_counter() - t0)
            del r
    medians = {name: statistics.median(s) for name, s in samples.items()}
    for name, s in samples.items():
        ratio = medians[name] / medians["kernel"]
        log(f"  {name:15s} median {medians[name] * 1e3:9.2f} ms  x{ratio:5.2f} of the kernel   "
            f"samples {', '.join(f'{v * 1e3:.2f}' for v in s)}")
    ratio = medians["device"] / medians["kernel"]
    verdict = "within" if ratio <= LIMIT else "BEYOND"
    log(f"device tensor in, distances on the card: x{ratio:.3f} of the kernel's time, {verdict} the {LIMIT}x limit")
    if args.out:
        args.out.write_text(json.dumps({
            "n": n, "dtype_in": "int32", "dtype_solved": dtype.name, "block": block,
            "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "commit": os.environ.get("APSP_COMMIT"), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "samples_s": samples, "median_s": medians, "ratio_device_to_kernel": ratio, "limit": LIMIT,
            "timings_of_last_device_call": first.timings}, indent=1))
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
