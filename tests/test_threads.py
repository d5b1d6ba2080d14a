"""`apsp.cpu.threads.run_split`: every task once, and a thread held up does not hold up the others."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from apsp.cpu.threads import run_split


@pytest.mark.parametrize("ntasks,chunks", [(1, 8), (7, 8), (100, 1), (100, 8), (1000, 3)])
def test_every_task_runs_once(ntasks, chunks):
    seen = np.zeros(ntasks, dtype=np.int64)
    lock = threading.Lock()

    def kernel(lo, hi):
        with lock:
            seen[lo:hi] += 1

    run_split(kernel, ntasks, threads=2, chunks_per_thread=chunks)
    assert (seen == 1).all()


def test_a_held_up_thread_leaves_its_share_to_the_others():
    """The thread running the first range waits until every other range is done: with the ranges
    handed out as threads come free the others finish them all; a static split would leave half of
    them behind the waiting thread (here: the wait times out)."""
    nchunks = 2 * 8
    done_others = threading.Event()
    ran = []
    lock = threading.Lock()

    def kernel(lo, hi):
        if lo == 0:
            assert done_others.wait(timeout=10), "the other thread did not take the remaining ranges"
            return
        with lock:
            ran.append((lo, hi))
            if len(ran) == nchunks - 1:
                done_others.set()

    run_split(kernel, nchunks, threads=2, chunks_per_thread=8)
    assert sorted(lo for lo, _ in ran) == list(range(1, nchunks))


def test_an_error_stops_handing_out_ranges_and_is_raised():
    calls = []

    def kernel(lo, hi):
        calls.append(lo)
        if lo == 0:
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_split(kernel, 64, threads=1, chunks_per_thread=8)
    assert calls == [0]  # one thread: one range of all the tasks
    with pytest.raises(ValueError, match="boom"):
        run_split(kernel, 64, threads=2, chunks_per_thread=8)
