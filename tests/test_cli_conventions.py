"""The command line's manners: missing extras, its own words in errors, a stable JSON summary,
progress in notebooks, container memory limits, logged decisions."""
from __future__ import annotations

import json
import logging
import sys
import types

import numpy as np
import pytest

from apsp import errors, info, progress, sizes
from apsp.cli import main
from apsp.cli.parser import build_parser
from apsp.graph import EdgeList
from apsp.io import write_graph


@pytest.fixture
def homework(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("4 4\n1 2 3\n2 3 4\n3 4 5\n4 1 6\n")
    return path


@pytest.fixture
def negative(tmp_path):
    path = tmp_path / "neg.txt"
    path.write_text("3 3\n1 2 1\n2 3 -5\n3 2 1\n")
    return path


def one_error_line(err: str) -> str:
    # the one-time notice while Numba compiles (first run only) is not part of the error
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("apsp: compiling")]
    assert len(lines) == 1 and lines[0].startswith("apsp: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- missing optional dependencies: one line naming the extra, before any work ------------------

def test_distributed_without_mpi4py_names_the_extra(monkeypatch, homework, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # find_spec then reports it missing
    out = tmp_path / "d.txt"
    assert main(["solve", str(homework), "-o", str(out), "--distributed"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "--distributed needs mpi4py" in line and "pip install 'apsp[mpi]'" in line
    assert not out.exists()


def test_graphml_without_networkx_names_the_extra(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "networkx", None)
    graph = tmp_path / "g.graphml"
    graph.write_text("<graphml/>")
    assert main(["solve", str(graph), "-o", str(tmp_path / "d.npy")]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "reading GraphML needs networkx" in line and "pip install 'apsp[networkx]'" in line


def test_bench_without_matplotlib_stops_before_running(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "bench"
    started = __import__("time").perf_counter()
    assert main(["bench", "backends", "--quick", "--out", str(out)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "needs matplotlib" in line and "pip install 'apsp[plot]'" in line
    assert not out.exists() and __import__("time").perf_counter() - started < 10


def test_require_passes_what_is_installed():
    errors.require("numpy", "anything")
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert set(errors.EXTRAS.values()) <= set(pyproject["project"]["optional-dependencies"])


# -- apsp info suggests only what is missing ----------------------------------------------------

@pytest.mark.parametrize("facts,hint", [
    ({"torch": None, "triton": None, "cuda": None}, "gpu"),
    ({"torch": "2.13.0", "triton": None, "cuda": None}, "gpu"),
    ({"torch": "2.13.0+cpu", "triton": "3.9.0", "cuda": None}, "torch-cuda"),
    ({"torch": "2.13.0+cu128", "triton": "3.9.0", "cuda": "12.8"}, "gpu-device"),
])
def test_gpu_hint_never_suggests_what_is_installed(facts, hint):
    assert info._gpu_hint(facts) == hint
    if facts["torch"] and facts["triton"]:
        assert "pip install 'apsp[gpu]'" not in info.HINTS[hint]


def test_info_here_does_not_suggest_installed_extras():
    report = info.backend_report()
    gpu = report["gpu"]
    if not gpu["available"] and gpu["torch"] and gpu["triton"]:
        assert "apsp[gpu]" not in gpu["detail"]
    for name, extra in (("mpi", "mpi"), ("networkx", "networkx")):
        entry = report[name]
        if entry.get("mpi4py" if name == "mpi" else "networkx"):
            assert f"apsp[{extra}]" not in entry["detail"]


# -- errors in the command line's words ----------------------------------------------------------

def test_api_keywords_become_options(homework, tmp_path, capsys):
    assert main(["solve", str(homework), "-o", str(tmp_path / "d.txt"), "--method", "bfs"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "--unweighted" in line and "unweighted=True" not in line and "--method bfs" in line


def test_unknown_output_suffix_names_out_format(homework, tmp_path, capsys):
    out = tmp_path / "d.xyz"
    assert main(["solve", str(homework), "-o", str(out), "--backend", "cpu"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "--out-format" in line and "fmt=" not in line and not out.exists()


def test_memory_refusal_names_options(homework, tmp_path, capsys):
    assert main(["solve", str(homework), "-o", str(tmp_path / "d.txt"), "--backend", "cpu", "--method", "fw",
                 "--host-memory", "10B"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "--host-memory" in line and "host_memory" not in line and "out_of_core" not in line


@pytest.mark.parametrize("argv,words", [
    (["g10.txt"], "homework form is apsp IN_FILE OUT_FILE [BLOCK] (got 1 argument)"),
    (["a.txt", "b.txt", "32", "extra"], "(got 4 arguments)"),
    (["a.txt", "b.txt", "big"], "BLOCK must be a positive integer"),
    (["a.txt", "b.txt", "0"], "BLOCK must be a positive integer"),
])
def test_homework_form_with_wrong_arguments_explains_itself(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "invalid choice" not in err and "Traceback" not in err


def test_homework_form_to_standard_output_is_no_usage_error(homework, capsys):
    assert main([str(homework), "-", "--backend", "cpu"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "0 3 7 12"


@pytest.mark.parametrize("method,expected", [
    ("fw", "through vertices 2, 3 (1-based"),
    ("reference", "through vertices 2, 3 (1-based"),
    ("johnson", "3 -> 2 -> 3 (1-based"),
    ("auto", "(1-based, as in"),  # whichever method the estimates pick names them so
])
def test_negative_cycle_names_vertices_as_the_file_does(negative, tmp_path, capsys, method, expected):
    assert main(["solve", str(negative), "-o", str(tmp_path / "d.txt"), "--method", method,
                 "--backend", "cpu"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert expected in line, line
    assert line.lower().count("negative cycle") == 1, line


def test_negative_cycle_in_a_zero_based_file(tmp_path, capsys):
    graph = tmp_path / "neg.snap"
    graph.write_text("0 1 1\n1 2 -5\n2 1 1\n")
    assert main(["solve", str(graph), "-o", str(tmp_path / "d.npy"), "--method", "johnson"]) == 1
    assert "2 -> 1 -> 2 (0-based" in one_error_line(capsys.readouterr().err)


def test_gen_fractional_weights_into_homework_text_is_refused_clearly(tmp_path, capsys):
    out = tmp_path / "g.txt"
    assert main(["gen", "10", "--weights", "0.5", "2.5", "-o", str(out)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "--weights 0.5 2.5" in line and "integer" in line and "np.float" not in line
    assert not out.exists()
    assert main(["gen", "10", "--weights", "0.5", "2.5", "-o", str(tmp_path / "g.snap")]) == 0


def test_homework_writer_names_the_weight_without_a_numpy_repr(tmp_path):
    with pytest.raises(ValueError) as caught:
        write_graph(tmp_path / "g.txt", EdgeList(2, [0], [1], np.array([1.5])))
    assert "1.5" in str(caught.value) and "np.float" not in str(caught.value)


# -- the JSON summary -----------------------------------------------------------------------------

def test_json_summary_has_a_schema_version_and_the_same_keys_every_run(homework, tmp_path, capsys):
    shapes = []
    for extra in (["--method", "fw"], ["--method", "dijkstra"], ["--method", "bfs", "--unweighted"],
                  ["--method", "fw", "--out-of-core", "--host-memory", "64KB", "--scratch-dir", str(tmp_path)]):
        assert main(["solve", str(homework), "-o", str(tmp_path / "d.npy"), "--backend", "cpu", "--json",
                     *extra]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["schema_version"] == 1
        shapes.append(sorted(summary))
    assert all(shape == shapes[0] for shape in shapes), shapes
    assert shapes[0] == ["backend", "block_size", "dtype", "edges", "info", "method", "n", "ranks",
                         "schema_version", "timings_s"]
    assert summary["info"]["out_of_core"] is True


# -- progress bars in notebooks -----------------------------------------------------------------

def test_progress_bar_shows_in_a_notebook(monkeypatch):
    class ZMQInteractiveShell:  # the class name Jupyter's kernel gives its shell
        pass

    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: ZMQInteractiveShell()
    monkeypatch.setattr(sys, "stderr", open(__import__("os").devnull, "w"))  # not a terminal
    assert progress.progress_bar(10, None).shown is False
    monkeypatch.setitem(sys.modules, "IPython", fake)
    with progress.progress_bar(10, None) as bar:
        assert bar.shown is True
    assert progress.progress_bar(10, False).shown is False


# -- container and batch-job memory limits ------------------------------------------------------

def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v2_limit_of_the_tightest_ancestor(tmp_path):
    root = tmp_path / "cg"
    _write(root / "slurm" / "memory.max", str(8 << 30))
    _write(root / "slurm" / "memory.current", str(1 << 30))
    _write(root / "slurm" / "job_7" / "memory.max", str(2 << 30))
    _write(root / "slurm" / "job_7" / "memory.current", str(1 << 30))
    _write(root / "slurm" / "job_7" / "memory.stat", f"anon 5\ninactive_file {256 << 20}\n")
    _write(root / "slurm" / "job_7" / "step_0" / "memory.max", "max")
    _write(tmp_path / "proc", "0::/slurm/job_7/step_0\n")
    free = sizes.cgroup_memory_available(str(root), str(tmp_path / "proc"))
    assert free == (2 << 30) - (1 << 30) + (256 << 20)


def test_cgroup_v1_and_no_limit(tmp_path):
    root = tmp_path / "cg"
    _write(root / "memory" / "docker" / "abc" / "memory.limit_in_bytes", str(4 << 30))
    _write(root / "memory" / "docker" / "abc" / "memory.usage_in_bytes", str(3 << 30))
    _write(root / "memory" / "memory.limit_in_bytes", "9223372036854771712")  # v1's "no limit"
    _write(tmp_path / "proc", "5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n")
    assert sizes.cgroup_memory_available(str(root), str(tmp_path / "proc")) == 1 << 30
    _write(tmp_path / "proc2", "4:memory:/\n")
    assert sizes.cgroup_memory_available(str(root), str(tmp_path / "proc2")) is None
    assert sizes.cgroup_memory_available(str(root), str(tmp_path / "missing")) is None


def test_memory_planning_honours_the_cgroup_limit(monkeypatch):
    monkeypatch.setattr(sizes, "cgroup_memory_available", lambda: 12345)
    assert sizes.host_available() == 12345
    monkeypatch.setattr(sizes, "cgroup_memory_available", lambda: None)
    assert sizes.host_available() > 12345


# -- decisions are logged under the apsp logger -------------------------------------------------

def test_decisions_are_logged(caplog):
    import apsp

    with caplog.at_level(logging.INFO, logger="apsp"):
        apsp.shortest_paths([(0, 1, 2), (1, 2, 3)], method="fw", backend="cpu")
    records = [r for r in caplog.records if r.name.startswith("apsp")]
    assert records and "method fw" in records[-1].getMessage() and "backend cpu" in records[-1].getMessage()


def test_verbose_prints_the_logged_decisions(homework, tmp_path, capsys):
    assert main(["solve", str(homework), "-o", str(tmp_path / "d.txt"), "--backend", "cpu", "-v"]) == 0
    err = capsys.readouterr().err
    assert "apsp: n=4 edges=4: method" in err and "memory plan" in err
    _assert_verbose_lasted_one_command()
    # a later call in the same process without -v prints nothing of it
    assert main(["solve", str(homework), "-o", str(tmp_path / "d.txt"), "--backend", "cpu"]) == 0
    assert "memory plan" not in capsys.readouterr().err


def _assert_verbose_lasted_one_command():
    logger = logging.getLogger("apsp")
    assert not logger.handlers and logger.level == logging.NOTSET


def test_gen_and_info_say_what_they_chose_and_time_their_stages(tmp_path, capsys):
    out = tmp_path / "g.snap"
    assert main(["gen", "30", "--seed", "2", "--weights", "1", "9", "-o", str(out), "-v", "--profile"]) == 0
    err = capsys.readouterr().err
    _assert_verbose_lasted_one_command()
    drawn = sum(1 for line in out.read_text().splitlines() if line and not line.startswith("#"))
    assert f"{drawn} edges drawn" in err and "density=0.1 (default for uniform)" in err
    assert "weights 1..9 (integers)" in err and "as snap (from the suffix)" in err
    stages = [line.split()[0] for line in err.splitlines() if line[:1].isalpha() and not line.startswith("apsp")]
    assert stages[1:] == ["generate", "write", "total"]
    assert main(["info", "-v", "--profile"]) == 0
    err = capsys.readouterr().err
    _assert_verbose_lasted_one_command()
    assert "apsp: cpu: cores=" in err and "--backend auto picks" in err
    for name in info.backend_report():
        assert any(line.split()[:1] == [name] for line in err.splitlines()), name


def test_negative_cycle_in_a_dimacs_file_is_one_based(tmp_path, capsys):
    graph = tmp_path / "neg.gr"
    graph.write_text("p sp 3 3\na 1 2 1\na 2 3 -5\na 3 2 1\n")
    assert main(["solve", str(graph), "-o", str(tmp_path / "d.npy"), "--method", "johnson"]) == 1
    assert "3 -> 2 -> 3 (1-based" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("old,new,value", [("--block", "--block-size", "2"),
                                           ("--memory", "--host-memory", "1GB"),
                                           ("--scratch", "--scratch-dir", None)])
def test_former_option_spellings_still_work_with_a_deprecation_note(homework, tmp_path, capsys, old, new,
                                                                    value):
    value = str(tmp_path) if value is None else value
    argv = ["solve", str(homework), "-o", str(tmp_path / "d.txt"), "--backend", "cpu", "--method", "fw", "--json"]
    assert main([*argv, new, value]) == 0
    current = capsys.readouterr()
    assert "Deprecation" not in current.err
    assert main([*argv, old, value]) == 0
    former = capsys.readouterr()
    assert f"DeprecationWarning: {old} is now {new}" in former.err
    assert json.loads(former.out.splitlines()[-1])["block_size"] == json.loads(
        current.out.splitlines()[-1])["block_size"]
    assert old not in build_parser().format_help().replace(new, "")


def test_homework_blocking_factor_needs_no_renamed_option(homework, tmp_path, capsys):
    assert main([str(homework), str(tmp_path / "d.txt"), "2", "--backend", "cpu", "--method", "fw", "--json"]) == 0
    captured = capsys.readouterr()
    assert "Deprecation" not in captured.err and json.loads(captured.out)["block_size"] == 2


def test_unknown_output_suffix_lists_only_formats_that_can_hold_distances(homework, tmp_path, capsys):
    assert main(["solve", str(homework), "-o", str(tmp_path / "dist.xlsx")]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "--out-format" in line and "homework" in line and "npy" in line and "mtx" in line
    for input_only in ("metis", "graphml", "snap", "dimacs"):
        assert input_only not in line, line


def test_path_help_names_only_what_path_has(capsys):
    with pytest.raises(SystemExit):
        main(["path", "--help"])
    text = capsys.readouterr().out
    for solve_only in ("--gpu-memory", "--out-of-core", "--scratch-dir", "--checkpoint",
                       "--resume", "--out-format", "transfer", "write"):
        assert solve_only not in text, solve_only
    # the read, the graph and the search stay within --host-memory
    assert "search" in text and "--block-size" in text and "--host-memory" in text


def test_bench_help_names_every_suite(capsys):
    from apsp.bench.cli import build_parser

    usage = build_parser().format_usage()
    assert "startup" in usage and "report" in usage
