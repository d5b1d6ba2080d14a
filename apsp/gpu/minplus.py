"""Min-plus tile kernels in Triton and their launchers (the drivers over them: `apsp.gpu.rounds`).

Two kernels do all the Floyd-Warshall work on the GPU:

* ``_close_block_kernel``: phase 1, plain Floyd-Warshall on one square tile by
  one program (the k steps are sequential). The tile stays in registers; after
  step k only row k+1 and column k+1 are published through memory for step k+1.
* ``_minplus_kernel``: ``C = min(C, A (x) B)``, the min-plus product, tiled like a
  GEMM. Once the pivot block is closed, phases 2 and 3 are exactly this with no
  order over k, so every program owns a BLOCK_M x BLOCK_N tile of C in
  registers and streams one column of A and one row of B per k. A is read
  through a transposed copy of the column panel so both per-k loads are
  contiguous (vectorised, coalesced); on sm_90 ``min(c, a + b)`` on int32
  compiles to a single VIADDMNMX.

The kernels run on torch tensors (``kernel[grid](...)``) and on `apsp.gpu.devarray.DeviceArray`
views of memory from the CUDA driver (`run_kernel`), the torch-free path of `apsp.gpu.fw` (`DriverRuntime`);
this module does not import torch.

Semantics (see DEVELOPING.md): INF is the dtype's sentinel; with ``clamp`` the
kernel raises inputs and results below ``-INF`` to ``-INF`` so that graphs with
negative weights (and negative cycles) never wrap around.
"""
from __future__ import annotations

import functools
from typing import NamedTuple, TypedDict

import numpy as np
import triton
import triton.language as tl

from .. import exactness
from . import cuda
from .devarray import DeviceArray, launch


def dtype_name(dtype) -> str:
    """``"int32"`` for torch.int32, np.int32 or np.dtype("int32")."""
    return str(np.dtype(dtype) if not str(dtype).startswith("torch.") else dtype).replace("torch.", "")


class ByDtype(dict):
    """A table keyed by dtype, looked up with torch or numpy dtypes alike."""

    def __init__(self, entries=()):
        super().__init__({dtype_name(k): v for k, v in dict(entries).items()})

    def __getitem__(self, dtype):
        return super().__getitem__(dtype_name(dtype))

    def __setitem__(self, dtype, value):
        super().__setitem__(dtype_name(dtype), value)

    def __contains__(self, dtype):
        return super().__contains__(dtype_name(dtype))

    def get(self, dtype, default=None):
        return super().get(dtype_name(dtype), default)


def inf_for(t):
    """The INF sentinel for a tensor's dtype (python scalar)."""
    np_dtype = np.dtype(dtype_name(t.dtype))
    value = exactness.inf_value(np_dtype)
    return float(value) if np_dtype.kind == "f" else int(value)


def run_kernel(kernel, grid, *args, **kwargs) -> None:
    """``kernel[grid](*args, **kwargs)``, through `apsp.gpu.devarray.launch` for driver arrays."""
    if isinstance(args[0], DeviceArray):
        launch(kernel, grid, *args, **kwargs)
    else:
        kernel[grid](*args, **kwargs)


#: how ``min(x, y + a)`` is emitted (the ASM argument of the kernels):
#: 0 = plain Triton ops; 1 = one inline-PTX add+min on int32 (ptxas fuses the pair into one
#: VIADDMNMX, which LLVM's reassociation of chained minimums otherwise prevents);
#: 2 = int16 pairs packed in 32-bit registers (add.s16x2 + min.s16x2); 3 = float32 add+min in PTX;
#: 4 = int16 pairs seen as int32 elements (see PAIRS below), add.s16x2 + min.s16x2 in PTX; 5 = the same
#: pairs in plain Triton ops (the interpreter's stand-in for 4).
ASM_PLAIN, ASM_S32, ASM_S16X2, ASM_F32, ASM_PAIRS, ASM_PAIRS_PLAIN = 0, 1, 2, 3, 4, 5


@triton.jit
def minplus_pair(x, y, a, ASM: tl.constexpr):
    """``min(x, y + a)`` elementwise, emitted as chosen by ``ASM`` (see above)."""
    if ASM == 1:
        return tl.inline_asm_elementwise(
            "{ .reg .s32 t; add.s32 t, $2, $3; min.s32 $0, $1, t; }",
            "=r,r,r,r", [x, y, a], dtype=tl.int32, is_pure=True, pack=1)
    elif ASM == 2:
        return tl.inline_asm_elementwise(
            "{ .reg .b32 t; add.s16x2 t, $2, $3; min.s16x2 $0, $1, t; }",
            "=r,r,r,r", [x, y, a], dtype=tl.int16, is_pure=True, pack=2)
    elif ASM == 3:
        return tl.inline_asm_elementwise(
            "{ .reg .f32 t; add.f32 t, $2, $3; min.f32 $0, $1, t; }",
            "=f,f,f,f", [x, y, a], dtype=tl.float32, is_pure=True, pack=1)
    elif ASM == 4:
        return tl.inline_asm_elementwise(
            "{ .reg .b32 t; add.s16x2 t, $2, $3; min.s16x2 $0, $1, t; }",
            "=r,r,r,r", [x, y, a], dtype=tl.int32, is_pure=True, pack=1)
    elif ASM == 5:
        # each int32 holds two int16 halves: sign-extend the low half, shift down the high one
        lo = tl.minimum((x << 16) >> 16, ((y << 16) >> 16) + ((a << 16) >> 16))
        hi = tl.minimum(x >> 16, (y >> 16) + (a >> 16))
        return (hi << 16) | (lo & 0xFFFF)
    else:
        return tl.minimum(x, y + a)


# --------------------------------------------------------------------------- phase 1
@triton.jit
def _close_tile(t_ptr, size, stride_m, stride_n, INF, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    """Plain Floyd-Warshall on the leading ``size x size`` square of the tile at ``t_ptr``."""
    r = tl.arange(0, BLOCK)
    inside = r < size
    tile_mask = inside[:, None] & inside[None, :]
    tile_ptrs = t_ptr + r[:, None] * stride_m + r[None, :] * stride_n
    c = tl.load(tile_ptrs, mask=tile_mask, other=INF)
    for k in range(size):
        col = tl.load(t_ptr + r * stride_m + k * stride_n, mask=inside, other=INF)
        row = tl.load(t_ptr + k * stride_m + r * stride_n, mask=inside, other=INF)
        c = tl.minimum(c, col[:, None] + row[None, :])
        if CLAMP:
            c = tl.maximum(c, -INF).to(c.dtype)
        # publish what step k+1 reads: its row and its column
        nxt = k + 1
        publish = ((r[:, None] == nxt) | (r[None, :] == nxt)) & tile_mask
        tl.store(tile_ptrs, c, mask=publish)
        tl.debug_barrier()
    tl.store(tile_ptrs, c, mask=tile_mask)


@triton.jit
def _close_block_kernel(t_ptr, size, stride_m, stride_n, INF, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    _close_tile(t_ptr, size, stride_m, stride_n, INF, CLAMP, BLOCK)


@triton.jit
def _close_batched_kernel(t_ptr, size, stride_b, stride_m, stride_n, INF, CLAMP: tl.constexpr,
                          BLOCK: tl.constexpr, WIDE: tl.constexpr):
    # one program per tile of a batch of same-sized tiles, tile b stride_b elements after b-1
    batch = tl.program_id(0)
    if WIDE:
        batch = batch.to(tl.int64)
    _close_tile(t_ptr + batch * stride_b, size, stride_m, stride_n, INF, CLAMP, BLOCK)


# --------------------------------------------------------------------------- phases 2 and 3
@triton.jit
def _load_operand(ptrs, ok, INF, CLAMP: tl.constexpr, EVEN: tl.constexpr):
    """A row or column of A or B; INF outside the matrix; raised to -INF with CLAMP."""
    if EVEN:
        x = tl.load(ptrs)
    else:
        x = tl.load(ptrs, mask=ok, other=INF)
    if CLAMP:
        x = tl.maximum(x, -INF).to(x.dtype)
    return x


@triton.jit
def _outer_minplus(acc, a, b, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ASM: tl.constexpr):
    """acc = min(acc, a[:, None] + b[None, :])."""
    if ASM != 0:
        return minplus_pair(acc, tl.broadcast_to(a[:, None], (BLOCK_M, BLOCK_N)),
                            tl.broadcast_to(b[None, :], (BLOCK_M, BLOCK_N)), ASM)
    else:
        return tl.minimum(acc, a[:, None] + b[None, :])


@triton.jit
def _rank1_update(acc, a_ptrs, b_ptrs, row_ok, col_ok, INF, CLAMP: tl.constexpr, EVEN: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ASM: tl.constexpr):
    """acc = min(acc, a[:, None] + b[None, :]) for one k."""
    a = _load_operand(a_ptrs, row_ok, INF, CLAMP, EVEN)
    b = _load_operand(b_ptrs, col_ok, INF, CLAMP, EVEN)
    return _outer_minplus(acc, a, b, BLOCK_M, BLOCK_N, ASM)


@triton.jit
def _minplus_columns(acc, a_cols, b_ptrs, k, stride_bk, col_ok, INF, CLAMP: tl.constexpr, EVEN: tl.constexpr,
                     KC: tl.constexpr, STEP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     ASM: tl.constexpr):
    """acc = min(acc, a_cols[:, j] + b[k + j * STEP, :]) over the KC columns j of ``a_cols``.

    The columns are peeled off by halving the last dimension (``tl.split``), which
    keeps them in registers: the chunk went through one layout conversion when it
    was loaded, not one per column.
    """
    if KC == 1:
        b = _load_operand(b_ptrs + k * stride_bk, col_ok, INF, CLAMP, EVEN)
        acc = _outer_minplus(acc, tl.reshape(a_cols, (BLOCK_M,)), b, BLOCK_M, BLOCK_N, ASM)
    else:
        even_cols, odd_cols = tl.split(tl.reshape(a_cols, (BLOCK_M, KC // 2, 2)))
        acc = _minplus_columns(acc, even_cols, b_ptrs, k, stride_bk, col_ok, INF, CLAMP, EVEN,
                               KC // 2, STEP * 2, BLOCK_M, BLOCK_N, ASM)
        acc = _minplus_columns(acc, odd_cols, b_ptrs, k + STEP, stride_bk, col_ok, INF, CLAMP, EVEN,
                               KC // 2, STEP * 2, BLOCK_M, BLOCK_N, ASM)
    return acc


@triton.jit
def _grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of program ``pid`` in the grouped launch order: programs running together
    share rows of A and columns of B in L2."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group_size = GROUP_M * num_pid_n
    first_m = (pid // group_size) * GROUP_M
    rows_in_group = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size) % rows_in_group
    pid_n = (pid % group_size) // rows_in_group
    return pid_m, pid_n


@triton.jit
def _minplus_tile(c_ptr, a_ptr, b_ptr, c2_ptr, pid_m, pid_n, M, N, K,
                  stride_cm, stride_cn, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_c2m, stride_c2n, INF,
                  CLAMP: tl.constexpr, HAS_C2: tl.constexpr, EVEN: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ASM: tl.constexpr, UNROLL: tl.constexpr,
                  WIDE: tl.constexpr, CHUNK_A: tl.constexpr, STAGES: tl.constexpr):
    """The BLOCK_M x BLOCK_N tile (pid_m, pid_n) of C = min(C, A (x) B)."""
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    if WIDE:  # element offsets past 2**31 (n > 46340 for a whole matrix): 64-bit address math
        rows = rows.to(tl.int64)
        cols = cols.to(tl.int64)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    a_ptrs = a_ptr + rows * stride_am
    b_ptrs = b_ptr + cols * stride_bn
    if EVEN:
        acc = tl.load(c_ptrs)
    else:
        acc = tl.load(c_ptrs, mask=row_ok[:, None] & col_ok[None, :], other=INF)
    k_main = K - K % UNROLL
    if CHUNK_A:
        # A in chunks of UNROLL columns, one 2-D load each: the chunk's conversion to the
        # accumulator's row layout (through shared memory, with a barrier) happens once per
        # chunk instead of once per column, which is what bounded the per-column loop
        chunk = tl.arange(0, UNROLL)
        a_chunk_ptrs = a_ptrs[:, None] + chunk[None, :] * stride_ak
        # STAGES > 1: Triton's pipeliner prefetches the next chunks (cp.async into shared memory)
        for k0 in tl.range(0, k_main, UNROLL, num_stages=STAGES):
            a_cols = _load_operand(a_chunk_ptrs + k0 * stride_ak, row_ok[:, None], INF, CLAMP, EVEN)
            acc = _minplus_columns(acc, a_cols, b_ptrs, k0, stride_bk, col_ok, INF, CLAMP, EVEN,
                                   UNROLL, 1, BLOCK_M, BLOCK_N, ASM)
    else:
        # one column at a time: the loads of a chunk issue back to back with immediate offsets
        for k0 in tl.range(0, k_main, UNROLL, num_stages=STAGES):
            for kk in tl.static_range(UNROLL):
                acc = _rank1_update(acc, a_ptrs + (k0 + kk) * stride_ak, b_ptrs + (k0 + kk) * stride_bk,
                                    row_ok, col_ok, INF, CLAMP, EVEN, BLOCK_M, BLOCK_N, ASM)
    for k in range(k_main, K):
        acc = _rank1_update(acc, a_ptrs + k * stride_ak, b_ptrs + k * stride_bk,
                            row_ok, col_ok, INF, CLAMP, EVEN, BLOCK_M, BLOCK_N, ASM)
    if CLAMP:
        acc = tl.maximum(acc, -INF).to(acc.dtype)
    tile_ok = row_ok[:, None] & col_ok[None, :]
    if EVEN:
        tl.store(c_ptrs, acc)
    else:
        tl.store(c_ptrs, acc, mask=tile_ok)
    if HAS_C2:
        c2_ptrs = c2_ptr + rows[:, None] * stride_c2m + cols[None, :] * stride_c2n
        tl.store(c2_ptrs, acc, mask=tile_ok)


@triton.jit
def _minplus_kernel(c_ptr, a_ptr, b_ptr, c2_ptr, M, N, K,
                    stride_cm, stride_cn, stride_am, stride_ak, stride_bk, stride_bn,
                    stride_c2m, stride_c2n, INF,
                    CLAMP: tl.constexpr, HAS_C2: tl.constexpr, EVEN: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr,
                    ASM: tl.constexpr, UNROLL: tl.constexpr, WIDE: tl.constexpr = False,
                    CHUNK_A: tl.constexpr = True, STAGES: tl.constexpr = 1):
    pid_m, pid_n = _grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    _minplus_tile(c_ptr, a_ptr, b_ptr, c2_ptr, pid_m, pid_n, M, N, K,
                  stride_cm, stride_cn, stride_am, stride_ak, stride_bk, stride_bn, stride_c2m, stride_c2n, INF,
                  CLAMP, HAS_C2, EVEN, BLOCK_M, BLOCK_N, ASM, UNROLL, WIDE, CHUNK_A, STAGES)


@triton.jit
def _minplus_batched_kernel(c_ptr, a_ptr, b_ptr, c2_ptr, M, N, K,
                            stride_cb, stride_cm, stride_cn, stride_ab, stride_am, stride_ak,
                            stride_bb, stride_bk, stride_bn, stride_c2b, stride_c2m, stride_c2n, INF,
                            CLAMP: tl.constexpr, HAS_C2: tl.constexpr, EVEN: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr,
                            ASM: tl.constexpr, UNROLL: tl.constexpr, WIDE: tl.constexpr,
                            CHUNK_A: tl.constexpr, STAGES: tl.constexpr):
    # product b of a batch of same-shaped products: its operands stride_*b elements after b-1's
    batch = tl.program_id(1)
    if WIDE:
        batch = batch.to(tl.int64)
    pid_m, pid_n = _grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    _minplus_tile(c_ptr + batch * stride_cb, a_ptr + batch * stride_ab, b_ptr + batch * stride_bb,
                  c2_ptr + batch * stride_c2b, pid_m, pid_n, M, N, K,
                  stride_cm, stride_cn, stride_am, stride_ak, stride_bk, stride_bn, stride_c2m, stride_c2n, INF,
                  CLAMP, HAS_C2, EVEN, BLOCK_M, BLOCK_N, ASM, UNROLL, WIDE, CHUNK_A, STAGES)


# --------------------------------------------------------------------------- the naive baseline
@triton.jit
def _naive_step_kernel(d_ptr, n, k, stride, INF, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    # one launch per k over the whole matrix: the ladder's bottom rung
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK + tl.arange(0, BLOCK)
    cols = pid_n * BLOCK + tl.arange(0, BLOCK)
    mask = (rows < n)[:, None] & (cols < n)[None, :]
    ptrs = d_ptr + rows[:, None] * stride + cols[None, :]
    c = tl.load(ptrs, mask=mask, other=INF)
    a = tl.load(d_ptr + rows * stride + k, mask=rows < n, other=INF)
    b = tl.load(d_ptr + k * stride + cols, mask=cols < n, other=INF)
    c = tl.minimum(c, a[:, None] + b[None, :])
    if CLAMP:
        c = tl.maximum(c, -INF).to(c.dtype)
    tl.store(ptrs, c, mask=mask)


# --------------------------------------------------------------------------- launch configuration
class MinplusConfig(NamedTuple):
    """Launch configuration of the min-plus product."""

    block_m: int
    block_n: int
    warps: int
    unroll: int  #: k steps per chunk
    chunk_a: bool = True  #: load A in 2-D chunks of ``unroll`` columns (False: one column at a time)
    stages: int = 1  #: > 1: software-pipeline the chunk loads this many deep


#: the min-plus product's configuration per dtype (a tuple in MinplusConfig's order also works)
#: Chosen from whole n = 32768 solves on an H200 (benchmarks/gpu_fw.py --stages tune; BENCHMARKS.md).
MINPLUS_CONFIG = ByDtype({
    "int16": (256, 64, 4, 8, True, 3),
    "int32": (256, 64, 4, 8, True, 3),
    "float32": (64, 128, 4, 8, True, 3),
    "int64": (64, 64, 4, 4),
    "float64": (64, 64, 4, 4),
})
INTERPRETER_CONFIG = (16, 16, 1, 4)
#: largest tile phase 1 closes in one program; bigger pivot blocks close recursively
MAX_CLOSE_BLOCK = 128


#: inline-PTX mode per dtype on the GPU (measured: BENCHMARKS.md); the interpreter always uses plain ops
ASM_MODE = ByDtype({"int32": ASM_S32, "int16": ASM_S16X2, "float32": ASM_F32})


#: the packed int16 instructions (add.s16x2, min.s16x2: ASM 2 and 4) need sm_90; older GPUs run int16
#: in plain Triton ops, with a tile that fits their registers (sm_80: 128 registers, no spills, where
#: the sm_90 tile spills; benchmarks/sass_offline.py --arch 80; not timed on such a GPU)
PACKED_INT16_CAPABILITY = (9, 0)
OLDER_GPU_INT16_CONFIG = (128, 64, 4, 8, True, 3)


@functools.lru_cache(maxsize=None)
def _capability(device) -> tuple[int, int]:
    if isinstance(device, tuple):  # the driver's device (`DeviceArray.device`, made hashable)
        return cuda.capability()
    import torch

    return torch.cuda.get_device_capability(device)


def capability_of(t) -> tuple[int, int] | None:
    """The compute capability of the GPU holding ``t`` (None: a CPU tensor, the interpreter)."""
    if isinstance(t, DeviceArray):
        return _capability((t.device.type, t.device.index))
    return _capability(t.device) if t.device.type == "cuda" else None


def asm_mode(dtype, capability: tuple[int, int] | None) -> int:
    """How ``min(x, y + a)`` is emitted for ``dtype`` on a GPU of ``capability`` (None: the interpreter)."""
    if capability is None or (dtype_name(dtype) == "int16" and tuple(capability) < PACKED_INT16_CAPABILITY):
        return ASM_PLAIN
    return ASM_MODE.get(dtype, ASM_PLAIN)


def default_config(dtype, capability: tuple[int, int] | None):
    """The product kernel's tile for ``dtype`` on a GPU of ``capability`` (None: the interpreter)."""
    if capability is None:
        return INTERPRETER_CONFIG
    if dtype_name(dtype) == "int16" and tuple(capability) < PACKED_INT16_CAPABILITY:
        return OLDER_GPU_INT16_CONFIG
    return MINPLUS_CONFIG[dtype]


def close_tile(t, negative: bool = False) -> None:
    """Floyd-Warshall on the square tile ``t`` in place by one program (at most `MAX_CLOSE_BLOCK` wide)."""
    size = t.shape[0]
    if t.shape != (size, size) or size > MAX_CLOSE_BLOCK:
        raise ValueError(f"close_tile needs a square tile of at most {MAX_CLOSE_BLOCK}, got {tuple(t.shape)}")
    if size > 0:
        _launch_close(_close_block_kernel, (1,), t, size, negative)


def close_tiles(t, negative: bool = False) -> None:
    """`close_tile` on every tile ``t[b]`` of a batch x s x s view, one program per tile, one launch."""
    batch, size = t.shape[0], t.shape[1]
    if t.dim() != 3 or t.shape[2] != size or size > MAX_CLOSE_BLOCK:
        raise ValueError(f"close_tiles needs batch x s x s tiles, s <= {MAX_CLOSE_BLOCK}, got {tuple(t.shape)}")
    if batch > 0 and size > 0:
        _launch_close(_close_batched_kernel, (batch,), t, size, negative, WIDE=_max_offset(t) >= 2 ** 31)


def _launch_close(kernel, grid, t, size: int, negative: bool, **wide) -> None:
    """Phase 1's kernel on ``t`` (a tile, or a batch of them: its strides in the kernel's order)."""
    block = max(16, triton.next_power_of_2(size))
    run_kernel(kernel, grid, t, size, *t.stride(), inf_for(t), CLAMP=negative, BLOCK=block, **wide,
               num_warps=1 if t.device.type != "cuda" else (4 if block <= 32 else 8))


def _max_offset(t) -> int:
    """Largest element offset a kernel computes from ``t``'s pointer (rows x stride + cols x stride)."""
    return sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride()) if size)


#: int16 products without negative weights as products of int32 "pairs": C and B are viewed as int32
#: (two adjacent columns per element) and A is widened to int32 with each value in both halves, so the
#: inner loop is the int32 loop with add.s16x2 + min.s16x2 (no per-value PRMT packing of ASM 2; see
#: benchmarks/sass_offline.py). Whole int16 solves on an H200 (2026-11-22), pairs vs packed (ASM 2):
#: n = 32768 27.3 vs 22.3 T updates/s (91% of the ceiling), n = 16384 25.1 vs 21.2, n = 8192 18.5 vs 18.4
#: (BENCHMARKS.md, D4): products whose C is smaller than ``min_size`` in both dimensions stay packed.
class PairsSettings(TypedDict):
    enabled: bool
    config: tuple[int, int, int, int, bool, int]  # a `MinplusConfig`'s fields
    min_size: int


PAIRS: PairsSettings = {"enabled": True, "config": (256, 64, 4, 8, True, 3), "min_size": 16384}


def _pair_viewable(t) -> bool:
    """Can ``t`` (int16, 2-D) be viewed as int32 pairs of adjacent columns?"""
    return (t.dim() == 2 and t.stride(1) == 1 and t.shape[1] % 2 == 0 and t.stride(0) % 2 == 0
            and t.storage_offset() % 2 == 0)


@triton.jit
def _duplicate_pairs_kernel(a_ptr, out_ptr, M, K, stride_am, stride_ak, BLOCK: tl.constexpr):
    # out[k, m] (int32, contiguous) = a[m, k] in both int16 halves
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = (rows < M)[:, None] & (cols < K)[None, :]
    v = tl.load(a_ptr + rows[:, None] * stride_am + cols[None, :] * stride_ak, mask=ok, other=0)
    low = v.to(tl.int32) & 0xFFFF
    tl.store(out_ptr + cols[None, :] * M + rows[:, None], low | (low << 16), mask=ok)


def _int32(t, shape=None):
    """``t`` seen as int32; with ``shape``, a new int32 buffer of that shape on ``t``'s device instead
    (for a driver array from the current stream's pool: `DeviceArray.scratch`)."""
    if isinstance(t, DeviceArray):
        return t.view(np.int32) if shape is None else DeviceArray.scratch(shape, np.int32)
    import torch

    return t.view(torch.int32) if shape is None else torch.empty(shape, dtype=torch.int32, device=t.device)


def duplicate_pairs(a):
    """int32 with both halves equal to ``a``'s int16 value, same logical shape, as a transposed
    view of a contiguous buffer (the kernel's loads of A run along its first dimension)."""
    m, k = a.shape
    out = _int32(a, (k, m))
    block = 32 if a.device.type == "cuda" else 16
    run_kernel(_duplicate_pairs_kernel, (triton.cdiv(m, block), triton.cdiv(k, block)), a, out, m, k,
               a.stride(0), a.stride(1), BLOCK=block, num_warps=4 if a.device.type == "cuda" else 1)
    return out.t()


def _uses_pairs(c, b, negative, out2, enabled=None) -> bool:
    """``enabled`` None: the PAIRS settings decide (on, and C large enough); True/False: forced."""
    on = PAIRS["enabled"] and max(c.shape) >= PAIRS["min_size"] if enabled is None else enabled
    # capability_of is not None on a GPU
    return (on and dtype_name(c.dtype) == "int16" and not negative and out2 is None and _pair_viewable(c)
            and _pair_viewable(b)
            and (c.device.type != "cuda" or (capability_of(c) or (0, 0)) >= PACKED_INT16_CAPABILITY))


def minplus_update(c, a, b, negative: bool = False, out2=None, config=None, pairs: bool | None = None) -> None:
    """``c = min(c, a (x) b)`` in place; optionally also write the result to ``out2``.

    ``a`` is r x k, ``b`` is k x s, ``c`` is r x s; any strides (a transposed
    view of a contiguous k x r buffer makes the kernel's loads of ``a`` contiguous).
    ``c`` may overlap ``a`` or ``b`` when the other factor is a closed pivot
    block, as in Floyd-Warshall's phase 2: the result is still exact.
    """
    m, k = a.shape
    k2, n = b.shape
    if k != k2 or c.shape != (m, n):
        raise ValueError(f"shapes do not chain: c{tuple(c.shape)} a{tuple(a.shape)} b{tuple(b.shape)}")
    if m == 0 or n == 0 or k == 0:
        return
    if _uses_pairs(c, b, negative, out2, pairs):
        c32, b32, a32 = _int32(c), _int32(b), duplicate_pairs(a)
        cfg = config if config is not None else (PAIRS["config"] if c.device.type == "cuda" else None)
        _launch_minplus(c32, a32, b32, None, False, cfg,
                        ASM_PAIRS if c.device.type == "cuda" else ASM_PAIRS_PLAIN, inf=_pair_value(inf_for(c)))
        return
    asm = asm_mode(c.dtype, capability_of(c))
    _launch_minplus(c, a, b, out2, negative, config, asm, inf=inf_for(c))


def _pair_value(v: int) -> int:
    """The int32 whose two int16 halves are both ``v``."""
    return int(np.array([(v & 0xFFFF) | ((v & 0xFFFF) << 16)], dtype=np.uint32).view(np.int32)[0])


def _launch_minplus(c, a, b, out2, negative, config, asm, inf) -> None:
    """One launch of the product kernel on r x k, k x s and r x s views, or of its batched form on
    batch x r x k, batch x k x s and batch x r x s views (``config`` None: `default_config`)."""
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if config is None:
        config = default_config(c.dtype, capability_of(c))
    block_m, block_n, warps, unroll, chunk_a, stages = MinplusConfig(*config)
    c2 = out2 if out2 is not None else c
    views = (c, a, b, c2)
    batched = c.dim() == 3
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),) + ((c.shape[0],) if batched else ())
    run_kernel(_minplus_batched_kernel if batched else _minplus_kernel, grid, c, a, b, c2, m, n, k,
               *[t.stride(i) for t in views for i in range(c.dim())], inf,
               CLAMP=negative, HAS_C2=out2 is not None, EVEN=m % block_m == 0 and n % block_n == 0,
               BLOCK_M=block_m, BLOCK_N=block_n, GROUP_M=8, ASM=asm, UNROLL=unroll,
               WIDE=max(_max_offset(t) for t in views) >= 2 ** 31, CHUNK_A=chunk_a, STAGES=stages, num_warps=warps)


def minplus_update_batched(c, a, b, negative: bool = False, out2=None) -> None:
    """`minplus_update` on a batch of same-shaped products in one launch: ``c[i] = min(c[i],
    a[i] (x) b[i])`` for every ``i`` (``c``, ``a``, ``b`` and ``out2``: batch x rows x columns
    views, any strides; overlaps as `minplus_update`). int16 runs packed (no pairs)."""
    batch, m, k = a.shape
    n = b.shape[2]
    if c.shape != (batch, m, n) or b.shape[:2] != (batch, k) or (out2 is not None and out2.shape != c.shape):
        raise ValueError(f"batched shapes do not chain: c{tuple(c.shape)} a{tuple(a.shape)} b{tuple(b.shape)}")
    if batch == 0 or m == 0 or n == 0 or k == 0:
        return
    _launch_minplus(c, a, b, out2, negative, None, asm_mode(c.dtype, capability_of(c)), inf_for(c))
