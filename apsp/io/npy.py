"""NumPy ``.npy``: a dense graph in, a distance matrix out.

A graph ``.npy`` holds a square numeric matrix read with scipy's dense
convention (0, inf and nan mean no edge; see `apsp.api.as_graph`). It is read
into memory (checked against the memory available first), not memory-mapped,
so a file truncated meanwhile is an error rather than SIGBUS. Distances are written through
`numpy.lib.format.open_memmap` into the temporary file, a block of rows at a
time, so a matrix larger than RAM (itself a memory map) can be written.
Integer distances are written as float64 with ``inf`` where there is no path (scipy's convention), so
that ``np.load`` followed by arithmetic gives right numbers to a user who never read these docs: exact,
as every distance of an int8..int32 matrix, and of an int64 one below 2**53, is a float64. The integer
dtype is kept (no path: the dtype's maximum, `apsp.unreachable_value`) only when asked for
(``keep_dtype``, the CLI's ``--keep-dtype``), or, with a loud `UnsafeFileWarning`, when float64 would not
be exact or the disk has no room for the wider file (8 bytes a distance instead of 1 to 4).
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError
from ..sizes import check_memory
from ._file_bytes import is_gzip, load_bytes
from ._formatter import CHUNK_BYTES
from .atomic import atomic_write

__all__ = ["read_graph", "write_distances"]


def _header(path, f):
    """(shape, fortran_order, dtype, data offset) of a .npy stream, or GraphFormatError.

    numpy's header parser raises many kinds of exceptions on damaged files
    (ValueError, SyntaxError, tokenize errors, UnicodeError, ...): all of them
    mean "not a readable .npy".
    """
    try:
        if f.read(2) == b"PK":
            raise GraphFormatError(path, None, "expected one array (.npy), not an archive (.npz)")
        f.seek(0)
        version = np.lib.format.read_magic(f)
        readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
        if version not in readers:
            raise ValueError(f"format version {version} is not supported")
        shape, fortran, dtype = readers[version](f)
    except GraphFormatError:
        raise
    except Exception as exc:  # noqa: BLE001 - see docstring
        raise GraphFormatError(path, None, f"not a readable .npy array ({type(exc).__name__}: {exc})") from exc
    return shape, fortran, np.dtype(dtype), f.tell()


def read_graph(path) -> np.ndarray:
    """Read a square numeric matrix into memory (the memory available checked first).

    The header is checked before any data is touched: a damaged file or one
    whose shape promises more data than it holds is a `GraphFormatError`,
    never a huge allocation.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.npy")
    >>> np.save(p, np.array([[0, 3], [0, 0]]))
    >>> read_graph(p).tolist()
    [[0, 3], [0, 0]]
    """
    path = Path(path)
    data = load_bytes(path).tobytes() if is_gzip(path) else None  # GraphFormatError on a corrupt stream
    with open(path, "rb") if data is None else io.BytesIO(data) as f:
        shape, fortran, dtype, offset = _header(path, f)
    if dtype.hasobject or dtype.kind not in "biuf" or dtype.fields is not None:
        raise GraphFormatError(path, None, f"expected a numeric matrix, got dtype {dtype}")
    if any(isinstance(x, bool) for x in shape):  # numpy's header check lets True pass for 1
        raise GraphFormatError(path, None, f"not a readable .npy array: shape {shape} is not made of integers")
    if len(shape) != 2 or shape[0] != shape[1]:
        raise GraphFormatError(path, None, f"expected a square 2-D matrix, got shape {shape}")
    size = len(data) if data is not None else path.stat().st_size
    need = offset + shape[0] * shape[1] * dtype.itemsize
    if size < need:
        raise GraphFormatError(path, None, f"not a readable .npy array: shape {shape} of {dtype} needs "
                                           f"{need} bytes, the file has {size}")
    count = shape[0] * shape[1]
    if data is not None:
        flat = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    else:  # read, not memory-mapped: a map of a file truncated meanwhile would end in SIGBUS
        check_memory(count * dtype.itemsize, f"{path}: reading the matrix")
        flat = np.fromfile(path, dtype=dtype, count=count, offset=offset)
    if flat.size != count:
        raise GraphFormatError(path, None, f"the file changed while it was read (shape {shape} of "
                                           f"{dtype}, {flat.size} entries found)")
    return flat.reshape(shape, order="F" if fortran else "C")


class UnsafeFileWarning(UserWarning):
    """A ``.npy`` distance file keeps integers, "no path" being the dtype's maximum."""


def write_distances(path, dist, first_row: int | None = None, keep_dtype: bool = False) -> None:
    """Write a distance matrix as ``.npy`` (``.npy.gz`` compressed), whole or not at all.

    With ``first_row`` set, ``dist`` is a block of rows of a larger matrix. Integers are written as
    float64 with ``inf`` unless ``keep_dtype`` (see the module docstring).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "d.npy")
    >>> write_distances(p, np.array([[0, 7], [np.inf, 0]]))
    >>> np.load(p).tolist()
    [[0.0, 7.0], [inf, 0.0]]
    >>> write_distances(p, np.array([[0, 7], [32767, 0]], dtype=np.int16))
    >>> np.load(p).tolist()
    [[0.0, 7.0], [inf, 0.0]]
    """
    d = np.asarray(dist)
    if d.dtype.kind in "iu" and not keep_dtype:
        why = _float64_refused(path, d)
        if why is None:
            return _write_rows(path, d, np.dtype(np.float64))
        import warnings

        no_path = np.iinfo(d.dtype).max
        warnings.warn(f"{path}: distances kept as {d.dtype.name}, not float64 with inf ({why}): 'no path' is "
                      f"{no_path}, which np.load returns as a number; mask it (d == {no_path}, or "
                      "apsp.unreachable_value) before any arithmetic", UnsafeFileWarning, stacklevel=3)
    _write_rows(path, d, d.dtype)


def _float64_refused(path, d: np.ndarray) -> str | None:
    """Why ``d`` cannot be written as float64 (None: it can): a distance float64 does not hold
    exactly, or a disk without room for the wider file."""
    from ..sizes import disk_available, format_size

    no_path = np.iinfo(d.dtype).max
    if d.dtype.itemsize == 8 and d.size:
        step = max(1, CHUNK_BYTES // max(1, d.shape[1] * d.itemsize))
        for start in range(0, d.shape[0], step):
            block = d[start:start + step]
            if np.any((np.abs(block) > 2**53) & (block != no_path)):
                return "a distance beyond 2**53 has no exact float64"
    target = Path(path)
    if str(path) != "-" and (not target.exists() or target.is_file()):
        need = d.size * 8
        free = disk_available(target.resolve().parent)
        if need > free:
            return f"the wider file needs {format_size(need)}, the disk has {format_size(free)}"
    return None


def _write_rows(path, d: np.ndarray, dtype: np.dtype) -> None:
    """The ``.npy`` of ``d`` in ``dtype`` (integers to floats: the dtype's maximum becomes ``inf``)."""
    # Plain writes, a block of rows at a time, never a memory map of the output: a write
    # to a full disk is then an OSError (ENOSPC), where a store into a map of a sparse
    # file would kill the process with SIGBUS and leave the temporary behind.
    step = max(1, CHUNK_BYTES // max(1, d.shape[1] * max(d.itemsize, dtype.itemsize)))
    no_path = np.iinfo(d.dtype).max if d.dtype.kind in "iu" and dtype.kind == "f" else None
    with atomic_write(path, gz=True) as f:
        f.write(npy_header(d.shape, dtype))
        for start in range(0, d.shape[0], step):
            block = d[start:start + step]
            if no_path is not None:
                wide = block.astype(dtype)
                wide[block == no_path] = np.inf
                block = wide
            f.write(np.ascontiguousarray(block).data)


def npy_header(shape, dtype) -> bytes:
    """The header ``numpy.save`` writes for a C-order array of ``shape`` and ``dtype``."""
    meta = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
            "shape": tuple(int(x) for x in shape)}
    buf = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(buf, meta)
    except ValueError:  # header too long for format 1.0
        buf = io.BytesIO()
        np.lib.format.write_array_header_2_0(buf, meta)
    return buf.getvalue()
