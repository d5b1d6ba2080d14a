"""Under a small address-space limit (``ulimit -v``) the command line ends, with an answer or a clear
refusal: OpenBLAS's thread pool never spins at start-up."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

resource = pytest.importorskip("resource")

LIMIT = 400_000 * 1024  # ulimit -v 400000


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def run_limited(args, tmp_path, **env):
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=240,
                          preexec_fn=limited, env={**environ, **env}, cwd=tmp_path)


def test_small_address_space_sets_one_blas_thread_before_scipy_loads(tmp_path):
    code = ("import os, apsp.cli.program as p; limit = p.fit_address_space(); "
            "print(limit, os.environ.get('OPENBLAS_NUM_THREADS'))")
    run = run_limited(["-c", code], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(LIMIT), "1"]


def test_cli_under_a_small_address_space_answers_or_refuses_clearly(tmp_path):
    (tmp_path / "g.snap").write_text("5 77\n77 555\n555 5\n")
    try:
        run = run_limited(["-m", "apsp", "solve", "g.snap", "-o", "d.txt"], tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail("apsp spun under ulimit -v 400000")
    if run.returncode == 0:
        assert (tmp_path / "d.txt").exists()
    else:
        assert "Traceback" not in run.stderr, run.stderr[-3000:]
        assert "apsp: error:" in run.stderr and "limit" in run.stderr


def test_small_needs_are_checked_under_an_address_space_limit(tmp_path):
    # below `RAM_READ_FROM` a need passes unread, except where ulimit -v may leave less than that
    code = ("from apsp import sizes; import resource; "
            "print(sizes.unread_below(1), sizes._address_limited())")
    run = run_limited(["-c", code], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True"]


def test_a_bare_memory_error_is_told_in_words():
    from types import SimpleNamespace

    from apsp.cli_messages import cli_message

    message = cli_message(MemoryError(), SimpleNamespace())
    assert message.startswith("out of memory (") and "--host-memory" in message
