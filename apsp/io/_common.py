"""Plumbing shared by the format modules: loading bytes, running the scanner,
turning scanner statuses into `GraphFormatError`, and opening outputs."""
from __future__ import annotations

import contextlib
import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError
from . import _text as T
from .atomic import atomic_write

GZIP_MAGIC = b"\x1f\x8b"
#: bytes of formatted text per write() call; bounds a writer's extra memory
CHUNK_BYTES = 16 << 20


def is_gzip(path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def memory_check(path, nbytes: int, what: str) -> None:
    """Refuse, before allocating, a buffer of ``nbytes`` beyond the memory allowed
    (`apsp.sizes.memory_allowed`: the user's budget, else the RAM available)."""
    from ..sizes import check_memory

    check_memory(nbytes, f"{path}: {what}")


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
    if is_gzip(path):
        return _gunzip(path)
    size = path.stat().st_size
    memory_check(path, size, "reading the file")
    buf = np.empty(size, dtype=np.uint8)
    with open(path, "rb", buffering=0) as f:
        got = 0
        view = memoryview(buf)
        while got < size:
            n = f.readinto(view[got:])
            if not n:
                break
            got += n
        if got != size or f.read(1):
            raise GraphFormatError(path, None, f"the file changed while it was read ({size} bytes "
                                               f"when opened, {got} read)")
    return buf


def _gunzip(path: Path) -> np.ndarray:
    """Decompress into one buffer grown in place (``realloc``), never past the memory allowed:
    the output is refused as soon as it outgrows the budget, before it is all in memory."""
    from ..errors import MemoryPlanError
    from ..sizes import format_size, memory_allowed

    limit, words = memory_allowed()
    out = np.empty(min(CHUNK_BYTES, limit + 1), dtype=np.uint8)
    total = 0
    try:
        with gzip.open(path, "rb") as g:
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
    #: per field: T.COL_INT (checked against lo..hi) or T.COL_NUMBER (int or float)
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
    #: T.OK, or T.FULL when a further record starts at ``offset``
    status: int
    offset: int


#: below this many bytes of records one thread parses them (splitting costs more than it saves)
PARALLEL_SCAN_BYTES = 8 << 20


def usable_cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _scan_in_chunks(buf, pos, scan_args, fmap, widths, cap, chunks):
    """`T.scan_table` over ``buf[pos:]`` split at line boundaries, the pieces parsed on threads
    (the kernels release the GIL), each into its own rows of the output. Returns ``(rows,
    out_i, out_f, out_k)``, or None when a piece fails or the records outnumber ``cap``: the
    caller then scans in one pass, which finds the same first problem a single pass always did."""
    from concurrent.futures import ThreadPoolExecutor

    end = buf.shape[0]
    step = (end - pos) // chunks
    bounds = [pos] + [int(T.end_of_line(buf, pos + i * step)) for i in range(1, chunks)] + [end]
    bounds = sorted(set(bounds))
    pieces = list(zip(bounds[:-1], bounds[1:]))
    with ThreadPoolExecutor(len(pieces)) as pool:
        lines = list(pool.map(lambda p: int(T.count_newlines(buf, p[0], p[1])), pieces))
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
            return T.scan_table(buf, lo, hi, *scan_args, out_i, out_f, out_k, fmap,
                                int(starts[i]), int(starts[i + 1]))[:3]

        results = list(pool.map(scan, range(len(pieces))))
    if any(status != T.OK for status, _, _ in results):
        return None
    rows = 0
    for i, (_, _, stop) in enumerate(results):  # close the gaps left by blank and comment lines
        got = int(stop - starts[i])
        if rows != starts[i]:
            for out in (out_i, out_f, out_k):
                out[:, rows:rows + got] = out[:, int(starts[i]):int(stop)].copy()
        rows += got
    if rows > cap:
        return None
    return rows, out_i, out_f, out_k


def scan_records(path, buf: np.ndarray, pos: int, spec: RecordSpec, cap: int) -> Records:
    """Parse up to ``cap`` records of ``spec`` from ``buf[pos:]``; raise on bad ones. Large
    inputs are parsed in pieces on threads; the result and any error are those of one pass."""
    ncols = len(spec.names)
    kinds = np.asarray(spec.kinds, dtype=np.int64)
    number_cols = [c for c in range(ncols) if kinds[c] == T.COL_NUMBER]
    fmap = np.full(ncols, -1, dtype=np.int64)
    fmap[number_cols] = np.arange(len(number_cols))
    cap = max(int(cap), 0)
    lo = np.asarray(spec.lo, dtype=np.int64)
    hi = np.asarray(spec.hi, dtype=np.int64)
    scan_args = (spec.ncols_min or ncols, ncols, kinds, lo, hi, spec.distinct,
                 T.comment_mask(spec.comment), spec.prefix[0] if spec.prefix else 0)
    chunks = min(usable_cores(), 16)
    split = None
    if chunks > 1 and buf.shape[0] - pos >= PARALLEL_SCAN_BYTES and cap > 1:
        split = _scan_in_chunks(buf, pos, scan_args, fmap, (ncols, len(number_cols)), cap, chunks)
    if split is not None:
        rows, out_i, out_f, out_k = split
        status, offset = T.OK, buf.shape[0]
    else:
        out_i = np.empty((ncols, cap), dtype=np.int64)
        out_f = np.empty((len(number_cols), cap), dtype=np.float64)
        out_k = np.empty((len(number_cols), cap), dtype=np.uint8)
        status, offset, rows, col = T.scan_table(buf, pos, buf.shape[0], *scan_args,
                                                 out_i, out_f, out_k, fmap, 0, cap)
    if status not in (T.OK, T.FULL):
        raise scan_error(path, buf, status, offset, col, spec)
    numbers = {}
    for c in number_cols:
        f = fmap[c]
        k = out_k[f, :rows]
        if not (k != T.KIND_INT).any():
            numbers[c] = out_i[c, :rows]
            continue
        values = out_f[f, :rows]
        slow = np.flatnonzero(k == T.KIND_SLOW)
        if slow.size:
            offsets = out_i[c, slow]
            parsed, bad = T.parse_slow_floats(buf, offsets)
            if bad >= 0:
                raise scan_error(path, buf, T.BAD_NUMBER, offsets[bad], c, spec)
            values[slow] = parsed
        numbers[c] = values
    return Records(rows=rows, ints=out_i[:, :rows], numbers=numbers, status=status, offset=offset)


def scan_counted(path, buf: np.ndarray, pos: int, spec: RecordSpec, count: int, too_many: str,
                 too_few, byte_bound: int | None = None) -> Records:
    """Exactly ``count`` records of ``spec`` from ``buf[pos:]``: GraphFormatError ``too_many`` at
    the first extra record, ``too_few(rows)`` at the end of a short file.

    Rows are allocated for at most the lines left (or ``byte_bound`` records, cheaper to find),
    never for ``count`` alone, whatever a header claims."""
    def line_bound():
        return min(count, int(T.count_newlines(buf, pos, buf.shape[0])) + 1)

    cap = line_bound() if byte_bound is None else min(count, byte_bound)
    rec = scan_records(path, buf, pos, spec, cap=cap)
    if rec.status == T.FULL and byte_bound is not None and cap < count:
        # a line shorter than any record hit the byte bound: rescan with the line count so that
        # the line's own problem is reported (malformed files only)
        rec = scan_records(path, buf, pos, spec, cap=line_bound())
    if rec.status == T.FULL:
        raise GraphFormatError(path, T.line_of(buf, rec.offset), too_many)
    if rec.rows < count:
        raise GraphFormatError(path, eof_line(buf), too_few(rec.rows))
    return rec


def first_record(buf: np.ndarray, pos: int, comment: bytes) -> int | None:
    """Byte offset of the first record at or after ``pos`` (skipping blanks and
    comments), or None at end of data."""
    spec_i = np.zeros((1, 0), dtype=np.int64)
    spec_f = np.zeros((0, 0), dtype=np.float64)
    spec_k = np.zeros((0, 0), dtype=np.uint8)
    one = np.zeros(1, dtype=np.int64)
    status, offset, _, _ = T.scan_table(buf, pos, buf.shape[0], 1, 1, one, one, one, False,
                                        T.comment_mask(comment), 0, spec_i, spec_f, spec_k,
                                        np.full(1, -1, dtype=np.int64), 0, 0)
    return int(offset) if status == T.FULL else None


def line_text(buf: np.ndarray, offset: int) -> bytes:
    end = min(buf.shape[0], offset + 4096)
    return bytes(buf[offset:end]).split(b"\n", 1)[0]


def estimate_records(buf: np.ndarray, pos: int) -> int:
    """An upper bound on the records in ``buf[pos:]``: its number of lines."""
    return int(T.count_newlines(buf, pos, buf.shape[0])) + 1


def _range_text(lo, hi) -> str:
    if hi >= T.INT64_MAX:
        return f"must be >= {lo}"
    return f"is out of range {lo}..{hi}"


def scan_error(path, buf: np.ndarray, status: int, offset: int, col: int,
               spec: RecordSpec) -> GraphFormatError:
    """The `GraphFormatError` for a scanner status, naming line, field and token."""
    line = T.line_of(buf, offset)
    tok = T.token_text(buf, offset)
    name = spec.names[col] if col < len(spec.names) else f"field {col + 1}"
    integer_field = col < len(spec.kinds) and spec.kinds[col] == T.COL_INT
    if status == T.BAD_NUMBER:
        problem = (f"{name} is {tok!r}, not {'an integer' if integer_field else 'a number'}; "
                   f"expected {spec.layout}")
    elif status == T.NOT_INTEGER:
        problem = f"{name} is {tok!r}, not an integer"
    elif status == T.OVERFLOW:
        problem = f"{name} {tok} does not fit a 64-bit integer"
    elif status == T.TOO_FEW:
        problem = f"expected {spec.layout}, found {col} field{'s' if col != 1 else ''}"
    elif status == T.TOO_MANY:
        problem = f"expected {spec.layout}, found an extra field {tok!r}"
    elif status == T.OUT_OF_RANGE:
        problem = f"{name} {tok} {_range_text(spec.lo[col], spec.hi[col])}"
    elif status == T.SAME_ENDPOINTS:
        first = line_text(buf, offset).split()
        value = first[0].decode(errors="replace") if first else "?"
        problem = f"{spec.names[0]} == {spec.names[1]} == {value}: {spec.self_loop_problem}"
    elif status == T.BAD_PREFIX:
        problem = f"expected {spec.layout}, found {line_text(buf, offset)[:40].decode(errors='replace')!r}"
    else:
        problem = f"unreadable (scanner status {status}); expected {spec.layout}"
    return GraphFormatError(path, line, problem)


def eof_line(buf: np.ndarray) -> int:
    """The line number at which reading stopped for lack of data."""
    return T.line_of(buf, buf.shape[0])


# -- output ----------------------------------------------------------------------
@contextlib.contextmanager
def open_output(path):
    """A binary file replacing ``path`` whole on success; gzip when it ends in ``.gz``."""
    name = Path(path)
    with atomic_write(path) as f:  # the name as given: a trailing separator is refused there
        if name.suffix == ".gz":
            # mtime=0: the same data give the same bytes
            with gzip.GzipFile(filename=name.stem, mode="wb", fileobj=f, compresslevel=6,
                               mtime=0) as g:
                yield g
        else:
            yield f


def write_edges(f, src, dst, weights, *, add: int = 0, prefix: bytes = b"", sep: bytes = b" ") -> None:
    """Write records ``prefix src+add sep dst+add [sep w]`` in chunks of bounded size.

    Integer weights print exactly; float weights as whole numbers when they
    are, else in numpy's shortest round-trip form; ``weights=None`` writes none.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    m = src.shape[0]
    pre = np.frombuffer(prefix, dtype=np.uint8).copy()
    has_iw = weights is not None and weights.dtype.kind in "iub"
    has_fw = weights is not None and not has_iw
    if has_iw:
        weights = np.asarray(weights, dtype=np.int64)
    width = len(pre) + 2 * 21 + (21 if has_iw else 0) + (33 if has_fw else 0) + 1
    step = max(1, CHUNK_BYTES // width)
    out = np.empty(min(m, step) * width + 1, dtype=np.uint8)
    no_strs, no_lens = np.zeros((1, 1), dtype=np.uint8), np.zeros(1, dtype=np.int64)
    no_iw, no_fw = np.zeros(0, dtype=np.int64), np.zeros(0)
    for start in range(0, m, step):
        stop = min(m, start + step)
        iw = weights[start:stop] if has_iw else no_iw
        fw = np.ascontiguousarray(weights[start:stop]) if has_fw else no_fw
        strs, lens = T.float_strings(fw) if has_fw else (no_strs, no_lens)
        nbytes = T.format_edges(src[start:stop], dst[start:stop], add, iw, has_iw, fw, has_fw,
                                strs, lens, pre, sep[0], out)
        f.write(out[:nbytes])


def last_assignment_wins(src, dst, weight):
    """Drop earlier duplicates of the same (src, dst), keeping file order of the rest.

    Writers of formats whose readers elsewhere sum (Matrix Market) or take the
    minimum (DIMACS) of parallel edges use this, so the file means the same
    graph to every tool as to apsp.
    """
    keep = T.last_of_each_pair(np.ascontiguousarray(src), np.ascontiguousarray(dst))
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
