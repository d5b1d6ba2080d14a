"""The card's min-plus ceiling, measured by a register-only micro-kernel.

Each program keeps two tiles of accumulators and updates them in a chain
``x = min(x, y + a); y = min(y, x + b)``: two min-plus updates per step, no
memory traffic, nothing the compiler can fold. On sm_90 each int32 update is
one VIADDMNMX; int16 uses packed pairs (``add.s16x2`` + ``min.s16x2``) and
float32 an add and a min. Every GPU figure apsp reports is also given as a
fraction of this ceiling.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import interpreting
from .minplus import minplus_pair as _minplus_pair
from .timing import event_timed_call

STEPS = 2048
BLOCK = 64


@triton.jit
def _ceiling_kernel(out_ptr, seed_ptr, steps, BLOCK: tl.constexpr, ASM: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, BLOCK)
    base = tl.load(seed_ptr + r[:, None] * BLOCK + r[None, :])
    a = base + 1
    b = base + 2
    x = base + pid.to(base.dtype)
    y = base
    for _ in range(steps):
        x = _minplus_pair(x, y, a, ASM)
        y = _minplus_pair(y, x, b, ASM)
        a = _minplus_pair(a, b, x, ASM)
        b = _minplus_pair(b, a, y, ASM)
    tl.store(out_ptr + pid * BLOCK * BLOCK + r[:, None] * BLOCK + r[None, :], x + y + a + b)


def measure_ceiling(dtype="int32", asm: int | None = None, repeats: int = 5) -> dict:
    """Measure min-plus updates per second on the current GPU.

    ``asm`` picks how the update is emitted (``apsp.gpu.minplus.ASM_*``; None:
    plain Triton ops). Returns ``{"dtype", "asm", "updates_per_s"}``.
    """
    if not torch.cuda.is_available() or interpreting():
        raise RuntimeError("the min-plus ceiling needs a CUDA GPU")
    tdt = getattr(torch, str(dtype))
    asm = 0 if asm is None else int(asm)
    props = torch.cuda.get_device_properties(0)
    programs = props.multi_processor_count * 8
    seed = torch.randint(0, 7, (BLOCK * BLOCK,), device="cuda").to(tdt)
    out = torch.empty((programs, BLOCK * BLOCK), device="cuda", dtype=tdt)

    def launch():
        _ceiling_kernel[(programs,)](out, seed, STEPS, BLOCK=BLOCK, ASM=asm, num_warps=4)

    launch()  # compiles
    times = sorted(event_timed_call(launch)[0] for _ in range(repeats))
    updates = 4 * STEPS * BLOCK * BLOCK * programs
    return {"dtype": str(dtype), "asm": asm, "updates_per_s": updates / times[len(times) // 2]}


def best_ceiling(dtype="int32") -> float:
    """The highest min-plus rate any emission mode reaches for ``dtype`` (updates/s)."""
    modes = {"int32": (0, 1), "int16": (0, 2), "float32": (0, 3)}.get(str(dtype), (0,))
    return max(measure_ceiling(dtype, asm)["updates_per_s"] for asm in modes)
