"""DIMACS shortest-path graphs (``.gr``, 9th DIMACS Implementation Challenge).

::

    c a comment
    p sp <n> <m>
    a <u> <v> <w>     m arc lines, vertices 1-based

Lines starting with ``c`` are comments anywhere; the problem line comes
before the arcs, and there must be exactly m arcs. Weights are integers in
the challenge; floats are accepted too.
"""
from __future__ import annotations

import numpy as np

from ..errors import GraphFormatError
from ..graph import EdgeList
from . import _tokenizer as T
from ._file_bytes import load_bytes
from ._formatter import check_edges, last_assignment_wins, write_edge_file
from ._records import RecordSpec, eof_line, first_record, line_of, line_text, scan_records

__all__ = ["read_graph", "write_graph"]

_PROBLEM = "a problem line 'p sp <n> <m>'"


def _problem_line(path, buf: np.ndarray) -> tuple[int, int, int]:
    at = first_record(buf, 0, b"c")
    if at is None:
        raise GraphFormatError(path, eof_line(buf), f"no problem line; expected {_PROBLEM}")  # 1 if empty
    line = line_of(buf, at)
    words = line_text(buf, at).split()
    if words[0] != b"p" or len(words) != 4 or words[1] != b"sp":
        found = b" ".join(words)[:60].decode(errors="replace")
        raise GraphFormatError(path, line, f"expected {_PROBLEM}, found {found!r}")
    texts = [word.decode(errors="replace") for word in words[2:]]
    for name, text in zip(("n", "m"), texts):
        if not text.isdigit():
            raise GraphFormatError(path, line, f"{name} is {text!r}, not a non-negative integer")
    n, m = map(int, texts)
    if n > T.INT64_MAX or m > T.INT64_MAX:
        raise GraphFormatError(path, line, "n or m does not fit a 64-bit integer")
    return n, m, int(T.end_of_line(buf, at))


def read_graph(path) -> EdgeList:
    """Read a DIMACS ``.gr`` file.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.gr")
    >>> _ = open(p, "w").write("c tiny\\np sp 3 2\\na 1 2 5\\na 2 3 7\\n")
    >>> e = read_graph(p)
    >>> e.n, e.src.tolist(), e.dst.tolist(), e.weight.tolist()
    (3, [0, 1], [1, 2], [5, 7])
    """
    buf = load_bytes(path)
    n, m, start = _problem_line(path, buf)
    spec = RecordSpec(names=("u", "v", "w"), layout="an arc line 'a <u> <v> <w>'",
                      kinds=(T.COL_INT, T.COL_INT, T.COL_NUMBER), lo=(1, 1, 0), hi=(n, n, 0),
                      comment=b"c", prefix=b"a")
    rec = scan_records(path, buf, start, spec, m, exact=(
        f"more arc lines than the problem line's m = {m}",
        lambda rows: f"file ends after {rows} arc lines; the problem line's m = {m}"))
    ids = rec.ints[:2]
    ids -= 1
    return EdgeList(n, ids[0], ids[1], rec.numbers[2], source=str(path))


def write_graph(path, edges: EdgeList) -> None:
    """Write a DIMACS ``.gr`` file (the last of repeated arcs only: DIMACS tools keep them all).

    Examples
    --------
    >>> import tempfile, os
    >>> from apsp.graph import EdgeList
    >>> p = os.path.join(tempfile.mkdtemp(), "g.gr")
    >>> write_graph(p, EdgeList(3, [0, 1], [1, 2], [5, 7]))
    >>> print(open(p).read(), end="")
    c written by apsp
    p sp 3 2
    a 1 2 5
    a 2 3 7
    """
    check_edges(edges)
    src, dst, w = last_assignment_wins(edges.src, edges.dst, edges.weight)
    write_edge_file(path, f"c written by apsp\np sp {edges.n} {src.size}\n", src, dst, w, add=1, prefix=b"a ")
