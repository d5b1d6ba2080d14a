"""SNAP-style edge lists (``.snap``, ``.edges``, ``.el``, ``.tsv``).

One edge a line, ``u v`` or ``u v w``, fields split by any blanks (tabs in
SNAP's own files), vertex ids 0-based. Lines starting with ``#`` or ``%`` are
comments; a header comment ``# Nodes: N ...`` (SNAP's convention) sets the
vertex count. Every line has the same number of fields as the first one.
Weights are integers, or floats when any weight has a fraction or exponent.

Vertex ids need not be 0..n-1: real datasets have gaps. Without the caller's
``n``, the vertices are the ids that appear, in increasing numeric order (vertex
i is the i-th smallest id), and ``EdgeList.labels`` holds the ids; memory is
proportional to the edges, never to the largest id. Two cases keep the ids as
indices (``labels`` None): the caller's ``n`` (every id must then lie in
``0..n-1``), and a ``Nodes: N`` header with every id below N (then n = N, which
counts vertices on no edge too, as SNAP's header does). Ids that are exactly
``0..k-1`` give ``labels`` None as well, since each id is then its index.
"""
from __future__ import annotations

import re

import numpy as np

from ..graph import COMPACT_BYTES_PER_EDGE, EdgeList, compact_ids
from ..sizes import check_memory
from . import _tokenizer as T
from ._file_bytes import load_bytes
from ._formatter import check_edges, last_assignment_wins, write_edge_file
from ._records import RecordSpec, first_record, line_text, scan_records

__all__ = ["read_graph", "write_graph"]

_COMMENTS = b"#%"
#: ``Nodes: N`` (SNAP's header), found by its literal text, then checked to be on a comment line
_NODES = re.compile(rb"Nodes:[ \t\v\f\r]*(\d+)")
_BLANKS = b" \t\v\f\r"
#: bytes looked at a time for a line's start, back from a match
_BACK_STEP = 1 << 16


def _declared_nodes(buf: np.ndarray, data_start: int | None) -> int | None:
    """The ``Nodes: N`` of the comment lines before the first edge, if any (the last one). Matched
    in the buffer itself: millions of comment lines cost no copy and no list of lines, and each
    byte is looked at a bounded number of times."""
    head = buf.data[: data_start if data_start is not None else min(buf.shape[0], 1 << 20)]
    found, line_start, searched_to = None, 0, 0
    for match in _NODES.finditer(head):
        at = match.start()
        if at and (chr(head[at - 1]).isalnum() or head[at - 1] == ord("_")):
            continue  # not a word of its own
        # the line's start: the last newline before the match, looked for back to the last match only
        hi = at
        while hi > searched_to:
            lo = max(searched_to, hi - _BACK_STEP)
            newlines = np.flatnonzero(buf[lo:hi] == ord("\n"))
            if newlines.size:
                line_start = lo + int(newlines[-1]) + 1
                break
            hi = lo
        searched_to = at
        first = line_start
        while first < at and head[first] in _BLANKS:
            first += 1
        if head[first] in b"#%":
            found = match.group(1)
    return int(found) if found is not None else None


def read_graph(path, n: int | None = None) -> EdgeList:
    """Read a SNAP-style edge list.

    Parameters
    ----------
    path : str or os.PathLike
        The file (gzip recognised by its magic bytes).
    n : int, optional
        Number of vertices; every id must then lie in ``0..n-1``.

    Returns
    -------
    EdgeList
        Edges in file order; weights all 1 (int64) when the lines have two fields;
        ``labels`` the ids when they are not the indices (see the module's notes).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.snap")
    >>> _ = open(p, "w").write("# Nodes: 4 Edges: 2\\n0\\t1\\n2\\t1\\n")
    >>> e = read_graph(p)
    >>> e.n, e.src.tolist(), e.dst.tolist(), e.weight.tolist(), e.labels
    (4, [0, 2], [1, 1], [1, 1], None)
    >>> _ = open(p, "w").write("5 77\\n77 1000000\\n")
    >>> e = read_graph(p)
    >>> e.n, e.src.tolist(), e.dst.tolist(), e.labels.tolist()
    (3, [0, 1], [1, 2], [5, 77, 1000000])
    """
    if n is not None and (int(n) != n or n < 0):
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    buf = load_bytes(path)
    start = first_record(buf, 0, _COMMENTS)
    declared = _declared_nodes(buf, start)
    nfields = len(line_text(buf, start).split()) if start is not None else 2
    hi = (n - 1) if n is not None else T.INT64_MAX
    layout = {2: "an edge line 'u v'", 3: "an edge line 'u v w'"}.get(nfields, "an edge line 'u v' or 'u v w'")
    k = 2 if nfields == 2 else 3  # the fields a record may have
    spec = RecordSpec(names=("u", "v", "w")[:k], layout=layout, comment=_COMMENTS,
                      kinds=(T.COL_INT, T.COL_INT, T.COL_NUMBER)[:k], lo=(0, 0, 0)[:k], hi=(hi, hi, 0)[:k],
                      ncols_min=nfields if nfields in (2, 3) else 2)
    rec = scan_records(path, buf, start if start is not None else buf.shape[0], spec)
    src, dst = rec.ints[0], rec.ints[1]
    weight = rec.numbers[2] if nfields == 3 else np.ones(rec.rows, dtype=np.int64)
    labels = None
    if n is None:
        top = int(max(src.max(), dst.max())) + 1 if rec.rows else 0
        if declared is not None and top <= declared:
            n = declared
        else:
            check_memory(COMPACT_BYTES_PER_EDGE * rec.rows, f"{path}: numbering the vertex ids", hold=True)
            labels, src, dst = compact_ids(src, dst)
            n = labels.shape[0]
    return EdgeList(int(n), src, dst, weight, source=str(path), labels=labels)


def write_graph(path, edges: EdgeList) -> None:
    """Write a SNAP-style edge list: a ``# Nodes: N Edges: M`` header, then ``u<TAB>v<TAB>w``.

    Repeated (u, v) pairs are dropped except the last (apsp's rule), since
    other tools read parallel edges differently. Vertices with integer ``labels``
    are written as their labels (the ids the file was read with); string labels
    are refused (SNAP ids are integers).

    Examples
    --------
    >>> import tempfile, os
    >>> from apsp.graph import EdgeList
    >>> p = os.path.join(tempfile.mkdtemp(), "g.snap")
    >>> write_graph(p, EdgeList(3, [0, 1], [1, 2], [5, 7]))
    >>> print(open(p).read().expandtabs(4), end="")
    # Directed graph written by apsp
    # Nodes: 3 Edges: 2
    # FromNodeId    ToNodeId    Weight
    0   1   5
    1   2   7
    """
    check_edges(edges)
    src, dst, w = last_assignment_wins(edges.src, edges.dst, edges.weight)
    if edges.labels is not None:
        if edges.labels.dtype.kind not in "iu":
            raise ValueError(f"a SNAP edge list names vertices by integers; these are named by "
                             f"strings ({edges.labels[0]!r}, ...): drop the labels "
                             "(EdgeList(..., labels=None)) to write their indices")
        src, dst = edges.labels[src], edges.labels[dst]
    write_edge_file(path, f"# Directed graph written by apsp\n# Nodes: {edges.n} Edges: {src.size}\n"
                    "# FromNodeId\tToNodeId\tWeight\n", src, dst, w, sep=b"\t")

