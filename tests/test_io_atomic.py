"""Outputs are written whole or not at all."""
from __future__ import annotations

import os
import stat
import sys

import numpy as np
import pytest

from apsp.graph import EdgeList
from apsp.io import write_distances, write_graph
from apsp.io.atomic import atomic_path, atomic_write


def test_success_replaces_the_target(tmp_path):
    target = tmp_path / "out.txt"
    target.write_bytes(b"old")
    with atomic_write(target) as f:
        f.write(b"new")
        assert target.read_bytes() == b"old"  # not visible before the end
    assert target.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt, MemoryError])
def test_failure_keeps_the_old_target_and_leaves_no_temp_file(tmp_path, exc):
    target = tmp_path / "out.txt"
    target.write_bytes(b"old")
    with pytest.raises(exc):
        with atomic_write(target) as f:
            f.write(b"partial")
            raise exc()
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_failure_creates_nothing(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(tmp_path / "new.npy") as tmp:
            np.save(tmp, np.zeros(3))
            assert tmp.name.endswith(".npy") and tmp.parent == tmp_path
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_new_file_gets_ordinary_permissions(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_write(target) as f:
        f.write(b"x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    os.chmod(target, 0o640)
    with atomic_write(target) as f:
        f.write(b"y")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_clear_errors_for_impossible_targets(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        with atomic_write(tmp_path / "no" / "such" / "out.txt"):
            pass
    with pytest.raises(IsADirectoryError):
        with atomic_write(tmp_path):
            pass
    assert os.listdir(tmp_path) == []


def test_relative_target_in_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with atomic_write("plain.txt") as f:
        f.write(b"ok")
    assert (tmp_path / "plain.txt").read_bytes() == b"ok"


@pytest.mark.parametrize("name", ["d.txt", "d.npy", "d.mtx", "d.txt.gz", "d.npy.gz"])
def test_writers_interrupted_midway_leave_the_old_file(tmp_path, monkeypatch, name):
    """A writer that fails after writing some of its chunks changes nothing."""
    from apsp.io import _formatter, homework

    target = tmp_path / name
    target.write_bytes(b"previous answer")
    d = np.arange(400, dtype=np.int32).reshape(20, 20)
    monkeypatch.setattr(_formatter, "CHUNK_BYTES", 64)
    monkeypatch.setattr(homework, "CHUNK_BYTES", 64)
    import numpy.lib.format as npformat

    calls = {"n": 0}
    real_format = _formatter.format_rows

    def failing_format(*args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_format(*args)

    def failing_write_array(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_formatter, "format_rows", failing_format)
    monkeypatch.setattr(npformat, "write_array", failing_write_array)
    monkeypatch.setattr(_formatter, "format_edges", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    if name.startswith("d.npy"):  # fail after some rows went out
        from apsp.io import npy

        monkeypatch.setattr(npy, "CHUNK_BYTES", 64)
        monkeypatch.setattr(npy, "atomic_write", _failing_after(npy.atomic_write, writes=3))
    with pytest.raises(KeyboardInterrupt):
        write_distances(target, d)
    assert target.read_bytes() == b"previous answer"
    assert sorted(os.listdir(tmp_path)) == [name]


def _failing_after(real_open, writes: int):
    """``atomic_write`` whose file raises KeyboardInterrupt on its ``writes``-th write."""
    import contextlib

    @contextlib.contextmanager
    def opener(path, gz=False):
        with real_open(path, gz=gz) as f:
            class Failing:
                count = 0

                def write(self, data):
                    Failing.count += 1
                    if Failing.count == writes:
                        raise KeyboardInterrupt
                    return f.write(data)

            yield Failing()

    return opener


def test_graph_writer_failure_leaves_nothing(tmp_path):
    target = tmp_path / "g.snap"
    with pytest.raises(ValueError):
        write_graph(target, EdgeList(2, [0], [5], [1]))
    assert os.listdir(tmp_path) == []


def test_all_or_none_replaces_every_target_or_none(tmp_path):
    from apsp.io.atomic import all_or_none

    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"old a")
    with pytest.raises(OSError, match="disk full"):
        with all_or_none():
            with atomic_write(a) as f:
                f.write(b"new a")
            with atomic_write(b) as f:
                f.write(b"new")
                raise OSError("disk full")
    assert a.read_bytes() == b"old a" and sorted(os.listdir(tmp_path)) == ["a"]
    with all_or_none():
        with atomic_write(a) as f:
            f.write(b"new a")
        assert a.read_bytes() == b"old a"  # renamed when the block ends, not before
        with atomic_write(b) as f:
            f.write(b"new b")
    assert a.read_bytes() == b"new a" and b.read_bytes() == b"new b"
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_a_failed_write_caught_inside_all_or_none_is_never_renamed(tmp_path):
    """Only finished temporaries join the group: one whose writer failed is gone at once,
    and its target stays as it was while the block's other outputs land."""
    from apsp.io.atomic import all_or_none

    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"old a")
    with all_or_none():
        with pytest.raises(OSError, match="disk full"):
            with atomic_write(a) as f:
                f.write(b"half of a")
                raise OSError("disk full")
        assert sorted(os.listdir(tmp_path)) == ["a"]
        with atomic_write(b) as f:
            f.write(b"new b")
    assert a.read_bytes() == b"old a" and b.read_bytes() == b"new b"
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_atomic_path_keeps_the_mode_and_a_link(tmp_path):
    """A path writer (as the checkpoint's) replaces the file a link names, with its permissions."""
    real, link = tmp_path / "real.npy", tmp_path / "link.npy"
    np.save(real, np.zeros(2))
    os.chmod(real, 0o640)
    link.symlink_to(real)
    with atomic_path(link) as tmp:
        np.save(tmp, np.ones(3))
    assert link.is_symlink() and np.load(real).tolist() == [1.0, 1.0, 1.0]
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640 and sorted(os.listdir(tmp_path)) == ["link.npy", "real.npy"]


def test_closed_standard_output_is_a_clear_error(monkeypatch):
    from apsp.io.atomic import check_target

    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(OSError, match="standard output"):
        check_target("-")
    with pytest.raises(OSError, match="standard output"):
        with atomic_write("-"):
            pass
