"""What every format module shares: the file's bytes in, records out, text and outputs back.

Files are read whole into memory (`load_bytes`, gzip recognised by its magic bytes) and
parsed by one Numba tokenizer (`scan_records` over `scan_table`; `GraphFormatError` names
the line, field and token of the first problem); text goes out through one Numba formatter
into files opened by `apsp.io.atomic.atomic_write`.

Parsing
    `scan_table` reads records of a fixed number of whitespace-separated fields
    (homework, SNAP, Matrix Market, DIMACS lines), `scan_lines` reads lines of
    any length (METIS). Both are Numba state machines over the raw bytes that
    write straight into preallocated column arrays, check each field's range as
    they go, and stop at the first problem with its byte offset, so the caller
    can name the line without the hot loop ever counting lines. They resume
    from any record boundary, which is also how headers are read: scan one
    record with capacity 1, and the next call continues where it stopped.

    Integers are exact over the whole int64 range. Numbers with a fraction or
    an exponent take Clinger's exact fast path (at most 15-16 significant
    digits and a small exponent: one IEEE multiply or divide of two exact
    values); the rest are handed back by offset and parsed by numpy, which
    rounds correctly. Either way every float is the correctly rounded value.

Formatting
    `format_rows` prints rows of a distance matrix (``INF`` for unreachable)
    and `format_edges` prints edge records, into a preallocated byte buffer.
    Whole-valued floats print as integers; other floats use numpy's shortest
    round-trip repr.
"""
from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from ..errors import GraphFormatError
from ..jit import thread_count
from ..sizes import check_memory
from .atomic import atomic_write


# -- status codes shared by the scanners --------------------------------------
OK = 0
FULL = 1  # a record was found after the capacity was reached; offset = its line start
BAD_NUMBER = 2
NOT_INTEGER = 3
OVERFLOW = 4
TOO_FEW = 5
TOO_MANY = 6
OUT_OF_RANGE = 7
SAME_ENDPOINTS = 8
BAD_PREFIX = 9
TOO_MANY_TOKENS = 10

# -- token kinds of a number column --------------------------------------------
KIND_INT = 0
KIND_FLOAT = 1
KIND_SLOW = 2  # a float for numpy to parse; out_i holds the token's byte offset

COL_INT = 0
COL_NUMBER = 1

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min
_POW10 = np.array([10.0 ** k for k in range(23)])  # all exact doubles
_TWO53 = 2 ** 53


# byte classes, one table lookup per byte in the hot loops
_BLANK = 1  # space, tab, CR (so CRLF files read), VT, FF
_NEWLINE = 2
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[[32, 9, 13, 11, 12]] = _BLANK
_CLASS[10] = _NEWLINE


@njit(cache=True, nogil=True)
def _ends_token(buf, pos, end):
    return pos >= end or _CLASS[buf[pos]] != 0


@njit(cache=True, nogil=True, inline="always")
def _starts_comment(c, comment):
    for k in range(comment.shape[0]):
        if comment[k] == c:
            return True
    return False


@njit(cache=True, nogil=True)
def _parse_long_int(buf, pos, end, neg):
    """Digits ``buf[pos:end]`` (more than 18 of them) as int64; (ok, value)."""
    while pos < end - 1 and buf[pos] == 48:  # leading zeros
        pos += 1
    if end - pos > 19:
        return False, np.int64(0)
    mag = np.int64(0)
    for q in range(pos, end):
        d = np.int64(buf[q] - 48)
        if mag > (INT64_MAX - d) // 10:
            if neg and q == end - 1 and mag == 922337203685477580 and d == 8:
                return True, np.int64(INT64_MIN)
            return False, np.int64(0)
        mag = mag * 10 + d
    return True, -mag if neg else mag


@njit(cache=True, nogil=True)
def _parse_token(buf, pos, end, allow_float):
    """Parse one token starting at ``buf[pos]`` (not blank, not newline): an integer, or with
    ``allow_float`` a decimal number with optional fraction and exponent.

    Returns (status, kind, int value, float value, position after the token); for a float the
    int value is the token's offset (numpy parses a KIND_SLOW token from there).
    """
    start = pos
    neg = False
    c = buf[pos]
    if c == 45 or c == 43:  # '-' '+'
        neg = c == 45
        pos += 1
    digits = pos
    # mantissa of at most 18 significant digits and a power of ten
    mant = np.int64(0)
    nsig = 0
    exp10 = 0
    inexact = False
    ndigits = 0
    fraction = False
    while pos < end:
        c = buf[pos]
        if c == 46 and not fraction:  # '.'
            fraction = True
            pos += 1
            continue
        if c < 48 or c > 57:
            break
        d = np.int64(c - 48)
        ndigits += 1
        if nsig < 18:
            if mant != 0 or d != 0:
                mant = mant * 10 + d
                nsig += 1
            if fraction:
                exp10 -= 1
        else:
            if not fraction:
                exp10 += 1
            if d != 0:
                inexact = True
        pos += 1
    if ndigits == 0:
        return BAD_NUMBER, KIND_INT, np.int64(0), 0.0, pos
    exponent = pos < end and (buf[pos] == 101 or buf[pos] == 69)  # 'e' 'E'
    if exponent:
        pos += 1
        eneg = False
        if pos < end and (buf[pos] == 45 or buf[pos] == 43):
            eneg = buf[pos] == 45
            pos += 1
        edigits = 0
        e = 0
        while pos < end:
            c = buf[pos]
            if c < 48 or c > 57:
                break
            if e < 100000:
                e = e * 10 + (c - 48)
            edigits += 1
            pos += 1
        if edigits == 0:
            return BAD_NUMBER, KIND_INT, np.int64(0), 0.0, pos
        exp10 += -e if eneg else e
    if not _ends_token(buf, pos, end):
        return BAD_NUMBER, KIND_INT, np.int64(0), 0.0, pos
    integer = not (fraction or exponent)
    if integer:  # past 18 significant digits, exact digit by digit
        ok, v = (True, -mant if neg else mant) if exp10 == 0 else _parse_long_int(buf, digits, pos, neg)
        if ok:
            return OK, KIND_INT, v, float(v), pos
    if not allow_float:
        return OVERFLOW if integer else NOT_INTEGER, KIND_INT, np.int64(0), 0.0, pos
    if mant == 0:
        return OK, KIND_FLOAT, np.int64(start), -0.0 if neg else 0.0, pos
    if integer or inexact or mant > _TWO53 or exp10 < -22 or exp10 > 22:
        return OK, KIND_SLOW, np.int64(start), 0.0, pos
    # Clinger: both operands are exact doubles, so one operation rounds correctly
    f = float(mant) * _POW10[exp10] if exp10 >= 0 else float(mant) / _POW10[-exp10]
    return OK, KIND_FLOAT, np.int64(start), -f if neg else f, pos


@njit(cache=True, nogil=True, inline="always")
def _next_token(buf, pos, end, allow_float):
    """`_parse_token`'s answer, a plain run of at most 18 digits read here: inlined into the
    scanners' loops, it saves the call per token (which costs 2x)."""
    tok = pos
    ival = np.int64(0)
    while pos < end:
        c = buf[pos]
        if c < 48 or c > 57:
            break
        ival = ival * 10 + (c - 48)
        pos += 1
    if pos == tok or pos - tok > 18 or (pos < end and _CLASS[buf[pos]] == 0):
        return _parse_token(buf, tok, end, allow_float)
    return OK, KIND_INT, ival, float(ival), pos


@njit(cache=True, nogil=True, inline="always")
def _skip_blanks(buf, pos, end):
    while pos < end and _CLASS[buf[pos]] == _BLANK:
        pos += 1
    return pos


@njit(cache=True, nogil=True)
def scan_table(buf, pos, end, ncols_min, ncols_max, col_kind, lo, hi, distinct01, comment, prefix,
               out_i, out_f, out_k, fmap, row, cap):
    """Parse records of ``ncols_min..ncols_max`` fields from ``buf[pos:end]``.

    Blank lines and lines whose first non-blank byte is one of ``comment`` (a
    uint8 array of the format's comment characters) are skipped. With
    ``prefix`` != 0 every record starts with that one-byte word (DIMACS ``a``). Field ``c`` of record ``r`` goes to ``out_i[c, r]``
    (integer columns, checked against ``lo[c]..hi[c]``) or, for number
    columns, to ``out_f[fmap[c], r]`` with its kind in ``out_k[fmap[c], r]``
    (``KIND_INT`` values also land in ``out_i``). Absent optional fields are
    left untouched.

    Returns ``(status, offset, rows, col)``: on success the offset is ``end``;
    otherwise the byte offset of the offending token (or record start) and
    the 0-based field.
    """
    while pos < end:
        line_start = pos
        pos = _skip_blanks(buf, pos, end)
        if pos >= end:
            break
        c = buf[pos]
        if c == 10:
            pos += 1
            continue
        if _starts_comment(c, comment):
            pos = end_of_line(buf, pos)  # pieces end at line ends: never past ``end``'s line
            continue
        if row >= cap:
            return FULL, line_start, row, 0
        if prefix != 0:
            if c != prefix or not _ends_token(buf, pos + 1, end):
                return BAD_PREFIX, pos, row, 0
            pos += 1
        col = 0
        while True:
            pos = _skip_blanks(buf, pos, end)
            if pos >= end or buf[pos] == 10:
                break
            if col >= ncols_max:
                return TOO_MANY, pos, row, col
            tok = pos
            kind_c = col_kind[col]
            status, kind, ival, fval, pos = _next_token(buf, tok, end, kind_c == COL_NUMBER)
            if status != OK:
                return status, tok, row, col
            if kind_c == COL_INT and (ival < lo[col] or ival > hi[col]):
                return OUT_OF_RANGE, tok, row, col
            out_i[col, row] = ival
            if kind_c == COL_NUMBER:
                out_k[fmap[col], row] = kind
                out_f[fmap[col], row] = fval
            col += 1
        if col < ncols_min:
            return TOO_FEW, line_start, row, col
        if distinct01 and out_i[0, row] == out_i[1, row]:
            return SAME_ENDPOINTS, line_start, row, 0
        row += 1
        pos += 1  # past the newline (or past end)
    return OK, end, row, 0


@njit(cache=True, nogil=True)
def scan_lines(buf, pos, end, comment, out_vals, line_offset, line_ntok, nlines, cap_lines, ntok):
    """Parse lines of any number of integer fields (METIS adjacency lists).

    Every line that is not a comment is a record, blank ones included. Tokens
    go to ``out_vals`` in order; ``line_offset``/``line_ntok`` get each
    record's byte offset and field count. Blank lines after ``cap_lines``
    records are ignored; a non-blank one returns FULL with its offset.

    Returns ``(status, offset, lines, tokens)``.
    """
    cap_tok = out_vals.shape[0]
    while pos < end:
        line_start = pos
        pos = _skip_blanks(buf, pos, end)
        if pos < end and _starts_comment(buf[pos], comment):
            pos = end_of_line(buf, pos)
            continue
        if nlines >= cap_lines:
            if pos < end and buf[pos] != 10:
                return FULL, line_start, nlines, ntok
            pos += 1
            continue
        first = ntok
        while True:
            pos = _skip_blanks(buf, pos, end)
            if pos >= end or buf[pos] == 10:
                break
            if ntok >= cap_tok:
                return TOO_MANY_TOKENS, pos, nlines, ntok
            tok = pos
            status, kind, ival, fval, pos = _next_token(buf, tok, end, False)
            if status != OK:
                return status, tok, nlines, ntok
            out_vals[ntok] = ival
            ntok += 1
        line_offset[nlines] = line_start
        line_ntok[nlines] = ntok - first
        nlines += 1
        pos += 1
    return OK, end, nlines, ntok


@njit(cache=True, nogil=True)
def count_newlines(buf, start, end):
    n = 0
    for i in range(start, end):
        if buf[i] == 10:
            n += 1
    return n


@njit(cache=True, nogil=True)
def end_of_line(buf, pos):
    """Offset just past the newline that ends the line holding ``pos``."""
    end = buf.shape[0]
    while pos < end and buf[pos] != 10:
        pos += 1
    return min(pos + 1, end)


@njit(cache=True, nogil=True)
def token_lengths(buf, offsets):
    out = np.empty(offsets.shape[0], dtype=np.int64)
    end = buf.shape[0]
    for i in range(offsets.shape[0]):
        p = offsets[i]
        while p < end and _CLASS[buf[p]] == 0:
            p += 1
        out[i] = p - offsets[i]
    return out


@njit(cache=True, nogil=True)
def last_of_each_pair(src, dst):
    """Mask of the edges that are the last of their (src, dst) pair, in O(m).

    Open addressing over edge indices (8 bytes a slot, load <= 1/2): a sort
    of 10**7 pairs takes seconds, this a fraction of one.
    """
    m = src.shape[0]
    size = 16
    while size < 2 * m:
        size *= 2
    mask = np.uint64(size - 1)
    slots = np.full(size, -1, dtype=np.int64)
    for i in range(m):
        h = (np.uint64(src[i]) * np.uint64(0x9E3779B97F4A7C15)
             ^ np.uint64(dst[i]) * np.uint64(0xC2B2AE3D27D4EB4F))
        h = (h ^ (h >> np.uint64(29))) & mask
        while True:
            j = slots[h]
            if j == -1 or (src[j] == src[i] and dst[j] == dst[i]):
                slots[h] = i  # a later edge replaces an earlier one
                break
            h = (h + np.uint64(1)) & mask
    keep = np.zeros(m, dtype=np.bool_)
    for h in range(size):
        if slots[h] != -1:
            keep[slots[h]] = True
    return keep


# -- helpers for callers ---------------------------------------------------------
def line_of(buf: np.ndarray, offset: int) -> int:
    """1-based line number of byte ``offset`` (only ever called on the error path)."""
    offset = min(max(int(offset), 0), buf.shape[0])
    return int(count_newlines(buf, 0, offset)) + 1


def token_text(buf: np.ndarray, offset: int, limit: int = 40) -> str:
    """The token starting at ``offset``, for messages."""
    text = (line_text(buf, offset)[:200].split() or [b""])[0].decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_slow_floats(buf: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, int]:
    """Parse the tokens at ``offsets`` (int64, at least one) with numpy (correct rounding, any length).

    Returns (values, index of the first token numpy refused or -1).
    """
    lengths = token_lengths(buf, offsets)
    width = int(lengths.max())
    cols = np.arange(width, dtype=np.int64)
    idx = offsets[:, None] + cols[None, :]
    inside = cols[None, :] < lengths[:, None]
    mat = np.zeros((offsets.size, width), dtype=np.uint8)
    mat[inside] = buf[idx[inside]]
    strings = mat.view(f"S{width}").ravel()
    try:
        return strings.astype(np.float64), -1
    except ValueError:
        for k, s in enumerate(strings):
            try:
                float(s)
            except ValueError:
                return np.zeros(0), k
        raise


# -- formatting ------------------------------------------------------------------
_PAIRS = np.frombuffer("".join(f"{k:02d}" for k in range(100)).encode(), dtype=np.uint8).copy()


@njit(cache=True, nogil=True, inline="always")
def _ndigits(u):
    n = 1
    while u >= np.uint64(10000):
        u //= np.uint64(10000)
        n += 4
    if u >= np.uint64(100):
        n += 2
        u //= np.uint64(100)
    if u >= np.uint64(10):
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _put_int(out, p, v):
    """Write int64 ``v`` in decimal at ``out[p]``; return the position after it."""
    if v < 0:
        out[p] = 45
        p += 1
        u = np.uint64(-(v + 1)) + np.uint64(1)  # |v|, exact even for INT64_MIN
    else:
        u = np.uint64(v)
    n = _ndigits(u)
    q = p + n
    hundred = np.uint64(100)
    while u >= hundred:  # two digits per step from a table
        r = np.int64(u % hundred) * 2
        u //= hundred
        q -= 2
        out[q] = _PAIRS[r]
        out[q + 1] = _PAIRS[r + 1]
    if u >= np.uint64(10):
        r = np.int64(u) * 2
        out[q - 2] = _PAIRS[r]
        out[q - 1] = _PAIRS[r + 1]
    else:
        out[q - 1] = np.uint8(np.uint64(48) + u)
    return p + n


@njit(cache=True, nogil=True, inline="always")
def _put_inf(out, p):
    out[p] = 73
    out[p + 1] = 78
    out[p + 2] = 70
    return p + 3


#: whole floats below this print as integers; 2**49 is exact in float32 and float64,
#: so numpy (which compares float32 in float32) and Numba agree on every value
_WHOLE_LIMIT = 2.0 ** 49


@njit(cache=True, nogil=True, inline="always")
def _put_float(out, p, v, strs, lens, k):
    """Whole floats as integers, the rest from numpy's repr strings; returns (p, k)."""
    if v == np.inf:
        return _put_inf(out, p), k
    if v == np.floor(v) and abs(v) < _WHOLE_LIMIT:
        return _put_int(out, p, np.int64(v)), k
    for b in range(lens[k]):
        out[p + b] = strs[k, b]
    return p + lens[k], k + 1


@njit(cache=True, nogil=True)  # nogil: the writer formats several blocks on threads
def format_rows(rows, unreachable, strs, lens, out):
    """Rows of distances as text into ``out``; returns its length. Integers: ``unreachable``
    prints as ``INF`` (``strs`` None); floats: non-whole values from `float_strings`."""
    p = 0
    k = 0
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            if j:
                out[p] = 32
                p += 1
            if strs is None:
                v = np.int64(rows[i, j])
                p = _put_inf(out, p) if v == unreachable else _put_int(out, p, v)
            else:
                p, k = _put_float(out, p, rows[i, j], strs, lens, k)
        out[p] = 10
        p += 1
    return p


@njit(cache=True, nogil=True)
def format_edges(src, dst, add, weights, strs, lens, prefix, sep, out):
    """Records ``prefix src+add sep dst+add [sep w]``, one a line, into ``out``.

    ``weights``: None (no weight), int64 (``strs`` None) or floats (non-whole values
    from ``strs``/``lens`` in order).
    """
    p = 0
    k = 0
    for r in range(src.shape[0]):
        for b in range(prefix.shape[0]):
            out[p] = prefix[b]
            p += 1
        p = _put_int(out, p, src[r] + add)
        out[p] = sep
        p = _put_int(out, p + 1, dst[r] + add)
        if weights is not None:
            out[p] = sep
            if strs is None:
                p = _put_int(out, p + 1, weights[r])
            else:
                p, k = _put_float(out, p + 1, weights[r], strs, lens, k)
        out[p] = 10
        p += 1
    return p


def float_strings(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """numpy's shortest repr of the floats `_put_float` cannot print as integers.

    Returns a (k, width) uint8 matrix and the k lengths, in row-major order.
    """
    values = np.asarray(values)
    flat = values.reshape(-1)
    whole = (flat == np.floor(flat)) & (np.abs(flat) < _WHOLE_LIMIT)
    special = ~(whole | (flat == np.inf))
    picked = flat[special]
    if picked.size == 0:
        return np.zeros((1, 1), dtype=np.uint8), np.zeros(1, dtype=np.int64)
    s = picked.astype("S32")
    mat = s.view(np.uint8).reshape(picked.size, 32)
    lens = np.count_nonzero(mat, axis=1).astype(np.int64)
    return mat, lens

# -- plumbing shared by the format modules ---------------------------------------
GZIP_MAGIC = b"\x1f\x8b"
#: bytes of formatted text per write() call; bounds a writer's extra memory
CHUNK_BYTES = 16 << 20


def is_gzip(path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def load_bytes(path) -> np.ndarray:
    """The file's bytes as a uint8 array, read into memory (decompressed when gzip).

    gzip is recognised by its magic bytes, whatever the suffix, and decompressed a
    chunk at a time, checking that the memory available can hold what has come
    out so far (a small file that expands without end stops with
    `MemoryPlanError`, not by exhausting RAM). Plain files are read, not
    memory-mapped: a file truncated by another process while a map of it is
    scanned would kill this one with SIGBUS; a read sees the change and reports it.
    """
    path = Path(path)
    with open(path, "rb", buffering=0) as f:
        gzipped = f.read(2) == GZIP_MAGIC
        f.seek(0)
        if gzipped:
            return _gunzip(path, f)
        size = os.fstat(f.fileno()).st_size
        check_memory(size, f"{path}: reading the file")
        buf = np.fromfile(f, dtype=np.uint8, count=size)
        if buf.shape[0] != size or f.read(1):
            raise GraphFormatError(path, None, f"the file changed while it was read ({size} bytes "
                                               f"when opened, {buf.shape[0]} read)")
    return buf


def _gunzip(path: Path, f) -> np.ndarray:
    """Decompress file ``f`` into one buffer grown in place (``realloc``), never past the memory
    allowed: the output is refused as soon as it outgrows the budget, before it is all in memory."""
    from ..errors import MemoryPlanError
    from ..sizes import format_size, memory_allowed

    limit, words = memory_allowed()
    out = np.empty(min(CHUNK_BYTES, limit + 1), dtype=np.uint8)
    total = 0
    try:
        with gzip.GzipFile(fileobj=f, mode="rb") as g:
            while True:
                if total == out.shape[0]:
                    if total > limit:
                        raise MemoryPlanError(
                            f"{path}: the gzip data expand to more than {format_size(limit)}, the memory "
                            f"{words}; decompressing stopped there (host_memory= sets the budget)")
                    out.resize(min(2 * total, limit + 1), refcheck=False)
                got = g.readinto(out.data[total:total + CHUNK_BYTES])
                if not got:
                    break
                total += got
    except (OSError, EOFError, zlib.error) as exc:
        raise GraphFormatError(path, None, f"corrupt gzip data ({exc})") from exc
    out.resize(total, refcheck=False)
    return out


@dataclass
class RecordSpec:
    """What one kind of record (line) of a text format looks like."""

    #: field names used in messages, e.g. ("i", "j", "w")
    names: tuple
    #: the expected record for messages, e.g. "an edge line 'i j w'"
    layout: str
    #: per field: COL_INT (checked against lo..hi) or COL_NUMBER (int or float)
    kinds: tuple
    lo: tuple
    hi: tuple
    ncols_min: int | None = None
    comment: bytes = b""
    #: one-byte word every record starts with (DIMACS b"a"), or b""
    prefix: bytes = b""
    #: fields 0 and 1 must differ (homework: i != j)
    distinct: bool = False
    self_loop_problem: str = "self-loop"


@dataclass
class Records:
    """Parsed records: ``ints[c]`` for integer fields, ``numbers[c]`` for number fields."""

    rows: int
    ints: np.ndarray
    numbers: dict
    #: where the next record starts (the buffer's end when none follows)
    offset: int


#: below this many bytes of records one thread parses them (splitting costs more than it saves)
PARALLEL_SCAN_BYTES = 8 << 20


def _scan_in_chunks(buf, pos, scan_args, fmap, widths, cap, chunks):
    """`scan_table` over ``buf[pos:]`` split at line boundaries, the pieces parsed on threads
    (the kernels release the GIL), each into its own rows of the output. Returns ``(rows,
    out_i, out_f, out_k)``, or None when a piece fails or the records outnumber ``cap``: the
    caller then scans in one pass, which finds the same first problem a single pass always did."""
    from concurrent.futures import ThreadPoolExecutor

    end = buf.shape[0]
    step = (end - pos) // chunks
    bounds = sorted({pos, end, *(int(end_of_line(buf, pos + i * step)) for i in range(1, chunks))})
    pieces = list(zip(bounds[:-1], bounds[1:]))
    with ThreadPoolExecutor(len(pieces)) as pool:
        lines = list(pool.map(lambda p: int(count_newlines(buf, p[0], p[1])), pieces))
        lines[-1] += 1  # the last line may lack its newline
        starts = np.concatenate([[0], np.cumsum(lines)]).astype(np.int64)
        total = int(starts[-1])
        if total > cap + len(pieces):  # many blank lines, or more records than allowed: no
            return None                # more rows than one pass would allocate
        out_i = np.empty((widths[0], total), dtype=np.int64)
        out_f = np.empty((widths[1], total), dtype=np.float64)
        out_k = np.empty((widths[1], total), dtype=np.uint8)

        def scan(i):
            lo, hi = pieces[i]
            return scan_table(buf, lo, hi, *scan_args, out_i, out_f, out_k, fmap,
                                int(starts[i]), int(starts[i + 1]))[:3]

        results = list(pool.map(scan, range(len(pieces))))
    if any(status != OK for status, _, _ in results):
        return None
    rows = 0
    for i, (_, _, stop) in enumerate(results):  # close the gaps left by blank and comment lines
        got = int(stop - starts[i])
        if rows != starts[i]:
            for out in (out_i, out_f, out_k):
                out[:, rows:rows + got] = out[:, int(starts[i]):int(stop)].copy()
        rows += got
    return None if rows > cap else (rows, out_i, out_f, out_k)


def scan_records(path, buf: np.ndarray, pos: int, spec: RecordSpec, count: int | None = None, *,
                 exact: tuple | None = None, byte_bound: int | None = None) -> Records:
    """Parse up to ``count`` records of ``spec`` (None: all) from ``buf[pos:]``; raise on bad ones.

    ``exact = (too_many, too_few)``: there must be ``count`` records; GraphFormatError
    ``too_many`` at the first extra one, ``too_few(rows)`` at the end of a short file. Rows
    are allocated for at most the lines left (or ``byte_bound`` records, cheaper to find),
    never for ``count`` alone, whatever a header claims. Large inputs are parsed in pieces
    on threads; the result and any error are those of one pass.
    """
    ncols = len(spec.names)
    kinds = np.asarray(spec.kinds, dtype=np.int64)
    number_cols = np.flatnonzero(kinds == COL_NUMBER).tolist()
    fmap = np.full(ncols, -1, dtype=np.int64)
    fmap[number_cols] = np.arange(len(number_cols))
    if count == 1:
        cap = 1  # a header line: no bound to find
    else:
        cap = byte_bound if byte_bound is not None else int(count_newlines(buf, pos, buf.shape[0])) + 1
        cap = max(0, cap if count is None else min(count, cap))
    scan_args = (spec.ncols_min or ncols, ncols, kinds, np.asarray(spec.lo, dtype=np.int64),
                 np.asarray(spec.hi, dtype=np.int64), spec.distinct,
                 np.frombuffer(spec.comment, dtype=np.uint8), spec.prefix[0] if spec.prefix else 0)
    split = None
    if cap > 1 and buf.shape[0] - pos >= PARALLEL_SCAN_BYTES and thread_count() > 1:
        split = _scan_in_chunks(buf, pos, scan_args, fmap, (ncols, len(number_cols)), cap,
                                min(thread_count(), 16))
    if split is not None:
        rows, out_i, out_f, out_k = split
        status, offset = OK, buf.shape[0]
    else:
        out_i = np.empty((ncols, cap), dtype=np.int64)
        out_f = np.empty((len(number_cols), cap), dtype=np.float64)
        out_k = np.empty((len(number_cols), cap), dtype=np.uint8)
        status, offset, rows, col = scan_table(buf, pos, buf.shape[0], *scan_args,
                                               out_i, out_f, out_k, fmap, 0, cap)
    if status not in (OK, FULL):
        raise scan_error(path, buf, status, offset, col, spec)
    numbers = {}
    for c in number_cols:
        f = fmap[c]
        k = out_k[f, :rows]
        if not (k != KIND_INT).any():
            numbers[c] = out_i[c, :rows]
            continue
        values = out_f[f, :rows]
        slow = np.flatnonzero(k == KIND_SLOW)
        if slow.size:
            offsets = out_i[c, slow]
            parsed, bad = parse_slow_floats(buf, offsets)
            if bad >= 0:
                raise scan_error(path, buf, BAD_NUMBER, offsets[bad], c, spec)
            values[slow] = parsed
        numbers[c] = values
    if exact is not None and status == FULL:
        if byte_bound is not None and cap < count:
            # a line shorter than any record hit the byte bound: rescan with the line count so
            # that the line's own problem is reported (malformed files only)
            return scan_records(path, buf, pos, spec, count, exact=exact)
        raise GraphFormatError(path, line_of(buf, offset), exact[0])
    if exact is not None and rows < count:
        raise GraphFormatError(path, eof_line(buf), exact[1](rows))
    return Records(rows=rows, ints=out_i[:, :rows], numbers=numbers, offset=offset)


def first_record(buf: np.ndarray, pos: int, comment: bytes) -> int | None:
    """Byte offset of the first record at or after ``pos`` (skipping blanks and
    comments), or None at end of data."""
    one, none = np.zeros(1, dtype=np.int64), np.zeros((0, 0))
    status, offset, _, _ = scan_table(buf, pos, buf.shape[0], 1, 1, one, one, one, False,
                                      np.frombuffer(comment, dtype=np.uint8), 0, np.zeros((1, 0), dtype=np.int64),
                                      none, none.astype(np.uint8), np.full(1, -1, dtype=np.int64), 0, 0)
    return int(offset) if status == FULL else None


def line_text(buf: np.ndarray, offset: int) -> bytes:
    end = min(buf.shape[0], offset + 4096)
    return bytes(buf[offset:end]).split(b"\n", 1)[0]


def scan_error(path, buf: np.ndarray, status: int, offset: int, col: int,
               spec: RecordSpec) -> GraphFormatError:
    """The `GraphFormatError` for a scanner status, naming line, field and token."""
    line = line_of(buf, offset)
    tok = token_text(buf, offset)
    name = spec.names[col] if col < len(spec.names) else f"field {col + 1}"
    integer_field = col < len(spec.kinds) and spec.kinds[col] == COL_INT
    text = line_text(buf, offset)
    lo, hi = (spec.lo[col], spec.hi[col]) if status == OUT_OF_RANGE else (0, 0)
    value = (text.split() or [b"?"])[0].decode(errors="replace")
    problem = {  # every message is built (cheap, and only once per error): one table instead of a chain
        BAD_NUMBER: f"{name} is {tok!r}, not {'an integer' if integer_field else 'a number'}; "
                    f"expected {spec.layout}",
        NOT_INTEGER: f"{name} is {tok!r}, not an integer",
        OVERFLOW: f"{name} {tok} does not fit a 64-bit integer",
        TOO_FEW: f"expected {spec.layout}, found {col} field{'s' if col != 1 else ''}",
        TOO_MANY: f"expected {spec.layout}, found an extra field {tok!r}",
        OUT_OF_RANGE: f"{name} {tok} " + (f"must be >= {lo}" if hi >= INT64_MAX
                                          else f"is out of range {lo}..{hi}"),
        SAME_ENDPOINTS: f"{' == '.join(spec.names[:2])} == {value}: {spec.self_loop_problem}",
        BAD_PREFIX: f"expected {spec.layout}, found {text[:40].decode(errors='replace')!r}",
    }.get(status, f"unreadable (scanner status {status}); expected {spec.layout}")
    return GraphFormatError(path, line, problem)


def eof_line(buf: np.ndarray) -> int:
    """The line number at which reading stopped for lack of data."""
    return line_of(buf, buf.shape[0])


# -- output ----------------------------------------------------------------------
def write_edges(f, src, dst, weights, *, add: int = 0, prefix: bytes = b"", sep: bytes = b" ") -> None:
    """Write records ``prefix src+add sep dst+add [sep w]`` in chunks of bounded size.

    Integer weights print exactly; float weights as whole numbers when they
    are, else in numpy's shortest round-trip form; ``weights=None`` writes none.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    m = src.shape[0]
    floats = weights is not None and weights.dtype.kind not in "iub"
    if weights is not None and not floats:
        weights = np.asarray(weights, dtype=np.int64)
    width = len(prefix) + 2 * 21 + (0 if weights is None else 33 if floats else 21) + 1
    step = max(1, CHUNK_BYTES // width)
    out = np.empty(min(m, step) * width + 1, dtype=np.uint8)
    for start in range(0, m, step):
        w = None if weights is None else np.ascontiguousarray(weights[start:start + step])
        strs, lens = float_strings(w) if floats else (None, None)
        nbytes = format_edges(src[start:start + step], dst[start:start + step], add, w, strs, lens,
                              np.frombuffer(prefix, dtype=np.uint8), sep[0], out)
        f.write(out[:nbytes])


def write_edge_file(path, header: str, src, dst, weights, **options) -> None:
    """``header`` and then the edge records (`write_edges` with ``options``) into ``path``, whole
    or not at all (gzip by a ``.gz`` suffix)."""
    with atomic_write(path, gz=True) as f:
        f.write(header.encode())
        write_edges(f, src, dst, weights, **options)


def last_assignment_wins(src, dst, weight):
    """Drop earlier duplicates of the same (src, dst), keeping file order of the rest.

    Writers of formats whose readers elsewhere sum (Matrix Market) or take the
    minimum (DIMACS) of parallel edges use this, so the file means the same
    graph to every tool as to apsp.
    """
    keep = last_of_each_pair(np.ascontiguousarray(src), np.ascontiguousarray(dst))
    if keep.all():
        return src, dst, weight
    return src[keep], dst[keep], weight[keep]


def check_edges(edges) -> None:
    """Refuse an EdgeList a writer cannot write faithfully."""
    if edges.m and (min(edges.src.min(), edges.dst.min()) < 0
                    or max(edges.src.max(), edges.dst.max()) >= edges.n):
        raise ValueError(f"edge endpoints must lie in 0..{edges.n - 1}")
    if edges.weight.dtype.kind not in "iubf":
        raise ValueError(f"edge weights must be numeric, got dtype {edges.weight.dtype}")
