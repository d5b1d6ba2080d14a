"""Statistics that must be exact or refused: integer sums past 2^53, labelled vertices, outputs
that would replace the input."""
from __future__ import annotations

import numpy as np
import pytest

import apsp
from apsp.graph import EdgeList


# -- integer sums past float64's 2^53 ----------------------------------------------------------

@pytest.mark.parametrize("method", ["dijkstra", "johnson"])
def test_integer_row_sums_past_two_to_the_53_are_exact(method):
    big = 2 ** 53 + 1
    s = apsp.distance_stats(EdgeList(2, np.array([0]), np.array([1]), np.array([big])), method=method)
    assert int(s.total[0]) == big == int(s.eccentricity[0])
    assert s.total_distance() == big


def test_wiener_index_of_a_two_cycle_near_two_to_the_59_is_exact():
    big = 2 ** 59
    g = EdgeList(2, np.array([0, 1]), np.array([1, 0]), np.array([big + 1, big + 3]))
    assert apsp.distance_stats(g).wiener_index() == 2 * big + 4


def test_networkx_backend_wiener_index_is_exact_past_two_to_the_53():
    nx = pytest.importorskip("networkx")
    from apsp import networkx_backend as nxb

    G = nx.DiGraph()
    G.add_edge(0, 1, weight=2 ** 59 + 1)
    G.add_edge(1, 0, weight=2 ** 59 + 3)
    assert nxb.wiener_index(G, weight="weight") == 2 ** 60 + 4 == nx.wiener_index(G, weight="weight")


# -- statistics by label ----------------------------------------------------------------------

GRAPHML = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="w" for="edge" attr.name="weight" attr.type="long"/>
  <graph edgedefault="directed">
    <node id="2"/><node id="0"/><node id="1"/>
    <edge source="2" target="0"><data key="w">5</data></edge>
    <edge source="0" target="1"><data key="w">1</data></edge>
    <edge source="1" target="2"><data key="w">1</data></edge>
  </graph>
</graphml>
"""


@pytest.fixture
def snap_file(tmp_path):
    path = tmp_path / "ids.snap"
    path.write_text("5 77\n77 555\n555 1000000\n1000000 5\n5 555\n")
    return path


@pytest.fixture
def graphml_file(tmp_path):
    path = tmp_path / "ids.graphml"
    path.write_text(GRAPHML)
    return path


def test_stats_sources_are_snap_ids(snap_file):
    s = apsp.distance_stats(snap_file, sources=[555, 5])
    assert s.vertices.tolist() == [555, 5]
    assert s.eccentricity.tolist() == [3, 2]  # 555->1000000->5->77; 5->77 and 5->555 at 1, 1000000 at 2
    assert s.center().tolist() == [5] and s.periphery().tolist() == [555]


def test_stats_sources_by_index_on_snap_ids_is_refused(snap_file):
    with pytest.raises(ValueError, match="not a vertex label"):
        apsp.distance_stats(snap_file, sources=[1])


def test_stats_sources_and_targets_are_graphml_node_ids(graphml_file):
    r = apsp.shortest_paths(graphml_file)
    s = apsp.distance_stats(graphml_file, sources=["0"])
    assert s.vertices.tolist() == ["0"]
    assert int(s.total[0]) == r.distance("0", "1") + r.distance("0", "2") == 3
    only = apsp.distance_stats(graphml_file, sources=["2"], targets=["1"])
    assert int(only.total[0]) == r.distance("2", "1") == 6


def test_stats_center_and_periphery_are_graphml_node_ids(graphml_file):
    s = apsp.distance_stats(graphml_file)
    assert s.vertices.tolist() == ["2", "0", "1"]
    # eccentricities: "2" 6, "0" 2, "1" 6
    assert s.center().tolist() == ["0"] and sorted(s.periphery().tolist()) == ["1", "2"]


def run_cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "apsp", *map(str, args)], capture_output=True, text=True)


def test_cli_stats_speaks_snap_ids(snap_file, tmp_path):
    import json

    csv = tmp_path / "s.csv"
    run = run_cli("stats", snap_file, "--sources", "555,5", "--json", "-q", "--csv", csv)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["center"] == [5] and summary["periphery"] == [555]
    assert [line.split(",")[0] for line in csv.read_text().splitlines()[1:]] == ["555", "5"]
    refused = run_cli("stats", snap_file, "--sources", "1", "-q")
    assert refused.returncode != 0 and "not a vertex label" in refused.stderr


def test_cli_stats_speaks_graphml_node_ids(graphml_file, tmp_path):
    import json

    csv = tmp_path / "s.csv"
    run = run_cli("stats", graphml_file, "--json", "-q", "--csv", csv)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["center"] == ["0"]
    rows = [line.split(",") for line in csv.read_text().splitlines()[1:]]
    assert [(r[0], r[2]) for r in rows] == [("2", "11"), ("0", "3"), ("1", "7")]
    one = run_cli("stats", graphml_file, "--sources", "0", "--json", "-q")
    assert json.loads(one.stdout)["wiener_index"] == 3  # node "0": 1 + 2, not node "2"'s 11


# -- an output that is the input ----------------------------------------------------------------

@pytest.mark.parametrize("through_link", [False, True])
def test_cli_stats_csv_naming_the_input_is_refused(snap_file, tmp_path, through_link):
    before = snap_file.read_bytes()
    target = snap_file
    if through_link:
        target = tmp_path / "link.csv"
        target.symlink_to(snap_file)
    run = run_cli("stats", snap_file, "--csv", target, "-q")
    assert run.returncode != 0 and "the input" in run.stderr
    assert snap_file.read_bytes() == before
