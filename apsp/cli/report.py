"""What a command prints about its run: a solve's ``--json`` summary and ``-v`` lines, and the
``--profile`` table."""
from __future__ import annotations

import json
import sys


def report_result(args, g, result) -> None:
    from ..cli_messages import solve_summary

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
        print_stages(result.timings)


def print_stages(timings: dict) -> None:
    """The --profile table on stderr: each stage's seconds and share of the total."""
    total = sum(timings.values())
    print(f"{'stage':<12} {'seconds':>10} {'share':>7}", file=sys.stderr)
    for stage, sec in timings.items():
        print(f"{stage:<12} {sec:>10.4f} {sec / total if total else 0:>7.1%}", file=sys.stderr)
    print(f"{'total':<12} {total:>10.4f}", file=sys.stderr)
