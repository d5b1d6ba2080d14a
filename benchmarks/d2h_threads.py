"""The result's copy to the host against the threads that drain the staging buffers, and against
a destination whose pages were faulted in beforehand.

    python benchmarks/d2h_threads.py --threads 8 16 --gib 16

Each thread count runs in a fresh process (the drain pool is made once a process): an int32 matrix
of ``--gib`` GiB on the GPU, `apsp.gpu.transfer.to_host` into a fresh array (first-touch page
faults included, as a solve sees them), ``--repeats`` times; then as often into the array of a
`apsp.gpu.transfer.HostResult` whose touchers finished (their time reported apart); every copy
compared with the device tensor on a sample of rows. Needs CUDA.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def one(threads: int, gib: float, repeats: int) -> dict:
    import numpy as np
    import torch

    from apsp.gpu import transfer

    transfer.COPY_THREADS = threads
    n = int((gib * (1 << 30) / 4) ** 0.5)
    t = torch.randint(0, 1 << 30, (n, n), dtype=torch.int32, device="cuda")
    rates, touched, touch_s = [], [], []
    for prefault in [False] * repeats + [True] * repeats:
        out = None
        if prefault:
            t0 = time.perf_counter()
            result = transfer.HostResult((n, n), np.int32)
            while not all(job.done() for job in result._jobs):
                time.sleep(0.001)
            touch_s.append(round(time.perf_counter() - t0, 3))
            out = result.rows(0, n)
        t0 = time.perf_counter()
        out = transfer.to_host(t, out=out)
        (touched if prefault else rates).append(round(out.nbytes / (time.perf_counter() - t0) / 1e9, 2))
        rows = torch.randint(0, n, (64,), device="cuda")
        assert np.array_equal(out[rows.cpu().numpy()], t[rows].cpu().numpy())
        del out
    return {"threads": threads, "n": n, "gb_per_s": rates, "prefaulted_gb_per_s": touched,
            "prefault_s": touch_s}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[8, 16])
    p.add_argument("--gib", type=float, default=16.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, args.gib, args.repeats)))
        return 0
    for threads in args.threads * 2:  # each count twice, interleaved
        run = subprocess.run([sys.executable, __file__, "--one", str(threads), "--gib", str(args.gib),
                              "--repeats", str(args.repeats)], capture_output=True, text=True, check=True)
        print(run.stdout.strip(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
