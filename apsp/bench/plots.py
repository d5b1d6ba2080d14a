"""PNG plots of a results file, drawn with matplotlib's Agg canvas (no pyplot, no display).

``draw(results, out_dir)`` writes the suite's figures and returns, per figure,
``{"file", "kind", "lines", "labels"}``: the number of data series drawn is
recorded so a figure with nothing on it is visible in the results file.

* backends: log-log time vs n, one line per backend (error bars: min..max);
  speed-up over the baseline vs n;
* block: updates/s vs blocking factor, and achieved bandwidth vs blocking factor;
* breakdown: stacked bars of time per stage;
* memory: log-log peak memory vs n (host and GPU), with the n^2 matrix for scale;
* scaling: time and parallel efficiency vs ranks (strong and weak);
* ceiling: bars of the min-plus ceiling per dtype.
"""
from __future__ import annotations

import textwrap
from collections import defaultdict
from pathlib import Path

from ..io.atomic import atomic_write
from .environment import describe
from .results import Results

#: stage order in breakdown bars; stages a solver reports beyond these follow
STAGE_ORDER = ("read", "validate", "setup", "prepare", "scatter", "h2d", "compute", "comm", "copy",
               "paths", "d2h", "other", "solve", "write")


def draw(results: Results, out_dir) -> list[dict]:
    """Draw the suite's figures into ``out_dir``; returns what was drawn."""
    drawer = {"backends": _backends, "block": _block, "breakdown": _breakdown, "memory": _memory,
              "scaling": _scaling, "ceiling": _ceiling}.get(results.suite)
    if drawer is None or not results.ok():
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [info for info in drawer(results, out) if info]


# -- helpers ---------------------------------------------------------------------
def _figure(title: str, results: Results):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.6), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(f"{title}\n" + "\n".join(textwrap.wrap(describe(results.environment), 90)), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    return fig, ax


#: a legend beside the axes
BESIDE = {"loc": "center left", "bbox_to_anchor": (1.0, 0.5)}


def _legend(ax) -> None:
    """Inside the axes for a few lines; beside them for many (they would cover the data)."""
    ax.legend(fontsize=8, **(BESIDE if len(ax.get_legend_handles_labels()[1]) > 6 else {}))


def _save(fig, path: Path, kind: str, labels: list[str]) -> dict:
    with atomic_write(path) as fh:
        fig.savefig(fh, format="png")
    return {"file": path.name, "kind": kind, "lines": len(labels), "labels": labels}


#: markers cycle with a different period than the 10 colours, so 11+ series stay distinct
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">")


def _style(index: int) -> dict:
    return {"marker": MARKERS[index % len(MARKERS)], "ms": 4}


def _series(records, key_fields, x_field, y_field):
    """Group records into {key: sorted [(x, record)]} where y is present and > 0 (log axes)."""
    groups = defaultdict(list)
    for r in records:
        if r.get(y_field) is None or r.get(x_field) is None or not r[y_field] > 0:
            continue
        groups[tuple(r.get(f) for f in key_fields)].append((r[x_field], r))
    return {k: sorted(v, key=lambda t: t[0]) for k, v in groups.items()}


def _log2_axis(ax, values, label: str) -> None:
    """Log-2 x axis ticked at the measured values, written as plain numbers."""
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.set_xscale("log", base=2)
    ticks = sorted({v for v in values if v})
    if ticks:
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([str(t) for t in ticks], fontsize=8)
    ax.set_xlabel(label)


# -- suites ----------------------------------------------------------------------
def _backends(results: Results, out: Path) -> list[dict]:
    recs = results.ok()
    fig, ax = _figure("APSP time vs n (median of repeats; bars: min..max)", results)
    labels = []
    for i, (key, pts) in enumerate(_series(recs, ("backend", "workload"), "n", "time_median_s").items()):
        xs = [x for x, _ in pts]
        med = [r["time_median_s"] for _, r in pts]
        lo = [r["time_median_s"] - r.get("time_min_s", r["time_median_s"]) for _, r in pts]
        hi = [r.get("time_max_s", r["time_median_s"]) - r["time_median_s"] for _, r in pts]
        label = f"{key[0]} ({key[1]})" if key[1] == "unit" else key[0]
        ax.errorbar(xs, med, yerr=[lo, hi], capsize=2, label=label, **_style(i))
        labels.append(label)
    _log2_axis(ax, [r["n"] for r in recs], "n (vertices)")
    ax.set_yscale("log")
    ax.set_ylabel("time per solve (s)")
    _legend(ax)
    drawn = [_save(fig, out / "backends_time.png", "time_vs_n", labels)]

    baseline = results.options.get("baseline")
    speed = [r for r in recs if r.get("speedup") is not None]
    if baseline and speed:
        fig, ax = _figure(f"Speed-up over {baseline} (unit-weight graphs: over scipy-unweighted)", results)
        labels = _plot(ax, speed, ("backend",), "n", "speedup",
                       lambda key, pts: None if key[0] == pts[0][1].get("baseline") else key[0])
        ax.axhline(1.0, color="gray", lw=0.8)
        _log2_axis(ax, [r["n"] for r in speed], "n (vertices)")
        ax.set_yscale("log")
        ax.set_ylabel(f"speed-up over {baseline}")
        if labels:
            _legend(ax)
            drawn.append(_save(fig, out / "backends_speedup.png", "speedup_vs_n", labels))
    return drawn


def _plot(ax, recs, keys, x_field: str, field: str, label_of, scale: float = 1.0, first: int = 0,
          **line) -> list[str]:
    """One line of ``field`` (times ``scale``) against ``x_field`` per group of ``keys``, labelled
    ``label_of(key, points)`` (None: not drawn), markers from the ``first``-th on; the labels drawn."""
    labels = []
    for i, (key, pts) in enumerate(_series(recs, keys, x_field, field).items(), first):
        if (label := label_of(key, pts)) is not None:
            ax.plot([x for x, _ in pts], [r[field] * scale for _, r in pts], label=label, **line, **_style(i))
            labels.append(label)
    return labels


def _lines(results: Results, recs, title: str, keys, x_field: str, field: str, label_of, xlabel: str,
           ylabel: str, path: Path, scale: float = 1.0) -> dict:
    """One line of ``field`` (times ``scale``) against ``x_field`` (log 2) per group of ``keys``."""
    fig, ax = _figure(title, results)
    labels = _plot(ax, recs, keys, x_field, field, lambda key, _: label_of(key), scale)
    _log2_axis(ax, [r[x_field] for r in recs], xlabel)
    ax.set_ylabel(ylabel)
    if labels:
        _legend(ax)
    return _save(fig, path, f"{field}_vs_{x_field}", labels)


def _block(results: Results, out: Path) -> list[dict]:
    return [_lines(results, results.ok(), f"Blocking factor sweep: {ylabel.split(' (')[0]}",
                   ("backend", "n", "dtype"), "block", field, lambda k: f"{k[0]} n={k[1]} {k[2]}",
                   "blocking factor B", ylabel, out / name, scale)
            for field, ylabel, name, scale in (
                ("updates_per_s", "updates/s (n^3 / time)", "block_updates.png", 1.0),
                ("bandwidth_Bps", "achieved bandwidth, model bytes / time (GB/s)", "block_bandwidth.png", 1e-9))]


def stage_names(recs) -> list[str]:
    """Stages present in ``recs``, in pipeline order, unknown ones last."""
    stages = [s for s in STAGE_ORDER if any(s in r["stages"] for r in recs)]
    return stages + sorted({s for r in recs for s in r["stages"]} - set(stages))


def _breakdown(results: Results, out: Path) -> list[dict]:
    recs = [r for r in results.ok() if r.get("stages")]
    if not recs:
        return []
    return [_stage_bars(results, recs, [f"{r['backend']}\nn={r['n']}" for r in recs],
                        out / "breakdown.png")]


def _stage_bars(results: Results, recs, bars, path: Path) -> dict:
    stages = stage_names(recs)
    fig, ax = _figure("Share of time per stage (median of repeats; total above each bar)", results)
    totals = [sum(r["stages"].values()) or 1.0 for r in recs]
    bottom = [0.0] * len(recs)
    for stage in stages:  # shares, so small and large n read alike; the table has seconds
        heights = [100 * r["stages"].get(stage, 0.0) / t for r, t in zip(recs, totals)]
        ax.bar(bars, heights, bottom=bottom, label=stage)
        bottom = [b + h for b, h in zip(bottom, heights)]
    for x, t in enumerate(totals):
        ax.annotate(f"{t:.3g} s", (x, 100), ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, 110)
    ax.set_ylabel("% of total time")
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(fontsize=8, **BESIDE)
    return _save(fig, path, "stage_bars", stages)


def _memory(results: Results, out: Path) -> list[dict]:
    recs = results.ok()
    fig, ax = _figure("Peak memory vs n", results)
    labels: list[str] = []
    for field, kind, style in (("host_peak_bytes", "host", "-"), ("gpu_peak_allocated_bytes", "GPU", ":")):
        labels += _plot(ax, recs, ("backend",), "n", field, lambda key, _: f"{key[0]} ({kind})", 2**-20,
                        len(labels), linestyle=style)
    ns = sorted({r["n"] for r in recs})
    if ns:  # one n x n int32 matrix, for scale (not counted as a data line)
        ax.plot(ns, [n * n * 4 / 2**20 for n in ns], "k--", lw=0.8, label="one n^2 int32 matrix")
    _log2_axis(ax, ns, "n (vertices)")
    ax.set_yscale("log")
    ax.set_ylabel("peak memory (MiB)")
    _legend(ax)
    return [_save(fig, out / "memory.png", "memory_vs_n", labels)]


def _scaling(results: Results, out: Path) -> list[dict]:
    recs = results.ok()
    drawn = [_lines(results, recs, f"Scaling over MPI ranks: {ylabel}", ("backend", "mode", "base_n"), "ranks",
                    field, lambda k: f"{k[0]} {k[1]} (n={k[2]} at 1 rank)", "MPI ranks", ylabel, out / name)
             for field, ylabel, name in (("time_median_s", "time per solve (s)", "scaling_time.png"),
                                         ("efficiency", "parallel efficiency", "scaling_efficiency.png"))]
    staged = [r for r in recs if r.get("stages")]
    if staged:
        bars = [f"{r['backend']} {r['mode']}\nP={r['ranks']} n={r['n']}" for r in staged]
        drawn.append(_stage_bars(results, staged, bars, out / "scaling_stages.png"))
    return drawn


def _ceiling(results: Results, out: Path) -> list[dict]:
    recs = [r for r in results.ok() if r.get("updates_per_s")]
    fig, ax = _figure("Min-plus ceiling of the GPU (micro-kernel)", results)
    labels = [r["dtype"] for r in recs]
    ax.bar(labels, [r["updates_per_s"] / 1e12 for r in recs])
    ax.set_ylabel("T updates/s")
    return [_save(fig, out / "ceiling.png", "ceiling_bars", labels)]
