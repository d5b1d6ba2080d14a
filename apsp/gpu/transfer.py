"""Device-to-host copies of large results."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

#: results above this size are copied in row bands by several threads, each on its own stream:
#: a pageable copy is staged through a pinned buffer by the CPU, one band at a time per thread
PARALLEL_BYTES = 64 << 20
COPY_THREADS = 4


def to_host(t: torch.Tensor) -> np.ndarray:
    """A C-contiguous numpy copy of ``t`` (any strides).

    The copy lands in numpy's own allocation, which asks the OS for huge pages:
    first-touch page faults of a fresh multi-GB buffer from ``.cpu()`` cost about
    as much as the transfer itself.
    """
    out = np.empty(tuple(t.shape), dtype=np.dtype(str(t.dtype).replace("torch.", "")))
    if t.device.type != "cuda" or out.nbytes < PARALLEL_BYTES or t.dim() == 0:
        torch.from_numpy(out).copy_(t)
        return out
    torch.cuda.current_stream(t.device).synchronize()  # the producers run on the current stream
    rows = t.shape[0]
    bands = np.linspace(0, rows, 4 * COPY_THREADS + 1).astype(int)

    def copy_band(i):
        a, b = int(bands[i]), int(bands[i + 1])
        if a == b:
            return
        stream = torch.cuda.Stream(t.device)
        with torch.cuda.stream(stream):
            torch.from_numpy(out[a:b]).copy_(t[a:b])
        stream.synchronize()

    with ThreadPoolExecutor(COPY_THREADS) as pool:
        list(pool.map(copy_band, range(len(bands) - 1)))
    return out
