"""The statistics' plan for the nested dissection's rows: their working set on the CPU
(`cpu_rows_memory`, for `apsp.cpu.rowsolve.rows_stats`) and the route on the GPU
(`rows_on_gpu`, `apsp.gpu.rowsolve.rows_stats`).

`apsp.plan.make_stats_plan` asks `rows_on_gpu` whether weighted statistics run as the row solve on
the card: the factors eliminated on the host, uploaded once, blocks of sources' rows solved and
reduced there. Priced against Dijkstra's searches, the CPU row solve and nd-fw's in-core statistics
(the caller's estimates); its memory planned on the card (the packed factors and one block of rows
beside the reductions' scratch) and on the host (the factors, the elimination's peak).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import costs
from .errors import BackendUnavailableError, MemoryPlanError
from .gpu import MachineFacts
from .cpu.threads import thread_count
from .graph import Graph
from .sizes import format_size, parse_size

#: sources per block of rows on the card, at most: the launches per level are paid once a block, so
#: the block is as large as the card holds (a 1000x1000 grid's 4096 int32 rows: 16 GB)
GPU_ROWS_BLOCK = 4096
#: the smallest block the plan shrinks to before refusing
GPU_ROWS_MIN_BLOCK = 64
#: the scratch beside the block: per (source, target) pair of a band the histogram's gathered
#: values and their temporaries (`apsp.gpu.rowsolve.HISTOGRAM_BAND` values a band), at most
#: `GPU_ROWS_SCRATCH`; without a histogram the reductions read the block in place
GPU_ROWS_PAIR_BYTES = 24
GPU_ROWS_SCRATCH = 1 << 30


def _scratch(block: int, n: int, histogram: bool) -> int:
    return min(block * n * GPU_ROWS_PAIR_BYTES, GPU_ROWS_SCRATCH) if histogram else 1 << 20


def gpu_rows_memory(g: Graph, nd, dt: np.dtype, sources: int, histogram: bool, host_memory, gpu_memory,
                    facts: MachineFacts, headroom: int) -> dict:
    """The row solve's working set on the card and the host, with the block of sources that fits
    (`GPU_ROWS_BLOCK` halved down to `GPU_ROWS_MIN_BLOCK`), or `MemoryPlanError`."""
    from .sizes import host_available
    from .supernodal import boundaries, factor_bytes

    item = dt.itemsize
    kept, peak = factor_bytes(nd, boundaries(g, nd), item)
    on_card = kept + 40 * nd.nodes  # `apsp.gpu.rowsolve.device_bytes`, bounded without the factors
    gpu_limit = parse_size(gpu_memory) if gpu_memory is not None else (facts.measured().free or 0) - headroom
    block = max(1, min(GPU_ROWS_BLOCK, sources))
    while block > GPU_ROWS_MIN_BLOCK and on_card + block * nd.size * item + _scratch(block, g.n, histogram) > gpu_limit:
        block //= 2
    gpu_need = on_card + block * nd.size * item + _scratch(block, g.n, histogram)
    if gpu_need > gpu_limit:
        raise MemoryPlanError(
            f"the nested dissection's rows on the GPU for n={g.n} need {format_size(gpu_need)} on the card "
            f"(factors {format_size(kept)}, {block} rows of {nd.size}), but {format_size(max(gpu_limit, 0))} "
            "are allowed (gpu_memory). Ways out: backend='cpu', or method='dijkstra'")
    host_limit = parse_size(host_memory) if host_memory is not None else host_available()
    # the factors, and beside them the elimination's peak or the flat copies the upload packs
    host_need = 6 * 8 * g.n + 2 * (g.n + 1 + g.nnz) * 8 + kept + max(peak, kept) + (8 * g.n if histogram else 0)
    if host_need > host_limit:
        raise MemoryPlanError(
            f"the nested dissection's rows for n={g.n} need {format_size(host_need)} of RAM for their "
            f"factors ({format_size(kept)}), but {format_size(host_limit)} are allowed (host_memory). "
            "Ways out: method='dijkstra'")
    return {"host_bytes": int(host_need), "host_limit": int(host_limit), "threads": 1, "block_rows": int(block),
            "factor_bytes": int(kept), "gpu_bytes": int(gpu_need), "gpu_limit": int(gpu_limit)}


def rows_on_gpu(g: Graph, dt: np.dtype, sources: int, forced: bool, explicit: bool, histogram: bool, host_memory,
                gpu_memory, facts: MachineFacts, headroom: int,
                others: Callable[[object, MachineFacts], dict[str, float]],
                min_n: int, leaf: int) -> tuple[dict | None, str, MachineFacts]:
    """``(memory, reason, facts)`` where the row solve's statistics run on the GPU, else ``(None,
    why not, facts)`` (``why`` empty where the route was not weighed at all); ``facts`` with the
    card's free memory read where it was (once a plan). ``forced``: method 'nd-rows' asked for
    (the cheaper backend of the two, or the GPU alone where ``explicit``); else the automatic
    choice weighs it on graphs of ``min_n`` vertices or more with small separators against
    ``others(ordering)``: the other routes' estimates in seconds by name. ``explicit``: backend
    'gpu' asked for (the interpreter serves only that)."""
    from .dissection import plan as dissect

    usable, why = facts.available(explicit=explicit)
    if not usable:
        if forced and explicit:
            raise BackendUnavailableError(f"backend='gpu': {why}")
        return None, "", facts
    if dt.kind in "iu" and dt.itemsize > 4:
        if forced and explicit:
            raise ValueError(f"the GPU row solve sums distances in int64 words: {dt.name} distances need "
                             "backend='cpu'")
        return None, f"{dt.name} distances: the device sums are int64 words", facts
    if not forced and (g.n < min_n or not costs.nd_rows_plausible(g)):
        return None, "", facts
    nd = dissect(g, 1, leaf, 1)
    facts = facts.measured()
    try:
        memory = gpu_rows_memory(g, nd, dt, sources, histogram, host_memory, gpu_memory, facts, headroom)
    except MemoryPlanError as exc:
        if forced and explicit:
            raise
        return None, f"they do not fit: {exc}", facts
    rates = costs.rates_for(facts.name)
    mine = costs.nd_rows_gpu_stats_seconds(g, sources, dt.itemsize, rates, nd, memory["block_rows"],
                                           memory["factor_bytes"])
    estimates = others(nd, facts)
    versus = ", ".join(f"{s:.3g} s for {name}" for name, s in estimates.items())
    if forced and explicit:
        return memory, f"method 'nd-rows' requested on the GPU: estimated {mine:.3g} s" + (
            f" against {versus}" if versus else ""), facts
    if any(s <= mine for s in estimates.values()):
        return None, f"estimated {mine:.3g} s on the GPU against {versus}", facts
    return memory, (f"rows of the nested dissection's elimination on the GPU, reduced there block by block "
                    f"({memory['block_rows']} sources): estimated {mine:.3g} s against {versus}"), facts


def cpu_rows_memory(g: Graph, nd, dtype: np.dtype, histogram: bool, host_memory=None) -> dict:
    """The row solve's working set: the factors (and their packed copy), the elimination's peak, per thread
    one block of sources' columns (layout size x block) and its scratch; the accumulators and the
    graph's CSR. The block of sources shrinks from `ROWS_BLOCK` to fit, or `MemoryPlanError`."""
    from .sizes import host_available
    from .supernodal import boundaries, factor_bytes

    threads = thread_count()
    limit = parse_size(host_memory) if host_memory is not None else host_available()
    item = dtype.itemsize
    kept, peak = factor_bytes(nd, boundaries(g, nd), item)
    widest = int((nd.end - nd.own_start).max(initial=0))
    # the factors twice: per node as `Factors` holds them, and packed flat for the kernels
    fixed = 6 * 8 * g.n + 2 * (g.n + 1 + g.nnz) * 8 + 2 * kept + (threads * 8 * g.n if histogram else 0)
    block = ROWS_BLOCK
    while block > 8 and fixed + threads * (nd.size + widest) * block * item > limit:
        block //= 2
    need = max(fixed + peak, fixed + threads * (nd.size + widest) * block * item)
    if need > limit:
        raise MemoryPlanError(
            f"the nested dissection's rows for n={g.n} need {format_size(need)} of RAM (factors "
            f"{format_size(kept)}, {threads} threads), but {format_size(limit)} are allowed "
            f"(host_memory). Ways out: method='dijkstra', or fewer threads (NUMBA_NUM_THREADS)")
    return {"host_bytes": int(need), "host_limit": int(limit), "threads": threads, "block_rows": int(block),
            "factor_bytes": int(kept)}


#: sources per block of the row solve (the lanes of its inner loops): 256 ran 1.3-1.6x faster than
#: 64 on a 100x100 grid (2-core dev box, 2026-11-28)
ROWS_BLOCK = 256
