"""Independent slow parsers of the text graph formats, written from the format docs (apsp/io/*.py).

Plain Python over ``bytes``: split into lines at ``\\n``, fields with
``bytes.split()`` (space, tab, CR, VT, FF: the blanks the fast tokenizer
knows), numbers by regular expression and ``int()``/``float()``. They share no
code with `apsp.io`, so the fuzz tests can compare the fast readers with
them on any input: both accept it with the same answer, or both refuse it.

Each returns ``(n, src, dst, weight)`` (0-based lists, weights as Python int
or float) or raises `Invalid`.
"""
from __future__ import annotations

import gzip
import re
import zlib

INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1
_INT = re.compile(rb"[+-]?[0-9]+\Z")
_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


class Invalid(Exception):
    pass


def _bytes(data: bytes) -> bytes:
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise Invalid(f"gzip: {exc}") from exc
    return data


def _int(tok: bytes, lo=INT64_MIN, hi=INT64_MAX) -> int:
    if not _INT.match(tok):
        raise Invalid(f"not an integer: {tok!r}")
    v = int(tok)
    if not (INT64_MIN <= v <= INT64_MAX) or not lo <= v <= hi:
        raise Invalid(f"out of range: {tok!r}")
    return v


def _number(tok: bytes):
    """(is_int, value): integers exactly when they fit int64, else floats."""
    if _INT.match(tok) and INT64_MIN <= int(tok) <= INT64_MAX:
        return True, int(tok)
    if not _NUMBER.match(tok):
        raise Invalid(f"not a number: {tok!r}")
    return False, float(tok)


def _records(text: bytes, comment: bytes = b""):
    """(line number, fields) of every line that is neither blank nor a comment."""
    for k, line in enumerate(text.split(b"\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if comment and fields[0][:1] in [bytes([c]) for c in comment]:
            continue
        yield k, fields


def _weights(kinds_values):
    """All integers -> ints; any float -> every weight as float (as the readers do)."""
    if all(is_int for is_int, _ in kinds_values):
        return [v for _, v in kinds_values]
    return [float(v) for _, v in kinds_values]


def homework(data: bytes):
    recs = list(_records(_bytes(data)))
    if not recs:
        raise Invalid("empty")
    _, head = recs[0]
    if len(head) != 2:
        raise Invalid("header needs 2 fields")
    n = _int(head[0], 1)
    m = _int(head[1], 0)
    body = recs[1:]
    if len(body) != m:
        raise Invalid(f"{len(body)} edge lines, header says {m}")
    src, dst, w = [], [], []
    for _, f in body:
        if len(f) != 3:
            raise Invalid("edge line needs 3 fields")
        i, j, x = _int(f[0], 1, n), _int(f[1], 1, n), _int(f[2])
        if i == j:
            raise Invalid("self-loop")
        src.append(i - 1)
        dst.append(j - 1)
        w.append(x)
    return n, src, dst, w


_NODES = re.compile(rb"\bNodes:\s*(\d+)")


def snap(data: bytes, n=None):
    text = _bytes(data)
    lines = text.split(b"\n")
    recs = list(_records(text, b"#%"))
    first_line = recs[0][0] if recs else None
    declared = None
    for k, line in enumerate(lines, start=1):
        if first_line is not None and k >= first_line:
            break
        if line.lstrip()[:1] in (b"#", b"%"):
            match = _NODES.search(line)
            if match:
                declared = int(match.group(1))
    nfields = len(recs[0][1]) if recs else 2
    if nfields not in (2, 3):
        raise Invalid("2 or 3 fields")
    hi = INT64_MAX if n is None else n - 1
    src, dst, w = [], [], []
    for _, f in recs:
        if len(f) != nfields:
            raise Invalid("field count differs from the first line")
        src.append(_int(f[0], 0, hi))
        dst.append(_int(f[1], 0, hi))
        w.append(_number(f[2]) if nfields == 3 else (True, 1))
    if n is None:
        n, src, dst = snap_vertices(src, dst, declared)
    return n, src, dst, _weights(w)


def snap_vertices(src, dst, declared):
    """SNAP's vertices without a caller's n: the ids as indices under a ``Nodes:`` header that
    covers them all, else the ids that appear, in increasing order."""
    top = max(src + dst) + 1 if src else 0
    if declared is not None and top <= declared:
        return declared, src, dst
    index = {v: k for k, v in enumerate(sorted(set(src + dst)))}
    return len(index), [index[v] for v in src], [index[v] for v in dst]


_BANNER_FIELDS = ("real", "integer", "pattern")
_BANNER_SYMMETRY = ("general", "symmetric", "skew-symmetric")


def mtx(data: bytes):
    text = _bytes(data)
    if not text:
        raise Invalid("empty")
    lines = text.split(b"\n")
    # the banner's words as text (str.split, like the reader: ASCII separators 0x1c-0x1f count)
    words = lines[0].decode("ascii", errors="replace").lower().split()
    if len(words) != 5 or words[0] != "%%matrixmarket" or words[1] != "matrix" or words[2] != "coordinate":
        raise Invalid("banner")
    field, symmetry = words[3], words[4]
    if field not in _BANNER_FIELDS or symmetry not in _BANNER_SYMMETRY:
        raise Invalid("banner field/symmetry")
    if field == "pattern" and symmetry == "skew-symmetric":
        raise Invalid("pattern skew")
    recs = list(_records(b"\n".join(lines[1:]), b"%"))
    if not recs:
        raise Invalid("no size line")
    _, size = recs[0]
    if len(size) != 3:
        raise Invalid("size line needs 3 fields")
    rows, cols, nnz = (_int(t, 0) for t in size)
    if rows != cols:
        raise Invalid("not square")
    n = rows
    body = recs[1:]
    if len(body) != nnz:
        raise Invalid("entry count")
    src, dst, w = [], [], []
    want = 2 if field == "pattern" else 3
    for _, f in body:
        if len(f) != want:
            raise Invalid("entry fields")
        src.append(_int(f[0], 1, n) - 1)
        dst.append(_int(f[1], 1, n) - 1)
        if field == "pattern":
            w.append(1)
        elif field == "integer":
            w.append(_int(f[2]))
        else:
            w.append(float(_number(f[2])[1]))
    if symmetry != "general":
        off = [k for k in range(len(src)) if src[k] != dst[k]]
        sign = -1 if symmetry == "skew-symmetric" else 1
        mirrored = [sign * w[k] for k in off]
        if field == "integer" and any(not INT64_MIN <= x <= INT64_MAX for x in mirrored):
            raise Invalid("a skew-symmetric mirror entry does not fit int64")
        src, dst, w = (src + [dst[k] for k in off], dst + [src[k] for k in off], w + mirrored)
    return n, src, dst, w


def dimacs(data: bytes):
    recs = list(_records(_bytes(data), b"c"))
    if not recs:
        raise Invalid("no problem line")
    _, p = recs[0]
    if len(p) != 4 or p[0] != b"p" or p[1] != b"sp" or not p[2].isdigit() or not p[3].isdigit():
        raise Invalid("problem line")
    n, m = int(p[2]), int(p[3])
    if n > INT64_MAX or m > INT64_MAX:
        raise Invalid("counts")
    body = recs[1:]
    if len(body) != m:
        raise Invalid("arc count")
    src, dst, w = [], [], []
    for _, f in body:
        if f[0] != b"a" or len(f) != 4:
            raise Invalid("arc line")
        src.append(_int(f[1], 1, n) - 1)
        dst.append(_int(f[2], 1, n) - 1)
        w.append(_number(f[3]))
    return n, src, dst, _weights(w)


def metis(data: bytes):
    """METIS 5 graph files (see apsp/io/metis.py): every listed neighbour is an edge."""
    text = _bytes(data)
    lines = text.split(b"\n")
    k = 0
    # comment lines (first non-blank byte '%') are skipped everywhere; blank lines before the header too
    while k < len(lines) and (not lines[k].split() or lines[k].lstrip()[:1] == b"%"):
        k += 1
    if k == len(lines):
        raise Invalid("no header")
    head = lines[k].split()
    if not 2 <= len(head) <= 4:
        raise Invalid("header fields")
    n, m = _int(head[0], 0), _int(head[1], 0)
    fmt = head[2].decode("ascii", "replace") if len(head) >= 3 else "0"
    if len(head) >= 3:
        _int(head[2], 0)
    if len(head) == 4:
        _int(head[3], 1)
    if len(fmt) > 3 or any(ch not in "01" for ch in fmt):
        raise Invalid("fmt")
    fmt = fmt.zfill(3)
    has_size, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    if len(head) == 4 and not has_vw:
        raise Invalid("ncon without vertex weights")
    ncon = int(head[3]) if len(head) == 4 else 1
    lead = int(has_size) + (ncon if has_vw else 0)
    stride = 2 if has_ew else 1
    rest = lines[k + 1:]
    if rest and rest[-1] == b"":
        rest = rest[:-1]  # the text after the last newline is not a line
    vertex_lines = [line for line in rest if line.lstrip()[:1] != b"%"]
    if any(line.split() for line in vertex_lines[n:]):
        raise Invalid("more vertex lines than n")
    vertex_lines = vertex_lines[:n]
    if len(vertex_lines) < n:
        raise Invalid("fewer vertex lines than n")
    src, dst, w = [], [], []
    total = 0
    for v, line in enumerate(vertex_lines):
        toks = [_int(t) for t in line.split()]
        entries = toks[lead:]
        if len(toks) < lead or len(entries) % stride:
            raise Invalid("vertex line fields")
        total += len(entries) // stride
        for e in range(0, len(entries), stride):
            u = entries[e]
            if not 1 <= u <= n:
                raise Invalid("neighbour out of range")
            src.append(v)
            dst.append(u - 1)
            w.append(entries[e + 1] if has_ew else 1)
    if total != 2 * m:
        raise Invalid("edge count")
    if any(u == v for u, v in zip(src, dst)):
        raise Invalid("self-loop")
    if sorted(zip(src, dst, w)) != sorted(zip(dst, src, w)):
        raise Invalid("asymmetric adjacency")
    return n, src, dst, w


ORACLES = {"homework": homework, "snap": snap, "mtx": mtx, "dimacs": dimacs, "metis": metis}
