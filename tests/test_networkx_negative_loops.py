"""The networkx backend's reductions meet a negative self-loop as networkx does: they raise."""
from __future__ import annotations

import pytest

nx = pytest.importorskip("networkx")

from apsp import networkx_backend as nxb  # noqa: E402

CALLS = {
    "closeness_centrality": {"distance": "weight"},
    "harmonic_centrality": {"distance": "weight"},
    "eccentricity": {"weight": "weight"},
    "diameter": {"weight": "weight"},
    "wiener_index": {"weight": "weight"},
    "average_shortest_path_length": {"weight": "weight"},
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_reductions_raise_on_a_negative_self_loop_as_networkx_does(name):
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=1)
    G.add_edge(1, 0, weight=1)
    G.add_edge(0, 0, weight=-1)
    with pytest.raises(ValueError) as expected:
        getattr(nx, name)(G, backend="networkx", **CALLS[name])
    with pytest.raises(ValueError) as got:
        getattr(nxb, name)(G, **CALLS[name])
    assert got.value.args == expected.value.args
