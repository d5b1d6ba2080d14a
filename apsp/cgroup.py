"""The memory a container or batch job lets this process use (Linux control groups).

Docker, Kubernetes and Slurm cap a job's memory with a cgroup limit that
``/proc/meminfo`` does not show: a solve planned from ``MemAvailable`` alone
would be killed. `cgroup_memory_available` reads the limit of this process's
cgroup and of every cgroup above it (v2 ``memory.max``, v1
``memory.limit_in_bytes``), less what the tightest one already uses (page
cache the kernel can drop, ``inactive_file``, not counted).

Examples
--------
>>> import os, tempfile
>>> root = tempfile.mkdtemp()
>>> os.makedirs(os.path.join(root, "job"))
>>> for name, text in [("job/memory.max", "1073741824"), ("job/memory.current", "268435456"),
...                    ("job/memory.stat", "anon 1\\ninactive_file 67108864\\n")]:
...     _ = open(os.path.join(root, name), "w").write(text)
>>> proc = os.path.join(root, "self-cgroup")
>>> _ = open(proc, "w").write("0::/job\\n")
>>> cgroup_memory_available(root, proc) == 2**30 - 2**28 + 2**26
True
"""
from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)

#: v1 writes a page-rounded 2**63 - 1 for "no limit"; anything this large is no limit
_UNLIMITED = 1 << 60


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if text == "max" or not text.lstrip("-").isdigit():
        return None
    value = int(text)
    return None if value >= _UNLIMITED or value < 0 else value


def _stat(path: str, key: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _cgroup_dirs(root: str, proc_cgroup: str) -> list[tuple[str, str]]:
    """(directory, version) of this process's memory cgroup and its ancestors, innermost first."""
    try:
        with open(proc_cgroup) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # cgroup v2: one unified hierarchy
            base, version = root, "v2"
        elif "memory" in controllers.split(","):
            base, version = os.path.join(root, "memory"), "v1"
        else:
            continue
        rel = path.strip("/")
        while True:
            found.append((os.path.join(base, rel) if rel else base, version))
            if not rel:
                break
            rel = os.path.dirname(rel)
    return found


def cgroup_memory_available(root: str = "/sys/fs/cgroup", proc_cgroup: str = "/proc/self/cgroup") -> int | None:
    """Bytes this process's cgroups still allow it to allocate, or None where no limit is set.

    Parameters
    ----------
    root : str
        Where the cgroup file system is mounted.
    proc_cgroup : str
        This process's cgroup membership (``/proc/self/cgroup``).

    Returns
    -------
    int or None
        The smallest ``limit - (usage - inactive_file)`` over the cgroup and its
        ancestors, never below 0; None when none of them has a memory limit.
    """
    best = None
    for directory, version in _cgroup_dirs(root, proc_cgroup):
        if version == "v2":
            limit = _read_int(os.path.join(directory, "memory.max"))
            usage = _read_int(os.path.join(directory, "memory.current"))
            cache = _stat(os.path.join(directory, "memory.stat"), "inactive_file")
        else:
            limit = _read_int(os.path.join(directory, "memory.limit_in_bytes"))
            usage = _read_int(os.path.join(directory, "memory.usage_in_bytes"))
            cache = _stat(os.path.join(directory, "memory.stat"), "total_inactive_file")
        if limit is None:
            continue
        free = max(0, limit - max(0, (usage or 0) - cache))
        if best is None or free < best:
            best = free
            log.debug("cgroup memory limit %d bytes at %s, %d free", limit, directory, free)
    return best
