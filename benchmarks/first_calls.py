"""First calls and small commands: whole processes from empty caches (cold) and again (warm), beside their goals.

Every case runs in fresh processes with its own empty ``NUMBA_CACHE_DIR`` and ``TRITON_CACHE_DIR`` (apsp keeps
its ahead-compiled GPU kernels beside Triton's cache, so that empties them too): the first run is what a
fresh machine pays, the later ones what every further call pays. Prints wall seconds, the process's CPU
seconds, and the stages apsp reports (``--profile`` for the commands, ``Result.timings`` for the calls).

Cases (``--cases``, in order):

* ``readme``: README command 1, ``apsp apsp/data/knuth-miles.txt OUT 32`` (n = 128); goal warm <= 0.8 s.
* ``homework``: ``apsp IN OUT 32`` on a generated homework text graph (``--homework-n``, density 0.05,
  weights 0..100: 5 M edges at n = 10000); goal warm <= 1.2 s.
* ``dense``: ``apsp.shortest_paths`` of a dense ``--dense-n`` x ``--dense-n`` int32 weight matrix
  (``--backend``); goal cold <= 3 s (n = 8192 on the GPU).
* ``grid``: ``apsp.shortest_paths(method="nd-fw")`` of a ``--grid-side`` square 4-neighbour grid
  (``--backend``); goal cold <= 12 s (350 x 350 on the GPU).

    python benchmarks/first_calls.py                                  # the GPU host's sizes (H200)
    python benchmarks/first_calls.py --small --backend cpu            # a 2-core box: n = 2000 / 1024, grid 40
    python benchmarks/first_calls.py --cases readme,homework --warm 3 --json runs.json
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: ``--kernels``: the longest compiles printed per run (the JSON keeps them all)
KERNEL_ROWS = 12

#: case -> (which run the goal is for, goal seconds); the goals are the GPU host's (16 cores)
GOALS = {"readme": ("warm", 0.8), "homework": ("warm", 1.2), "dense": ("cold", 3.0), "grid": ("cold", 12.0)}

#: with ``--kernels``, run first in every child: each compile's seconds by kernel, Numba's (its compile
#: events, nested compiles inside the outermost) and Triton's (``triton.compile``, which its JIT and apsp's
#: ahead-of-time kernels both call), printed on stderr as one ``KERNELS [[name, compiles, seconds], ...]``
#: line. It imports numba at the start, so the stages shift (startup grows, read shrinks): time without it.
HOOKS = r"""
import collections, json, sys, time
_compiles = collections.defaultdict(lambda: [0, 0.0])


_specialisations = collections.defaultdict(set)


def _report_compiles():
    rows = sorted(_compiles.items(), key=lambda kv: -kv[1][1])
    print("KERNELS " + json.dumps([[k, n, round(s, 3), sorted(_specialisations.get(k, ()))] for k, (n, s) in rows]),
          file=sys.stderr, flush=True)


def _specialisation(src):
    # each parameter as this compile fixed it: the kernel's constants, runtime values specialised to
    # constants (an integer 1), and arguments marked divisible by 16
    parts = []
    for i, param in enumerate(getattr(src.fn, "params", ())):
        if (i,) in src.constants:
            parts.append(f"{param.name}={src.constants[(i,)]!r}")
        elif (i,) in (src.attrs or {}):
            parts.append(f"{param.name}/16")
        else:
            parts.append(f"{param.name}:{src.signature.get(param.name, '?')}")
    return " ".join(parts)


from numba.core import event as _event


class _NumbaCompiles(_event.Listener):
    open = []

    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        self.open.append((time.perf_counter(), f"numba {f.__module__}.{f.__qualname__}"))

    def on_end(self, ev):
        start, name = self.open.pop()
        if not self.open:
            _compiles[name][0] += 1
            _compiles[name][1] += time.perf_counter() - start


_event.register("numba:compile", _NumbaCompiles())
try:
    import triton as _triton
    import triton.compiler as _triton_compiler
except ImportError:
    pass
else:
    _triton_compile = _triton_compiler.compile

    def _timed_compile(src, *args, **kwargs):
        start = time.perf_counter()
        try:
            return _triton_compile(src, *args, **kwargs)
        finally:
            name = "triton " + getattr(getattr(src, "fn", None), "__name__", "?")
            _compiles[name][0] += 1
            _compiles[name][1] += time.perf_counter() - start
            try:
                _specialisations[name].add(_specialisation(src))
            except Exception:  # another Triton's sources: the count and the seconds are kept
                pass

    _triton_compiler.compile = _triton.compile = _timed_compile
"""

#: with ``--kernels``, the commands' child: the hooks, then the CLI in this process
COMMAND = HOOKS + r"""
from apsp.cli.program import main
rc = main(sys.argv[1:])
_report_compiles()
sys.exit(rc)
"""

#: the child of the ``dense`` and ``grid`` cases: build the input, time the call, print one JSON line
CALL = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import apsp
kind, size, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(1)
if kind == "dense":
    graph, method = rng.integers(1, 101, size=(size, size), dtype=np.int32), "auto"
else:
    sys.path.insert(0, sys.argv[4])
    from nd_graphs import grid
    graph, method = grid(size), "nd-fw"
t1 = time.perf_counter()
r = apsp.shortest_paths(graph, method=method, backend=backend)
t2 = time.perf_counter()
if "_report_compiles" in globals():
    _report_compiles()
print(json.dumps({"call_s": t2 - t1, "import_s": t1 - t0, "stages_s": {k: float(v) for k, v in r.timings.items()},
                  "method": r.method, "backend": r.backend, "dtype": str(r.distances.dtype)}))
"""


#: where the runs keep Python's bytecode (``--bytecode cached``); None: as the environment has it
PYCACHE: list[Path] = []

#: what the cases import, compiled to bytecode before the first run (as a pip install leaves it)
PRIME = ("import numpy, scipy.sparse, numba, apsp.api, apsp.io, apsp.cli.program, apsp.cli.solve, apsp.plan, "
         "apsp.cpu.blocked, apsp.cpu.ndfw, apsp.dissection\n"
         "try:\n    import triton, apsp.gpu.fw, apsp.gpu.ndfw, apsp.gpu.devarray, apsp.gpu.rounds, torch\n"
         "except Exception:\n    pass\n")


def _env(cache: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache / "numba"), "TRITON_CACHE_DIR": str(cache / "triton")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    if PYCACHE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE[0])
    return env


def _run(cmd: list[str], cache: Path, cwd: Path) -> tuple[float, float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=_env(cache), capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-4000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, out


def run_command(args: list[str], cache: Path, cwd: Path, kernels: bool = False) -> dict:
    """``apsp ARGS --profile --json`` in a fresh process."""
    start = ["-c", COMMAND] if kernels else ["-m", "apsp"]
    wall, cpu, out = _run([sys.executable, *start, *args, "--profile", "--json"], cache, cwd)
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, "cpu_s": cpu, "stages_s": summary["timings_s"], "notice": _notice(out.stderr),
            "method": summary["method"], "backend": summary["backend"], "dtype": summary["dtype"],
            **_kernels(out.stderr)}


def run_call(kind: str, size: int, backend: str, cache: Path, cwd: Path, kernels: bool = False) -> dict:
    """One ``apsp.shortest_paths`` call in a fresh process."""
    wall, cpu, out = _run([sys.executable, "-c", (HOOKS if kernels else "") + CALL, kind, str(size), backend,
                           str(ROOT / "benchmarks")], cache, cwd)
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, "cpu_s": cpu, "notice": _notice(out.stderr), **rec, **_kernels(out.stderr)}


def _kernels(stderr: str) -> dict:
    lines = [line for line in stderr.splitlines() if line.startswith("KERNELS ")]
    return {"kernels": json.loads(lines[-1][len("KERNELS "):])} if lines else {}


def _notice(stderr: str) -> str:
    return " / ".join(line.strip() for line in stderr.splitlines() if "compiling" in line)


def _varying(specs: list[str]) -> list[str]:
    """The parameters whose specialisation differs between a kernel's compiles."""
    columns = [spec.split(" ") for spec in specs]
    if len(columns) < 2 or len({len(c) for c in columns}) != 1:
        return []
    names = [part.split("=")[0].split("/")[0].split(":")[0] for part in columns[0]]
    return [name for i, name in enumerate(names) if len({c[i] for c in columns}) > 1]


def homework_input(n: int, data: Path) -> Path:
    """The generated homework text graph of ``n`` vertices (made once per ``--data`` directory)."""
    path = data / f"homework-{n}.txt"
    if not path.exists():
        subprocess.run([sys.executable, "-m", "apsp", "gen", str(n), "--density", "0.05", "--weights", "0",
                        "100", "--seed", "1", "-o", str(path), "-q"], check=True, env=_env(data / "gen-cache"))
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="readme,homework,dense,grid",
                    help="comma-separated, in order (default all: readme, homework, dense, grid)")
    ap.add_argument("--small", action="store_true",
                    help="sizes for a small CPU box: homework n = 2000, dense n = 1024, grid 40 x 40")
    ap.add_argument("--homework-n", type=int, default=None, help="default 10000 (2000 with --small)")
    ap.add_argument("--dense-n", type=int, default=None, help="default 8192 (1024 with --small)")
    ap.add_argument("--grid-side", type=int, default=None, help="default 350 (40 with --small)")
    ap.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"),
                    help="the dense and grid calls' backend (the commands choose their own)")
    ap.add_argument("--warm", type=int, default=2, help="warm runs after the cold one (default 2)")
    ap.add_argument("--data", type=Path, default=None, help="keep generated inputs here (default: a temp dir)")
    ap.add_argument("--json", type=Path, default=None, help="also write every run here")
    ap.add_argument("--kernels", action="store_true",
                    help="also list each run's compiles by kernel (Numba's and Triton's: count, seconds)")
    ap.add_argument("--bytecode", default="cached", choices=("cached", "as-is"),
                    help="cached (default): Python's bytecode kept in a directory of the run's own and made "
                         "before the first run, as a pip install leaves it (a device image with "
                         "PYTHONDONTWRITEBYTECODE=1 and no .pyc files compiles every module from source in "
                         "every process); as-is: the environment's own setting")
    args = ap.parse_args(argv)
    homework_n = args.homework_n or (2000 if args.small else 10000)
    dense_n = args.dense_n or (1024 if args.small else 8192)
    grid_side = args.grid_side or (40 if args.small else 350)
    cases = [c for c in args.cases.split(",") if c]
    for c in cases:
        if c not in GOALS:
            ap.error(f"unknown case {c!r}; choose from {', '.join(GOALS)}")
    runs = []
    with tempfile.TemporaryDirectory(prefix="apsp-first-calls-") as tmp_name:
        tmp = Path(tmp_name)
        data = args.data or tmp
        data.mkdir(parents=True, exist_ok=True)
        if args.bytecode == "cached":
            PYCACHE.append(tmp / "pycache")
            subprocess.run([sys.executable, "-c", PRIME], env=_env(tmp / "prime-cache"), check=True)
        print(f"# first calls: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}, "
              f"bytecode {args.bytecode}", flush=True)
        print(f"{'case':<22} {'run':<6} {'wall s':>7} {'cpu s':>7}  {'goal':<12} stages (s)", flush=True)
        for case in cases:
            cache = tmp / f"cache-{case}"  # empty: the first run compiles everything it needs
            if case == "readme":
                label, go = "readme n=128", lambda: run_command(
                    [str(ROOT / "apsp/data/knuth-miles.txt"), str(tmp / "out.txt"), "32"], cache, tmp, args.kernels)
            elif case == "homework":
                src = homework_input(homework_n, data)
                label, go = f"homework n={homework_n}", lambda src=src: run_command(
                    [str(src), str(tmp / "out.txt"), "32"], cache, tmp, args.kernels)
            elif case == "dense":
                label, go = f"dense n={dense_n}", lambda: run_call("dense", dense_n, args.backend, cache, tmp,
                                                                             args.kernels)
            else:
                label, go = f"grid {grid_side}^2 nd-fw", lambda: run_call("grid", grid_side, args.backend, cache,
                                                                                 tmp, args.kernels)
            for r in range(1 + args.warm):
                rec = go()
                run = "cold" if r == 0 else f"warm{r}"
                when, goal = GOALS[case]
                verdict = (f"<= {goal:g} {'met' if rec['wall_s'] <= goal else 'NOT'}" if run.startswith(when)
                           else "")
                stages = " ".join(f"{k}={s:.2f}" for k, s in rec.get("stages_s", {}).items() if s >= 0.005)
                print(f"{label:<22} {run:<6} {rec['wall_s']:>7.2f} {rec['cpu_s']:>7.2f}  {verdict:<12} {stages}"
                      + (f"  [{rec['notice']}]" if rec["notice"] else ""), flush=True)
                for name, count, seconds, specs in rec.get("kernels", [])[:KERNEL_ROWS]:
                    varying = _varying(specs)
                    print(f"{'':<22} {'':<6} {seconds:>7.2f} {'':>7}  {count:>3} x {name}"
                          + (f" (specialised by {', '.join(varying)})" if varying else ""), flush=True)
                runs.append({"case": case, "label": label, "run": run, **rec})
                if rec["wall_s"] > 600 and r == 0:
                    break
    if args.json is not None:
        args.json.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
