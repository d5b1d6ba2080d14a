"""The homework text format (CS542200 HW4, section 3).

Input::

    N M            1 <= N, 0 <= M
    i j w          M lines: an edge i -> j of weight w, 1-based, i != j
    ...

A later line for the same (i, j) replaces an earlier one; `apsp.graph.Graph`
applies that rule, the reader returns every line in file order. Weights are
any 64-bit integers (the homework's 0..100 is not enforced: negative weights
are a feature of apsp). Blank lines and trailing blanks (also ``\\r``) are
ignored; anything else out of place is a `GraphFormatError` naming the line.

Output: N lines of N numbers split by single spaces, ``INF`` where there is no
path, each line ending in a newline, exactly as the homework's Figure 6::

    0 55 121 60
    INF 0 66 5
    INF 1 0 6
    INF INF INF 0
"""
from __future__ import annotations

import numpy as np

from .. import exactness
from ..errors import GraphFormatError
from ..graph import EdgeList
from ..jit import thread_count
from . import _formatter
from . import _tokenizer as T
from ._file_bytes import load_bytes
from ._formatter import CHUNK_BYTES, check_edges, write_edge_file
from ._records import RecordSpec, scan_records
from .atomic import atomic_write

__all__ = ["read_graph", "write_graph", "write_distances", "format_rows"]

_HEADER = RecordSpec(names=("N", "M"), layout="a header line 'N M'", kinds=(T.COL_INT, T.COL_INT),
                     lo=(1, 0), hi=(T.INT64_MAX, T.INT64_MAX))

#: the widest text of one value of each dtype the text holds (a sign included; "INF" is 3);
#: floats print whole values below 2**49 or numpy's repr, at most 32 characters
_CHARS = {np.dtype(t): max(3, len(str(np.iinfo(t).min)), len(str(np.iinfo(t).max)))
          for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)}
_CHARS.update({np.dtype(t): 32 for t in (np.float16, np.float32, np.float64)})
_DTYPES = "signed integers, uint8..uint32 or floats"


def read_graph(path) -> EdgeList:
    """Read a homework graph file.

    Parameters
    ----------
    path : str or os.PathLike
        The file (gzip-compressed is recognised by its magic bytes).

    Returns
    -------
    EdgeList
        ``n = N`` and the M edges in file order, 0-based, int64 weights.

    Raises
    ------
    GraphFormatError
        For any malformed content, naming the 1-based line and the problem.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.txt")
    >>> _ = open(p, "w").write("3 2\\n1 2 5\\n2 3 7\\n")
    >>> e = read_graph(p)
    >>> e.n, e.src.tolist(), e.dst.tolist(), e.weight.tolist()
    (3, [0, 1], [1, 2], [5, 7])
    """
    buf = load_bytes(path)
    header = scan_records(path, buf, 0, _HEADER, 1)
    if header.rows == 0:
        raise GraphFormatError(path, 1, "empty file; expected a header line 'N M'")
    n, m = header.ints[:, 0].tolist()
    start = header.offset
    spec = RecordSpec(names=("i", "j", "w"), layout="an edge line 'i j w'", kinds=(T.COL_INT,) * 3,
                      lo=(1, 1, T.INT64_MIN), hi=(n, n, T.INT64_MAX), distinct=True,
                      self_loop_problem="the homework format has no self-loops (i != j)")
    # an edge line takes at least 6 bytes ("1 2 3\n"), the last one 5: a bound without counting lines
    edges = scan_records(path, buf, start, spec, m, byte_bound=(buf.shape[0] - start + 1) // 6, exact=(
        f"more edge lines than the header's M = {m}",
        lambda rows: f"file ends after {rows} edge line{'s' if rows != 1 else ''}; the header's M = {m}"))
    ids = edges.ints[:2]
    ids -= 1
    return EdgeList(n, ids[0], ids[1], edges.ints[2], source=str(path))


def write_graph(path, edges: EdgeList) -> None:
    """Write a graph as homework text (``N M`` then ``i j w`` lines, 1-based).

    Edges are written in their order, duplicates included (a later line wins
    in the format). Weights must be whole numbers.

    Examples
    --------
    >>> import tempfile, os
    >>> from apsp.graph import EdgeList
    >>> p = os.path.join(tempfile.mkdtemp(), "g.txt")
    >>> write_graph(p, EdgeList(3, [0, 1], [1, 2], [5, 7]))
    >>> print(open(p).read(), end="")
    3 2
    1 2 5
    2 3 7
    """
    check_edges(edges)
    if edges.m and (edges.src == edges.dst).any():
        k = int(np.flatnonzero(edges.src == edges.dst)[0])
        raise ValueError(f"the homework format has no self-loops; edge {k} is {edges.src[k]} -> "
                         f"{edges.dst[k]} (write .snap, .mtx or .gr instead)")
    w = edges.weight
    bad = (np.flatnonzero(~np.isfinite(w) | (w != np.floor(w)) | (np.abs(w) >= 2.0 ** 63)) if w.dtype.kind == "f"
           else np.empty(0, dtype=np.intp))
    if len(bad):
        raise ValueError(f"the homework format holds integer weights; edge {bad[0]} has weight "
                         f"{w[bad[0]].item()!r} (write .snap, .mtx or .gr for other weights)")
    write_edge_file(path, f"{edges.n} {edges.m}\n", edges.src, edges.dst, w.astype(np.int64, copy=False),
                    add=1)


#: most threads formatting text blocks at once (each holds one CHUNK_BYTES buffer)
WRITE_THREADS = 8


def format_rows(rows) -> bytes:
    """The homework text of some full rows of a distance matrix.

    Same bytes as `write_distances` writes for those rows: numbers split by one
    space, ``INF`` for unreachable (``inf`` for floats, the dtype's maximum for
    integers), a newline after each row. Whole float values print as integers,
    other floats in their shortest round-trip form.

    Parameters
    ----------
    rows : numpy.ndarray
        A 2-D block of rows (or one row, 1-D).

    Examples
    --------
    >>> import numpy as np
    >>> big = np.iinfo(np.int32).max
    >>> format_rows(np.array([[0, 55], [big, 0]], dtype=np.int32))
    b'0 55\\nINF 0\\n'
    """
    r = np.asarray(rows)
    r = np.ascontiguousarray(r[None, :] if r.ndim == 1 else r)
    if r.ndim != 2:
        raise ValueError(f"rows must be a 2-D array, got shape {r.shape}")
    if r.dtype not in _CHARS:
        raise ValueError(f"distances must be {_DTYPES}, got dtype {r.dtype}")
    out = np.empty(r.shape[0] * (r.shape[1] * (_CHARS[r.dtype] + 1) + 1) + 1, dtype=np.uint8)
    strs, lens = _formatter.float_strings(r) if r.dtype.kind == "f" else (None, None)
    unreachable = np.int64(0 if strs is not None else exactness.unreachable_value(r.dtype))
    return out[:_formatter.format_rows(r, unreachable, strs, lens, out)].tobytes()


def write_distances(path, dist, first_row: int | None = None, progress: bool | None = None) -> None:
    """Write a distance matrix as homework text (``INF`` = no path), whole or not at all.

    With ``first_row`` set, ``dist`` is a block of rows of a larger matrix
    (any number of rows); the text is the same lines.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "out")
    >>> inf = np.iinfo(np.int16).max
    >>> write_distances(p, np.array([[0, 3], [inf, 0]], dtype=np.int16))
    >>> open(p).read()
    '0 3\\nINF 0\\n'
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    from ..progress import progress_bar

    d = np.asarray(dist)
    if d.dtype not in _CHARS:
        raise ValueError(f"distances must be {_DTYPES}, got dtype {d.dtype}")
    floats = d.dtype.kind == "f"
    unreachable = np.int64(0 if floats else exactness.unreachable_value(d.dtype))
    width = d.shape[1] * (_CHARS[d.dtype] + 1) + 1
    step = max(1, CHUNK_BYTES // width)
    starts = range(0, d.shape[0], step)
    # blocks are formatted on threads (the kernel releases the GIL; float_strings, numpy's
    # repr, does not, so it runs here), written in order
    threads = max(1, min(len(starts), thread_count(), WRITE_THREADS))
    buffers = np.empty((threads, min(d.shape[0], step) * width + 1), dtype=np.uint8)
    # a bar only for outputs of many blocks (progress=None: and only on a terminal)
    with atomic_write(path, gz=True) as f, ThreadPoolExecutor(threads, "apsp-format") as pool, \
            progress_bar(len(starts), progress if len(starts) > 8 else False, desc="writing", unit="block") as bar:
        jobs: list[tuple[np.ndarray, Future[int]]] = []  # (buffer, its format_rows byte count)
        try:
            for i, start in enumerate(starts):
                if len(jobs) == threads:  # the oldest block's buffer is needed again: write it out
                    buf, job = jobs.pop(0)
                    f.write(buf[:job.result()].data)
                    bar.update()
                rows = np.ascontiguousarray(d[start:start + step])
                strs, lens = _formatter.float_strings(rows) if floats else (None, None)
                buf = buffers[i % threads]
                jobs.append((buf, pool.submit(_formatter.format_rows, rows, unreachable, strs, lens, buf)))
            for buf, job in jobs:
                f.write(buf[:job.result()].data)
                bar.update()
        finally:
            for _, job in jobs:  # on an error: no thread may still fill a buffer
                job.cancel() or job.exception()
