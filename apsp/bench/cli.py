"""``apsp bench SUITE [options]`` and ``apsp bench report DIR``.

Exit status: 0 when every measured result matched the reference, 1 when any
did not (or a results file could not be read), 2 for bad arguments, 130 when
interrupted (the results gathered so far are still written).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..cli_messages import add_renamed_option
from . import SUITES

EPILOG = """suites:
  backends   every apsp method/backend and the peers scipy, networkx: time vs n
  block      blocking-factor sweep: updates/s, modelled bytes moved, bandwidth
  breakdown  time per stage: file read, validate, host-to-device, compute,
             device-to-host, communication, file write
  memory     peak host and GPU memory vs n
  scaling    MPI ranks (strong and weak), launched with mpiexec
  ceiling    the GPU's min-plus ceiling (int32, int16, float32)
  startup    the CLI in fresh processes, empty Numba cache then warm: wall and
             stages per run (see 'apsp bench startup --help')
  calibrate  this machine's rates for the automatic method choice, cached in
             the user's cache directory (see 'apsp bench calibrate --help')
  report DIR redraw plots and tables from the results files in DIR

backends (--backends): reference fw-cpu fw-gpu bfs-cpu bfs-gpu dijkstra johnson
  scipy-fw scipy-dijkstra scipy-unweighted networkx-fw; apsp solvers take
  ':VARIANT' (e.g. fw-gpu:naive), CPU solvers '@THREADS' (e.g. fw-cpu@1).
  Backends that cannot run here are skipped, with the reason recorded.

examples:
  apsp bench backends --quick
  apsp bench block --sizes 2048 --blocks 8 16 32 64 128 --backends fw-gpu
  apsp bench breakdown --sizes 4096 8192 --out results/h100
  mpiexec is run by the suite itself:  apsp bench scaling --ranks 1 2 4 --sizes 8192
  apsp bench report bench-out

Each run writes OUT/SUITE.json, OUT/SUITE.csv, OUT/SUITE.md and PNG plots, and
prints the markdown table on stdout. Every result is checked against scipy's
Dijkstra (all sources up to --check-all-up-to, a sample of sources above).
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="apsp bench", description="Benchmark and profiling suites.",
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    p.add_argument("suite", choices=SUITES + ("startup", "calibrate", "report"), help="what to measure (or 'report')")
    p.add_argument("directory", nargs="?", help="report: the results directory to redraw")
    p.add_argument("--quick", action="store_true", help="small sizes and few repeats (minutes on a laptop)")
    p.add_argument("--out", type=Path, default=None,
                   help="results directory (default: bench-out); for report, where the redrawn "
                        "plots go (default: the directory read)")
    p.add_argument("--sizes", type=int, nargs="+", metavar="N", help="numbers of vertices")
    p.add_argument("--backends", nargs="+", metavar="NAME", help="what to measure (default: per suite)")
    p.add_argument("--repeat", type=int, metavar="K", help="timed repeats per point (median reported)")
    p.add_argument("--warmup", type=int, default=1, metavar="W", help="untimed warm-up runs (default 1, at least 1: its result is the one checked)")
    p.add_argument("--time-limit", type=float, metavar="S",
                   help="seconds allowed per point: fewer repeats when slow, larger n skipped when "
                        "predicted slower (default: 10 quick, 60-300 full)")
    p.add_argument("--density", type=float, default=0.1, help="edge probability (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="graph seed (default 0)")
    p.add_argument("--dtype", choices=("int16", "int32", "int64", "float32", "float64"),
                   help="distance dtype (default: apsp's choice)")
    add_renamed_option(p, "--block-size", dest="block", type=int, metavar="B",
                       help="blocking factor for Floyd-Warshall (default: the backend's best)")
    p.add_argument("--blocks", type=int, nargs="+", metavar="B", help="block suite: blocking factors")
    p.add_argument("--ranks", type=int, nargs="+", metavar="P", help="scaling suite: MPI rank counts")
    p.add_argument("--mpiexec", default="mpiexec",
                   help="scaling suite: launcher (default mpiexec; '-n P' is appended unless the "
                        "command contains {ranks}, e.g. 'mpirun -n {ranks} --bind-to core')")
    p.add_argument("--baseline", default="scipy-fw",
                   help="backends suite: speed-ups are over this backend (default scipy-fw)")
    p.add_argument("--check-all-up-to", type=int, default=1024, metavar="N",
                   help="check every source up to this n, a sample above (default 1024)")
    p.add_argument("--check-sources", type=int, default=128, metavar="K",
                   help="sources checked above --check-all-up-to (default 128)")
    p.add_argument("--interpreter", action="store_true",
                   help="without a GPU, run GPU solvers in Triton's CPU interpreter (tests the GPU "
                        "path; its timings mean nothing)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or notes on stderr")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[2:] if argv is None else argv)
    if argv[:1] in (["startup"], ["calibrate"]):  # fresh processes; rates for the automatic choice
        from importlib import import_module  # each with its own options

        return import_module(f".{argv[0]}", __package__).main(argv[1:])
    args = build_parser().parse_args(argv)
    args.argv = ["apsp", "bench"] + argv
    from ..errors import require

    require("matplotlib", "apsp bench (for its plots)")  # checked now: not after a long run
    if args.suite == "report":
        return report(args)
    if args.directory is not None:
        build_parser().error(f"unexpected argument {args.directory!r}")
    return run_suite(args)


def make_context(args):
    from .contestants import contestant
    from .environment import collect_environment
    from .results import Results
    from .suites import DEFAULT_CONTESTANTS, DEFAULTS, Context

    defaults = DEFAULTS[args.suite]["quick" if args.quick else "full"]
    if args.interpreter:
        _enable_interpreter()
    for name, values in (("--sizes", args.sizes), ("--blocks", args.blocks), ("--ranks", args.ranks),
                         ("--repeat", [args.repeat] if args.repeat is not None else [])):
        for v in values or ():
            if v < 1:
                raise ValueError(f"{name} must be positive, got {v}")
    if not 0 < args.density <= 1:
        raise ValueError(f"--density must lie in (0, 1], got {args.density}")
    names = [n for item in (args.backends or []) for n in item.split(",") if n]
    if not names:
        names = DEFAULT_CONTESTANTS.get(args.suite) or []
        if args.suite == "scaling":
            names = ["fw-gpu"] if contestant("fw-gpu").unavailable() is None else ["fw-cpu"]
    for name in names + ([args.baseline] if args.suite == "backends" else []):
        contestant(name)  # unknown names fail here, before anything runs
    # every option, in the parser's order, but where the results go and how they are shown
    options = {k: v for k, v in vars(args).items() if k not in ("suite", "directory", "out", "quiet")}
    for key in ("sizes", "repeat", "time_limit", "blocks", "ranks"):  # not given: the suite's
        options[key] = options[key] or defaults.get(key, [])
    options["backends"] = names
    results = Results(suite=args.suite, environment=collect_environment(), options=options)
    fields = {k: v for k, v in options.items() if k in Context.__dataclass_fields__}
    return Context(suite=args.suite, results=results, contestants=names, out=args.out or Path("bench-out"),
                   progress=sys.stderr.isatty() and not args.quiet, quiet=args.quiet, **fields)


def _enable_interpreter() -> None:
    """TRITON_INTERPRET must be set before triton decorates any kernel (first apsp.gpu import)."""
    import os
    from importlib.util import find_spec

    if find_spec("torch") is not None:
        from ..gpu.timing import cuda_present

        if cuda_present():
            return  # a real GPU is here: the interpreter is not wanted
    if "apsp.gpu.minplus" in sys.modules and os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
        raise ValueError("--interpreter must be set before apsp.gpu is imported "
                         "(set TRITON_INTERPRET=1 in the environment instead)")
    os.environ.setdefault("TRITON_INTERPRET", "1")


def run_suite(args) -> int:
    from .suites import RUNNERS

    ctx = make_context(args)
    results = ctx.results
    ctx.checkpoint = lambda: results.save(ctx.out)  # partial results survive a crash
    try:
        RUNNERS[args.suite](ctx)
        results.complete = True
    except KeyboardInterrupt:
        results.interrupted = True
        print("apsp bench: interrupted; writing the results gathered so far", file=sys.stderr)
    finish(results, ctx.out, quiet=args.quiet)
    if results.interrupted:
        return 130
    return 1 if any(r.get("match") is False for r in results.records) else 0


def finish(results, out: Path, quiet: bool = False) -> None:
    """Plots, results files, markdown table (file and stdout)."""
    from .plots import draw
    from .results import write_text_atomic
    from .tables import markdown

    try:
        results.plots = draw(results, out)
    except KeyboardInterrupt:  # a second Ctrl-C while drawing: keep the data files
        results.plots = []
    json_path, csv_path = results.save(out)
    table = markdown(results)
    write_text_atomic(Path(out) / f"{results.suite}.md", table)
    print(table, end="")
    if not quiet:
        files = [json_path, csv_path, Path(out) / f"{results.suite}.md"] + [Path(out) / p["file"] for p in results.plots]
        print("apsp bench: wrote " + ", ".join(str(f) for f in files), file=sys.stderr)


def report(args) -> int:
    from .results import load

    source = Path(args.directory or args.out or "bench-out")
    files = [source] if source.is_file() else sorted(source.glob("*.json"))
    loaded = []
    for path in files:
        try:
            loaded.append(load(path))
        except ValueError as exc:
            if source.is_file():
                raise
            print(f"apsp bench: skipping {path}: {exc}", file=sys.stderr)
    if not loaded:
        raise ValueError(f"{source}: no apsp benchmark results files (*.json) found")
    out = args.out or (source.parent if source.is_file() else source)
    for results in loaded:
        finish(results, out, quiet=args.quiet)
        print()
    return 0
