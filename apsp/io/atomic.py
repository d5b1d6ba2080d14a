"""Write a file whole or not at all.

Every apsp writer goes through `atomic_path` or `atomic_write`: the data go to
a temporary file beside the target, which is flushed, fsynced and renamed over
the target only when the writer finished without an exception. On any
exception (``KeyboardInterrupt`` included) the temporary file is removed and
an existing target is left exactly as it was.

The temporary file lives in the target's directory so that the final
``os.replace`` is a rename on one file system, which POSIX makes atomic. A
symbolic link is followed: the file it points to is replaced, the link stays.

Renaming is for regular files only. ``-`` (standard output), character devices
(``/dev/null``, a terminal) and FIFOs are written straight through, as a stream
(`atomic_write` only: a memory map cannot stream); any other existing
non-regular file (a socket, a block device) is refused, never replaced.

Temporary names carry the writer's process id (``.NAME.PID.RANDOM.tmp``), so a
later writer of the same target removes those whose process is gone (a writer
killed with SIGKILL cannot clean up after itself).
"""
from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterator

__all__ = ["atomic_path", "atomic_write", "STDOUT", "is_stream", "check_target"]

#: the output name that means standard output
STDOUT = "-"


def is_stream(target) -> bool:
    """Whether ``target`` is written straight through: ``-``, a character device or a FIFO
    (a symbolic link to one included)."""
    if str(target) == STDOUT:
        return True
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _resolved(target: Path) -> Path:
    """The path a rename must replace: a symbolic link's final target, the link kept."""
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def check_target(target) -> Path:
    """Refuse a target no writer could produce (before any work); return its directory.

    Raises `IsADirectoryError`, `FileNotFoundError` (no such directory), `PermissionError`
    (directory or file not writable) or `ValueError` (a non-regular file other than a
    character device or FIFO).
    """
    if is_stream(target):
        if str(target) != STDOUT and not os.access(target, os.W_OK):
            raise PermissionError(f"cannot write {target}: permission denied")
        return Path(".")
    target = _resolved(Path(target))
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise IsADirectoryError(f"cannot write {target}: it is a directory")
    if target.exists() and not target.is_file():
        raise ValueError(f"cannot write {target}: it exists and is not a regular file, a character "
                         "device or a FIFO")
    if not parent.is_dir():
        raise FileNotFoundError(f"cannot write {target}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write {target}: directory {parent} is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise PermissionError(f"cannot write {target}: the file is not writable")
    return parent


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def remove_stale_temporaries(target) -> list[Path]:
    """Remove temporary files of earlier writers of ``target`` whose process is gone.

    Only names this module makes (``.NAME.PID.RANDOM.tmp...``) with a PID that no
    longer runs are touched; returns the paths removed.
    """
    target = _resolved(Path(target))
    parent = target.parent if str(target.parent) else Path(".")
    prefix = f".{target.name}."
    removed = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(prefix):
            continue
        fields = name[len(prefix):].split(".")
        if len(fields) < 3 or not fields[0].isdigit() or fields[2] != "tmp":
            continue
        pid = int(fields[0])
        if pid == os.getpid() or _pid_alive(pid):
            continue
        with contextlib.suppress(FileNotFoundError):
            (parent / name).unlink()
            removed.append(parent / name)
    return removed


def _new_file_mode(target: Path) -> int:
    """The permissions a plain ``open(target, 'w')`` would give (mkstemp's are 0600)."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; not every platform can open a directory.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_path(target) -> Iterator[Path]:
    """Yield a temporary path to write; it replaces ``target`` only on success.

    Use this when a library wants a path rather than a file object (for example
    ``numpy.lib.format.open_memmap``). The caller must have closed the file by
    the end of the ``with`` block; the temporary file is then fsynced and
    renamed over ``target``.

    Parameters
    ----------
    target : str or os.PathLike
        The file to create or replace.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "d.npy")
    >>> with atomic_path(out) as tmp:
    ...     np.save(tmp, np.zeros(3))
    >>> np.load(out).tolist()
    [0.0, 0.0, 0.0]
    """
    if is_stream(target):
        raise ValueError(f"cannot write {target} through a temporary file: it is a stream "
                         "(standard output, a device or a FIFO); give a regular file")
    parent = check_target(target)
    target = _resolved(Path(target))
    remove_stale_temporaries(target)
    # keep the target's suffixes last: some writers (np.save) append theirs otherwise
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.",
                                    suffix=".tmp" + "".join(target.suffixes), dir=parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, _new_file_mode(target))
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(parent)


@contextlib.contextmanager
def atomic_write(target) -> Iterator[BinaryIO]:
    """Open a binary file for writing that replaces ``target`` only on success.

    Parameters
    ----------
    target : str or os.PathLike
        The file to create or replace.

    Yields
    ------
    file
        A buffered binary file object on a temporary file in ``target``'s directory.

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(out) as f:
    ...     _ = f.write(b"0 1\\n")
    >>> open(out, "rb").read()
    b'0 1\\n'

    ``-``, a character device or a FIFO is written straight through (no temporary,
    nothing to roll back); standard output is flushed, not closed.
    """
    if str(target) == STDOUT:
        out = sys.stdout.buffer
        yield out
        out.flush()
        return
    if is_stream(target):
        with open(target, "wb") as f:
            yield f
        return
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as f:
            try:
                yield f
                f.flush()
            except OSError as exc:  # e.g. a full disk: name the file meant, not the temporary
                if exc.errno is None:
                    raise
                raise OSError(exc.errno, f"cannot write {target}: {exc.strerror}") from exc
