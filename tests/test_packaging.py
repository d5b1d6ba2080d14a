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
def test_sdist_carries_the_test_suite(tmp_path):
    """``python -m build --sdist`` makes an archive whose tests collect from the unpacked tree."""
    pytest.importorskip("build")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout to list tracked files")
    tracked = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    source = tmp_path / "source"  # a copy, so the build leaves no egg-info behind in the checkout
    for name in tracked:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
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
    install = readme_line.split("pip install", 1)[1].split("&&")[0].split()[-1]  # ".[test,gpu,mpi]"
    ci_line = next(line for line in ci.splitlines() if "python -m pytest -q" in line and "-e" in line)
    assert f"-e {install}" in ci_line and ci_line.rstrip().endswith("python -m pytest -q")
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "numpy>=1.24" in deps and "scipy>=1.10" in deps  # the floors the second run installs
    assert '"$(floor numpy)" "$(floor scipy)"' in ci and ".venv-floor" in ci
    floor_script = ci.split("floor() { python3 - \"$1\" <<'PY'\n", 1)[1].split("PY\n", 1)[0]
    for name, pin in (("numpy", "numpy==1.24.*"), ("scipy", "scipy==1.10.*")):
        out = subprocess.run([sys.executable, "-", name], input=floor_script, cwd=ROOT, text=True,
                             capture_output=True, check=True)
        assert out.stdout.strip() == pin
