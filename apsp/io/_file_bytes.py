"""A file's bytes, read once into memory (`load_bytes`; gzip recognised by its magic bytes and
decompressed within the memory allowed)."""
from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError
from ..sizes import check_memory

GZIP_MAGIC = b"\x1f\x8b"
#: bytes decompressed per read() call (each read's bytes pass through a temporary of that size)
GUNZIP_CHUNK_BYTES = 1 << 20


def is_gzip(path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def load_bytes(path) -> np.ndarray:
    """The file's bytes as a uint8 array, read into memory (decompressed when gzip).

    gzip is recognised by its magic bytes, whatever the suffix, and decompressed a
    chunk at a time, checking that the memory available can hold what has come
    out so far (a small file that expands without end stops with
    `MemoryPlanError`, not by exhausting RAM). Plain files are read, not
    memory-mapped: a file truncated by another process while a map of it is
    scanned would kill this one with SIGBUS; a read sees the change and reports it.
    """
    path = Path(path)
    with open(path, "rb", buffering=0) as f:
        gzipped = f.read(2) == GZIP_MAGIC
        f.seek(0)
        if gzipped:
            return _gunzip(path, f)
        size = os.fstat(f.fileno()).st_size
        check_memory(size, f"{path}: reading the file", hold=True)
        buf = np.fromfile(f, dtype=np.uint8, count=size)
        if buf.shape[0] != size or f.read(1):
            raise GraphFormatError(path, None, f"the file changed while it was read ({size} bytes "
                                               f"when opened, {buf.shape[0]} read)")
    return buf


#: what reading one chunk of gzip data holds beside the output: Python 3.11's `gzip` one chunk
#: (1.17 MB traced for 1 MiB), 3.12's two (2.29 MB; the decompressed bytes and their copy)
GUNZIP_READ_BYTES = GUNZIP_CHUNK_BYTES * 9 // 4


def _gunzip(path: Path, f) -> np.ndarray:
    """Decompress file ``f`` into one buffer grown in place (``realloc``), never past the memory
    allowed: the output is refused as soon as it outgrows the budget, before it is all in memory."""
    from ..errors import MemoryPlanError
    from ..sizes import format_size, held_bytes, count_held, memory_allowed

    limit, words = memory_allowed()
    room = max(0, limit - held_bytes() - GUNZIP_READ_BYTES)  # beside what is held and a chunk's read
    out = np.empty(min(GUNZIP_CHUNK_BYTES, room + 1), dtype=np.uint8)
    total = 0
    try:
        with gzip.GzipFile(fileobj=f, mode="rb") as g:
            while True:
                if total == out.shape[0]:
                    if total > room:
                        del out  # the error's handling must not find the buffer still held
                        raise MemoryPlanError(
                            f"{path}: the gzip data expand to more than {format_size(room)} of the "
                            f"{format_size(limit)} of memory {words}; decompressing stopped there "
                            f"(host_memory= sets the budget)")
                    out.resize(min(2 * total, room + 1), refcheck=False)
                got = g.readinto(out.data[total:total + GUNZIP_CHUNK_BYTES])
                if not got:
                    break
                total += got
    except (OSError, EOFError, zlib.error) as exc:
        raise GraphFormatError(path, None, f"corrupt gzip data ({exc})") from exc
    out.resize(total, refcheck=False)
    count_held(total)
    return out

