"""The homework text format: the spec's sample, exact bytes, every malformed case, round trips."""
from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apsp import exactness
from apsp.cpu.oracle import floyd_warshall_reference
from apsp.errors import GraphFormatError
from apsp.graph import EdgeList, Graph
from apsp.io import homework, read_graph, write_distances, write_graph

# Figure 6 of the homework (section 3): the output for the sample of Figure 5.
FIGURE6 = b"0 55 121 60\nINF 0 66 5\nINF 1 0 6\nINF INF INF 0\n"
# Figure 5 itself is an image; this input has exactly Figure 6 as its answer.
SAMPLE_IN = b"4 6\n1 2 55\n1 4 60\n2 3 66\n2 4 5\n3 2 1\n3 4 6\n"

HYPO = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _solve(edges: EdgeList) -> np.ndarray:
    g = Graph.from_edges(edges)
    dt = exactness.choose_dtype(g.distance_bound, g.has_negative_weights, g.integral)
    d = floyd_warshall_reference(g.fw_matrix(dt))
    return exactness.finalize_unreachable(d, g.has_negative_weights)


def _expected_text(d: np.ndarray) -> bytes:
    """An independent (slow, obvious) formatter to check the fast one against."""
    unreachable = exactness.unreachable_value(d.dtype)
    lines = []
    for row in d.tolist():
        lines.append(" ".join("INF" if v == unreachable else str(v) for v in row))
    return ("\n".join(lines) + "\n").encode()


def test_sample_reads_in_file_order(tmp_path):
    p = tmp_path / "in"
    p.write_bytes(SAMPLE_IN)
    e = read_graph(p)
    assert e.n == 4
    assert e.src.tolist() == [0, 0, 1, 1, 2, 2]
    assert e.dst.tolist() == [1, 3, 2, 3, 1, 3]
    assert e.weight.tolist() == [55, 60, 66, 5, 1, 6]
    assert e.src.dtype == e.dst.dtype == e.weight.dtype == np.int64


def test_sample_output_is_figure6_byte_for_byte(tmp_path):
    p = tmp_path / "in"
    p.write_bytes(SAMPLE_IN)
    d = _solve(read_graph(p))
    out = tmp_path / "out"
    write_distances(out, d)
    assert out.read_bytes() == FIGURE6
    assert homework.format_rows(d) == FIGURE6
    assert b"".join(homework.format_rows(d[i:i + 1]) for i in range(4)) == FIGURE6


def test_later_assignment_wins(tmp_path):
    p = tmp_path / "g.txt"
    p.write_bytes(b"3 3\n1 2 9\n2 3 1\n1 2 4\n")
    e = read_graph(p)
    assert e.weight.tolist() == [9, 1, 4]  # the reader keeps every line ...
    d = _solve(e)                          # ... and Graph keeps the last one
    assert d[0, 1] == 4 and d[0, 2] == 5


@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "float32", "float64"])
def test_every_dtype_prints_the_same(tmp_path, dtype):
    d = np.array([[0, 55, 121, 60], [-1, 0, 66, 5], [-1, 1, 0, 6], [-1, -1, -1, 0]])
    dt = np.dtype(dtype)
    typed = d.astype(dt)
    typed[d == -1] = exactness.unreachable_value(dt)
    write_distances(tmp_path / "o.txt", typed)
    assert (tmp_path / "o.txt").read_bytes() == FIGURE6


def test_negative_and_extreme_integers(tmp_path):
    info = np.iinfo(np.int64)
    d = np.array([[info.min, -1, 0], [info.max - 1, info.max, 10 ** 18], [-(10 ** 18), 9, 99]])
    assert homework.format_rows(d) == _expected_text(d)
    for dt in (np.int16, np.int32):
        i = np.iinfo(dt)
        e = np.array([[i.min, i.max - 1, i.max, 0, -7]], dtype=dt)
        assert homework.format_rows(e) == _expected_text(e)


def test_floats_print_whole_values_as_integers_and_others_shortest():
    d = np.array([[0.0, 55.0, np.inf, 0.5, -2.25, 1e20, 0.1 + 0.2, -0.0]])
    assert homework.format_rows(d) == b"0 55 INF 0.5 -2.25 1e+20 0.30000000000000004 0\n"
    f = np.array([[0.1, np.inf, 3.0]], dtype=np.float32)
    assert homework.format_rows(f) == b"0.1 INF 3\n"


@given(st.lists(st.floats(allow_nan=False, allow_infinity=True, width=64), min_size=1, max_size=30))
@HYPO
def test_float_rows_round_trip(values):
    row = np.array([values])
    text = homework.format_rows(row).decode()
    assert text.endswith("\n") and "  " not in text
    back = [np.inf if t == "INF" else float(t) for t in text.split()]
    assert np.array_equal(np.array(back), row[0])


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1, max_size=30))
@HYPO
def test_float32_rows_round_trip(values):
    row = np.array([values], dtype=np.float32)
    back = np.array([np.float32(t) for t in homework.format_rows(row).split()])
    assert np.array_equal(back, row[0])


@st.composite
def homework_graphs(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(0, 40)) if n > 1 else 0
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = [(s + draw(st.integers(1, n - 1))) % n for s in src] if n > 1 else []
    w = draw(st.lists(st.integers(-(2 ** 63), 2 ** 63 - 1) | st.integers(0, 100), min_size=m, max_size=m))
    return EdgeList(n, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                    np.array(w, dtype=np.int64))


@given(homework_graphs(), st.booleans())
@HYPO
def test_graph_round_trip(tmp_path, edges, gz):
    p = tmp_path / ("g.txt.gz" if gz else "g.txt")
    write_graph(p, edges)
    raw = gzip.decompress(p.read_bytes()) if gz else p.read_bytes()
    lines = raw.decode().splitlines()
    assert lines[0] == f"{edges.n} {edges.m}" and len(lines) == edges.m + 1
    back = read_graph(p)
    assert back.n == edges.n
    for a, b in ((back.src, edges.src), (back.dst, edges.dst), (back.weight, edges.weight)):
        assert np.array_equal(a, b)


@given(st.integers(1, 9), st.sampled_from(["int16", "int32", "int64"]), st.data())
@HYPO
def test_distance_text_matches_the_obvious_formatter(tmp_path, n, dtype, data):
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    values = data.draw(st.lists(st.integers(info.min, info.max) | st.just(int(info.max)),
                                min_size=n * n, max_size=n * n))
    d = np.array(values, dtype=dt).reshape(n, n)
    p = tmp_path / "d.txt"
    write_distances(p, d)
    assert p.read_bytes() == _expected_text(d)


def test_large_matrix_written_in_several_chunks(tmp_path, monkeypatch, rng):
    from apsp.io import _formatter

    monkeypatch.setattr(_formatter, "CHUNK_BYTES", 1000)
    d = rng.integers(-5, 300, (97, 97)).astype(np.int32)
    d[rng.random(d.shape) < 0.2] = np.iinfo(np.int32).max
    monkeypatch.setattr(homework, "CHUNK_BYTES", 1000)
    write_distances(tmp_path / "d.txt", d)
    assert (tmp_path / "d.txt").read_bytes() == _expected_text(d)


def test_crlf_blank_lines_and_trailing_blanks_are_fine(tmp_path):
    p = tmp_path / "g.txt"
    p.write_bytes(b"\n3 2 \r\n\r\n1 2 5\t\r\n   2 3 +7\r\n\n\n")
    e = read_graph(p)
    assert (e.n, e.src.tolist(), e.dst.tolist(), e.weight.tolist()) == (3, [0, 1], [1, 2], [5, 7])


def test_no_trailing_newline_and_int64_limits(tmp_path):
    p = tmp_path / "g.txt"
    p.write_bytes(b"3 2\n1 2 -9223372036854775808\n2 3 9223372036854775807")
    assert read_graph(p).weight.tolist() == [-(2 ** 63), 2 ** 63 - 1]


def test_m_zero_and_n_one(tmp_path):
    p = tmp_path / "g.txt"
    p.write_bytes(b"1 0\n")
    e = read_graph(p)
    assert e.n == 1 and e.m == 0
    write_distances(tmp_path / "o.txt", _solve(e))
    assert (tmp_path / "o.txt").read_bytes() == b"0\n"


# (content, line, words the message must contain)
MALFORMED = [
    (b"", 1, "empty file"),
    (b"  \n\n\t\n", 1, "empty file"),
    (b"4\n", 1, "found 1 field"),
    (b"4 x\n1 2 3\n", 1, "M is 'x', not an integer"),
    (b"-4 2\n", 1, "N -4 must be >= 1"),
    (b"0 0\n", 1, "N 0 must be >= 1"),
    (b"4 -1\n", 1, "M -1 must be >= 0"),
    (b"4 1 7\n1 2 3\n", 1, "extra field '7'"),
    (b"4.0 1\n1 2 3\n", 1, "N is '4.0', not an integer"),
    (b"\n\n4 2\n1 2 3\n", 5, "file ends after 1 edge line; the header's M = 2"),
    (b"4 3\n1 2 3\n2 3 4", 3, "file ends after 2 edge lines"),
    (b"4 1\n1 2 3\n2 3 4\n", 3, "more edge lines than the header's M = 1"),
    (b"4 1\n1 2 3\n\n\n9\n", 5, "more edge lines"),
    (b"4 2\n1 2 3\n0 2 3\n", 3, "i 0 is out of range 1..4"),
    (b"4 2\n1 2 3\n1 5 3\n", 3, "j 5 is out of range 1..4"),
    (b"4 2\n1 2 3\n-1 2 3\n", 3, "i -1 is out of range 1..4"),
    (b"4 2\n1 2 3\n3 3 3\n", 3, "i == j == 3"),
    (b"4 2\n1 2 3\n1 2\n", 3, "found 2 fields"),
    (b"4 2\n1 2 3\n1\n", 3, "found 1 field"),
    (b"4 2\n1 2 3\n1 2 3 4\n", 3, "extra field '4'"),
    (b"4 2\n1 2 3\n1 2 3.5\n", 3, "w is '3.5', not an integer"),
    (b"4 2\n1 2 3\n1 2 1e3\n", 3, "w is '1e3', not an integer"),
    (b"4 2\n1 2 3\n1 2 abc\n", 3, "w is 'abc', not an integer"),
    (b"4 2\n1 2 3\n1 2 3abc\n", 3, "w is '3abc', not an integer"),
    (b"4 2\n1 2 3\n1 2 -\n", 3, "w is '-', not an integer"),
    (b"4 2\n1 2 3\nx 2 3\n", 3, "i is 'x'"),
    (b"4 2\n1 2 3\n# comment\n", 3, "i is '#'"),
    (b"4 2\n1 2 3\n1 2 99999999999999999999\n", 3, "does not fit a 64-bit integer"),
    (b"4 2\n1 2 3\n1 2 -9223372036854775809\n", 3, "does not fit a 64-bit integer"),
    (b"4 2\r\n1 2 3\r\n1 2 \xff\r\n", 3, "not an integer"),
    (b"4 2\n1 2 3\n1 99999999999999999999 3\n", 3, "j 99999999999999999999 does not fit"),
]


@pytest.mark.parametrize("content,line,words", MALFORMED)
@pytest.mark.parametrize("gz", [False, True])
def test_malformed_files_name_the_line(tmp_path, content, line, words, gz):
    p = tmp_path / ("bad.txt.gz" if gz else "bad.txt")
    p.write_bytes(gzip.compress(content) if gz else content)
    with pytest.raises(GraphFormatError) as info:
        read_graph(p)
    err = info.value
    assert err.line == line, str(err)
    assert words in err.problem, str(err)
    assert str(err).startswith(f"{p}:{line}: ")


def test_corrupt_gzip_is_a_format_error(tmp_path):
    p = tmp_path / "g.txt.gz"
    p.write_bytes(gzip.compress(SAMPLE_IN)[:-10])
    with pytest.raises(GraphFormatError, match="gzip"):
        read_graph(p)


def test_huge_m_in_header_does_not_allocate_it(tmp_path):
    p = tmp_path / "g.txt"
    p.write_bytes(b"4 1000000000000\n1 2 3\n")
    with pytest.raises(GraphFormatError, match="file ends after 1 edge line"):
        read_graph(p)


def test_writer_refuses_what_the_format_cannot_hold(tmp_path):
    p = tmp_path / "g.txt"
    with pytest.raises(ValueError, match="self-loops"):
        write_graph(p, EdgeList(3, [1], [1], [2]))
    with pytest.raises(ValueError, match="integer weights"):
        write_graph(p, EdgeList(3, [0], [1], [2.5]))
    with pytest.raises(ValueError, match="0..2"):
        write_graph(p, EdgeList(3, [0], [3], [2]))
    assert not p.exists()
    write_graph(p, EdgeList(3, [0], [1], [2.0]))  # whole floats are fine
    assert p.read_bytes() == b"3 1\n1 2 2\n"


def test_format_rows_checks_its_input():
    assert homework.format_rows(np.array([0, 7], dtype=np.int32)) == b"0 7\n"
    with pytest.raises(ValueError, match="2-D"):
        homework.format_rows(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="dtype"):
        homework.format_rows(np.array([["a"]]))
    with pytest.raises(ValueError, match="square"):
        write_distances("never-written.txt", np.zeros((2, 3)))
