"""``apsp ... --distributed``: the solve command run by every MPI rank.

Only rank 0 prints. Errors every rank agrees on (bad input, negative cycle)
print one line and exit 1 on all ranks; anything else aborts the job with a
line naming the failed rank (see `faults`).
"""
from __future__ import annotations

import json
import sys

from mpi4py import MPI

from .. import exactness
from ..cli_messages import cli_message, solve_summary
from ..errors import APSPError
from .api import solve
from .faults import abort_job
from .profile import format_rank_table


def run_solve(args) -> int:
    """Run ``apsp solve IN -o OUT --distributed [options]`` on this rank; return the exit code."""
    comm = MPI.COMM_WORLD
    rank = comm.rank
    try:
        if args.method not in ("auto", "fw"):
            raise ValueError(f"--distributed runs blocked Floyd-Warshall only; drop --method {args.method}")
        run = solve(args.input if rank == 0 else None, comm, output=args.output, out_format=args.out_format,
                    block_size=args.block_size, dtype=args.dtype, backend=args.backend,
                    cuda_aware=getattr(args, "cuda_aware", "auto"), directed=not args.undirected,
                    unweighted=args.unweighted, fmt=args.fmt, profile=args.profile,
                    keep_dtype=getattr(args, "keep_dtype", False))
    except BaseException as exc:  # noqa: BLE001 - see `_failed`
        return _failed(comm, args, "running the distributed solve", exc)
    if rank == 0:
        _report(args, run)
    return 0


def _report(args, run) -> None:
    info = run.info
    if args.json:
        rank_timings = [{k: round(v, 6) for k, v in row.items()} for row in info["rank_timings"]]
        summary = solve_summary(n=run.n, edges=None, method="fw", backend=run.backend, dtype=run.dtype.name,
                                block_size=run.block_size, timings=run.timings, ranks=info["ranks"],
                                info={"grid": list(info["grid"]), "cuda_aware": info["cuda_aware"],
                                      "dtype_tried": info["dtype_tried"], "dtype_retry": info["dtype_retry"],
                                      "dtype_check": info["dtype_check"], "rank_timings_s": rank_timings})
        print(json.dumps(summary), flush=True)
    if args.verbose and not args.json:
        reason = exactness.explain_check(info["dtype_tried"], info["dtype_check"],
                                         exactness.distance_bound(run.n, info["max_abs_weight"]))
        print(f"apsp: n={run.n} method=fw backend={run.backend} dtype={run.dtype.name} ({reason}) "
              f"block={run.block_size} ranks={info['ranks']} grid={info['grid'][0]}x{info['grid'][1]} "
              f"cuda_aware={info['cuda_aware']}", file=sys.stderr)
    if args.profile:
        print(f"seconds per stage and rank ({info['ranks']} ranks, grid "
              f"{info['grid'][0]}x{info['grid'][1]}, {run.backend}):", file=sys.stderr)
        print(format_rank_table(info["rank_timings"]), file=sys.stderr, flush=True)


def run_stats(args, stats_command) -> int:
    """``apsp stats GRAPH --distributed [options]`` on this rank: the sources split over the
    ranks (`apsp.distributed.stats`); rank 0 prints and writes, through the command line's
    ``stats_command`` (`apsp.cli.stats.stats_command`, passed in: this module sits below the CLI)."""
    from .stats import distance_stats

    comm = MPI.COMM_WORLD
    try:
        return stats_command(args, lambda g, sources, **options: distance_stats(
            g, sources, comm=comm, **options))
    except BaseException as exc:  # noqa: BLE001 - see `_failed`
        return _failed(comm, args, "running the distributed statistics", exc)


def _failed(comm, args, doing: str, exc: BaseException) -> int:
    """Exit code 1 after ``exc``: an error every rank raised alike (bad input or arguments, agreed
    failures, negative cycles) is one line from rank 0; any other, of one rank alone, aborts the
    job (the others would wait forever)."""
    if isinstance(exc, (APSPError, ValueError)):
        if comm.rank == 0:
            print(f"apsp: error: {cli_message(exc, args)}", file=sys.stderr, flush=True)
    else:
        abort_job(comm, doing, exc)
    return 1
