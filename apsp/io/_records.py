"""Records out of a file's bytes: what a record looks like (`RecordSpec`), `scan_records` over the
tokenizer (`apsp.io._tokenizer`; large inputs in pieces on threads), and the messages that name the
line, field and token of the first problem (`GraphFormatError`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import GraphFormatError
from ..jit import thread_count
from ..sizes import check_memory
from ._tokenizer import (BAD_NUMBER, BAD_PREFIX, COL_INT, COL_NUMBER, FULL, INT64_MAX, KIND_INT, KIND_SLOW,
                         NOT_INTEGER, OK, OUT_OF_RANGE, OVERFLOW, SAME_ENDPOINTS, TOO_FEW, TOO_MANY,
                         count_newlines, end_of_line, scan_table, token_lengths)


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
    # the rows beside the file's bytes, and half as much again: the columns taken from them (a
    # fifth of the rows at most, measured on every reader) or, in pieces, one piece's rows moved
    # over the gaps (at most half of them): whatever the thread count, which only shrinks the piece
    rows_bytes = cap * (8 * ncols + 9 * len(number_cols))
    check_memory(rows_bytes + (rows_bytes // 2 if cap > 1 else 0), f"{path}: parsing {cap} lines", hold=True)
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
        if byte_bound is not None and count is not None and cap < count:
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
