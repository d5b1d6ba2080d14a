"""GPU Floyd-Warshall without torch: the FW skeleton over `DriverEngine`.

A process that has not imported torch would spend 3-5 s importing it for a solve
whose work may take a fraction of a second (the homework command at n = 10,000:
0.6 s of compute in a 6.5 s run). Distances-only in-core FW needs only device
memory, copies, two streams and the FW kernels, so it runs on the CUDA driver
(`apsp.gpu.cuda`) with the same kernels and the same round driver
(`apsp.gpu.rounds`) as the torch engine. `solve` (the registered GPU FW solver)
takes this path when torch is not imported yet and the solve needs nothing else
(no paths, the blocked variant, device 0); otherwise the torch engine of
`apsp.gpu.fw`. ``APSP_GPU_RUNTIME=torch`` or ``=driver`` forces either.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import triton
import triton.language as tl

from .. import dtypes
from ..planner import gpu_padded
from ..solvers import SolveOptions, SolveOutput
from . import cuda, interpreting
from .devarray import DeviceArray
from .minplus import inf_for, run_kernel
from .rounds import DEFAULT_BLOCK, InCoreEngine, check_fits
#: rows x columns of one program of the fill and finalize kernels
TILE = 64


@triton.jit
def _fill_kernel(d_ptr, total, value, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(d_ptr + i, value, mask=i < total)


@triton.jit
def _scatter_edges_kernel(d_ptr, indptr_ptr, indices_ptr, weights_ptr, stride, BLOCK: tl.constexpr):
    # one program per row: its edges into the row, then the diagonal lowered to 0 (the FW start)
    row = tl.program_id(0)
    start = tl.load(indptr_ptr + row)
    end = tl.load(indptr_ptr + row + 1)
    row_ptr = d_ptr + row.to(tl.int64) * stride
    for e0 in range(start, end, BLOCK):
        e = e0 + tl.arange(0, BLOCK)
        ok = e < end
        col = tl.load(indices_ptr + e, mask=ok, other=0)
        tl.store(row_ptr + col, tl.load(weights_ptr + e, mask=ok), mask=ok)
    tl.debug_barrier()  # the diagonal's edge, if any, is stored before it is read
    diag = row_ptr + row
    tl.store(diag, tl.minimum(tl.load(diag), 0))


@triton.jit
def _finalize_kernel(d_ptr, n, stride, limit, unreachable, lo, hi, flag_ptr,
                     CHECK: tl.constexpr, MARK: tl.constexpr, BLOCK: tl.constexpr):
    # the cut-off check (any value in [lo, hi): apsp.dtypes.cutoff_suspected) and the
    # unreachable mark (values above limit), in one read of the matrix
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = (rows < n)[:, None] & (cols < n)[None, :]
    ptrs = d_ptr + rows.to(tl.int64)[:, None] * stride + cols[None, :]
    v = tl.load(ptrs, mask=ok, other=0)
    if CHECK:
        suspect = ((v >= lo) & (v < hi) & ok).to(tl.int32)
        tl.atomic_max(flag_ptr, tl.max(tl.max(suspect, axis=1), axis=0))
    if MARK:
        far = (v > limit) & ok
        tl.store(ptrs, tl.where(far, unreachable, v).to(v.dtype), mask=far)


def prepare() -> None:
    """Pay Triton's once-per-process compiler start (hashing its own sources, loading the backend:
    0.3-0.7 s before the first kernel, even from a warm cache) by loading the fill kernel of the
    usual dtypes; meant for the background start, beside the input's read."""
    for dtype in (np.int16, np.int32):
        d = DeviceArray.empty((16, 16), dtype)
        run_kernel(_fill_kernel, (1,), d, 256, inf_for(d), BLOCK=4096, num_warps=4)


def usable(opts: SolveOptions) -> bool:
    """Whether this solve takes the torch-free path (module docstring)."""
    forced = os.environ.get("APSP_GPU_RUNTIME", "")
    if forced in ("torch", "driver"):
        return forced == "driver"
    return ("torch" not in sys.modules and not interpreting() and opts.variant == "blocked"
            and not (opts.successors or opts.predecessors) and opts.device in (None, 0, "cuda", "cuda:0"))


def upload(array: np.ndarray) -> DeviceArray:
    """A device copy of a 1-D or 2-D numpy array (1-D arrays as one row)."""
    host = np.ascontiguousarray(array.reshape(1, -1) if array.ndim == 1 else array)
    return DeviceArray.empty(host.shape, host.dtype).copy_(host)


class _Timer:
    """Stage timer on CUDA events of the main stream (no host sync per stage)."""

    def __init__(self):
        self.marks: list = []

    def mark(self, name: str) -> None:
        self.marks.append((name, cuda.current().record(timing=True)))

    def stages(self) -> dict:
        if self.marks:
            self.marks[-1][1].synchronize()
        return {name: end.seconds_since(start) for (_, start), (name, end) in zip(self.marks, self.marks[1:])}


class DriverEngine(InCoreEngine):
    """The torch-free GPU engine of the FW skeleton (`apsp.fwsolve`); see `apsp.gpu.fw.GPUEngine`,
    whose duties it shares: a padded in-core matrix, the look-ahead rounds, the cut-off check
    and the unreachable mark on the device, the result copied out through pinned staging."""

    def __init__(self, dtype, negative: bool, n: int, timer: _Timer | None = None):
        super().__init__(dtype, negative, n, timer)
        self.n_pad = gpu_padded(n, interpreted=False)

    def empty(self, shape):
        return DeviceArray.empty(shape, self.dtype)

    @staticmethod
    def sync() -> None:
        cuda.synchronize()

    # -- the in-core matrix --------------------------------------------------------------
    def _allocate(self) -> DeviceArray:
        check_fits(self.n_pad, self.dtype, *cuda.memory_info())
        d = DeviceArray.empty((self.n_pad, self.n_pad), self.dtype)
        total = self.n_pad * self.n_pad
        block = 4096
        run_kernel(_fill_kernel, (triton.cdiv(total, block),), d, total, inf_for(d), BLOCK=block, num_warps=4)
        return d

    def load(self, graph) -> None:
        self.d = d = self._allocate()
        if graph.dense is not None:
            d[: graph.n, : graph.n].copy_(graph.fw_matrix(self.dtype))
            return
        csr = graph.to_csr()
        data = csr.data
        if not (data.dtype.kind in "iu" and self.dtype.kind == "i"):
            data = data.astype(self.dtype)  # float conversions stay numpy's, as in the torch engine
        indptr, indices = upload(csr.indptr), upload(csr.indices)
        weights = upload(np.ascontiguousarray(data, dtype=self.dtype))
        run_kernel(_scatter_edges_kernel, (graph.n,), d, indptr, indices, weights, d.stride(0),
                   BLOCK=128, num_warps=4)
        self._keep = (indptr, indices, weights)  # until the queued scatter has read them

    def write_rows(self, i0: int, i1: int, rows: np.ndarray) -> None:
        if self.d is None:
            self.d = self._allocate()
        self.d[i0:i1, :self.n].copy_(np.ascontiguousarray(rows, dtype=self.dtype))

    def read_rows(self, i0: int, i1: int) -> np.ndarray:
        return self.d[i0:i1, :self.n].to_numpy()

    def negative_diagonal(self) -> np.ndarray:
        item = self.dtype.itemsize
        diag = np.empty(self.n, self.dtype)
        if self.n:
            # the diagonal as n rows of one element, a row pitch apart
            cuda.copy_2d(diag.ctypes.data, item, self.d.data_ptr(), (self.d.stride(0) + 1) * item, item, self.n,
                         dst_host=True)
            cuda.current().synchronize()
        return np.flatnonzero(diag < 0)

    def finalize(self):
        """(distances, None, None) on the host."""
        from .transfer import to_host

        self.mark("compute")
        work = self.d[:self.n, :self.n]
        check = self.cutoff_band is not None
        mark = self.dtype.kind != "f"
        if (check or mark) and self.n:
            flag = upload(np.zeros(1, np.int32))
            lo, hi = self.cutoff_band if check else (0, 0)
            grid = (triton.cdiv(self.n, TILE), triton.cdiv(self.n, TILE))
            run_kernel(_finalize_kernel, grid, self.d, self.n, self.d.stride(0),
                       int(dtypes.reachable_limit(self.dtype, self.negative)),
                       int(dtypes.unreachable_value(self.dtype)) if mark else 0, int(lo), int(hi), flag,
                       CHECK=check, MARK=mark, BLOCK=TILE, num_warps=4)
            if check:
                self.cutoff_suspected = bool(flag.to_numpy()[0, 0])
        self.mark("paths")
        dist = to_host(work)
        self.mark("d2h")
        return dist, None, None


def solve(graph, opts: SolveOptions) -> SolveOutput:
    """GPU Floyd-Warshall solver, registered as ``("fw", "gpu")``: the skeleton over `DriverEngine`
    where `usable`, else `apsp.gpu.fw.solve` (torch)."""
    if not usable(opts):
        from .fw import solve as torch_solve

        return torch_solve(graph, opts)
    from ..fwsolve import run

    cuda.start()
    timer = _Timer()
    timer.mark("start")
    engine = DriverEngine(opts.dtype, graph.has_negative_weights, graph.n, timer)
    engine.cutoff_band = opts.cutoff_band
    (dist, _, _), block, info = run(graph, opts, engine, solver="fw-gpu", default_block=DEFAULT_BLOCK)
    timings = timer.stages()
    timings.pop("paths", None)
    info.update(device=cuda.device_name(), variant="blocked", gpu_runtime="cuda driver (no torch)")
    if engine.cutoff_suspected is not None:
        info["cutoff_suspected"] = engine.cutoff_suspected
    return SolveOutput(dist=dist, predecessors=None, successors=None, block_size=block, timings=timings, info=info)
