"""Command line: ``apsp IN_FILE OUT_FILE [BLOCK]`` (the homework form) and subcommands.

Every failure prints one clear line to stderr and exits non-zero; output files
are written whole (temporary file, then rename) or not at all.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import sys
import time

from .errors import APSPError, MemoryPlanError, require

SUBCOMMANDS = ("solve", "gen", "info", "path", "stats", "bench")

EPILOG = """examples:
  apsp graph.txt dist.txt 32                 homework form: N M, then M lines 'i j w' (1-based)
  apsp solve graph.txt -o dist.txt --backend gpu --profile
  apsp solve web.snap -o dist.npy --format snap --method bfs
  mpiexec -n 4 apsp graph.txt dist.txt 128 --distributed
  apsp gen 1000 --density 0.05 --weights 0 100 --seed 1 -o graph.txt
  apsp gen 40000 --kind link-graph --seed 1 -o links.txt   a link-graph workload (density 1/1000)
  apsp path graph.txt --from 1 --to 4
  apsp stats graph.txt --csv per-vertex.csv    closeness, eccentricity, diameter, ... (no n x n matrix)
  apsp solve big.txt -o dist.npy --gpu-memory 8GB --checkpoint big.ckpt    out of core, resumable
  apsp solve big.txt -o dist.npy --gpu-memory 8GB --checkpoint big.ckpt --resume
  apsp solve big.txt -o part.txt --rows 0:1000                            write rows 0..999 only
  apsp info
  apsp bench backends --quick --out bench-out
"""


PATH_EPILOG = """Vertices are named as the input names them, for --from/--to and the printed route:
  1-based numbers: homework text (.txt), DIMACS (.gr), Matrix Market (.mtx), METIS
  0-based numbers: .npy matrices
  ids: SNAP edge lists (the integers in the file, gaps allowed), GraphML (node ids)

With --method auto (the default) one search answers the query: breadth-first
search when every weight is 1, Dijkstra (stopping at the target; from both
ends on larger graphs) for non-negative weights, Bellman-Ford with negative weights (a negative cycle
that lies on a walk from --from to --to is an error naming it). Another
--method solves all pairs first (on --backend; fw and nd-fw with --block-size),
then reads the route.
Exit status 1 when there is no path. --json prints one object (schema_version 1):
  {"schema_version", "source", "target", "reachable", "length", "path", "hops",
   "first_vertex", "method", "dtype", "timings_s", "n", "edges"}
  ("schema", the same number under its former name, goes in the next release)

examples:
  apsp path graph.txt --from 1 --to 4
  apsp path road.gr --from 1 --to 264346 --json -v --profile
"""


#: ``solve``'s options when not given: its parser's defaults, and with IN, OUT and BLOCK the whole
#: namespace of ``apsp IN OUT [BLOCK]`` without options (no parser is built for it)
SOLVE_DEFAULTS = dict(
    output=None, paths=None, rows=None, sources=None, method="auto", backend="auto", dtype=None,
    fmt=None, out_format=None, block_size=None, unweighted=False, undirected=False, profile=False,
    json=False, quiet=False, verbose=False, gpu_memory=None, host_memory=None, out_of_core=None,
    scratch_dir=None, checkpoint=None, checkpoint_every=300.0, resume=False, distributed=False,
    cuda_aware="auto")


def _add_solve_arguments(p: argparse.ArgumentParser, homework: bool = False) -> None:
    """The arguments of ``solve``. ``homework``: the options after ``apsp IN OUT [BLOCK]``, whose
    words give the input and the output (an -o among the options still wins, as in ``solve``)."""
    if not homework:
        p.add_argument("input", help="graph file")
    p.add_argument("-o", "--output", required=not homework,
                   help="distance file (.txt homework text, .npy, .mtx), or .npz for the whole result "
                        "(distances, --paths matrix, vertex labels, facts; apsp.load_result reads it)")
    p.add_argument("--paths", metavar="FILE",
                   help="also write the next-hop (successor) matrix as .npy: entry [i, j] is the vertex "
                        "after i on a shortest path to j, -9999 where there is none (like the .npy "
                        "row and column numbers, 0-based whatever the input format)")
    p.add_argument("--rows", metavar="I:J",
                   help="compute and write only rows I..J-1 of the distance matrix (0-based matrix "
                        "rows; I: or :J for open ends)")
    p.add_argument("--sources", metavar="V,V,...",
                   help="compute and write only the rows of these source vertices, in this order "
                        "(named as in the input: 1-based for homework text, DIMACS, Matrix Market "
                        "and METIS, 0-based for .npy, the ids of SNAP and GraphML files)")
    _add_solve_options(p)
    p.add_argument("--distributed", action="store_true",
                   help="blocked FW across MPI ranks: launch with 'mpiexec -n P apsp ...' (needs mpi4py)")
    p.add_argument("--cuda-aware", choices=("auto", "yes", "no"),
                   help="with --distributed on GPUs: give device buffers to MPI directly "
                        "(default: when the MPI reports CUDA support), else stage through host memory")


def _add_solve_options(p: argparse.ArgumentParser, route: bool = False) -> None:
    """The options of ``solve``, their defaults `SOLVE_DEFAULTS`; ``route``: those ``path`` has (no
    output file, no large-problem options; its own stages and JSON)."""
    from .cli_messages import add_renamed_option

    p.set_defaults(**SOLVE_DEFAULTS)
    p.add_argument("--method", choices=("auto", "fw", "nd-fw", "bfs", "dijkstra", "johnson", "reference"),
                   help="algorithm (default: auto, see README 'Choosing a method')")
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"),
                   help="where an all-pairs --method computes (default: GPU when one is usable, else "
                        "CPU); --method auto searches on the CPU" if route else
                   "where to compute (default: GPU when one is usable, else CPU)")
    p.add_argument("--dtype", choices=("uint8", "uint16", "int16", "int32", "int64", "float32", "float64"),
                   help="distance type (default: the narrowest that holds the actual distances, "
                        "verified after the solve; uint8/uint16 for --method bfs only)")
    p.add_argument("--format", dest="fmt", help="input format (default: from the suffix; homework for .txt)")
    if not route:
        p.add_argument("--out-format", help="output format (default: from the suffix)")
    add_renamed_option(p, "--block-size", type=int, metavar="B",
                       help="blocking factor" + (" of --method fw or nd-fw" if route else "")
                            + " (default: the backend's best)")
    p.add_argument("--unweighted", action="store_true", help="treat every edge as weight 1")
    p.add_argument("--undirected", action="store_true", help="edges go both ways")
    p.add_argument("--profile", action="store_true",
                   help="print the time of each stage (" + (
                       "startup, read, search; compile on a first run; with another --method the "
                       "solve's stages" if route else
                       "startup, read, validate, setup, transfers, compute, write; compile on a "
                       "first run") + ")")
    p.add_argument("--json", action="store_true",
                   help="print the route as one JSON object (see below)" if route else
                   "print a JSON summary on stdout (same keys every run, schema_version 1; "
                   "see README 'JSON summary')")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars or notes")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="say what was chosen and why (the decisions logged under the 'apsp' logger)")
    if route:
        add_renamed_option(p, "--host-memory", metavar="SIZE",
                           help="RAM the read, the graph and the search may use (default: what the "
                                "OS reports available)")
        return
    big = p.add_argument_group("large problems (memory, out-of-core, checkpoints)")
    big.add_argument("--gpu-memory", metavar="SIZE",
                     help="GPU memory the solve may use, e.g. 8GB or 6GiB (default: what is free); "
                          "a matrix that does not fit streams through the GPU out of core")
    add_renamed_option(big, "--host-memory", metavar="SIZE",
                     help="RAM the solve may use (default: what the OS reports available, capped "
                          "by a container's or batch job's cgroup memory limit)")
    big.add_argument("--out-of-core", action="store_const", const=True,
                     help="stream the matrix in stripes even if it fits (on the CPU backend: from a "
                          "scratch file, for matrices bigger than RAM)")
    add_renamed_option(big, "--scratch-dir", metavar="DIR",
                     help="directory for an out-of-core matrix file (default: the system temp dir)")
    big.add_argument("--checkpoint", metavar="FILE",
                     help="save the solve's state to FILE every --checkpoint-every seconds (fw only)")
    big.add_argument("--checkpoint-every", metavar="SECONDS", type=float,
                     help="seconds between checkpoints (default: 300)")
    big.add_argument("--resume", action="store_true",
                     help="continue from --checkpoint FILE (refused if it was made for another graph "
                          "or dtype)")


def _add_report_options(p, verbose_says: str, stages: str) -> None:
    """-v and --profile for the subcommands that do not solve."""
    p.add_argument("-v", "--verbose", action="store_true", help=f"say on stderr {verbose_says}")
    p.add_argument("--profile", action="store_true", help=f"print the time of each stage ({stages})")


def build_parser() -> argparse.ArgumentParser:
    return _parsers()[0]


def _parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The ``apsp`` parser, and its commands' parsers by name."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="apsp", description="All-pairs shortest paths on CPU and GPU.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"apsp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    command = functools.partial(sub.add_parser, formatter_class=argparse.RawDescriptionHelpFormatter)

    _add_solve_arguments(command("solve", help="solve a graph file and write the distance matrix",
                                 epilog="example:\n  apsp solve graph.txt -o dist.txt --block-size 64 --profile"))

    p = command("gen", help="write a random graph",
                epilog="example:\n  apsp gen 1000 --density 0.05 --weights 0 100 --seed 1 -o g.txt")
    p.add_argument("n", type=int, help="number of vertices")
    p.add_argument("--density", type=float, default=None,
                   help="fraction of the n(n-1) possible edges (default: 0.1; link-graph: 0.001)")
    p.add_argument("--weights", type=_number, nargs=2, default=None, metavar=("LO", "HI"),
                   help="weights drawn uniformly from LO..HI, integers when both are "
                        "(default: 0 100; link-graph: every weight 1); homework text (.txt) "
                        "holds integers only")
    p.add_argument("--kind", default="uniform", choices=("uniform", "link-graph"),
                   help="uniform (every pair equally likely) or link-graph (directed, power-law "
                        "degrees, like a web or Wikipedia link graph)")
    p.add_argument("--seed", type=int, default=None, help="random seed")
    p.add_argument("-o", "--output", required=True, help="graph file to write")
    p.add_argument("--format", dest="fmt", default=None, help="output format (default: from suffix)")
    _add_report_options(p, "the parameters used (with the defaults filled in), the edges drawn "
                           "and the output format", "generate, write")

    p = command("info", help="show the backends found here and why any is missing")
    p.add_argument("--json", action="store_true", help="print as JSON")
    _add_report_options(p, "every backend's facts and which backend --backend auto picks here, "
                           "and why", "each backend's probe")

    p = command("path", help="print a shortest path and its length (one search, not all pairs)",
                epilog=PATH_EPILOG)
    p.add_argument("input", help="graph file")
    p.add_argument("--from", dest="source", required=True,
                   help="start vertex, named as in the input (see below)")
    p.add_argument("--to", dest="target", required=True,
                   help="end vertex, named as in the input")
    _add_solve_options(p, route=True)

    _add_stats_parser(command)

    p = command("bench", help="run a benchmark suite (see 'apsp bench --help')", add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)
    return parser, sub.choices


def _number(text: str):
    """An int when the text is one (so '0 100' gives integer weights), else a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _homework_args(argv: list[str]) -> argparse.Namespace | None:
    """``solve``'s namespace for ``apsp IN OUT [BLOCK] [options]``, or None when ``argv`` starts with a
    command or an option: IN, OUT and BLOCK, then the options after them (`SOLVE_DEFAULTS` for the
    rest). Their errors and --help read as after ``apsp solve IN -o OUT``; words that are neither a
    command nor this form raise ``argparse.ArgumentError``."""
    if not argv or argv[0].startswith("-"):
        return None
    positional = []
    for token in argv:
        if token.startswith("-") and token != "-":  # "-" is standard output, not an option
            break
        positional.append(token)
    # a command's name, unless the whole line is two or three bare words, the first an existing
    # file, for a command that could not take them (each of these needs an option or takes none)
    if argv[0] in SUBCOMMANDS and not (len(positional) == len(argv) and len(argv) in (2, 3)
                                       and argv[0] in ("solve", "gen", "info", "path")
                                       and os.path.isfile(argv[0])):
        return None
    if len(positional) not in (2, 3):
        count = f"{len(positional)} argument{'s' if len(positional) != 1 else ''}"
        raise argparse.ArgumentError(None, (
            f"{argv[0]!r} is not a command; the homework form is apsp IN_FILE OUT_FILE [BLOCK] "
            f"(got {count}), or run a command: {', '.join(SUBCOMMANDS)} (see apsp --help)"))
    if len(positional) == 3 and not (positional[2].isdigit() and int(positional[2]) > 0):
        raise argparse.ArgumentError(
            None, f"BLOCK must be a positive integer (the blocking factor), got {positional[2]!r}")
    args = argparse.Namespace(command="solve", input=positional[0], **{
        **SOLVE_DEFAULTS, "output": positional[1],
        "block_size": int(positional[2]) if len(positional) == 3 else None})
    options = argv[len(positional):]
    if options:
        words = _HomeworkOptions(prog="apsp solve")
        _add_solve_arguments(words, homework=True)
        args, unknown = words.parse_known_args(options, args)
        if unknown:
            build_parser().error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


class _HomeworkOptions(argparse.ArgumentParser):
    """The options after ``apsp IN OUT [BLOCK]``; its usage line and help are ``solve``'s."""

    def format_usage(self) -> str:
        return _parsers()[1]["solve"].format_usage()

    def format_help(self) -> str:
        return _parsers()[1]["solve"].format_help()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _homework_args(argv)
    except argparse.ArgumentError as exc:
        print(f"usage: apsp IN_FILE OUT_FILE [BLOCK] [options] | apsp COMMAND ...\napsp: error: {exc}",
              file=sys.stderr)
        return 2
    if args is None and argv[:1] == ["bench"]:
        from .bench.cli import main as bench_main

        return _guarded(lambda _: bench_main(argv[1:]))
    if args is None:
        parser, commands = _parsers()
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # the command's own usage line and name, not only "apsp"'s
            commands.get(args.command, parser).error(f"unrecognized arguments: {' '.join(unknown)}")
        if args.command == "path" and (unused := _unused_path_options(args)):
            commands["path"].error(unused)
        if args.command is None:
            parser.print_help()
            return 2
    if args.verbose:
        _log_to_stderr()
    handler = {"solve": _cmd_solve, "gen": _cmd_gen, "info": _cmd_info, "path": _cmd_path,
               "stats": _cmd_stats}[args.command]
    return _guarded(handler, args)


def _log_to_stderr() -> None:
    """``-v``: the decisions apsp logs (logger ``apsp``, INFO) go to stderr."""
    import logging

    logger = logging.getLogger("apsp")
    logger.setLevel(logging.INFO)
    if any(getattr(h, "apsp_cli", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("apsp: %(message)s"))
    handler.apsp_cli = True
    logger.addHandler(handler)


def run() -> None:
    """The ``apsp`` program: `main`, then exit without unloading every module one by one
    (numba, scipy and torch took 0.3-0.8 s to tear down after the work was done)."""
    rc = main()
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

    from .sizes import memory_limit

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
        from .cli_messages import cli_message

        print(f"apsp: error: {cli_message(exc, args)}", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _start_command(args, solve: bool = False, paths: bool = False) -> dict:
    """Announce compiles (unless quiet) and count them (`apsp.jit`); ``{"startup": seconds}`` so that
    a profile accounts for the wall time: since ``import apsp`` began, plus the interpreter's own
    start before it, counted as the CPU time the process had used by then (that start is CPU-bound
    work; a wait before exec uses none). Not the process's age: that counts whatever ran before
    exec, so ``bash -c 'sleep 3 && apsp ...'`` would report 3 s more.

    ``solve``: first import what every solve needs, beside the GPU's start where one may be used;
    ``paths``: the solve returns next hops."""
    if solve:
        # first: torch's import and CUDA's start are the longest chain; our imports and the read
        # (whose kernels release the GIL) run beside it. Under "auto" only on machines with an
        # NVIDIA device (else the import would only take CPU from the reader)
        if args.backend == "gpu" or (args.backend == "auto" and os.path.exists("/dev/nvidiactl")):
            _gpu_start_in_background(args, paths)
        from . import api, io  # noqa: F401  (numpy, numba: imported here, not inside "read")
    from . import _CPU_BEFORE_IMPORT, _IMPORT_STARTED
    from .jit import notify_compiles

    notify_compiles(None if getattr(args, "quiet", False) else sys.stderr)
    return {"startup": time.perf_counter() - _IMPORT_STARTED + _CPU_BEFORE_IMPORT}


def _gpu_start_in_background(args, paths: bool) -> None:
    """Start CUDA, and import torch (for what only its engines do: ``paths``, BFS, nested dissection)
    or only Triton (a distances-only FW solve runs on the CUDA driver without torch:
    `apsp.plan.gpu_runtime`), on a thread while the main thread imports numba and reads the input.
    The solve's backend choice then finds them done, or waits for the rest: its "setup" stage is
    only that wait. A large input: also pin the result's staging buffers meanwhile (later, the
    driver's lock would make the solve wait for it)."""
    import importlib.util
    import threading

    if importlib.util.find_spec("torch") is None:
        return
    torch_needed = args.method not in ("auto", "fw") or paths
    try:
        large_input = os.stat(args.input).st_size >= LARGE_INPUT_BYTES
    except (OSError, TypeError):  # no file (yet): the read reports it
        large_input = False

    def start():
        with contextlib.suppress(Exception):  # the solve reports what is wrong, in its own words
            from .plan import gpu_available

            if gpu_available()[0]:
                from .gpu.warmup import warm_up

                warm_up(torch_needed, pin_staging=large_input)

    if os.path.exists("/dev/nvidiactl"):
        from .gpu.warmup import start_cuda_driver

        threading.Thread(target=start_cuda_driver, name="apsp-cuda-init", daemon=True).start()
    threading.Thread(target=start, name="apsp-gpu-start", daemon=True).start()


#: an input file this large will likely have a result large enough for the staged copy
LARGE_INPUT_BYTES = 16 << 20


def _solve_file(args):
    from .api import as_graph, shortest_paths
    from .jit import book_compile, compile_seconds

    startup = _start_command(args, solve=True, paths=bool(args.paths))
    t0 = time.perf_counter()
    compiled = compile_seconds()
    from .io import read_graph

    loaded = read_graph(args.input, fmt=args.fmt)
    n = loaded.n if hasattr(loaded, "n") else len(loaded)
    if args.block_size is not None and args.block_size < 1:
        raise ValueError(f"blocking factor must be a positive integer, got {args.block_size}")
    args._labels = getattr(loaded, "labels", None)  # vertex names, for messages and routes
    # --rows, --sources: a typo should not wait for the solve
    sources = None if args.rows is None and args.sources is None else _sources_arg(args, n)
    # before the graph's n-sized arrays: the result alone must fit somewhere
    _check_result_fits(args, n, n if sources is None else len(sources))
    g = as_graph(loaded, directed=not args.undirected, unweighted=args.unweighted)
    t_read = time.perf_counter() - t0
    compiled = compile_seconds() - compiled
    result = shortest_paths(g, sources=None if sources is None else _names(g.labels, sources),
                            return_successors=bool(args.paths), **_solve_options(args))
    result.timings = book_compile({**startup, "read": t_read, **result.timings}, compiled, "read")
    return g, result


def _check_result_fits(args, n: int, rows: int) -> None:
    """Refuse at once a result no memory could hold: ``rows x n`` distances of one byte each
    (the narrowest dtype) need that much RAM or, streamed out of core, scratch disk."""
    import tempfile

    from .sizes import disk_available, format_size, memory_allowed

    need = rows * n
    ram = memory_allowed()[0]  # --host-memory, which `_guarded` set, else the RAM available
    if need <= ram:  # the disk is asked only when the RAM will not do
        return
    disk = disk_available(args.scratch_dir or tempfile.gettempdir())
    if need > disk:
        raise MemoryPlanError(
            f"{args.input}: n = {n} vertices; a {rows} x {n} distance matrix needs at least "
            f"{format_size(need)} (one byte per entry), more than the RAM ({format_size(ram)}) or the "
            f"scratch disk ({format_size(disk)}) available; --rows/--sources compute fewer rows")


def _cmd_solve(args) -> int:
    from .io import check_outputs, guess_format, write_distances
    from .io.atomic import STDOUT, all_or_none

    # every output, checked before the input is read
    if args.paths and not (str(args.paths).endswith(".npy") or args.paths == STDOUT):
        raise ValueError(f"--paths writes a .npy file, got {args.paths!r}")
    if args.json and STDOUT in (args.output, args.paths):
        raise ValueError("--json and an output to standard output ('-') would mix on stdout; "
                         "drop --json or write the output to a file")
    if args.scratch_dir is not None and not os.path.isdir(args.scratch_dir):
        raise FileNotFoundError(f"--scratch-dir {args.scratch_dir}: no such directory")
    if args.scratch_dir is not None and not os.access(args.scratch_dir, os.W_OK | os.X_OK):
        raise PermissionError(f"--scratch-dir {args.scratch_dir}: the directory is not writable")
    check_outputs({"-o": (args.output, args.out_format, "distances"),
                   "--paths": (args.paths, "npy", "distances"),
                   "--checkpoint": (args.checkpoint, None, "file")}, inputs={"the input": args.input})
    if args.distributed:
        if args.rows or args.sources:
            raise ValueError("--rows and --sources are not available with --distributed (it solves "
                             "all pairs); drop --distributed to compute only some rows")
        require("mpi4py", "--distributed")
        from .distributed.cli import run_solve

        return run_solve(args)
    from .jit import book_compile, compile_seconds

    g, result = _solve_file(args)
    t0 = time.perf_counter()
    compiled = compile_seconds()
    if guess_format(args.output, args.out_format) == "npz":
        result.save(args.output)  # the whole result: labels, sources and --paths' matrix too
        if args.paths:
            write_distances(args.paths, result.successors, fmt="npy")
    else:
        # the number of the block's first row: k x n, the rows of --rows or --sources
        first_row = None if result.sources is None else (_parse_rows(args.rows, g.n) or (0,))[0]
        with all_or_none():  # both outputs new or both old; --paths first, as -o may be a stream
            if args.paths:
                write_distances(args.paths, result.successors, fmt="npy")
            write_distances(args.output, result.distances, fmt=args.out_format, first_row=first_row,
                            progress=False if args.quiet else None)
        if g.labels is not None and not args.quiet:  # a matrix alone does not say which vertex is which
            shown = ", ".join(map(str, g.labels[:4].tolist())) + (", ..." if g.n > 4 else "")
            print(f"apsp: note: the input names its vertices; the matrix's columns (and rows, unless "
                  f"--rows/--sources) are {shown} in this order; -o NAME.npz keeps the labels with "
                  "the distances", file=sys.stderr)
    result.timings["write"] = time.perf_counter() - t0
    book_compile(result.timings, compile_seconds() - compiled, "write")
    if args.json or args.verbose or args.profile:
        _report(args, g, result)
    return 0


def _solve_options(args) -> dict:
    """`shortest_paths`'s keywords from ``solve``'s options (``path``'s too); the memory and
    checkpoint ones only where given."""
    opts = dict(method=args.method, backend=args.backend, dtype=args.dtype, block_size=args.block_size,
                progress=False if args.quiet else None)
    for name in ("gpu_memory", "host_memory", "out_of_core", "scratch_dir", "checkpoint"):
        if getattr(args, name) is not None:
            opts[name] = getattr(args, name)
    if args.checkpoint is not None:
        opts.update(checkpoint_every=args.checkpoint_every, resume=args.resume)
    elif args.resume:
        raise ValueError("--resume needs --checkpoint FILE (the file to resume from)")
    return opts


def _sources_arg(args, n: int):
    """The source vertices (0-based) of ``--rows`` or ``--sources``; None for all."""
    rows = _parse_rows(getattr(args, "rows", None), n)
    listed = getattr(args, "sources", None)
    if rows and listed:
        raise ValueError("give --rows or --sources, not both")
    if rows:
        import numpy as np

        return np.arange(rows[0], rows[1])
    if not listed:
        return None
    from .graph import vertex_indices
    from .io import FIRST_VERTEX, detect_format

    first = FIRST_VERTEX[detect_format(args.input, args.fmt)]
    given = [v.strip() for v in str(listed).split(",") if v.strip()]
    if not given:
        raise ValueError("--sources needs at least one vertex")
    labels = getattr(args, "_labels", None)
    if labels is not None:
        return vertex_indices(labels, n, given, "--sources")
    return [_vertex_arg("--sources", v, first, n) for v in given]


def _parse_rows(text, n: int):
    """``--rows I:J`` as (I, J), 0-based, J exclusive; None when not given."""
    if text is None:
        return None
    try:
        lo_text, hi_text = str(text).split(":")  # ValueError unless one colon
        lo = int(lo_text) if lo_text.strip() else 0
        hi = int(hi_text) if hi_text.strip() else n
    except ValueError:
        raise ValueError(f"--rows takes I:J (0-based rows I..J-1, e.g. 0:100 or 500:), got {text!r}") from None
    if not 0 <= lo < hi <= n:
        raise ValueError(f"--rows {text}: need 0 <= I < J <= n = {n}")
    return lo, hi


def _report(args, g, result) -> None:
    from .cli_messages import solve_summary

    if args.json:
        print(json.dumps(solve_summary(n=g.n, edges=g.nnz, method=result.method, backend=result.backend,
                                       dtype=result.dtype.name, block_size=result.block_size,
                                       timings=result.timings, info=result.info)))
    if args.verbose and not args.json:
        print(f"apsp: n={g.n} edges={g.nnz} method={result.method} backend={result.backend} "
              f"dtype={result.dtype.name} block={result.block_size}", file=sys.stderr)
        if result.info.get("why"):
            print(f"apsp: chosen: {result.info['why']}", file=sys.stderr)
    if args.profile:
        _print_stages(result.timings)


def _print_stages(timings: dict) -> None:
    """The --profile table on stderr: each stage's seconds and share of the total."""
    total = sum(timings.values())
    print(f"{'stage':<12} {'seconds':>10} {'share':>7}", file=sys.stderr)
    for stage, sec in timings.items():
        print(f"{stage:<12} {sec:>10.4f} {sec / total if total else 0:>7.1%}", file=sys.stderr)
    print(f"{'total':<12} {total:>10.4f}", file=sys.stderr)


def _cmd_gen(args) -> int:
    from .generate import random_graph
    from .io import check_outputs, guess_format, write_graph

    check_outputs({"-o": (args.output, args.fmt, "graph")})
    _start_command(args)
    if args.n < 1:  # no graph file format holds a graph without vertices
        raise ValueError(f"n must be at least 1, got {args.n}")
    weights = tuple(args.weights) if args.weights else (None if args.kind == "link-graph" else (0, 100))
    fractional = weights is not None and not all(isinstance(w, int) for w in weights)
    if fractional and guess_format(args.output, args.fmt) == "homework":  # refused before drawing
        raise ValueError(f"homework text holds integer weights, but --weights {weights[0]} {weights[1]} "
                         "draws fractional ones: give integer bounds (e.g. --weights 0 100), or write "
                         f"{args.output!r} as .snap, .mtx or .gr")
    t0 = time.perf_counter()
    edges = random_graph(args.n, args.density, weights=weights, seed=args.seed, kind=args.kind)
    t1 = time.perf_counter()
    write_graph(args.output, edges, fmt=args.fmt)
    t2 = time.perf_counter()
    if args.verbose:
        density = args.density if args.density is not None else (
            f"{0.001 if args.kind == 'link-graph' else 0.1} (default for {args.kind})")
        drawn = "every weight 1" if weights is None else (
            f"weights {weights[0]}..{weights[1]} ({'floats' if fractional else 'integers'}"
            f"{'' if args.weights else ', default'})")
        print(f"apsp: gen n={args.n} kind={args.kind} density={density}, {drawn}, "
              f"seed={args.seed if args.seed is not None else 'none (a different graph each run)'}; "
              f"{len(edges.src)} edges drawn; wrote {args.output} as {guess_format(args.output, args.fmt)} "
              f"({'as asked' if args.fmt else 'from the suffix'})", file=sys.stderr)
    if args.profile:
        _print_stages({"generate": t1 - t0, "write": t2 - t1})
    return 0


def _unused_path_options(args) -> str | None:
    """What ``path`` would otherwise ignore: the all-pairs options beside the one search of --method auto."""
    if args.block_size is not None and args.method not in ("fw", "nd-fw"):  # Floyd-Warshall's
        return (f"--block-size is the blocking factor of --method fw or nd-fw; "
                f"--method {args.method} takes none")
    if args.backend == "gpu" and args.method == "auto":
        return ("--backend gpu needs an all-pairs --method (e.g. fw): --method auto runs one search, "
                "on the CPU")
    return None


def _cmd_path(args) -> int:
    from .io import FIRST_VERTEX, detect_format

    first = FIRST_VERTEX[detect_format(args.input, args.fmt)]
    all_pairs = args.method != "auto"  # an explicit all-pairs method: solve everything, then read the route
    startup = _start_command(args, solve=all_pairs, paths=True)
    from .api import as_graph
    from .jit import book_compile, compile_seconds
    from .query import shortest_path_between

    t0 = time.perf_counter()
    compiled = compile_seconds()
    g = as_graph(args.input, fmt=args.fmt, directed=not args.undirected, unweighted=args.unweighted)
    args._labels = g.labels
    t_read = time.perf_counter() - t0
    s, t = _vertex_arg("--from", args.source, first, g), _vertex_arg("--to", args.target, first, g)
    if all_pairs:
        return _route_by_solve(args, g, s, t, first, {**startup, "read": t_read}, compile_seconds() - compiled)
    route = shortest_path_between(g, *_names(g.labels, [s, t]), dtype=args.dtype)
    route.timings = book_compile({**startup, "read": t_read, **route.timings}, compile_seconds() - compiled,
                                 ("read", "search"))
    if args.verbose:
        named = "named by the input's labels" if g.labels is not None else f"numbered from {first} as in the input"
        print(f"apsp: n={g.n} edges={g.nnz}; vertices {named}; "
              f"method={route.method} ({route.reason}): one search from {args.source} to "
              f"{args.target}; dtype={route.dtype.name} "
              f"({'as asked' if args.dtype else 'smallest holding (n-1)*max|w|'}); "
              f"{route.visited} vertices visited", file=sys.stderr)
    if args.profile:
        _print_stages(route.timings)
    return _print_route(args, g, route, first)


def _print_route(args, g, route, first: int) -> int:
    """The route as JSON or as text; exit status 1 when there is none."""
    if args.json:
        print(json.dumps({**route.to_json(first), "n": g.n, "edges": g.nnz}))
    elif route.reachable:
        print(" -> ".join(str(v if route.by_label else v + first) for v in route.path))
        print(f"length {route.length}")
    else:
        print(f"no path from {args.source} to {args.target}")
    return 0 if route.reachable else 1


def _vertex_arg(option: str, value, first: int, g) -> int:
    """A vertex given as the input names it (a label, or a number in the file's numbering), as
    a 0-based index (ValueError if there is none such). ``g``: the graph, or its vertex count."""
    from .graph import vertex_index

    n, labels = (g, None) if isinstance(g, int) else (g.n, g.labels)
    if labels is not None:
        return vertex_index(labels, n, value, option)
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{option} takes a vertex number, got {value!r}") from None
    if not first <= number < n + first:
        raise ValueError(f"{option} {value} is not a vertex: this graph numbers its {n} vertices "
                         f"{first}..{n - 1 + first}")
    return number - first


def _names(labels, indices):
    """The vertices ``indices`` as the API takes them for this graph: labels, or the indices."""
    return list(indices) if labels is None else labels[list(indices)].tolist()


def _route_by_solve(args, g, i: int, j: int, first: int, timings: dict, compiled: float) -> int:
    """``path`` with an all-pairs --method: solve all pairs with next hops, then read the route
    from ``i`` to ``j``. ``timings``: the stages so far (startup, read); ``compiled``: seconds of
    them spent compiling."""
    from .api import shortest_paths
    from .jit import book_compile
    from .paths import reconstruct_path
    from .query import Route

    result = shortest_paths(g, return_successors=True, **_solve_options(args))
    result.timings = book_compile({**timings, **result.timings}, compiled, "read")
    reachable = bool(result.reachable[i, j])
    route = Route(i, j, reconstruct_path(result.successors, i, j, kind="successors") if reachable else None,
                  result.distances[i, j].item() if reachable else None, result.method, result.dtype,
                  timings=result.timings).named(g.labels)
    if not args.json:
        _report(args, g, result)
    return _print_route(args, g, route, first)


def _cmd_info(args) -> int:
    from .info import backend_report

    report = backend_report(timings := {})
    if args.verbose:
        for name, entry in report.items():
            facts = ", ".join(f"{k}={v}" for k, v in entry.items()
                              if k not in ("available", "detail", "hint"))
            print(f"apsp: {name}: {facts}", file=sys.stderr)
        from .plan import GPU_MIN_VERTICES

        gpu = report["gpu"]["available"]
        print("apsp: --backend auto picks "
              + (f"the GPU for Floyd-Warshall (dense and nd-fw) and BFS solves from "
                 f"{GPU_MIN_VERTICES} vertices (a GPU is usable), the CPU for smaller graphs "
                 "and for Dijkstra/Johnson"
                 if gpu else f"the CPU for every solve: {report['gpu']['detail']}"), file=sys.stderr)
    if args.profile:
        _print_stages(timings)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, entry in report.items():
            print(f"{name:<10} {'yes' if entry['available'] else 'no '}  {entry['detail']}")
    return 0


# -- apsp stats: reductions of all distances, without the matrix ---------------------------------

STATS_EPILOG = """Searches from every vertex (or --sources), each row of distances reduced as it is
found and dropped: the n x n matrix is never held. Vertex numbers follow the input
format (1-based for homework text, DIMACS, Matrix Market, METIS; 0-based otherwise).
Distances are from each source (--direction out) or to it (--direction in; networkx's
closeness on directed graphs). Unreachable pairs make the diameter, radius, average
distance and Wiener index infinite (null in --json) and count as 1/inf = 0 in the
harmonic centrality and the efficiency.

--csv FILE writes one row per source:
  vertex,reachable,total_distance,eccentricity,reaches_all,closeness,harmonic
(closeness as networkx's, wf_improved; eccentricity: the largest finite distance).
--json prints one object (schema 1):
  {"schema", "n", "edges", "sources", "direction", "method", "reason", "backend", "dtype",
   "connected", "diameter", "radius", "center", "periphery", "average_distance",
   "wiener_index", "global_efficiency", "histogram", "timings_s"}

examples:
  apsp stats graph.txt
  apsp stats web.snap --format snap --direction in --csv closeness.csv --json
"""


def _add_stats_parser(command) -> None:
    """``apsp stats``'s parser; ``command``: the subparsers' ``add_parser``."""
    from .cli_messages import add_renamed_option

    p = command("stats", help="closeness, eccentricity, diameter, ... of every vertex "
                              "(streams rows, no n x n matrix)", epilog=STATS_EPILOG)
    p.add_argument("input", help="graph file")
    p.add_argument("--csv", metavar="FILE", default=None, help="write the per-vertex values (see below)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--sources", metavar="V,V,...", default=None,
                   help="reduce the rows of these vertices only, in this order (numbered as in the input)")
    p.add_argument("--direction", default="out", choices=("out", "in"),
                   help="distances from each source (out, default) or to it (in)")
    p.add_argument("--histogram", action="store_true",
                   help="also count the distances by value (integer distances only)")
    p.add_argument("--method", default="auto", choices=("auto", "bfs", "dijkstra", "johnson"),
                   help="the searches (default: BFS for unit weights, Dijkstra, Johnson with "
                        "negative weights)")
    p.add_argument("--dtype", default=None, choices=("int16", "int32", "int64", "float32", "float64"),
                   help="distance type of weighted searches (default: the narrowest exact one)")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"),
                   help="where to search (default: the GPU for unit weights when one is usable; "
                        "weighted graphs and --histogram on the CPU)")
    p.add_argument("--format", dest="fmt", help="input format (default: from the suffix; homework for .txt)")
    p.add_argument("--unweighted", action="store_true", help="treat every edge as weight 1")
    p.add_argument("--undirected", action="store_true", help="edges go both ways")
    add_renamed_option(p, "--host-memory", metavar="SIZE", default=None,
                       help="RAM the searches may use (default: what the OS reports available)")
    p.add_argument("--gpu-memory", metavar="SIZE", default=None,
                   help="GPU memory for a block of sources' bit arrays (default: what is free)")
    p.add_argument("--distributed", action="store_true",
                   help="split the sources over MPI ranks: launch with 'mpiexec -n P apsp stats ...' "
                        "(needs mpi4py; every rank reads the graph; NUMBA_NUM_THREADS per rank)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or notes")
    _add_report_options(p, "the graph's size, the search chosen and why, and the memory planned",
                        "read, search, write")


def _stats_value(x):
    """A JSON value: ints stay ints, inf becomes null."""
    return None if isinstance(x, float) and math.isinf(x) else x


def _cmd_stats(args) -> int:
    if args.distributed:
        require("mpi4py", "--distributed")
        from .distributed.cli import run_stats

        return run_stats(args, stats_command)
    from .stats import distance_stats

    return stats_command(args, distance_stats)


def stats_command(args, compute) -> int:
    """``apsp stats``: read, ``compute(graph, sources, **options)`` (`apsp.distance_stats` or
    its distributed form, which returns None on ranks other than 0: they print nothing), report."""
    from .api import as_graph
    from .io import FIRST_VERTEX, check_outputs, detect_format
    from .jit import book_compile, compile_seconds

    if args.csv is not None and args.json and args.csv == "-":
        raise ValueError("--json and --csv - would mix on standard output; write the CSV to a file")
    check_outputs({"--csv": (args.csv, None, "file")})
    first = FIRST_VERTEX[detect_format(args.input, args.fmt)]
    startup = _start_command(args)
    compiled = compile_seconds()
    t0 = time.perf_counter()
    g = as_graph(args.input, fmt=args.fmt, directed=not args.undirected, unweighted=args.unweighted)
    t_read = time.perf_counter() - t0
    sources = _sources_arg(args, g.n)
    t0 = time.perf_counter()
    st = compute(g, sources, direction=args.direction, method=args.method, backend=args.backend,
                 dtype=args.dtype, histogram=args.histogram, progress=False if args.quiet else None,
                 host_memory=args.host_memory, gpu_memory=args.gpu_memory)
    if st is None:
        return 0
    timings = {**startup, "read": t_read, "search": time.perf_counter() - t0}
    if args.csv is not None:
        t0 = time.perf_counter()
        _write_stats_csv(args.csv, st, first)
        timings["write"] = time.perf_counter() - t0
    timings = book_compile(timings, compile_seconds() - compiled, ("read", "search"))
    if args.verbose:
        plan = st.info["memory"]
        print(f"apsp: n={g.n} edges={g.nnz}; {len(st.sources)} sources, direction {st.direction}; "
              f"method={st.method} ({st.reason}) on the {st.info['backend']}; "
              f"dtype={st.dtype.name}; working set "
              f"{plan['host_bytes']} bytes on {plan['threads']} threads"
              f"{' per rank, ' + str(st.info['ranks']) + ' ranks' if 'ranks' in st.info else ''}",
              file=sys.stderr)
    if args.profile:
        _print_stages(timings)
    summary = _stats_summary(g, st, first, timings)
    if args.json:
        print(json.dumps(summary))
    else:
        _print_stats(summary)
    return 0


def _stats_summary(g, st, first: int, timings: dict) -> dict:
    return {
        "schema": 1, "n": g.n, "edges": g.nnz, "sources": len(st.sources),
        "direction": st.direction, "method": st.method, "reason": st.reason,
        "backend": st.info["backend"], "dtype": st.dtype.name, "connected": bool(st.reaches_all.all()),
        "diameter": _stats_value(st.diameter()), "radius": _stats_value(st.radius()),
        "center": [int(v) + first for v in st.center()],
        "periphery": [int(v) + first for v in st.periphery()],
        "average_distance": _stats_value(st.average_distance()),
        "wiener_index": _stats_value(st.wiener_index()),
        "global_efficiency": st.global_efficiency(),
        "histogram": None if st.histogram is None else st.histogram.tolist(),
        "timings_s": {k: round(v, 6) for k, v in timings.items()},
    }


def _print_stats(summary: dict) -> None:
    print(f"vertices {summary['n']}, edges {summary['edges']}, sources {summary['sources']} "
          f"(distances {summary['direction']}), method {summary['method']}")
    for name in ("diameter", "radius", "center", "periphery", "average distance", "Wiener index",
                 "global efficiency"):
        value = summary[name.lower().replace(" ", "_")]
        if isinstance(value, list):  # the first 20 vertices
            more = f" ... ({len(value)} in all)" if len(value) > 20 else ""
            value = " ".join(map(str, value[:20])) + more
        print(f"{name} {'inf (some pair has no path)' if value is None else value}")
    if summary["histogram"] is not None:
        print("histogram (distance: pairs) " + ", ".join(
            f"{d}: {c}" for d, c in enumerate(summary["histogram"]) if c))


def _write_stats_csv(target, st, first: int) -> None:
    """One row per source, written whole or not at all."""
    from itertools import islice

    from .io.atomic import atomic_write

    rows = zip((st.sources + first).tolist(), st.reachable.tolist(), st.total.tolist(),
               st.eccentricity.tolist(), st.reaches_all.tolist(), st.closeness().tolist(), st.harmonic.tolist())
    lines = (f"{v},{r},{t!r},{e!r},{int(a)},{c!r},{h!r}\n" for v, r, t, e, a, c, h in rows)
    with atomic_write(target) as f:
        f.write(b"vertex,reachable,total_distance,eccentricity,reaches_all,closeness,harmonic\n")
        while chunk := "".join(islice(lines, 4096)):
            f.write(chunk.encode())


if __name__ == "__main__":  # pragma: no cover
    run()
