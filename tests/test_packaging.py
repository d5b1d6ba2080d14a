"""The distributions: the sdist carries what the tests need, metadata passes twine's check."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

import apsp

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_written_once():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "apsp._version.__version__"}
    from apsp._version import __version__

    assert apsp.__version__ == __version__
    out = subprocess.run([sys.executable, "-m", "apsp", "--version"], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""}, check=True)
    assert out.stdout.strip() == f"apsp {__version__}"


def test_license_is_an_spdx_expression_with_its_file():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["license"] == "MIT"
    assert meta["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert meta["classifiers"] and meta["keywords"]
    assert not any(c.startswith("License ::") for c in meta["classifiers"])  # SPDX replaces them


def test_python_classifiers_match_requires_python_and_ci():
    """Every minor version from requires-python's floor to the newest tested one is named."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floor = int(meta["requires-python"].removeprefix(">=3."))
    named = sorted(int(c.rsplit(".", 1)[1]) for c in meta["classifiers"]
                   if c.startswith("Programming Language :: Python :: 3."))
    assert named == list(range(floor, 14)), named


def test_readme_links_work_on_a_package_index_page():
    """Relative links break on a package index page: links must be absolute."""
    import re

    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)]+)\)", text)
    assert all(re.match(r"https?://", t) for t in targets), targets


@pytest.mark.slow
def _checkout_copy(source: Path) -> tuple[list[str], Path]:
    """The checkout's files (tracked and new, not ignored) copied to ``source``, so that a build
    leaves no egg-info behind in the checkout; skips without a git checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout to list tracked files")
    tracked = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    return tracked, source


def test_sdist_carries_the_test_suite(tmp_path):
    """``python -m build --sdist`` makes an archive whose tests collect from the unpacked tree."""
    pytest.importorskip("build")
    tracked, source = _checkout_copy(tmp_path / "source")
    built = subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(source)],
                           capture_output=True, text=True, timeout=600)
    if built.returncode and "Could not find a version that satisfies" in built.stdout + built.stderr:
        pytest.skip("no package index for the isolated build environment")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (archive,) = tmp_path.glob("apsp-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (tree,) = (tmp_path / "unpacked").iterdir()
    needed = [p for p in tracked if p.split("/")[0] in ("apsp", "tests", "benchmarks")]
    missing = [p for p in needed + ["LICENSE", "README.md", "apsp/py.typed"] if not (tree / p).exists()]
    assert not missing, missing
    if importlib.util.find_spec("twine") is not None:
        check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(archive)],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                "tests"], cwd=tree, capture_output=True, text=True, timeout=600,
                               env={**os.environ, "PYTHONPATH": str(tree)})
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert "tests collected" in collected.stdout.splitlines()[-1]


def test_ci_runs_the_readme_test_command_then_the_numpy_scipy_floor():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    readme_line = next(line for line in readme.splitlines() if "python -m pytest" in line)
    install = readme_line.split("pip install", 1)[1].split("&&")[0].strip()  # -e ".[test,gpu,mpi]" ...
    command = readme_line.split("&&", 1)[1].strip()  # python -m pytest -q -n auto
    assert command.startswith("python -m pytest -q")
    ci_line = next(line for line in ci.splitlines() if "python -m pytest -q" in line and "-e" in line)
    assert f"pip install -q {install} && {command}" in ci_line and ci_line.rstrip().endswith(command)
    # the torch before it: the CPU build, from PyTorch's CPU index in the README, the local wheel in CI
    before = readme.split(readme_line, 1)[0].splitlines()[-1]
    assert before == "pip install torch --index-url https://download.pytorch.org/whl/cpu &&"
    assert 'pip install -q "torch==' in ci.split(ci_line, 1)[0]
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "numpy>=1.24" in deps and "scipy>=1.10" in deps  # the floors the second run installs
    assert '"$(floor numpy)" "$(floor scipy)"' in ci and ".venv-floor" in ci
    floor_script = ci.split("floor() { python3 - \"$1\" <<'PY'\n", 1)[1].split("PY\n", 1)[0]
    for name, pin in (("numpy", "numpy==1.24.*"), ("scipy", "scipy==1.10.*")):
        out = subprocess.run([sys.executable, "-", name], input=floor_script, cwd=ROOT, text=True,
                             capture_output=True, check=True)
        assert out.stdout.strip() == pin


USER_SCRIPT = """\
from __future__ import annotations

import numpy as np
import numpy.typing as npt

import apsp
from apsp import NegativeCycleError, floyd_warshall, shortest_path, shortest_paths


def hop_counts(edges: list[tuple[int, int]]) -> npt.NDArray[np.generic]:
    return apsp.shortest_paths(edges, unweighted=True, backend="cpu").distances


def main() -> None:
    r: apsp.Result = shortest_paths([(0, 1, 2), (1, 2, 3)], backend="cpu", return_successors=True)
    route: list[int] = r.path(0, 2)
    dist = floyd_warshall(np.array([[0.0, 1.0], [1.0, 0.0]]))
    dist2, pred = floyd_warshall([[0.0, 1.0], [1.0, 0.0]], return_predecessors=True)
    rows = shortest_path([[0.0, 1.0], [1.0, 0.0]], method="D", indices=0)
    near, _, starts = apsp.dijkstra([[0.0, 1.0], [1.0, 0.0]], indices=[0], return_predecessors=True,
                                    limit=5.0, min_only=True)
    stats: apsp.DistanceStats = apsp.distance_stats(apsp.EdgeList(2, [0], [1], [3]), direction="in")
    g: apsp.Graph = apsp.as_graph([(0, 1, 2)])
    edges: apsp.EdgeList = apsp.random_graph(10, seed=1)
    one: apsp.Route = apsp.shortest_path_between(g, 0, 1)
    back: list[int] = apsp.reconstruct_path(pred, 0, 1, kind="predecessors")
    limit = apsp.unreachable_value(np.dtype(np.int32))
    try:
        floyd_warshall([[0.0, -1.0], [-1.0, 0.0]], directed=False)
    except NegativeCycleError as exc:
        print(exc.vertices)
    except (apsp.DtypeError, apsp.GraphFormatError, apsp.MemoryPlanError, apsp.BackendUnavailableError):
        raise
    print(near.sum(), starts.tolist(), stats.closeness().sum(), repr(r))
    print(r.to_float().sum(), route, dist.shape, dist2.shape, rows.shape, g.n, edges.n, one.length, back,
          limit, hop_counts([(0, 1)]).shape, apsp.__version__, apsp.read_graph, apsp.write_distances)


main()
"""


def _fresh_venv(where: Path) -> tuple[Path, str]:
    """A virtual environment without pip whose site-packages lists this interpreter's (a .pth
    line: the dependencies, no download; an editable apsp there stays unseen, as the .pth files
    of a directory a .pth adds are not run). Returns its python and its site-packages."""
    import site

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "outer-site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return python, purelib


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    """The wheel built from this checkout, installed alone in a fresh virtual environment
    (`_fresh_venv`)."""
    import zipfile

    tmp = tmp_path_factory.mktemp("wheel")
    _, source = _checkout_copy(tmp / "source")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "-w", str(tmp), str(source)], capture_output=True, text=True, timeout=600)
    if built.returncode and "setuptools" in built.stdout + built.stderr:
        pytest.skip("this environment's setuptools cannot build the wheel without an index")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = tmp.glob("apsp-*.whl")
    python, purelib = _fresh_venv(tmp / "venv")
    with zipfile.ZipFile(wheel) as archive:  # a pure-Python wheel: installing it is unpacking it
        archive.extractall(purelib)
    (tmp / "user.py").write_text(USER_SCRIPT)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the wheel, not a checkout
    ran = subprocess.run([str(python), "user.py"], cwd=tmp, capture_output=True, text=True, timeout=600,
                         env=clean)
    assert ran.returncode == 0, ran.stderr[-3000:]
    found = subprocess.run([str(python), "-c", "import apsp; print(apsp.__file__)"], cwd=tmp,
                           capture_output=True, text=True, check=True, env=clean).stdout
    assert found.startswith(purelib), found
    return tmp, python


@pytest.mark.slow
def test_installed_wheel_passes_mypy_strict(wheel_venv):
    """A user's script over the public API, checked against the installed wheel: every export
    is explicit (``mypy --strict`` refuses implicit re-exports) and typed."""
    pytest.importorskip("mypy")
    tmp, python = wheel_venv
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                              str(python), "user.py"], cwd=tmp, capture_output=True, text=True, timeout=600)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]


def test_installed_wheel_passes_pyright_strict(wheel_venv):
    """The same script under pyright's strict mode (basedpyright: pyright with node bundled)."""
    checker = shutil.which("basedpyright") or os.environ.get("APSP_BASEDPYRIGHT")
    if checker is None:
        pytest.skip("basedpyright is not installed (pip install basedpyright)")
    tmp, python = wheel_venv
    (tmp / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    checked = subprocess.run([checker, "--pythonpath", str(python), "user.py"], cwd=tmp, capture_output=True,
                             text=True, timeout=600)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]


@pytest.mark.slow
def test_readme_editable_install_is_found_by_mypy(tmp_path):
    """README command 2's editable install (``editable_mode=compat``): mypy finds apsp and its types."""
    pytest.importorskip("mypy")
    readme = (ROOT / "README.md").read_text()
    line = next(line for line in readme.splitlines() if "python -m pytest" in line)
    settings = line.split("pip install -e", 1)[1].split("&&")[0].split()[1:]  # after the extras
    assert settings == ["--config-settings", "editable_mode=compat"], settings
    _, source = _checkout_copy(tmp_path / "source")
    python, _ = _fresh_venv(tmp_path / "venv")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                                "--no-build-isolation", "-e", str(source), *settings],
                               capture_output=True, text=True, timeout=600)
    if installed.returncode and "setuptools" in installed.stdout + installed.stderr:
        pytest.skip("this environment's setuptools cannot build without an index")
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    (tmp_path / "user.py").write_text(USER_SCRIPT)
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                              str(python), "user.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]


def test_ci_type_checks_the_package():
    """CI runs mypy (default mode) on the package in the test venv, after the README's test command,
    and mypy comes with the ``test`` extra."""
    ci = (ROOT / ".ci" / "run").read_text()
    test_venv = ci.split("python -m pytest -q -n auto\n", 1)[1].split("\ndeactivate", 1)[0]
    assert "python -m mypy apsp --ignore-missing-imports" in test_venv.splitlines()
    test_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert any(dep.startswith("mypy") for dep in test_extra)


@pytest.mark.slow
def test_package_type_checks():
    """mypy in its default mode finds no error in the package (what CI runs)."""
    pytest.importorskip("mypy")
    checked = subprocess.run([sys.executable, "-m", "mypy", "apsp", "--ignore-missing-imports"], cwd=ROOT,
                             capture_output=True, text=True, timeout=600)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
