"""Small hostile inputs: each a clear one-line error (or the right answer), never a traceback."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import apsp

APSP = [sys.executable, "-m", "apsp"]


def run(args, **kw):
    return subprocess.run(APSP + [str(a) for a in args], capture_output=True, text=True, **kw)


@pytest.mark.parametrize("edges", [[(0, 1, "5")], [(0, "1", 5)], [(0, 1, b"5")]])
def test_string_weights_in_tuples_are_a_clear_type_error(edges):
    with pytest.raises(TypeError, match="must hold numbers"):
        apsp.shortest_paths(edges)


@pytest.mark.parametrize("lo,hi", [("nan", "inf"), ("0", "inf"), ("5", "nan"), ("nan", "1")])
def test_gen_refuses_non_finite_weights(tmp_path, lo, hi):
    r = run(["gen", "5", "--weights", lo, hi, "-o", tmp_path / "g.snap"])
    assert r.returncode == 1 and "finite" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert os.listdir(tmp_path) == []


def test_gen_refuses_zero_vertices(tmp_path):
    r = run(["gen", "0", "-o", tmp_path / "g.txt"])
    assert r.returncode == 1 and "at least 1" in r.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("data", [b"2 1\n1 2 5\n"])
@pytest.mark.slow
def test_piped_standard_input_is_read(data, tmp_path):
    r = subprocess.run(APSP + ["/dev/stdin", "-"], input=data, capture_output=True)
    assert r.returncode == 0 and r.stdout == b"0 5\nINF 0\n", r.stderr
    import gzip

    r = subprocess.run(APSP + ["solve", "/dev/stdin", "-o", "-"], input=gzip.compress(data), capture_output=True)
    assert r.returncode == 0 and r.stdout == b"0 5\nINF 0\n", r.stderr
    r = subprocess.run(APSP + ["/dev/stdin", "-"], input=b"2 1\n1 2\n", capture_output=True, text=False)
    assert r.returncode == 1 and b"/dev/stdin:2" in r.stderr


def test_missing_scratch_directory_is_named(tmp_path):
    (tmp_path / "g.txt").write_text("2 1\n1 2 5\n")
    r = run(["solve", tmp_path / "g.txt", "-o", tmp_path / "d.npy", "--scratch-dir", tmp_path / "nodir",
             "--out-of-core", "--method", "fw"])
    assert r.returncode == 1 and "--scratch-dir" in r.stderr and "no such directory" in r.stderr, r.stderr
    assert not (tmp_path / "d.npy").exists()


@pytest.mark.parametrize("name", ["info", "path", "solve", "gen"])
@pytest.mark.slow
def test_input_file_named_like_a_command_is_solved(tmp_path, name):
    (tmp_path / name).write_text("2 1\n1 2 5\n")
    for args in ([name, "out.txt"], [name, "out.txt", "32"]):
        r = run(args, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert (tmp_path / "out.txt").read_text() == "0 5\nINF 0\n"
        (tmp_path / "out.txt").unlink()
    # the commands themselves still work beside such a file
    assert run(["info"], cwd=tmp_path).returncode == 0 if name == "info" else True
    r = run(["solve", name, "-o", "d.txt"], cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "d.txt").exists() and (tmp_path / name).read_text() == "2 1\n1 2 5\n"
