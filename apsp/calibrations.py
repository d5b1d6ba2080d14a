"""The cache of calibrated rates (``apsp bench calibrate``): read defensively, written under a lock.

The cache is one JSON file in the user's cache directory (`cache_path`) holding a table of rates per
machine. Every automatic solve reads it, so a damaged or hostile file must not break one: it is read
only when it is a regular file of at most `MAX_CACHE_BYTES` (a FIFO, a device such as a link to
``/dev/zero``, a huge file are not read), its JSON must parse (deep nesting included), and each table's
fields must have their types and lie within `RATE_SPREAD` of the shipped tables' range, which bounds
what a rate can make the plan do (a calibrated machine is never a thousand times faster at one thing
than the shipped ones). Whatever fails is left out, with one warning per file a process; the shipped
table then prices that machine. Saves from several processes (calibrating different machines into a
shared home directory) take a lock, read the tables there, add theirs and replace the file whole.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import warnings
from pathlib import Path
from typing import Callable

__all__ = ["cache_path", "read_tables", "save_table", "MAX_CACHE_BYTES", "RATE_SPREAD"]

#: the largest cache read: a table is about 2 KB, so this holds hundreds of machines
MAX_CACHE_BYTES = 1 << 20
#: a calibrated number lies within this factor of the shipped tables' smallest and largest
RATE_SPREAD = 100.0

_noticed: set[str] = set()


def cache_path() -> Path:
    """Where ``apsp bench calibrate`` keeps its tables: ``$XDG_CACHE_HOME/apsp/rates.json``
    (``~/.cache/apsp/rates.json`` without it)."""
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "apsp" / "rates.json"


def read_tables(path: Path, make: Callable[[dict], object], bounds: dict) -> dict:
    """The valid tables of the cache at ``path`` by machine key (empty without a cache).

    ``make`` builds a table from its JSON object; ``bounds`` maps each numeric field to its
    ``(low, high)`` range and each pair-list field to None (its factors within `RATE_SPREAD`)."""
    try:
        data = json.loads(_read_regular(path))
    except FileNotFoundError:
        return {}
    except RecursionError:
        return _notice(path, "its JSON nests too deeply")
    except (OSError, ValueError) as exc:
        return _notice(path, str(exc))
    if not isinstance(data, dict):
        return _notice(path, "not a JSON object of tables by machine")
    tables, problems = {}, []
    for key, value in data.items():
        try:
            _check_table(value, bounds)
            tables[key] = make(value)
        except (ValueError, TypeError) as exc:
            problems.append(f"table {key!r}: {exc}")
    if problems:
        _notice(path, "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else ""))
    return tables


def save_table(path: Path, key: str, table: dict, read: Callable[[Path], dict]) -> Path:
    """Store ``table`` (a JSON object) under ``key`` beside the tables ``read(path)`` finds there,
    under an exclusive lock on ``path`` + ``.lock``: concurrent saves lose none of each other's."""
    import fcntl

    from .io.atomic import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released as the file closes
        merged = {k: v.to_json() for k, v in read(path).items()}
        merged[key] = table
        with atomic_write(path) as f:
            f.write((json.dumps(merged, indent=1, sort_keys=True) + "\n").encode())
    return path


def _read_regular(path: Path) -> str:
    """The text of ``path`` if it is a regular file of at most `MAX_CACHE_BYTES` (ValueError
    otherwise); opened without blocking, so a FIFO is refused, not waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with contextlib.closing(os.fdopen(fd, "rb")) as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > MAX_CACHE_BYTES:
            raise ValueError(f"{info.st_size} bytes, more than a cache of rates holds ({MAX_CACHE_BYTES})")
        data = f.read(MAX_CACHE_BYTES + 1)
    if len(data) > MAX_CACHE_BYTES:
        raise ValueError(f"more than {MAX_CACHE_BYTES} bytes")
    return data.decode("utf-8")


def _check_table(value, bounds: dict) -> None:
    """Refuse a table with a field of the wrong type or outside its range (ValueError)."""
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    for name, item in value.items():
        if name not in bounds:
            continue  # text fields and unknown names: the table's own constructor judges them
        if bounds[name] is None:
            pairs = item if isinstance(item, list) else None
            if not pairs or not all(isinstance(p, list) and len(p) == 2 and _number(p[0]) and _number(p[1])
                                    and 1 / RATE_SPREAD <= p[1] <= RATE_SPREAD for p in pairs):
                raise ValueError(f"{name} must be [bytes, factor] pairs with factors within "
                                 f"1/{RATE_SPREAD:g}..{RATE_SPREAD:g}")
            continue
        lo, hi = bounds[name]
        if not _number(item) or not lo <= item <= hi:
            raise ValueError(f"{name} is {item!r}, not a number in {lo:.3g}..{hi:.3g}")


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _notice(path: Path, problem: str) -> dict:
    """Warn once a process that the cache at ``path`` is (partly) ignored; an empty table set."""
    if str(path) not in _noticed:
        _noticed.add(str(path))
        warnings.warn(f"apsp: calibration cache {path}: {problem}; the shipped rates are used instead "
                      "(run 'apsp bench calibrate' to measure this machine again)", RuntimeWarning, stacklevel=3)
    return {}
