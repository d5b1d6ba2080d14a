"""Floyd-Warshall drivers over the Triton kernels of `apsp.gpu.minplus`.

* `close_block`: phase 1 on a tile of any size (one program up to
  ``MAX_CLOSE_BLOCK``, a blocked solve of its own above);
* `fw_rounds` / `fw_inplace`: the blocked solve, with the look-ahead that runs
  phases 1-2 of the next round on a second stream while phase 3 finishes;
* `fw_batched`: the same rounds on a batch of same-sized matrices, one launch per phase
  for the whole batch (many small independent solves would otherwise be bound by launching);
* `naive_rounds`: one launch over the whole matrix per k (the ladder's bottom rung).

The matrix is a torch tensor or a `apsp.gpu.devarray.DeviceArray` (the torch-free path); what
differs between the two (allocating, copies in, timing events, ordering two streams) is their
runtime, `TorchRuntime` or `DriverRuntime`, which the in-core engine (`apsp.gpu.fw`) runs on too; their
streams answer to the same names (``record_event``, ``wait_event``).
"""
from __future__ import annotations

import contextlib
import time

import numpy as np
import triton

from ..engine import DEFAULT_BLOCK as SOLVER_BLOCKS
from . import cuda as driver
from .devarray import DeviceArray
from .minplus import (MAX_CLOSE_BLOCK, _naive_step_kernel, close_tile, close_tiles, inf_for, minplus_update,
                      minplus_update_batched, run_kernel)

DEFAULT_BLOCK = SOLVER_BLOCKS["gpu"]


class TorchRuntime:
    """torch tensors on ``device`` (default: `apsp.gpu.default_device`; CPU tensors under the Triton
    interpreter, without streams): allocation, copies in, the diagonal, timing events, two streams."""

    def __init__(self, device=None):
        import torch

        from . import default_device, make_current

        self.torch = torch
        self.device = torch.device(device or default_device())
        self.cuda = self.device.type == "cuda"
        make_current(self.device)

    def empty(self, shape, dtype):
        return self.torch.empty(shape, dtype=getattr(self.torch, np.dtype(dtype).name), device=self.device)

    def upload(self, array: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(array)).to(self.device)

    def copy_in(self, dst, array: np.ndarray) -> None:
        dst.copy_(self.torch.from_numpy(array))

    def diagonal(self, d, n: int) -> np.ndarray:
        return self.torch.diagonal(d[:n, :n]).cpu().numpy()

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def memory(self) -> tuple[int, int]:
        return self.torch.cuda.mem_get_info(self.device)

    def event(self):
        """A timing mark: a CUDA event on a GPU (no host sync per stage), perf_counter otherwise."""
        if not self.cuda:
            return time.perf_counter()
        ev = self.torch.cuda.Event(enable_timing=True)
        ev.record()
        return ev

    def seconds(self, start, end) -> float:
        return start.elapsed_time(end) / 1e3 if self.cuda else end - start

    def info(self) -> dict:
        return {"device": self.torch.cuda.get_device_name(self.device) if self.cuda else "triton-interpreter"}

    def streams(self):
        """(main, side): the current stream and a new one of high priority (phases 1-2 jump the queue)."""
        if not self.cuda:
            return None, None
        return self.torch.cuda.current_stream(self.device), self.torch.cuda.Stream(self.device, priority=-1)

    def on(self, stream):
        return self.torch.cuda.stream(stream) if self.cuda else contextlib.nullcontext()

    def release(self, tensors, streams) -> None:
        """The tensors live until the ``streams`` are done with them (torch's caching allocator)."""
        if self.cuda:
            for t in tensors:
                for stream in streams:
                    t.record_stream(stream)


class DriverRuntime:
    """`DeviceArray`s on device 0 through the CUDA driver (`apsp.gpu.cuda`): no torch."""

    cuda = True
    device = None
    empty = staticmethod(DeviceArray.empty)
    copy_in = staticmethod(DeviceArray.copy_)
    sync = staticmethod(driver.synchronize)
    memory = staticmethod(driver.memory_info)
    on = staticmethod(driver.on_stream)

    def __init__(self):
        driver.start()

    @staticmethod
    def upload(array: np.ndarray) -> DeviceArray:
        """A device copy of a 1-D or 2-D numpy array (1-D arrays as one row)."""
        host = np.ascontiguousarray(array.reshape(1, -1) if array.ndim == 1 else array)
        return DeviceArray.empty(host.shape, host.dtype).copy_(host)

    @staticmethod
    def diagonal(d: DeviceArray, n: int) -> np.ndarray:
        # the diagonal as n rows of one element, a row pitch apart
        return DeviceArray(d.alloc, d.offset, (n, 1), (d.stride(0) + 1, 1), d.dtype).to_numpy()[:, 0]

    def event(self):
        return driver.current().record_event(timing=True)

    @staticmethod
    def seconds(start, end) -> float:
        return end.seconds_since(start)

    def info(self) -> dict:
        return {"device": driver.device_name(), "gpu_runtime": "cuda driver (no torch)"}

    def streams(self):
        return driver.current(), driver.Stream(priority=-1)

    @staticmethod
    def release(tensors, streams) -> None:
        """Nothing to do: freeing device memory waits for the work using it."""


def close_block(t, negative: bool = False) -> None:
    """Floyd-Warshall on the square tile ``t`` in place (phase 1)."""
    size = t.shape[0]
    if t.shape != (size, size):
        raise ValueError(f"close_block needs a square tile, got {tuple(t.shape)}")
    if size > MAX_CLOSE_BLOCK:
        # too big for one program's registers: close it as a blocked FW of its own
        fw_inplace(t, MAX_CLOSE_BLOCK, negative=negative)
        return
    close_tile(t, negative)


def fw_inplace(d, block: int, negative: bool = False, config=None, col_buffer=None, n_pivots: int | None = None,
               start_round: int = 0, lookahead: bool = True) -> None:
    """Blocked Floyd-Warshall on the square tensor ``d`` in place.

    Each round: close the pivot block (phase 1), update the pivot row and
    column panels (phase 2, the column panel also copied transposed), then the
    min-plus product of column and row panels over the whole matrix (phase 3).
    Tiles in the pivot row/column are recomputed idempotently by phase 3, which
    is cheaper than skipping them.

    ``lookahead`` (default): phases 1-2 of round r+1 run on copies of its pivot
    row and column bands, on a second (high-priority) CUDA stream, while phase
    3 of round r finishes the rest of the matrix; phase 3 of round r+1 then
    writes the bands' final values itself (the pivot block is closed, so
    ``P* (x) P* = P*`` and the product reproduces phase 2's result). Phases 1-2
    are then off the critical path, except the single-program phase 1 of the
    first round. Without CUDA the same steps run one after another.

    ``n_pivots``: only vertices ``0..n_pivots-1`` serve as intermediates; the
    rest are padding (isolated vertices) that keep every dimension a multiple
    of the kernel tile. ``start_round``: resume a solve whose rounds
    ``0..start_round-1`` are done (`apsp.checkpoint`). ``col_buffer``: optional
    scratch of at least ``block x n`` (the look-ahead needs two more of them and
    allocates those).
    """
    for _ in fw_rounds(d, block, negative, config, col_buffer, n_pivots, start_round, lookahead):
        pass


def fw_rounds(d, block: int, negative: bool = False, config=None,
              col_buffer=None, n_pivots: int | None = None, start_round: int = 0,
              lookahead: bool = True):
    """`fw_inplace` as a generator: yields the rounds done after each round's launches are queued."""
    n = d.shape[0]
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    n_real = n if n_pivots is None else n_pivots
    block = min(block, n_real) if n_real else block
    rounds = triton.cdiv(n_real, block)
    if col_buffer is None or col_buffer.shape[0] < block or col_buffer.shape[1] < n:
        col_buffer = d.new_empty((block, n))
    if not lookahead or rounds - start_round < 2:
        for r in range(start_round, rounds):
            k0 = r * block
            kb = min(block, n_real - k0)
            row_panel, col_t = d[k0:k0 + kb, :], col_buffer[:kb, :n]
            _close_panels(row_panel, d[:, k0:k0 + kb], col_t, k0, negative, config)
            minplus_update(d, col_t.t(), row_panel, negative, config=config)
            yield r + 1
        return
    yield from _fw_lookahead(d, block, negative, config, col_buffer, n_real, rounds, start_round)


def _close_panels(row, col, col_t, k0: int, negative: bool, config) -> None:
    """Phases 1-2 of the round whose pivots start at ``k0``: close the pivot block (inside the row
    panel ``row``), update ``row`` and the column panel ``col``, the latter also into ``col_t`` transposed."""
    pivot = row[:, k0:k0 + row.shape[0]]
    close_block(pivot, negative)
    minplus_update(row, pivot, row, negative, config=config)
    minplus_update(col, col, pivot, negative, out2=col_t.t(), config=config)


def _fw_lookahead(d, block, negative, config, col_buffer, n_real, rounds, start_round):
    n = d.shape[0]
    rt = DriverRuntime() if isinstance(d, DeviceArray) else TorchRuntime(d.device)
    cuda, (main, side) = rt.cuda, rt.streams()
    # double-buffered panels: round r's are read by phase 3 while round r+1's are being built
    rows = [d.new_empty((block, n)) for _ in range(2)]
    cols_t = [col_buffer[:block, :n], d.new_empty((block, n))]
    col_scratch = d.new_empty((n, block))

    def bounds(r):
        k0 = r * block
        return k0, min(block, n_real - k0)

    def build_panels(r):
        """Phases 1-2 of round r on copies of its bands (d itself is not written)."""
        k0, kb = bounds(r)
        row, col_t, col = rows[r % 2][:kb], cols_t[r % 2][:kb], col_scratch[:, :kb]
        row.copy_(d[k0:k0 + kb, :])
        col.copy_(d[:, k0:k0 + kb])
        _close_panels(row, col, col_t, k0, negative, config)
        return row, col_t

    panels = build_panels(start_round)
    ready = None
    try:
        for r in range(start_round, rounds):
            if ready is not None:
                main.wait_event(ready)
            row, col_t = panels
            if r + 1 < rounds:
                # the next round's bands first, so that its phases 1-2 can start early
                k1, kb1 = bounds(r + 1)
                minplus_update(d[k1:k1 + kb1, :], col_t[:, k1:k1 + kb1].t(), row, negative, config=config)
                minplus_update(d[:, k1:k1 + kb1], col_t.t(), row[:, k1:k1 + kb1], negative, config=config)
                if cuda:
                    side.wait_event(main.record_event())
                with rt.on(side):
                    panels = build_panels(r + 1)
                if cuda:
                    ready = side.record_event()
            # phase 3 over the whole matrix (the next bands again: idempotent, same values)
            minplus_update(d, col_t.t(), row, negative, config=config)
            yield r + 1
    finally:  # also when the caller stops early: the panels live until both streams are done
        rt.release(rows + cols_t + [col_scratch], (main, side))


def fw_batched(d, block: int, negative: bool = False, n_pivots: int | None = None):
    """Blocked Floyd-Warshall on every matrix ``d[i]`` of a batch x n x n array in place, each
    phase of a round one launch for the whole batch; only vertices ``0..n_pivots-1`` serve as
    intermediates (the rest: padding or vertices whose rounds come later). Plain rounds, no
    look-ahead: a batch is wide enough to fill the GPU in every phase but the first."""
    batch, n = d.shape[0], d.shape[1]
    n_real = n if n_pivots is None else n_pivots
    if batch == 0 or n_real == 0:
        return
    block = min(block, n_real)
    col_buffer = d.new_empty((batch, block, n))
    for k0 in range(0, n_real, block):
        kb = min(block, n_real - k0)
        pivot = d[:, k0:k0 + kb, k0:k0 + kb]
        row_panel = d[:, k0:k0 + kb, :]
        col_panel = d[:, :, k0:k0 + kb]
        col_t = col_buffer[:, :kb, :].transpose(1, 2)
        if kb <= MAX_CLOSE_BLOCK:
            close_tiles(pivot, negative)
        else:
            for i in range(batch):
                close_block(pivot[i], negative)
        minplus_update_batched(row_panel, pivot, row_panel, negative)
        minplus_update_batched(col_panel, col_panel, pivot, negative, out2=col_t)
        minplus_update_batched(d, col_t, row_panel, negative)


def naive_rounds(d, negative: bool = False, start: int = 0):
    """The naive GPU Floyd-Warshall, one launch over the whole matrix per k; yields k + 1 after each."""
    n = d.shape[0]
    block = 32 if d.device.type == "cuda" else 16
    grid = (triton.cdiv(n, block), triton.cdiv(n, block))
    inf = inf_for(d)
    for k in range(start, n):
        run_kernel(_naive_step_kernel, grid, d, n, k, d.stride(0), inf, CLAMP=negative, BLOCK=block,
                   num_warps=4 if d.device.type == "cuda" else 1)
        yield k + 1
