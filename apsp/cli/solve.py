"""``apsp solve`` (and the homework form): check every output, read, `apsp.shortest_paths`, write."""
from __future__ import annotations

import os
import sys
import time

from ..errors import MemoryPlanError, require
from .options import add_solve_arguments, solve_options
from .report import report_result
from .startup import start_command
from .vertices import api_vertices, parse_rows, sources_arg


def add_solve_parser(command) -> None:
    """``apsp solve``'s parser; ``command``: the subparsers' ``add_parser``."""
    add_solve_arguments(command("solve", help="solve a graph file and write the distance matrix",
                                epilog="example:\n  apsp solve graph.txt -o dist.txt --block-size 64 --profile"))


def cmd_solve(args) -> int:
    from ..io import check_outputs, guess_format, write_distances
    from ..io.atomic import STDOUT, all_or_none

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
        from ..distributed.cli import run_solve

        return run_solve(args)
    from ..jit import book_compile, compile_seconds

    g, result = _solve_file(args)
    t0 = time.perf_counter()
    compiled = compile_seconds()
    if guess_format(args.output, args.out_format) == "npz":
        result.save(args.output)  # the whole result: labels, sources and --paths' matrix too
        if args.paths:
            write_distances(args.paths, result.successors, fmt="npy", keep_dtype=True)
    else:
        # the number of the block's first row: k x n, the rows of --rows or --sources
        first_row = None if result.sources is None else (parse_rows(args.rows, g.n) or (0,))[0]
        with all_or_none():  # both outputs new or both old; --paths first, as -o may be a stream
            if args.paths:
                write_distances(args.paths, result.successors, fmt="npy", keep_dtype=True)
            write_distances(args.output, result.distances, fmt=args.out_format, first_row=first_row,
                            progress=False if args.quiet else None, keep_dtype=args.keep_dtype)
        if g.labels is not None and not args.quiet:  # a matrix alone does not say which vertex is which
            shown = ", ".join(map(str, g.labels[:4].tolist())) + (", ..." if g.n > 4 else "")
            print(f"apsp: note: the input names its vertices; the matrix's columns (and rows, unless "
                  f"--rows/--sources) are {shown} in this order; -o NAME.npz keeps the labels with "
                  "the distances", file=sys.stderr)
    result.timings["write"] = time.perf_counter() - t0
    book_compile(result.timings, compile_seconds() - compiled, "write")
    if args.json or args.verbose or args.profile:
        report_result(args, g, result)
    return 0


def _solve_file(args):
    from ..api import as_graph, shortest_paths
    from ..jit import book_compile, compile_seconds

    startup = start_command(args, solve=True, paths=bool(args.paths))
    t0 = time.perf_counter()
    compiled = compile_seconds()
    from ..io import read_graph

    loaded = read_graph(args.input, fmt=args.fmt)
    n = loaded.n if hasattr(loaded, "n") else len(loaded)
    if args.block_size is not None and args.block_size < 1:
        raise ValueError(f"blocking factor must be a positive integer, got {args.block_size}")
    args._labels = getattr(loaded, "labels", None)  # vertex names, for messages and routes
    # --rows, --sources: a typo should not wait for the solve
    sources = None if args.rows is None and args.sources is None else sources_arg(args, n)
    # before the graph's n-sized arrays: the result alone must fit somewhere
    _check_result_fits(args, n, n if sources is None else len(sources))
    g = as_graph(loaded, directed=not args.undirected, unweighted=args.unweighted)
    t_read = time.perf_counter() - t0
    compiled = compile_seconds() - compiled
    result = shortest_paths(g, sources=None if sources is None else api_vertices(g.labels, sources),
                            return_successors=bool(args.paths), **solve_options(args))
    result.timings = book_compile({**startup, "read": t_read, **result.timings}, compiled, "read")
    return g, result


def _check_result_fits(args, n: int, rows: int) -> None:
    """Refuse at once a result no memory could hold: ``rows x n`` distances of one byte each
    (the narrowest dtype) need that much RAM or, streamed out of core, scratch disk."""
    import tempfile

    from ..sizes import disk_available, format_size, memory_allowed

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
