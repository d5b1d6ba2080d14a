"""benchmarks/first_calls.py measures what it says: an empty cache compiles, the next run does not."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_cold_run_compiles_from_an_empty_cache_and_the_warm_run_does_not(tmp_path, capsys):
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import first_calls
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    out = tmp_path / "runs.json"
    assert first_calls.main(["--cases", "readme", "--warm", "1", "--kernels", "--bytecode", "as-is",
                             "--json", str(out)]) == 0
    cold, warm = json.loads(out.read_text())
    assert (cold["run"], warm["run"]) == ("cold", "warm1")
    assert "compiling" in cold["notice"] and cold["stages_s"]["compile"] > 0.1
    compiled = {name for name, _, _ in cold["kernels"]}
    assert "numba apsp.io._tokenizer.scan_table" in compiled and "numba apsp.cpu.blocked._close_small" in compiled
    assert not warm["notice"] and "compile" not in warm["stages_s"] and not warm.get("kernels")
    assert "readme n=128" in capsys.readouterr().out
