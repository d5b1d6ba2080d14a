"""What a plan decided: the records `apsp.plan` returns and the engines and the public layer read.

`Plan` (a solve: its `Step`s, one per dtype attempt, each with its `MemoryPlan`), `StatsPlan` (a
statistics call). Frozen: nothing after the plan changes a decision. The decisions themselves are
made in `apsp.plan`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import exactness
from .memory_plans import MemoryPlan
from .methods import METHOD

if TYPE_CHECKING:
    from .engine import SolveOptions
    from .errors import MemoryPlanError
    from .gpu import MachineFacts

__all__ = ["MemoryPlan", "Plan", "StatsPlan", "Step"]


@dataclass(frozen=True)
class Step:
    """One dtype attempt: the registered solver to run and the options it runs with.

    ``opts.memory`` is the attempt's memory plan (`MemoryPlan`), or ``refusal`` the
    `MemoryPlanError` raised when the attempt is reached (a narrower attempt may still fit).
    """

    method: str
    solver: str
    opts: SolveOptions
    checked: bool = False
    cast_to: np.dtype | None = None
    refusal: MemoryPlanError | None = None

    @property
    def dtype(self) -> np.dtype | None:
        return self.opts.dtype


@dataclass(frozen=True)
class Plan:
    """Every decision of one solve (module docstring)."""

    method: str
    backend: str
    steps: tuple[Step, ...]
    #: what the caller asked for: method, backend, dtype ("auto" / None where unsaid)
    requested: tuple[str, str, Any]
    #: "torch" or "driver" for in-core GPU Floyd-Warshall, else None
    runtime: str | None = None
    #: the source rows asked for (indices), and whether one search each computes them
    sources: np.ndarray | None = None
    rows_by_search: bool = False
    #: the block of the method's rounds, the one its engine runs with (None: a method without one)
    block: int | None = None
    #: why a block asked for is not used (the method chosen has none), else None
    block_note: str | None = None
    #: dtypes not tried, and why (`apsp.exactness.skip_bound_to_fail`)
    skipped: tuple[str, ...] = ()
    #: why nd-fw gave way to dense FW (it did not fit), else None
    fallback: str | None = None
    #: the estimates compared by the automatic choice: "method/backend" -> seconds
    estimates: dict = field(default_factory=dict)
    #: why the method and backend were chosen
    reasons: dict = field(default_factory=dict)
    #: the graph's worst-case distance bound and whether its weights are whole numbers (the dtype's why)
    distance_bound: int | float = 0
    integral: bool = True
    #: the machine as the plan found it (`apsp.gpu.MachineFacts`: the GPU, its count, this process's
    #: device, its free memory where a GPU runs); the steps' ``device`` is its ``device``
    machine: MachineFacts | None = None

    def why(self, info: dict) -> str:
        """Why this method, backend and dtype ran, in a few words (``-v``); ``info`` is the run's."""
        parts = [f"method {self.method} ({self.reasons['method']})", f"backend {self.backend} ({self.reasons['backend']})"]
        if self.runtime:
            parts.append(f"GPU runtime {self.runtime}")
        if self.sources is not None:
            parts.append(f"{len(self.sources)} source rows "
                         f"({'one search each' if self.rows_by_search else 'rows of the full solve'})")
        parts.append(self._why_dtype(info))
        parts += [f"not tried: {why}" for why in self.skipped]
        if self.block_note:
            parts.append(self.block_note)
        if self.estimates:
            parts.append("estimates " + ", ".join([f"{k} {v:.3g} s" for k, v in self.estimates.items()]))
        return "; ".join(parts)

    def _why_dtype(self, info: dict) -> str:
        dtype = self.requested[2]
        tried, check = info.get("dtype_tried", []), info.get("dtype_check")
        reason = check and exactness.explain_check(tried, check, self.distance_bound)
        if check == "verified":
            return f"dtype {tried[-1]} ({'as asked for, ' if dtype is not None else 'the narrowest, '}{reason})"
        if check == "cast":
            return f"dtype as asked for ({reason})"
        if dtype is not None:
            return "dtype as asked for"
        if METHOD[self.method].ladder == "hops":
            return "dtype the narrowest that holds the hop counts"
        return (f"dtype {tried[-1]}, the smallest that {reason}" if tried and self.integral
                else "dtype float64 (fractional weights)")

    def summary(self) -> dict:
        """The plan as JSON values (``--json``, `Result.info["plan"]`)."""
        return {"method": self.method, "backend": self.backend, "runtime": self.runtime,
                "block": self.block, "block_note": self.block_note, "dtypes": [None if s.dtype is None else s.dtype.name for s in self.steps],
                "checked": [s.checked for s in self.steps],
                "memory": [None if s.opts.memory is None else s.opts.memory.summary() for s in self.steps],
                "reasons": dict(self.reasons), "estimates": dict(self.estimates),
                "skipped": list(self.skipped), "fallback": self.fallback}


@dataclass(frozen=True)
class StatsPlan:
    """Every decision of one `apsp.distance_stats` call (`make_stats_plan`)."""

    #: the search whose rows are reduced ("bfs", "dijkstra", "johnson"), "nd-rows" (the nested
    #: dissection's rows, on either backend), or "nd-fw" on the GPU
    method: str
    reason: str
    backend: str
    dtype: np.dtype
    #: the bit-parallel BFS (64 sources a sweep) rather than one search per source
    bit_parallel: bool
    #: the working set: host bytes and limit, threads, the block of search rows (nd-rows on the
    #: GPU: also ``gpu_bytes``/``gpu_limit`` and ``factor_bytes``; its block of sources a launch)
    memory: dict
    #: the machine as the plan found it (free memory read where the GPU runs)
    machine: MachineFacts | None = None

    @property
    def block_rows(self) -> int:
        return self.memory["block_rows"]

    @property
    def by_dissection(self) -> bool:
        """The rows come from nd-fw's matrix on the GPU, not from searches."""
        return self.backend == "gpu" and bool(METHOD[self.method].leaves.get("gpu"))
