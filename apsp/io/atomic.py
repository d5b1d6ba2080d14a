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

Inside `all_or_none`, writes of regular files keep their finished temporaries
until the block ends, then all are renamed over their targets; an exception
removes them all and leaves every target as it was (two outputs of one command
are both new or both old).

Temporary names carry the writer's process id (``.NAME.PID.RANDOM.tmp``), so a
later writer of the same target removes those whose process is gone (a writer
killed with SIGKILL cannot clean up after itself).
"""
from __future__ import annotations

import contextlib
import contextvars
import io
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterator

__all__ = ["atomic_path", "atomic_write", "all_or_none", "STDOUT", "is_stream", "check_target",
           "stdout_buffer"]

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


def stdout_buffer() -> BinaryIO:
    """Standard output's binary stream, or `OSError` when it is closed: no file
    descriptor 1 (Python then sets ``sys.stdout`` to None), or a closed stream."""
    out = sys.stdout
    closed = out is None or getattr(out, "buffer", None) is None or out.closed
    if not closed:
        try:
            os.fstat(out.fileno())
        except io.UnsupportedOperation:
            pass  # an in-memory stream (a test's capture): nothing to check
        except (OSError, ValueError):
            closed = True
    if closed:
        raise OSError("cannot write to standard output ('-'): it is closed")
    return out.buffer


def _names_a_directory(target) -> bool:
    """Whether the name ends in a path separator (``out/``): it can only be a directory."""
    text = os.fspath(target)
    return isinstance(text, str) and (text.endswith(os.sep) or bool(os.altsep) and text.endswith(os.altsep))


def _resolved(target: Path) -> Path:
    """The path a rename must replace: a symbolic link's final target, the link kept."""
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def check_target(target) -> Path:
    """Refuse a target no writer could produce (before any work); return its directory.

    Raises `IsADirectoryError` (a directory, or a name ending in a separator),
    `FileNotFoundError` (no such directory), `PermissionError` (directory or file not
    writable), `OSError` (``-`` with standard output closed) or `ValueError` (a non-regular
    file other than a character device or FIFO).
    """
    if str(target) == STDOUT:
        stdout_buffer()
        return Path(".")
    if is_stream(target):
        if not os.access(target, os.W_OK):
            raise PermissionError(f"cannot write {target}: permission denied")
        return Path(".")
    if _names_a_directory(target):
        raise IsADirectoryError(f"cannot write {target}: a name ending in {os.sep!r} names a directory, "
                                "not a file; give a file name")
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
    group = _GROUP.get()
    try:
        yield tmp
        os.chmod(tmp, _new_file_mode(target))
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        if group is not None:  # renamed with the others when the group ends
            group.append((tmp, target, parent))
            return
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(parent)


#: the finished temporaries ``(tmp, target, directory)`` of the `all_or_none` block running, if any
_GROUP: contextvars.ContextVar[list | None] = contextvars.ContextVar("apsp_atomic_group", default=None)


@contextlib.contextmanager
def all_or_none() -> Iterator[None]:
    """Replace the regular files written inside the block together at its end, or none of them.

    Every `atomic_path` / `atomic_write` of a regular file inside keeps its finished temporary
    until the block ends without an exception; then they are renamed over their targets in
    the order written. On an exception (a full disk while writing the second output) every
    temporary is removed and every target stays as it was. Streams (``-``, devices, FIFOs)
    cannot wait: they are written straight through, so write them last.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> try:
    ...     with all_or_none():
    ...         with atomic_write(os.path.join(d, "a")) as f:
    ...             _ = f.write(b"1")
    ...         raise OSError("disk full")
    ... except OSError:
    ...     pass
    >>> os.listdir(d)
    []
    """
    pending: list = []
    token = _GROUP.set(pending)
    try:
        yield
    except BaseException:
        _remove_temporaries(pending)
        raise
    finally:
        _GROUP.reset(token)
    for k, (tmp, target, _) in enumerate(pending):
        try:
            os.replace(tmp, target)
        except BaseException:
            _remove_temporaries(pending[k:])
            raise
    for directory in dict.fromkeys(parent for _, _, parent in pending):
        _fsync_dir(directory)


def _remove_temporaries(pending: list) -> None:
    for tmp, _, _ in pending:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


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
        out = stdout_buffer()
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
