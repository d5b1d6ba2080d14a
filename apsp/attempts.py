"""A plan's dtype attempts run narrowest first: solve, check for cut-off distances, retry wider.

`narrow_first` is the retry itself, shared by the single-process solve (`run_plan`) and the
distributed one (`apsp.distributed.api.solve`); `run_plan` executes an `apsp.plan.Plan` with the
registered solvers and packages the `Result` with its timings.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Iterable, TypeVar

from . import dtypes
from .jit import book_compile, compile_seconds, compiling
from .result import Result
from .solvers import get_solver

log = logging.getLogger("apsp.api")

Out = TypeVar("Out")


def narrow_first(attempts: Iterable, solve: Callable[..., Out], suspected: Callable[[Out, object], bool],
                 max_abs_weight, requested: bool) -> tuple[Out, object, list[str]]:
    """Solve in each attempt's dtype (``.dtype``, ``.checked``) until a result is trusted.

    A checked attempt's result is kept only if ``suspected(out, attempt)`` is False; else the
    next, wider attempt runs. Returns the result, its attempt and the dtype names tried.

    Raises
    ------
    DtypeError
        When the last attempt may have cut off a distance (`apsp.dtypes.cutoff_error`).
    """
    attempts = list(attempts)
    tried: list[str] = []
    for number, attempt in enumerate(attempts, 1):
        out = solve(attempt)
        if attempt.dtype is not None:
            tried.append(attempt.dtype.name)
        if not (attempt.checked and suspected(out, attempt)):
            return out, attempt, tried
        if number == len(attempts):
            raise dtypes.cutoff_error(attempt.dtype, max_abs_weight, requested=requested)
        log.info("dtype %s may have cut off a distance (a value within max|w| of its limit): solving "
                 "again in %s", attempt.dtype.name, attempts[number].dtype.name)
        del out  # the wider solve may need the memory
    raise ValueError("a plan without attempts")


def run_plan(g, plan, timings: dict) -> Result:
    """Execute ``plan`` (`apsp.plan.make_plan`) on ``g``; ``timings``: the stages before it
    ("validate", "setup"), which the result's timings start with."""
    where = plan.backend
    compiled = compile_seconds()
    t_first = time.perf_counter()
    marks: dict = {}

    def solve(step):
        marks["try"] = time.perf_counter()
        if step.refusal is not None:
            raise step.refusal
        dt = step.dtype
        with compiling(f"CPU kernels for {dt.name if dt is not None else step.method.upper()}"):
            try:
                out = get_solver(step.solver, where)(g, step.opts)
            except BaseException as exc:
                if where == "gpu":  # a failed attempt leaves the card as it found it
                    from .gpu import give_back_memory

                    give_back_memory(exc)
                raise
            if where == "gpu":  # so that a retry, or the next call, plans against the whole card
                from .gpu import give_back_memory

                give_back_memory()
        if plan.sources is not None and not plan.rows_by_search:  # a full solve was cheaper: keep the rows
            src = plan.sources
            out.dist = out.dist[src]
            out.predecessors = None if out.predecessors is None else out.predecessors[src]
            out.successors = None if out.successors is None else out.successors[src]
        marks["solved"] = time.perf_counter()
        return out

    def suspected(out, step) -> bool:
        # an engine that can read its result on its device has checked it; else the host reads it
        suspect = out.info.pop("cutoff_suspected", None)
        if suspect is None:
            suspect = dtypes.cutoff_suspected(out.dist, step.opts.cutoff_band)
        marks["checked"] = time.perf_counter()
        return suspect

    out, step, tried = narrow_first(plan.steps, solve, suspected, g.max_abs_weight,
                                    requested=plan.requested[2] is not None)
    t_checked = marks.get("checked", marks["solved"])
    if step.cast_to is not None:
        target = None
        memory = step.memory
        if memory is not None and memory.out_of_core and memory.matrix_on_disk and out.dist.shape == (g.n, g.n):
            from .outofcore import HostMatrix  # the result stays off RAM, as the solve's did

            target = HostMatrix(g.n, step.cast_to, on_disk=True, scratch_dir=memory.scratch_dir).array
        out.dist = dtypes.cast_checked(out.dist, step.cast_to, g.has_negative_weights, out=target)
        t_checked = time.perf_counter()
    info = out.info
    if plan.skipped:
        info["dtype_skipped"] = list(plan.skipped)
    if plan.fallback:
        info["method_fallback"] = plan.fallback
    if step.dtype is not None:
        info.update(dtype_tried=tried, dtype_retry=len(tried) > 1,
                    dtype_check="cast" if step.cast_to is not None else "verified" if step.checked else "bound")
    info.setdefault("why", plan.why(info))
    t_end = time.perf_counter()
    # stages add up to the whole call: "retry" the narrower solves that were cut off, whole;
    # "check" verifying the result; "other" what the solver's own stages miss
    timings = dict(timings)
    if len(tried) > 1:
        timings["retry"] = marks["try"] - t_first
    timings.update(out.timings)
    checked = step.checked or step.cast_to is not None
    if checked:
        timings["check"] = t_checked - marks["solved"]
    elapsed = (marks["solved"] if checked else t_checked) - marks["try"]
    if out.timings:
        timings["other"] = max(0.0, elapsed - sum(out.timings.values()))
    else:
        timings["solve"] = elapsed
    timings["other"] = timings.get("other", 0.0) + (t_end - t_checked)  # the explanation, the bookkeeping
    # a first run compiles its kernels inside the solve: book those seconds as "compile"
    book_compile(timings, compile_seconds() - compiled, [*out.timings, "other", "solve", "retry"])
    return Result(distances=out.dist, method=step.method, backend=where, dtype=out.dist.dtype,
                  block_size=out.block_size, predecessors=out.predecessors, successors=out.successors,
                  timings=timings, info=info, sources=plan.sources, labels=g.labels)
