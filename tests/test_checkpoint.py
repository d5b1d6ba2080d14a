"""Checkpoint and resume: an interrupted solve resumes to the identical answer; wrong checkpoints are refused.

Interrupts are simulated three ways: an exception from the per-round hook
(``on_round``), a Ctrl-C raised inside a round (between two tile kernels),
and a killed or interrupted ``apsp`` process.
"""
from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import HAS_CUDA, HAS_TRITON
from randgraphs import random_edges, random_graph

from apsp import shortest_paths
from apsp.checkpoint import DATA_OFFSET, CheckpointError, read_header
from apsp.graph import Graph
from apsp.io import write_graph
from apsp.io.homework import format_rows

HAS_CPU_KERNELS = importlib.util.find_spec("apsp.cpu.blocked") is not None
ROOT = Path(__file__).resolve().parents[1]

needs_cpu = pytest.mark.skipif(not HAS_CPU_KERNELS, reason="apsp.cpu.blocked not available")
needs_gpu_path = [pytest.mark.gpu, pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")]

#: (name, shortest_paths options, marks): every solver that checkpoints, with small blocks for many rounds
SOLVERS = [
    ("cpu", dict(backend="cpu", block_size=8), [needs_cpu]),
    ("cpu-out-of-core", dict(backend="cpu", out_of_core=True, host_memory="1MB", block_size=8, ooc_rows=12),
     [needs_cpu]),
    ("gpu", dict(backend="gpu", block_size=16), needs_gpu_path),
    ("gpu-out-of-core", dict(backend="gpu", out_of_core=True, gpu_memory="1MB", block_size=16, ooc_rows=24),
     needs_gpu_path),
]
SOLVER_PARAMS = [pytest.param(opts, id=name, marks=marks) for name, opts, marks in SOLVERS]


class Stop(Exception):
    """A crash of the process, as far as the solver can tell."""


def _graph(rng, n, negative=False):
    return random_graph(rng, n, 0.1, negative=negative)


def _stop_at(vertex, exc=KeyboardInterrupt):
    def hook(vertices_done):
        if vertices_done >= vertex:
            raise exc
    return hook


@pytest.mark.parametrize("opts", SOLVER_PARAMS)
@pytest.mark.slow
def test_resume_after_interrupts_at_several_points(tmp_path, rng, opts):
    n = 48 if opts["backend"] == "gpu" else 40
    g = _graph(rng, n, negative=bool(rng.integers(2)))
    want = shortest_paths(g, method="reference", backend="cpu", dtype="int32").distances
    ck = tmp_path / "state.ckpt"
    step = 16 if opts["backend"] == "gpu" else 8
    # Ctrl-C after round k: the state is saved on the way out, whatever checkpoint_every says
    for stop in range(step, n, 2 * step):
        with pytest.raises(KeyboardInterrupt) as err:
            shortest_paths(g, method="fw", dtype="int32", checkpoint=ck, checkpoint_every=1e9,
                           on_round=_stop_at(stop), **opts)
        assert read_header(ck)["vertices_done"] == stop
        assert any("--resume" in note for note in getattr(err.value, "__notes__", []))
        # resuming may itself be interrupted further on
        if stop + step < n:
            with pytest.raises(KeyboardInterrupt):
                shortest_paths(g, method="fw", dtype="int32", checkpoint=ck, resume=True,
                               checkpoint_every=1e9, on_round=_stop_at(stop + step), **opts)
            assert read_header(ck)["vertices_done"] == stop + step
        r = shortest_paths(g, method="fw", dtype="int32", checkpoint=ck, resume=True, **opts)
        np.testing.assert_array_equal(r.distances, want)
        assert r.info["resumed_from_vertex"] >= stop
        assert not ck.exists()  # removed once the answer is complete


@pytest.mark.parametrize("opts", SOLVER_PARAMS)
def test_resume_after_a_crash_from_the_periodic_checkpoint(tmp_path, rng, opts):
    g = _graph(rng, 40)
    want = shortest_paths(g, method="reference", backend="cpu", dtype="int16").distances
    ck = tmp_path / "state.ckpt"
    with pytest.raises(Stop):  # not an interrupt: nothing is saved on the way out
        shortest_paths(g, method="fw", dtype="int16", checkpoint=ck, checkpoint_every=0,
                       on_round=_stop_at(17, Stop), **opts)
    done = read_header(ck)["vertices_done"]
    assert 0 < done < 40
    r = shortest_paths(g, method="fw", dtype="int16", checkpoint=ck, resume=True, **opts)
    np.testing.assert_array_equal(r.distances, want)


def _interrupt_inside_a_round(monkeypatch, module, name, after_calls):
    """Make the ``after_calls``-th call of ``module.name`` raise KeyboardInterrupt (Ctrl-C mid-round)."""
    original = getattr(module, name)
    calls = {"n": 0}

    def wrapped(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == after_calls:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)
    return calls


@pytest.mark.parametrize("opts", SOLVER_PARAMS)
@pytest.mark.parametrize("after_calls", [4, 8])
def test_ctrl_c_inside_a_round_saves_a_state_that_resumes_exactly(tmp_path, rng, monkeypatch, opts,
                                                                  after_calls):
    g = _graph(rng, 48, negative=True)
    want = shortest_paths(g, method="reference", backend="cpu", dtype="int32").distances
    ck = tmp_path / "state.ckpt"
    if opts.get("out_of_core"):
        from apsp.cpu.blocked import CPUEngine as engine

        if opts["backend"] == "gpu":
            from apsp.gpu.outofcore import GPUStreamEngine as engine
        _interrupt_inside_a_round(monkeypatch, engine, "minplus", after_calls)
    elif opts["backend"] == "gpu":
        import apsp.gpu.rounds

        _interrupt_inside_a_round(monkeypatch, apsp.gpu.rounds, "minplus_update", after_calls)
    else:
        import apsp.cpu.blocked

        # phases 2 and 3 are one parallel call each: stop before a phase 2 (the pivot is already closed)
        _interrupt_inside_a_round(monkeypatch, apsp.cpu.blocked, "run_split", after_calls + 1)
    with pytest.raises(KeyboardInterrupt):
        shortest_paths(g, method="fw", dtype="int32", checkpoint=ck, checkpoint_every=1e9, **opts)
    monkeypatch.undo()
    if ck.exists():  # nothing to save when Ctrl-C came in the first round
        assert read_header(ck)["vertices_done"] > 0
        r = shortest_paths(g, method="fw", dtype="int32", checkpoint=ck, resume=True, **opts)
        np.testing.assert_array_equal(r.distances, want)


# ----------------------------------------------------------------------------- refusals
@pytest.fixture
def saved(tmp_path, rng):
    """A checkpoint of a GPU-path or CPU solve stopped halfway, and its graph."""
    if HAS_CPU_KERNELS:
        opts = dict(backend="cpu", block_size=8)
    elif HAS_TRITON:
        opts = dict(backend="gpu", block_size=16)
    else:
        pytest.skip("no solver that checkpoints")
    g = _graph(rng, 40)
    ck = tmp_path / "state.ckpt"
    with pytest.raises(KeyboardInterrupt):
        shortest_paths(g, method="fw", dtype="int32", checkpoint=ck, on_round=_stop_at(16), **opts)
    return g, ck, opts


def test_refuses_a_checkpoint_of_another_graph(saved, rng):
    g, ck, opts = saved
    other = Graph(n=g.n, csr=g.to_csr().copy())
    other.csr.data[0] += 1
    with pytest.raises(CheckpointError, match="different graph"):
        shortest_paths(other, method="fw", dtype="int32", checkpoint=ck, resume=True, **opts)
    with pytest.raises(CheckpointError, match="different graph"):
        shortest_paths(_graph(rng, 41), method="fw", dtype="int32", checkpoint=ck, resume=True, **opts)


def test_refuses_other_options_and_stale_files(saved, tmp_path):
    g, ck, opts = saved
    with pytest.raises(CheckpointError, match="holds int32 distances.*--dtype int32"):
        shortest_paths(g, method="fw", dtype="int64", checkpoint=ck, resume=True, **opts)
    with pytest.raises(CheckpointError, match="already exists; pass resume=True"):
        shortest_paths(g, method="fw", dtype="int32", checkpoint=ck, **opts)
    with pytest.raises(CheckpointError, match="block size 7 does not divide"):
        shortest_paths(g, method="fw", dtype="int32", checkpoint=ck, resume=True,
                       **dict(opts, block_size=7))
    with pytest.raises(ValueError, match="method 'fw' only"):
        shortest_paths(g, method="dijkstra", checkpoint=ck, resume=True)
    with pytest.raises(ValueError, match="needs checkpoint=FILE"):
        shortest_paths(g, method="fw", resume=True, **opts)


def _edited_header(data: bytes, **edits) -> bytes:
    """The checkpoint bytes with header fields changed (same length, checksum left as it was)."""
    import json

    length = int.from_bytes(data[8:16], "little")
    meta = json.loads(data[16:16 + length])
    for key, change in edits.items():
        meta[key] = change(meta[key])
    blob = json.dumps(meta, sort_keys=True).encode()
    return data[:8] + len(blob).to_bytes(8, "little") + blob + data[16 + len(blob):]


def test_refuses_damaged_checkpoints(saved):
    g, ck, opts = saved
    good = ck.read_bytes()
    damaged = [
        (good[:-4], "truncated or damaged"),
        (good[:DATA_OFFSET + 10] + bytes([good[DATA_OFFSET + 10] ^ 1]) + good[DATA_OFFSET + 11:], "crc32"),
        (b"not a checkpoint" * 300, "not an apsp checkpoint"),
        (good[:8] + (10 ** 6).to_bytes(8, "little") + good[16:], "damaged header"),
        (good[:16] + b"x" + good[17:], "damaged header"),
        (_edited_header(good, vertices_done=lambda k: k + 8), "header fails the crc32"),
        (_edited_header(good, vertices_done=lambda k: 0), "header fails the crc32"),
        (_edited_header(good, crc32=lambda c: c ^ 1), "header fails the crc32"),
    ]
    for data, words in damaged:
        ck.write_bytes(data)
        with pytest.raises(CheckpointError, match=words):
            shortest_paths(g, method="fw", dtype="int32", checkpoint=ck, resume=True, **opts)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TRITON or HAS_CUDA, reason="float schedule check on the interpreter")
@pytest.mark.slow
def test_float_checkpoints_resume_only_with_the_same_schedule(tmp_path, rng):
    g = random_graph(rng, 40, 0.1, floats=True)
    ck = tmp_path / "f.ckpt"
    with pytest.raises(KeyboardInterrupt):
        shortest_paths(g, method="fw", backend="gpu", dtype="float64", block_size=16, checkpoint=ck,
                       on_round=_stop_at(16))
    with pytest.raises(CheckpointError, match="float results depend on the schedule"):
        shortest_paths(g, method="fw", backend="gpu", dtype="float64", out_of_core=True, gpu_memory="1MB",
                       block_size=16, checkpoint=ck, resume=True)
    r = shortest_paths(g, method="fw", backend="gpu", dtype="float64", block_size=16, checkpoint=ck,
                       resume=True)
    want = shortest_paths(g, method="fw", backend="gpu", dtype="float64", block_size=16)
    np.testing.assert_array_equal(r.distances, want.distances)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")
def test_an_integer_checkpoint_resumes_on_another_solver(tmp_path, rng):
    """The state after k vertices does not depend on the solver: GPU in core -> GPU out of core."""
    g = _graph(rng, 48, negative=True)
    ck = tmp_path / "x.ckpt"
    with pytest.raises(KeyboardInterrupt):
        shortest_paths(g, method="fw", backend="gpu", dtype="int32", block_size=16, checkpoint=ck,
                       on_round=_stop_at(16))
    r = shortest_paths(g, method="fw", backend="gpu", dtype="int32", out_of_core=True, gpu_memory="1MB",
                       block_size=32, ooc_rows=16, checkpoint=ck, resume=True)
    np.testing.assert_array_equal(
        r.distances, shortest_paths(g, method="reference", backend="cpu", dtype="int32").distances)


def test_resume_without_a_file_is_refused_before_any_work(tmp_path, rng):
    """A missing checkpoint is most likely a wrong path: starting over silently would waste the run."""
    g = _graph(rng, 30)
    with pytest.raises(CheckpointError, match=r"none\.ckpt does not exist, so there is nothing to resume"):
        shortest_paths(g, method="fw", backend="cpu", dtype="int32", checkpoint=tmp_path / "none.ckpt",
                       resume=True)
    assert not (tmp_path / "none.ckpt").exists()


@pytest.mark.slow
def test_resume_without_a_file_is_one_line_naming_the_options(tmp_path):
    (tmp_path / "g.txt").write_text("2 1\n1 2 3\n")
    err = subprocess.run([sys.executable, "-m", "apsp", "solve", str(tmp_path / "g.txt"), "-o",
                          str(tmp_path / "d.txt"), "--method", "fw", "--checkpoint", str(tmp_path / "x.ckpt"),
                          "--resume"], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert err.returncode == 1 and "Traceback" not in err.stderr, err.stderr
    assert "x.ckpt does not exist" in err.stderr and "--resume" in err.stderr and "resume=" not in err.stderr
    assert not (tmp_path / "d.txt").exists()


# ----------------------------------------------------------------------------- the command line
def _interruptible() -> None:
    """In the child: Ctrl-C as a terminal delivers it. A test run started in the background of a
    non-interactive shell (``pytest ... &``) ignores SIGINT, and the solve would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(args, env_extra=None, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **(env_extra or {}))
    return subprocess.Popen([sys.executable, "-m", "apsp", *args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_interruptible, **kw)


def _slow_solve_args(tmp_path, rng, n=64):
    """A CLI solve slow enough to stop in the middle: the GPU path under the Triton interpreter."""
    if HAS_CUDA or not HAS_TRITON:
        pytest.skip("needs the Triton interpreter (a deliberately slow solver)")
    graph = tmp_path / "g.txt"
    write_graph(graph, random_edges(rng, n, 0.1, lo=1, hi=50))
    return graph, ["--backend", "gpu", "--method", "fw", "--block-size", "16", "-q"], {"TRITON_INTERPRET": "1"}


def _wait_for(path: Path, proc, timeout=120.0, newer_than=None) -> None:
    stop = time.monotonic() + timeout
    while time.monotonic() < stop:
        if path.exists() and (newer_than is None or path.stat().st_mtime_ns > newer_than):
            return
        if proc.poll() is not None:
            raise AssertionError(f"the solve ended first: {proc.stderr.read().decode()}")
        time.sleep(0.02)
    raise AssertionError(f"{path} did not appear")


@pytest.mark.gpu
@pytest.mark.slow
def test_killed_process_resumes_to_the_same_output(tmp_path, rng):
    graph, solve, env = _slow_solve_args(tmp_path, rng)
    out, ck = tmp_path / "dist.txt", tmp_path / "run.ckpt"
    proc = _cli(["solve", str(graph), "-o", str(out), *solve, "--checkpoint", str(ck),
                 "--checkpoint-every", "0"], env)
    _wait_for(ck, proc)
    proc.kill()  # SIGKILL: no chance to clean up
    proc.wait()
    assert not out.exists()
    assert 0 < read_header(ck)["vertices_done"] < 64
    resumed = _cli(["solve", str(graph), "-o", str(out), *solve, "--checkpoint", str(ck), "--resume"], env)
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read().decode()
    want = shortest_paths(str(graph), method="reference", backend="cpu").distances
    assert out.read_bytes() == format_rows(want)
    assert not ck.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist.txt", "g.txt"]


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_process_leaves_no_output(tmp_path, rng, sig):
    graph, solve, env = _slow_solve_args(tmp_path, rng, n=96)
    out, ck = tmp_path / "dist.npy", tmp_path / "run.ckpt"
    # with a checkpoint: the interrupt saves the state and says how to resume
    proc = _cli(["solve", str(graph), "-o", str(out), *solve, "--checkpoint", str(ck),
                 "--checkpoint-every", "0"], env)
    _wait_for(ck, proc)
    proc.send_signal(sig)
    rc = proc.wait(timeout=60)
    err = proc.stderr.read().decode()
    assert rc == 130, f"exit {rc}, {'an output' if out.exists() else 'no output'} written; stderr: {err!r}"
    assert "interrupted; no output written" in err and "--resume" in err
    assert not out.exists()
    # without one: nothing at all is left behind
    ck.unlink()
    proc = _cli(["solve", str(graph), "-o", str(out), *solve], env)
    time.sleep(5.0)  # reading, planning or solving (the whole run takes over 20 s): never writing yet
    proc.send_signal(sig)
    assert proc.wait(timeout=60) in (130, -sig)  # -sig: it came before apsp's handlers were in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.txt"]
