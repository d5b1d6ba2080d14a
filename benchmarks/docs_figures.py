"""Draw the plots of the documentation's benchmarks page from figures recorded in BENCHMARKS.md.

Nothing is measured here: every number below is copied from the BENCHMARKS.md section named beside it,
with the device, date and commit that section gives (tests/test_docs_build.py checks that each one is
still written there). Run ``python benchmarks/docs_figures.py`` after changing a figure; the PNGs go to
``docs/img/benchmarks/`` (needs matplotlib: ``pip install "apsp[plot]"``).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img" / "benchmarks"


@dataclass(frozen=True)
class Recorded:
    """Figures of one BENCHMARKS.md table: its section heading, where and when they were measured."""

    section: str  # the heading's start, as BENCHMARKS.md writes it
    source: str  # device, date and commit, as the section gives them
    values: dict[str, str]  # label -> the figure as written there


GPU_RATES = Recorded(
    section="## 1. Single GPU",
    source="NVIDIA H200, 2026-11-22, run D3 at commit 0b67c52; n = 32768, device-resident",
    values={"int32": "13.99", "int16": "27.01", "float32": "11.65",
            "int32 ceiling": "16.28", "int16 ceiling": "29.69", "float32 ceiling": "15.25"},
)

CPU_VS_SCIPY = Recorded(
    section="## 6. CPU Floyd-Warshall against scipy",
    source="2-core dev machine (Intel Xeon, AVX2), 2026-11-22, commit 8e9d2e1; n = 2000, dense, weights 1..100",
    values={"apsp int16": "0.102", "apsp float32": "0.158", "apsp int32": "0.164", "apsp float64": "0.302",
            "apsp int64": "0.376", "scipy float64": "4.08"},
)

ND_FW_GRID = Recorded(
    section="## 12. Sparse graphs",
    source="2-core dev machine, idle, 2026-11-25, commit 3b159bf; 100 x 100 grid (n = 10,000), int16",
    values={"apsp nd-fw": "0.24", "apsp dense FW": "3.70", "networkit APSP (2 threads)": "4.78"},
)

MULTI_GPU = Recorded(
    section="## 4. Several GPUs through MPI",
    source="2x NVIDIA H200 (one host), 2026-11-22, commit 9124e0f; n = 65536, int32",
    values={"1": "19.49", "2": "10.36"},
)

RECORDED = (GPU_RATES, CPU_VS_SCIPY, ND_FW_GRID, MULTI_GPU)


def _bars(ax, labels, seconds, unit):
    bars = ax.barh(labels, seconds, color="#4c72b0")
    ax.bar_label(bars, [f"{s:g} {unit}" for s in seconds], padding=3)
    ax.invert_yaxis()
    ax.margins(x=0.25)


def _finish(fig, ax, title, source, path):
    ax.set_title(title, loc="left", fontsize=11)
    fig.text(0.01, 0.01, source, fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)


def draw(out: Path = OUT) -> list[Path]:
    """Write the page's PNGs into ``out``; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = []

    fig, ax = plt.subplots(figsize=(7, 3.2))
    dtypes = ["int32", "int16", "float32"]
    reached = [float(GPU_RATES.values[d]) for d in dtypes]
    ceiling = [float(GPU_RATES.values[f"{d} ceiling"]) for d in dtypes]
    y = range(len(dtypes))
    ax.barh([i + 0.2 for i in y], ceiling, height=0.4, color="#cccccc", label="the card's min-plus ceiling")
    bars = ax.barh([i - 0.2 for i in y], reached, height=0.4, color="#4c72b0", label="whole solve")
    ax.bar_label(bars, [f"{r:g} ({r / c:.0%})" for r, c in zip(reached, ceiling)], padding=3)
    ax.set_yticks(list(y), dtypes)
    ax.invert_yaxis()
    ax.set_xlabel("T updates/s (n³ / solve time)")
    ax.legend(loc="lower right", fontsize=8)
    ax.margins(x=0.2)
    written.append(out / "gpu_rates.png")
    _finish(fig, ax, "Blocked Floyd-Warshall on one GPU, n = 32768", GPU_RATES.source, written[-1])

    fig, ax = plt.subplots(figsize=(7, 3.2))
    labels = list(CPU_VS_SCIPY.values)
    _bars(ax, labels, [float(CPU_VS_SCIPY.values[k]) for k in labels], "s")
    ax.set_xlabel("seconds per solve")
    written.append(out / "cpu_vs_scipy.png")
    _finish(fig, ax, "CPU Floyd-Warshall against scipy's, n = 2000", CPU_VS_SCIPY.source, written[-1])

    fig, ax = plt.subplots(figsize=(7, 2.6))
    labels = list(ND_FW_GRID.values)
    _bars(ax, labels, [float(ND_FW_GRID.values[k]) for k in labels], "s")
    ax.set_xlabel("seconds for all 10⁸ distances")
    written.append(out / "ndfw_grid.png")
    _finish(fig, ax, "A sparse graph: nested-dissection FW on a 100 x 100 grid", ND_FW_GRID.source, written[-1])

    fig, ax = plt.subplots(figsize=(7, 2.4))
    labels = [f"{k} GPU" + ("s" if k != "1" else "") for k in MULTI_GPU.values]
    _bars(ax, labels, [float(v) for v in MULTI_GPU.values.values()], "s")
    ax.set_xlabel("seconds per solve")
    written.append(out / "multi_gpu.png")
    _finish(fig, ax, "Floyd-Warshall over MPI, n = 65536", MULTI_GPU.source, written[-1])
    plt.close("all")
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the PNGs (default: %(default)s)")
    for path in draw(parser.parse_args(argv).out):
        print(path)


if __name__ == "__main__":
    main()
