"""The Numba tokenizer and number parser every text format reads through.

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
values); the rest are handed back by offset and parsed by numpy
(`apsp.io._records.parse_slow_floats`), which rounds correctly. Either way
every float is the correctly rounded value.
"""
from __future__ import annotations

import numpy as np
from numba import njit

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

