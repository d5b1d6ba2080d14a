"""Device-to-host copies of large results: pinned staging buffers, drained by threads.

A copy from the GPU into ordinary (pageable) memory runs at 1-3 GB/s: the driver
stages it through a small pinned buffer of its own, and first-touch page faults
of a fresh multi-GB destination cost as much again. Into pinned memory a copy
runs at 50+ GB/s, but pinning a whole result takes seconds. So `to_host` keeps
a few pinned staging buffers per device (allocated once per process) and
pipelines the result through them in row bands: the DMA of band ``i + 1`` runs
on a side stream while threads copy band ``i`` out of its staging buffer into
the numpy result (numpy releases the GIL for the copy, so the threads touch the
destination's pages in parallel). The same pipeline serves torch tensors and the driver's
`apsp.gpu.devarray.DeviceArray` (its staging buffers from `apsp.gpu.cuda`).
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .devarray import DeviceArray

#: results above this size go through the staging pipeline; smaller ones in one copy
PARALLEL_BYTES = 64 << 20
#: pinned staging buffers per device, and the bytes of each (one band fills one buffer)
STAGES = 8
STAGE_BYTES = 32 << 20
#: threads draining the staging buffers into the result
COPY_THREADS = 8

_pinned: dict = {}
_pinned_lock = threading.Lock()
_pool: dict = {}


def to_host(t, out: np.ndarray | None = None) -> np.ndarray:
    """A C-contiguous numpy copy of ``t`` (a tensor of any strides, or a `DeviceArray` with
    contiguous rows), in ``out`` when given.

    ``out`` must be C-contiguous with ``t``'s shape and dtype; every entry is overwritten.
    """
    driver = isinstance(t, DeviceArray)
    dtype = np.dtype(str(t.dtype).replace("torch.", ""))
    if out is None:
        out = np.empty(tuple(t.shape), dtype=dtype)
    elif out.shape != tuple(t.shape) or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {dtype} array of shape {tuple(t.shape)}, "
                         f"got {out.dtype} {out.shape}")
    small = out.nbytes < PARALLEL_BYTES or t.dim() == 0 or t.shape[0] < 2
    if small or t.device.type != "cuda" or out.nbytes // t.shape[0] > STAGE_BYTES:
        # one copy (rows wider than a staging buffer: the driver's own staging)
        if driver:
            t.to_numpy(out)
        else:
            import torch

            torch.from_numpy(out).copy_(t)
        return out
    buffers, arrays, lock = _staging("driver" if driver else t.device)
    with lock:  # one pipeline at a time per device: the staging buffers are shared
        stager = _DriverStager() if driver else _CudaStager(t.device, buffers)
        staged_copy(t, out, stager, arrays, _threads())
    return out


def band_rows(rows: int, row_bytes: int, stage_bytes: int = STAGE_BYTES) -> list[tuple[int, int]]:
    """Row bands of at most ``stage_bytes`` each (at least one row), covering ``0..rows``."""
    step = max(1, stage_bytes // max(row_bytes, 1))
    return [(a, min(a + step, rows)) for a in range(0, rows, step)]


def staged_copy(src, out: np.ndarray, stager, buffers: list[np.ndarray], pool: ThreadPoolExecutor) -> None:
    """Copy the rows of ``src`` into ``out`` through ``buffers`` (flat uint8 arrays), band by band.

    ``stager.start(src_rows, slot, staged)`` starts the copy of a band into staging buffer
    ``slot`` (``staged``: the numpy view it fills) and returns what ``stager.wait`` waits on. Band ``i`` waits for the
    buffer it reuses to be drained (band ``i - len(buffers)``), so the device copies
    run ahead of the host copies by up to ``len(buffers)`` bands.
    """
    rows = out.shape[0]
    row_bytes = out.nbytes // rows if rows else 0
    tail = out.shape[1:]
    draining = [None] * len(buffers)

    def drain(token, staged, dest):
        stager.wait(token)
        np.copyto(dest, staged)

    try:
        for i, (a, b) in enumerate(band_rows(rows, row_bytes, min(buf.nbytes for buf in buffers))):
            slot = i % len(buffers)
            if draining[slot] is not None:
                draining[slot].result()
            staged = buffers[slot][:(b - a) * row_bytes].view(out.dtype).reshape((b - a, *tail))
            token = stager.start(src[a:b], slot, staged)
            draining[slot] = pool.submit(drain, token, staged, out[a:b])
    finally:
        for job in draining:  # even on an error: no thread may still use a buffer or out
            if job is not None:
                job.exception()
    for job in draining:
        if job is not None:
            job.result()


class _CudaStager:
    """Band copies on one side stream, each followed by an event the draining thread waits on."""

    def __init__(self, device, tensors):
        import torch

        self.tensors = tensors
        self.stream = torch.cuda.Stream(device)
        # the result's producers run on the current stream: copy only what they finished
        self.stream.wait_stream(torch.cuda.current_stream(device))

    def start(self, rows, slot: int, staged: np.ndarray):
        import torch

        pinned = self.tensors[slot][:staged.nbytes].view(rows.dtype).view(rows.shape)
        with torch.cuda.stream(self.stream):
            pinned.copy_(rows, non_blocking=True)
        return self.stream.record_event()

    @staticmethod
    def wait(done) -> None:
        done.synchronize()


class _DriverStager:
    """`_CudaStager` for `DeviceArray` rows, on a stream of the CUDA driver."""

    def __init__(self):
        from . import cuda

        self.cuda = cuda
        self.stream = cuda.Stream()
        self.stream.wait(cuda.current().record())  # copy only what the producers finished

    def start(self, rows: DeviceArray, slot: int, staged: np.ndarray):
        src, pitch, width, count = rows._rows()
        self.cuda.copy_2d(staged.ctypes.data, width, src, pitch, width, count, dst_host=True, stream=self.stream.handle)
        return self.stream.record()

    @staticmethod
    def wait(done) -> None:
        done.synchronize()


def _staging(device):
    """This device's pinned staging buffers (tensors, or the driver's buffers for ``"driver"``),
    as numpy arrays too, and the lock of the pipeline using them (made on first use, kept for
    the process)."""
    key = str(device)
    with _pinned_lock:
        if key not in _pinned:
            if key == "driver":
                from .cuda import PinnedBuffer

                bufs = [PinnedBuffer(STAGE_BYTES) for _ in range(STAGES)]
            else:
                import torch

                bufs = [torch.empty(STAGE_BYTES, dtype=torch.uint8, pin_memory=True) for _ in range(STAGES)]
            _pinned[key] = (bufs, [b.numpy() for b in bufs], threading.Lock())
        return _pinned[key]


def stage_ahead() -> None:
    """Pin the driver's staging buffers on a thread now (about 0.15 s for 256 MB, during which
    the driver makes other CUDA calls of the process wait)."""
    if "driver" not in _pinned:
        threading.Thread(target=_staging, args=("driver",), name="apsp-pin", daemon=True).start()


def _threads() -> ThreadPoolExecutor:
    with _pinned_lock:
        if "pool" not in _pool:
            _pool["pool"] = ThreadPoolExecutor(COPY_THREADS, thread_name_prefix="apsp-d2h")
        return _pool["pool"]
