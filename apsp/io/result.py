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

import json
import zipfile
from types import SimpleNamespace

import numpy as np

from ..errors import GraphFormatError
from .atomic import atomic_write

__all__ = ["save_result", "read_result", "write_distances"]

FORMAT_NAME = "apsp-result"
FORMAT_VERSION = 1
_ARRAYS = ("distances", "predecessors", "successors", "labels", "sources")


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
        np.savez(f, apsp=np.array(json.dumps(meta, default=str)), **arrays)


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
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["apsp"]))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
                raise ValueError("its 'apsp' member does not describe an apsp result")
            if meta.get("version") != FORMAT_VERSION:
                raise ValueError(f"format version {meta.get('version')!r}; this apsp reads "
                                 f"version {FORMAT_VERSION}")
            arrays = {name: z[name] for name in _ARRAYS if f"{name}.npy" in sizes}
        d = arrays["distances"]
        if d.ndim != 2:
            raise ValueError(f"distances of shape {d.shape}, not a matrix")
        for name in ("predecessors", "successors"):
            if name in arrays and arrays[name].shape != d.shape:
                raise ValueError(f"{name} of shape {arrays[name].shape}, distances {d.shape}")
        return {**dict.fromkeys(_ARRAYS), **arrays, "dtype": d.dtype, "block_size": meta.get("block_size"),
                "method": meta.get("method", "unknown"), "backend": meta.get("backend", "unknown"),
                "timings": dict(meta.get("timings") or {}), "info": dict(meta.get("info") or {})}
    except (ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        raise GraphFormatError(path, None, f"not a readable apsp result file ({exc})") from None
