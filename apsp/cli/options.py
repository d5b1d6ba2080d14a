"""The options the commands share: ``solve``'s (also the homework form's and, in part, ``path``'s) with
their defaults from one table, `SOLVE_DEFAULTS`, and the keywords of `apsp.shortest_paths` they give;
-v and --profile of the commands that do not solve."""
from __future__ import annotations

import argparse

from ..methods import BACKENDS, DTYPES, METHODS


#: ``solve``'s options when not given: its parser's defaults, and with IN, OUT and BLOCK the whole
#: namespace of ``apsp IN OUT [BLOCK]`` without options (no parser is built for it)
SOLVE_DEFAULTS = dict(
    output=None, paths=None, rows=None, sources=None, method="auto", backend="auto", dtype=None,
    fmt=None, out_format=None, keep_dtype=False, block_size=None, unweighted=False, undirected=False, profile=False,
    json=False, quiet=False, verbose=False, gpu_memory=None, host_memory=None, out_of_core=None,
    scratch_dir=None, checkpoint=None, checkpoint_every=300.0, resume=False, distributed=False,
    cuda_aware="auto")


def add_solve_arguments(p: argparse.ArgumentParser, homework: bool = False) -> None:
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
    add_solve_options(p)
    p.add_argument("--distributed", action="store_true",
                   help="blocked FW across MPI ranks: launch with 'mpiexec -n P apsp ...' (needs mpi4py)")
    p.add_argument("--cuda-aware", choices=("auto", "yes", "no"),
                   help="with --distributed on GPUs: give device buffers to MPI directly "
                        "(default: when the MPI reports CUDA support), else stage through host memory")


def add_solve_options(p: argparse.ArgumentParser, route: bool = False) -> None:
    """The options of ``solve``, their defaults `SOLVE_DEFAULTS`; ``route``: those ``path`` has (no
    output file, no large-problem options; its own stages and JSON)."""
    from ..cli_messages import add_renamed_option

    p.set_defaults(**SOLVE_DEFAULTS)
    p.add_argument("--method", choices=METHODS,
                   help="algorithm (default: auto, see README 'Choosing a method')")
    p.add_argument("--backend", choices=BACKENDS,
                   help="where an all-pairs --method computes (default: GPU when one is usable, else "
                        "CPU); --method auto searches on the CPU" if route else
                   "where to compute (default: GPU when one is usable, else CPU)")
    p.add_argument("--dtype", choices=DTYPES,
                   help="distance type (default: the narrowest that holds the actual distances, "
                        "verified after the solve; uint8/uint16 for --method bfs only)")
    p.add_argument("--format", dest="fmt", help="input format (default: from the suffix; homework for .txt)")
    if not route:
        p.add_argument("--out-format", help="output format (default: from the suffix)")
        p.add_argument("--keep-dtype", action="store_true",
                       help=".npy output: keep the solve's integer dtype (smaller; 'no path' is then the "
                            "dtype's maximum, e.g. 32767 for int16) instead of float64 with inf")
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


def add_report_options(p, verbose_says: str, stages: str) -> None:
    """-v and --profile for the subcommands that do not solve."""
    p.add_argument("-v", "--verbose", action="store_true", help=f"say on stderr {verbose_says}")
    p.add_argument("--profile", action="store_true", help=f"print the time of each stage ({stages})")


def solve_options(args) -> dict:
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
