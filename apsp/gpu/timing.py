"""The few torch.cuda calls the benchmarks need: event timing, peak memory, device list.

Imported only when a GPU backend is measured (the solver has imported torch by
then), so CPU-only runs never load torch.
"""
from __future__ import annotations

import torch


def cuda_present() -> bool:
    """A real CUDA device (not Triton's CPU interpreter) is what the GPU solver ran on."""
    return torch.cuda.is_available()


def event_timed_call(fn):
    """``(seconds, value)`` of ``fn()`` timed with CUDA events on a synchronised device."""
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    value = fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1000.0, value


def reset_peak_memory() -> None:
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()


def peak_memory() -> dict:
    """Peak bytes allocated and reserved by torch's caching allocator since the last reset."""
    torch.cuda.synchronize()
    return {"gpu_peak_allocated_bytes": int(torch.cuda.max_memory_allocated()),
            "gpu_peak_reserved_bytes": int(torch.cuda.max_memory_reserved())}


def list_devices():
    """CUDA devices torch sees: ``([{index, name, memory_gib, capability}], {torch, cuda})``."""
    facts = {"torch": torch.__version__, "cuda": torch.version.cuda}
    devices = []
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            devices.append({"index": i, "name": props.name,
                            "memory_gib": round(props.total_memory / 2 ** 30, 1),
                            "capability": f"{props.major}.{props.minor}"})
    return devices, facts
