"""Work split over Python threads, each running a ``nogil`` Numba kernel on its own range.

This stands in for Numba's ``parallel=True``: the same static split (one contiguous range
per thread, as ``prange`` schedules it) at the same speed, but nothing more to compile. A
parallel function compiles a gufunc and optimises every kernel it calls once more, which
took longer than the kernels themselves (seconds of a first run).

Work of many short rounds (nested-dissection FW's, the searches' chunks, BFS's batches) is cut
finer than the threads (``chunks_per_thread``) and handed out as threads come free: where another
process holds a core, the preempted thread's share is taken by the others, and a thread with
nothing left sleeps in the pool's wait rather than spinning at a barrier as OpenMP's threads do
(nd-fw's rounds in ``parallel=True`` took 4-10x their one-thread time with one core kept busy).
"""
from __future__ import annotations

import itertools

from typing import TYPE_CHECKING, Callable, TypedDict

from ..jit import thread_count

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


class _Pool(TypedDict):
    pool: ThreadPoolExecutor | None
    workers: int


#: the workers beside the calling thread, grown to the largest split asked for
_POOL: _Pool = {"pool": None, "workers": 0}


def run_split(kernel: Callable[..., object], ntasks: int, *args, threads: int | None = None,
              chunks_per_thread: int = 1) -> None:
    """``kernel(*args, lo, hi)`` over tasks ``0..ntasks-1``, one contiguous range per thread
    (``threads``, default `thread_count`); this thread runs the first range. Returns when every
    range is done (`wait_all`). ``chunks_per_thread`` above 1: that many ranges a thread, taken in
    turn by whichever thread is free (`_run_chunks`); the kernel's tasks must be independent."""
    threads = min(threads or thread_count(), ntasks)
    if threads <= 1:
        kernel(*args, 0, ntasks)
        return
    if chunks_per_thread > 1:
        _run_chunks(kernel, ntasks, args, threads, min(ntasks, threads * chunks_per_thread))
        return
    bounds = [ntasks * q // threads for q in range(threads + 1)]
    pool = _pool(threads)
    jobs = [pool.submit(kernel, *args, bounds[q], bounds[q + 1]) for q in range(1, threads)]
    try:
        kernel(*args, bounds[0], bounds[1])
    finally:
        wait_all(jobs)


def _pool(threads: int) -> ThreadPoolExecutor:
    """The pool with at least ``threads - 1`` workers."""
    if _POOL["workers"] < threads - 1:
        from concurrent.futures import ThreadPoolExecutor

        _POOL["pool"] = ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="apsp-cpu")
        _POOL["workers"] = threads - 1
    pool = _POOL["pool"]
    assert pool is not None  # made above with at least threads - 1 workers
    return pool


def _run_chunks(kernel: Callable[..., object], ntasks: int, args: tuple, threads: int, nchunks: int) -> None:
    """``nchunks`` contiguous ranges of the tasks, each run by the next thread free (this one
    among them); after an error or Ctrl-C here no further range is started."""
    bounds = [ntasks * q // nchunks for q in range(nchunks + 1)]
    turns = itertools.count()  # next() on it is atomic under the GIL: each range is taken once
    stop = [False]

    def take() -> None:
        for q in turns:
            if q >= nchunks or stop[0]:
                return
            kernel(*args, bounds[q], bounds[q + 1])

    jobs = [_pool(threads).submit(take) for _ in range(threads - 1)]
    try:
        take()
    except BaseException:
        stop[0] = True
        raise
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
