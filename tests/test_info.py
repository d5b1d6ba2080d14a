"""apsp.info.backend_report and the ``apsp info`` command."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from apsp import info
from apsp.plan import gpu_available

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["cpu", "gpu", "mpi", "networkx", "scipy", "nd-fw"]


def run_cli(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "apsp", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report():
    return info.backend_report()


def test_every_entry_has_the_same_shape(report):
    assert list(report) == NAMES
    for name, entry in report.items():
        assert isinstance(entry["available"], bool), name
        assert isinstance(entry["detail"], str) and entry["detail"], name
        if entry["available"]:
            assert entry["hint"] is None, name
        else:
            assert entry["hint"] and entry["hint"] in entry["detail"], name
    json.dumps(report)  # plain JSON types only


def test_cpu_facts(report):
    import numba

    cpu = report["cpu"]
    assert cpu["cores"] == os.cpu_count()
    assert cpu["numba"] == numba.__version__
    assert cpu["threads"] == numba.get_num_threads()
    assert cpu["available"] == (importlib.util.find_spec("apsp.cpu.blocked") is not None)
    assert f"numba {numba.__version__}" in cpu["detail"]


def test_gpu_follows_apsps_own_verdict(report):
    ok, _ = gpu_available(explicit=True)
    gpu = report["gpu"]
    assert gpu["available"] == ok
    if importlib.util.find_spec("torch") is not None:
        import torch

        # local version labels (+cu130) appear in one of the two but not always the other
        assert gpu["torch"].split("+")[0] == metadata.version("torch").split("+")[0]
        assert len(gpu["devices"]) == (torch.cuda.device_count() if torch.cuda.is_available() else 0)
    if not ok:
        assert "pip install" in gpu["hint"] or "torch" in gpu["hint"]


def test_mpi_is_detected_without_importing_mpi4py():
    code = ("import sys, apsp.info; r = apsp.info.mpi_report(); "
            "print('mpi4py' in sys.modules, r['mpi4py'] is not None)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    imported, found = out.stdout.split()
    assert imported == "False"
    assert found == str(importlib.util.find_spec("mpi4py") is not None)


def test_mpi_says_what_is_missing(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mpi4py" else real_find_spec(name, *a))
    mpi = info.mpi_report()
    assert not mpi["available"]
    assert "mpi4py is not installed" in mpi["detail"] and "no mpiexec" in mpi["detail"]
    assert "apsp[mpi]" in mpi["hint"] and "mpiexec" in mpi["hint"]
    assert mpi["mpi4py"] is None and mpi["mpiexec"] is None


def test_mpi_available_when_everything_is_there(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(shutil, "which", lambda name: f"/opt/mpi/bin/{name}")
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name in ("mpi4py", "apsp.distributed")
                        else real_find_spec(name, *a))
    monkeypatch.setattr(info, "_version", lambda dist: "9.9" if dist == "mpi4py" else None)
    mpi = info.mpi_report()
    assert mpi["available"] and mpi["hint"] is None
    assert mpi["detail"] == "mpi4py 9.9, launcher /opt/mpi/bin/mpiexec"


def test_networkx_registration_reflects_entry_points(report):
    registered = any(ep.name == "apsp" for ep in metadata.entry_points(group="networkx.backends"))
    nx = report["networkx"]
    assert nx["registered"] == registered == nx["available"]
    if not registered:
        assert "pip install ." in nx["hint"]


def test_networkx_missing(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "networkx" else real_find_spec(name, *a))
    entry = info.networkx_report()
    assert not entry["available"] and entry["hint"] == "pip install 'apsp[networkx]'"


def test_cli_info_text():
    out = run_cli("info")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["apsp", *NAMES]  # apsp itself first, with its version
    for line in lines:
        assert line.split()[1] in ("yes", "no")


def test_cli_info_json():
    out = run_cli("info", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert list(report) == ["apsp", *NAMES]
    assert report["scipy"]["available"] is True


def test_nd_fw_says_whether_pymetis_is_there(report, monkeypatch):
    entry = report["nd-fw"]
    assert entry["available"] == (importlib.util.find_spec("pymetis") is not None)
    assert "nd-fw" in entry["detail"]
    monkeypatch.setattr(info, "_has_module", lambda name: False)
    missing = info.ndfw_report()
    assert not missing["available"] and "pip install 'apsp[sparse]'" in missing["detail"]


def test_mpi_hint_matches_the_readme():
    readme = (ROOT / "README.md").read_text()
    assert "pip install mpich" in info.HINTS["mpiexec"] and "pip install mpich" in readme
    assert "apt-get" not in info.HINTS["mpiexec"]
