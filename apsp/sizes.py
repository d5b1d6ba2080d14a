"""Byte sizes: reading ``"8GB"``, printing ``3.00 GiB``, and what RAM and disk have free.

Sizes accept ``parse_size`` strings: ``"8GB"`` (10**9 bytes), ``"8GiB"`` or ``"8G"``
(2**30 bytes), or a number of bytes.

Container and batch-job limits (`cgroup_memory_available`): Docker, Kubernetes and Slurm cap a
job's memory with a cgroup limit that ``/proc/meminfo`` does not show: a solve planned from
``MemAvailable`` alone would be killed. It reads the limit of this process's cgroup and of every
cgroup above it (v2 ``memory.max``, v1 ``memory.limit_in_bytes``), less what the tightest one
already uses (page cache the kernel can drop, ``inactive_file``, not counted).
"""
from __future__ import annotations

import contextlib
import functools
import contextvars
import logging
import os
import re
import shutil
from pathlib import Path

import numpy as np

__all__ = ["parse_size", "format_size", "host_available", "disk_available", "matrix_bytes",
           "memory_limit", "memory_allowed", "check_memory", "working_set", "count_held", "held_bytes"]

#: the RAM budget the caller gave (``host_memory=`` / ``--host-memory``) while a call runs; None: none given
_HOST_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("apsp_host_memory", default=None)
#: inside `working_set`: the bytes its earlier checked allocations hold (one mutable cell)
_HELD: contextvars.ContextVar[list | None] = contextvars.ContextVar("apsp_held", default=None)

_UNITS = {"": 1, "b": 1,
          "kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9, "tb": 10 ** 12,
          "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30, "tib": 2 ** 40,
          "k": 2 ** 10, "m": 2 ** 20, "g": 2 ** 30, "t": 2 ** 40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(value) -> int:
    """Bytes from a size: an int, or text such as ``"8GB"``, ``"512MiB"``, ``"1.5G"``.

    ``KB MB GB TB`` are powers of 1000; ``KiB MiB GiB TiB`` and the bare
    ``K M G T`` are powers of 1024 (as in Slurm and Docker).

    Examples
    --------
    >>> parse_size("8GB"), parse_size("2GiB"), parse_size("1.5k"), parse_size(4096)
    (8000000000, 2147483648, 1536, 4096)
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"a memory size cannot be negative, got {value}")
        return int(value)
    if isinstance(value, float):
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"a memory size must be a non-negative number, got {value}")
        return int(value)
    match = _SIZE.match(str(value))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _UNITS:
        raise ValueError(f"cannot read the memory size {value!r}; write it like 8GB, 512MiB or 2G")
    return int(float(match.group(1)) * _UNITS[unit])


def format_size(nbytes: float) -> str:
    """Bytes in binary units, 3 significant figures.

    Examples
    --------
    >>> format_size(3 * 2**30), format_size(1536), format_size(10)
    ('3.00 GiB', '1.50 KiB', '10 B')
    """
    nbytes = float(nbytes)
    for unit, scale in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.3g} {unit}" if nbytes / scale >= 100 else f"{nbytes / scale:.2f} {unit}"
    return f"{int(nbytes)} B"


#: under an address-space limit (``ulimit -v``), what `host_available` keeps back for what the
#: process maps beside the arrays it counts (modules imported later, thread stacks, a
#: decompressor's chunks, an error's message): an eighth of the limit, at least 256 MiB
AS_RESERVE_SHARE = 8
AS_RESERVE_MIN = 256 << 20


def host_available() -> int:
    """RAM available for new allocations (Linux ``MemAvailable``, capped by a container's or
    batch job's cgroup limit and by what an address-space limit (``ulimit -v``) leaves this
    process, less a reserve for what it maps beside its arrays; free pages elsewhere)."""
    try:  # free pages: what is left where MemAvailable is not
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - exotic platforms
        free = 1 << 62
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                free = int(line.split()[1]) * 1024
                break
    cgroup = cgroup_memory_available()
    if cgroup is not None:
        free = min(free, cgroup)
    try:  # the address space RLIMIT_AS still allows (Linux)
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit != resource.RLIM_INFINITY:
            reserve = max(AS_RESERVE_MIN, limit // AS_RESERVE_SHARE)
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmSize:"):
                        free = min(free, max(0, limit - int(line.split()[1]) * 1024 - reserve))
    except (ImportError, OSError, ValueError):
        pass
    return free


@contextlib.contextmanager
def memory_limit(limit):
    """Within the block, `memory_allowed` answers ``limit`` (bytes or a `parse_size` string;
    None keeps what holds outside): readers and graph builds honour the user's budget."""
    token = _HOST_LIMIT.set(parse_size(limit) if limit is not None else _HOST_LIMIT.get())
    try:
        yield
    finally:
        _HOST_LIMIT.reset(token)


def memory_allowed() -> tuple[int, str]:
    """(bytes a new allocation may take, the words for it in a message): the budget given to
    `memory_limit`, else the RAM available (`host_available`).

    Examples
    --------
    >>> with memory_limit("1MB"):
    ...     memory_allowed()
    (1000000, 'allowed (host_memory)')
    """
    limit = _HOST_LIMIT.get()
    if limit is not None:
        return limit, "allowed (host_memory)"
    return host_available(), "available" + (" under the address-space limit (ulimit -v)" if _address_limited() else "")


def budget_set() -> bool:
    """Whether a `memory_limit` budget holds here (else `memory_allowed` reads the machine)."""
    return _HOST_LIMIT.get() is not None


def unread_below(need: int) -> bool:
    """Whether ``need`` bytes pass without reading the machine's memory: below `RAM_READ_FROM`,
    with no budget given and no address-space limit (under ``ulimit -v`` what is left of the
    address space may be less than that, and only the read says so)."""
    return need < RAM_READ_FROM and not budget_set() and not _address_limited()


def _address_limited() -> bool:
    """Whether an address-space limit (``ulimit -v``, RLIMIT_AS) is set on this process."""
    try:
        import resource

        return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError):  # pragma: no cover - platforms without it
        return False


@contextlib.contextmanager
def working_set():
    """Within the block, the allocations checked with ``check_memory(..., hold=True)`` (or
    announced by `count_held`) add up: a later check counts them as still held, against the budget
    given (``host_memory``). A file reader's buffer, its parsed rows and its vertex numbering
    live together until it returns, so their sum must fit, not each alone. Without a budget
    given, the RAM available already shows what is held."""
    token = _HELD.set([0])
    try:
        yield
    finally:
        _HELD.reset(token)


def held_bytes() -> int:
    """What the `working_set` holds, counted against a budget given (0 without one)."""
    cell = _HELD.get()
    return cell[0] if cell is not None and _HOST_LIMIT.get() is not None else 0


def count_held(nbytes: int) -> None:
    """Inside `working_set`: ``nbytes`` more are held from now on (already checked)."""
    held = _HELD.get()
    if held is not None:
        held[0] += int(nbytes)


#: below this many bytes needed, without a budget given, the machine's free RAM is not read (a few
#: hundred microseconds of /proc and cgroup files, more than a tiny graph's whole solve): the
#: interpreter with numpy, scipy and Numba loaded already holds several times this, so a machine
#: without it to spare stops the process whatever a check says. A budget given is always checked.
RAM_READ_FROM = 16 << 20


def check_memory(need: int, what: str, hold: bool = False) -> None:
    """Raise `apsp.errors.MemoryPlanError` before allocating ``need`` bytes for ``what`` when
    they exceed `memory_allowed` (beside what a `working_set` holds under a budget given); the
    message says what is needed and what is allowed. ``hold``: inside a `working_set`, the
    bytes stay counted as held after the check. Without a budget, needs below `RAM_READ_FROM`
    pass unread (`unread_below`)."""
    if unread_below(need):
        return
    limit, words = memory_allowed()
    held = held_bytes()
    if held + need > limit:
        from .errors import MemoryPlanError

        beside = f" beside {format_size(held)} it already holds" if held else ""
        raise MemoryPlanError(f"{what} needs {format_size(need)} of memory{beside}, but "
                              f"{format_size(limit)} is {words}")
    if hold:
        count_held(need)


def release_freed_memory() -> None:
    """Hand memory freed inside the C heap back to the system (glibc's ``malloc_trim``).

    glibc keeps freed blocks below its (self-raising) mmap threshold in the arena that held
    them; memory a search freed on one thread is not reused by the next phase's worker
    threads, which allocate in arenas of their own, so a solve's peak would count both.
    Called between a call's phases where a large temporary was freed. Nothing elsewhere.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim") if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to hand back this way
        return None


def disk_available(directory) -> int:
    try:
        return shutil.disk_usage(directory).free
    except OSError:
        return 0


def matrix_bytes(n: int, dtype) -> int:
    """Bytes of an n x n matrix of ``dtype``."""
    return int(n) * int(n) * np.dtype(dtype).itemsize


# ----------------------------------------------------------------------------- container limits
log = logging.getLogger(__name__)

#: v1 writes a page-rounded 2**63 - 1 for "no limit"; anything this large is no limit
_UNLIMITED = 1 << 60


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
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        return None
    best = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[1] == "":  # cgroup v2: one unified hierarchy
            base, names = root, ("memory.max", "memory.current", "inactive_file")
        elif "memory" in parts[1].split(","):
            base, names = os.path.join(root, "memory"), ("memory.limit_in_bytes", "memory.usage_in_bytes",
                                                         "total_inactive_file")
        else:
            continue
        rel = parts[2].strip("/")
        while True:  # the cgroup, then each ancestor
            directory = os.path.join(base, rel) if rel else base
            limit_usage = []
            for name in names[:2]:
                try:
                    text = Path(directory, name).read_text().strip()
                except OSError:
                    text = ""
                # "max" (v2), or v1's page-rounded 2**63 - 1: no limit
                limit_usage.append(int(text) if text.isdigit() and int(text) < _UNLIMITED else None)
            limit, usage = limit_usage
            cache = 0  # page cache the kernel can drop
            if limit is not None:
                with contextlib.suppress(OSError, ValueError), open(os.path.join(directory, "memory.stat")) as f:
                    for stat_line in f:
                        key, _, value = stat_line.partition(" ")
                        if key == names[2]:
                            cache = int(value)
                free = max(0, limit - max(0, (usage or 0) - cache))
                if best is None or free < best:
                    best = free
                    log.debug("cgroup memory limit %d bytes at %s, %d free", limit, directory, free)
            if not rel:
                break
            rel = os.path.dirname(rel)
    return best
