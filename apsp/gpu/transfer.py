"""Copies of large matrices between host and device: pinned staging buffers, filled or drained by threads.

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

Even so, a fresh destination's first-touch page faults are a large part of
a big copy's time. A solve that knows its result's shape before its rounds
run makes it a `HostResult`: the result array, its pages faulted in on other
threads while the device computes, so the copy at the end writes into memory
already mapped.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from . import cuda
from .devarray import DeviceArray
from .footprint import STAGE_BYTES, STAGES  # the pinned staging buffers (the memory plan counts them)

#: results above this size go through the staging pipeline; smaller ones in one copy
PARALLEL_BYTES = 16 << 20
#: an upload is cut into at least this many bands (where rows allow), so that copies overlap fills
UPLOAD_BANDS = 8
#: threads draining the staging buffers into the result
COPY_THREADS = 8
#: threads faulting a `HostResult`'s pages in, and the rows each task touches (bytes)
TOUCH_THREADS = 8
TOUCH_BYTES = 16 << 20
#: one write per page faults the page in (huge pages: one write faults the whole huge page)
PAGE_BYTES = 4096

_pinned: dict = {}
_pinned_lock = threading.Lock()
_pool: dict = {}


def to_host(t, out: np.ndarray | None = None, result: "HostResult | None" = None) -> np.ndarray:
    """A C-contiguous numpy copy of ``t`` (a tensor of any strides, or a `DeviceArray` with
    contiguous rows), in ``out`` when given, or in ``result``'s array (`HostResult`: each band
    asked for as the copy reaches it, so that its touchers let go of it first).

    ``out`` must be C-contiguous with ``t``'s shape and dtype; every entry is overwritten.
    """
    driver = isinstance(t, DeviceArray)
    dtype = np.dtype(str(t.dtype).replace("torch.", ""))
    rows_of = None
    if result is not None:
        assert result.array is not None, "to_host into a closed HostResult"
        out, rows_of = result.array, result.rows
    if out is None:
        out = np.empty(tuple(t.shape), dtype=dtype)
    elif out.shape != tuple(t.shape) or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {dtype} array of shape {tuple(t.shape)}, "
                         f"got {out.dtype} {out.shape}")
    small = out.nbytes < PARALLEL_BYTES or t.dim() == 0 or t.shape[0] < 2
    if small or t.device.type != "cuda" or out.nbytes // t.shape[0] > STAGE_BYTES:
        # one copy (rows wider than a staging buffer: the driver's own staging)
        if rows_of is not None:
            rows_of(0, out.shape[0])
        if driver:
            t.to_numpy(out)
        else:
            import torch

            torch.from_numpy(out).copy_(t)
        return out
    buffers, arrays, lock = _staging("driver" if driver else t.device)
    with lock:  # one pipeline at a time per device: the staging buffers are shared
        stager = _DriverStager() if driver else _CudaStager(t.device, buffers)
        # at least a band per draining thread, so that a mid-sized result is drained in parallel too
        band = max(out.nbytes // t.shape[0], out.nbytes // COPY_THREADS)
        staged_copy(t, out, stager, arrays, _named_pool("d2h", COPY_THREADS), rows_of, band)
    return out


def band_rows(rows: int, row_bytes: int, stage_bytes: int = STAGE_BYTES) -> list[tuple[int, int]]:
    """Row bands of at most ``stage_bytes`` each (at least one row), covering ``0..rows``."""
    step = max(1, stage_bytes // max(row_bytes, 1))
    return [(a, min(a + step, rows)) for a in range(0, rows, step)]


def staged_copy(src, out: np.ndarray, stager, buffers: list[np.ndarray], pool: ThreadPoolExecutor,
                rows_of=None, band_bytes: int | None = None) -> None:
    """Copy the rows of ``src`` into ``out`` through ``buffers`` (flat uint8 arrays), band by band
    (``rows_of(a, b)``: where rows ``a:b`` go, default ``out[a:b]``; bands of at most ``band_bytes``,
    default a buffer's size).

    ``stager.start(src_rows, slot, staged)`` starts the copy of a band into staging buffer
    ``slot`` (``staged``: the numpy view it fills) and returns what ``stager.wait`` waits on. Band ``i`` waits for the
    buffer it reuses to be drained (band ``i - len(buffers)``), so the device copies
    run ahead of the host copies by up to ``len(buffers)`` bands.
    """
    rows = out.shape[0]
    row_bytes = out.nbytes // rows if rows else 0
    tail = out.shape[1:]
    draining: list[Future | None] = [None] * len(buffers)

    def drain(token, staged, dest):
        stager.wait(token)
        np.copyto(dest, staged)

    try:
        largest = min(buf.nbytes for buf in buffers)
        for i, (a, b) in enumerate(band_rows(rows, row_bytes, min(largest, band_bytes or largest))):
            slot = i % len(buffers)
            previous = draining[slot]
            if previous is not None:
                previous.result()
            staged = buffers[slot][:(b - a) * row_bytes].view(out.dtype).reshape((b - a, *tail))
            token = stager.start(src[a:b], slot, staged)
            draining[slot] = pool.submit(drain, token, staged, out[a:b] if rows_of is None else rows_of(a, b))
    finally:
        for job in filter(None, draining):  # even on an error: no thread may still use a buffer or out
            job.exception()
    for job in filter(None, draining):
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


class _DriverStager(_CudaStager):
    """`_CudaStager` for `DeviceArray` rows, on a stream of the CUDA driver."""

    def __init__(self):
        self.stream = cuda.Stream()
        self.stream.wait_event(cuda.current().record_event())  # copy only what the producers finished

    def start(self, rows: DeviceArray, slot: int, staged: np.ndarray):
        src, pitch, width, count = rows._rows()
        cuda.copy_2d(staged.ctypes.data, width, src, pitch, width, count, dst_host=True, stream=self.stream.handle)
        return self.stream.record_event()


def upload_rows(dst, fill) -> None:
    """Fill the device matrix ``dst`` (a tensor or `DeviceArray` with contiguous rows) from the host
    band by band: ``fill(a, b, staged)`` writes rows ``a:b`` into ``staged`` (a C-contiguous numpy
    array of ``dst``'s dtype, in a pinned staging buffer on a GPU), whose copy to the device is
    queued on a side stream at once, so that the next band's fill runs beside it. A buffer is
    filled again once its last copy is done. Work queued on the current stream before the call
    (the matrix's fill with INF) comes first; work queued after it waits for the copies."""
    rows = int(dst.shape[0])
    if rows == 0 or not all(dst.shape):
        return
    dtype = np.dtype(str(dst.dtype).replace("torch.", ""))
    row_bytes = int(dst.shape[1]) * dtype.itemsize
    if isinstance(dst, DeviceArray):
        buffers, arrays, lock = _staging("driver")
        stager: _Upload = _DriverUpload()
    elif dst.device.type == "cuda":
        buffers, arrays, lock = _staging(dst.device)
        stager = _TorchUpload(dst.device, buffers)
    else:  # CPU tensors (Triton's interpreter): the same bands, through ordinary memory
        size = min(STAGE_BYTES, max(rows * row_bytes // 2, row_bytes))
        arrays, lock, stager = [np.empty(size, np.uint8) for _ in range(2)], threading.Lock(), _HostUpload()
    with lock:  # the staging buffers are shared with `to_host`
        staged_upload(dst, fill, stager, arrays, dtype)


def staged_upload(dst, fill, stager, buffers: list[np.ndarray], dtype: np.dtype) -> None:
    """`upload_rows`' band loop over ``buffers`` (flat uint8 arrays) and a ``stager`` (``start(rows,
    slot, staged)`` queues a band's copy and returns what ``wait`` waits on; ``finish()`` orders
    the current stream after the copies)."""
    rows, tail = int(dst.shape[0]), tuple(int(x) for x in dst.shape[1:])
    row_bytes = int(np.prod(tail)) * dtype.itemsize
    pending: list = [None] * len(buffers)
    band = min(min(buf.nbytes for buf in buffers), max(rows * row_bytes // UPLOAD_BANDS, row_bytes))
    try:
        for i, (a, b) in enumerate(band_rows(rows, row_bytes, band)):
            slot = i % len(buffers)
            if pending[slot] is not None:
                stager.wait(pending[slot])  # its last band is on the device
                pending[slot] = None
            staged = buffers[slot][:(b - a) * row_bytes].view(dtype).reshape((b - a, *tail))
            fill(a, b, staged)
            pending[slot] = stager.start(dst[a:b], slot, staged)
    finally:  # even on an error: no copy may still read a buffer another pipeline fills next
        for token in pending:
            if token is not None:
                stager.wait(token)
    stager.finish()


class _Upload:
    """Host-to-device band copies (`staged_upload`): the interface of the three kinds below."""

    def start(self, rows, slot: int, staged: np.ndarray):
        raise NotImplementedError

    def wait(self, token) -> None:
        pass

    def finish(self) -> None:
        pass


class _DriverUpload(_Upload):
    """Band copies on a stream of the CUDA driver, after the work queued before (the INF fill)."""

    def __init__(self):
        self.stream = cuda.Stream()
        self.stream.wait_event(cuda.current().record_event())

    def start(self, rows: DeviceArray, slot: int, staged: np.ndarray):
        dst, pitch, width, count = rows._rows()
        cuda.copy_2d(dst, pitch, staged.ctypes.data, width, width, count, src_host=True, stream=self.stream.handle)
        return self.stream.record_event()

    def wait(self, token) -> None:
        token.synchronize()

    def finish(self) -> None:
        cuda.current().wait_event(self.stream.record_event())


class _TorchUpload(_Upload):
    """Band copies from pinned tensors on a torch side stream."""

    def __init__(self, device, tensors):
        import torch

        self.torch, self.tensors, self.device = torch, tensors, device
        self.stream = torch.cuda.Stream(device)
        self.stream.wait_stream(torch.cuda.current_stream(device))

    def start(self, rows, slot: int, staged: np.ndarray):
        pinned = self.tensors[slot][:staged.nbytes].view(rows.dtype).view(rows.shape)
        with self.torch.cuda.stream(self.stream):
            rows.copy_(pinned, non_blocking=True)
        return self.stream.record_event()

    def wait(self, token) -> None:
        token.synchronize()

    def finish(self) -> None:
        self.torch.cuda.current_stream(self.device).wait_stream(self.stream)


class _HostUpload(_Upload):
    """CPU tensors: each band copied in as it is made."""

    def start(self, rows, slot: int, staged: np.ndarray):
        import torch

        rows.copy_(torch.from_numpy(staged))


def _staging(device):
    """This device's pinned staging buffers (tensors, or the driver's buffers for ``"driver"``),
    as numpy arrays too, and the lock of the pipeline using them (made on first use, kept for
    the process)."""
    key = str(device)
    with _pinned_lock:
        if key not in _pinned:
            if key == "driver":
                bufs = [cuda.PinnedBuffer(STAGE_BYTES) for _ in range(STAGES)]
            else:
                import torch

                bufs = [torch.empty(STAGE_BYTES, dtype=torch.uint8, pin_memory=True) for _ in range(STAGES)]
            _pinned[key] = (bufs, [b.numpy() for b in bufs], threading.Lock())
        return _pinned[key]


class HostResult:
    """A result's host array ``array`` (C order), its pages faulted in by background threads, in
    order, from the moment it is made, while the device computes.

    The copy asks for its rows with `rows` as it reaches them: their bands no thread has started
    are left to the copy (which faults them in itself, as it would have), those under way finish
    first, so no page is written by a toucher and the copy at once; the touchers go on ahead of the
    copy. ``prefaulted``: the share of the array faulted in when the copy began. `close` (also on an
    error) stops the touchers and drops the array.
    """

    def __init__(self, shape: tuple[int, ...], dtype):
        self.array: np.ndarray | None = np.empty(shape, dtype=dtype)  # None once closed
        flat = self.array.reshape(-1).view(np.uint8)
        self._step = max(PAGE_BYTES, TOUCH_BYTES // PAGE_BYTES * PAGE_BYTES)
        pool = _named_pool("touch", TOUCH_THREADS)
        self._jobs = [pool.submit(_touch, flat[a:a + self._step]) for a in range(0, flat.size, self._step)]
        self.prefaulted: float | None = None

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """``array[r0:r1]``, once no toucher writes into it any more."""
        assert self.array is not None, "rows() of a closed HostResult"
        if self.prefaulted is None:
            self.prefaulted = sum(job.done() for job in self._jobs) / max(len(self._jobs), 1)
        row_bytes = self.array.nbytes // max(self.array.shape[0], 1)
        _stop(self._jobs[r0 * row_bytes // self._step:-(-r1 * row_bytes // self._step)])
        return self.array[r0:r1]

    def close(self) -> None:
        _stop(self._jobs)
        self._jobs, self.array = [], None


def _stop(jobs) -> None:
    for job in jobs:
        job.cancel()
    for job in jobs:
        if not job.cancelled():
            job.exception()  # wait for a band under way


def _touch(band: np.ndarray) -> None:
    band[::PAGE_BYTES] = 0  # numpy releases the GIL here: the touchers run beside the solve's thread
    band[-1:] = 0


def stage_ahead() -> None:
    """Pin the driver's staging buffers on a thread now (about 0.15 s for 256 MB, during which
    the driver makes other CUDA calls of the process wait)."""
    if "driver" not in _pinned:
        threading.Thread(target=_staging, args=("driver",), name="apsp-pin", daemon=True).start()


def _named_pool(name: str, threads: int) -> ThreadPoolExecutor:
    """The process's pool ``name`` (made on first use)."""
    with _pinned_lock:
        if name not in _pool:
            _pool[name] = ThreadPoolExecutor(threads, thread_name_prefix=f"apsp-{name}")
        return _pool[name]
