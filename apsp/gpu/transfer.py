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


class DeviceBands:
    """A device matrix that is made band by band as a copy asks for its rows: ``make(a, b)``
    returns rows ``a:b`` as a tensor (on ``device``, of ``dtype``), called on the copying stream
    just before their copy, so that one `to_host` pipeline runs through the whole matrix without a
    second copy of it on the device (nd-fw's un-permuted result: each band gathered from the
    layout matrix)."""

    def __init__(self, shape: tuple[int, int], dtype, device, make):
        self.shape, self.dtype, self.device, self.make = tuple(shape), dtype, device, make

    def dim(self) -> int:
        return 2

    def __getitem__(self, rows: slice) -> "_Band":
        return _Band(self.make, rows.start or 0, self.shape[0] if rows.stop is None else rows.stop)


class _Band:
    """Rows ``a:b`` of a `DeviceBands`, made when `_CudaStager.start` calls it."""

    def __init__(self, make, a: int, b: int):
        self.make, self.a, self.b = make, a, b

    def __call__(self):
        return self.make(self.a, self.b)


def to_host(t, out: np.ndarray | None = None, result: "HostResult | None" = None, claim=None) -> np.ndarray:
    """A C-contiguous numpy copy of ``t`` (a tensor of any strides, a `DeviceArray` with
    contiguous rows, or a `DeviceBands`), in ``out`` when given, or in ``result``'s array
    (`HostResult`: each band asked for as the copy reaches it, so that its touchers let go of it first).

    ``out`` must be C-contiguous with ``t``'s shape and dtype; every entry is overwritten.
    ``claim(a, b)``: called (in this thread) before rows ``a:b`` of ``out`` are written, and
    returns them (`HostResult.rows`: its touchers let go of them).
    """
    if result is not None:
        assert result.array is not None, "to_host into a closed HostResult"
        out, claim = result.array, result.rows
    if isinstance(t, DeviceBands):
        return _bands_to_host(t, out, claim)
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
        if claim is not None:
            claim(0, out.shape[0])
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
        staged_copy(t, out, stager, arrays, _named_pool("d2h", COPY_THREADS), claim, band)
    return out


def _bands_to_host(t: DeviceBands, out: np.ndarray | None, claim) -> np.ndarray:
    dtype = np.dtype(str(t.dtype).replace("torch.", ""))
    if out is None:
        out = np.empty(t.shape, dtype=dtype)
    elif out.shape != t.shape or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {dtype} array of shape {t.shape}, got {out.dtype} {out.shape}")
    rows = t.shape[0]
    if rows == 0:
        return out
    if out.nbytes < PARALLEL_BYTES or t.device.type != "cuda" or out.nbytes // rows > STAGE_BYTES:
        import torch

        step = max(1, STAGE_BYTES * STAGES // max(out.nbytes // rows, 1))
        for a in range(0, rows, step):  # bands as large as the staging, each copied the plain way
            b = min(a + step, rows)
            torch.from_numpy(out[a:b] if claim is None else claim(a, b)).copy_(t.make(a, b))
        return out
    buffers, arrays, lock = _staging(t.device)
    with lock:
        staged_copy(t, out, _CudaStager(t.device, buffers), arrays, _named_pool("d2h", COPY_THREADS), claim)
    return out


def band_rows(rows: int, row_bytes: int, stage_bytes: int = STAGE_BYTES) -> list[tuple[int, int]]:
    """Row bands of at most ``stage_bytes`` each (at least one row), covering ``0..rows``."""
    step = max(1, stage_bytes // max(row_bytes, 1))
    return [(a, min(a + step, rows)) for a in range(0, rows, step)]


def staged_copy(src, out: np.ndarray, stager, buffers: list[np.ndarray], pool: ThreadPoolExecutor,
                claim=None, band_bytes: int | None = None) -> None:
    """Copy the rows of ``src`` into ``out`` through ``buffers`` (flat uint8 arrays), band by band
    (``claim(a, b)``: where rows ``a:b`` go, default ``out[a:b]``; bands of at most ``band_bytes``,
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
            draining[slot] = pool.submit(drain, token, staged, out[a:b] if claim is None else claim(a, b))
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

        with torch.cuda.stream(self.stream):
            if isinstance(rows, _Band):  # made here, on this stream: after the copy that last used its memory
                rows = rows()
            pinned = self.tensors[slot][:staged.nbytes].view(rows.dtype).view(rows.shape)
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


#: arrays from this size get their own mapping advised onto transparent huge pages
HUGE_PAGE_BYTES = 1 << 30


def huge_page_array(shape: tuple[int, ...], dtype) -> np.ndarray:
    """``np.empty(shape, dtype)``, large ones in an anonymous mapping advised onto transparent huge
    pages (``MADV_HUGEPAGE``): faulting a 60 GB result in 2 MB pages takes 512 times fewer faults
    than in 4 KB ones, where the kernel's setting allows it (``madvise`` or ``always``). The same
    memory otherwise; the array keeps its mapping alive and unmaps it when dropped."""
    import mmap

    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < HUGE_PAGE_BYTES or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.empty(shape, dtype=dtype)
    mapping = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        mapping.madvise(mmap.MADV_HUGEPAGE)
    except OSError:  # huge pages off: ordinary pages, as np.empty's
        pass
    return np.frombuffer(mapping, dtype=dtype).reshape(shape)


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
        self.array: np.ndarray | None = huge_page_array(shape, dtype)  # None once closed
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


class PinnedPieces:
    """Copies between a host matrix (a CPU tensor) and the device, row block by row block, of a few
    column ranges put side by side, through two pinned buffers of ``nbytes`` each: a transfer from
    pinned memory runs at the bus's speed (50+ GB/s), one from pageable memory at a few GB/s. The
    host side of each block (gathering the ranges into the buffer, or scattering them out) overlaps
    the other buffer's transfer. Transfers are ordered on the device's current stream with the
    products that use them."""

    def __init__(self, device, nbytes: int = STAGE_BYTES):
        import torch

        self.device = device
        self.buffers = [torch.empty(nbytes, dtype=torch.uint8, pin_memory=True) for _ in range(2)]
        self.done: list = [None, None]  # each buffer's last transfer (an event)

    def _buffer(self, k: int, rows: int, width: int, dtype):
        if self.done[k] is not None:
            self.done[k].synchronize()  # its last transfer has finished: it may be written again
        nbytes = rows * width * dtype.itemsize
        return self.buffers[k][:nbytes].view(dtype).view(rows, width)

    def _step(self, width: int, dtype) -> int:
        return max(1, self.buffers[0].numel() // max(1, width * dtype.itemsize))

    def fits(self, width: int, dtype) -> bool:
        return width * dtype.itemsize <= self.buffers[0].numel()

    def to_device(self, host, r0: int, r1: int, ranges, out) -> None:
        """``out`` (a ``(r1 - r0) x width`` device tensor) = host rows ``r0:r1`` over ``ranges``, side by side."""
        import torch

        width = sum(c1 - c0 for c0, c1 in ranges)
        step = self._step(width, host.dtype)
        for i, a in enumerate(range(r0, r1, step)):
            b, k = min(a + step, r1), i % 2
            staged = self._buffer(k, b - a, width, host.dtype)
            torch.cat([host[a:b, c0:c1] for c0, c1 in ranges], 1, out=staged)
            out[a - r0:b - r0].copy_(staged, non_blocking=True)
            self.done[k] = torch.cuda.current_stream(self.device).record_event()

    def to_host(self, rows, host, r0: int, ranges) -> None:
        """The inverse: device ``rows`` into host rows ``r0:`` over ``ranges``."""
        import torch

        width = sum(c1 - c0 for c0, c1 in ranges)
        step = self._step(width, host.dtype)
        pending = None  # the block copied last: scattered once the next one is under way

        def scatter(block):
            a, b, k = block
            self.done[k].synchronize()
            staged = self.buffers[k][:(b - a) * width * host.dtype.itemsize].view(host.dtype).view(b - a, width)
            at = 0
            for c0, c1 in ranges:
                host[r0 + a:r0 + b, c0:c1].copy_(staged[:, at:at + c1 - c0])
                at += c1 - c0

        for i, a in enumerate(range(0, rows.shape[0], step)):
            b, k = min(a + step, rows.shape[0]), i % 2
            staged = self._buffer(k, b - a, width, host.dtype)
            staged.copy_(rows[a:b], non_blocking=True)
            self.done[k] = torch.cuda.current_stream(self.device).record_event()
            if pending is not None:
                scatter(pending)
            pending = (a, b, k)
        if pending is not None:
            scatter(pending)
