"""benchmarks/first_calls.py measures what it says: an empty cache compiles, the next run does not."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _first_calls():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import first_calls
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return first_calls


def test_kernel_listing_names_the_parameters_that_made_specialisations_differ():
    varying = _first_calls()._varying
    specs = ["c/16 M:i32 N/16 K=1 BLOCK=64", "c/16 M/16 N/16 K:i32 BLOCK=64", "c/16 M=1 N/16 K:i32 BLOCK=64"]
    assert varying(specs) == ["M", "K"]
    assert varying(specs[:1]) == [] and varying([]) == []


@pytest.mark.slow
def test_cold_run_compiles_from_an_empty_cache_and_the_warm_run_does_not(tmp_path, capsys):
    first_calls = _first_calls()
    out = tmp_path / "runs.json"
    assert first_calls.main(["--cases", "readme", "--warm", "1", "--kernels", "--bytecode", "as-is",
                             "--json", str(out)]) == 0
    cold, warm = json.loads(out.read_text())
    assert (cold["run"], warm["run"]) == ("cold", "warm1")
    assert "compiling" in cold["notice"] and cold["stages_s"]["compile"] > 0.1
    compiled = {name for name, _, _, _ in cold["kernels"]}
    assert "numba apsp.io._tokenizer.scan_table" in compiled and "numba apsp.cpu.blocked._close_small" in compiled
    assert not warm["notice"] and "compile" not in warm["stages_s"] and not warm.get("kernels")
    assert "readme n=128" in capsys.readouterr().out
