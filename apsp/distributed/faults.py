"""How a failing rank ends the job: agreed errors before compute, MPI_Abort during it.

Before compute starts (reading, validating, allocating) every rank reaches the
end of each stage, so ranks *agree*: each reports success or its error, and
all ranks raise the same `RankFailedError` naming the first failed rank. Nothing
hangs and the caller can catch it.

Once the collective rounds start, a rank that fails cannot tell the others,
which wait in a broadcast. It prints one line naming itself and the cause,
removes the partial output file, and calls ``MPI_Abort``: the launcher then
ends every rank with a non-zero exit code. A rank killed outright (SIGKILL,
the OOM killer) is reported by the launcher itself (hydra: "BAD TERMINATION",
Open MPI: "mpirun noticed that process rank N ... exited on signal"); the
output is then never renamed into place, so no complete-looking file appears.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager, suppress

from ..errors import APSPError

#: test-only fault injection: "RANK:STAGE" makes that rank raise at that stage,
#: "RANK:STAGE:kill" makes it die by SIGKILL there (as the OOM killer would)
TEST_FAULT_ENV = "APSP_DISTRIBUTED_TEST_FAULT"

#: seconds a failing rank waits between printing why and ``MPI_Abort``: MPICH's hydra
#: kills every process on an abort and can drop stderr still in its forwarding pipes
#: (about one abort in six lost its message on a 2-core box without the wait)
ABORT_GRACE_S = 0.5


class RankFailedError(APSPError, RuntimeError):
    """A rank of a distributed solve failed; raised on every rank alike.

    Attributes: ``rank`` (the first rank that failed), ``size``, ``stage``,
    ``cause`` (``"Type: message"`` of its exception) and ``failures``, every
    ``(rank, cause)`` reported.
    """

    def __init__(self, rank: int, size: int, stage: str, cause: str, failures=None):
        self.rank, self.size, self.stage, self.cause = rank, size, stage, cause
        self.failures = failures or [(rank, cause)]
        more = len(self.failures) - 1
        extra = f" (and {more} more rank{'s' if more > 1 else ''})" if more else ""
        super().__init__(f"rank {rank} of {size} failed while {stage}: {cause}{extra}")

    def __reduce__(self):
        return type(self), (self.rank, self.size, self.stage, self.cause, self.failures)


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def maybe_inject(stage: str, rank: int) -> None:
    """Raise the test fault if ``APSP_DISTRIBUTED_TEST_FAULT`` names this rank and stage."""
    spec = os.environ.get(TEST_FAULT_ENV)
    if not spec:
        return
    want_rank, want_stage, how = (spec.split(":") + ["", ""])[:3]
    if want_rank.strip() == str(rank) and want_stage.strip() == stage:
        if how.strip() == "kill":
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
        raise RuntimeError(f"injected test fault ({TEST_FAULT_ENV}={spec})")


@contextmanager
def agreed(comm, stage: str):
    """Run a block on every rank, then agree: if any rank raised, all raise `RankFailedError`.

    Collective over ``comm``; use it only where every rank reaches the end of
    the block (no communication inside that a failed rank would skip).
    """
    failure = None
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - reported to every rank below
        failure = exc
    reports = comm.allgather(None if failure is None else describe(failure))
    failed = [(r, cause) for r, cause in enumerate(reports) if cause is not None]
    if failed:
        rank, cause = failed[0]
        raise RankFailedError(rank, comm.size, stage, cause, failed) from failure


def abort_job(comm, stage: str, exc: BaseException, cleanup=None) -> None:
    """Print why this rank fails, run ``cleanup``, and ``MPI_Abort`` the whole job. Never returns."""
    cause = "interrupted" if isinstance(exc, KeyboardInterrupt) else describe(exc)
    print(f"apsp: error: rank {comm.rank} of {comm.size} failed while {stage}: {cause}; "
          "aborting all ranks, no output written", file=sys.stderr, flush=True)
    if cleanup is not None:
        with suppress(Exception):  # best effort while aborting
            cleanup()
    sys.stdout.flush()
    time.sleep(ABORT_GRACE_S)
    comm.Abort(1)


@contextmanager
def abort_on_failure(comm, stage_ref: list, cleanup=None):
    """Abort the job if the block raises; ``stage_ref[0]`` names the stage for the message."""
    try:
        yield
    except RankFailedError:
        raise  # already agreed by every rank
    except BaseException as exc:  # noqa: BLE001 - any failure here would leave others hanging
        abort_job(comm, stage_ref[0], exc, cleanup)
