"""METIS graph files (``.graph``, ``.metis``; METIS 5 manual, section 4.1.1).

::

    % comment
    <n> <m> [fmt [ncon]]
    <adjacency line of vertex 1>
    ...
    <adjacency line of vertex n>

``m`` counts undirected edges, each listed on both endpoints' lines. ``fmt``
has three digits ``xyz``: ``z = 1`` adjacency entries are ``v w`` pairs (edge
weights), ``y = 1`` each line starts with ``ncon`` vertex weights, ``x = 1``
with a vertex size; the usual values are 0, 1, 10 and 11. Vertex sizes and
weights are read and ignored. Vertex ids are 1-based; a blank line is a
vertex with no neighbours. Every listed neighbour becomes a directed edge
from the line's vertex, so a well-formed file gives a symmetric graph.
"""
from __future__ import annotations

import numpy as np

from ..errors import GraphFormatError
from ..graph import EdgeList
from . import _tokenizer as T
from ._file_bytes import load_bytes
from ._records import RecordSpec, eof_line, first_record, line_of, line_text, scan_error, scan_records

__all__ = ["read_graph"]

_HEADER = RecordSpec(names=("n", "m", "fmt", "ncon"), layout="a header line 'n m [fmt [ncon]]'",
                     kinds=(T.COL_INT,) * 4, lo=(0, 0, 0, 1), hi=(T.INT64_MAX,) * 4,
                     ncols_min=2, comment=b"%")


def read_graph(path) -> EdgeList:
    """Read a METIS graph file as a directed graph (each listed neighbour is an edge).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.graph")
    >>> _ = open(p, "w").write("3 2 1\\n2 5\\n1 5 3 7\\n2 7\\n")
    >>> e = read_graph(p)
    >>> e.n, e.src.tolist(), e.dst.tolist(), e.weight.tolist()
    (3, [0, 1, 1, 2], [1, 0, 2, 1], [5, 5, 7, 7])
    """
    buf = load_bytes(path)
    head_at = first_record(buf, 0, b"%")
    if head_at is None:
        raise GraphFormatError(path, 1, "empty file; expected a header line 'n m [fmt [ncon]]'")
    header_line = line_of(buf, head_at)
    # the header is read with blank fields absent; fmt and ncon default below
    words = line_text(buf, head_at).split()
    fields = len(words)
    values = scan_records(path, buf, head_at, _HEADER, 1).ints[:fields, 0].tolist()
    n, m = values[0], values[1]
    fmt_text = words[2].decode() if fields >= 3 else "0"
    if len(fmt_text) > 3 or any(ch not in "01" for ch in fmt_text):
        raise GraphFormatError(path, header_line, f"fmt is {fmt_text!r}; expected up to three "
                                                  "0/1 digits such as 0, 1, 10, 11")
    has_size, has_vweights, has_eweights = (digit == "1" for digit in fmt_text.zfill(3))
    ncon = values[3] if fields >= 4 else 1
    if fields >= 4 and not has_vweights:
        raise GraphFormatError(path, header_line, "ncon is given but fmt has no vertex weights")
    lead = int(has_size) + (ncon if has_vweights else 0)
    stride = 2 if has_eweights else 1
    start = int(T.end_of_line(buf, head_at))

    # never allocate more than the file can hold, whatever the header claims
    cap_tokens = min(n * lead + 2 * m * stride, (buf.shape[0] - start) // 2 + 1)
    cap_lines = min(n, int(T.count_newlines(buf, start, buf.shape[0])) + 1)
    vals = np.empty(cap_tokens, dtype=np.int64)
    line_offset, line_ntok = np.empty((2, cap_lines), dtype=np.int64)
    status, offset, nlines, ntok = T.scan_lines(buf, start, buf.shape[0], np.frombuffer(b"%", np.uint8), vals,
                                                line_offset, line_ntok, 0, cap_lines, 0)
    layout = _layout(has_size, has_vweights, ncon, has_eweights)
    if status == T.FULL and cap_lines == n:
        raise GraphFormatError(path, line_of(buf, offset), f"more vertex lines than the header's n = {n}")
    if status == T.TOO_MANY_TOKENS:
        raise GraphFormatError(path, line_of(buf, offset),
                               f"more adjacency entries than the header's m = {m} edges allow "
                               f"(each edge is listed twice)")
    if status not in (T.OK, T.FULL):
        spec = RecordSpec(names=("entry",), layout=layout, kinds=(T.COL_INT,), lo=(), hi=())
        raise scan_error(path, buf, status, offset, 0, spec)
    if nlines < n:
        raise GraphFormatError(path, eof_line(buf), f"file ends after {nlines} vertex lines; "
                                                    f"the header's n = {n}")
    line_ntok = line_ntok[:nlines]
    entries = line_ntok - lead
    bad = np.flatnonzero((entries < 0) | (entries % stride != 0))
    if bad.size:
        v = int(bad[0])
        raise GraphFormatError(path, line_of(buf, line_offset[v]),
                               f"vertex {v + 1}: expected {layout}, found {line_ntok[v]} fields")
    if int(entries.sum()) != 2 * m * stride:
        raise GraphFormatError(path, header_line,
                               f"the header's m = {m} edges need {2 * m} adjacency entries "
                               f"(each edge on both endpoints' lines), found {int(entries.sum()) // stride}")
    # position of every token within its line, to pick neighbours and weights
    line_of_tok = np.repeat(np.arange(nlines, dtype=np.int64), line_ntok)
    within = np.arange(ntok, dtype=np.int64) - np.repeat(np.cumsum(line_ntok) - line_ntok, line_ntok) - lead
    is_nbr = (within >= 0) & (within % stride == 0)
    nbr_index = np.flatnonzero(is_nbr)
    src = line_of_tok[nbr_index]
    dst = vals[nbr_index] - 1
    wrong = np.flatnonzero((dst < 0) | (dst >= n))
    if wrong.size:
        k = nbr_index[wrong[0]]
        v = int(line_of_tok[k])
        raise GraphFormatError(path, line_of(buf, line_offset[v]),
                               f"vertex {v + 1}: neighbour {vals[k]} is out of range 1..{n}")
    weight = vals[nbr_index + 1] if has_eweights else np.ones(src.size, dtype=np.int64)
    _check_symmetric(path, buf, line_offset, src, dst, weight, has_eweights)
    return EdgeList(n, src, dst, weight, source=str(path))


def _check_symmetric(path, buf, line_offset, src, dst, weight, has_eweights) -> None:
    """A METIS graph is undirected: no self-loops, and every entry ``u: v [w]`` matched by
    ``v: u [w]`` (as often). `GraphFormatError` at the line of a vertex that breaks it."""
    loops = np.flatnonzero(src == dst)
    if loops.size:
        v = int(src[loops[0]])
        raise GraphFormatError(path, line_of(buf, line_offset[v]),
                               f"vertex {v + 1} lists itself: METIS graphs have no self-loops")
    # the entries as (u, v, w) and reversed as (v, u, w): equal multisets exactly when symmetric
    forward = np.lexsort((weight, dst, src))
    backward = np.lexsort((weight, src, dst))
    differ = np.flatnonzero((src[forward] != dst[backward]) | (dst[forward] != src[backward])
                            | (weight[forward] != weight[backward]))
    if not differ.size:
        return
    i = int(differ[0])
    f, b = forward[i], backward[i]
    # the smaller of the first differing pair is an entry whose reverse is listed fewer times
    k = f if (src[f], dst[f], weight[f]) < (dst[b], src[b], weight[b]) else b
    u, v = int(src[k]), int(dst[k])
    with_weight = f" with weight {int(weight[k])}" if has_eweights else ""
    raise GraphFormatError(path, line_of(buf, line_offset[u]),
                           f"vertex {u + 1} lists neighbour {v + 1}{with_weight}, but vertex {v + 1} does not "
                           f"list {u + 1}{with_weight} as often: METIS adjacency must be symmetric")


def _layout(has_size, has_vweights, ncon, has_eweights) -> str:
    vertex_weights = " ".join(["w"] * ncon) if ncon <= 3 else f"{ncon} vertex weights"
    entries = "v1 w1 v2 w2 ..." if has_eweights else "v1 v2 ..."
    parts = ["size"] * has_size + [vertex_weights] * has_vweights + [entries]
    return "an adjacency line '" + " ".join(parts) + "'"
