"""Work split over Python threads, each running a ``nogil`` Numba kernel on its own range.

This stands in for Numba's ``parallel=True``: the same static split (one contiguous range
per thread, as ``prange`` schedules it) at the same speed, but nothing more to compile. A
parallel function compiles a gufunc and optimises every kernel it calls once more, which
took longer than the kernels themselves (seconds of a first run).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypedDict

from ..jit import thread_count

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


class _Pool(TypedDict):
    pool: ThreadPoolExecutor | None
    workers: int


#: the workers beside the calling thread, grown to the largest split asked for
_POOL: _Pool = {"pool": None, "workers": 0}


def run_split(kernel: Callable[..., object], ntasks: int, *args, threads: int | None = None) -> None:
    """``kernel(*args, lo, hi)`` over tasks ``0..ntasks-1``, one contiguous range per thread
    (``threads``, default `thread_count`); this thread runs the first range. Returns when every
    range is done (`wait_all`)."""
    threads = min(threads or thread_count(), ntasks)
    if threads <= 1:
        kernel(*args, 0, ntasks)
        return
    if _POOL["workers"] < threads - 1:
        from concurrent.futures import ThreadPoolExecutor

        _POOL["pool"] = ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="apsp-cpu")
        _POOL["workers"] = threads - 1
    bounds = [ntasks * q // threads for q in range(threads + 1)]
    pool = _POOL["pool"]
    assert pool is not None  # made above with at least threads - 1 workers
    jobs = [pool.submit(kernel, *args, bounds[q], bounds[q + 1]) for q in range(1, threads)]
    try:
        kernel(*args, bounds[0], bounds[1])
    finally:
        wait_all(jobs)


def wait_all(jobs) -> None:
    """Wait for every job, even through Ctrl-C: no thread may still write an array when the
    caller looks at it (a checkpoint saves the matrix on the way out). Then raise a job's error."""
    from concurrent.futures import wait

    interrupted = None
    while True:
        try:
            wait(jobs)
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
    for job in jobs:
        job.result()
    if interrupted is not None:
        raise interrupted
