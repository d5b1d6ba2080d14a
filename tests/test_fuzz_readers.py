"""Fuzzing every graph reader: any input gives a graph or a clean error, and valid input the right graph.

Three kinds of input per reader, drawn by hypothesis:

* garbage: random bytes, and "token soup" built from the pieces the format is
  made of (numbers at the int64 limits, signs, exponents, banners, comment
  marks, CR/LF, NUL, non-ASCII);
* valid files generated from a known graph with random layout (blank lines,
  comments, tabs, CRLF, signs, leading zeros, gzip): the reader must return
  exactly that graph;
* valid files with random mutations (bytes deleted, inserted, replaced,
  lines duplicated, swapped or cut).

For the text formats every input is also read by an independent slow parser
(`slow_readers`): when it accepts, the fast reader must return the same graph;
when it refuses, the fast reader must raise `GraphFormatError`. Otherwise a
reader may only return a well-formed `EdgeList` (ids inside 0..n-1) or raise
`GraphFormatError`/`ValueError`, within a few seconds (no hangs).

By default each target runs a short fixed number of examples (CI). The
dedicated mode runs each target for a number of seconds, in batches with
fresh seeds::

    APSP_FUZZ_SECONDS=300 python -m pytest tests/test_fuzz_readers.py -p no:cacheprovider

(``NUMBA_BOUNDSCHECK=1`` in addition turns an out-of-bounds read in a Numba
scanner into an IndexError the test reports, instead of undefined behaviour.)
"""
from __future__ import annotations

import gzip
import io
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import slow_readers as slow
from apsp.errors import GraphFormatError
from apsp.graph import EdgeList
from apsp.io import dimacs, edgelist, graphml, homework, metis, mtx, npy, read_graph

FUZZ_SECONDS = float(os.environ.get("APSP_FUZZ_SECONDS", "0") or 0)
#: examples per target in the default (CI) run
CI_EXAMPLES = int(os.environ.get("APSP_FUZZ_EXAMPLES", "60"))
#: a read of a file of a few KB that takes longer than this is a hang
HANG_SECONDS = 5.0

READERS = {"homework": homework.read_graph, "snap": edgelist.read_graph, "mtx": mtx.read_graph,
           "dimacs": dimacs.read_graph, "metis": metis.read_graph}
SUFFIX = {"homework": ".txt", "snap": ".snap", "mtx": ".mtx", "dimacs": ".gr", "metis": ".graph",
          "graphml": ".graphml", "npy": ".npy"}

_WORKDIR = Path(tempfile.mkdtemp(prefix="apsp-fuzz-"))


def run_target(test) -> None:
    """Run a @given test: CI_EXAMPLES examples, or batches until APSP_FUZZ_SECONDS have passed."""
    base = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))
    if FUZZ_SECONDS <= 0:
        settings(max_examples=CI_EXAMPLES, **base)(test)()
        return
    stop = time.monotonic() + FUZZ_SECONDS
    batches = 0
    batch = settings(max_examples=300, **base)(test)
    while time.monotonic() < stop:
        batch()  # each call draws fresh examples (no database, random seed)
        batches += 1
    print(f"{test.__name__}: {batches} batches of 300 examples in {FUZZ_SECONDS:.0f} s")


def write_input(fmt: str, data: bytes, gz: bool = False) -> Path:
    path = _WORKDIR / f"in{SUFFIX[fmt]}{'.gz' if gz else ''}"
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def read_clean(reader, path):
    """The reader's EdgeList, or None when it refused cleanly; anything else fails the test."""
    t0 = time.perf_counter()
    try:
        out = reader(path)
    except GraphFormatError as exc:
        assert str(path) in str(exc) or exc.path == str(path), f"error does not name the file: {exc}"
        out = None
    except ValueError:
        out = None
    elapsed = time.perf_counter() - t0
    assert elapsed < HANG_SECONDS, f"reading {path.stat().st_size} bytes took {elapsed:.1f} s"
    if isinstance(out, EdgeList):
        m = out.m
        assert out.n >= 0 and out.src.shape == out.dst.shape == out.weight.shape == (m,)
        assert out.src.dtype == out.dst.dtype == np.int64
        assert out.weight.dtype in (np.int64, np.float64), out.weight.dtype
        if m:
            assert 0 <= out.src.min() and out.src.max() < out.n, "source id outside 0..n-1"
            assert 0 <= out.dst.min() and out.dst.max() < out.n, "target id outside 0..n-1"
    return out


def same_graph(out: EdgeList, expect) -> None:
    n, src, dst, w = expect
    assert out.n == n
    assert out.src.tolist() == list(src)
    assert out.dst.tolist() == list(dst)
    floats = any(isinstance(x, float) for x in w)
    if len(w):  # no weights say nothing about their type (an empty 'real' .mtx reads as float64)
        assert out.weight.dtype.kind == ("f" if floats else "i"), (out.weight.dtype, w[:5])
    assert out.weight.tolist() == list(w)


def check_against_oracle(fmt: str, data: bytes, gz: bool = False) -> None:
    """Fast reader and slow parser agree: same graph, or both refuse."""
    path = write_input(fmt, data, gz)
    out = read_clean(READERS[fmt], path)
    try:
        expect = slow.ORACLES[fmt](data)
    except slow.Invalid as why:
        assert out is None, f"{fmt} reader accepted what the slow parser refuses ({why}): {data[:300]!r}"
        return
    assert out is not None, f"{fmt} reader refused a valid file: {data[:300]!r}"
    same_graph(out, expect)


# ----------------------------------------------------------------------------- strategies
_COMMON = [b" ", b"  ", b"\t", b"\n", b"\n", b"\n", b"\r\n", b"\r", b"\x0b", b"\x0c", b"-", b"+", b".",
           b"e", b"E", b"0", b"1", b"2", b"3", b"7", b"00", b"-1", b"+2", b"1.5", b"-0.0", b".5", b"5.",
           b"1e3", b"1e-3", b"1e308", b"1e400", b"2.5e-400", b"12345678901234567890",
           b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808",
           b"-9223372036854775809", b"0.1234567890123456789", b"\x00", b"\xff", b"\xc3\xa9", b"#", b"%",
           b"x", b"inf", b"nan"]
_EXTRA = {
    "homework": [],
    "snap": [b"# Nodes: ", b"Nodes: 9", b"# comment", b"% x"],
    "mtx": [b"%%MatrixMarket matrix coordinate ", b"%%matrixmarket", b"matrix", b"coordinate", b"array",
            b"real", b"integer", b"pattern", b"complex", b"general", b"symmetric", b"skew-symmetric",
            b"hermitian"],
    "dimacs": [b"c ", b"p sp ", b"p", b"sp", b"a ", b"a", b"c"],
    "metis": [b"%", b"% c", b"011", b"10", b"11", b"0001"],
}


def token_soup(fmt: str):
    piece = st.one_of(st.sampled_from(_COMMON + _EXTRA.get(fmt, [])),
                      st.integers(-3, 12).map(lambda v: str(v).encode()),
                      st.binary(min_size=1, max_size=3))
    return st.lists(piece, max_size=80).map(b"".join)


def garbage(fmt: str):
    return st.one_of(st.binary(max_size=600), token_soup(fmt))


def _int_token(draw, v: int) -> bytes:
    """An integer as text, sometimes with a '+' or leading zeros (both valid)."""
    style = draw(st.integers(0, 9))
    if style == 0 and v >= 0:
        return b"+" + str(v).encode()
    if style == 1 and v >= 0:
        return b"00" + str(v).encode()
    return str(v).encode()


def _float_token(draw, x: float) -> bytes:
    style = draw(st.integers(0, 3))
    if style == 0:
        return repr(x).encode()
    if style == 1:
        return f"{x:.17e}".encode()
    return f"{x!r}".upper().encode() if "e" in repr(x) else repr(x).encode()


_WEIGHT_INTS = st.one_of(st.integers(-100, 100), st.integers(-2 ** 63, 2 ** 63 - 1))
_WEIGHT_FLOATS = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def layout(draw, records, comment=None, sep_choices=(b" ", b"  ", b"\t", b" \t")):
    """Lines of fields joined with random blanks, blank lines, trailing blanks, comments, CRLF."""
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    out = []
    for fields in records:
        while draw(st.integers(0, 9)) == 0:
            out.append(draw(st.sampled_from([b"", b"  ", b"\t"])))
        if comment is not None and draw(st.integers(0, 9)) == 0:
            out.append(comment + b" " + draw(st.sampled_from([b"note", b"1 2 3", b"", b"Nodes"])))
        sep = draw(st.sampled_from(sep_choices))
        lead = draw(st.sampled_from([b"", b"", b" "]))
        trail = draw(st.sampled_from([b"", b"", b" ", b"\t"]))
        out.append(lead + sep.join(fields) + trail)
    text = eol.join(out)
    if draw(st.booleans()):
        text += eol
    return text


@st.composite
def valid_homework(draw):
    n = draw(st.integers(1, 25))
    m = draw(st.integers(0, 30)) if n > 1 else 0
    edges = []
    for _ in range(m):
        i = draw(st.integers(1, n))
        j = draw(st.integers(1, n).filter(lambda j, i=i: j != i))
        edges.append((i, j, draw(_WEIGHT_INTS)))
    recs = [[_int_token(draw, n), _int_token(draw, m)]]
    recs += [[_int_token(draw, i), _int_token(draw, j), _int_token(draw, w)] for i, j, w in edges]
    text = draw(layout(recs))
    return text, (n, [i - 1 for i, _, _ in edges], [j - 1 for _, j, _ in edges], [w for *_, w in edges])


@st.composite
def valid_snap(draw):
    n = draw(st.integers(0, 25))
    m = draw(st.integers(0, 30)) if n else 0
    weighted = draw(st.booleans())
    floats = weighted and draw(st.booleans())
    src = [draw(st.integers(0, n - 1)) for _ in range(m)]
    dst = [draw(st.integers(0, n - 1)) for _ in range(m)]
    w = [draw(_WEIGHT_FLOATS if floats and draw(st.booleans()) else _WEIGHT_INTS) for _ in range(m)]
    if floats and m and not any(isinstance(x, float) for x in w):
        w[0] = 0.5
    recs = []
    for k in range(m):
        f = [_int_token(draw, src[k]), _int_token(draw, dst[k])]
        if weighted:
            f.append(_float_token(draw, w[k]) if isinstance(w[k], float) else _int_token(draw, w[k]))
        recs.append(f)
    declared = draw(st.one_of(st.none(), st.integers(0, 30)))
    head = b"" if declared is None else f"# Directed graph\n# Nodes: {declared} Edges: {m}\n".encode()
    text = head + draw(layout(recs, comment=draw(st.sampled_from([None, b"#", b"%"])),
                              sep_choices=(b"\t", b" ", b" \t ")))
    weights = w if weighted else [1] * m
    if any(isinstance(x, float) for x in weights):
        weights = [float(x) for x in weights]
    return text, (*slow.snap_vertices(src, dst, declared), weights)


@st.composite
def valid_mtx(draw):
    field = draw(st.sampled_from(["real", "integer", "pattern"]))
    symmetry = draw(st.sampled_from(["general", "symmetric"] + ([] if field == "pattern" else ["skew-symmetric"])))
    n = draw(st.integers(0, 20))
    m = draw(st.integers(0, 25)) if n else 0
    rows = [draw(st.integers(1, n)) for _ in range(m)]
    cols = [draw(st.integers(1, n)) for _ in range(m)]
    if field == "integer":  # the mirror of a skew-symmetric entry must fit int64 too
        vals = [draw(st.integers(-2 ** 63 + 1, 2 ** 63 - 1)) for _ in range(m)]
    elif field == "real":
        vals = [draw(_WEIGHT_FLOATS) for _ in range(m)]
    else:
        vals = [1] * m
    recs = [[_int_token(draw, n), _int_token(draw, n), _int_token(draw, m)]]
    for k in range(m):
        f = [_int_token(draw, rows[k]), _int_token(draw, cols[k])]
        if field == "integer":
            f.append(_int_token(draw, vals[k]))
        elif field == "real":
            f.append(_float_token(draw, vals[k]))
        recs.append(f)
    banner = draw(st.sampled_from(["%%MatrixMarket", "%%matrixmarket", "%%MATRIXMARKET"]))
    text = f"{banner} matrix coordinate {field} {symmetry}\n".encode() + draw(layout(recs, comment=b"%"))
    src, dst = [r - 1 for r in rows], [c - 1 for c in cols]
    w = [float(v) for v in vals] if field == "real" else vals
    if symmetry != "general":
        off = [k for k in range(m) if src[k] != dst[k]]
        sign = -1 if symmetry == "skew-symmetric" else 1
        src, dst, w = (src + [dst[k] for k in off], dst + [src[k] for k in off],
                       w + [sign * w[k] if sign < 0 else w[k] for k in off])
    return text, (n, src, dst, w)


@st.composite
def valid_dimacs(draw):
    n = draw(st.integers(0, 25))
    m = draw(st.integers(0, 30)) if n else 0
    floats = draw(st.booleans())
    arcs = [(draw(st.integers(1, n)), draw(st.integers(1, n)),
             draw(_WEIGHT_FLOATS if floats and draw(st.booleans()) else _WEIGHT_INTS)) for _ in range(m)]
    recs = [[b"p", b"sp", str(n).encode(), str(m).encode()]]
    recs += [[b"a", _int_token(draw, u), _int_token(draw, v),
              _float_token(draw, w) if isinstance(w, float) else _int_token(draw, w)] for u, v, w in arcs]
    text = draw(layout(recs, comment=b"c"))
    w = [w for *_, w in arcs]
    if any(isinstance(x, float) for x in w):
        w = [float(x) for x in w]
    return text, (n, [u - 1 for u, _, _ in arcs], [v - 1 for _, v, _ in arcs], w)


@st.composite
def valid_metis(draw):
    n = draw(st.integers(0, 15))
    fmt = draw(st.sampled_from(["", "0", "1", "10", "11", "001", "010", "011", "100", "101", "110", "111"]))
    f3 = fmt.zfill(3) if fmt else "000"
    has_size, has_vw, has_ew = f3[0] == "1", f3[1] == "1", f3[2] == "1"
    ncon = draw(st.integers(1, 3)) if has_vw and draw(st.booleans()) else None
    pairs = set()
    for _ in range(draw(st.integers(0, 20)) if n > 1 else 0):
        u, v = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if u != v:
            pairs.add((min(u, v), max(u, v)))
    weight = {p: draw(st.integers(-50, 50)) for p in sorted(pairs)}
    nbrs = {v: [] for v in range(n)}
    for (u, v), w in weight.items():
        nbrs[u].append((v, w))
        nbrs[v].append((u, w))
    head = [str(n).encode(), str(len(pairs)).encode()]
    if fmt:
        head.append(fmt.encode())
        if ncon is not None:
            head.append(str(ncon).encode())
    lines = [b" ".join(head)]
    src, dst, w = [], [], []
    for v in range(n):
        draw(st.randoms()).shuffle(nbrs[v])
        fields = []
        if has_size:
            fields.append(str(draw(st.integers(1, 9))).encode())
        if has_vw:
            fields += [str(draw(st.integers(0, 9))).encode() for _ in range(ncon or 1)]
        for u, x in nbrs[v]:
            fields.append(str(u + 1).encode())
            if has_ew:
                fields.append(str(x).encode())
            src.append(v)
            dst.append(u)
            w.append(x if has_ew else 1)
        lines.append(b" ".join(fields))
        if draw(st.integers(0, 7)) == 0:
            lines.append(b"% a comment")
    if draw(st.booleans()):
        lines.insert(0, b"% METIS graph")
    return b"\n".join(lines) + b"\n", (n, src, dst, w)


VALID = {"homework": valid_homework, "snap": valid_snap, "mtx": valid_mtx, "dimacs": valid_dimacs,
         "metis": valid_metis}


@st.composite
def mutated(draw, valid):
    """A valid file with a few random edits."""
    data, _ = draw(valid())
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 6))
        at = draw(st.integers(0, len(buf)))
        if op == 0 and buf:  # delete a range
            del buf[at:at + draw(st.integers(1, 8))]
        elif op == 1:  # insert a piece
            buf[at:at] = draw(st.sampled_from(_COMMON))
        elif op == 2 and at < len(buf):  # replace one byte
            buf[at] = draw(st.integers(0, 255))
        elif op == 3:  # truncate
            del buf[at:]
        else:  # duplicate, drop or swap lines
            lines = bytes(buf).split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if op == 4:
                lines.insert(j, lines[k])
            elif op == 5:
                del lines[k]
            else:
                lines[k], lines[j] = lines[j], lines[k]
            buf = bytearray(b"\n".join(lines))
    return bytes(buf)


# ----------------------------------------------------------------------------- text formats
TEXT_FORMATS = ["homework", "snap", "mtx", "dimacs", "metis"]


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_garbage_is_refused_cleanly_or_read_like_the_slow_parser(fmt):
    @given(data=garbage(fmt), gz=st.booleans())
    def garbage_input(data, gz):
        check_against_oracle(fmt, data, gz)

    run_target(garbage_input)


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_valid_files_read_exactly(fmt):
    @given(case=VALID[fmt](), gz=st.booleans())
    def valid_input(case, gz):
        data, truth = case
        assert slow.ORACLES[fmt](data) == truth  # the slow parser reads the generator's graph
        out = read_clean(READERS[fmt], write_input(fmt, data, gz))
        assert out is not None, f"{fmt} reader refused a valid file: {data[:300]!r}"
        same_graph(out, truth)

    run_target(valid_input)


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_mutated_files_match_the_slow_parser(fmt):
    @given(data=mutated(VALID[fmt]))
    def mutated_input(data):
        check_against_oracle(fmt, data)

    run_target(mutated_input)


def test_dispatcher_sniffing_on_garbage():
    """read_graph on a .txt file guesses the format from its first bytes; never crashes."""
    @given(data=st.one_of(*(token_soup(f) for f in TEXT_FORMATS)))
    def sniffed(data):
        path = _WORKDIR / "sniff.txt"
        path.write_bytes(data)
        read_clean(read_graph, path)

    run_target(sniffed)


def test_corrupt_gzip_is_a_clean_error():
    @given(data=st.binary(max_size=200), fmt=st.sampled_from(TEXT_FORMATS + ["npy", "graphml"]))
    def corrupt(data, fmt):
        path = _WORKDIR / f"c{SUFFIX[fmt]}.gz"
        good = gzip.compress(b"1 0\n" + data)
        path.write_bytes(good[:len(good) // 2] + data)  # a damaged stream behind a gzip header
        reader = READERS.get(fmt) or {"npy": npy.read_graph, "graphml": graphml.read_graph}[fmt]
        t0 = time.perf_counter()
        try:
            reader(path)
        except (GraphFormatError, ValueError):
            pass
        assert time.perf_counter() - t0 < HANG_SECONDS

    run_target(corrupt)


# ----------------------------------------------------------------------------- npy
_NPY_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
               "float32", "float64", "bool"]


@st.composite
def npy_arrays(draw):
    n = draw(st.integers(0, 8))
    dt = np.dtype(draw(st.sampled_from(_NPY_DTYPES)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    a = (rng.integers(0, 100, size=(n, n)) if dt.kind != "f" else rng.normal(size=(n, n)) * 50).astype(dt)
    if draw(st.booleans()):
        a = np.asfortranarray(a)
    return a


def _npy_bytes(a) -> bytes:
    f = io.BytesIO()
    np.save(f, a, allow_pickle=False)
    return f.getvalue()


def test_npy_valid_arrays_read_exactly():
    @given(a=npy_arrays(), gz=st.booleans())
    def valid_npy(a, gz):
        out = npy.read_graph(write_input("npy", _npy_bytes(a), gz))
        assert out.dtype == a.dtype and np.array_equal(out, a)

    run_target(valid_npy)


def test_npy_garbage_and_damaged_headers():
    @st.composite
    def damaged(draw):
        data = bytearray(_npy_bytes(draw(npy_arrays())))
        kind = draw(st.integers(0, 4))
        if kind == 0:
            return draw(st.binary(max_size=300))
        if kind == 1:  # edit the header text (shape, dtype, order)
            end = data.index(b"\n") if b"\n" in data else len(data)
            at = draw(st.integers(10, max(10, end - 1)))
            data[at:at + 1] = draw(st.sampled_from([b"9", b"99999999", b"(", b",", b"'", b"<f8", b"O",
                                                    b"True", b"-1", b"", b" " * 3]))
        elif kind == 2:
            del data[draw(st.integers(0, len(data))):]
        elif kind == 3:
            return b"PK\x03\x04" + draw(st.binary(max_size=100))  # looks like .npz, is not
        else:
            return b"\x93NUMPY\x01\x00" + draw(st.binary(max_size=100))
        return bytes(data)

    @given(data=damaged(), gz=st.booleans())
    def npy_input(data, gz):
        path = write_input("npy", data, gz)
        t0 = time.perf_counter()
        try:
            a = npy.read_graph(path)
        except (GraphFormatError, ValueError):
            a = None
        assert time.perf_counter() - t0 < HANG_SECONDS
        if a is not None:
            assert a.ndim == 2 and a.shape[0] == a.shape[1] and a.dtype.kind in "biuf"

    run_target(npy_input)


def test_npy_that_looks_like_a_zip_archive():
    for gz in (False, True):  # numpy's np.load raised zipfile.BadZipFile here
        with pytest.raises(GraphFormatError, match="archive"):
            npy.read_graph(write_input("npy", b"PK\x03\x04not a zip at all", gz))


def test_npy_header_with_a_boolean_in_its_shape():
    header = b"{'descr': '|i1', 'fortran_order': False, 'shape': (1, True), }"
    data = b"\x93NUMPY\x01\x00" + len(header + b"\n").to_bytes(2, "little") + header + b"\n" + b"U"
    for gz in (False, True):
        with pytest.raises(GraphFormatError, match="not made of integers"):
            npy.read_graph(write_input("npy", data, gz))


def test_mtx_skew_symmetric_int64_min_names_its_line():
    path = write_input("mtx", b"%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n% c\n"
                              b"2 1 5\n\n3 1 -9223372036854775808\n")
    with pytest.raises(GraphFormatError, match=r"in\.mtx:6: value -9223372036854775808 has no int64"):
        mtx.read_graph(path)


def test_npy_gzip_with_a_huge_declared_shape_is_refused_without_allocating():
    header = {"descr": "<f8", "fortran_order": False, "shape": (3_000_000, 3_000_000)}
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, header)
    path = write_input("npy", f.getvalue() + b"\0" * 64, gz=True)
    with pytest.raises(GraphFormatError, match="shape|bytes"):
        npy.read_graph(path)


# ----------------------------------------------------------------------------- graphml
@st.composite
def nx_graphs(draw):
    import networkx as nx

    directed = draw(st.booleans())
    g = nx.DiGraph() if directed else nx.Graph()
    n = draw(st.integers(0, 10))
    names = [draw(st.sampled_from(["v", "node", "x y", "é", "<&>"])) + str(k) for k in range(n)]
    g.add_nodes_from(names)
    kind = draw(st.sampled_from(["none", "int", "float", "mixed"]))
    for _ in range(draw(st.integers(0, 15)) if n else 0):
        u, v = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        if kind == "none":
            g.add_edge(u, v)
        else:
            w = draw(st.integers(-1000, 1000)) if kind == "int" else draw(_WEIGHT_FLOATS)
            if kind == "mixed" and draw(st.booleans()):
                g.add_edge(u, v)
            else:
                g.add_edge(u, v, weight=w)
    return g


def test_graphml_valid_graphs_read_exactly():
    import networkx as nx

    @given(g=nx_graphs(), gz=st.booleans())
    def valid_graphml(g, gz):
        f = io.BytesIO()
        nx.write_graphml(g, f)
        out = read_clean(graphml.read_graph, write_input("graphml", f.getvalue(), gz))
        assert out is not None
        index = {v: k for k, v in enumerate(g.nodes)}
        triples = [(index[u], index[v], d.get("weight", 1)) for u, v, d in g.edges(data=True)]
        if not g.is_directed():
            triples += [(b, a, w) for a, b, w in triples if a != b]
        src, dst, w = zip(*triples) if triples else ((), (), ())
        if any(isinstance(x, float) for x in w):
            w = [float(x) for x in w]
        same_graph(out, (len(index), src, dst, list(w)))

    run_target(valid_graphml)


def test_graphml_garbage():
    pieces = [b"<?xml version='1.0'?>", b"<graphml>", b"</graphml>", b"<graph edgedefault='directed'>",
              b"<graph>", b"</graph>", b"<node id='a'/>", b"<node id='b'/>", b"<edge source='a' target='b'/>",
              b"<edge source='a' target='zz'/>", b"<key id='d0' for='edge' attr.name='weight' attr.type='int'/>",
              b"<key id='d0' for='edge' attr.name='weight' attr.type='string'/>",
              b"<key id='d0' for='edge' attr.name='weight' attr.type='boolean'/>",
              b"<key id='d0' for='node' attr.name='weight' attr.type='double'/>",
              b"<data key='d0'>", b"</data>", b"3", b"x", b"1e999", b"<edge source='a' target='b'>",
              b"</edge>", b"<hyperedge/>", b"<port name='p'/>", b"<default>", b"</default>", b"&amp;", b"&x;",
              b"<!DOCTYPE g [<!ENTITY x 'y'>]>", b"\x00", b"\xff"]

    @given(data=st.one_of(st.binary(max_size=300),
                          st.lists(st.sampled_from(pieces), max_size=25).map(b"".join)))
    def graphml_input(data):
        read_clean(graphml.read_graph, write_input("graphml", data))

    run_target(graphml_input)


# ----------------------------------------------------------------------------- regressions found by fuzzing
@pytest.mark.parametrize("case", [
    # each line: format, input, what the reader must do
    ("mtx", b"%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n1 2 -9223372036854775808\n",
     "refuse"),
    ("mtx", b"%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 2\n%c\n1 1 -9223372036854775808\n"
            b"\n2 1 -9223372036854775807\n", "read"),
])
def test_fuzz_regressions(case):
    fmt, data, expect = case
    check_against_oracle(fmt, data)
    out = read_clean(READERS[fmt], write_input(fmt, data))
    assert (out is None) == (expect == "refuse")


def test_slow_parsers_on_hand_written_files():
    """The oracles themselves, on one file of each format."""
    assert slow.homework(b"3 2\n1 2 5\n\n2 3 -7 \r\n") == (3, [0, 1], [1, 2], [5, -7])
    assert slow.snap(b"# Nodes: 5\n0\t1\n3\t1\n") == (5, [0, 3], [1, 1], [1, 1])
    assert slow.mtx(b"%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n2 1 4\n") == \
        (3, [1, 0], [0, 1], [4.0, 4.0])
    assert slow.dimacs(b"c x\np sp 3 1\na 1 2 5\n") == (3, [0], [1], [5])
    assert slow.metis(b"3 2 1\n2 5\n1 5 3 7\n2 7\n") == (3, [0, 1, 1, 2], [1, 0, 2, 1], [5, 5, 7, 7])
