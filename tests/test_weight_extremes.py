"""Weights at the edges of the dtype policy: a lone vertex's heavy self-loop, whole-number floats
far past int64."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import apsp
from apsp.graph import EdgeList

LOOP_WEIGHTS = [32768, 40000, 2 ** 31 + 5]


def lone_loop(weight):
    return EdgeList(1, np.array([0]), np.array([0]), np.array([weight]))


@pytest.mark.parametrize("weight", LOOP_WEIGHTS)
@pytest.mark.parametrize("method", ["auto", "fw", "nd-fw", "dijkstra", "johnson", "reference"])
def test_lone_vertex_with_heavy_self_loop_is_at_distance_zero(weight, method):
    r = apsp.shortest_paths(lone_loop(weight), method=method)
    assert r.distances.tolist() == [[0]]


@pytest.mark.parametrize("weight", LOOP_WEIGHTS)
def test_lone_vertex_with_heavy_self_loop_in_stats_route_and_drop_in(weight):
    from apsp import scipy_compat

    s = apsp.distance_stats(lone_loop(weight))
    assert s.total.tolist() == [0] and s.eccentricity.tolist() == [0]
    assert apsp.shortest_path_between(lone_loop(weight), 0, 0).length == 0
    for method in ("D", "J", "FW", "auto"):
        assert scipy_compat.shortest_path(sp.csr_matrix(np.array([[weight]])), method=method).tolist() == [[0.0]]


def test_cli_lone_vertex_with_heavy_self_loop(tmp_path):
    import subprocess
    import sys

    src = tmp_path / "loop.snap"
    src.write_text("0 0 40000\n")
    out = tmp_path / "d.txt"
    for args in ([str(src), str(out), "--method", "reference"], ["stats", str(src), "--json"]):
        run = subprocess.run([sys.executable, "-m", "apsp", *args], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
    assert out.read_text().split() == ["0"]
