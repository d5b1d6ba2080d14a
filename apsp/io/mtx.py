"""Matrix Market coordinate files (``.mtx``).

Reading: ``%%MatrixMarket matrix coordinate <field> <symmetry>`` with field
``real``, ``integer`` or ``pattern`` (weight 1) and symmetry ``general``,
``symmetric`` (each off-diagonal entry is an edge both ways) or
``skew-symmetric`` (the mirror edge has the negated weight). ``%`` lines are
comments. Entry ``i j w`` (1-based) is an edge i -> j of weight w; the matrix
must be square. Explicit zeros are edges of weight 0.

Writing graphs: ``coordinate integer general`` (``real`` for float weights),
one entry per edge, the last of repeated (i, j) only (Matrix Market readers
elsewhere add duplicates up). Writing distances: one entry per *reachable*
pair, so an absent entry means no path; scipy.io.mmread reads it as a sparse
matrix with explicit zeros on the diagonal.
"""
from __future__ import annotations

import numpy as np

from .. import exactness
from ..errors import GraphFormatError
from ..graph import EdgeList
from . import _tokenizer as T
from ._file_bytes import load_bytes
from ._formatter import CHUNK_BYTES, check_edges, last_assignment_wins, write_edge_file, write_edges
from ._records import RecordSpec, eof_line, first_record, line_of, line_text, scan_records
from .atomic import atomic_write

__all__ = ["read_graph", "write_graph", "write_distances"]

_BANNER = "%%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric|skew-symmetric>"
_SIZE = RecordSpec(names=("rows", "columns", "entries"), layout="a size line 'rows columns entries'",
                   kinds=(T.COL_INT,) * 3, lo=(0, 0, 0), hi=(T.INT64_MAX,) * 3, comment=b"%")


def _banner(path, buf: np.ndarray) -> tuple[str, str, int]:
    first = line_text(buf, 0)
    words = first.decode("ascii", errors="replace").lower().split()
    if not words or words[0] != "%%matrixmarket":
        raise GraphFormatError(path, 1, f"expected the banner '{_BANNER}'")
    if len(words) != 5 or words[1] != "matrix":
        raise GraphFormatError(path, 1, f"expected the banner '{_BANNER}', found {first[:80]!r}")
    _, _, layout, field, symmetry = words
    if layout == "array":
        raise GraphFormatError(path, 1, "dense 'array' Matrix Market files are not supported; "
                                        "use 'coordinate' (or save the matrix as .npy)")
    if layout != "coordinate":
        raise GraphFormatError(path, 1, f"unknown layout {layout!r}; expected 'coordinate'")
    if field not in ("real", "integer", "pattern"):
        raise GraphFormatError(path, 1, f"field {field!r} is not supported; expected real, integer "
                                        "or pattern")
    if symmetry not in ("general", "symmetric", "skew-symmetric"):
        raise GraphFormatError(path, 1, f"symmetry {symmetry!r} is not supported; expected general, "
                                        "symmetric or skew-symmetric")
    if field == "pattern" and symmetry == "skew-symmetric":
        raise GraphFormatError(path, 1, "a pattern matrix cannot be skew-symmetric")
    return field, symmetry, len(first) + 1


def read_graph(path) -> EdgeList:
    """Read a Matrix Market coordinate file as a directed graph.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.mtx")
    >>> _ = open(p, "w").write("%%MatrixMarket matrix coordinate integer symmetric\\n3 3 1\\n2 1 4\\n")
    >>> e = read_graph(p)
    >>> e.n, e.src.tolist(), e.dst.tolist(), e.weight.tolist()
    (3, [1, 0], [0, 1], [4, 4])
    """
    buf = load_bytes(path)
    if buf.shape[0] == 0:
        raise GraphFormatError(path, 1, f"empty file; expected the banner '{_BANNER}'")
    field, symmetry, pos = _banner(path, buf)
    size_at = first_record(buf, min(pos, buf.shape[0]), b"%")
    if size_at is None:
        raise GraphFormatError(path, eof_line(buf), "no size line 'rows columns entries'")
    size = scan_records(path, buf, size_at, _SIZE, 1)
    n, ncols, nnz = size.ints[:, 0].tolist()
    if n != ncols:
        raise GraphFormatError(path, line_of(buf, size_at),
                               f"the matrix is {n} x {ncols}; a graph needs a square one")
    start = size.offset
    k = 2 if field == "pattern" else 3  # the fields of an entry
    names = ("row", "column", "value")[:k]
    spec = RecordSpec(names=names, layout=f"an entry line '{' '.join(names)}'", comment=b"%",
                      kinds=(T.COL_INT, T.COL_INT, T.COL_NUMBER if field == "real" else T.COL_INT)[:k],
                      lo=(1, 1, T.INT64_MIN)[:k], hi=(n, n, T.INT64_MAX)[:k])
    rec = scan_records(path, buf, start, spec, nnz, exact=(
        f"more entries than the size line's {nnz}",
        lambda rows: f"file ends after {rows} entries; the size line promises {nnz}"))
    src = rec.ints[0] - 1
    dst = rec.ints[1] - 1
    w = (np.ones(rec.rows, dtype=np.int64) if field == "pattern"
         else rec.ints[2] if field == "integer" else rec.numbers[2].astype(np.float64))
    if symmetry != "general":
        off = src != dst
        if symmetry == "skew-symmetric" and field == "integer" and (w[off] == T.INT64_MIN).any():
            k = int(np.flatnonzero(off & (w == T.INT64_MIN))[0])
            at = scan_records(path, buf, start, spec, k).offset  # where the first k entries end
            raise GraphFormatError(path, line_of(buf, at),
                                   f"value {T.INT64_MIN} has no int64 negation for its skew-symmetric "
                                   "mirror entry")
        mirror_w = -w[off] if symmetry == "skew-symmetric" else w[off]
        src, dst, w = (np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]]),
                       np.concatenate([w, mirror_w]))
    return EdgeList(n, src, dst, w, source=str(path))


def write_graph(path, edges: EdgeList) -> None:
    """Write a graph as a Matrix Market ``coordinate integer|real general`` file.

    Examples
    --------
    >>> import tempfile, os
    >>> from apsp.graph import EdgeList
    >>> p = os.path.join(tempfile.mkdtemp(), "g.mtx")
    >>> write_graph(p, EdgeList(3, [0, 1], [1, 2], [5, 7]))
    >>> print(open(p).read(), end="")
    %%MatrixMarket matrix coordinate integer general
    % apsp graph: entry (i, j, w) is an edge i -> j of weight w
    3 3 2
    1 2 5
    2 3 7
    """
    check_edges(edges)
    src, dst, w = last_assignment_wins(edges.src, edges.dst, edges.weight)
    field = "integer" if w.dtype.kind in "iub" else "real"
    write_edge_file(path, f"%%MatrixMarket matrix coordinate {field} general\n"
                    f"% apsp graph: entry (i, j, w) is an edge i -> j of weight w\n"
                    f"{edges.n} {edges.n} {src.size}\n", src, dst, w, add=1)


def write_distances(path, dist, first_row: int | None = None) -> None:
    """Write distances as Matrix Market, one entry per reachable pair.

    With ``first_row`` set, ``dist`` is a block of rows of a larger matrix:
    the file is (rows x n), and a comment says which row its row 1 is.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "d.mtx")
    >>> big = np.iinfo(np.int32).max
    >>> write_distances(p, np.array([[0, 4], [big, 0]], dtype=np.int32))
    >>> print(open(p).read(), end="")
    %%MatrixMarket matrix coordinate integer general
    % apsp distances: entry (i, j, d) is the shortest distance d from i to j; absent = no path
    2 2 3
    1 1 0
    1 2 4
    2 2 0
    """
    d = np.asarray(dist)
    if d.dtype.kind not in "iuf":
        raise ValueError(f"distances must be numeric, got dtype {d.dtype}")
    n, ncols = d.shape
    unreachable = exactness.unreachable_value(d.dtype)
    step = max(1, CHUNK_BYTES // max(1, ncols * max(d.itemsize, 1)))
    nnz = sum(int(np.count_nonzero(d[s:s + step] != unreachable)) for s in range(0, n, step))
    field = "real" if d.dtype.kind == "f" else "integer"
    part = "" if first_row is None else (
        f"% rows {first_row + 1}..{first_row + n} of the {ncols} x {ncols} matrix: row i here is "
        f"vertex {first_row} + i\n")
    with atomic_write(path, gz=True) as f:
        f.write(f"%%MatrixMarket matrix coordinate {field} general\n"
                f"% apsp distances: entry (i, j, d) is the shortest distance d from i to j; "
                f"absent = no path\n{part}{n} {ncols} {nnz}\n".encode())
        for s in range(0, n, step):
            block = d[s:s + step]
            rows, cols = np.nonzero(block != unreachable)
            write_edges(f, rows + s, cols, block[rows, cols], add=1)
