"""A whole result in one file (``.npz``): distances, path matrices, labels, sources and facts.

The file is a NumPy ``.npz`` archive (uncompressed, so saving costs a copy and no
more), readable with ``numpy.load(path)`` alone:

==============  ============================================================
member          holds
==============  ============================================================
``apsp``        JSON text: ``format`` ("apsp-result"), ``version``, ``method``,
                ``backend``, ``block_size``, ``timings``, ``info``
``distances``   the distance matrix (its own dtype; unreachable pairs as saved)
``predecessors``, ``successors``, ``labels``, ``sources``: when the result has them
==============  ============================================================

Labels are saved as int64 or as fixed-width unicode, never as Python objects, so
loading needs no pickle. `read_result` (behind `apsp.load_result`) refuses a file without the ``apsp``
member. This module knows results only by their attributes, so it imports nothing above `apsp.io`.
"""
from __future__ import annotations

import io
import json
import math
import zipfile
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..errors import GraphFormatError
from .atomic import atomic_write, check_target

__all__ = ["save_result", "read_result", "write_distances"]

FORMAT_NAME = "apsp-result"
FORMAT_VERSION = 1
_ARRAYS = ("distances", "predecessors", "successors", "labels", "sources")
#: the largest ``apsp`` description member read (its JSON: method, timings, info)
MAX_META_BYTES = 16 << 20
#: the largest ``.npy`` header read (numpy's own default bound)
MAX_HEADER_BYTES = 10000


def json_ready(value):
    """``value`` with numpy scalars and arrays turned into Python numbers and lists, tuples
    into lists and keys into strings (what JSON holds).

    >>> json_ready({"grid": (2, 1), 3: np.int16(7), "rows": np.arange(2)})
    {'grid': [2, 1], '3': 7, 'rows': [0, 1]}
    """
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value.tolist() if hasattr(value, "tolist") else value


def save_result(path, result) -> None:
    """Write `apsp.result.Result` ``result`` to ``path`` (``.npz``), whole or not at all; of
    another object, the attributes it has (the others saved as unknown)."""
    if str(path).endswith(".gz"):
        raise ValueError(f"{path}: a result file is an .npz archive, not gzip-compressed; drop the .gz")
    meta = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "method": getattr(result, "method", "unknown"),
            "backend": getattr(result, "backend", "unknown"), "block_size": getattr(result, "block_size", None),
            "timings": json_ready(getattr(result, "timings", {})), "info": json_ready(getattr(result, "info", {}))}
    arrays = {name: getattr(result, name) for name in _ARRAYS if getattr(result, name, None) is not None}
    if "labels" in arrays and arrays["labels"].dtype.kind == "O":  # strings as Python objects: as text
        arrays["labels"] = np.asarray(arrays["labels"].tolist(), dtype=str)
    with atomic_write(path) as f:
        # standard output, a device (/dev/null) or a FIFO cannot seek back: zip writes it as a stream
        out: Any = f if check_target(path) is not None else _Stream(f)
        members = {"apsp": np.array(json.dumps(meta, default=str)), **arrays}
        with zipfile.ZipFile(out, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
            for name, value in members.items():  # what np.savez writes, on a stream too
                with z.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


class _Stream:
    """A file written front to back only: `zipfile` then puts each member's sizes after its data
    instead of seeking back (a device such as /dev/null accepts a seek, and then reports the
    position 0, which breaks the archive's offsets)."""

    def __init__(self, f):
        self._f, self._written = f, 0

    def write(self, data) -> int:
        self._f.write(data)
        self._written += len(data)
        return len(data)

    def tell(self) -> int:
        return self._written

    def seekable(self) -> bool:
        return False

    def seek(self, *args):
        raise io.UnsupportedOperation("a stream cannot seek")

    def flush(self) -> None:
        self._f.flush()


def write_distances(path, dist, first_row: int | None = None) -> None:
    """A result file holding a distance matrix alone (rows from ``first_row`` on when given)."""
    d = np.asarray(dist)
    rows = None if first_row is None else np.arange(first_row, first_row + d.shape[0], dtype=np.int64)
    save_result(path, SimpleNamespace(distances=d, sources=rows))


def read_result(path) -> dict:
    """The keyword arguments of `apsp.result.Result` from a result file, for `apsp.load_result`
    (which says what they hold and what it raises)."""
    from ..sizes import check_memory

    try:
        with zipfile.ZipFile(path) as z:
            sizes = {info.filename: info.file_size for info in z.infolist()}
    except (zipfile.BadZipFile, EOFError) as exc:
        raise GraphFormatError(path, None, f"not an apsp result file (not an .npz archive: {exc})") from None
    if "apsp.npy" not in sizes or "distances.npy" not in sizes:
        raise GraphFormatError(path, None, "not an apsp result file (an .npz without apsp's "
                                           "'apsp' and 'distances' members)")
    check_memory(sum(sizes.values()), f"{path}: loading the result")
    if sizes["apsp.npy"] > MAX_META_BYTES:
        raise GraphFormatError(path, None, f"its 'apsp' member holds {sizes['apsp.npy']} bytes; a "
                                           f"result's description takes at most {MAX_META_BYTES}")
    try:
        with zipfile.ZipFile(path) as z:
            for name in sizes:  # each array's header agrees with the bytes behind it, before any allocation
                _check_member(z, name, sizes[name])
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["apsp"]))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
                raise ValueError("its 'apsp' member does not describe an apsp result")
            if meta.get("version") != FORMAT_VERSION:
                raise ValueError(f"format version {meta.get('version')!r}; this apsp reads "
                                 f"version {FORMAT_VERSION}")
            arrays = {name: z[name] for name in _ARRAYS if f"{name}.npy" in sizes}
        _check_arrays(arrays)
        d = arrays["distances"]
        return {**dict.fromkeys(_ARRAYS), **arrays, "dtype": d.dtype, "block_size": meta.get("block_size"),
                "method": meta.get("method", "unknown"), "backend": meta.get("backend", "unknown"),
                "timings": dict(meta.get("timings") or {}), "info": dict(meta.get("info") or {})}
    except RecursionError:
        raise GraphFormatError(path, None, "its 'apsp' member nests too deeply to be a result's "
                                           "description") from None
    except (ValueError, KeyError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise GraphFormatError(path, None, f"not a readable apsp result file ({exc})") from None


def _check_member(z, name: str, size: int) -> None:
    """Refuse a member whose ``.npy`` header claims more (or fewer) bytes than it holds."""
    if not name.endswith(".npy") or name[:-4] not in ("apsp",) + _ARRAYS:
        raise ValueError(f"unexpected member {name!r}")
    with z.open(name) as f:
        version = np.lib.format.read_magic(f)
        header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                  else np.lib.format.read_array_header_2_0)
        shape, _, dtype = header(f, max_header_size=MAX_HEADER_BYTES)
        held = size - f.tell()
    if dtype.hasobject:
        raise ValueError(f"{name[:-4]} holds Python objects; a result file never does")
    claimed = math.prod(shape) * dtype.itemsize
    if claimed != held:
        raise ValueError(f"{name[:-4]} claims shape {shape} of {dtype} ({claimed} bytes), "
                         f"but the file holds {held} bytes of it")


def _check_arrays(arrays: dict) -> None:
    """Refuse arrays that do not describe one result: shapes, types and vertices that disagree."""
    from ..exactness import HOP_ONLY, SUPPORTED
    from ..graph import vertex_labels
    from ..paths import NO_VERTEX

    d = arrays["distances"]
    if d.ndim != 2:
        raise ValueError(f"distances of shape {d.shape}, not a matrix")
    if d.dtype.type not in SUPPORTED + HOP_ONLY:
        raise ValueError(f"distances of dtype {d.dtype}, which apsp never writes")
    k, n = d.shape
    for name in ("predecessors", "successors"):
        if name in arrays:
            p = arrays[name]
            if p.shape != d.shape:
                raise ValueError(f"{name} of shape {p.shape}, distances {d.shape}")
            if p.dtype.kind not in "iu" or (p.size and (p.max() >= n or p.min() < NO_VERTEX)):
                raise ValueError(f"{name} must be vertex numbers 0..{n - 1} or {NO_VERTEX}")
    sources = arrays.get("sources")
    if sources is None:
        if k != n:
            raise ValueError(f"distances of shape {d.shape} without sources: not square")
    elif (sources.ndim != 1 or sources.shape[0] != k or (sources.size and sources.dtype.kind not in "iu")
          or (sources.size and (sources.min() < 0 or sources.max() >= n))):
        raise ValueError(f"sources must be {k} vertex numbers in 0..{n - 1}, one per row of distances")
    if arrays.get("labels") is not None:
        if arrays["labels"].ndim != 1:
            raise ValueError("labels must be one per vertex")
        arrays["labels"] = vertex_labels(arrays["labels"], n)
