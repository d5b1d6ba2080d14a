"""Per-rank time split (read, scatter, compute, comm, copy, write, ...) and its report."""
from __future__ import annotations

import time
from contextlib import contextmanager

#: stages in report order; "comm" includes waiting for slower ranks; "setup" is the grid,
#: backend choice and kernel loading (JIT) before any data moves; "check" verifies a narrow dtype's
#: result (`apsp.exactness`; a solve again in a wider dtype adds to the same stages)
STAGES = ("setup", "read", "scatter", "compute", "comm", "copy", "check", "write", "gather")


class StageTimer:
    """Accumulates wall seconds per stage on one rank.

    ``sync`` (when given) is called before each stage ends, so asynchronous GPU
    work is charged to the stage that launched it rather than to the next
    blocking call; it is only set when profiling, since it costs overlap.

    Examples
    --------
    >>> t = StageTimer()
    >>> with t("compute"):
    ...     pass
    >>> sorted(t.seconds)
    ['compute']
    """

    def __init__(self, sync=None) -> None:
        self.seconds: dict[str, float] = {}
        self.sync = sync
        self._t0 = time.perf_counter()

    @contextmanager
    def __call__(self, stage: str, sync: bool = False):
        start = time.perf_counter()
        try:
            yield
        finally:
            if sync and self.sync is not None:
                self.sync()
            self.add(stage, time.perf_counter() - start)

    def add(self, stage: str, seconds: float) -> None:
        self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds

    def summary(self) -> dict[str, float]:
        """Seconds per stage plus ``total`` (wall since creation) and ``other`` (the rest)."""
        total = time.perf_counter() - self._t0
        out = {s: self.seconds[s] for s in STAGES if s in self.seconds}
        out.update({s: v for s, v in self.seconds.items() if s not in out})
        out["other"] = max(0.0, total - sum(out.values()))
        out["total"] = total
        return out


def format_rank_table(rank_timings: list[dict]) -> str:
    """A per-rank table of stage seconds, with the max over ranks last.

    >>> print(format_rank_table([{"compute": 1.0, "total": 1.5}, {"compute": 0.5, "total": 1.5}]))
    rank      compute      total
    0          1.0000     1.5000
    1          0.5000     1.5000
    max        1.0000     1.5000
    """
    worst = stage_maxima(rank_timings)
    lines = [f"{'rank':<6}" + "".join(f"{s:>11}" for s in worst)]
    for r, row in enumerate(rank_timings):
        lines.append(f"{r:<6}" + "".join(f"{row.get(s, 0.0):>11.4f}" for s in worst))
    lines.append(f"{'max':<6}" + "".join(f"{v:>11.4f}" for v in worst.values()))
    return "\n".join(lines)


def stage_maxima(rank_timings: list[dict]) -> dict[str, float]:
    """Per stage (in the order the ranks first name them), the largest seconds over ranks."""
    stages = dict.fromkeys(s for row in rank_timings for s in row)
    return {s: max(row.get(s, 0.0) for row in rank_timings) for s in stages}
