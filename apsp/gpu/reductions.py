"""Per-source reductions of hop distances on the GPU: bit-parallel BFS over blocks of sources.

The level step is `apsp.gpu.bfs`'s kernel (in-neighbour gathers of 32-bit frontier words, a
vertex skipped once every source of a word has reached it, no distance rows written), run on one block of
``32 * words`` consecutive sources at a time, so the bit arrays take
``3 * n * words * 4`` bytes, not ``n^2 / 8``. Nothing is written per pair: each
program counts, for every source of its words, the targets its tile found at this
level, and adds them to the sources' accumulators with atomics (count, sum of
distances, sum of 1/d, largest distance), the reductions of `apsp.stats`.
"""
from __future__ import annotations

import time

import numpy as np
import torch
import triton
import triton.language as tl

from ..cpu.bfs import csr_arrays
from .bfs import BLOCK_V, BLOCK_W, NUM_WARPS, _bfs_level_kernel, _device, _sync, seed_visited

@triton.jit
def _count_level_kernel(nxt, flags, targets, found, n, n_words, level, chunk,
                        BLOCK_V: tl.constexpr, BLOCK_W: tl.constexpr):
    """``found[32 w + b]`` += the targets whose word w of ``nxt`` has bit b: the level's new
    vertices per source, summed over this program's ``chunk`` vertices."""
    group = tl.program_id(0)
    if tl.load(flags + group) < level:  # nothing found at this level: its nxt words are stale
        return
    ws = group * BLOCK_W + tl.arange(0, BLOCK_W)
    w_ok = ws < n_words
    bit_no = tl.arange(0, 32)
    acc = tl.zeros([BLOCK_W, 32], dtype=tl.int32)
    v_start = tl.program_id(1) * chunk
    for v0 in range(v_start, tl.minimum(v_start + chunk, n), BLOCK_V):
        vs = v0 + tl.arange(0, BLOCK_V)
        v_ok = (vs < n) & (tl.load(targets + vs, mask=vs < n, other=0) != 0)
        tile = tl.load(nxt + vs.to(tl.int64)[None, :] * n_words + ws[:, None],
                       mask=w_ok[:, None] & v_ok[None, :], other=0)  # [BLOCK_W, BLOCK_V]
        bits = (tile[:, None, :] >> bit_no[None, :, None]) & 1  # [BLOCK_W, 32, BLOCK_V]
        acc += tl.sum(bits, axis=2)
    rows = (ws * 32)[:, None] + bit_no[None, :]
    tl.atomic_add(found + rows, acc, mask=(acc > 0) & w_ok[:, None])


#: vertices one counting program sums (fewer atomics, enough programs to fill the device)
COUNT_CHUNK = 4096


def bfs_stats(graph, src: np.ndarray, mask: np.ndarray, *, words: int, device=None, progress=None):
    """``(count, total, ecc, harmonic)`` of the sources ``src`` (hop distances to the targets in
    ``mask``) and an info dict; block after block of ``32 * words`` consecutive sources (the plan's
    block, `apsp.costs.reduction_words`)."""
    from ..progress import progress_bar

    dev = _device(device)
    n = graph.n
    t0 = time.perf_counter()
    _, _, in_ptr, in_idx = (torch.from_numpy(a).to(dev) for a in csr_arrays(graph))
    targets = torch.from_numpy(mask.astype(np.int8)).to(dev)
    acc = [torch.zeros(n, dtype=dt, device=dev) for dt in (torch.int64, torch.int64, torch.int64, torch.float64)]
    words = int(words)
    blocks = source_blocks(src, words)
    bits = [torch.empty(n * words, dtype=torch.int32, device=dev) for _ in range(3)]
    timings = {"h2d": time.perf_counter() - t0, "compute": 0.0}
    levels = 0
    with progress_bar(sum(32 * nw for _, nw in blocks), progress, desc=f"stats gpu bfs n={n}",
                      unit="source") as bar:
        for s_base, nw in blocks:
            t0 = time.perf_counter()
            levels = max(levels, _run_block(in_ptr, in_idx, bits, targets, acc, n, s_base, nw, dev))
            _sync(dev)
            timings["compute"] += time.perf_counter() - t0
            bar.update(32 * nw)
    t0 = time.perf_counter()
    out = [t.cpu().numpy() for t in acc]
    out[0][src] += mask[src]  # each source reaches itself at distance 0
    timings["d2h"] = time.perf_counter() - t0
    return tuple(a[src] for a in out), {"timings": timings, "words_per_block": words,
                                        "levels": levels, "device": str(dev)}


def source_blocks(src: np.ndarray, words: int) -> list[tuple[int, int]]:
    """``(first source, words)`` of each block: a block starts at the word holding the next source
    not yet covered and is only as wide as the sources it holds need (at most ``words``), so that a
    slice of the sources (an MPI rank's) costs its own share, not whole blocks of the full range."""
    order = np.unique(src)
    out, i = [], 0
    while i < len(order):
        base = int(order[i]) // 32 * 32
        j = int(np.searchsorted(order, base + 32 * words))
        out.append((base, (int(order[j - 1]) - base) // 32 + 1))
        i = j
    return out


def _run_block(in_ptr, in_idx, bits, targets, acc, n, s_base, nw, device) -> int:
    """The ``32 * nw`` sources from ``s_base``: level after level until none finds anything."""
    visited, frontier, nxt = (b[: n * nw].view(n, nw) for b in bits)
    seed_visited(visited, s_base)
    groups = triton.cdiv(nw, BLOCK_W)
    flags = torch.zeros(groups, dtype=torch.int32, device=device)
    found = torch.zeros(32 * nw, dtype=torch.int32, device=device)
    rows = min(n - s_base, 32 * nw)
    count, total, ecc, harmonic = (a[s_base:s_base + rows] for a in acc)
    grid = (triton.cdiv(n, BLOCK_V), groups)
    count_grid = (groups, triton.cdiv(n, COUNT_CHUNK))
    unused = torch.empty(1, dtype=torch.int32, device=device)  # no dist, pred or succ rows
    level = 0
    while True:
        level += 1
        # level 1 writes every tile of nxt; later levels skip only groups whose search is over
        _bfs_level_kernel[grid](in_ptr, in_idx, frontier, nxt, visited, flags, unused, unused,
                                unused, n, nw, level, s_base, FIRST=level == 1, WITH_PRED=False,
                                WITH_SUCC=False, WITH_PARENT=False, WITH_DIST=False,
                                BLOCK_V=BLOCK_V, BLOCK_W=BLOCK_W, num_warps=NUM_WARPS)
        if int(flags.max()) < level:
            return level - 1
        found.zero_()
        _count_level_kernel[count_grid](nxt, flags, targets, found, n, nw, level, COUNT_CHUNK,
                                        BLOCK_V=BLOCK_V, BLOCK_W=BLOCK_W, num_warps=NUM_WARPS)
        c = found[:rows].to(torch.int64)
        count += c
        total += c * level
        # divided by a tensor: torch divides by a scalar as a product with its reciprocal on CUDA,
        # which rounds differently from the CPU's c / level
        harmonic += c.to(torch.float64) / torch.full_like(harmonic, float(level))
        ecc[c > 0] = level
        frontier, nxt = nxt, frontier


def reduce_selected(d, rows_at, cols, limit, wide):
    """``[count, total, ecc, harmonic]`` (device tensors, one entry per element of ``rows_at``) of the
    rows ``rows_at`` of the distance matrix ``d`` over its columns ``cols``: a value at most ``limit``
    (`apsp.exactness.reachable_limit`) is reached; ``wide``: the torch dtype of the sums (int64, or
    float64 for float distances). A band of rows at a time, so the gathered rows and their
    temporaries stay near 1 GiB whatever the number of rows."""
    dev = d.device
    band = max(1, (1 << 30) // max(1, 24 * len(cols)))
    out = [torch.zeros(len(rows_at), dtype=t, device=dev) for t in (torch.int64, wide, wide, torch.float64)]
    count, total, ecc, harmonic = out
    for i0 in range(0, len(rows_at), band):
        rows = d.index_select(0, rows_at[i0:i0 + band]).index_select(1, cols)
        reached = rows <= limit
        count[i0:i0 + band] = reached.sum(1)
        values = torch.where(reached, rows, torch.zeros_like(rows)).to(wide)
        total[i0:i0 + band] = values.sum(1)
        ecc[i0:i0 + band] = values.amax(1) if values.shape[1] else 0
        far = reached & (rows != 0)
        harmonic[i0:i0 + band] = (far.to(torch.float64) / torch.where(
            far, rows, torch.ones_like(rows)).to(torch.float64)).sum(1)
    return out


def ndfw_stats(graph, src: np.ndarray, mask: np.ndarray, dtype, *, budget, device=None, progress=None):
    """``((count, total, ecc, harmonic), info)`` of the sources ``src`` over the targets in ``mask``
    for weighted graphs: nested-dissection Floyd-Warshall in core on the device (`apsp.gpu.ndfw`),
    whose finished layout matrix is reduced there, a band of sources at a time, instead of being
    copied to the host: the n x n distances never leave the card. ``dtype``: an integer dtype of
    at most 32 bits (int64 sums stay exact) or a float dtype (float64 sums). ``budget``: the plan's
    gather budget and batch model (`apsp.costs.nd_gpu_budget`)."""
    from .. import exactness
    from ..engine import Finalized, SolveOptions, SolveRequest
    from .ndfw import Engine, solve_with

    dt = np.dtype(dtype)
    wide = torch.float64 if dt.kind == "f" else torch.int64

    class ReducingEngine(Engine):
        def finalize(self):
            limit = exactness.reachable_limit(dt, self.negative)
            pos = torch.from_numpy(self.nd.position).to(self.device)
            cols = pos[torch.from_numpy(np.flatnonzero(mask)).to(self.device)]
            out = reduce_selected(self.d, pos[torch.from_numpy(src).to(self.device)], cols, limit, wide)
            return Finalized([a.cpu().numpy() for a in out])  # the reductions stand in for the distances

    opts = SolveOptions(dtype=dt, request=SolveRequest(progress=progress))
    out, engine = solve_with(
        graph, opts, "gpu", lambda nd, tile: ReducingEngine(nd, dt, tile, graph.has_negative_weights, device,
                                                            budget),
        ("h2d", "compute", "reduce"))
    out.info.update(timings=out.timings, device=str(engine.device))
    return tuple(out.dist), out.info
