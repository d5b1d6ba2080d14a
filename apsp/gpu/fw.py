"""GPU Floyd-Warshall solver: start matrix on the device, blocked solve, result to the host.

Variants (``variant=`` backend option), the ladder the benchmark shows:

* ``"blocked"`` (default): phase 1 in one program, phases 2 and 3 as tiled
  min-plus products (``apsp.gpu.minplus``);
* ``"classic"``: textbook blocked FW, blocking factor 32 and one
  matrix cell per thread;
* ``"naive"``: one launch over the whole matrix per k.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from .. import dtypes
from ..planner import gpu_padded
from ..solvers import SolveOptions, SolveOutput
from . import default_device
from .minplus import inf_for
from .rounds import DEFAULT_BLOCK, InCoreEngine, check_fits, naive_rounds
from .transfer import to_host


class _Timer:
    """Stage timer: CUDA events on a GPU (no host sync per stage), perf_counter otherwise."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.marks: list[tuple[str, object]] = []

    def mark(self, name: str) -> None:
        if self.cuda:
            ev = torch.cuda.Event(enable_timing=True)
            ev.record()
            self.marks.append((name, ev))
        else:
            self.marks.append((name, time.perf_counter()))

    def stages(self) -> dict:
        if self.cuda:
            torch.cuda.synchronize()
        out = {}
        for (_, start), (name, end) in zip(self.marks, self.marks[1:]):
            out[name] = (start.elapsed_time(end) / 1e3) if self.cuda else (end - start)
        return out


def padded_size(n: int, device: torch.device) -> int:
    return gpu_padded(n, interpreted=device.type != "cuda")


def device_start_matrix(graph, dtype: np.dtype, n_pad: int, device: torch.device) -> torch.Tensor:
    """The FW start matrix built on the device: INF, edges scattered in, diagonal min(0, w_ii)."""
    tdt = getattr(torch, np.dtype(dtype).name)
    if device.type == "cuda":
        check_fits(n_pad, np.dtype(dtype), *torch.cuda.mem_get_info(device))
    d = torch.empty((n_pad, n_pad), dtype=tdt, device=device)
    d.fill_(inf_for(d))
    if graph.dense is not None:
        d[: graph.n, : graph.n].copy_(torch.from_numpy(graph.fw_matrix(dtype)))
    else:
        csr = graph.to_csr()
        # the CSR arrays go over as they are and are expanded on the device: a row index per edge
        # built on the host would be 8 bytes per edge to make and to copy
        counts = torch.from_numpy(np.diff(csr.indptr)).to(device).long()
        r = torch.repeat_interleave(torch.arange(graph.n, device=device), counts, output_size=csr.nnz)
        c = torch.from_numpy(csr.indices).to(device).long()
        data = csr.data
        if not (data.dtype.kind in "iu" and np.dtype(dtype).kind == "i"):
            data = data.astype(dtype)  # float conversions stay numpy's (the weights' exactness checks ran on them)
        w = torch.from_numpy(np.ascontiguousarray(data)).to(device).to(tdt)
        d[r, c] = w
        torch.clamp_(torch.diagonal(d), max=0)
    return d


class GPUEngine(InCoreEngine):
    """The GPU engine of the FW skeleton (`apsp.fwsolve`): torch tensors on one device, Triton kernels.

    The in-core matrix is padded to whole kernel tiles (`padded_size`; padding vertices are
    isolated and never pivots). ``rounds`` is the look-ahead pipeline of `apsp.gpu.minplus`
    (or the classic and naive variants of the benchmark ladder); ``finalize`` recovers paths on
    the device, marks unreachable pairs there and copies the result to the host.
    """

    def __init__(self, dtype, negative: bool, n: int = 0, device=None, variant: str = "blocked",
                 timer: "_Timer | None" = None):
        super().__init__(dtype, negative, n, timer)
        self.device = torch.device(device or default_device())
        self.tdtype = getattr(torch, self.dtype.name)
        self.variant = variant
        self.cuda = self.sync_for_progress = self.device.type == "cuda"
        self.paths_for = None  # (graph, opts) when finalize also recovers paths

    def empty(self, shape):
        return torch.empty(shape, dtype=self.tdtype, device=self.device)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)

    # -- the in-core matrix --------------------------------------------------------------
    def load(self, graph) -> None:
        self.d = device_start_matrix(graph, self.dtype, padded_size(self.n, self.device), self.device)

    def write_rows(self, i0: int, i1: int, rows: np.ndarray) -> None:
        """Rows of a saved state; the padding around it is isolated vertices."""
        if self.d is None:
            n_pad = padded_size(self.n, self.device)
            if self.cuda:
                check_fits(n_pad, self.dtype, *torch.cuda.mem_get_info(self.device))
            self.d = torch.empty((n_pad, n_pad), dtype=self.tdtype, device=self.device)
            self.d.fill_(inf_for(self.d))
            torch.diagonal(self.d).fill_(0)
        self.d[i0:i1, :self.n].copy_(torch.from_numpy(rows))

    def read_rows(self, i0: int, i1: int) -> np.ndarray:
        return self.d[i0:i1, :self.n].cpu().numpy()

    def rounds(self, block: int, start_vertex: int = 0):
        if self.variant != "naive":
            return super().rounds(block, start_vertex,
                                  config=(32, 32, 32, 1) if (self.variant == "classic" and self.cuda) else None)
        self.mark("h2d")
        return naive_rounds(self.d[:self.n, :self.n], self.negative, start_vertex)

    def negative_diagonal(self) -> np.ndarray:
        diag = torch.diagonal(self.d[:self.n, :self.n])
        return torch.nonzero(diag < 0).flatten().cpu().numpy()

    def finalize(self):
        """(distances, successors, predecessors) on the host; paths when `paths_for` is set."""
        self.mark("compute")
        work = self.d[:self.n, :self.n]
        limit = dtypes.reachable_limit(self.dtype, self.negative)
        successors = predecessors = None
        if self.cutoff_band is not None:
            # the public layer's cut-off check, here where reading the matrix costs milliseconds;
            # quarters keep its temporaries small
            self.cutoff_suspected = dtypes.cutoff_suspected(work, self.cutoff_band, chunk=self.n * self.n // 4 + 1)
        if self.paths_for is not None and not self.cutoff_suspected:  # a retry recovers them
            from .paths import successors_and_predecessors

            graph, opts = self.paths_for
            successors, predecessors = successors_and_predecessors(graph, work, limit, opts)
        if self.dtype.kind != "f":
            work.masked_fill_(work > limit, int(dtypes.unreachable_value(self.dtype)))
        self.mark("paths")
        dist = to_host(work)
        successors = None if successors is None else to_host(successors)
        predecessors = None if predecessors is None else to_host(predecessors)
        self.mark("d2h")
        return dist, successors, predecessors


def solve(graph, opts: SolveOptions) -> SolveOutput:
    """GPU Floyd-Warshall solver, registered as ``("fw", "gpu")``: the skeleton (`apsp.fwsolve`)
    over `GPUEngine`."""
    from ..fwsolve import run

    device = torch.device(opts.device or default_device())
    variant = opts.variant
    if opts.checkpoint and variant != "blocked":
        raise ValueError(f"checkpoints need the blocked GPU variant, not {variant!r}")
    timer = _Timer(device)
    timer.mark("start")
    engine = GPUEngine(opts.dtype, graph.has_negative_weights, graph.n, device, variant, timer)
    if opts.successors or opts.predecessors:
        engine.paths_for = (graph, opts)
    engine.cutoff_band = opts.cutoff_band
    naive = variant == "naive"
    (dist, successors, predecessors), block, info = run(
        graph, opts, engine, solver="fw-gpu", block=1 if naive else None,
        default_block=32 if variant == "classic" else DEFAULT_BLOCK)
    timings = timer.stages()
    if not (opts.successors or opts.predecessors):
        timings.pop("paths", None)
    info.update(device=torch.cuda.get_device_name(device) if device.type == "cuda" else "triton-interpreter",
                variant=variant)
    if engine.cutoff_suspected is not None:
        info["cutoff_suspected"] = engine.cutoff_suspected
    return SolveOutput(dist=dist, predecessors=predecessors, successors=successors,
                       block_size=None if naive else block, timings=timings, info=info)
