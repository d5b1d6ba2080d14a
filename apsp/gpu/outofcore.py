"""The GPU engine of the out-of-core solver (`apsp.outofcore`): stripes over PCIe on their own streams.

Three CUDA streams work at once: ``load_stripe`` copies the next stripe host ->
device, the compute stream (the current stream) runs the min-plus kernels of
`apsp.gpu.minplus` on the current stripe, and ``store`` copies the previous
stripe device -> host. Events order them: a stripe buffer is loaded only
after its last store finished, computed only after its load, stored only
after its compute; host rows are loaded only after their last store.

The host matrix is page-locked in place (``cudaHostRegister``) so copies run
asynchronously at full PCIe speed. When that is impossible (a memory-mapped
file bigger than RAM, or registration refused) stripes are staged through
pinned bounce buffers by the CPU, a few threads at a time.

Under ``TRITON_INTERPRET=1`` the same engine runs on CPU tensors, with
synchronous copies (that is how the test suite checks the GPU code path).
"""
from __future__ import annotations

import contextlib
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from .fw import GPUEngine

__all__ = ["GPUStreamEngine"]


def _register(array: np.ndarray) -> bool:
    """Page-lock ``array`` for asynchronous copies; False when CUDA refuses."""
    if array.nbytes == 0:
        return False
    with contextlib.suppress(RuntimeError, AttributeError, AssertionError, TypeError):
        if int(torch.cuda.cudart().cudaHostRegister(array.ctypes.data, array.nbytes, 0)) == 0:
            return True
        torch.cuda.synchronize()  # clears nothing, but surfaces sticky errors early
    return False


def _unregister(array: np.ndarray) -> None:
    with contextlib.suppress(RuntimeError, AttributeError, AssertionError, TypeError):
        torch.cuda.cudart().cudaHostUnregister(array.ctypes.data)


class GPUStreamEngine(GPUEngine):
    """`apsp.gpu.fw.GPUEngine`'s tile kernels plus stripe copies, for `apsp.outofcore.stream_fw`.

    Parameters
    ----------
    dtype : numpy dtype of the matrix
    negative : bool
        The graph has negative weights (kernels clamp at -INF).
    host : (n, n) ndarray
        The host matrix (anonymous memory or a memory-mapped file).
    plan : apsp.outofcore.StreamPlan
    device : torch device, optional
    pin_host : bool
        Page-lock the host matrix (default). False, or a matrix in a file,
        stages copies through pinned bounce buffers instead.
    """

    def __init__(self, dtype, negative: bool, host: np.ndarray, plan, device=None, pin_host: bool = True):
        super().__init__(dtype, negative, device=device)
        self.host_np = host
        self.host = torch.from_numpy(host)
        self.registered = bool(self.cuda and pin_host and _register(host))
        self.staged = self.cuda and not self.registered
        if not self.cuda:
            return
        self.compute_stream = torch.cuda.current_stream(self.device)
        self.load_stream = torch.cuda.Stream(device=self.device)
        self.store_stream = torch.cuda.Stream(device=self.device)
        # per buffer: the event its load ends with, the event after which it may be overwritten
        self._loaded: list[torch.cuda.Event | None] = [None] * plan.buffers
        self._free: list[torch.cuda.Event | None] = [None] * plan.buffers
        self._stored_rows: dict[tuple[int, int], torch.cuda.Event] = {}
        if self.staged:
            shape = (plan.rows, plan.n)
            self._bounce_in = [torch.empty(shape, dtype=self.host.dtype, pin_memory=True) for _ in range(2)]
            self._bounce_out = [torch.empty(shape, dtype=self.host.dtype, pin_memory=True) for _ in range(2)]
            self._in_done: list[torch.cuda.Event | None] = [None, None]
            self._next_in = self._next_out = 0
            # (event, bounce index, i0, i1): stores still to copy to the host
            self._pending: deque[tuple[torch.cuda.Event, int, int, int]] = deque()
            threads = min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 4)
            self._pool = ThreadPoolExecutor(max(1, threads))

    # -- stripes ----------------------------------------------------------------------
    def _host_copy(self, dst: np.ndarray, src: np.ndarray) -> None:
        """A large host memcpy split over threads (numpy releases the GIL)."""
        rows = dst.shape[0]
        parts = min(rows, self._pool._max_workers, max(1, dst.nbytes // (32 << 20)))
        if parts <= 1:
            np.copyto(dst, src)
            return
        cuts = np.linspace(0, rows, parts + 1).astype(int)
        jobs = [self._pool.submit(np.copyto, dst[a:b], src[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
        for job in jobs:
            job.result()

    def _finish_stores(self, rows=None) -> None:
        """Copy finished staged stores to the host: all, or up to the one of ``rows``."""
        while self._pending:
            if rows is not None and not any((p[2], p[3]) == rows for p in self._pending):
                return
            event, b, i0, i1 = self._pending.popleft()
            event.synchronize()
            self._host_copy(self.host_np[i0:i1], self._bounce_out[b][:i1 - i0].numpy())

    def load_stripe(self, slot: int, buf, i0: int, i1: int) -> None:
        if not self.cuda:
            buf.copy_(self.host[i0:i1])
            return
        with torch.cuda.stream(self.load_stream):
            free = self._free[slot]
            if free is not None:
                self.load_stream.wait_event(free)
            if self.staged:
                self._finish_stores(rows=(i0, i1))
                b = self._next_in
                self._next_in ^= 1
                in_done = self._in_done[b]
                if in_done is not None:
                    in_done.synchronize()
                bounce = self._bounce_in[b][:i1 - i0]
                self._host_copy(bounce.numpy(), self.host_np[i0:i1])
                buf.copy_(bounce, non_blocking=True)
                self._in_done[b] = self.load_stream.record_event()
            else:
                stored = self._stored_rows.get((i0, i1))
                if stored is not None:
                    self.load_stream.wait_event(stored)
                buf.copy_(self.host[i0:i1], non_blocking=True)
            self._loaded[slot] = self.load_stream.record_event()

    def wait_loaded(self, slot: int) -> None:
        if self.cuda:
            loaded = self._loaded[slot]
            assert loaded is not None, "wait_loaded() before load_stripe()"
            self.compute_stream.wait_event(loaded)

    def store(self, slot: int, buf, i0: int, i1: int) -> None:
        if not self.cuda:
            self.host[i0:i1].copy_(buf)
            return
        computed = self.compute_stream.record_event()
        if self.staged:
            b = self._next_out
            self._next_out ^= 1
            while any(p[1] == b for p in self._pending):  # the bounce buffer's last store first
                self._finish_stores(rows=next((p[2], p[3]) for p in self._pending if p[1] == b))
        with torch.cuda.stream(self.store_stream):
            self.store_stream.wait_event(computed)
            if self.staged:
                self._bounce_out[b][:i1 - i0].copy_(buf, non_blocking=True)
            else:
                self.host[i0:i1].copy_(buf, non_blocking=True)
            stored = self.store_stream.record_event()
        self._free[slot] = stored
        if self.staged:
            self._pending.append((stored, b, i0, i1))
        else:
            self._stored_rows[(i0, i1)] = stored

    def release(self, slot: int) -> None:
        if self.cuda:
            self._free[slot] = self.compute_stream.record_event()

    def sync(self) -> None:
        self.rt.sync()
        if self.staged:
            self._finish_stores()

    def context(self):
        """Run the solve with this engine's device current (kernels launch on its stream)."""
        return torch.cuda.device(self.device) if self.cuda else contextlib.nullcontext()

    def close(self) -> None:
        self.sync()
        if self.registered:
            _unregister(self.host_np)
            self.registered = False
        if self.staged:
            self._pool.shutdown()

    def info(self) -> dict:
        out = {"engine": "gpu", **self.rt.info()}
        if self.cuda:
            out["host_copies"] = "staged" if self.staged else "pinned"
        return out
