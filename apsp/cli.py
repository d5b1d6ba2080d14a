"""Command line: ``apsp IN_FILE OUT_FILE [BLOCK]`` (the homework form) and subcommands.

Every failure prints one clear line to stderr and exits non-zero; output files
are written whole (temporary file, then rename) or not at all.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

SUBCOMMANDS = ("solve", "gen", "info", "path", "bench")

EPILOG = """examples:
  apsp graph.txt dist.txt 32                 homework form: N M, then M lines 'i j w' (1-based)
  apsp solve graph.txt -o dist.txt --backend gpu --profile
  apsp solve web.snap -o dist.npy --format snap --method bfs
  mpiexec -n 4 apsp graph.txt dist.txt 128 --distributed
  apsp gen 1000 --density 0.05 --weights 0 100 --seed 1 -o graph.txt
  apsp gen 40000 --kind link-graph --seed 1 -o links.txt   the seed's workload (density 1/1000)
  apsp path graph.txt --from 1 --to 4
  apsp solve big.txt -o dist.npy --gpu-memory 8GB --checkpoint big.ckpt    out of core, resumable
  apsp solve big.txt -o dist.npy --gpu-memory 8GB --checkpoint big.ckpt --resume
  apsp solve big.txt -o part.txt --rows 0:1000                            write rows 0..999 only
  apsp info
  apsp bench backends --quick --out bench-out
"""


def _add_solve_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", default="auto",
                   choices=("auto", "fw", "bfs", "dijkstra", "johnson", "reference"),
                   help="algorithm (default: auto, see README 'Choosing a method')")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"),
                   help="where to compute (default: GPU when one is usable, else CPU)")
    p.add_argument("--dtype", default=None,
                   choices=("uint8", "uint16", "int16", "int32", "int64", "float32", "float64"),
                   help="distance type (default: smallest that holds every distance; "
                        "uint8/uint16 for --method bfs only)")
    p.add_argument("--format", dest="fmt", default=None,
                   help="input format (default: from the suffix; homework for .txt)")
    p.add_argument("--out-format", default=None, help="output format (default: from the suffix)")
    p.add_argument("--block", type=int, default=None, help="blocking factor (default: backend's best)")
    p.add_argument("--unweighted", action="store_true", help="treat every edge as weight 1")
    p.add_argument("--undirected", action="store_true", help="edges go both ways")
    p.add_argument("--profile", action="store_true",
                   help="print the time of each stage (read, transfer, compute, write)")
    p.add_argument("--json", action="store_true",
                   help="print a JSON summary on stdout (same keys every run, schema_version 1; "
                        "see README 'JSON summary')")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars or notes")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="say what was chosen and why (the decisions logged under the 'apsp' logger)")
    big = p.add_argument_group("large problems (memory, out-of-core, checkpoints)")
    big.add_argument("--gpu-memory", metavar="SIZE", default=None,
                     help="GPU memory the solve may use, e.g. 8GB or 6GiB (default: what is free); "
                          "a matrix that does not fit streams through the GPU out of core")
    big.add_argument("--memory", dest="host_memory", metavar="SIZE", default=None,
                     help="RAM the solve may use (default: what the OS reports available, capped "
                          "by a container's or batch job's cgroup memory limit)")
    big.add_argument("--out-of-core", action="store_const", const=True, default=None,
                     help="stream the matrix in stripes even if it fits (on the CPU backend: from a "
                          "scratch file, for matrices bigger than RAM)")
    big.add_argument("--scratch", dest="scratch_dir", metavar="DIR", default=None,
                     help="directory for an out-of-core matrix file (default: the system temp dir)")
    big.add_argument("--checkpoint", metavar="FILE", default=None,
                     help="save the solve's state to FILE every --checkpoint-every seconds (fw only)")
    big.add_argument("--checkpoint-every", metavar="SECONDS", type=float, default=300.0,
                     help="seconds between checkpoints (default: 300)")
    big.add_argument("--resume", action="store_true",
                     help="continue from --checkpoint FILE (refused if it was made for another graph "
                          "or dtype)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="apsp", description="All-pairs shortest paths on CPU and GPU.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("solve", help="solve a graph file and write the distance matrix",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="example:\n  apsp solve graph.txt -o dist.txt --block 64 --profile")
    p.add_argument("input", help="graph file")
    p.add_argument("-o", "--output", required=True, help="distance file (.txt homework text, .npy)")
    p.add_argument("--paths", metavar="FILE", default=None,
                   help="also write the next-hop (successor) matrix as .npy: entry [i, j] is the vertex "
                        "after i on a shortest path to j, -9999 where there is none")
    p.add_argument("--rows", metavar="I:J", default=None,
                   help="write only rows I..J-1 of the distance matrix (0-based; I: or :J for open ends)")
    _add_solve_options(p)
    p.add_argument("--distributed", action="store_true",
                   help="blocked FW across MPI ranks: launch with 'mpiexec -n P apsp ...' (needs mpi4py)")
    p.add_argument("--cuda-aware", default="auto", choices=("auto", "yes", "no"),
                   help="with --distributed on GPUs: give device buffers to MPI directly "
                        "(default: when the MPI reports CUDA support), else stage through host memory")

    p = sub.add_parser("gen", help="write a random graph",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
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

    p = sub.add_parser("info", help="show the backends found here and why any is missing")
    p.add_argument("--json", action="store_true", help="print as JSON")

    p = sub.add_parser("path", help="print a shortest path and its length",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="example:\n  apsp path graph.txt --from 1 --to 4   (1-based for homework text)")
    p.add_argument("input", help="graph file")
    p.add_argument("--from", dest="source", type=int, required=True, help="start vertex")
    p.add_argument("--to", dest="target", type=int, required=True, help="end vertex")
    _add_solve_options(p)

    p = sub.add_parser("bench", help="run a benchmark suite (see 'apsp bench --help')", add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def _number(text: str):
    """An int when the text is one (so '0 100' gives integer weights), else a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _version() -> str:
    from . import __version__

    return f"apsp {__version__}"


def _homework_argv(argv: list[str]) -> list[str] | None:
    """``apsp IN OUT [BLOCK] [options]`` -> the equivalent ``solve`` command line."""
    if not argv or argv[0] in SUBCOMMANDS or argv[0].startswith("-"):
        return None
    positional = []
    for token in argv:
        if token.startswith("-") and token != "-":  # "-" is standard output, not an option
            break
        positional.append(token)
    if len(positional) not in (2, 3):
        return None
    rest = ["solve", positional[0], "-o", positional[1]]
    if len(positional) == 3:
        rest += ["--block", positional[2]]
    return rest + argv[len(positional):]


def main(argv: list[str] | None = None) -> int:
    from .cli_messages import homework_usage_error

    argv = list(sys.argv[1:] if argv is None else argv)
    wrong = homework_usage_error(argv, SUBCOMMANDS)
    if wrong is not None:
        print(f"usage: apsp IN_FILE OUT_FILE [BLOCK] [options] | apsp COMMAND ...\napsp: error: {wrong}",
              file=sys.stderr)
        return 2
    homework = _homework_argv(argv)
    if homework is not None:
        argv = homework
    if argv[:1] == ["bench"]:
        from .bench.cli import main as bench_main

        return _guarded(lambda: bench_main(argv[1:]))
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if getattr(args, "verbose", False):
        _log_to_stderr()
    handler = {"solve": _cmd_solve, "gen": _cmd_gen, "info": _cmd_info, "path": _cmd_path}[args.command]
    return _guarded(lambda: handler(args), args)


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


def cli_message(exc: BaseException, args) -> str:
    """An API error in the command line's words (options, the input file's vertex numbering)."""
    from .cli_messages import cli_words, input_is_one_based, negative_cycle_message
    from .errors import NegativeCycleError

    inp = getattr(args, "input", None)
    if isinstance(exc, NegativeCycleError):
        one_based = inp is not None and input_is_one_based(inp, getattr(args, "fmt", None))
        return negative_cycle_message(exc, one_based, inp)
    return cli_words(str(exc), output=getattr(args, "output", None))


def _guarded(fn, args=None) -> int:
    """Run a command; turn expected failures into one stderr line and an exit code."""
    from .errors import APSPError

    import signal

    def terminated(signum, frame):  # kill (SIGTERM) unwinds like Ctrl-C: no partial output
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread
        previous = None
    try:
        return fn() or 0
    except KeyboardInterrupt as exc:
        print("apsp: interrupted; no output written", file=sys.stderr)
        for note in getattr(exc, "__notes__", ()):
            print(f"apsp: {note}", file=sys.stderr)
        return 130
    except (APSPError, ValueError, OSError, MemoryError) as exc:
        print(f"apsp: error: {cli_message(exc, args)}", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _progress_flag(args) -> bool | None:
    return False if args.quiet else None


def _solve_file(args):
    from .api import as_graph, shortest_paths

    t0 = time.perf_counter()
    g = as_graph(args.input, fmt=args.fmt, directed=not args.undirected, unweighted=args.unweighted)
    t_read = time.perf_counter() - t0
    if args.block is not None and args.block < 1:
        raise ValueError(f"blocking factor must be a positive integer, got {args.block}")
    _parse_rows(getattr(args, "rows", None), g.n)  # a typo should not wait for the solve
    result = shortest_paths(g, method=args.method, backend=args.backend, dtype=args.dtype,
                            block_size=args.block, progress=_progress_flag(args),
                            return_successors=getattr(args, "_need_paths", False)
                            or bool(getattr(args, "paths", None)),
                            **_large_problem_options(args))
    result.timings = {"read": t_read, **result.timings}
    return g, result


def _check_solve_outputs(args) -> None:
    """Every output of ``solve``, checked before the input is read (one place for all of them)."""
    from .io import check_outputs
    from .io.atomic import STDOUT

    if args.paths and not (str(args.paths).endswith(".npy") or args.paths == STDOUT):
        raise ValueError(f"--paths writes a .npy file, got {args.paths!r}")
    if args.json and STDOUT in (args.output, args.paths):
        raise ValueError("--json and an output to standard output ('-') would mix on stdout; "
                         "drop --json or write the output to a file")
    check_outputs({"-o": (args.output, args.out_format, "distances"),
                   "--paths": (args.paths, "npy", "distances"),
                   "--checkpoint": (args.checkpoint, None, "file")})


def _cmd_solve(args) -> int:
    _check_solve_outputs(args)
    if args.distributed:
        from .info import require

        require("mpi4py", "--distributed")
        from .distributed.cli import run_solve

        return run_solve(args)
    from .io import write_distances

    g, result = _solve_file(args)
    t0 = time.perf_counter()
    write_distances(args.output, result.distances, fmt=args.out_format, rows=_parse_rows(args.rows, g.n),
                    progress=_progress_flag(args))
    if args.paths:
        write_distances(args.paths, result.successors, fmt="npy")
    result.timings["write"] = time.perf_counter() - t0
    _report(args, g, result)
    return 0


def _large_problem_options(args) -> dict:
    """Memory and checkpoint options for `shortest_paths`, only those given."""
    opts = {}
    for name in ("gpu_memory", "host_memory", "out_of_core", "scratch_dir", "checkpoint"):
        if getattr(args, name, None) is not None:
            opts[name] = getattr(args, name)
    if args.checkpoint is not None:
        opts["checkpoint_every"] = args.checkpoint_every
        opts["resume"] = args.resume
    elif args.resume:
        raise ValueError("--resume needs --checkpoint FILE (the file to resume from)")
    return opts


def _parse_rows(text, n: int):
    """``--rows I:J`` as (I, J), 0-based, J exclusive; None when not given."""
    if text is None:
        return None
    parts = str(text).split(":")
    try:
        if len(parts) != 2:
            raise ValueError
        lo = int(parts[0]) if parts[0].strip() else 0
        hi = int(parts[1]) if parts[1].strip() else n
    except ValueError:
        raise ValueError(f"--rows takes I:J (0-based rows I..J-1, e.g. 0:100 or 500:), got {text!r}") from None
    if not 0 <= lo < hi <= n:
        raise ValueError(f"--rows {text}: need 0 <= I < J <= n = {n}")
    return lo, hi


def _report(args, g, result) -> None:
    from .cli_messages import solve_summary

    if args.json:
        summary = solve_summary(n=g.n, edges=g.nnz, method=result.method, backend=result.backend,
                                dtype=result.dtype.name, block_size=result.block_size,
                                timings=result.timings, info=result.info)
        print(json.dumps(summary))
    if args.verbose and not args.json:
        print(f"apsp: n={g.n} edges={g.nnz} method={result.method} backend={result.backend} "
              f"dtype={result.dtype.name} block={result.block_size}", file=sys.stderr)
    if args.profile:
        total = sum(result.timings.values())
        print(f"{'stage':<12} {'seconds':>10} {'share':>7}", file=sys.stderr)
        for stage, sec in result.timings.items():
            print(f"{stage:<12} {sec:>10.4f} {sec / total if total else 0:>7.1%}", file=sys.stderr)
        print(f"{'total':<12} {total:>10.4f}", file=sys.stderr)


def _cmd_gen(args) -> int:
    from .generate import random_graph
    from .io import write_graph

    from .io import check_outputs

    check_outputs({"-o": (args.output, args.fmt, "graph")})
    weights = tuple(args.weights) if args.weights else (None if args.kind == "link-graph" else (0, 100))
    _check_gen_output(args, weights)
    edges = random_graph(args.n, args.density, weights=weights, seed=args.seed, kind=args.kind)
    write_graph(args.output, edges, fmt=args.fmt)
    return 0


def _check_gen_output(args, weights) -> None:
    """Refuse, before drawing anything, what the output format cannot hold."""
    from .io import guess_format

    fractional = weights is not None and not all(isinstance(w, int) for w in weights)
    if fractional and guess_format(args.output, args.fmt) == "homework":
        lo, hi = weights
        raise ValueError(f"homework text holds integer weights, but --weights {lo} {hi} draws fractional "
                         f"ones: give integer bounds (e.g. --weights 0 100), or write {args.output!r} "
                         "as .snap, .mtx or .gr")


def _cmd_path(args) -> int:
    from .paths import reconstruct_path

    one_based = (args.fmt or "").lower() in ("", "homework", "txt") and str(args.input).endswith(".txt")
    offset = 1 if one_based else 0
    args._need_paths = True
    g, result = _solve_file(args)
    i, j = args.source - offset, args.target - offset
    for name, v in (("--from", i), ("--to", j)):
        if not 0 <= v < g.n:
            raise ValueError(f"{name} vertex out of range {offset}..{g.n - 1 + offset}")
    if not result.reachable[i, j]:
        print(f"no path from {args.source} to {args.target}")
        return 1
    route = reconstruct_path(result.successors, i, j, kind="successors")
    length = result.distances[i, j]
    if args.json:
        print(json.dumps({"path": [v + offset for v in route], "length": length.item()}))
    else:
        print(" -> ".join(str(v + offset) for v in route))
        print(f"length {length}")
    return 0


def _cmd_info(args) -> int:
    from .info import backend_report

    report = backend_report()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, entry in report.items():
        state = "yes" if entry["available"] else "no "
        print(f"{name:<10} {state}  {entry['detail']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
