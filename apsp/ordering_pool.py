"""Worker processes for the dissection's splits (`apsp.dissection`): METIS holds the GIL, so
independent pieces of a large graph are bisected on other processes.

Plain ``python -m apsp.ordering_pool`` children, each reading pickled tasks from its stdin and
writing one pickled answer per task to its stdout: unlike `multiprocessing`'s spawn and
forkserver children they never re-run the caller's main script (a script without a
``__name__ == "__main__"`` guard stays safe), and unlike ``fork`` they copy no threads or
device state of the caller. Started on first use and kept for the process (idle, they wait
on a read); their start (an interpreter importing numpy, scipy and pymetis, in parallel) is
paid once per process.
"""
from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
from typing import IO, Any

#: modules a worker imports as it starts (what the dissection's splits use)
PRELOAD = ("numpy", "scipy.sparse.csgraph", "pymetis", "apsp.dissection")
_lock = threading.Lock()
_workers: list[subprocess.Popen] = []


class WorkerLost(RuntimeError):
    """A worker process died or could not be started."""


def start_workers(count: int) -> None:
    """Start up to ``count`` workers now (they import their modules while the caller works on)."""
    _start(count)


def _start(count: int) -> list[subprocess.Popen]:
    with _lock:
        alive = [w for w in _workers if w.poll() is None]
        if len(alive) < count and sys.executable:
            package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                filter(None, [package_root, os.environ.get("PYTHONPATH")])), OMP_NUM_THREADS="1")
            try:
                command = [sys.executable, "-m", "apsp.ordering_pool", *PRELOAD]
                alive += [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
                          for _ in range(count - len(alive))]
            except OSError as exc:
                raise WorkerLost(f"cannot start ordering workers: {exc}") from exc
        _workers[:] = alive
        return alive[:count]


def run_tasks(count: int, first: list, follow) -> None:
    """Run the tasks ``first`` (each ``(tag, function, args)``, the tag kept here) and every task
    ``follow(tag, answer)`` returns (a list) after them, on up to ``count`` worker processes, each
    answer handed to ``follow`` in this thread as it comes. Raises `WorkerLost` if a worker dies
    (nothing is retried)."""
    from multiprocessing.connection import wait

    workers = _start(count)
    if not workers:
        raise WorkerLost("no ordering workers")
    pipes = [(_pipe(w.stdin), _pipe(w.stdout)) for w in workers]
    todo = list(first)
    busy: dict[int, tuple[IO[bytes], Any]] = {}  # a worker's answer pipe (its fd) -> (that pipe, the task's tag)
    try:
        while todo or busy:
            for send, answers in pipes:
                if todo and answers.fileno() not in busy:
                    tag, function, args = todo.pop()
                    pickle.dump((function, args), send, protocol=pickle.HIGHEST_PROTOCOL)
                    send.flush()
                    busy[answers.fileno()] = (answers, tag)
            for fd in wait(list(busy)):
                answers, tag = busy.pop(int(fd))  # type: ignore[arg-type]  # wait returns what it was given
                ok, answer = pickle.load(answers)
                if not ok:
                    raise answer
                todo += follow(tag, answer)
    except (EOFError, OSError, pickle.UnpicklingError) as exc:
        _stop_all()  # a worker half-way through an answer cannot be trusted again
        raise WorkerLost(f"an ordering worker failed: {exc!r}") from exc
    except BaseException:
        if busy:  # answers still due (Ctrl-C, an error in a task): these workers are out of step
            _stop_all()
        raise


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    assert stream is not None  # every worker is started with both pipes
    return stream


def _stop_all() -> None:
    with _lock:
        for w in _workers:
            w.kill()
            w.wait()
        _workers.clear()


def _close() -> None:
    with _lock:
        for w in _workers:
            try:
                _pipe(w.stdin).close()  # the worker's read ends: it exits
                w.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                w.kill()
        _workers.clear()


atexit.register(_close)


def _serve(preload: list[str]) -> None:
    import importlib

    for name in preload:  # before the first task comes: while the caller splits the whole graph
        try:
            importlib.import_module(name)
        except ImportError:  # a task that needs it raises, and the caller hears of it
            pass
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but answers on the pipe
    while True:
        try:
            function, args = pickle.load(stdin)
        except EOFError:
            return
        try:
            answer = (True, function(*args))
        except Exception as exc:  # the caller raises it
            answer = (False, exc)
        pickle.dump(answer, stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()


if __name__ == "__main__":
    _serve(sys.argv[1:])
