"""The ``apsp`` parser: the program's options and help, each command's parser from its module."""
from __future__ import annotations

import argparse
import functools

#: the commands, each run by its module of `apsp.cli` (``bench``: `apsp.bench.cli`)
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


def build_parser() -> argparse.ArgumentParser:
    return parsers()[0]


def parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The ``apsp`` parser, and its commands' parsers by name (each command's from its module,
    imported here: the homework form without options builds none)."""
    from .. import __version__
    from .gen import add_gen_parser
    from .info import add_info_parser
    from .path import add_path_parser
    from .solve import add_solve_parser
    from .stats import add_stats_parser

    parser = argparse.ArgumentParser(
        prog="apsp", description="All-pairs shortest paths on CPU and GPU.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"apsp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    command = functools.partial(sub.add_parser, formatter_class=argparse.RawDescriptionHelpFormatter)
    for add_parser in (add_solve_parser, add_gen_parser, add_info_parser, add_path_parser, add_stats_parser):
        add_parser(command)
    p = command("bench", help="run a benchmark suite (see 'apsp bench --help')", add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)
    return parser, sub.choices
