"""Graphs as users bring them: networkx graphs, pandas / polars edge tables, CPU torch tensors."""
from __future__ import annotations

import numpy as np
import pytest

import apsp

nx = pytest.importorskip("networkx")


def test_networkx_graph_keeps_its_nodes_as_labels_and_matches_networkx():
    G = nx.DiGraph()
    G.add_weighted_edges_from([("a", "b", 2), ("b", "c", 3), ("a", "c", 9), ("c", "d", 1)])
    G.add_edge("d", "a")  # no weight attribute: 1, as networkx reads it
    r = apsp.shortest_paths(G, backend="cpu")
    assert r.labels.tolist() == ["a", "b", "c", "d"]
    theirs = dict(nx.all_pairs_dijkstra_path_length(G))
    for u in G:
        for v in G:
            assert r.distance(u, v) == theirs[u][v]


def test_undirected_multigraph_takes_both_ways_and_the_lightest_edge():
    G = nx.MultiGraph()
    G.add_edge(10, 20, weight=5)
    G.add_edge(10, 20, weight=2)
    G.add_edge(20, 30, weight=1)
    r = apsp.shortest_paths(G, backend="cpu")
    assert r.labels.tolist() == [10, 20, 30] and r.distance(30, 10) == 3


def test_distance_stats_takes_a_networkx_graph():
    G = nx.karate_club_graph()
    s = apsp.distance_stats(G, unweighted=True)
    assert s.diameter() == nx.diameter(G)
    assert np.allclose(s.closeness(), list(nx.closeness_centrality(G).values()))


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_edge_tables_with_any_labels(library):
    frames = pytest.importorskip(library)
    table = frames.DataFrame({"source": ["paris", "lyon", "nice"], "target": ["lyon", "nice", "paris"],
                              "weight": [4.5, 2.0, 1.0]})
    r = apsp.shortest_paths(table, backend="cpu")
    assert r.labels.tolist() == ["lyon", "nice", "paris"]
    assert r.distance("paris", "nice") == 6.5 and r.distance("nice", "lyon") == 5.5
    ids = frames.DataFrame({"source": [5, 77, 1000000], "target": [77, 1000000, 5]})  # no weight: 1 each
    r = apsp.shortest_paths(ids, backend="cpu")
    assert r.labels.tolist() == [5, 77, 1000000] and r.distance(5, 1000000) == 2
    s = apsp.distance_stats(ids)
    assert s.diameter() == 2


def test_edge_table_problems_are_named():
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="columns 'source' and 'target'"):
        apsp.shortest_paths(pd.DataFrame({"from": [1], "to": [2]}))
    with pytest.raises(ValueError, match="'target' column has missing values"):
        apsp.shortest_paths(pd.DataFrame({"source": ["a", "b"], "target": ["b", None]}))
    with pytest.raises(ValueError, match="'weight' column must hold numbers"):
        apsp.shortest_paths(pd.DataFrame({"source": ["a"], "target": ["b"], "weight": ["heavy"]}))


def test_cpu_torch_tensor_is_a_dense_matrix():
    torch = pytest.importorskip("torch")
    t = torch.tensor([[0, 3, 0], [0, 0, 4], [1, 0, 0]])
    assert apsp.shortest_paths(t, backend="cpu").distances.tolist() == [[0, 3, 7], [5, 0, 4], [1, 4, 0]]
    s = apsp.distance_stats(t.to(torch.float64))
    assert s.diameter() == 7
    # sparse COO and CSR tensors are read as scipy's sparse matrices are; other layouts are refused
    assert apsp.shortest_paths(t.to_sparse(), backend="cpu").distances.tolist() == [[0, 3, 7], [5, 0, 4], [1, 4, 0]]
    with pytest.raises(TypeError, match="layout torch.sparse_csc"):
        apsp.shortest_paths(t.to_sparse_csc())


# -- CSV edge lists with a header ------------------------------------------------------------------
def test_csv_edge_list_keeps_string_ids(tmp_path):
    from apsp.io import read_graph

    p = tmp_path / "roads.csv"
    p.write_text('# a comment\nsource,target,weight\nparis,lyon,4.5\n\nlyon,nice,2\n"nice, city",paris,1\n')
    e = read_graph(p)
    assert e.labels.tolist() == ["lyon", "nice", "nice, city", "paris"]
    r = apsp.shortest_paths(p, backend="cpu")
    assert r.distance("paris", "nice") == 6.5
    (tmp_path / "ids.csv").write_text("target,source\n77,5\n1000000,77\n")  # any column order; weight 1
    e = read_graph(tmp_path / "ids.csv")
    assert e.labels.tolist() == [5, 77, 1000000] and e.weight.tolist() == [1, 1]


@pytest.mark.parametrize("text, line, problem", [
    ("source,target,weight\na,b,1\nb,c\n", 3, "expected 3 fields"),
    ("source,target,weight\na,b,heavy\n", 2, "weight 'heavy' is not a number"),
    ("source,target,weight\na,b,inf\n", 2, "not a finite number"),
    ("src,dst\na,b\n", 1, "must name the columns source, target"),
    ("source,target\na,\n", 2, "empty target id"),
    ("source,target\n\"a,b\n", 2, "not CSV"),
    ("", 1, "empty file"),
])
def test_csv_errors_name_file_and_line(tmp_path, text, line, problem):
    from apsp.errors import GraphFormatError
    from apsp.io import read_graph

    p = tmp_path / "g.csv"
    p.write_text(text)
    with pytest.raises(GraphFormatError) as raised:
        read_graph(p)
    assert str(raised.value).startswith(f"{p}:{line}: ") and problem in str(raised.value)


def test_cli_reads_csv_by_suffix_and_by_format(tmp_path, capsys):
    from apsp.cli import main

    (tmp_path / "g.csv").write_text("source,target,weight\nu1,u2,3\nu2,u3,4\n")
    assert main(["path", str(tmp_path / "g.csv"), "--from", "u1", "--to", "u3", "-q"]) == 0
    assert "u1 -> u2 -> u3" in capsys.readouterr().out
    (tmp_path / "g.dat").write_text("source,target,weight\nu1,u2,3\nu2,u3,4\n")
    assert main(["solve", str(tmp_path / "g.dat"), "--format", "csv", "-o", str(tmp_path / "d.npy"), "-q"]) == 0
    (tmp_path / "bad.csv").write_text("source,target,weight\nu1,u2\n")
    assert main(["stats", str(tmp_path / "bad.csv"), "-q"]) != 0
    assert f"{tmp_path / 'bad.csv'}:2: expected 3 fields" in capsys.readouterr().err


def test_csv_reader_survives_any_bytes(tmp_path):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from apsp.errors import GraphFormatError
    from apsp.io import read_graph

    p = tmp_path / "f.csv"
    p.write_text("source,target\na,b\n")
    assert read_graph(p).labels.tolist() == ["a", "b"]  # the reader, not a refusal of the suffix, is fuzzed
    p.write_bytes(b'"\xc2\x80')  # an unterminated quote on the header's line
    with pytest.raises(GraphFormatError, match="not CSV"):
        read_graph(p)

    @settings(max_examples=200, deadline=None)
    @given(st.binary(max_size=120).map(lambda b: b"source,target,weight\n" + b) | st.binary(max_size=80))
    def read(data):
        p.write_bytes(data)
        try:
            read_graph(p)
        except (GraphFormatError, ValueError):
            pass

    read()
