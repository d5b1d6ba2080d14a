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


# -- whole-number float weights past 2^53, summed in float64 when asked ------------------------

def far_floats():
    return EdgeList(3, np.array([0, 1]), np.array([1, 2]), np.array([1e20, 1e20]))


@pytest.mark.parametrize("method", ["auto", "fw", "nd-fw", "dijkstra", "johnson", "reference"])
def test_whole_float_weights_past_int64_are_answered_in_float64_when_asked(method):
    nx = pytest.importorskip("networkx")
    r = apsp.shortest_paths(far_floats(), dtype="float64", method=method)
    G = nx.DiGraph([(0, 1, {"weight": 1e20}), (1, 2, {"weight": 1e20})])
    assert r.distances[0].tolist() == [0.0, 1e20, nx.shortest_path_length(G, 0, 2, weight="weight")]


def test_whole_float_weights_past_int64_in_stats_and_route_when_asked():
    assert apsp.distance_stats(far_floats(), dtype="float64").total.tolist() == [3e20, 1e20, 0.0]
    assert apsp.shortest_path_between(far_floats(), 0, 2, dtype="float64").length == 2e20


def test_integer_weights_past_float64_exactness_are_still_refused_in_float64():
    from apsp.errors import DtypeError

    with pytest.raises(DtypeError):
        apsp.shortest_paths(EdgeList(3, np.array([0, 1]), np.array([1, 2]), np.array([10 ** 18, 10 ** 18])),
                            dtype="float64")
