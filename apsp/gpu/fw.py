"""GPU Floyd-Warshall in core: start matrix on the device, blocked solve, result to the host.

One engine, `GPUEngine`, over the runtime the plan names (``SolveOptions.runtime``, by
`apsp.plan.gpu_runtime`): torch tensors (`TorchRuntime`; CPU tensors under the Triton
interpreter), or the CUDA driver's `apsp.gpu.devarray.DeviceArray`s (`DriverRuntime`), which
spare a process the 3-5 s of ``import torch`` where the solve itself may take a fraction of a
second (the homework command at n = 10,000: 0.6 s of compute in a 6.5 s run). Both run the same
Triton kernels: the start matrix's fill and edge scatter and the final pass below, the round
driver of `apsp.gpu.rounds`.

Variants (``variant=`` backend option, torch only), the ladder the benchmark shows:

* ``"blocked"`` (default): phase 1 in one program, phases 2 and 3 as tiled
  min-plus products (``apsp.gpu.minplus``);
* ``"classic"``: textbook blocked FW, blocking factor 32 and one
  matrix cell per thread;
* ``"naive"``: one launch over the whole matrix per k.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl

from .. import exactness
from ..engine import Finalized, SolveOptions, SolveOutput, run
from ..errors import MemoryPlanError
from .devarray import DeviceArray
from .footprint import fw_needs, gpu_padded
from .minplus import dtype_name, inf_for, minplus_update, run_kernel
from .rounds import DEFAULT_BLOCK, DriverRuntime, TorchRuntime, close_block, fw_rounds, naive_rounds
from .transfer import PARALLEL_BYTES, HostResult, to_host, upload_rows

#: rows x columns of one program of the final pass; entries of one program of the fill
TILE, FILL_BLOCK = 64, 4096

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
    # the cut-off check (any value in [lo, hi): apsp.exactness.cutoff_suspected) and the
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
    usual dtypes; meant for the torch-free background start, beside the input's read."""
    for dtype in (np.int16, np.int32):
        d = DeviceArray.empty((16, 16), dtype)
        run_kernel(_fill_kernel, (1,), d, 256, inf_for(d), BLOCK=FILL_BLOCK, num_warps=4)


def check_fits(n_pad: int, dtype: np.dtype, free: int, total: int) -> None:
    """Last guard before the big allocation, given the device's ``free`` and ``total`` bytes (the memory
    planner decided earlier, on the same formula; free memory may have shrunk since)."""
    need = fw_needs(n_pad, dtype, 0, DEFAULT_BLOCK, interpreted=False)
    if need > free:
        raise MemoryPlanError(
            f"the {n_pad}x{n_pad} {dtype.name} distance matrix needs {need / 2**30:.1f} GiB on the GPU, "
            f"but only {free / 2**30:.1f} of {total / 2**30:.1f} GiB are free; use a smaller dtype, "
            "the CPU backend, or the distributed solver")


def check_and_mark(rt, d, negative: bool, band=None, mark: bool = True) -> bool | None:
    """The cut-off check (any entry of the square ``d`` in ``band``: `apsp.exactness.cutoff_suspected`)
    and, on integer dtypes with ``mark``, the unreachable mark (`apsp.exactness.finalize_unreachable`),
    in one read of ``d`` on the device of the runtime ``rt``; the check's verdict (None without ``band``)."""
    n, dt = d.shape[0], np.dtype(dtype_name(d.dtype))
    check, mark = band is not None, mark and dt.kind != "f"
    if not ((check or mark) and n):
        return False if check else None
    flag = rt.upload(np.zeros(1, np.int32))
    lo, hi = band if check else (0, 0)
    run_kernel(_finalize_kernel, (triton.cdiv(n, TILE), triton.cdiv(n, TILE)), d, n, d.stride(0),
               int(exactness.reachable_limit(dt, negative)), int(exactness.unreachable_value(dt)) if mark else 0,
               int(lo), int(hi), flag, CHECK=check, MARK=mark, BLOCK=TILE, num_warps=4)
    return bool(to_host(flag).flat[0]) if check else None


class GPUEngine:
    """The GPU engine of the FW skeleton (`apsp.engine`) on ``runtime`` (default: torch on ``device``),
    and the torch tile engine of the out-of-core stream and the distributed driver.

    The in-core matrix is padded to whole kernel tiles (`apsp.gpu.footprint.gpu_padded`; padding
    vertices are isolated and never pivots). ``rounds`` is the look-ahead pipeline of
    `apsp.gpu.rounds` (or the classic and naive variants of the benchmark ladder); ``finalize``
    makes the cut-off check (``cutoff_band``), recovers paths (``paths_for``: ``(graph, opts)``),
    marks unreachable pairs, all on the device, and copies the result to the host. ``timed``:
    stage marks (``mark``, ``stages``) from construction on.
    """

    kind = "gpu"
    early_cycle_check = False
    resumes_anywhere = False
    #: the product kernel reads its left factor fastest as a transposed view of a contiguous buffer
    transposed_col_panels = True
    #: products want whole tiles (`apsp.distributed.fw.solve_layout`)
    pads_tiles = True

    def __init__(self, dtype, negative: bool, n: int = 0, device=None, variant: str = "blocked",
                 timed: bool = False, cutoff_band=None, paths_for=None,
                 runtime: TorchRuntime | DriverRuntime | None = None, n_pad: int | None = None,
                 prefault: bool = False, on_device: bool = False):
        self.rt = runtime or TorchRuntime(device)
        self.device, self.cuda, self.sync_for_progress = self.rt.device, self.rt.cuda, self.rt.cuda
        self.dtype, self.negative, self.n = np.dtype(dtype), bool(negative), n
        self.variant, self.cutoff_band, self.paths_for = variant, cutoff_band, paths_for
        self.on_device = on_device  # finalize leaves the result on the device (torch runtime)
        # the plan's padded side (`MemoryPlan.padded`); the tile drivers without a plan pad by their device
        self.n_pad = n_pad or gpu_padded(n, interpreted=not self.cuda)
        self.d: Any | None = None  # the padded matrix: a tensor or DeviceArray, as the runtime makes
        self.marks: list[tuple[str, Any]] | None = [] if timed else None  # (stage, the runtime's event)
        # the result's host array, its pages faulted in by threads while the rounds run (made once the
        # start matrix is up, so that the touchers do not compete with its conversion)
        self.prefault = prefault and self.rt.cuda and n * n * self.dtype.itemsize >= PARALLEL_BYTES
        self.result: HostResult | None = None
        self.mark("start")

    def mark(self, stage: str) -> None:
        """A stage mark on the runtime's events (``timed`` engines)."""
        if self.marks is not None:
            self.marks.append((stage, self.rt.event()))

    def stages(self) -> dict:
        """Seconds of each stage between the marks (waits for the last one)."""
        self.rt.sync()
        assert self.marks is not None, "stages() of an engine made without timed=True"
        return {name: self.rt.seconds(start, end) for (_, start), (name, end) in zip(self.marks, self.marks[1:])}

    # -- tile kernels ----------------------------------------------------------------
    def empty(self, shape):
        return self.rt.empty(shape, self.dtype)

    def sync(self) -> None:
        self.rt.sync()

    @staticmethod
    def transpose(x):
        return x.t()

    def copy(self, dst, src) -> None:
        dst.copy_(src)

    def close_block(self, t) -> None:
        close_block(t, self.negative)

    def minplus(self, c, a, b, parallel: bool = True) -> None:
        minplus_update(c, a, b, self.negative)

    # -- the in-core matrix --------------------------------------------------------------
    def _allocate(self):
        """The padded matrix, INF everywhere (the graph or a saved state goes in next)."""
        if self.cuda:
            check_fits(self.n_pad, self.dtype, *self.rt.memory())
        d = self.empty((self.n_pad, self.n_pad))
        total = self.n_pad * self.n_pad
        run_kernel(_fill_kernel, (triton.cdiv(total, FILL_BLOCK),), d, total, inf_for(d), BLOCK=FILL_BLOCK, num_warps=4)
        return d

    def load(self, graph) -> None:
        """The FW start matrix: INF, the edges scattered in on the device, diagonal min(0, w_ii)."""
        self.d = d = self._allocate()
        if getattr(graph, "device_matrix", None) is not None:  # a GPU input: device to device
            from .devinput import fill_start

            fill_start(d, graph)
            return
        if graph.dense is not None:
            # converted band by band into staging buffers, each band's copy beside the next one's
            # conversion: the start matrix is never whole on the host
            upload_rows(d[:graph.n, :graph.n],
                        lambda a, b, staged: graph.fw_matrix(self.dtype, out=staged, rows=(a, b)))
            return
        # the CSR arrays go over as they are and are expanded on the device: a row index per edge
        # built on the host would be 8 bytes per edge to make and to copy
        csr = graph.to_csr()
        weights = csr.data.astype(self.dtype, copy=False)  # numpy converts: the exactness checks ran on it
        self._keep = [self.rt.upload(a) for a in (csr.indptr, csr.indices, weights)]
        run_kernel(_scatter_edges_kernel, (graph.n,), d, *self._keep, d.stride(0), BLOCK=128, num_warps=4)

    def write_rows(self, i0: int, i1: int, rows: np.ndarray) -> None:
        """Rows of a saved state; the padding around it is isolated vertices."""
        if self.d is None:
            self.d = self._allocate()
        self.rt.copy_in(self.d[i0:i1, :self.n], np.ascontiguousarray(rows, dtype=self.dtype))

    def read_rows(self, i0: int, i1: int) -> np.ndarray:
        assert self.d is not None
        return to_host(self.d[i0:i1, :self.n])

    def rounds(self, block: int, start_vertex: int = 0):
        assert self.d is not None
        self.mark("h2d")
        if self.prefault and self.result is None:
            self.result = HostResult((self.n, self.n), self.dtype)
        if self.variant == "naive":
            return naive_rounds(self.d[:self.n, :self.n], self.negative, start_vertex)
        config = (32, 32, 32, 1) if (self.variant == "classic" and self.cuda) else None
        # the padded matrix keeps every tile full; padding vertices are never pivots
        return (min(self.n, done * block)
                for done in fw_rounds(self.d, block, self.negative, config=config, n_pivots=self.n,
                                      start_round=start_vertex // block))

    def negative_diagonal(self) -> np.ndarray:
        assert self.d is not None
        return np.flatnonzero(self.rt.diagonal(self.d, self.n) < 0)

    def finalize(self) -> Finalized:
        assert self.d is not None
        self.mark("compute")
        work = self.d[:self.n, :self.n]
        suspect = check_and_mark(self.rt, work, self.negative, self.cutoff_band, mark=self.paths_for is None)
        return finished(self.rt, work, self.negative, self.paths_for, suspect, self.mark, self.result,
                        self.on_device)

    def close(self) -> None:
        """Stop the result's touchers (also after an error); the array stays with whoever holds it."""
        if self.result is not None:
            self.result.close()


def finished(rt, work, negative: bool, paths_for, suspect: bool | None, mark=lambda stage: None,
             result: HostResult | None = None, on_device: bool = False):
    """The `Finalized` of the distances ``work`` (vertex order, on the device, cut-off check made,
    unreachable pairs still to be marked where ``paths_for``): with ``paths_for`` ``(graph, opts)``
    the paths recovered (unless a cut-off is suspected: a retry recovers them), then the pairs
    marked; all copied to the host (``mark``: the stage marks; ``result``: the `HostResult` the
    distances go into), or with ``on_device`` left there: ``work`` itself, a view of the padded
    matrix (no second device copy)."""
    successors = predecessors = None
    if paths_for is not None:
        if not suspect:
            from .paths import successors_and_predecessors

            graph, opts = paths_for
            limit = exactness.reachable_limit(np.dtype(opts.dtype), negative)
            successors, predecessors = successors_and_predecessors(graph, work, limit, opts)
        check_and_mark(rt, work, negative)
    mark("paths")
    if on_device:
        out = Finalized(work, successors, predecessors, cutoff_suspected=suspect)
    else:
        out = Finalized(to_host(work, result=result), None if successors is None else to_host(successors),
                        None if predecessors is None else to_host(predecessors), cutoff_suspected=suspect)
    mark("d2h")
    return out


def solve(graph, opts: SolveOptions) -> SolveOutput:
    """GPU Floyd-Warshall in core, registered as ``("fw", "gpu")``: the skeleton (`apsp.engine`) over
    `GPUEngine` on the runtime the plan chose (``opts.runtime``; None: torch)."""
    variant, paths = opts.request.variant, bool(opts.successors or opts.predecessors)
    if opts.request.checkpoint and variant != "blocked":
        raise ValueError(f"checkpoints need the blocked GPU variant, not {variant!r}")
    if opts.runtime == "driver" and (paths or variant != "blocked"):
        raise ValueError("the CUDA driver runtime solves distances with the blocked variant only; "
                         "paths and other variants need runtime 'torch'")
    on_card = getattr(graph, "device_matrix", None) is not None  # a torch tensor already: torch's runtime
    rt = DriverRuntime() if opts.runtime == "driver" and not on_card else TorchRuntime(opts.device)
    on_device = opts.request.output == "torch" and isinstance(rt, TorchRuntime)  # the result stays in its matrix
    engine = GPUEngine(opts.dtype, graph.has_negative_weights, graph.n, variant=variant, timed=True,
                       cutoff_band=opts.cutoff_band, paths_for=(graph, opts) if paths else None, runtime=rt,
                       n_pad=getattr(opts.memory, "padded", None), prefault=not on_device,
                       on_device=on_device)
    naive = variant == "naive"
    try:
        out = run(graph, opts, engine, solver="fw-gpu", block=1 if naive else None,
                  default_block=32 if variant == "classic" else DEFAULT_BLOCK)
    finally:
        engine.close()
    if engine.result is not None and engine.result.prefaulted is not None:
        out.info["result_prefaulted"] = round(engine.result.prefaulted, 3)
    out.timings = engine.stages()
    if not paths:
        out.timings.pop("paths", None)
    out.info.update(rt.info(), variant=variant)
    out.block_size = None if naive else out.block_size
    return out
