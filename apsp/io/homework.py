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
from . import _text as T
from ._common import (CHUNK_BYTES, RecordSpec, check_edges, load_bytes, open_output, scan_counted,
                      scan_records, usable_cores, write_edges)

__all__ = ["read_graph", "write_graph", "write_distances", "format_rows"]

_HEADER = RecordSpec(names=("N", "M"), layout="a header line 'N M'", kinds=(T.COL_INT, T.COL_INT),
                     lo=(1, 0), hi=(T.INT64_MAX, T.INT64_MAX))


def _edge_spec(n: int) -> RecordSpec:
    return RecordSpec(names=("i", "j", "w"), layout="an edge line 'i j w'",
                      kinds=(T.COL_INT, T.COL_INT, T.COL_INT), lo=(1, 1, T.INT64_MIN),
                      hi=(n, n, T.INT64_MAX), distinct=True,
                      self_loop_problem="the homework format has no self-loops (i != j)")


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
    header = scan_records(path, buf, 0, _HEADER, cap=1)
    if header.rows == 0:
        raise GraphFormatError(path, 1, "empty file; expected a header line 'N M'")
    n, m = (int(v) for v in header.ints[:, 0])
    start = header.offset if header.status == T.FULL else buf.shape[0]
    # an edge line takes at least 6 bytes ("1 2 3\n"), the last one 5: a bound without counting lines
    edges = scan_counted(path, buf, start, _edge_spec(n), m, f"more edge lines than the header's M = {m}",
                         lambda rows: f"file ends after {rows} edge line{'s' if rows != 1 else ''}; "
                                      f"the header's M = {m}", byte_bound=(buf.shape[0] - start + 1) // 6)
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
    weights = _whole_weights(edges.weight, "the homework format")
    with open_output(path) as f:
        f.write(f"{edges.n} {edges.m}\n".encode())
        write_edges(f, edges.src, edges.dst, weights, add=1)


def _whole_weights(w: np.ndarray, where: str) -> np.ndarray:
    if w.dtype.kind in "iub":
        return w.astype(np.int64, copy=False)
    bad = ~np.isfinite(w) | (w != np.floor(w)) | (np.abs(w) >= 2.0 ** 63)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{where} holds integer weights; edge {k} has weight {w[k].item()!r} "
                         f"(write .snap, .mtx or .gr for other weights)")
    return w.astype(np.int64)


def _check_distances(dist, square: bool = True) -> np.ndarray:
    d = np.asarray(dist)
    if d.ndim != 2 or (square and d.shape[0] != d.shape[1]):
        raise ValueError(f"a distance matrix must be square 2-D, got shape {d.shape}")
    if d.dtype.kind not in "iuf" or d.dtype == np.uint64:
        raise ValueError(f"distances must be signed integers, uint8..uint32 or floats, "
                         f"got dtype {d.dtype}")
    return d


#: most threads formatting text blocks at once (each holds one CHUNK_BYTES buffer)
WRITE_THREADS = 8


def _row_width(d: np.ndarray) -> int:
    return d.shape[1] * (max(T.max_int_chars(d.dtype), 3) + 1) + 1


def _format_into(rows: np.ndarray, out: np.ndarray) -> int:
    rows = np.ascontiguousarray(rows)
    if rows.dtype.kind == "f":
        strs, lens = T.float_strings(rows)
        return T.format_float_rows(rows, strs, lens, out)
    unreachable = np.int64(exactness.unreachable_value(rows.dtype))
    return T.format_int_rows(rows, unreachable, out)


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
    if r.ndim == 1:
        r = r[None, :]
    if r.ndim != 2:
        raise ValueError(f"rows must be a 2-D array, got shape {r.shape}")
    if r.dtype.kind not in "iuf" or r.dtype == np.uint64:
        raise ValueError(f"distances must be signed integers, uint8..uint32 or floats, "
                         f"got dtype {r.dtype}")
    out = np.empty(r.shape[0] * _row_width(r) + 1, dtype=np.uint8)
    return out[: _format_into(r, out)].tobytes()


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
    from ..progress import progress_bar

    d = _check_distances(dist, square=first_row is None)
    width = _row_width(d)
    step = max(1, CHUNK_BYTES // width)
    starts = range(0, d.shape[0], step)
    # blocks are formatted on threads (the kernels release the GIL), written in order
    threads = max(1, min(len(starts), usable_cores(), WRITE_THREADS))
    buffers = [np.empty(min(d.shape[0], step) * width + 1, dtype=np.uint8) for _ in range(threads)]
    # a bar only for outputs of many blocks (progress=None: and only on a terminal)
    with open_output(path) as f, progress_bar(len(starts), progress if len(starts) > 8 else False,
                                              desc="writing", unit="block") as bar:
        if threads == 1:
            for start in starts:
                nbytes = _format_into(d[start:start + step], buffers[0])
                f.write(buffers[0][:nbytes])
                bar.update()
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads, thread_name_prefix="apsp-format") as pool:
            jobs = []
            try:
                for i, start in enumerate(starts):
                    if len(jobs) == threads:  # the oldest block's buffer is needed again: write it out
                        buf, job = jobs.pop(0)
                        f.write(buf[:job.result()])
                        bar.update()
                    buf = buffers[i % threads]
                    jobs.append((buf, pool.submit(_format_into, d[start:start + step], buf)))
                for buf, job in jobs:
                    f.write(buf[:job.result()])
                    bar.update()
            finally:
                for _, job in jobs:  # on an error: no thread may still fill a buffer
                    job.cancel() or job.exception()
