"""GraphML weights as networkx reads them: parallel edges, integers past int64, mixed types."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("networkx")

import apsp  # noqa: E402
from apsp.errors import GraphFormatError  # noqa: E402

HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="w" for="edge" attr.name="weight" attr.type="{kind}"/>
  <graph edgedefault="{direction}">
    <node id="a"/><node id="b"/><node id="c"/>
"""


def graphml(tmp_path, edges, kind="long", direction="directed", name="g.graphml"):
    body = "".join(f'    <edge source="{u}" target="{v}"><data key="w">{w}</data></edge>\n' for u, v, w in edges)
    path = tmp_path / name
    path.write_text(HEAD.format(kind=kind, direction=direction) + body + "  </graph>\n</graphml>\n")
    return path


@pytest.mark.parametrize("direction", ["directed", "undirected"])
@pytest.mark.parametrize("heavy_first", [False, True])
def test_graphml_parallel_edges_keep_the_lighter(tmp_path, direction, heavy_first):
    import networkx as nx

    pair = [("a", "b", 9), ("a", "b", 1)] if heavy_first else [("a", "b", 1), ("a", "b", 9)]
    path = graphml(tmp_path, pair + [("b", "c", 1)], direction=direction)
    assert apsp.shortest_paths(path).distance("a", "c") == 2
    assert nx.shortest_path_length(nx.read_graphml(path), "a", "c", weight="weight") == 2
    assert apsp.shortest_path_between(path, "a", "c").length == 2
    assert int(apsp.distance_stats(path, sources=["a"]).total[0]) == 1 + 2


def test_graphml_integer_weight_beyond_int64_is_a_format_error(tmp_path):
    path = graphml(tmp_path, [("a", "b", 2 ** 70), ("b", "c", 1)])
    with pytest.raises(GraphFormatError, match=r"'a' -> 'b'.*beyond int64"):
        apsp.shortest_paths(path)


MIXED = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="i" for="edge" attr.name="weight" attr.type="long"/>
  <key id="f" for="edge" attr.name="weight" attr.type="double"/>
  <graph edgedefault="directed">
    <node id="a"/><node id="b"/><node id="c"/>
    <edge source="a" target="b"><data key="i">1152921504606846977</data></edge>
    <edge source="b" target="c"><data key="f">1.5</data></edge>
  </graph>
</graphml>
"""


def test_graphml_integer_that_float64_would_round_beside_floats_is_refused(tmp_path):
    path = tmp_path / "mixed.graphml"
    path.write_text(MIXED)  # 2^60 + 1 beside a float weight: float64 would make it 2^60
    with pytest.raises(GraphFormatError, match="float64 cannot hold it exactly"):
        apsp.shortest_paths(path)


@pytest.mark.parametrize("command", [["IN", "OUT"], ["path", "IN", "--from", "a", "--to", "c"],
                                     ["stats", "IN"]])
def test_cli_graphml_weight_beyond_int64_exits_with_a_message(tmp_path, command):
    path = graphml(tmp_path, [("a", "b", 2 ** 70), ("b", "c", 1)])
    args = [str(path) if a == "IN" else str(tmp_path / "out.txt") if a == "OUT" else a for a in command]
    run = subprocess.run([sys.executable, "-m", "apsp", *args], capture_output=True, text=True)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr and "beyond int64" in run.stderr and "g.graphml" in run.stderr
