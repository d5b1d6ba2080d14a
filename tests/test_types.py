"""The public API's names are typed choices: a type checker refuses a misspelt one, and at run
time it is a ValueError naming the choices."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

import numpy as np
import pytest

import apsp
from apsp import choices

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = '''\
import numpy as np

from apsp import EdgeList, distance_stats, shortest_paths

g = EdgeList(3, [0, 1], [1, 2], [5, 7])
r = shortest_paths(g, backend="cpu", method="fw", dtype="int32")
s = distance_stats(g, [0], direction="in", method="dijkstra", dtype=np.int64)
reveal_type(s.closeness())
reveal_type(r.to_frame("polars"))
shortest_paths(g, backend="cuda")
distance_stats(g, direction="both")
'''


def test_mypy_strict_refuses_a_bad_literal_and_types_the_results(tmp_path):
    pytest.importorskip("mypy")
    (tmp_path / "user.py").write_text(SCRIPT)
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                              "--no-incremental", str(tmp_path / "user.py")],
                             cwd=ROOT, capture_output=True, text=True, timeout=600)
    lines = checked.stdout.splitlines()
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 2, checked.stdout
    assert "user.py:10:" in errors[0] and "'cuda'" in errors[0] and "Literal['auto', 'cpu', 'gpu']" in errors[0]
    assert "user.py:11:" in errors[1] and "'both'" in errors[1]
    revealed = [line for line in lines if "Revealed type" in line]
    assert "numpy.float64" in revealed[0] and "polars.dataframe.frame.DataFrame" in revealed[1], checked.stdout


@pytest.mark.parametrize("call, message", [
    (lambda: apsp.shortest_paths([(0, 1, 2)], backend="cuda"), "unknown backend 'cuda'; choose one of auto, cpu, gpu"),
    (lambda: apsp.shortest_paths([(0, 1, 2)], method="floyd"), "unknown method 'floyd'; choose one of auto, fw"),
    (lambda: apsp.distance_stats([(0, 1, 2)], backend="cuda"), "unknown backend 'cuda'"),
    (lambda: apsp.distance_stats([(0, 1, 2)], direction="both"), "unknown direction 'both'; choose one of out, in"),
    (lambda: apsp.distance_stats([(0, 1, 2)], method="fw"), "unknown method 'fw'; choose one of auto, bfs"),
])
def test_a_bad_choice_is_a_value_error_naming_the_choices(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value).startswith(message)


def test_the_literals_are_the_choices_the_method_table_has():
    from apsp import methods

    assert choices.METHODS == methods.METHODS and choices.BACKENDS == methods.BACKENDS
    assert choices.STATS_METHODS == methods.STATS_METHODS
    assert set(get_args(choices.DtypeName)) == set(methods.DTYPES)
    for name in get_args(choices.DtypeName):
        np.dtype(name)


def test_edge_list_takes_sequences():
    edges = apsp.EdgeList(3, [0, 1], [1, 2], [5, 7], labels=["a", "b", "c"])
    assert edges.src.dtype == np.int64 and edges.labels.tolist() == ["a", "b", "c"]
