"""Rows of the distance matrix from a min-plus nested-dissection elimination, on the device.

The elimination (``apsp.supernodal``) leaves, per node ``t`` of the dissection tree, its closed block
``closure_t`` (|V_t| x |V_t|), and the blocks ``up_t`` (|V_t| x |B_t|) and ``down_t`` (|B_t| x |V_t|)
between its own vertices V_t (the layout range ``own_start[t]:end[t]``) and its boundary B_t (layout
positions in its ancestors' own ranges). The rows of the sources in a layout range ``[s0, s1)`` are
then, with ``(x)`` the min-plus product::

    D = INF; D[i, s0 + i] = 0
    for t in postorder, subtree(t) meeting [s0, s1):     # upward: the few nodes above the sources
        D[:, V_t] = D[:, V_t] (x) closure_t
        D[:, B_t] = min(D[:, B_t], D[:, V_t] (x) up_t)
    for t in reverse postorder:                          # downward: every node, one product each
        D[:, V_t] = min(D[:, V_t], D[:, B_t] (x) down_t)

The downward pass is nearly all the work and touches every node. Nodes of one height are independent
there (their V_t are disjoint and their B_t lie above them), so it runs as one launch per level of
``_down_level_kernel``, one program per (node, row tile, column tile): the A operand is gathered from
D's columns by the node's index list B_t, the output is the node's contiguous column range V_t.
The factors are packed ragged, not padded: each node's down block and index list sit at an offset
in one flat buffer with their own lengths, so a level mixing a wide separator with small leaves
costs no padding (the kernel masks by the node's own |B| and |V|). The upward pass runs node by
node on `apsp.gpu.minplus.minplus_update`.

D is kept column-major (``rows_block``'s default output is the transposed view of a size x rows
buffer), so the gathered columns of A and the output columns are contiguous along the rows.
Conventions as the other kernels (DEVELOPING.md): INF is `apsp.exactness.inf_value`; with
``negative`` integer inputs and results are raised to ``-INF``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import numpy as np
import torch
import triton
import triton.language as tl

from .. import exactness
from ..dissection import Dissection
from .minplus import (ByDtype, _load_operand, _max_offset, _minplus_columns, _rank1_update,
                      asm_mode, capability_of, inf_for, minplus_update)


# --------------------------------------------------------------------------- the kernel
@triton.jit
def _down_level_kernel(d_ptr, down_ptr, bidx_ptr, vstart_ptr, vlen_ptr, blen_ptr, boff_ptr, doff_ptr,
                       M, stride_dm, stride_dn, INF,
                       CLAMP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ASM: tl.constexpr,
                       UNROLL: tl.constexpr, WIDE: tl.constexpr, STAGES: tl.constexpr):
    """D[:, V_j] = min(D[:, V_j], D[:, B_j] (x) down_j) for node j = program_id(0) of the level;
    down_j is |B_j| x |V_j| row-major at ``down_ptr + doff[j]``, B_j at ``bidx_ptr + boff[j]``."""
    node = tl.program_id(0)
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(2)
    n_cols = tl.load(vlen_ptr + node)
    # a program past a narrower node's columns, or of a node without a boundary, runs an empty loop with
    # every load and store of D masked off
    k_len = tl.where(pid_n * BLOCK_N < n_cols, tl.load(blen_ptr + node), 0)
    v0 = tl.load(vstart_ptr + node)
    boff = tl.load(boff_ptr + node)
    doff = tl.load(doff_ptr + node)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < tl.where(k_len > 0, n_cols, 0)  # no boundary: nothing to change
    if WIDE:  # D past 2**31 elements: 64-bit address math
        rows = rows.to(tl.int64)
    a_rows = d_ptr + rows * stride_dm
    c_ptrs = a_rows[:, None] + (v0 + cols)[None, :] * stride_dn
    b_ptrs = down_ptr + doff + cols
    tile_ok = row_ok[:, None] & col_ok[None, :]
    acc = tl.load(c_ptrs, mask=tile_ok, other=INF)
    k_main = k_len - k_len % UNROLL
    chunk = tl.arange(0, UNROLL)
    for k0 in tl.range(0, k_main, UNROLL, num_stages=STAGES):
        # UNROLL gathered columns of D in one 2-D load (one layout conversion per chunk)
        idx = tl.load(bidx_ptr + boff + k0 + chunk)
        if WIDE:
            idx = idx.to(tl.int64)
        a_cols = _load_operand(a_rows[:, None] + idx[None, :] * stride_dn, row_ok[:, None], INF, CLAMP, False)
        acc = _minplus_columns(acc, a_cols, b_ptrs, k0, n_cols, col_ok, INF, CLAMP, False,
                               UNROLL, 1, BLOCK_M, BLOCK_N, ASM)
    for k in range(k_main, k_len):
        idx = tl.load(bidx_ptr + boff + k)
        if WIDE:
            idx = idx.to(tl.int64)
        acc = _rank1_update(acc, a_rows + idx * stride_dn, b_ptrs + k * n_cols, row_ok, col_ok, INF, CLAMP, False,
                            BLOCK_M, BLOCK_N, ASM)
    if CLAMP:
        acc = tl.maximum(acc, -INF).to(acc.dtype)
    tl.store(c_ptrs, acc, mask=tile_ok)


@triton.jit
def _reduce_kernel(d_ptr, rows_ptr, cols_ptr, limit_ptr, count_ptr, total_ptr, ecc_ptr, harmonic_ptr, R, C,
                   stride_dm, stride_dn, FLOAT: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Per row ``rows[i]`` of D over the columns ``cols`` (in their order): the reached count (a
    value at most ``limit``), their sum and largest (int64 for integers, float64 for floats) and
    the sum of 1/d over the reached non-zero ones, at ``i`` of the outputs. One program per
    BLOCK_R rows; D read once, a gathered column tile at a time (contiguous along the rows of a
    column-major D)."""
    pid = tl.program_id(0)
    r = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    r_ok = r < R
    rows = tl.load(rows_ptr + r, mask=r_ok, other=0).to(tl.int64)
    limit = tl.load(limit_ptr)
    wide = tl.float64 if FLOAT else tl.int64
    count = tl.zeros([BLOCK_R], dtype=tl.int64)
    total = tl.zeros([BLOCK_R], dtype=wide)
    ecc = tl.zeros([BLOCK_R], dtype=wide)
    harmonic = tl.zeros([BLOCK_R], dtype=tl.float64)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + tl.arange(0, BLOCK_C)
        c_ok = c < C
        cols = tl.load(cols_ptr + c, mask=c_ok, other=0).to(tl.int64)
        ok = r_ok[:, None] & c_ok[None, :]
        x = tl.load(d_ptr + rows[:, None] * stride_dm + cols[None, :] * stride_dn, mask=ok, other=0)
        reached = ok & (x <= limit)
        values = tl.where(reached, x, 0).to(wide)
        count += tl.sum(reached.to(tl.int64), axis=1)
        total += tl.sum(values, axis=1)
        ecc = tl.maximum(ecc, tl.max(values, axis=1))
        far = reached & (x != 0)
        harmonic += tl.sum(tl.where(far, 1.0 / tl.where(far, x, 1).to(tl.float64), 0.0), axis=1)
    tl.store(count_ptr + r, count, mask=r_ok)
    tl.store(total_ptr + r, total, mask=r_ok)
    tl.store(ecc_ptr + r, ecc, mask=r_ok)
    tl.store(harmonic_ptr + r, harmonic, mask=r_ok)


#: the reduction kernel's tile: rows a program, gathered columns a step (the interpreter's: smaller)
REDUCE_TILE = (64, 64)
INTERPRETER_REDUCE_TILE = (16, 16)


def reduce_columns(d, rows: torch.Tensor, cols: torch.Tensor, limit, wide) -> list[torch.Tensor]:
    """``[count, total, ecc, harmonic]`` of the rows ``rows`` of ``d`` over its columns ``cols``, as
    `apsp.gpu.reductions.reduce_selected` gives them, in one pass over the block without gathering
    it (`_reduce_kernel`; integer sums int64, exact while every value is below 2**31 and fewer than
    2**32 columns are summed)."""
    dev = d.device
    out = [torch.zeros(len(rows), dtype=t, device=dev) for t in (torch.int64, wide, wide, torch.float64)]
    if len(rows) == 0:
        return out
    block_r, block_c = INTERPRETER_REDUCE_TILE if capability_of(d) is None else REDUCE_TILE
    bound = torch.tensor([limit], dtype=d.dtype, device=dev)
    _reduce_kernel[(triton.cdiv(len(rows), block_r),)](
        d, rows, cols, bound, *out, len(rows), len(cols), d.stride(0), d.stride(1),
        FLOAT=d.dtype.is_floating_point, BLOCK_R=block_r, BLOCK_C=block_c)
    return out


# --------------------------------------------------------------------------- launch configuration
class LevelConfig(NamedTuple):
    """Launch configuration of the downward level kernel."""

    block_m: int  #: rows (sources) per program
    block_n: int  #: columns of V_j per program
    warps: int
    unroll: int  #: gathered columns of D per chunk
    stages: int = 1  #: > 1: software-pipeline the chunk loads this many deep


#: levels whose widest node has fewer own vertices than this use `SMALL_NODE_CONFIG`
WIDE_NODE = 128
#: Tiles from synthetic levels on an H200 (int32, 1024 rows, benchmarks/gpu_rowsolve.py; 2026-11-28):
#: 16384 nodes |V| = 64, |B| = 256: (128, 32, 1 warp, 8, 3 stages) 9.3 T updates/s, (128, 64, 2, 8, 3) 9.2,
#: the dense product's (256, 64, 4, 8, 3) 3.8 (the ceiling: 16.3); 16 nodes |V| = 1024, |B| = 2048 and
#: 256 nodes |V| = 256, |B| = 1024: (128, 32, 1, 8, 3) 9.1-9.2, (128, 64, 2, 8, 3) 8.9-9.0, (256, 64, 4, 8, 3)
#: 3.7-3.8. Four warps or more on one tile lose more than half the rate here. int16, float32 and the
#: 64-bit dtypes take the same shapes untimed.
SMALL_NODE_CONFIG = ByDtype({
    "int16": (128, 32, 1, 8, 3),
    "int32": (128, 32, 1, 8, 3),
    "float32": (128, 32, 1, 8, 3),
    "int64": (64, 32, 1, 4, 1),
    "float64": (64, 32, 1, 4, 1),
})
#: wide nodes (separators of hundreds to thousands of vertices)
LARGE_NODE_CONFIG = ByDtype({
    "int16": (128, 64, 2, 8, 3),
    "int32": (128, 64, 2, 8, 3),
    "float32": (128, 64, 2, 8, 3),
    "int64": (64, 64, 2, 4, 1),
    "float64": (64, 64, 2, 4, 1),
})
INTERPRETER_LEVEL_CONFIG = (16, 16, 1, 4, 1)


def level_config(dtype, capability, width: int) -> LevelConfig:
    """The level kernel's tile for ``dtype`` on a GPU of ``capability`` (None: the interpreter), for a
    level whose widest node owns ``width`` layout positions."""
    if capability is None:
        return LevelConfig(*INTERPRETER_LEVEL_CONFIG)
    return LevelConfig(*(LARGE_NODE_CONFIG if width >= WIDE_NODE else SMALL_NODE_CONFIG)[dtype])


# --------------------------------------------------------------------------- packed factors
@dataclass(frozen=True)
class Level:
    """One height of the tree on the device: its nodes' V starts and lengths, |B|, and the offsets
    of their index lists (in `Packed.bidx`) and down blocks (in `Packed.down`), int64 tensors."""

    nodes: tuple[int, ...]
    vstart: torch.Tensor
    vlen: torch.Tensor
    blen: torch.Tensor
    boff: torch.Tensor
    doff: torch.Tensor
    width: int  #: the widest |V| of the level
    depth: int  #: the widest |B| of the level (0: the level has nothing to do downward)


@dataclass(frozen=True)
class Packed:
    """A `Factors` record on the device (`upload`): flat buffers, each node's block at its offset."""

    nd: Dissection
    dtype: np.dtype
    negative: bool
    device: torch.device
    levels: tuple[Level, ...]  #: leaves first
    bidx: torch.Tensor  #: every node's B_t, int32, at ``b_off[t]``
    down: torch.Tensor  #: every node's down_t (|B_t| x |V_t| row-major) at ``vb_off[t]``
    up: torch.Tensor  #: every node's up_t (|V_t| x |B_t| row-major) at ``vb_off[t]``
    closure: torch.Tensor  #: every node's closure_t (|V_t| x |V_t|) at ``vv_off[t]``
    b_off: np.ndarray
    vb_off: np.ndarray
    vv_off: np.ndarray

    @property
    def size(self) -> int:
        return int(self.nd.size)

    def own(self, t: int) -> tuple[int, int]:
        return int(self.nd.own_start[t]), int(self.nd.end[t])

    def boundary(self, t: int) -> torch.Tensor:
        return self.bidx[self.b_off[t]:self.b_off[t + 1]]

    def block(self, flat: torch.Tensor, offsets: np.ndarray, t: int, shape: tuple[int, int]) -> torch.Tensor:
        return flat[offsets[t]:offsets[t + 1]].view(shape)


def _offsets(lengths) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.asarray(lengths, dtype=np.int64))]).astype(np.int64)


def _shapes(factors) -> tuple[np.ndarray, np.ndarray]:
    """|V_t| and |B_t| of every node."""
    nd = factors.nd
    v = (np.asarray(nd.end) - np.asarray(nd.own_start)).astype(np.int64)
    b = np.array([len(x) for x in factors.boundary], dtype=np.int64)
    return v, b


def device_bytes(factors) -> int:
    """Bytes `upload` allocates on the device for ``factors`` (counted before allocating)."""
    v, b = _shapes(factors)
    item = np.dtype(factors.dtype).itemsize
    levelled = sum(len(level) for level in factors.nd.levels())
    return int(item * (2 * int((v * b).sum()) + int((v * v).sum())) + 4 * int(b.sum()) + 5 * 8 * levelled)


def _flat(blocks: Sequence[np.ndarray], dtype, device) -> torch.Tensor:
    host = np.concatenate([np.asarray(x, dtype=dtype).ravel() for x in blocks]) if blocks else np.zeros(0, dtype)
    return torch.from_numpy(np.ascontiguousarray(host, dtype=dtype)).to(device)


def upload(factors, device) -> Packed:
    """``factors`` (an `apsp.supernodal.Factors`) packed on ``device``, once for every row block."""
    nd = factors.nd
    dt = np.dtype(factors.dtype)
    v, b = _shapes(factors)
    if nd.size >= 2 ** 31:  # the kernel reads B_t as int32 layout positions
        raise ValueError(f"a layout of {nd.size} positions is past the row solve's 2**31")
    for t in range(nd.nodes):
        shapes = (np.shape(factors.closure[t]), np.shape(factors.up[t]), np.shape(factors.down[t]))
        if shapes != ((v[t], v[t]), (v[t], b[t]), (b[t], v[t])):
            raise ValueError(f"node {t}: factor shapes {shapes} do not match |V| = {v[t]}, |B| = {b[t]}")
    b_off, vb_off, vv_off = _offsets(b), _offsets(v * b), _offsets(v * v)
    levels = []
    for nodes in nd.levels():
        idx = np.asarray(nodes, dtype=np.int64)
        vstart, vlen, blen, boff, doff = (torch.from_numpy(a.astype(np.int64)).to(device) for a in
                                          (np.asarray(nd.own_start)[idx], v[idx], b[idx], b_off[idx], vb_off[idx]))
        levels.append(Level(tuple(int(t) for t in nodes), vstart, vlen, blen, boff, doff,
                            width=int(v[idx].max(initial=0)), depth=int(b[idx].max(initial=0))))
    return Packed(nd, dt, bool(factors.negative), torch.device(device), tuple(levels),
                  _flat(factors.boundary, np.int32, device), _flat(factors.down, dt, device),
                  _flat(factors.up, dt, device), _flat(factors.closure, dt, device), b_off, vb_off, vv_off)


def packed_bytes(packed: Packed) -> int:
    """Bytes ``packed`` holds on its device (what `device_bytes` predicts)."""
    tensors = [packed.bidx, packed.down, packed.up, packed.closure]
    tensors += [x for level in packed.levels for x in (level.vstart, level.vlen, level.blen, level.boff, level.doff)]
    return sum(x.numel() * x.element_size() for x in tensors)


# --------------------------------------------------------------------------- launchers and passes
def down_level(d, level: Level, down, bidx, negative: bool, config: LevelConfig | None = None) -> None:
    """One launch: ``d[:, V_j] = min(d[:, V_j], d[:, B_j] (x) down_j)`` for every node j of ``level``
    (``d``: rows x layout columns, any strides; ``down`` and ``bidx``: the flat buffers the level's
    offsets point into)."""
    rows = d.shape[0]
    if level.depth == 0 or level.width == 0 or rows == 0:
        return
    cfg = config if config is not None else level_config(d.dtype, capability_of(d), level.width)
    cfg = LevelConfig(*cfg)
    grid = (len(level.nodes), triton.cdiv(rows, cfg.block_m), triton.cdiv(level.width, cfg.block_n))
    _down_level_kernel[grid](d, down, bidx, level.vstart, level.vlen, level.blen, level.boff, level.doff,
                             rows, d.stride(0), d.stride(1), inf_for(d), CLAMP=negative,
                             BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, ASM=asm_mode(d.dtype, capability_of(d)),
                             UNROLL=cfg.unroll, WIDE=_max_offset(d) >= 2 ** 31, STAGES=cfg.stages,
                             num_warps=cfg.warps if d.device.type == "cuda" else 1)


def downward(packed: Packed, d, config: LevelConfig | None = None) -> None:
    """The downward pass on the row block ``d``: one launch per level, the root's first."""
    for level in reversed(packed.levels):
        down_level(d, level, packed.down, packed.bidx, packed.negative, config)


def _column_major(rows: int, cols: int, dtype, device) -> torch.Tensor:
    return torch.empty((cols, rows), dtype=dtype, device=device).t()


def upward(packed: Packed, d, s0: int, s1: int) -> None:
    """The upward pass on the row block ``d`` of sources ``s0:s1``: node by node, in postorder."""
    nd, rows, negative = packed.nd, d.shape[0], packed.negative
    inf = inf_for(d)
    hit = np.flatnonzero((np.asarray(nd.start) < s1) & (np.asarray(nd.end) > s0))
    for t in (int(t) for t in hit):
        v0, v1 = packed.own(t)
        v, b = v1 - v0, int(packed.b_off[t + 1] - packed.b_off[t])
        if v == 0:
            continue
        dv = d[:, v0:v1]
        closed = _column_major(rows, v, d.dtype, d.device).fill_(inf)
        minplus_update(closed, dv, packed.block(packed.closure, packed.vv_off, t, (v, v)), negative)
        dv.copy_(closed)
        if b:
            at = packed.boundary(t).long()
            db = d.index_select(1, at)
            minplus_update(db, dv, packed.block(packed.up, packed.vb_off, t, (v, b)), negative)
            d.index_copy_(1, at, db)


def new_rows(packed: Packed, rows: int) -> torch.Tensor:
    """An uninitialised rows x size block for `rows_block` (column-major: what its kernel reads best)."""
    return _column_major(rows, packed.size, getattr(torch, packed.dtype.name), packed.device)


def rows_block(packed: Packed, s0: int, s1: int, out=None, config: LevelConfig | None = None) -> torch.Tensor:
    """The rows of the sources at layout positions ``s0:s1``: a (s1 - s0) x size device tensor in
    layout columns (into ``out`` when given; a column-major one, `new_rows`, is fastest)."""
    if not 0 <= s0 <= s1 <= packed.size:
        raise ValueError(f"row block {s0}:{s1} is outside the layout 0:{packed.size}")
    rows = s1 - s0
    d = new_rows(packed, rows) if out is None else out
    if tuple(d.shape) != (rows, packed.size) or d.dtype != getattr(torch, packed.dtype.name):
        raise ValueError(f"out is {tuple(d.shape)} {d.dtype}, the block needs ({rows}, {packed.size}) "
                         f"{packed.dtype.name}")
    d.fill_(inf_for(d))
    d[:, s0:s1].diagonal().fill_(0)
    upward(packed, d, s0, s1)
    downward(packed, d, config)
    return d


# --------------------------------------------------------------------------- row blocks for reductions
def reduce_rows(packed: Packed, blocks: Sequence[tuple[int, int]],
                reducer: Callable[[int, int, torch.Tensor], None]) -> None:
    """``reducer(s0, s1, rows)`` for each layout range ``(s0, s1)`` of ``blocks``, ``rows`` its
    `rows_block`; one buffer, reused block after block (``rows`` is valid only during the call)."""
    widest = max((s1 - s0 for s0, s1 in blocks), default=0)
    flat = torch.empty(widest * packed.size, dtype=getattr(torch, packed.dtype.name), device=packed.device)
    for s0, s1 in blocks:
        rows = s1 - s0
        d = flat[:rows * packed.size].view(packed.size, rows).t()
        reducer(s0, s1, rows_block(packed, s0, s1, out=d))


def layout_blocks(positions: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Layout ranges of at most ``rows`` positions covering ``positions``: each starts at the first
    position not yet covered, so sparse sources cost only the blocks they fall in."""
    order = np.unique(np.asarray(positions, dtype=np.int64))
    out, i = [], 0
    while i < len(order):
        s0 = int(order[i])
        j = int(np.searchsorted(order, s0 + rows))
        out.append((s0, int(order[j - 1]) + 1))
        i = j
    return out


def row_stats(packed: Packed, src: np.ndarray, mask: np.ndarray, rows: int):
    """``(count, total, ecc, harmonic)`` (numpy, in ``src``'s order) of the sources ``src`` over the
    targets in ``mask``, reduced on the device block by block by `reduce_columns` (the accumulators of
    `apsp.gpu.reductions.reduce_selected`, which nd-fw's statistics use): at most ``rows`` rows of
    distances exist at a time."""
    nd = packed.nd
    pos = np.asarray(nd.position, dtype=np.int64)[np.asarray(src, dtype=np.int64)]
    cols = np.asarray(nd.position, dtype=np.int64)[np.flatnonzero(mask)]
    acc, _ = _reduce_sources(packed, pos, cols, rows)
    return tuple(a.cpu().numpy() for a in acc)


#: elements of a gathered band of rows for the device histogram (its int64 copy and mask beside it)
HISTOGRAM_BAND = 1 << 24


def _reduce_sources(packed: Packed, pos: np.ndarray, cols: np.ndarray, rows: int, histogram: bool = False,
                    max_bins: int = 1 << 24, on_block=None):
    """The device accumulators ``[count, total, ecc, harmonic]`` of the sources at layout positions
    ``pos`` (in that order) over the layout columns ``cols``, and the histogram of their distances
    (a device tensor, or None): blocks of at most ``rows`` layout positions, each reduced and dropped."""
    dev = packed.device
    wide = torch.float64 if packed.dtype.kind == "f" else torch.int64
    limit = exactness.reachable_limit(packed.dtype, packed.negative)
    at_cols = torch.from_numpy(np.asarray(cols, dtype=np.int64)).to(dev)
    acc = [torch.zeros(len(pos), dtype=t, device=dev) for t in (torch.int64, wide, wide, torch.float64)]
    hist = torch.zeros(1, dtype=torch.int64, device=dev) if histogram else None

    def reduce_block(s0: int, s1: int, d: torch.Tensor) -> None:
        nonlocal hist
        mine = np.flatnonzero((pos >= s0) & (pos < s1))
        at = torch.from_numpy(mine).to(dev)
        local = torch.from_numpy(pos[mine] - s0).to(dev)
        parts = reduce_columns(d, local, at_cols, limit, wide)
        for total, part in zip(acc, parts):
            total[at] = part
        if hist is not None:
            hist = _histogram_block(d, local, at_cols, limit, parts[2], hist, max_bins)
        if on_block is not None:
            on_block(len(mine))

    reduce_rows(packed, layout_blocks(pos, rows), reduce_block)
    return acc, hist


def _histogram_block(d, local, cols, limit, ecc, hist, max_bins: int):
    """``hist`` grown to the block's largest distance (``ecc``) and counting the reached distances
    of the rows ``local`` of ``d`` over ``cols`` (a band of rows at a time)."""
    bins = int(ecc.max().item()) + 1 if len(ecc) else 1
    if bins > max_bins:
        raise ValueError(f"histogram=True: a distance of {bins - 1} needs more than {max_bins} bins; "
                         "leave the histogram out")
    if bins > len(hist):
        hist = torch.nn.functional.pad(hist, (0, bins - len(hist)))
    band = max(1, HISTOGRAM_BAND // max(1, len(cols)))
    for i0 in range(0, len(local), band):
        part = d.index_select(0, local[i0:i0 + band]).index_select(1, cols)
        hist += torch.bincount(part[part <= limit].to(torch.int64), minlength=len(hist))[:len(hist)]
    return hist


def rows_stats(f, positions: np.ndarray, vertex_position: np.ndarray, targets: np.ndarray, histogram: bool,
               block_rows: int, threads: int | None = None, max_bins: int = 1 << 24, on_block=None, *,
               device=None):
    """`apsp.cpu.rowsolve.rows_stats` on the device: the statistics' accumulators of the sources at
    layout positions ``positions`` (in that order) over the vertices where ``targets`` is true
    (``vertex_position``: each vertex's layout position), ``((count, total, carry, ecc, harmonic),
    histogram or None)`` as numpy arrays, carry None for float distances. The factors ``f`` (from
    `apsp.supernodal.eliminate`) are uploaded once to ``device`` (None: `apsp.gpu.default_device`);
    blocks of at most ``block_rows`` consecutive layout positions are solved, reduced on the device
    (`reduce_columns`) and dropped. Integer sums are int64 words, exact for
    distances of at most 32 bits (every one below 2**31, fewer than 2**32 targets), so carry is
    zero; 64-bit integer distances are refused (`ValueError`). ``threads`` is ignored (one device)."""
    from . import default_device

    dt = np.dtype(f.dtype)
    if dt.kind in "iu" and dt.itemsize > 4:
        raise ValueError(f"the GPU row solve sums {dt.name} distances in int64 words, which they may overflow; "
                         "use the CPU's (backend='cpu') or a 32-bit dtype")
    if histogram and dt.kind == "f":
        raise ValueError("histogram=True needs integer distances")
    packed = upload(f, device if device is not None else default_device())
    pos = np.asarray(positions, dtype=np.int64)
    cols = np.asarray(vertex_position, dtype=np.int64)[np.flatnonzero(targets)]
    acc, hist = _reduce_sources(packed, pos, cols, max(1, int(block_rows)), histogram, max_bins, on_block)
    count, total, ecc, harmonic = (a.cpu().numpy() for a in acc)
    carry = np.zeros(len(pos), dtype=np.int64) if dt.kind in "iu" else None
    return (count, total, carry, ecc, harmonic), None if hist is None else hist.cpu().numpy()
