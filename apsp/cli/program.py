"""The ``apsp`` program: `main` reads the words (the homework form first, without a parser when no
options follow), runs the command's module and turns expected failures into one stderr line and an
exit code; `run` is the console script."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys

from ..errors import APSPError
from .homework import homework_args
from .parser import parsers


#: below this address-space limit (``ulimit -v``) OpenBLAS's thread pool, a buffer per core,
#: cannot start: under 400 MB it spun forever at scipy's import, deaf to SIGTERM
SMALL_ADDRESS_SPACE = 4 << 30


def fit_address_space() -> int | None:
    """Under a small address-space limit, one OpenBLAS thread (set before scipy loads its BLAS;
    a choice the user made in the environment stays). Returns the limit in bytes, or None."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft >= SMALL_ADDRESS_SPACE:
        return None
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    return soft


def _short_of_address_space(exc: BaseException) -> str:
    """The message for a thread or a library that could not start for want of address space."""
    limit = fit_address_space()
    where = f" under the address-space limit of {limit >> 20} MiB (ulimit -v)" if limit else ""
    return (f"cannot run{where}: {exc}; threads reserve their stacks and the compiled kernels "
            "and libraries their code beside the data: raise the limit")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    fit_address_space()
    try:
        args = homework_args(argv)
    except argparse.ArgumentError as exc:
        print(f"usage: apsp IN_FILE OUT_FILE [BLOCK] [options] | apsp COMMAND ...\napsp: error: {exc}",
              file=sys.stderr)
        return 2
    if args is None and argv[:1] == ["bench"]:
        from ..bench.cli import main as bench_main

        return _guarded(lambda _: bench_main(argv[1:]))
    if args is None:
        parser, commands = parsers()
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # the command's own usage line and name, not only "apsp"'s
            commands.get(args.command, parser).error(f"unrecognized arguments: {' '.join(unknown)}")
        if args.command == "path":
            from .path import unused_path_options

            if unused := unused_path_options(args):
                commands["path"].error(unused)
        if args.command is None:
            parser.print_help()
            return 2
    if not args.verbose:
        return _guarded(_command(args.command), args)
    with _log_to_stderr():
        return _guarded(_command(args.command), args)


def _command(name: str):
    """The function that runs command ``name``, from its module (only that one is imported)."""
    if name == "solve":
        from .solve import cmd_solve as command
    elif name == "gen":
        from .gen import cmd_gen as command
    elif name == "info":
        from .info import cmd_info as command
    elif name == "path":
        from .path import cmd_path as command
    else:
        from .stats import cmd_stats as command
    return command


@contextlib.contextmanager
def _log_to_stderr():
    """``-v``: the decisions apsp logs (logger ``apsp``, INFO) go to this command's stderr, for this
    command only (`main` may run again in the same process, with another stderr and no ``-v``)."""
    import logging

    logger = logging.getLogger("apsp")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("apsp: %(message)s"))
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def run() -> None:
    """The ``apsp`` program: `main`, then exit without unloading every module one by one
    (numba, scipy and torch took 0.3-0.8 s to tear down after the work was done)."""
    try:
        rc = main()
    except (ImportError, MemoryError) as exc:  # a library that cannot load: only a small limit explains it
        if fit_address_space() is None:
            raise
        print(f"apsp: error: {_short_of_address_space(exc)}", file=sys.stderr)
        rc = 1
    if "mpi4py" in sys.modules:  # MPI finalises in its exit handlers: the ordinary way out
        sys.exit(rc)
    import atexit
    import logging

    atexit._run_exitfuncs()
    logging.shutdown()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: the descriptor was closed when Python started
                stream.flush()
    except (OSError, ValueError):  # e.g. a closed pipe: let Python report it as usual
        sys.exit(rc)
    os._exit(rc)


def _guarded(command, args=None) -> int:
    """``command(args)``, with ``--host-memory`` as the budget of every allocation proportional to the
    input (reads, graph build, searches), not only of the solve's plan; expected failures become
    one stderr line and an exit code."""
    import signal

    from ..sizes import memory_limit

    def terminated(signum, frame):  # kill (SIGTERM) unwinds like Ctrl-C: no partial output
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread
        previous = None
    try:
        with memory_limit(getattr(args, "host_memory", None)):
            return command(args) or 0
    except KeyboardInterrupt as exc:
        print("apsp: interrupted; no output written", file=sys.stderr)
        for note in getattr(exc, "__notes__", ()):
            print(f"apsp: {note}", file=sys.stderr)
        return 130
    except (APSPError, ValueError, OSError, MemoryError) as exc:
        from ..cli_messages import cli_message

        print(f"apsp: error: {cli_message(exc, args)}", file=sys.stderr)
        return 1
    except RuntimeError as exc:
        if "can't start new thread" not in str(exc):
            raise
        print(f"apsp: error: {_short_of_address_space(exc)}", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
