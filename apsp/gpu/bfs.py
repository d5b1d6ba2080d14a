"""Bit-parallel multi-source BFS on the GPU (Triton): all-pairs hop distances of an unweighted graph.

Every vertex v holds one bit per source in 32-bit words (``W = ceil(n/32)``
words per vertex, vertex-major, so the words of one vertex are contiguous).
One kernel launch advances every search by one level:

    next(v) = OR over in-neighbours u of frontier(u), minus visited(v)

A program owns a tile of ``BLOCK_V`` vertices x ``BLOCK_W`` words (32 *
BLOCK_W sources) and walks the in-neighbour lists of its vertices together
(transposed CSR), gathering the frontier words of each in-neighbour as one
contiguous row. It skips the gathers where every source of a word has already
reached the vertex, returns at once when its sources' frontier is empty (a
per-word-group flag holds the last level that found anything), and writes the
level into the distance rows of the sources whose bit just appeared. Level 1
reads no frontier: its bits are the sources among the in-neighbours.

Distances: ``uint8`` while the search is within 254 levels, then ``int32`` on
the device, returned as ``uint16`` when the diameter allows (torch has no
uint16 arithmetic); a user's integer dtype is used as given and refused with
`DtypeError` if a distance does not fit. Runs on a CUDA device, or under
``TRITON_INTERPRET=1`` on CPU tensors (the tests).
"""
from __future__ import annotations

import time

import numpy as np
import torch
import triton
import triton.language as tl

from .. import exactness
from ..cpu.bfs import NO_VERTEX, csr_arrays, finish_dtype, max_level, recast, refuse_dtype
from ..engine import SolveOptions, SolveOutput
from .transfer import to_host

#: default tile: vertices per program, 32-bit words (x32 sources) per program, warps
BLOCK_V = 32
BLOCK_W = 8
NUM_WARPS = 4


@triton.jit
def _bfs_level_kernel(
    in_ptr, in_idx, frontier, nxt, visited, flags, dist, pred, succ,
    n, n_words, level, s_base,
    FIRST: tl.constexpr, WITH_PRED: tl.constexpr, WITH_SUCC: tl.constexpr,
    WITH_PARENT: tl.constexpr, WITH_DIST: tl.constexpr,
    BLOCK_V: tl.constexpr, BLOCK_W: tl.constexpr,
):
    # the words hold sources s_base .. s_base + 32 n_words - 1 (0 and all n for a whole solve;
    # `apsp.gpu.reductions` runs blocks of them, WITH_DIST off: it counts nxt's bits instead)
    pid_v = tl.program_id(0)
    group = tl.program_id(1)
    # nothing reached at the previous level by these sources: their searches are over
    if tl.load(flags + group) < level - 1:
        return
    vs = pid_v * BLOCK_V + tl.arange(0, BLOCK_V)
    ws = group * BLOCK_W + tl.arange(0, BLOCK_W)
    v_ok = vs < n
    w_ok = ws < n_words
    tile_ok = w_ok[:, None] & v_ok[None, :]
    tile = vs.to(tl.int64)[None, :] * n_words + ws[:, None]  # [BLOCK_W, BLOCK_V]
    seen = tl.load(visited + tile, mask=tile_ok, other=-1)
    todo = seen != -1  # some source of the word has not reached the vertex yet
    start = tl.load(in_ptr + vs, mask=v_ok, other=0)
    deg = tl.load(in_ptr + vs + 1, mask=v_ok, other=0) - start
    deg = tl.where(tl.max(todo.to(tl.int32), axis=0) > 0, deg, 0)
    fresh = tl.zeros([BLOCK_W, BLOCK_V], dtype=tl.int32)
    bit_no = tl.arange(0, 32)
    rows = (ws * 32)[:, None, None] + bit_no[None, :, None]  # source of each bit [BLOCK_W, 32, 1]
    row_ok = rows < n
    rows_in = tl.minimum(rows, n - 1)  # clamped copies for unmasked loads
    ws_in = tl.minimum(ws, n_words - 1)
    for k in range(0, tl.max(deg)):
        has = k < deg
        u = tl.load(in_idx + start + k, mask=has, other=0)
        if FIRST:
            # the frontier is the sources themselves: bit u - s_base of its own word
            one = tl.full([BLOCK_V], 1, dtype=tl.int32)
            rel = u - s_base
            mine = (rel >= 0) & (rel < n_words * 32) & has
            f = tl.where((ws[:, None] == (rel // 32)[None, :]) & mine[None, :],
                         (one << (rel % 32))[None, :], 0)
        else:
            # unmasked load from clamped, always-valid addresses, then select: triton 3.6's
            # pass pipeline rejected the masked form ("mask type matches ptr type")
            f = tl.load(frontier + u.to(tl.int64)[None, :] * n_words + ws_in[:, None])
            f = tl.where(todo & has[None, :], f, 0)
        new = f & ~(seen | fresh)
        fresh = fresh | new
        if WITH_PARENT:  # WITH_PRED or WITH_SUCC
            if tl.max((new != 0).to(tl.int32)) > 0:
                got = ((new[:, None, :] >> bit_no[None, :, None]) & 1) != 0
                got = got & row_ok & v_ok[None, None, :]
                at = rows.to(tl.int64) * n + vs[None, None, :]
                if WITH_PRED:
                    tl.store(pred + at, tl.broadcast_to(u[None, None, :], got.shape), mask=got)
                if WITH_SUCC:
                    if FIRST:
                        hop = tl.broadcast_to(vs[None, None, :], got.shape)
                    else:
                        hop = tl.load(succ + rows_in.to(tl.int64) * n + u[None, None, :])
                        hop = tl.where(got, hop, 0)
                    tl.store(succ + at, hop, mask=got)
    tl.store(nxt + tile, fresh, mask=tile_ok)
    if tl.max((fresh != 0).to(tl.int32)) > 0:
        tl.store(visited + tile, seen | fresh, mask=tile_ok & (fresh != 0))
        tl.atomic_max(flags + group, level)
        if WITH_DIST:
            got = ((fresh[:, None, :] >> bit_no[None, :, None]) & 1) != 0
            got = got & row_ok & v_ok[None, None, :]
            at = rows.to(tl.int64) * n + vs[None, None, :]
            value = (tl.zeros([BLOCK_W, 32, BLOCK_V], dtype=tl.int32) + level).to(dist.dtype.element_ty)
            tl.store(dist + at, value, mask=got)


def _device(wanted) -> torch.device:
    """The device asked for (the plan's), else `apsp.gpu.default_device`: one rule for the interpreter."""
    from . import default_device, make_current

    device = torch.device(wanted) if wanted is not None else default_device()
    make_current(device)
    return device


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def seed_visited(visited: torch.Tensor, s_base: int) -> None:
    """``visited`` (n x words: the sources ``s_base`` on, 32 a word) at the start: each source's own
    bit, and the bits of sources past the last vertex, which count as visited everywhere so that a
    word can become full."""
    n, words = visited.shape
    visited.zero_()
    last = n - s_base
    if last < 32 * words:
        visited[:, words - 1] = int(np.array(-(1 << (last % 32)), dtype=np.int64).astype(np.int32))
    src = torch.arange(s_base, s_base + min(last, 32 * words), device=visited.device)
    rel = src - s_base
    own = src * words + rel // 32
    flat = visited.view(-1)
    flat[own] = flat[own] | torch.bitwise_left_shift(torch.ones_like(src), rel % 32).to(torch.int32)


def solve(graph, opts: SolveOptions) -> SolveOutput:
    """All-pairs hop distances of ``graph`` (every edge weight 1) on the GPU.

    Options: ``device``, ``block_vertices``, ``block_words``,
    ``num_warps`` (tile shape and warps of the level kernel).
    """
    device = _device(opts.device)
    n = graph.n
    block_v = opts.request.block_vertices or BLOCK_V
    block_w = opts.request.block_words or BLOCK_W
    num_warps = opts.request.num_warps or NUM_WARPS
    timings = {}
    t0 = time.perf_counter()
    _, _, in_ptr, in_idx = (torch.from_numpy(a).to(device) for a in csr_arrays(graph))
    n_words = (n + 31) // 32
    groups = triton.cdiv(max(n_words, 1), block_w)
    hops = opts.hops or exactness.gpu_hop_dtypes(opts.dtype)  # the plan's; its rule for direct calls
    ladder = list(hops.compute)
    dt = ladder.pop(0)
    dist = torch.full((n, n), int(exactness.unreachable_value(dt)), dtype=getattr(torch, dt.name), device=device)
    dist.diagonal().fill_(0)
    want_pred, want_succ = bool(opts.predecessors), bool(opts.successors)
    pred = torch.full((n, n) if want_pred else (1,), NO_VERTEX, dtype=torch.int32, device=device)
    succ = torch.full((n, n) if want_succ else (1,), NO_VERTEX, dtype=torch.int32, device=device)
    visited = torch.empty((n, n_words), dtype=torch.int32, device=device)
    seed_visited(visited, 0)
    frontier = torch.zeros((n, n_words), dtype=torch.int32, device=device)
    nxt = torch.zeros_like(frontier)
    flags = torch.zeros(groups, dtype=torch.int32, device=device)
    _sync(device)
    timings["h2d"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    grid = (triton.cdiv(max(n, 1), block_v), groups)
    level = 0
    while n:
        level += 1
        if level > max_level(dt):  # the previous level found vertices: they need a wider type
            if not ladder:
                refuse_dtype(hops.requested)
            to = ladder.pop(0)
            wide = dist.to(getattr(torch, to.name))
            wide[dist == int(exactness.unreachable_value(dt))] = int(exactness.unreachable_value(to))
            dist, dt = wide, to
        _bfs_level_kernel[grid](
            in_ptr, in_idx, frontier, nxt, visited, flags, dist, pred, succ,
            n, n_words, level, 0,
            FIRST=level == 1, WITH_PRED=want_pred, WITH_SUCC=want_succ,
            WITH_PARENT=want_pred or want_succ, WITH_DIST=True,
            BLOCK_V=block_v, BLOCK_W=block_w, num_warps=num_warps)
        frontier, nxt = nxt, frontier
        if int(flags.max()) < level:  # this level found nothing: every search is over
            break
    diameter = max(level - 1, 0)
    _sync(device)
    timings["compute"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    dist_np = to_host(dist)
    pred_np, succ_np = (to_host(t) if want else None for t, want in ((pred, want_pred), (succ, want_succ)))
    timings["d2h"] = time.perf_counter() - t0
    narrow = hops.narrow_to
    if narrow is not None and hops.requested == narrow and diameter > max_level(narrow):
        refuse_dtype(narrow)
    if narrow is not None and dist_np.dtype.itemsize > narrow.itemsize and diameter <= max_level(narrow):
        dist_np = recast(dist_np, narrow)  # the wider dtype was only for torch's lack of uint16 arithmetic
    dist_np = finish_dtype(dist_np, hops.requested if hops.requested is not None
                           and hops.requested.kind == "f" else None)
    info = {"diameter": diameter, "levels": level, "device": str(device),
            "tile": f"{block_v} vertices x {32 * block_w} sources", "num_warps": num_warps}
    if device.type == "cuda":
        info["device_name"] = torch.cuda.get_device_name(device)
    return SolveOutput(dist=dist_np, predecessors=pred_np, successors=succ_np, timings=timings, info=info)
