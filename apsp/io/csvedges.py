"""Comma-separated edge lists with a header (``.csv``): ``source,target[,weight]``.

The header names the columns, in any order: ``source`` and ``target`` (vertex ids: any text,
quoted as CSV quotes) and, optionally, ``weight`` (a finite number; 1 when the column is absent).
Blank lines and lines starting with ``#`` are skipped. Vertices are the ids that appear; ids that
are all integers are kept as integers and sorted numerically, any others as strings, sorted: either
way they are the labels results, routes and the command line name vertices by. A repeated
``source,target`` pair keeps its last weight, as in every edge format. A malformed line raises
`apsp.errors.GraphFormatError` naming the file, the line and the problem.

Examples
--------
>>> import tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "roads.csv")
>>> _ = open(p, "w").write("source,target,weight\\nparis,lyon,4.5\\nlyon,nice,2\\n")
>>> e = read_graph(p)
>>> e.n, e.src.tolist(), e.dst.tolist(), e.weight.tolist(), e.labels.tolist()
(3, [2, 0], [0, 1], [4.5, 2.0], ['lyon', 'nice', 'paris'])
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError
from ..graph import EdgeList
from ._file_bytes import load_bytes

__all__ = ["read_graph"]

#: the columns a header may name (``weight`` optional)
COLUMNS = ("source", "target", "weight")


def read_graph(path) -> EdgeList:
    """Read a CSV edge list with a header.

    Parameters
    ----------
    path : str or os.PathLike
        The file (gzip recognised by its magic bytes).

    Returns
    -------
    EdgeList
        Edges in file order; ``labels`` the ids (integers when every id is one, else strings).
    """
    path = Path(path)
    try:
        text = load_bytes(path).tobytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = text_line(exc.object, exc.start)
        raise GraphFormatError(path, line, f"not UTF-8 text ({exc.reason})") from None
    rows = csv.reader(io.StringIO(text, newline=""), strict=True)
    ids: list[str] = []
    weights: list[str] = []
    lines: list[int] = []
    try:  # a malformed quote may end the header's line as well as any other
        columns, header_line = _header(path, rows)
        for row in rows:
            if not row or (len(row) == 1 and not row[0].strip()) or row[0].lstrip().startswith("#"):
                continue
            if len(row) != len(columns):
                raise GraphFormatError(path, rows.line_num, f"expected {len(columns)} fields "
                                       f"({','.join(columns)}), found {len(row)}")
            fields = dict(zip(columns, (f.strip() for f in row)))
            for end in ("source", "target"):
                if not fields[end]:
                    raise GraphFormatError(path, rows.line_num, f"empty {end} id")
            ids += (fields["source"], fields["target"])
            weights.append(fields.get("weight", "1"))
            lines.append(rows.line_num)
    except csv.Error as exc:
        raise GraphFormatError(path, rows.line_num, f"not CSV: {exc}") from None
    if not lines and header_line is None:
        raise GraphFormatError(path, 1, "empty file: a CSV edge list starts with a header such as "
                                        "source,target,weight")
    w = _weights(path, weights, lines)
    labels, index = _vertex_ids(ids)
    return EdgeList(len(labels), index[0::2], index[1::2], w, source=str(path),
                    labels=labels if len(labels) else None)


def text_line(data: bytes, offset: int) -> int:
    """The 1-based line of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


def _header(path: Path, rows) -> tuple[list[str], int | None]:
    for row in rows:
        if not row or (len(row) == 1 and not row[0].strip()) or row[0].lstrip().startswith("#"):
            continue
        columns = [c.strip().lower() for c in row]
        unknown = [c for c in columns if c not in COLUMNS]
        if unknown or "source" not in columns or "target" not in columns or len(set(columns)) != len(columns):
            raise GraphFormatError(path, rows.line_num,
                                   f"the header {','.join(row)!r} must name the columns source, target and "
                                   "optionally weight (e.g. source,target,weight)")
        return columns, rows.line_num
    return list(COLUMNS), None


def _weights(path: Path, weights: list[str], lines: list[int]) -> np.ndarray:
    """Integers when every weight is one, else floats; a field that is neither names its line."""
    try:
        return np.array([int(x) for x in weights], dtype=np.int64)
    except (ValueError, OverflowError):
        pass
    out = np.empty(len(weights), dtype=np.float64)
    for k, text in enumerate(weights):
        try:
            value = float(text)
        except ValueError:
            raise GraphFormatError(path, lines[k], f"weight {text!r} is not a number") from None
        if not math.isfinite(value):
            raise GraphFormatError(path, lines[k], f"weight {text!r} is not a finite number")
        out[k] = value
    return out


def _vertex_ids(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, index)``: the distinct ids sorted (as integers when all are) and each id's index."""
    try:
        numbers = np.array([int(x) for x in ids], dtype=np.int64)
    except (ValueError, OverflowError):
        labels, index = np.unique(np.array(ids, dtype=str), return_inverse=True)
        return labels, index.reshape(-1).astype(np.int64)
    labels, index = np.unique(numbers, return_inverse=True)
    return labels, index.reshape(-1).astype(np.int64)
