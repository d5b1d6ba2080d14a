"""The test suite's own machinery (tests/conftest.py): random tests replay from the seed a failure
prints, and the fast tier (``--fast``) runs every test function on fewer cases."""
from __future__ import annotations

import re
from pathlib import Path

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).with_name("conftest.py")

RANDOM_TEST = """
def test_draw(rng, random_seed):
    print("drew", rng.integers(2 ** 62), "from", random_seed)
    assert False
"""


def _drawn(result) -> list[str]:
    return [line for line in result.outlines if line.startswith("drew")]


def test_a_failing_random_test_says_how_to_replay_it(pytester, monkeypatch):
    monkeypatch.delenv("APSP_TEST_SEED", raising=False)
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile(test_draw=RANDOM_TEST)
    first = pytester.runpytest("-p", "no:cacheprovider")
    first.assert_outcomes(failed=1)
    replay = [line for line in first.outlines if "python -m pytest --seed" in line]
    assert len(replay) == 1 and "test_draw.py::test_draw" in replay[0]
    run_seed = re.search(r"--seed (\d+)", replay[0]).group(1)
    assert f"random seed: {run_seed}" in first.stdout.str()  # the header names it too
    again = pytester.runpytest("-p", "no:cacheprovider", "--seed", run_seed, "test_draw.py::test_draw")
    assert _drawn(again) == _drawn(first) != []
    monkeypatch.setenv("APSP_TEST_SEED", run_seed)
    assert _drawn(pytester.runpytest("-p", "no:cacheprovider")) == _drawn(first)
    other = pytester.runpytest("-p", "no:cacheprovider", "--seed", str(int(run_seed) + 1))
    assert _drawn(other) != _drawn(first)


FAST_TESTS = """
import pytest
from hypothesis import given, settings, strategies as st

EXAMPLES = []


@pytest.mark.parametrize("case", range(7))
def test_cases(case):
    print("case", case)


@pytest.mark.slow
def test_slow():
    pass


@pytest.mark.mpi
def test_mpi():
    pass


@settings(max_examples=50, database=None)
@given(st.integers())
def test_examples(x):
    EXAMPLES.append(x)


def test_examples_counted():
    print("examples", len(EXAMPLES))
"""


def test_the_fast_tier_runs_every_function_on_fewer_cases(pytester):
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile(test_tiers=FAST_TESTS)
    full = pytester.runpytest("-p", "no:cacheprovider", "-s")
    full.assert_outcomes(passed=11)
    assert "examples 50" in full.stdout.str()
    fast = pytester.runpytest("-p", "no:cacheprovider", "-s", "--fast")
    fast.assert_outcomes(passed=3, deselected=8)
    out = fast.stdout.str()
    assert re.findall(r"case \d", out) == ["case 3"] and "examples 5" in out
