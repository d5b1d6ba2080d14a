"""The homework command line end to end: ``python -m apsp IN OUT 32``."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from apsp import exactness
from apsp.cli import main
from apsp.cpu.oracle import floyd_warshall_reference
from apsp.graph import Graph
from apsp.io import read_graph

ROOT = Path(__file__).resolve().parents[1]
# until the fast CPU solver lands the CLI tests use the oracle solver; note the
# '=' form: the homework argv rewrite takes a bare 'reference' for a positional
METHOD = "--method=reference"


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "apsp", *map(str, args)], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=300)


def diff_b(a: Path, b: Path) -> bool:
    """``diff -b``: equal up to runs of blanks and trailing blanks on each line."""
    def norm(p):
        return [" ".join(line.split()) for line in p.read_text().splitlines()]

    return norm(a) == norm(b)


def random_homework_file(path: Path, n: int, m: int, rng) -> str:
    """A homework input written by hand (independently of apsp's writer), and its answer."""
    src = rng.integers(1, n + 1, m)
    dst = (src - 1 + rng.integers(1, n, m)) % n + 1
    w = rng.integers(0, 101, m)
    lines = [f"{n} {m}"] + [f"{i} {j} {x}" for i, j, x in zip(src, dst, w)]
    path.write_text("\n".join(lines) + "\n")
    best = {}
    for i, j, x in zip(src, dst, w):
        best[(i - 1, j - 1)] = int(x)  # a later assignment wins
    d = np.full((n, n), np.inf)
    for (i, j), x in best.items():
        d[i, j] = x
    np.fill_diagonal(d, 0)
    for k in range(n):
        d = np.minimum(d, d[:, k, None] + d[None, k, :])
    return "".join(" ".join("INF" if np.isinf(v) else str(int(v)) for v in row) + "\n" for row in d)


def test_homework_form_matches_the_answer(tmp_path, rng):
    inp, out, ans = tmp_path / "in_file", tmp_path / "out_file", tmp_path / "answer"
    ans.write_text(random_homework_file(inp, 37, 150, rng))
    r = run_cli(inp, out, 32, METHOD)
    assert r.returncode == 0, r.stderr
    assert diff_b(out, ans)
    assert out.read_bytes() == ans.read_bytes()  # exact, not merely diff -b equal
    assert subprocess.run(["diff", "-b", out, ans]).returncode == 0


def test_figure6_through_the_cli(tmp_path):
    inp = tmp_path / "in.txt"
    inp.write_text("4 6\n1 2 55\n1 4 60\n2 3 66\n2 4 5\n3 2 1\n3 4 6\n")
    r = run_cli("solve", inp, "-o", tmp_path / "out.txt", "--method", "reference", "--format", "homework")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.txt").read_bytes() == b"0 55 121 60\nINF 0 66 5\nINF 1 0 6\nINF INF INF 0\n"


@pytest.mark.parametrize("content,line", [
    (b"", 1),
    (b"4 2\n1 2 3\n", 3),
    (b"4 1\n1 9 3\n", 2),
    (b"4 1\n1 2 x\n", 2),
])
def test_bad_input_fails_cleanly(tmp_path, content, line):
    inp, out = tmp_path / "in", tmp_path / "out"
    inp.write_bytes(content)
    r = run_cli(inp, out, 16, METHOD)
    assert r.returncode != 0
    assert f"{inp}:{line}:" in r.stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_bad_input_leaves_an_existing_output_untouched(tmp_path):
    inp, out = tmp_path / "in", tmp_path / "out"
    inp.write_bytes(b"3 1\n1 1 3\n")
    out.write_bytes(b"an older answer\n")
    rc = main([str(inp), str(out), "8", METHOD])
    assert rc != 0
    assert out.read_bytes() == b"an older answer\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]


@pytest.mark.parametrize("out_name", ["d.npy", "d.mtx", "d.txt.gz"])
def test_other_output_formats(tmp_path, out_name):
    import gzip

    import scipy.io

    inp = tmp_path / "g.snap"
    inp.write_text("# Nodes: 5\n0\t1\t3\n1\t2\t4\n2\t0\t1\n")
    rc = main(["solve", str(inp), "-o", str(tmp_path / out_name), "--method", "reference", "-q"])
    assert rc == 0
    g = Graph.from_edges(read_graph(inp))
    dt = exactness.choose_dtype(g.distance_bound, g.has_negative_weights, g.integral)
    want = exactness.finalize_unreachable(floyd_warshall_reference(g.fw_matrix(dt)), False)
    p = tmp_path / out_name
    if out_name.endswith(".npy"):  # float64 with inf where there is no path
        got = np.load(p)
        assert got.dtype == np.float64
        want = np.where(want == exactness.unreachable_value(dt), np.inf, want)
    elif out_name.endswith(".mtx"):
        got = np.full((5, 5), exactness.unreachable_value(dt), dtype=dt)
        coo = scipy.io.mmread(p).tocoo()
        got[coo.row, coo.col] = coo.data
    else:
        text = gzip.decompress(p.read_bytes()).decode()
        rows = [[exactness.unreachable_value(dt) if t == "INF" else int(t) for t in ln.split()]
                for ln in text.splitlines()]
        got = np.array(rows, dtype=dt)
    assert np.array_equal(got, want)


def test_gen_writes_through_write_graph(tmp_path):
    """``apsp gen`` writes apsp.random_graph's edges in every writable format."""
    for name in ("g.txt", "g.snap", "g.mtx", "g.gr.gz"):
        rc = main(["gen", "20", "--density", "0.2", "--weights", "0", "100", "--seed", "4",
                   "-o", str(tmp_path / name)])
        assert rc == 0
        e = read_graph(tmp_path / name)
        assert e.n == 20 and e.m > 0 and e.weight.min() >= 0 and e.weight.max() <= 100
    assert main(["gen", "20", "-o", str(tmp_path / "g.graph")]) != 0  # METIS: read-only here
    assert not (tmp_path / "g.graph").exists()
