"""What a user meets the same way everywhere: comparing and printing results, error messages,
the commands' common options and JSON keys."""
from __future__ import annotations

import numpy as np
import pytest

import apsp


@pytest.fixture(scope="module")
def solved():
    g = apsp.random_graph(2000, 0.002, seed=1)
    return g, apsp.shortest_paths(g, backend="cpu", method="dijkstra")


def test_result_repr_is_one_short_line(solved):
    _, r = solved
    text = repr(r)
    assert len(text) < 120 and "\n" not in text
    assert "n=2000" in text and "int" in text and "dijkstra" in text


def test_results_compare_by_their_answer(solved):
    g, r = solved
    again = apsp.shortest_paths(g, backend="cpu", method="johnson", dtype=r.dtype)
    assert r == again and not (r != again)  # another method, the same answer
    other = apsp.shortest_paths(apsp.random_graph(2000, 0.002, seed=2), backend="cpu", method="dijkstra",
                                dtype=r.dtype)
    assert r != other
    assert r != "a result" and (r == None) is False  # noqa: E711 - comparing with None must not raise
    with pytest.raises(TypeError):
        hash(r)


def test_negative_cycle_error_names_its_vertices():
    with pytest.raises(apsp.NegativeCycleError) as raised:
        apsp.shortest_paths(np.array([[0, -2, 0], [1, 0, 0], [0, 0, 0]]), method="fw", backend="cpu")
    assert raised.value.vertices is not None
    assert "vertices 0, 1" in str(raised.value)
    many = apsp.NegativeCycleError(vertices=list(range(25)))
    assert "0, 1, 2" in str(many) and "and 15 more" in str(many)


def test_gen_takes_quiet_and_json_like_the_other_commands(tmp_path, capsys):
    import json

    from apsp.cli import main

    out = tmp_path / "g.txt"
    assert main(["gen", "30", "--seed", "3", "-o", str(out), "-q", "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["schema_version"] == 1 and summary["n"] == 30 and summary["format"] == "homework"
    assert summary["edges"] == int(out.read_text().split()[1]) and captured.err == ""


def test_stats_json_says_schema_version_like_the_others(tmp_path, capsys):
    import json

    from apsp.cli import main

    (tmp_path / "g.txt").write_text("3 2\n1 2 3\n2 3 4\n")
    assert main(["stats", str(tmp_path / "g.txt"), "--json", "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["schema_version"] == 1


def test_info_shows_apsps_version(capsys):
    import json

    from apsp.cli import main

    assert main(["info"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split()[:4] == ["apsp", "yes", "version", apsp.__version__]
    assert main(["info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["apsp"]["version"] == apsp.__version__
