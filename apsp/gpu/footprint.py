"""What the GPU engines pad to and hold on the device: the rules the memory planner and the engines share.

Torch-free (the planner imports it on every GPU plan).
"""
from __future__ import annotations

import numpy as np

from ..sizes import matrix_bytes

#: dense FW pads n to a multiple of this, so phase-3 tiles need no bounds masks
#: (16 under the Triton interpreter, whose tiles are 16 wide)
GPU_PAD, INTERPRETER_PAD = 128, 16
#: nd-fw rounds its layout matrix and node buffers up to this with isolated vertices, so that
#: the big products run the kernel's unmasked path (BLOCK_M 256; 16 under the interpreter)
GPU_ALIGN, INTERPRETER_ALIGN = 256, 16
#: nd-fw's result leaves the device in row bands of about this many bytes
GPU_BAND_BYTES = 1 << 30
#: entries nd-fw's cut-off check compares at once: three boolean temporaries of this size
GPU_CHECK_CHUNK = 1 << 28
#: pinned staging buffers per device (`apsp.gpu.transfer`: uploads and downloads of large
#: matrices go through them in row bands), and the bytes of each
STAGES = 8
STAGE_BYTES = 32 << 20


def staging_bytes(matrix: int, interpreted: bool) -> int:
    """Host bytes the staging of a ``matrix``-byte copy holds: the device's pinned buffers, made
    once and kept by the process (two ordinary ones of at most half the matrix under the
    interpreter)."""
    if interpreted:
        return 2 * min(STAGE_BYTES, max(matrix // 2, 1))
    return STAGES * STAGE_BYTES


def gpu_padded(n: int, interpreted: bool) -> int:
    """The side of dense GPU FW's matrix: n padded to a whole number of kernel tiles."""
    pad = INTERPRETER_PAD if interpreted else GPU_PAD
    return max(pad, -(-n // pad) * pad)


def nd_aligned(size: int, interpreted: bool) -> int:
    """The side of nd-fw's device matrix for a layout of ``size`` positions."""
    align = INTERPRETER_ALIGN if interpreted else GPU_ALIGN
    return -(-max(size, 1) // align) * align


def fw_needs(n: int, dt: np.dtype, paths: int, block: int, interpreted: bool) -> int:
    """GPU bytes of dense in-core FW: the padded matrix, panel buffers (look-ahead: two row and
    two transposed column panels and a column scratch); with paths, the path matrices and the
    reachable mask of their recovery (the final pass marks unreachable pairs in place)."""
    n_pad = gpu_padded(n, interpreted)
    return (matrix_bytes(n_pad, dt) + 5 * min(block, n_pad) * n_pad * dt.itemsize
            + (paths * matrix_bytes(n_pad, np.int32) + matrix_bytes(n_pad, np.bool_) if paths else 0))


def nd_needs(n: int, dt: np.dtype, paths: int, tile: int, interpreted: bool, layout: int, checked: bool) -> int:
    """GPU bytes nd-fw cannot do without: the layout matrix (`nd_aligned`) and its column panel;
    the cut-off check's boolean chunks; the result's row bands (gathered, then in vertex order,
    and their unreachable mask); with paths the matrix again in vertex order and the path
    matrices. Its gathered node buffers are not counted: the engine sizes them from the memory
    left after loading, and runs a node in place when its buffer does not fit."""
    size = nd_aligned(layout, interpreted)
    need = matrix_bytes(size, dt) + tile * size * dt.itemsize
    if paths:
        return need + matrix_bytes(n, dt) + paths * matrix_bytes(n, np.int32) + matrix_bytes(n, np.bool_)
    band = min(GPU_BAND_BYTES, matrix_bytes(n, dt))
    finalize = 2 * band + band // dt.itemsize
    check = 3 * min(GPU_CHECK_CHUNK, size * size) if checked else 0
    return need + max(finalize, check)
