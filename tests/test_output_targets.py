"""Output targets: streams written through, nothing non-regular replaced, every output checked
before any work, clashing outputs refused, stale temporaries of dead writers cleaned."""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading

import numpy as np
import pytest

from apsp.io import check_outputs, write_distances
from apsp.io.atomic import atomic_path, atomic_write, remove_stale_temporaries

APSP = [sys.executable, "-m", "apsp"]
GRAPH = "2 1\n1 2 5\n"
WANT = "0 5\nINF 0\n"


def run(args, **kw):
    return subprocess.run(APSP + [str(a) for a in args], capture_output=True, text=True, **kw)


def test_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "out.txt"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    write_distances(fifo, np.array([[0, 5], [np.inf, 0]]))
    reader.join(10)
    assert got == [WANT.encode()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["out.txt"]


def test_symlink_to_a_device_stays_a_link_and_the_device_a_device(tmp_path):
    link = tmp_path / "out.txt"
    link.symlink_to(os.devnull)
    (tmp_path / "g.txt").write_text(GRAPH)
    r = run([tmp_path / "g.txt", link])
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["g.txt", "out.txt"]


def test_symlink_to_a_regular_file_replaces_the_file_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to("real.txt")
    write_distances(link, np.array([[0, 5], [np.inf, 0]]))
    assert link.is_symlink() and real.read_text() == WANT
    assert sorted(os.listdir(tmp_path)) == ["link.txt", "real.txt"]


@pytest.mark.slow
def test_dash_means_standard_output(tmp_path):
    (tmp_path / "g.txt").write_text(GRAPH)
    for args in ([tmp_path / "g.txt", "-"], ["solve", tmp_path / "g.txt", "-o", "-"]):
        r = run(args, cwd=tmp_path)
        assert r.returncode == 0 and r.stdout == WANT, r.stderr
        assert sorted(os.listdir(tmp_path)) == ["g.txt"]
    r = subprocess.run(APSP + ["solve", str(tmp_path / "g.txt"), "-o", "-", "--out-format", "npy"],
                       capture_output=True)
    assert r.returncode == 0
    import io

    assert np.load(io.BytesIO(r.stdout)).tolist() == [[0, 5], [np.inf, 0]]
    r = run(["solve", tmp_path / "g.txt", "-o", "-", "--json"])
    assert r.returncode == 1 and "--json" in r.stderr


def test_memory_mapped_writers_refuse_streams_and_sockets():
    with pytest.raises(ValueError, match="stream"):
        with atomic_path(os.devnull):
            pass
    short = tempfile.mkdtemp()  # socket paths must be short
    sock_path = os.path.join(short, "s.npy")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(sock_path)
        with pytest.raises(ValueError, match="not a regular file"):
            with atomic_write(sock_path) as f:
                f.write(b"x")
        assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    finally:
        sock.close()
        os.unlink(sock_path)
        os.rmdir(short)


@pytest.mark.slow
def test_outputs_are_checked_before_the_input_is_read(tmp_path):
    # the input does not exist: an output problem must be the one reported
    missing = tmp_path / "missing.txt"
    cases = [
        (["solve", missing, "-o", tmp_path / "nodir" / "d.txt"], "directory"),
        (["solve", missing, "-o", tmp_path / "d.unknown"], "format"),
        (["solve", missing, "-o", tmp_path / "d.snap"], "cannot hold distances"),
        (["solve", missing, "-o", tmp_path / "d.npy", "--paths", tmp_path / "d.npy"], "both name"),
        (["solve", missing, "-o", tmp_path / "d.npy", "--paths", tmp_path / "no" / "p.npy"], "--paths"),
        (["solve", missing, "-o", tmp_path / "d.npy", "--checkpoint", tmp_path / "d.npy"], "both name"),
        (["solve", missing, "-o", tmp_path / "d.npy", "--checkpoint", os.devnull], "regular file"),
        ([missing, tmp_path], "directory"),
        (["gen", "5", "-o", tmp_path / "no" / "g.txt"], "directory"),
    ]
    for args, message in cases:
        r = run(args)
        assert r.returncode == 1 and message in r.stderr and "missing" not in r.stderr, (args, r.stderr)
    assert os.listdir(tmp_path) == []


def test_read_only_directory_is_refused_before_solving(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    with pytest.raises(PermissionError):
        check_outputs({"-o": (ro / "d.txt", None, "distances")})


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    target = tmp_path / "d.txt"
    stale = tmp_path / f".d.txt.{dead.pid}.abcd1234.tmp.txt"
    live = tmp_path / f".d.txt.{os.getppid()}.abcd1234.tmp.txt"  # the writer is still running
    other = tmp_path / f".e.txt.{dead.pid}.abcd1234.tmp.txt"  # another output's
    unrelated = tmp_path / ".d.txt.notes"
    for p in (stale, live, other, unrelated):
        p.write_bytes(b"x" * 100)
    write_distances(target, np.array([[0]]))
    assert sorted(os.listdir(tmp_path)) == sorted(p.name for p in (target, live, other, unrelated))
    assert remove_stale_temporaries(tmp_path / "e.txt") == [other]


def test_killed_writer_leaves_a_temporary_that_the_next_run_removes(tmp_path):
    code = ("import os, signal, numpy as np\n"
            "from apsp.io.atomic import atomic_write\n"
            f"with atomic_write({str(tmp_path / 'd.txt')!r}) as f:\n"
            "    f.write(b'partial'); f.flush(); os.kill(os.getpid(), signal.SIGKILL)\n")
    subprocess.run([sys.executable, "-c", code])
    assert len(os.listdir(tmp_path)) == 1  # the orphan
    write_distances(tmp_path / "d.txt", np.array([[0]]))
    assert os.listdir(tmp_path) == ["d.txt"]


@pytest.mark.slow
def test_an_output_naming_the_input_is_refused_and_the_input_kept(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text(GRAPH)
    (tmp_path / "link.txt").symlink_to(src)
    os.link(src, tmp_path / "hard.txt")
    (tmp_path / "sub").mkdir()
    for out in (src, tmp_path / "sub" / ".." / "in.txt", tmp_path / "link.txt", tmp_path / "hard.txt"):
        for args in ([src, out], ["solve", src, "-o", out], ["solve", src, "-o", "-", "--checkpoint", out]):
            r = run(args)
            assert r.returncode == 1 and "Traceback" not in r.stderr, (args, r.stderr)
            assert "input" in r.stderr and r.stdout == "", args
            assert src.read_text() == GRAPH
    assert sorted(os.listdir(tmp_path)) == ["hard.txt", "in.txt", "link.txt", "sub"]


def test_an_output_name_ending_in_a_separator_is_refused(tmp_path):
    (tmp_path / "g.txt").write_text(GRAPH)
    (tmp_path / "existing").mkdir()
    for out in ("newdir/", "existing/", "newdir.txt/"):
        name = f"{tmp_path}{os.sep}{out}"  # as typed: a Path would drop the trailing separator
        for args in ([tmp_path / "g.txt", name], ["solve", tmp_path / "g.txt", "-o", name]):
            r = run(args)
            assert r.returncode == 1 and "directory" in r.stderr and "Traceback" not in r.stderr, args
    assert sorted(os.listdir(tmp_path)) == ["existing", "g.txt"]
    assert os.listdir(tmp_path / "existing") == []
    with pytest.raises(IsADirectoryError):
        write_distances(str(tmp_path / "newdir") + os.sep, np.zeros((1, 1)))
    assert sorted(os.listdir(tmp_path)) == ["existing", "g.txt"]


def test_standard_output_closed_is_refused_before_solving(tmp_path):
    (tmp_path / "g.txt").write_text(GRAPH)
    for args in (["solve", tmp_path / "g.txt", "-o", "-"], ["solve", tmp_path / "g.txt", "-o", "-",
                                                             "--paths", tmp_path / "p.npy"]):
        r = subprocess.run(APSP + [str(a) for a in args], stdout=None, stderr=subprocess.PIPE, text=True,
                           preexec_fn=lambda: os.close(1))
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert "standard output" in r.stderr and "closed" in r.stderr
        assert "compiling" not in r.stderr  # refused before the solve
    assert os.listdir(tmp_path) == ["g.txt"]


@pytest.mark.parametrize("failing", [1, 2])
def test_paths_and_distances_are_both_written_or_neither(tmp_path, monkeypatch, capsys, failing):
    import errno

    import apsp.io
    from apsp.cli import main

    (tmp_path / "g.txt").write_text(GRAPH)
    (tmp_path / "d.txt").write_text("old distances\n")
    np.save(tmp_path / "p.npy", np.array([7]))
    real, calls = apsp.io.write_distances, []

    def full_disk_on_one_write(path, *args, **kw):
        calls.append(path)
        if len(calls) != failing:
            return real(path, *args, **kw)
        with atomic_write(path) as f:
            f.write(b"partial")
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(apsp.io, "write_distances", full_disk_on_one_write)
    rc = main(["solve", str(tmp_path / "g.txt"), "-o", str(tmp_path / "d.txt"), "--paths",
               str(tmp_path / "p.npy"), "-q"])
    assert rc == 1 and "No space left" in capsys.readouterr().err
    assert len(calls) == failing
    assert (tmp_path / "d.txt").read_text() == "old distances\n"
    assert np.load(tmp_path / "p.npy").tolist() == [7]
    assert sorted(os.listdir(tmp_path)) == ["d.txt", "g.txt", "p.npy"]  # no temporaries left
    monkeypatch.setattr(apsp.io, "write_distances", real)
    assert main(["solve", str(tmp_path / "g.txt"), "-o", str(tmp_path / "d.txt"), "--paths",
                 str(tmp_path / "p.npy"), "-q"]) == 0
    assert (tmp_path / "d.txt").read_text() == WANT and np.load(tmp_path / "p.npy").shape == (2, 2)
