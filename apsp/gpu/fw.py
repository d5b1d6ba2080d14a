"""GPU Floyd-Warshall solver: start matrix on the device, blocked solve, result to the host.

Variants (``variant=`` backend option), the ladder the benchmark shows:

* ``"blocked"`` (default): phase 1 in one program, phases 2 and 3 as tiled
  min-plus products (``apsp.gpu.minplus``);
* ``"classic"``: the seeds' classic blocked FW, blocking factor 32 and one
  matrix cell per thread;
* ``"naive"``: one launch over the whole matrix per k.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from .. import dtypes
from ..errors import MemoryPlanError, NegativeCycleError
from ..progress import progress_bar
from ..planner import gpu_padded, incore_needs
from ..solvers import DEFAULT_BLOCK as SOLVER_BLOCKS
from ..solvers import SolveOptions, SolveOutput
from . import default_device
from .minplus import TORCH_DTYPES, fw_inplace, inf_for, naive_inplace
from .transfer import to_host

#: default blocking factor (measured: `apsp.solvers.DEFAULT_BLOCK`)
DEFAULT_BLOCK = SOLVER_BLOCKS["gpu"]


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
    tdt = TORCH_DTYPES[np.dtype(dtype)]
    _check_fits(n_pad, np.dtype(dtype), device)
    d = torch.empty((n_pad, n_pad), dtype=tdt, device=device)
    if graph.dense is not None:
        d.fill_(inf_for(d))
        d[: graph.n, : graph.n].copy_(torch.from_numpy(graph.fw_matrix(dtype)))
    else:
        d.fill_(inf_for(d))
        csr = graph.to_csr()
        rows = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(csr.indptr))
        r = torch.from_numpy(rows).to(device)
        c = torch.from_numpy(csr.indices.astype(np.int64)).to(device)
        w = torch.from_numpy(csr.data.astype(dtype)).to(device)
        d[r, c] = w
        torch.clamp_(torch.diagonal(d), max=0)
    return d


def _resumed_matrix(session, dtype: np.dtype, n: int, n_pad: int, device: torch.device) -> torch.Tensor:
    """The device matrix of a checkpoint: its n x n state, isolated padding vertices around it."""
    _check_fits(n_pad, np.dtype(dtype), device)
    d = torch.empty((n_pad, n_pad), dtype=TORCH_DTYPES[np.dtype(dtype)], device=device)
    d.fill_(inf_for(d))
    torch.diagonal(d).fill_(0)

    def write_rows(i0, i1, rows):
        d[i0:i1, :n].copy_(torch.from_numpy(rows))

    session.restore(write_rows)
    return d


def _check_fits(n_pad: int, dtype: np.dtype, device: torch.device) -> None:
    """Last guard before the big allocation (the memory planner decided earlier, on the same formula;
    free memory may have shrunk since)."""
    if device.type != "cuda":
        return
    _, need = incore_needs(n_pad, dtype, "fw", "gpu", block=DEFAULT_BLOCK)
    free, total = torch.cuda.mem_get_info(device)
    if need > free:
        raise MemoryPlanError(
            f"the {n_pad}x{n_pad} {dtype.name} distance matrix needs {need / 2**30:.1f} GiB on the GPU, "
            f"but only {free / 2**30:.1f} of {total / 2**30:.1f} GiB are free; use a smaller dtype, "
            "the CPU backend, or the distributed solver")


def solve(graph, opts: SolveOptions) -> SolveOutput:
    device = torch.device(opts.device or default_device())
    variant = opts.variant
    n = graph.n
    negative = graph.has_negative_weights
    block = opts.block_size or (32 if variant == "classic" else DEFAULT_BLOCK)
    session = None
    if opts.checkpoint:
        if variant != "blocked":
            raise ValueError(f"checkpoints need the blocked GPU variant, not {variant!r}")
        from ..checkpoint import open_session

        session = open_session(graph, opts, solver="fw-gpu", block=block)
        block = session.block_for(opts.block_size, DEFAULT_BLOCK)
    timer = _Timer(device)
    timer.mark("start")
    n_pad = padded_size(n, device)
    start_round = 0
    if session is not None and session.resuming:
        d = _resumed_matrix(session, opts.dtype, n, n_pad, device)
        start_round = session.start_vertex // block
    else:
        d = device_start_matrix(graph, opts.dtype, n_pad, device)
    timer.mark("h2d")
    rounds = -(-n // block) if variant != "naive" else n
    with progress_bar(rounds, opts.progress, desc="apsp gpu", unit="round" if variant != "naive" else "k") as bar:
        sync_every = max(1, rounds // 100)

        def read_rows(i0, i1):
            return d[i0:i1, :n].cpu().numpy()

        def on_progress(done):
            if bar.shown and (done % sync_every == 0 or done == rounds):
                if device.type == "cuda":
                    # so the bar shows finished work, not queued work (only with a bar: a wait
                    # every few rounds would also stall the look-ahead)
                    torch.cuda.synchronize(device)
                bar.set_to(done)
            if session is not None:
                session.after_round(min(n, done * block), read_rows)
            if opts.on_round is not None:
                opts.on_round(min(n, done * block))

        if variant == "naive":
            naive_inplace(d[:n, :n], negative, progress=on_progress)
        else:
            # the padded matrix keeps every tile full; padding vertices are never pivots
            config = (32, 32, 32, 1) if (variant == "classic" and device.type == "cuda") else None
            try:
                fw_inplace(d, block, negative, progress=on_progress, config=config, n_pivots=n,
                           start_round=start_round)
            except KeyboardInterrupt as exc:
                if session is not None:
                    session.interrupted(read_rows, exc=exc)
                raise
    work = d[:n, :n]
    timer.mark("compute")
    if session is not None:
        session.finish()
    diag = torch.diagonal(work)
    if bool((diag < 0).any()):
        bad = torch.nonzero(diag < 0).flatten().cpu().numpy()
        raise NegativeCycleError("Negative cycle detected", vertices=bad)
    inf = inf_for(work)
    if opts.dtype.kind == "f":
        limit = float(np.finfo(opts.dtype).max)
    else:
        limit = inf // 2 if negative else inf - 1
    successors = predecessors = None
    if opts.successors or opts.predecessors:
        from .paths import successors_and_predecessors

        successors, predecessors = successors_and_predecessors(graph, work, limit, opts)
    if opts.dtype.kind != "f":
        work.masked_fill_(work > limit, int(dtypes.unreachable_value(opts.dtype)))
    timer.mark("paths")
    dist = to_host(work)
    successors = None if successors is None else to_host(successors)
    predecessors = None if predecessors is None else to_host(predecessors)
    timer.mark("d2h")
    timings = timer.stages()
    if not (opts.successors or opts.predecessors):
        timings.pop("paths", None)
    info = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "triton-interpreter",
            "variant": variant}
    if session is not None:
        info.update(session.info())
    return SolveOutput(dist=dist, predecessors=predecessors, successors=successors,
                       block_size=block if variant != "naive" else None, timings=timings, info=info)
