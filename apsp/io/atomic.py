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
non-regular file (a socket, a block device) is refused, never replaced
(`check_target`, which the command line also runs on every output before any work).

Inside `all_or_none`, writes of regular files keep their finished temporaries
until the block ends, then all are renamed over their targets; an exception
removes them all and leaves every target as it was (two outputs of one command
are both new or both old). A write outside one is a group of its own.

Temporary names carry the writer's process id (``.NAME.PID.RANDOM.tmp``), so a
later writer of the same target removes those whose process is gone (a writer
killed with SIGKILL cannot clean up after itself).
"""
from __future__ import annotations

import contextlib
import contextvars
import gzip
import io
import os
import stat
import sys
import tempfile
from operator import itemgetter
from pathlib import Path
from typing import BinaryIO, Iterator, cast

__all__ = ["atomic_path", "atomic_write", "all_or_none", "STDOUT", "check_target", "stdout_buffer",
           "remove_stale_temporaries"]

#: the output name that means standard output
STDOUT = "-"


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


def check_target(target) -> tuple[Path, Path, int] | None:
    """Refuse a target no writer could produce (before any work).

    Returns None for a stream, written straight through: ``-``, a character device or a
    FIFO (a symbolic link to one included). Else ``(path, directory, mode)``: the regular
    file a rename replaces (a symbolic link's final target, the link kept), its directory,
    and the permissions the new file gets (the old file's, else a plain ``open``'s).

    Raises `IsADirectoryError` (a directory, or a name ending in a separator),
    `FileNotFoundError` (no such directory), `PermissionError` (directory or file not
    writable), `OSError` (``-`` with standard output closed) or `ValueError` (a non-regular
    file other than a character device or FIFO).
    """
    if str(target) == STDOUT:
        stdout_buffer()
        return None
    if str(target).endswith(os.sep) or (os.altsep and str(target).endswith(os.altsep)):
        raise IsADirectoryError(f"cannot write {target}: a name ending in {os.sep!r} names a directory, "
                                "not a file; give a file name")
    path = Path(target)
    try:
        mode = os.stat(path).st_mode  # through a symbolic link
    except OSError:
        mode = None  # no such file (yet)
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        if not os.access(path, os.W_OK):
            raise PermissionError(f"cannot write {target}: permission denied")
        return None
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(f"cannot write {path}: it is a directory")
    if mode is not None and not stat.S_ISREG(mode):
        raise ValueError(f"cannot write {path}: it exists and is not a regular file, a character "
                         "device or a FIFO")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write {path}: directory {path.parent} does not exist")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write {path}: directory {path.parent} is not writable")
    if mode is not None and not os.access(path, os.W_OK):
        raise PermissionError(f"cannot write {path}: the file is not writable")
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        return path, path.parent, 0o666 & ~umask
    return path, path.parent, stat.S_IMODE(mode)


def remove_stale_temporaries(target) -> list[Path]:
    """Remove temporary files of earlier writers of ``target`` whose process is gone.

    Only names this module makes (``.NAME.PID.RANDOM.tmp...``) with a PID that no
    longer runs are touched; returns the paths removed.
    """
    target = Path(target)
    target = Path(os.path.realpath(target)) if target.is_symlink() else target
    parent = target.parent
    prefix = f".{target.name}."
    removed: list[Path] = []
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
        try:
            os.kill(int(fields[0]), 0)  # its writer still runs (this process included)
        except ProcessLookupError:
            with contextlib.suppress(FileNotFoundError):
                (parent / name).unlink()
                removed.append(parent / name)
        except PermissionError:  # someone else's process: alive
            pass
    return removed


#: the finished temporaries ``(tmp, target, directory)`` of the `all_or_none` block running, if any
_GROUP: contextvars.ContextVar[list | None] = contextvars.ContextVar("apsp_atomic_group", default=None)


@contextlib.contextmanager
def atomic_write(target, gz: bool = False) -> Iterator[BinaryIO]:
    """Open a binary file for writing that replaces ``target`` only on success.

    Parameters
    ----------
    target : str or os.PathLike
        The file to create or replace.
    gz : bool
        Compress with gzip when the name ends in ``.gz`` (the format writers' rule).

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
    where = check_target(target)
    with contextlib.ExitStack() as stack:
        if where is None:
            raw = stdout_buffer() if str(target) == STDOUT else stack.enter_context(open(target, "wb"))
        else:
            path, parent, mode = where
            if _GROUP.get() is None:  # alone: a group of one, renamed as this block ends
                stack.enter_context(all_or_none())
            remove_stale_temporaries(path)
            # keep the target's suffixes last: some writers (np.save) append theirs otherwise
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.",
                                       suffix=".tmp" + "".join(path.suffixes), dir=parent)
            os.close(fd)
            raw = stack.enter_context(open(tmp, "wb"))
        try:
            if gz and Path(target).suffix == ".gz":  # mtime=0: the same data give the same bytes
                with gzip.GzipFile(filename=Path(target).stem, mode="wb", fileobj=raw,
                                   compresslevel=6, mtime=0) as g:
                    yield cast(BinaryIO, g)  # a binary file object; typeshed's GzipFile is not a BinaryIO
            else:
                yield raw
            raw.flush()
            if where is not None:
                os.chmod(tmp, mode)  # by name: an `atomic_path` caller wrote it by name
                os.fsync(raw.fileno())
        except BaseException as exc:
            if where is None:
                raise
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError) and exc.errno is not None:  # e.g. a full disk: name the file
                raise OSError(exc.errno, f"cannot write {target}: {exc.strerror}") from exc
            raise
        if where is not None:
            group = _GROUP.get()
            assert group is not None  # entered above when none was open
            group.append((Path(tmp), path, parent))


@contextlib.contextmanager
def atomic_path(target) -> Iterator[Path]:
    """Yield a temporary path to write; it replaces ``target`` only on success.

    Use this when a library wants a path rather than a file object (for example
    ``numpy.lib.format.open_memmap``). The caller must have closed the file by
    the end of the ``with`` block; the temporary file is then fsynced and
    renamed over ``target`` (it is `atomic_write`'s, written by its name).

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
    if check_target(target) is None:
        raise ValueError(f"cannot write {target} through a temporary file: it is a stream "
                         "(standard output, a device or a FIFO); give a regular file")
    with atomic_write(target) as f:
        yield Path(f.name)


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
    renamed = 0
    try:
        try:
            yield
        finally:
            _GROUP.reset(token)
        for tmp, target, _ in pending:
            os.replace(tmp, target)
            renamed += 1
    except BaseException:
        for tmp, _, _ in pending[renamed:]:
            tmp.unlink(missing_ok=True)
        raise
    # makes the renames durable; not every platform opens a directory
    for directory in dict.fromkeys(map(itemgetter(2), pending)):  # each parent once, in order
        with contextlib.suppress(OSError):
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
