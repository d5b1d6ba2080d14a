"""``apsp bench startup``: what a user waits for, first run and later runs, stage by stage.

Runs the CLI in fresh processes, each variant first with an empty Numba cache
(``NUMBA_CACHE_DIR`` a new temporary directory: a fresh machine) and then
``--repeat`` times warm, and prints every run's wall and CPU time (on a shared
machine the CPU seconds show what an idle one would take) and the stages its
``--profile`` reports (``startup`` is interpreter start and imports; ``compile``
is Numba compiling, only on a first run). Variants run in order in one cache,
as a user meets them: the first pays for the reader and writer too, each further
one only for its own kernels. Every output is checked against scipy.

    apsp bench startup                       # README command 1 and the variants
    apsp bench startup --variants int32 --repeat 3
    apsp bench startup --backend gpu --input g.txt --block-size 128    # the GPU pipeline
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .timing import timed_call

DATA = Path(__file__).resolve().parents[1] / "data"

#: variant -> extra CLI arguments (and what the output holds)
VARIANTS = {
    "int32": [],
    "float64": ["--dtype", "float64"],
    "predecessors": ["--paths", "{paths}"],
    "bfs": ["--method", "bfs", "--unweighted"],
    "blocked": ["--dtype", "int32"],  # a generated n = 600 graph: the blocked kernels, not the small-n loop
}
BLOCKED_N = 600


def build_parser() -> argparse.ArgumentParser:
    from ..cli_messages import add_renamed_option

    p = argparse.ArgumentParser(prog="apsp bench startup", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 2)[2])
    p.add_argument("--input", type=Path, default=DATA / "knuth-miles.txt",
                   help="homework graph file (default: apsp/data/knuth-miles.txt, README command 1)")
    add_renamed_option(p, "--block-size", dest="block", type=int, default=32, metavar="B",
                       help="blocking factor (default 32, as README command 1)")
    p.add_argument("--variants", default="int32,float64,predecessors,bfs,blocked",
                   help=f"comma-separated, in order (default all: {', '.join(VARIANTS)})")
    p.add_argument("--repeat", type=int, default=2, help="warm runs per variant (default 2)")
    p.add_argument("--backend", default="cpu", choices=("auto", "cpu", "gpu"))
    p.add_argument("--cache", type=Path, default=None,
                   help="Numba cache directory to use (default: a new empty one, removed afterwards)")
    p.add_argument("--expect", type=Path, default=None,
                   help="compare every output with this file, byte for byte, instead of solving with "
                        "scipy (large inputs: e.g. the CPU backend's output)")
    p.add_argument("--json", type=Path, default=None, help="also write every run as JSON here")
    return p


def run_cli(args: list[str], cache: Path, cwd: Path) -> dict:
    """One CLI run in a fresh process: wall seconds, stages, whether it announced a compile."""
    from .environment import with_this_apsp

    env = with_this_apsp({**os.environ, "NUMBA_CACHE_DIR": str(cache)})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "apsp", *args, "--profile", "--json"]
    wall, out, _ = timed_call(lambda: subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if out.returncode != 0:
        raise RuntimeError(f"apsp {' '.join(args)} failed ({out.returncode}):\n{out.stderr}")
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, "cpu_s": cpu, "stages_s": summary["timings_s"],
            "notice": "apsp: compiling" in out.stderr,
            "dtype": summary["dtype"], "method": summary["method"], "backend": summary["backend"]}


def _expected(path: Path, unweighted: bool) -> np.ndarray:
    from scipy.sparse.csgraph import shortest_path

    from ..api import as_graph

    g = as_graph(path, unweighted=unweighted)
    return shortest_path(g.to_csr().astype(np.float64), method="J", directed=True)  # exact for integer weights, negative ones too


def _check(out: Path, expected: np.ndarray, paths: Path | None) -> None:
    """The homework text equals scipy's distances (``INF`` where there is no path); with
    ``paths``, every reachable pair has a next hop."""
    got = np.loadtxt(out, dtype=np.float64, ndmin=2)  # INF parses as inf
    if got.shape != expected.shape or not np.array_equal(got, expected):
        raise AssertionError(f"{out.name}: distances differ from scipy's")
    if paths is not None:
        succ = np.load(paths)
        reach = np.isfinite(expected) & ~np.eye(len(expected), dtype=bool)
        if not (succ[reach] >= 0).all():
            raise AssertionError(f"{paths.name}: a reachable pair has no next hop")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    names = [v for v in args.variants.split(",") if v]
    for v in names:
        if v not in VARIANTS:
            raise SystemExit(f"apsp bench startup: unknown variant {v!r}; choose from {', '.join(VARIANTS)}")
    with tempfile.TemporaryDirectory(prefix="apsp-startup-") as tmp_name:
        tmp = Path(tmp_name)
        cache = args.cache or tmp / "numba-cache"
        blocked_input = tmp / f"graph-n{BLOCKED_N}.txt"
        runs = []
        print(f"# apsp bench startup: {args.input.name}, block {args.block}, backend {args.backend}, "
              f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}, Numba cache {cache}", flush=True)
        print(f"{'variant':<13} {'run':<5} {'wall s':>7} {'cpu s':>6}  notice  stages (s)", flush=True)
        for v in names:
            src = blocked_input if v == "blocked" else args.input
            if v == "blocked" and not src.exists():
                subprocess.run([sys.executable, "-m", "apsp", "gen", str(BLOCKED_N), "--density", "0.05",
                                "--seed", "1", "-o", str(src)], check=True, env=os.environ)
            extra = [a.replace("{paths}", str(tmp / f"{v}-succ.npy")) for a in VARIANTS[v]]
            out = tmp / f"{v}.txt"
            cmd = ["solve", str(src), "-o", str(out), "--block-size", str(args.block), "--backend", args.backend, *extra]
            expected = None if args.expect else _expected(src, unweighted="--unweighted" in extra)
            for r in range(1 + args.repeat):
                rec = run_cli(cmd, cache, tmp)
                if expected is not None:  # no --expect
                    _check(out, expected, tmp / f"{v}-succ.npy" if v == "predecessors" else None)
                elif out.read_bytes() != args.expect.read_bytes():
                    raise AssertionError(f"{v}: output differs from {args.expect}")
                rec.update(variant=v, run="cold" if r == 0 else f"warm{r}")
                runs.append(rec)
                total = sum(rec["stages_s"].values())
                stages = " ".join(f"{k}={s:.2f}" for k, s in rec["stages_s"].items() if s >= 0.005)
                print(f"{v:<13} {rec['run']:<5} {rec['wall_s']:>7.2f} {rec['cpu_s']:>6.2f}  {'yes' if rec['notice'] else 'no':<6}  "
                      f"{stages} (sum {total:.2f})", flush=True)
        if args.json is not None:
            args.json.write_text(json.dumps({"input": str(args.input), "backend": args.backend, "runs": runs},
                                            indent=1))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
