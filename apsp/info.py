"""What ``apsp info`` reports: which backends can run here, and why any cannot.

Each entry of `backend_report` says whether the backend is usable
(``available``), a one-line ``detail`` (what was found, or why it is missing
and how to install it), the install ``hint`` alone (None when nothing is
missing), and facts worth scripting against (versions, thread counts, devices).

Nothing here imports mpi4py (only ``apsp/distributed`` may): MPI is detected
with ``importlib.util.find_spec`` and ``mpiexec`` on the PATH.

Examples
--------
>>> from apsp.info import backend_report
>>> report = backend_report()
>>> sorted(report)
['cpu', 'gpu', 'mpi', 'nd-fw', 'networkx', 'scipy']
>>> report["scipy"]["available"]
True
"""
from __future__ import annotations

import os
import shutil
from importlib import metadata
from typing import Any

from .errors import has_module as _has_module

HINTS = {
    "reinstall": "reinstall apsp: pip install --force-reinstall apsp",
    "gpu-device": "run on a machine with an NVIDIA GPU whose driver works (nvidia-smi lists it); "
                  "torch and triton are installed",
    "numba": "pip install numba (an apsp dependency)",
    "gpu": "pip install 'apsp[gpu]' on a machine with an NVIDIA GPU and its CUDA driver",
    "torch-cuda": "install a CUDA build of torch (see pytorch.org) on a machine with an NVIDIA GPU",
    "mpi4py": "pip install 'apsp[mpi]'",
    "mpiexec": "install an MPI library that provides mpiexec (e.g. pip install mpich, "
               "or Open MPI)",
    "pymetis": "pip install 'apsp[sparse]'",
    "networkx": "pip install 'apsp[networkx]'",
    "networkx-register": "install apsp as a package (pip install . or pip install apsp): "
                         "networkx finds backends through installed entry points only",
}


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _entry(available: bool, detail: str, hint_keys=(), **facts) -> dict:
    """One report entry; when unavailable, the hints for what is missing join the detail."""
    hint = None if available else "; ".join(HINTS[key] for key in hint_keys) or None
    return {"available": bool(available), "detail": f"{detail}. To fix: {hint}" if hint else detail,
            "hint": hint, **facts}


def cpu_report() -> dict:
    """Cores, Numba version and the threads Numba's parallel loops use."""
    cores = os.cpu_count() or 1
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    solver = _has_module("apsp.cpu.blocked")
    try:
        import numba
    except ImportError as exc:
        return _entry(False, f"{cores} cores, but numba cannot load: {exc}", ["numba"],
                      cores=cores, usable_cores=usable, numba=None, threads=None)
    threads = numba.get_num_threads()
    most = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # numba sets its config at import
    detail = (f"{usable} of {cores} cores usable, numba {numba.__version__}, {threads} threads "
              f"(NUMBA_NUM_THREADS={most} at most)")
    if not solver:
        detail += "; the blocked Floyd-Warshall module apsp.cpu.blocked is missing"
    return _entry(solver, detail, ["reinstall"], cores=cores, usable_cores=usable,
                  numba=numba.__version__, threads=threads)


def gpu_report() -> dict:
    """apsp's GPU verdict (`apsp.plan.gpu_available`), plus the devices torch lists."""
    from .plan import gpu_available

    ok, why = gpu_available(explicit=True)
    facts: dict[str, Any] = {"torch": _version("torch"), "triton": _version("triton"), "cuda": None,
             "devices": []}
    if facts["torch"] is not None:
        try:
            from .gpu.timing import list_devices  # torch is imported inside apsp.gpu only

            devices, torch_facts = list_devices()
        except Exception as exc:  # noqa: BLE001 - a broken torch install is worth reporting, not fatal
            why = f"{why}; torch cannot list devices: {exc}"
        else:
            facts.update(torch_facts, devices=devices)
    if ok:
        names = ", ".join(f"{d['index']}: {d['name']} ({d['memory_gib']} GiB)"
                          for d in facts["devices"]) or why
        return _entry(True, names, **facts)
    found = [f"{name} {facts[name]}" for name in ("torch", "triton") if facts[name]]
    detail = why.split("; install with")[0]  # the hint is given once, below
    if found:
        detail += f" (found {', '.join(found)})"
    return _entry(False, detail, [_gpu_hint(facts)], **facts)


def _gpu_hint(facts: dict) -> str:
    """What to do about a missing GPU backend: install only what is not installed."""
    if facts["torch"] is None or facts["triton"] is None:
        return "gpu"
    if facts["cuda"] is None and facts["torch"].endswith("+cpu"):
        return "torch-cuda"
    return "gpu-device"


def mpi_report() -> dict:
    """mpi4py installed (not imported) and mpiexec on the PATH."""
    mpi4py = _has_module("mpi4py")
    launcher = shutil.which("mpiexec") or shutil.which("mpirun")
    solver = _has_module("apsp.distributed")
    facts = {"mpi4py": _version("mpi4py") if mpi4py else None, "mpiexec": launcher}
    problems = [(what, hint) for ok, what, hint in (
        (mpi4py, "mpi4py is not installed", "mpi4py"),
        (launcher is not None, "no mpiexec or mpirun on the PATH", "mpiexec"),
        (solver, "the distributed solver apsp.distributed is missing", "reinstall")) if not ok]
    detail = "; ".join(w for w, _ in problems) or f"mpi4py {facts['mpi4py']}, launcher {launcher}"
    return _entry(not problems, detail, [h for _, h in problems], **facts)


def networkx_report() -> dict:
    """networkx installed, and the ``apsp`` backend registered through its entry point."""
    version = _version("networkx") if _has_module("networkx") else None
    if version is None:
        return _entry(False, "networkx is not installed", ["networkx"], networkx=None,
                      registered=False)
    registered = any(ep.name == "apsp" and ep.value.startswith("apsp.networkx_backend")
                     for ep in metadata.entry_points(group="networkx.backends"))
    detail = (f"networkx {version}; backend 'apsp' registered: nx.floyd_warshall_numpy(G, backend='apsp')"
              if registered else f"networkx {version} found, but the 'apsp' backend is not registered")
    return _entry(registered, detail, ["networkx-register"], networkx=version, registered=registered)


def ndfw_report() -> dict:
    """Nested-dissection Floyd-Warshall (``method="nd-fw"``, and ``auto``'s choice of it): pymetis."""
    version = _version("pymetis") if _has_module("pymetis") else None
    detail = ("method nd-fw (nested-dissection Floyd-Warshall for sparse graphs) needs pymetis, which is not "
              "installed" if version is None else
              f"pymetis {version}; method nd-fw, and auto picks it where it is faster")
    return _entry(version is not None, detail, ["pymetis"], pymetis=version)


def scipy_report() -> dict:
    """scipy (a dependency) and the drop-in replacements built on it."""
    version = _version("scipy")
    return _entry(version is not None,
                  f"scipy {version}; drop-ins apsp.floyd_warshall, apsp.shortest_path",
                  ["reinstall"], scipy=version)


def backend_report(timings: dict | None = None) -> dict:
    """Every backend's availability, in the order ``apsp info`` prints them.

    With ``timings`` (a dict), each backend's probe time in seconds is stored under its name.

    Returns
    -------
    dict
        ``{"cpu": {...}, "gpu": {...}, "mpi": {...}, "networkx": {...},
        "scipy": {...}, "nd-fw": {...}}``; each value has ``available`` (bool), ``detail``
        (str), ``hint`` (str or None) and backend-specific facts. Plain
        JSON types only.
    """
    import time

    probes = {"cpu": cpu_report, "gpu": gpu_report, "mpi": mpi_report, "networkx": networkx_report,
              "scipy": scipy_report, "nd-fw": ndfw_report}
    report = {}
    for name, probe in probes.items():
        t0 = time.perf_counter()
        report[name] = probe()
        if timings is not None:
            timings[name] = time.perf_counter() - t0
    return report
