"""The benchmark suites. Each ``run_SUITE(ctx)`` appends records to ``ctx.results``.

Every measured point: untimed setup, warm-up run(s) (the first result is
checked against the reference), then timed repeats (as many as fit in the
time limit, at most ``--repeat``), summarised as median, min/max and quartiles.
A point predicted (from the previous size, O(n^3)) to exceed the time limit,
or a backend that cannot run here, is recorded as skipped with its reason.
KeyboardInterrupt passes through; the caller saves what was gathered.
"""
from __future__ import annotations

import ctypes
import gc
import importlib.util
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from collections import defaultdict
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable

import numpy as np

from . import model
from .contestants import ALL, Contestant, contestant
from .environment import proc_bytes
from .results import Results
from .timing import predicted_time, repeats_within, solver_stages, summarize, timed_call
from .workloads import Reference, float_rows, make_graph

#: per suite: sizes, repeats and time limit (s) for --quick and for a full run
DEFAULTS = {
    "backends": {"quick": dict(sizes=[64, 128, 256, 512, 1024], repeat=3, time_limit=10.0),
                 "full": dict(sizes=[128, 256, 512, 1024, 2048, 4096, 8192, 16384], repeat=5,
                              time_limit=60.0)},
    "block": {"quick": dict(sizes=[1024], repeat=3, time_limit=10.0, blocks=[8, 16, 32, 64, 128, 256]),
              "full": dict(sizes=[2048], repeat=5, time_limit=60.0,
                           blocks=[4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 512])},
    "breakdown": {"quick": dict(sizes=[256, 512, 1024], repeat=3, time_limit=10.0),
                  "full": dict(sizes=[1024, 2048, 4096, 8192], repeat=3, time_limit=120.0)},
    "memory": {"quick": dict(sizes=[128, 256, 512, 1024], repeat=1, time_limit=10.0),
               "full": dict(sizes=[1024, 2048, 4096, 8192, 16384], repeat=1, time_limit=120.0)},
    "scaling": {"quick": dict(sizes=[512], repeat=2, time_limit=30.0, ranks=[1, 2]),
                "full": dict(sizes=[4096], repeat=3, time_limit=300.0, ranks=[1, 2, 4])},
    "ceiling": dict.fromkeys(("quick", "full"), dict(sizes=[], repeat=1, time_limit=60.0)),
}

DEFAULT_CONTESTANTS = {
    "backends": list(ALL),
    "block": ["fw-cpu", "fw-gpu"],
    "breakdown": ["fw-cpu", "fw-gpu"],
    "memory": ["reference", "fw-cpu", "fw-gpu", "bfs-cpu", "bfs-gpu", "dijkstra", "johnson"],
    "scaling": None,  # fw-gpu when a GPU is usable, else fw-cpu
}
CEILING_DTYPES = ("int32", "int16", "float32")


@dataclass
class Context:
    """Options of one run, the results being gathered, and the progress display."""

    suite: str
    results: Results
    sizes: list
    contestants: list
    repeat: int
    warmup: int
    time_limit: float
    density: float
    seed: int
    dtype: str | None = None
    block: int | None = None
    blocks: list = field(default_factory=list)
    ranks: list = field(default_factory=list)
    mpiexec: str = "mpiexec"
    baseline: str = "scipy-fw"
    check_all_up_to: int = 1024
    check_sources: int = 128
    out: Path = Path("bench-out")
    progress: bool = False
    quiet: bool = False
    #: count Triton's CPU interpreter as a GPU (exercises the GPU path; timings meaningless)
    interpreter: bool = False
    #: called after each completed size so partial results reach disk
    checkpoint: Callable[[], object] | None = None
    _inputs: dict = field(default_factory=dict, repr=False)  # graphs and references of one size

    def note(self, text: str) -> None:
        self.results.notes.append(text)
        if not self.quiet:
            from tqdm import tqdm

            tqdm.write(f"apsp bench: {text}", file=sys.stderr)

    def _input(self, kind: str, workload: str, n: int, make):
        if any(k[2] != n for k in self._inputs):  # keep one size in memory at a time
            self._inputs.clear()
        key = (kind, workload, n)
        if key not in self._inputs:
            self._inputs[key] = make()
        return self._inputs[key]

    def graph(self, workload: str, n: int):
        return self._input("graph", workload, n, lambda: make_graph(workload, n, self.density, self.seed))

    def reference(self, workload: str, n: int) -> Reference:
        return self._input("reference", workload, n, lambda: Reference(
            self.graph(workload, n), full_up_to=self.check_all_up_to, sample=self.check_sources,
            seed=self.seed))

    def bar(self, total: int):
        from tqdm import tqdm

        return tqdm(total=total, desc=f"bench {self.suite}", file=sys.stderr, disable=not self.progress,
                    leave=False, dynamic_ncols=True)

    @cached_property
    def ceilings(self) -> "Ceilings":
        return Ceilings(self.out)


# -- shared measurement ----------------------------------------------------------------
def _describe(c: Contestant) -> dict:
    return {"backend": c.name, "method": c.method, "where": c.where, "variant": c.variant,
            "workload": c.workload}


def _skip(ctx: Context, c: Contestant, n, reason: str, **extra) -> None:
    ctx.results.add(**_describe(c), n=n, status="skipped", reason=reason, **extra)


def _measure(ctx: Context, c: Contestant, solve, ref: Reference) -> dict:
    """Warm up (checking the first result), then time repeats; the fields of one record."""
    t, first, _ = timed_call(solve, c.on_gpu)
    check = ref.compare(first.rows_of)
    fields = {"dtype": first.dtype, "block": first.block, "info": first.info, **check.fields(), "reference": ref.name}
    if not check.match:
        ctx.note(f"{c.name}: result differs from the reference ({ref.name}) in {check.mismatches} entries")
    del first
    warm = [t] + [timed_call(solve, c.on_gpu)[0] for _ in range(ctx.warmup - 1)]
    count = repeats_within(ctx.time_limit, warm[-1], ctx.repeat)
    samples, stages, timer = [], defaultdict(list), "perf_counter"
    for _ in range(count):
        t, out, timer = timed_call(solve, c.on_gpu)
        samples.append(t)
        for stage, sec in solver_stages(out.stages).items():
            stages[stage].append(sec)
        del out
    stats = summarize(samples)
    fields.update(stats.as_fields(), samples_s=stats.samples, warmup_s=warm, repeat=count, timer=timer,
                  stages={s: float(np.median(v)) for s, v in stages.items()})
    return fields


def _memory_guard(c: Contestant, n: int, itemsize: int = 4) -> str | None:
    """A reason to skip when the dense matrices surely do not fit in host memory."""
    free = proc_bytes("/proc/meminfo", "MemAvailable")
    per = 8 if (c.peer or c.method == "reference") else itemsize
    need = 3 * n * n * per
    if free is not None and need > free:
        return f"needs about {need / 2**30:.1f} GiB of host memory, {free / 2**30:.1f} GiB available"
    return None


class Budget:
    """Skips sizes predicted (O(n^3) from the last measured size) to exceed the time limit."""

    def __init__(self, limit: float):
        self.limit = limit
        self.last: dict = {}

    def reason(self, name: str, n: int) -> str | None:
        if name in self.last:
            last_n, last_s = self.last[name]
            guess = predicted_time(last_n, last_s, n)
            if guess > self.limit:
                return (f"predicted {guess:.3g} s per solve (from {last_s:.3g} s at n={last_n}) "
                        f"exceeds --time-limit {self.limit:g} s")
        return None

    def done(self, name: str, n: int, seconds: float) -> None:
        self.last[name] = (n, seconds)


def _available(ctx: Context, names, reason=None) -> tuple[list, list]:
    """The contestants named that can run here, and ``(contestant, why)`` for the others:
    ``reason(c)``, or else `Contestant.unavailable` (then noted)."""
    chosen, missing = [], {}
    for name in names:
        c = contestant(name)
        why = reason(c) if reason else c.unavailable(interpreter_ok=ctx.interpreter)
        if why is None:
            chosen.append(c)
        else:
            missing[c.name] = (c, why)
            if reason is None:
                ctx.note(f"{c.name} skipped: {why}")
    return chosen, list(missing.values())


def _guarded(ctx: Context, point, key: str = "time_median_s"):
    """``point(c, n)`` unless predicted over the time limit or out of host memory (then skipped);
    ``point`` returns its record, whose ``key`` (seconds per solve) predicts the next size, or None."""
    budget = Budget(ctx.time_limit)

    def guarded(c: Contestant, n: int) -> None:
        why = budget.reason(c.name, n) or _memory_guard(c, n)
        if why:
            _skip(ctx, c, n, why)
        elif (rec := point(c, n)) is not None:
            budget.done(c.name, n, rec[key])

    return guarded


def _attempt(ctx: Context, c: Contestant, n, measure, fields=None, **extra) -> dict | None:
    """The record ``measure()`` gives, marked ok with ``extra`` and ``fields(record)``, added and
    returned; on an error (not MemoryError or Ctrl-C) the failure is recorded and None returned:
    a backend's failure is a result, not the end of the run."""
    try:
        rec = measure()
    except MemoryError:
        raise
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"
        ctx.results.add(**_describe(c), n=n, status="failed", reason=why, **extra)
        ctx.note(f"{c.name} n={n} failed: {why}")
        return None
    finally:
        gc.collect()
    rec.update(_describe(c), n=n, status="ok", **extra, **(fields(rec) if fields else {}))
    return ctx.results.add(**_with_ceiling(ctx, c, rec))


def _with_ceiling(ctx: Context, c: Contestant, rec: dict) -> dict:
    """GPU Floyd-Warshall rates as a fraction of the card's min-plus ceiling, when known."""
    if c.on_gpu and c.method == "fw" and rec.get("updates_per_s"):
        value, source = ctx.ceilings.get(rec["dtype"])
        rec.update(ceiling_updates_per_s=value, ceiling_source=source,
                   ceiling_fraction=rec["updates_per_s"] / value if value else None)
    return rec


# -- backends --------------------------------------------------------------------------
def run_backends(ctx: Context) -> None:
    ready, missing = _available(ctx, ctx.contestants)
    baselines = {"weighted": ctx.baseline, "unit": "scipy-unweighted"}
    ctx.results.options["baselines"] = baselines
    _sweep_sizes(ctx, ready, missing, _guarded(ctx, lambda c, n: _solve_point(ctx, c, n, ctx.block)),
                 after_size=lambda n: _speedups(ctx, n, baselines))


def _sweep_sizes(ctx: Context, ready, skipped, point, after_size=None, groups=None) -> None:
    """For each group of points ``(n, extra, label)`` (default: one group per size, no extra):
    record the ``skipped`` (contestant, reason) pairs and run ``point(c, n, **extra)`` for the
    ``ready`` at each point, then ``after_size(n)`` and a checkpoint of the results, with one
    progress bar."""
    groups = [[(n, {}, f"n={n}")] for n in ctx.sizes] if groups is None else groups
    with ctx.bar(sum(map(len, groups)) * len(ctx.contestants)) as bar:
        for group in groups:
            for n, extra, label in group:
                for c, why in skipped:
                    _skip(ctx, c, n, why, **extra)
                    bar.update()
                for c in ready:
                    bar.set_postfix_str(f"{c.name} {label}")
                    point(c, n, **extra)
                    bar.update()
            if after_size is not None:
                after_size(n)
            if ctx.checkpoint:
                ctx.checkpoint()


def _solve_point(ctx: Context, c: Contestant, n: int, block_size, fields=None, **extra) -> dict | None:
    """The record of ``c``'s timed solves at ``n`` with blocking factor ``block_size``: edges, density,
    updates/s, then ``fields(record)``."""
    g = ctx.graph(c.workload, n)

    def measure():
        return _measure(ctx, c, c.prepare(g, dtype=ctx.dtype, block=block_size), ctx.reference(c.workload, n))

    def rates(rec):
        return dict(edges=g.nnz, density=ctx.density, updates_per_s=n ** 3 / rec["time_median_s"],
                    **(fields(rec) if fields else {}))

    return _attempt(ctx, c, n, measure, rates, **extra)


def _speedups(ctx: Context, n: int, baselines: dict) -> None:
    at_n = [r for r in ctx.results.records if r["n"] == n and r["status"] == "ok"]
    for workload, base_name in baselines.items():
        base = next((r for r in at_n if r["backend"] == base_name), None)
        for r in at_n:
            if r.get("workload") == workload and base is not None:
                r["baseline"] = base_name
                r["speedup"] = base["time_median_s"] / r["time_median_s"]


# -- block -----------------------------------------------------------------------------
def run_block(ctx: Context) -> None:
    ready, missing = _available(ctx, ctx.contestants)
    _sweep_sizes(ctx, ready, missing, lambda c, n, block: _block_point(ctx, c, n, block),
                 groups=[[(n, {"block": b}, f"n={n} B={b}") for b in ctx.blocks] for n in ctx.sizes])


def _block_point(ctx: Context, c: Contestant, n: int, block: int) -> None:
    if c.method != "fw" or c.variant == "naive":
        _skip(ctx, c, n, "not a blocked method (the sweep is for blocked fw-*)", block=block)
        return
    if block > n:
        _skip(ctx, c, n, f"blocking factor {block} exceeds n", block=block)
        return

    def traffic(rec):
        used = rec.pop("block")
        if used is not None and used != block:
            ctx.note(f"{c.name} n={n}: asked for block {block}, solver used {used}")
        model_bytes = model.blocked_fw_bytes(n, block, np.dtype(rec["dtype"]).itemsize)
        return dict(block_used=used, model_bytes=model_bytes, bandwidth_Bps=model_bytes / rec["time_median_s"])

    _solve_point(ctx, c, n, block, traffic, block=block)


# -- breakdown -------------------------------------------------------------------------
def run_breakdown(ctx: Context) -> None:
    ready, missing = _available(ctx, ctx.contestants)
    skipped = missing + [(p, "peers report no stages") for p in ready if p.peer]
    with tempfile.TemporaryDirectory(prefix="apsp-bench-") as tmp:
        point = _guarded(ctx, lambda c, n: _breakdown_point(ctx, c, n, Path(tmp)))
        _sweep_sizes(ctx, [c for c in ready if not c.peer], skipped, point)


def _breakdown_point(ctx: Context, c: Contestant, n: int, tmp: Path) -> dict | None:
    from ..api import as_graph, shortest_paths
    from ..io import write_distances
    from .contestants import Outcome

    g = ctx.graph(c.workload, n)
    src, dst = tmp / f"graph-{c.workload}-{n}.txt", tmp / f"dist-{n}.txt"
    extra = {"variant": c.variant} if c.variant else {}

    def pipeline():
        read_s, graph, _ = timed_call(lambda: as_graph(src))
        r = shortest_paths(graph, method=c.method, backend=c.where, dtype=ctx.dtype,
                           block_size=ctx.block, progress=False, **extra)
        write_s = timed_call(lambda: write_distances(dst, r.distances))[0]
        return Outcome.of(r, {"read": read_s, **r.timings, "write": write_s})

    def measure():
        _write_edges(g, src)
        try:
            return _measure(ctx, c, pipeline, ctx.reference(c.workload, n))
        finally:
            dst.unlink(missing_ok=True)

    return _attempt(ctx, c, n, measure, lambda rec: dict(edges=g.nnz, density=ctx.density, file_io=True))


def _write_edges(g, path: Path) -> None:
    from ..graph import EdgeList
    from ..io import write_graph

    coo = g.to_csr().tocoo()
    write_graph(path, EdgeList(g.n, coo.row, coo.col, coo.data))


# -- memory ----------------------------------------------------------------------------
def run_memory(ctx: Context) -> None:
    ready, missing = _available(ctx, ctx.contestants)
    method = "VmHWM" if _reset_peak_rss() else None
    ctx.results.options["host_memory_method"] = (
        "VmHWM after resetting it through /proc/self/clear_refs" if method else "unavailable")
    if method is None:
        ctx.note("peak resident memory cannot be reset here (/proc/self/clear_refs); "
                 "only tracemalloc's numpy-traced peak is reported")
    point = _guarded(ctx, lambda c, n: _memory_point(ctx, c, n, method is not None), key="time_s")
    _sweep_sizes(ctx, ready, missing, point)


def _memory_point(ctx: Context, c: Contestant, n: int, rss_ok: bool) -> dict | None:
    g = ctx.graph(c.workload, n)

    def measure():
        solve = c.prepare(g, dtype=ctx.dtype, block=ctx.block)
        t, first, _ = timed_call(solve, c.on_gpu)  # warm-up: compile, caches, correctness
        check = ctx.reference(c.workload, n).compare(first.rows_of)
        dtype = first.dtype
        del first
        return dict(dtype=dtype, **check.fields(), warmup_s=[t], **_peak_of(solve, c.on_gpu, rss_ok))

    return _attempt(ctx, c, n, measure,
                    lambda rec: dict(edges=g.nnz, matrix_bytes=n * n * np.dtype(rec["dtype"]).itemsize))


def _peak_of(solve, on_gpu: bool, rss_ok: bool) -> dict:
    """Peak host (resident, and numpy-traced) and GPU memory of one call of ``solve``."""
    gc.collect()
    # freed heap pages back to the OS (glibc), so that reused memory is not already resident
    # before the measured call and its peak shows as a rise
    with suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    if on_gpu:
        from ..gpu.timing import cuda_present, reset_peak_memory

        on_gpu = cuda_present()  # no GPU memory to report under Triton's interpreter
        if on_gpu:
            reset_peak_memory()
    if rss_ok:
        base = _rss("VmRSS")
        _reset_peak_rss()
    tracemalloc.start()
    try:
        elapsed, out, _ = timed_call(solve)
        traced_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    fields = {"time_s": elapsed, "host_traced_peak_bytes": int(traced_peak)}
    if rss_ok:
        fields["host_peak_bytes"] = max(0, _rss("VmHWM") - base)
    if on_gpu:
        from ..gpu.timing import peak_memory

        fields.update(peak_memory())
    del out
    return fields


def _rss(key: str) -> int:
    """This process's resident memory now (``VmRSS``) or at its peak (``VmHWM``), in bytes; 0 unknown."""
    return proc_bytes("/proc/self/status", key) or 0


def _reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS counter (Linux >= 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return _rss("VmHWM") > 0
    except OSError:
        return False


# -- scaling ---------------------------------------------------------------------------
def scaling_unavailable(mpiexec: list[str]) -> str | None:
    """Why the scaling suite cannot run here, or None."""
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install 'apsp[mpi]')"
    if shutil.which(mpiexec[0]) is None:
        return f"{mpiexec[0]!r} is not on PATH (install an MPI, e.g. Open MPI or MPICH)"
    return None


#: stages left out of the scaling suite's solve time: file I/O and one-off setup (JIT warm-up)
SCALING_EXCLUDED = ("read", "write", "setup")


def run_scaling(ctx: Context) -> None:
    launcher = shlex.split(ctx.mpiexec)
    why = scaling_unavailable(launcher)
    # the distributed CLI runs, not the local solver: only the GPU needs checking
    ready, missing = _available(ctx, ctx.contestants,
                                lambda c: why or (c.unavailable(ctx.interpreter) if c.on_gpu else None))
    if why:
        ctx.note(f"scaling skipped: {why}")
    groups = []
    for base_n, mode, p in ((b, m, p) for b in ctx.sizes for m in ("strong", "weak") for p in ctx.ranks):
        n = base_n if mode == "strong" else int(round(base_n * math.sqrt(p)))
        groups.append([(n, dict(mode=mode, ranks=p, base_n=base_n), f"{mode} P={p} n={n}")])
    with tempfile.TemporaryDirectory(prefix="apsp-scale-") as tmp:
        _sweep_sizes(ctx, ready, missing,
                     lambda c, n, **extra: _scaling_point(ctx, c, n, launcher, Path(tmp), **extra), groups=groups)
    _efficiencies(ctx)


def _oversubscribe(launcher: list[str], ranks: int) -> list[str]:
    """Open MPI refuses more ranks than slots unless told; MPICH needs nothing."""
    if ranks <= (os.cpu_count() or 1) or "--oversubscribe" in launcher:
        return launcher
    try:
        text = subprocess.run(launcher + ["--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return launcher
    return launcher + ["--oversubscribe"] if "Open MPI" in text or "OpenRTE" in text else launcher


def _scaling_point(ctx, c, n, launcher, tmp: Path, mode, ranks, base_n) -> None:
    from .environment import with_this_apsp

    g = ctx.graph(c.workload, n)
    src, dst = tmp / f"g{n}.txt", tmp / f"d{n}-{ranks}.npy"
    if not src.exists():
        _write_edges(g, src)
    if any("{ranks}" in part for part in launcher):  # a template, e.g. "mpirun -n {ranks} --bind-to core"
        cmd = [part.replace("{ranks}", str(ranks)) for part in launcher]
    else:
        cmd = _oversubscribe(launcher, ranks) + ["-n", str(ranks)]
    cmd += [sys.executable, "-m", "apsp", "solve", str(src), "-o", str(dst), "--distributed", "--json", "-q",
            "--backend", c.where]
    if ctx.dtype:
        cmd += ["--dtype", ctx.dtype]
    if ctx.block:
        cmd += ["--block-size", str(ctx.block)]
    env = with_this_apsp(dict(os.environ))
    warmup, extra = max(1, ctx.warmup), dict(mode=mode, ranks=ranks, base_n=base_n)

    def measure():
        runs, walls, stage_runs, timer = [], [], [], "stage timings the CLI printed (--json)"
        try:
            for i in range(warmup + ctx.repeat):
                wall, proc, _ = timed_call(lambda: subprocess.run(
                    cmd, capture_output=True, text=True, env=env, timeout=ctx.time_limit * 4))
                if proc.returncode != 0:
                    raise RuntimeError(f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-500:]}")
                stages = solver_stages(_json_timings(proc.stdout))
                stages.pop("total", None)  # the program's own end-to-end figure, not a stage
                solve_s = sum(v for k, v in stages.items() if k not in SCALING_EXCLUDED) if stages else wall
                if not stages:
                    timer = "process wall time (the CLI printed no --json timings)"
                if i == 0:
                    check = ctx.reference(c.workload, n).compare(_npy_rows(dst))
                if i >= warmup:
                    runs.append(solve_s)
                    walls.append(wall)
                    stage_runs.append(stages)
                    if wall > ctx.time_limit:
                        break
        finally:
            dst.unlink(missing_ok=True)
        stats = summarize(runs)
        keys = {k for s in stage_runs for k in s}
        return dict(_describe(c), n=n, status="ok", **extra, **stats.as_fields(), samples_s=stats.samples,
                    wall_median_s=float(np.median(walls)), repeat=len(runs), timer=timer,
                    stages={k: float(np.median([s[k] for s in stage_runs if k in s])) for k in keys}, **check.fields())

    _attempt(ctx, c, n, measure, **extra)


def _json_timings(stdout: str) -> dict:
    for line in reversed(stdout.strip().splitlines()):
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("timings_s"), dict):
            return {k: float(v) for k, v in data["timings_s"].items()}
    return {}


def _npy_rows(path: Path):
    """The ``rows_of`` of the distances the distributed CLI wrote (integer unreachable -> inf)."""
    d = np.load(path, mmap_mode="r")
    return float_rows(d, np.iinfo(d.dtype).max if d.dtype.kind in "iu" else None)


def _efficiencies(ctx: Context) -> None:
    ok = [r for r in ctx.results.records if r["status"] == "ok" and r.get("mode")]
    for r in ok:
        one = next((b for b in ok if b["mode"] == r["mode"] and b["backend"] == r["backend"]
                    and b["base_n"] == r["base_n"] and b["ranks"] == 1), None)
        if one is None:
            continue
        p, t1, tp = r["ranks"], one["time_median_s"], r["time_median_s"]
        if r["mode"] == "strong":
            r["speedup"] = t1 / tp
            r["efficiency"] = t1 / (p * tp)
        else:  # useful work (n^3) per rank-second, relative to one rank
            r["efficiency"] = (r["n"] / one["n"]) ** 3 * t1 / (p * tp)


# -- ceiling ---------------------------------------------------------------------------
class Ceilings:
    """The GPU's min-plus ceiling per dtype: from ``OUT/ceiling.json`` of the same GPU, or measured once."""

    def __init__(self, out: Path):
        self.values: dict = {}  # dtype -> (updates/s, where the figure comes from)
        path = Path(out) / "ceiling.json"
        if path.exists():
            from .environment import gpu_info
            from .results import load

            try:
                saved = load(path)
            except ValueError:
                return
            if [g["name"] for g in saved.environment.get("gpu", [])] == [g["name"] for g in gpu_info()]:
                source = f"{path} ({saved.environment.get('date', '')[:10]})"
                self.values = {r["dtype"]: (r["updates_per_s"], source) for r in saved.ok()}

    def get(self, dtype: str):
        if dtype not in self.values:
            value = measure_one_ceiling(dtype)
            self.values[dtype] = value, "measured in this run" if value else "unavailable"
        return self.values[dtype]


def ceiling_unavailable() -> str | None:
    from ..plan import gpu_available

    ok, why = gpu_available()
    return None if ok else f"no usable GPU: {why}"


def measure_one_ceiling(dtype: str) -> float | None:
    """The best rate over the micro-kernel's emission modes (``apsp.gpu.ceiling.best_ceiling``),
    or None without a GPU."""
    if ceiling_unavailable():
        return None
    from ..gpu.ceiling import best_ceiling

    return float(best_ceiling(dtype))


def run_ceiling(ctx: Context) -> None:
    why = ceiling_unavailable()
    if why:
        ctx.note(f"ceiling skipped: {why}")
    for dtype in CEILING_DTYPES:
        rec: dict = {"status": "skipped", "reason": why, "dtype": dtype}
        if not why:
            try:
                rec = {"status": "ok", "dtype": dtype, "updates_per_s": measure_one_ceiling(dtype),
                       "info": {"how": "best_ceiling (fastest emission mode)"}}
            except Exception as exc:
                rec = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}", "dtype": dtype}
        ctx.results.add(backend="gpu", n=None, **rec)


RUNNERS = {"backends": run_backends, "block": run_block, "breakdown": run_breakdown,
           "memory": run_memory, "scaling": run_scaling, "ceiling": run_ceiling}
