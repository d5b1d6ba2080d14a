"""Markdown tables of a results file, ready to paste into BENCHMARKS.md.

>>> from apsp.bench.results import Results
>>> r = Results(suite="ceiling", environment={}, options={})
>>> _ = r.add(backend="gpu", n=None, status="ok", dtype="int32", updates_per_s=1.3e13)
>>> print(markdown(r).splitlines()[-1])
| int32 | 13.00 |
"""
from __future__ import annotations

from .environment import describe
from .plots import stage_names
from .results import Results


def markdown(results: Results) -> str:
    """Header (device, date, commit), the suite's table, and the reasons for skipped points."""
    body = {"backends": _backends, "block": _block, "breakdown": _breakdown, "memory": _memory,
            "scaling": _scaling, "ceiling": _ceiling}[results.suite](results)
    head = [f"### apsp bench {results.suite}{' --quick' if results.options.get('quick') else ''}", "",
            f"{describe(results.environment)}", ""]
    if results.interrupted:
        head += ["*Interrupted: partial results.*", ""]
    if any((r.get("info") or {}).get("device") == "triton-interpreter" for r in results.ok()):
        head += ["*GPU solvers ran in Triton's CPU interpreter (--interpreter): their times are not "
                 "GPU times.*", ""]
    return "\n".join(head + body + _skips(results)).rstrip() + "\n"


def _row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header, rows) -> list[str]:
    return [_row(header), _row(["---"] * len(header))] + [_row(r) for r in rows]


def _ms(seconds) -> str:
    if seconds is None:
        return "-"
    ms = seconds * 1e3
    return f"{ms:.3g}" if ms < 100 else f"{ms:,.0f}"


def _match(records) -> str:
    checked = [r for r in records if r["status"] == "ok" and r.get("match") is not None]
    if not checked:
        return "-"
    bad = [r["backend"] for r in checked if not r["match"]]
    return "True" if not bad else "False (" + ", ".join(bad) + ")"


def _skips(results: Results) -> list[str]:
    reasons: dict = {}
    for r in results.records:
        if r["status"] in ("skipped", "failed"):
            reasons.setdefault((r["backend"], r["status"], r.get("reason")), []).append(r.get("n"))
    if not reasons:
        return []
    lines = ["", "Not measured:", ""]
    for (backend, status, reason), ns in reasons.items():
        sizes = ", ".join(str(n) for n in sorted({n for n in ns if n is not None}))
        lines.append(f"- {backend}{f' (n = {sizes})' if sizes else ''}: {status}, {reason}")
    return lines


def _backends(results: Results) -> list[str]:
    recs = results.records
    names = list(dict.fromkeys(list(results.options.get("backends") or []) + [r["backend"] for r in recs]))
    names = [b for b in names if any(r["backend"] == b for r in recs)]
    ns = sorted({r["n"] for r in recs if r["n"] is not None})
    by = {(r["backend"], r["n"]): r for r in recs}
    header = ["n"] + [f"{b} ms" for b in names] + ["All results match?"]

    def cell(r):
        if r is None:
            return ""
        if r["status"] != "ok":
            return r["status"]
        speedup = r.get("speedup") is not None and r.get("baseline") != r["backend"]
        return _ms(r["time_median_s"]) + (f" (x{r['speedup']:.3g})" if speedup else "")

    rows = [[n] + [cell(by.get((b, n))) for b in names] + [_match([r for r in recs if r["n"] == n])] for n in ns]
    base = results.options.get("baselines") or {}
    note = ["", "Median time per solve in ms; (xS) = speed-up over "
            + " / ".join(f"{b} ({w} graphs)" for w, b in base.items())
            + ". Graphs: random, density " + str(results.options.get("density"))
            + ", integer weights 1..100 (BFS: weight 1)."]
    gpu = [r for r in results.ok() if r.get("ceiling_fraction") is not None]
    if gpu:
        note += ["", "GPU rates against the card's min-plus ceiling:", ""]
        note += _table(["backend", "n", "dtype", "G updates/s", "% of ceiling"],
                       [[r["backend"], r["n"], r.get("dtype"), f"{r['updates_per_s'] / 1e9:.1f}",
                         f"{100 * r['ceiling_fraction']:.1f}"] for r in gpu])
    return _table(header, rows) + note


def _per_record(recs, header, cells, note: str, lead=("backend", "n", "dtype")) -> list[str]:
    """One row per record: its ``lead`` fields, ``cells(record)`` under ``header``, whether it
    matched; then ``note``."""
    rows = [[r.get(f) for f in lead] + cells(r) + [_match([r])] for r in recs]
    return _table([*lead, *header, "match"], rows) + ["", note]


def _block(results: Results) -> list[str]:
    def cells(r):
        frac = r.get("ceiling_fraction")
        return [r["block"], f"{_ms(r['time_median_s'])} ({_ms(r['time_min_s'])}-{_ms(r['time_max_s'])})",
                f"{r['updates_per_s'] / 1e9:.2f}", f"{r['model_bytes'] / 1e9:.3g}", f"{r['bandwidth_Bps'] / 1e9:.1f}",
                "-" if frac is None else f"{100 * frac:.1f}"]

    return _per_record(results.ok(), ["B", "ms (min-max)", "G updates/s", "model GB", "GB/s", "% ceiling"], cells,
                       "Model bytes: each tile read once per use and each updated tile written once "
                       "(see apsp/bench/model.py); GB/s = model bytes / median time.")


def _stage_cells(r, stages) -> list[str]:
    secs = r.get("stages", {})
    total = sum(secs.values())
    return ["-" if secs.get(s) is None else f"{_ms(secs[s])} ({100 * secs[s] / total:.0f}%)" if total
            else _ms(secs[s]) for s in stages]


def _breakdown(results: Results) -> list[str]:
    recs = [r for r in results.ok() if r.get("stages")]
    stages = stage_names(recs)
    return _per_record(recs, ["total ms"] + [f"{s} ms" for s in stages],
                       lambda r: [_ms(sum(r["stages"].values()))] + _stage_cells(r, stages),
                       "Median over repeats of each stage; read/write are the CLI's file I/O, the other stages "
                       "are what the solver reports in Result.timings.")


def _mib(b) -> str:
    return "-" if b is None else f"{b / 2**20:.3g}"


def _memory(results: Results) -> list[str]:
    def cells(r):
        ratio = r.get("host_peak_bytes") / r["matrix_bytes"] if r.get("host_peak_bytes") else None
        return [_mib(r["matrix_bytes"]), _mib(r.get("host_peak_bytes")), "-" if ratio is None else f"{ratio:.2f}",
                _mib(r.get("host_traced_peak_bytes")), _mib(r.get("gpu_peak_allocated_bytes"))]

    return _per_record(results.ok(), ["n^2 matrix MiB", "host peak MiB", "host / matrix", "numpy-traced MiB",
                                      "GPU peak MiB"], cells,
                       "Host peak: rise of the process's peak resident memory during one solve "
                       f"({results.options.get('host_memory_method', 'VmHWM')}); numpy-traced: tracemalloc's peak; "
                       "GPU peak: torch.cuda.max_memory_allocated.")


def _scaling(results: Results) -> list[str]:
    recs = results.ok()
    stages = stage_names([r for r in recs if r.get("stages")])

    def cells(r):
        return [f"{r['time_median_s']:.3f}", "-" if r.get("speedup") is None else f"{r['speedup']:.2f}",
                "-" if r.get("efficiency") is None else f"{100 * r['efficiency']:.0f}%",
                f"{r['wall_median_s']:.2f}"] + _stage_cells(r, stages)

    return _per_record(recs, ["solve s", "speed-up", "efficiency", "process wall s"] + [f"{s} ms" for s in stages],
                       cells, "Strong: fixed n; weak: n grows by sqrt(ranks) (equal memory per rank). Solve time: sum "
                       "of the per-stage maxima over ranks the CLI reports, without file read/write and one-off setup. "
                       "Efficiency: strong t1/(P tP); weak (nP/n1)^3 t1/(P tP), useful work per rank-second.",
                       lead=("backend", "mode", "ranks", "n"))


def _ceiling(results: Results) -> list[str]:
    return _table(["dtype", "T updates/s"],
                  [[r["dtype"], f"{r['updates_per_s'] / 1e12:.2f}"] for r in results.ok()])
