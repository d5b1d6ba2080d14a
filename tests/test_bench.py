"""The benchmark suite: files, plots, tables, correctness checks, skips, interrupts."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

import apsp.gpu
from apsp import engine, exactness, plan
from apsp.bench import cli as bench_cli
from apsp.bench import model
from apsp.bench.results import SCHEMA, load
from apsp.bench.timing import predicted_time, repeats_within, summarize
from apsp.bench.workloads import Reference, float_rows, make_graph
from apsp.cpu.oracle import floyd_warshall_reference

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _run_cli(*args, timeout=240):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "apsp", "bench", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _check_png(path: Path, min_colored: int = 200) -> None:
    """A real PNG, not tiny, with coloured (data-line) pixels on it."""
    import matplotlib.image as mpimg

    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert len(data) > 10_000, f"{path} is suspiciously small ({len(data)} bytes)"
    img = mpimg.imread(path)[..., :3]
    # saturation: grey axes/text have r == g == b; plotted series are coloured
    colored = np.count_nonzero(img.max(axis=2) - img.min(axis=2) > 0.25)
    assert colored >= min_colored, f"{path} shows no plotted data ({colored} coloured pixels)"


def _table_rows(text: str) -> list[str]:
    """The rows of the first markdown table in ``text`` (with a GPU a second one follows)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("| "):
            rows.append(line)
        elif rows:
            break
    return rows


# -- the acceptance test: `apsp bench backends --quick` end to end ---------------------------------
@pytest.mark.slow
def test_backends_quick_writes_results_plots_table_and_report_redraws(tmp_path):
    out = tmp_path / "bench"
    sizes = ["16", "33"]
    proc = _run_cli("backends", "--quick", "--sizes", *sizes, "--repeat", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr

    # JSON: schema, environment, one record per (backend, n), ok ones checked and timed
    data = json.loads((out / "backends.json").read_text())
    for key in ("schema", "suite", "complete", "interrupted", "environment", "options", "records", "plots"):
        assert key in data, key
    assert data["schema"] == SCHEMA and data["suite"] == "backends"
    assert data["complete"] is True and data["interrupted"] is False
    env = data["environment"]
    assert env["date"] and env["cpu"]["model"] and env["cpu"]["usable_cores"] >= 1
    assert isinstance(env["gpu"], list)
    for pkg in ("python", "numpy", "numba", "scipy", "torch", "triton"):
        assert pkg in env["versions"]
    assert env["versions"]["numpy"] == np.__version__
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode == 0:  # a copy of the tree without usable git history records no commit
        assert env["git"]["commit"] == head.stdout.strip()
    records = data["records"]
    backends = data["options"]["backends"]
    assert len(records) == len(backends) * len(sizes)
    ok = [r for r in records if r["status"] == "ok"]
    assert {r["n"] for r in ok} == {16, 33}
    assert {"reference", "scipy-fw", "networkx-fw"} <= {r["backend"] for r in ok}
    for r in ok:
        assert r["match"] is True and r["checked_sources"] == r["n"]
        assert r["time_min_s"] <= r["time_median_s"] <= r["time_max_s"]
        assert r["repeat"] >= 1 and len(r["samples_s"]) == r["repeat"]
        assert r["timer"] in ("perf_counter", "cuda_event")
    for r in records:
        if r["status"] != "ok":
            assert r["reason"], r  # every skip says why

    # CSV: parses, one row per record, numbers where measured
    with open(out / "backends.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(records)
    assert {"backend", "n", "status", "reason", "time_median_s", "match"} <= set(rows[0])
    for row in rows:
        if row["status"] == "ok":
            assert float(row["time_median_s"]) > 0 and row["match"] == "True"

    # plots: listed in the JSON with at least one line, and really drawn
    plots = {p["file"]: p for p in data["plots"]}
    assert "backends_time.png" in plots
    assert plots["backends_time.png"]["lines"] >= 3
    for name in plots:
        _check_png(out / name)

    # markdown table on stdout: header, one row per n, the match column
    rows_md = _table_rows(proc.stdout)
    assert "All results match?" in rows_md[0]
    assert [r.split("|")[1].strip() for r in rows_md[2:]] == sizes
    assert all(r.rstrip(" |").endswith("True") for r in rows_md[2:])
    assert (out / "backends.md").read_text() == proc.stdout

    # report redraws the plots and the same table from the files
    for name in plots:
        (out / name).unlink()
    again = _run_cli("report", str(out))
    assert again.returncode == 0, again.stderr
    for name in plots:
        _check_png(out / name)
    assert _table_rows(again.stdout) == rows_md


def test_report_refuses_a_directory_without_results(tmp_path):
    (tmp_path / "other.json").write_text('{"hello": 1}')
    from apsp.cli import main

    assert main(["bench", "report", str(tmp_path), "-q"]) == 1


def test_unknown_backend_is_refused_before_running(tmp_path, capsys):
    from apsp.cli import main

    assert main(["bench", "backends", "--backends", "fw-tpu", "--out", str(tmp_path)]) == 1
    assert "unknown backend 'fw-tpu'" in capsys.readouterr().err
    assert not (tmp_path / "backends.json").exists()


# -- in-process runs with a stand-in Floyd-Warshall solver ------------------------------------------
def _oracle_solver(wrong: bool = False, interrupt_at: int | None = None):
    """A registry-style solver: the oracle, reporting a block size and stage times like fw-cpu."""
    def solve(graph, opts):
        if interrupt_at is not None and graph.n >= interrupt_at:
            raise KeyboardInterrupt
        t0 = time.perf_counter()
        d = floyd_warshall_reference(graph.fw_matrix(opts.dtype))
        if wrong and graph.n > 1:
            d[0, graph.n - 1] = max(d[0, graph.n - 1] - 1, 0)
        exactness.finalize_unreachable(d, False)
        return engine.SolveOutput(dist=d, block_size=opts.block_size or 32,
                                   timings={"compute": time.perf_counter() - t0})
    return solve


@pytest.fixture
def stand_in_fw(monkeypatch):
    """Register ``solve`` as the ("fw", "cpu") solver for this test only."""
    def install(solve):
        module = types.ModuleType("apsp_bench_test_fw")
        module.solve = solve
        monkeypatch.setitem(sys.modules, "apsp_bench_test_fw", module)
        monkeypatch.setitem(engine.REGISTRY, ("fw", "cpu"), "apsp_bench_test_fw:solve")
    return install


def _bench(*args) -> int:
    return bench_cli.main(list(args) + ["-q"])


def test_wrong_result_is_reported_and_fails_the_run(tmp_path, stand_in_fw, capsys):
    stand_in_fw(_oracle_solver(wrong=True))
    rc = _bench("backends", "--sizes", "24", "--backends", "fw-cpu", "scipy-fw", "--repeat", "1",
                "--out", str(tmp_path))
    assert rc == 1
    res = load(tmp_path / "backends.json")
    by = {r["backend"]: r for r in res.records}
    assert by["fw-cpu"]["match"] is False and by["fw-cpu"]["mismatches"] >= 1
    assert by["scipy-fw"]["match"] is True
    assert "False (fw-cpu)" in capsys.readouterr().out


def test_block_sweep_records_model_bytes_and_bandwidth(tmp_path, stand_in_fw):
    stand_in_fw(_oracle_solver())
    rc = _bench("block", "--sizes", "40", "--blocks", "8", "16", "64", "--backends", "fw-cpu",
                "--repeat", "2", "--out", str(tmp_path))
    assert rc == 0
    res = load(tmp_path / "block.json")
    ok = {r["block"]: r for r in res.ok()}
    assert set(ok) == {8, 16}
    for b, r in ok.items():
        itemsize = np.dtype(r["dtype"]).itemsize
        assert r["model_bytes"] == model.blocked_fw_bytes(40, b, itemsize)
        assert r["bandwidth_Bps"] == pytest.approx(r["model_bytes"] / r["time_median_s"])
        assert r["updates_per_s"] == pytest.approx(40**3 / r["time_median_s"])
        assert r["block_used"] == b and r["match"] is True
    skipped = [r for r in res.records if r["status"] == "skipped"]
    assert [r["block"] for r in skipped] == [64] and "exceeds n" in skipped[0]["reason"]
    assert {p["file"] for p in res.plots} == {"block_updates.png", "block_bandwidth.png"}
    for p in res.plots:
        assert p["lines"] == 1
        _check_png(tmp_path / p["file"], min_colored=50)


def test_breakdown_reports_solver_stages_and_file_io(tmp_path, stand_in_fw):
    stand_in_fw(_oracle_solver())
    rc = _bench("breakdown", "--sizes", "30", "--backends", "fw-cpu", "scipy-fw", "--repeat", "2",
                "--out", str(tmp_path))
    assert rc == 0
    res = load(tmp_path / "breakdown.json")
    (rec,) = res.ok()
    assert {"validate", "compute", "other"} <= set(rec["stages"]) and "solve" not in rec["stages"]
    # stages add up to the whole pipeline (within timer noise)
    assert sum(rec["stages"].values()) <= rec["time_max_s"] * 1.05 + 1e-3
    try:
        import apsp.io  # noqa: F401
        assert {"read", "write"} <= set(rec["stages"]) and rec["file_io"] is True
    except ImportError:
        assert rec["file_io"] is False
    (peer,) = [r for r in res.records if r["backend"] == "scipy-fw"]
    assert peer["status"] == "skipped" and "no stages" in peer["reason"]
    _check_png(tmp_path / "breakdown.png", min_colored=50)


def test_memory_suite_sees_the_distance_matrix(tmp_path, stand_in_fw):
    stand_in_fw(_oracle_solver())
    rc = _bench("memory", "--sizes", "300", "--backends", "fw-cpu", "--out", str(tmp_path))
    assert rc == 0
    (rec,) = load(tmp_path / "memory.json").ok()
    assert rec["matrix_bytes"] == 300 * 300 * np.dtype(rec["dtype"]).itemsize
    # the oracle holds a float64 copy besides the result: at least 2 matrices at the peak
    assert rec["host_traced_peak_bytes"] >= 2 * rec["matrix_bytes"]
    if "host_peak_bytes" in rec:
        assert rec["host_peak_bytes"] >= rec["matrix_bytes"]


def test_interrupt_keeps_the_results_gathered_so_far(tmp_path, stand_in_fw, capsys):
    stand_in_fw(_oracle_solver(interrupt_at=32))
    rc = _bench("backends", "--sizes", "16", "32", "--backends", "scipy-fw", "fw-cpu", "--repeat", "1",
                "--out", str(tmp_path))
    assert rc == 130
    res = load(tmp_path / "backends.json")
    assert res.interrupted and not res.complete
    assert {(r["backend"], r["n"]) for r in res.ok()} == {("scipy-fw", 16), ("fw-cpu", 16), ("scipy-fw", 32)}
    assert "Interrupted" in capsys.readouterr().out


def test_scaling_skips_cleanly_when_it_cannot_launch(tmp_path):
    rc = _bench("scaling", "--quick", "--mpiexec", "no-such-mpiexec-here", "--out", str(tmp_path))
    assert rc == 0
    res = load(tmp_path / "scaling.json")
    assert res.records and all(r["status"] == "skipped" and r["reason"] for r in res.records)
    assert res.plots == []


def test_ceiling_skips_cleanly_without_a_gpu(tmp_path):
    ok, _ = apsp.gpu.gpu_available()
    if ok:
        pytest.skip("a GPU is present; the ceiling is measured for real there")
    assert _bench("ceiling", "--out", str(tmp_path)) == 0
    res = load(tmp_path / "ceiling.json")
    assert [r["dtype"] for r in res.records] == ["int32", "int16", "float32"]
    assert all(r["status"] == "skipped" and "GPU" in r["reason"] for r in res.records)


def test_saved_ceiling_is_reused_for_the_same_gpu(tmp_path):
    from apsp.bench.environment import gpu_info
    from apsp.bench.results import Results
    from apsp.bench.suites import Ceilings

    saved = Results(suite="ceiling", environment={"gpu": gpu_info(), "date": "2026-01-02"}, options={})
    saved.add(backend="gpu", n=None, status="ok", dtype="int32", updates_per_s=1.25e13)
    saved.save(tmp_path)
    value, source = Ceilings(tmp_path).get("int32")
    assert value == 1.25e13 and "ceiling.json" in source


# -- pieces --------------------------------------------------------------------------------------------
def _tile_traffic(n: int, b: int) -> int:
    """Elements moved, counted tile by tile as the blocked algorithm visits them."""
    starts = list(range(0, n, b))
    size = [min(b, n - s) for s in starts]
    moved = 0
    for k, p in enumerate(size):
        moved += 2 * p * p  # phase 1
        for j, s in enumerate(size):
            if j != k:
                moved += 2 * (p * p + 2 * p * s)  # pivot row tile and pivot column tile
        for i, si in enumerate(size):
            for j, sj in enumerate(size):
                if i != k and j != k:
                    moved += si * p + p * sj + 2 * si * sj
    return moved


@pytest.mark.parametrize("n,b", [(1, 1), (6, 2), (7, 2), (64, 16), (65, 16), (100, 33), (5, 8)])
def test_blocked_fw_traffic_model_counts_every_tile(n, b):
    assert model.blocked_fw_elements(n, b) == _tile_traffic(n, b)
    assert model.blocked_fw_bytes(n, b, 4) == 4 * _tile_traffic(n, b)


def test_reference_check_finds_a_single_wrong_entry(random_seed):
    g = make_graph("weighted", 60, density=0.1, seed=random_seed)
    ref = Reference(g)
    d = floyd_warshall_reference(g.fw_matrix(np.int32))
    exactness.finalize_unreachable(d, False)
    assert ref.compare(float_rows(d, exactness.unreachable_value(d.dtype))).match
    i, j = np.argwhere(d != exactness.unreachable_value(d.dtype))[-1]
    d[i, j] += 1
    check = ref.compare(float_rows(d, exactness.unreachable_value(d.dtype)))
    assert not check.match and check.mismatches == 1


def test_reference_samples_sources_for_large_graphs():
    g = make_graph("unit", 300, density=0.02, seed=3)
    ref = Reference(g, full_up_to=100, sample=40, seed=3)
    assert len(ref.sources) == 40 and len(set(ref.sources.tolist())) == 40
    assert "40 of 300" in ref.name


def test_workloads_share_edges_and_differ_in_weights():
    w = make_graph("weighted", 200, density=0.05, seed=11).to_csr()
    u = make_graph("unit", 200, density=0.05, seed=11).to_csr()
    assert (w.indices == u.indices).all() and (w.indptr == u.indptr).all()
    assert set(np.unique(u.data)) == {1} and w.data.min() >= 1 and w.data.max() <= 100
    assert w.diagonal().sum() == 0
    assert 0.03 < w.nnz / (200 * 200) < 0.07


def test_summary_statistics_and_time_budget():
    s = summarize([4.0, 1.0, 3.0, 2.0, 100.0])
    assert (s.median, s.min, s.max, s.q1, s.q3) == (3.0, 1.0, 100.0, 2.0, 4.0)
    assert predicted_time(100, 1.0, 200) == pytest.approx(8.0)
    assert repeats_within(10.0, 3.0, 5) == 3
    assert repeats_within(10.0, 30.0, 5) == 1
    assert repeats_within(10.0, 0.1, 5) == 5
    from apsp.bench.suites import Budget

    budget = Budget(limit=5.0)
    budget.done("x", 100, 1.0)
    assert budget.reason("x", 150) is None  # 3.4 s predicted
    assert "exceeds --time-limit" in budget.reason("x", 200)  # 8 s predicted


def test_contestant_names():
    from apsp.bench.contestants import ALL, contestant

    assert [contestant(n).name for n in ALL] == list(ALL)
    c = contestant("fw-cpu:tiled@1")
    assert (c.method, c.where, c.variant, c.threads) == ("fw", "cpu", "tiled", 1)
    assert contestant("dijkstra-cpu").method == "dijkstra"
    for bad in ("fw-tpu", "fw-gpu@2", "fw-cpu@0", "scipy-magic", ""):
        with pytest.raises(ValueError):
            contestant(bad)


def test_scaling_efficiency_and_cli_output_parsing(tmp_path):
    from apsp.bench.results import Results
    from apsp.bench.suites import _efficiencies, _json_timings, _npy_rows

    ctx = types.SimpleNamespace(results=Results(suite="scaling", environment={}, options={}))
    for mode, p, n, t in (("strong", 1, 100, 8.0), ("strong", 4, 100, 2.5),
                          ("weak", 1, 100, 8.0), ("weak", 4, 200, 20.0), ("weak", 2, 141, 9.0)):
        ctx.results.add(backend="fw-cpu", n=n, status="ok", mode=mode, ranks=p, base_n=100, time_median_s=t)
    by = {(r["mode"], r["ranks"]): r for r in ctx.results.records}
    _efficiencies(ctx)
    assert by[("strong", 4)]["speedup"] == pytest.approx(3.2)
    assert by[("strong", 4)]["efficiency"] == pytest.approx(0.8)
    assert by[("weak", 4)]["efficiency"] == pytest.approx(8.0 * 2 / 20.0)  # ideal tP: t1 * sqrt(P)
    assert by[("weak", 2)]["efficiency"] == pytest.approx(1.41**3 * 8.0 / (2 * 9.0))

    printed = 'note\n{"n": 5, "timings_s": {"read": 0.5, "compute": 2, "comm": 1}}\n'
    assert _json_timings(printed) == {"read": 0.5, "compute": 2.0, "comm": 1.0}
    assert _json_timings("no json here\n") == {}

    d = np.array([[0, 3], [np.iinfo(np.int32).max, 0]], dtype=np.int32)
    np.save(tmp_path / "d.npy", d)
    rows = _npy_rows(tmp_path / "d.npy")(np.array([1]))
    assert rows.tolist() == [[np.inf, 0.0]]


@pytest.mark.gpu
def test_gpu_solver_path_block_sweep(tmp_path):
    """The GPU solver through the suite: on a GPU for real, else in Triton's interpreter."""
    pytest.importorskip("triton")
    import torch

    rc = _bench("block", "--sizes", "20", "--blocks", "16", "--backends", "fw-gpu", "fw-gpu:naive",
                "--repeat", "1", "--interpreter", "--out", str(tmp_path))
    assert rc == 0
    res = load(tmp_path / "block.json")
    (rec,) = res.ok()
    assert rec["backend"] == "fw-gpu" and rec["block_used"] == 16 and rec["match"] is True
    assert {"h2d", "compute", "d2h"} <= set(rec["stages"])
    assert rec["timer"] == ("cuda_event" if torch.cuda.is_available() else "perf_counter")
    (naive,) = [r for r in res.records if r["backend"] == "fw-gpu:naive"]
    assert naive["status"] == "skipped" and "not a blocked method" in naive["reason"]


def test_commit_named_by_environment_overrides_git(monkeypatch):
    """A tree copied to a benchmark machine with a stale .git names its commit through APSP_COMMIT."""
    from apsp.bench.environment import git_info

    monkeypatch.setenv("APSP_COMMIT", "0123abc")
    assert git_info() == {"commit": "0123abc", "dirty": False}
    monkeypatch.delenv("APSP_COMMIT")
    assert git_info()["commit"] != "0123abc"
