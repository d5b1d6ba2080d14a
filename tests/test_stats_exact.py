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
