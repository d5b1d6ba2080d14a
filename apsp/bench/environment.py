"""What a benchmark ran on: device, library versions, git commit, date.

Nothing here imports torch: versions come from package metadata and the GPU
name from ``nvidia-smi`` (or from torch only when a GPU backend already loaded it).

>>> env = collect_environment()
>>> sorted(env)[:3]
['cpu', 'date', 'git']
"""
from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
import subprocess
import sys
from contextlib import suppress
from importlib import metadata
from pathlib import Path

#: the source tree of the apsp being measured
ROOT = str(Path(__file__).resolve().parents[2])
#: packages whose versions every results file records
VERSIONED = ("numpy", "numba", "scipy", "torch", "triton", "networkx", "mpi4py", "matplotlib")


def with_this_apsp(env: dict) -> dict:
    """``env`` for a child ``python -m apsp``: this checkout's apsp first on ``PYTHONPATH``, so the
    child runs the code being measured, whatever apsp is installed."""
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))}


def collect_environment() -> dict:
    """Device, versions, commit and date, as a JSON-ready dict."""
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "platform": platform.platform(),
        "cpu": cpu_info(),
        "gpu": gpu_info(),
        "versions": versions(),
        "git": git_info(),
        "threads_env": {k: os.environ[k] for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS")
                        if k in os.environ},
    }


def versions() -> dict:
    from .. import __version__

    out: dict[str, str | None] = {"python": platform.python_version(), "apsp": __version__}
    for name in VERSIONED:
        out[name] = None
        with suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    return out


def cpu_info() -> dict:
    model = proc_field("/proc/cpuinfo", "model name") or platform.processor() or platform.machine()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"model": model, "logical_cores": os.cpu_count(), "usable_cores": usable,
            "memory_bytes": proc_bytes("/proc/meminfo", "MemTotal")}


def proc_field(path: str, key: str) -> str | None:
    """The value of the first ``key: value`` line of a ``/proc`` file, or None when unknown."""
    with suppress(OSError):
        for line in Path(path).read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == key:
                return value.strip()
    return None


def proc_bytes(path: str, key: str) -> int | None:
    """A ``/proc`` field counted in kB (``MemAvailable`` of ``/proc/meminfo``, ``VmHWM`` of
    ``/proc/self/status``) in bytes, or None when unknown."""
    value = proc_field(path, key)
    return None if value is None else int(value.split()[0]) * 1024


def gpu_info() -> list[dict]:
    """One entry per visible NVIDIA GPU (name, memory, driver); empty without one."""
    smi = shutil.which("nvidia-smi")
    if smi:
        with suppress(OSError, subprocess.SubprocessError, ValueError):
            text = subprocess.run(
                [smi, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits"],
                capture_output=True, text=True, timeout=20, check=True).stdout
            rows = [[part.strip() for part in line.split(",")] for line in text.strip().splitlines()]
            return _only_visible([{"name": name, "memory_bytes": int(float(mem)) * 2**20, "driver": driver}
                                  for name, mem, driver in rows])
    torch = sys.modules.get("torch")  # only if a GPU backend already imported it
    if torch is not None and torch.cuda.is_available():
        return [{"name": torch.cuda.get_device_name(i),
                 "memory_bytes": torch.cuda.get_device_properties(i).total_memory, "driver": None}
                for i in range(torch.cuda.device_count())]
    return []


def _only_visible(gpus: list[dict]) -> list[dict]:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None or not all(p.strip().isdigit() for p in visible.split(",") if p.strip()):
        return gpus
    keep = [int(p) for p in visible.split(",") if p.strip()]
    return [gpus[i] for i in keep if i < len(gpus)]


def git_info() -> dict:
    """Commit of the apsp source tree in use (None outside a git checkout) and whether it is dirty.

    ``APSP_COMMIT`` overrides it, for copies of a tree whose ``.git`` is not that tree's (a
    working tree shipped to a benchmark machine)."""
    if os.environ.get("APSP_COMMIT"):
        return {"commit": os.environ["APSP_COMMIT"].strip(), "dirty": False}
    try:  # no git here: OSError
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def describe(env: dict) -> str:
    """One line naming device, date and commit, for table headers."""
    cpu = env.get("cpu") or {}
    gpu = ", ".join(g["name"] for g in env.get("gpu") or []) or "no GPU"
    git = env.get("git") or {}
    commit = (git.get("commit") or "unknown")[:10]
    if git.get("dirty"):
        commit += " (uncommitted changes)"
    return (f"{cpu.get('usable_cores', '?')}-core {cpu.get('model', 'CPU')}, {gpu}; "
            f"{(env.get('date') or '')[:10]}; commit {commit}")
