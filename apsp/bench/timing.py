"""Warm, repeated timing with median and spread.

CPU work is timed with ``time.perf_counter``; GPU work with CUDA events around
a synchronised call (see `apsp.gpu.timing`).

>>> s = summarize([3.0, 1.0, 2.0, 10.0])
>>> s.median, s.min, s.max
(2.5, 1.0, 10.0)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Stats:
    """Median and spread of repeated timings, in seconds."""

    median: float
    min: float
    max: float
    q1: float
    q3: float
    samples: list = field(default_factory=list)

    def as_fields(self, prefix: str = "time") -> dict:
        return {f"{prefix}_median_s": self.median, f"{prefix}_min_s": self.min,
                f"{prefix}_max_s": self.max, f"{prefix}_q1_s": self.q1, f"{prefix}_q3_s": self.q3}


def summarize(samples) -> Stats:
    """Median, min, max and quartiles (linear interpolation) of ``samples``."""
    a = np.asarray(list(samples), dtype=np.float64)
    if a.size == 0:
        raise ValueError("no timing samples to summarise")
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return Stats(median=float(med), min=float(a.min()), max=float(a.max()), q1=float(q1),
                 q3=float(q3), samples=[float(x) for x in a])


def timed_call(fn, on_gpu: bool = False):
    """Run ``fn()`` once; return ``(seconds, value, timer_name)``.

    On the GPU the device is synchronised before and after, and the elapsed
    time is read from CUDA events recorded around the call.
    """
    if on_gpu:
        from ..gpu.timing import cuda_present, event_timed_call

        if cuda_present():  # else Triton's interpreter ran it on the CPU
            return (*event_timed_call(fn), "cuda_event")
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value, "perf_counter"


#: stages measured outside the solver (by apsp.api or the CLI pipeline)
OUTER_STAGES = ("read", "validate", "setup", "write")


def solver_stages(timings: dict) -> dict:
    """Stage times that add up: ``apsp.api`` always reports ``solve`` (the whole solver call);
    when the solver also reports its own parts (h2d, compute, ...), ``solve`` is replaced by
    ``other``, the part of it those do not cover.

    >>> solver_stages({"validate": 1.0, "solve": 5.0, "compute": 3.0, "h2d": 1.5})
    {'validate': 1.0, 'compute': 3.0, 'h2d': 1.5, 'other': 0.5}
    """
    parts = {k: v for k, v in timings.items() if k not in OUTER_STAGES and k != "solve"}
    if "solve" not in timings or not parts:
        return dict(timings)
    out = {k: v for k, v in timings.items() if k != "solve"}
    out["other"] = max(0.0, timings["solve"] - sum(parts.values()))
    return out


def repeats_within(limit_s: float, one_run_s: float, wanted: int) -> int:
    """How many timed repeats fit in ``limit_s`` given one run took ``one_run_s`` (1..wanted)."""
    if one_run_s <= 0:
        return wanted
    return int(max(1, min(wanted, limit_s // one_run_s)))


def predicted_time(last_n: int, last_s: float, n: int, exponent: float = 3.0) -> float:
    """Extrapolate a run time measured at ``last_n`` to ``n`` (O(n^3) work by default)."""
    return last_s * (n / last_n) ** exponent
