"""The networkx backend's distance reductions (closeness, harmonic, eccentricity and the rest)
against networkx's own code: on random graphs here, and through networkx's own test modules."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

nx = pytest.importorskip("networkx")

from apsp import networkx_backend as nxb  # noqa: E402

from test_networkx_backend import (CALLS, LEDGER, REGISTERED, _apsp_ledger,  # noqa: E402,F401
                                   _fresh_networkx_config, call, nx_graphs, reference)

STATS_FUNCTIONS = ["closeness_centrality", "harmonic_centrality", "eccentricity", "diameter",
                   "radius", "center", "periphery", "average_shortest_path_length",
                   "wiener_index", "global_efficiency"]


def outcome(fn):
    """``("value", v)`` or ``("error", type, message)``."""
    try:
        return ("value", fn())
    except (nx.NetworkXException, ValueError) as exc:
        return ("error", type(exc), str(exc))


def same(ours, theirs, exact):
    """Equal values and types; floats to 1e-12 unless ``exact``."""
    if isinstance(theirs, dict):
        assert type(ours) is dict and list(ours) == list(theirs)
        for k in theirs:
            same(ours[k], theirs[k], exact)
    elif isinstance(theirs, list):
        assert ours == theirs
    elif isinstance(theirs, float) and not exact and not math.isinf(theirs):
        assert type(ours) is float and math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-12)
    else:
        assert ours == theirs and type(ours) is type(theirs), (ours, theirs)


def compare(how, name, G, exact, *args, by_apsp=False, **kwargs):
    """apsp's answer (or error) equals networkx's; with ``by_apsp``, apsp's reductions computed it
    and nothing was handed back to networkx."""
    before = LEDGER.snapshot()
    ours = outcome(lambda: call(how, name, G, *args, **kwargs))
    if by_apsp:
        solves, handed_back = LEDGER.since(before)
        assert handed_back == [] and solves["distance_stats"] >= 1, (name, kwargs, solves, handed_back)
    theirs = outcome(lambda: reference(name, G, *args, **kwargs))
    assert ours[0] == theirs[0], (name, kwargs, ours, theirs)
    if theirs[0] == "error":
        assert ours[1:] == theirs[1:], (name, kwargs)
    else:
        try:
            same(ours[1], theirs[1], exact)
        except AssertionError as exc:
            raise AssertionError(f"{name} {kwargs}: {exc}") from None


def compare_stats(G, kind, how):
    # whole-number weights give networkx's exact values (the same float operations on the same
    # integers); float weights, alone or mixed with ints, are summed in another order
    exact = kind not in ("float", "intfloat")
    nodes = list(G)
    # apsp answers all on two nodes or more without negative weights or ints mixed with floats;
    # the center of an undirected tree (networkx walks it) stays networkx's
    by_apsp = len(G) > 1 and kind != "intfloat" and not any(
        w < 0 for *_, w in G.edges(data="weight", default=1))
    tree_walk = not G.is_directed() and len(G) > 0 and nx.is_tree(G)
    for weight in (None, "weight"):
        for wf in (True, False):
            compare(how, "closeness_centrality", G, exact, distance=weight, wf_improved=wf, by_apsp=by_apsp)
        if nodes:
            compare(how, "closeness_centrality", G, exact, u=nodes[-1], distance=weight, by_apsp=by_apsp)
            compare(how, "eccentricity", G, exact, v=nodes[0], weight=weight, by_apsp=by_apsp)
            compare(how, "eccentricity", G, exact, v=nodes[::2], weight=weight, by_apsp=by_apsp)
        compare(how, "harmonic_centrality", G, False, distance=weight, by_apsp=by_apsp)
        compare(how, "harmonic_centrality", G, False, nbunch=nodes[::2], sources=nodes[1::3],
                distance=weight, by_apsp=by_apsp)
        compare(how, "harmonic_centrality", G, False, nbunch=nodes[:2], sources=nodes,
                distance=weight, by_apsp=by_apsp)
        for name in ("eccentricity", "diameter", "radius", "center", "periphery", "wiener_index"):
            walked = name == "center" and weight is None and tree_walk
            compare(how, name, G, exact, weight=weight, by_apsp=by_apsp and not walked)
        for method in (None, "unweighted", "dijkstra", "bellman-ford", "floyd-warshall-numpy"):
            compare(how, "average_shortest_path_length", G, exact, weight=weight, method=method,
                    by_apsp=by_apsp)
    if not G.is_directed():
        compare(how, "global_efficiency", G, False, by_apsp=by_apsp)


@pytest.mark.parametrize("how", CALLS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=nx_graphs(max_n=13))
def test_random_graphs(graph, how):
    G, kind = graph
    compare_stats(G, kind, how)


@pytest.mark.parametrize("how", CALLS)
@pytest.mark.parametrize("directed", [False, True])
def test_builtin_and_disconnected_graphs(how, directed):
    for G in (nx.karate_club_graph(), nx.les_miserables_graph(), nx.florentine_families_graph(),
              nx.disjoint_union(nx.path_graph(4), nx.cycle_graph(5)), nx.path_graph(1)):
        G = G.to_directed() if directed else G
        compare_stats(G, "int", how)


@pytest.mark.parametrize("how", CALLS)
def test_negative_weights_get_networkxs_answer(how):
    G = nx.DiGraph([(0, 1, {"weight": 2}), (1, 2, {"weight": -1}), (2, 0, {"weight": 3})])
    for name in ("eccentricity", "wiener_index", "diameter"):
        compare(how, name, G, True, weight="weight")
    compare(how, "closeness_centrality", G, True, distance="weight")
    compare(how, "average_shortest_path_length", G, True, weight="weight", method="bellman-ford")


@pytest.mark.parametrize("how", CALLS)
def test_bad_nodes_raise_as_networkx(how):
    G = nx.path_graph(4)
    for name, kwargs in [("closeness_centrality", {"u": 9}), ("eccentricity", {"v": 3.5}),
                         ("harmonic_centrality", {"nbunch": [9]})]:
        compare(how, name, G, True, **kwargs)
    with pytest.raises(nx.NetworkXPointlessConcept):
        call(how, "average_shortest_path_length", nx.Graph())
    with pytest.raises(ValueError, match="method not supported"):
        call(how, "average_shortest_path_length", G, method="astar")


def test_every_reduction_is_registered():
    assert set(STATS_FUNCTIONS) <= set(nxb.FUNCTIONS)


@pytest.mark.slow
@pytest.mark.skipif(not REGISTERED, reason="networkx's test backend needs the installed entry point")
def test_networkx_own_tests_pass_with_the_backend(tmp_path):
    """networkx's test modules for these functions, every dispatchable call routed to apsp
    (``NETWORKX_TEST_BACKEND``); a plugin counts the calls that reached apsp."""
    root = Path(nx.__file__).parent
    modules = [root / "algorithms" / p for p in (
        "centrality/tests/test_closeness_centrality.py", "centrality/tests/test_harmonic_centrality.py",
        "tests/test_distance_measures.py", "tests/test_efficiency.py", "tests/test_wiener.py",
        "shortest_paths/tests/test_generic.py")]
    (tmp_path / "count_apsp.py").write_text(
        "import collections\n"
        "from apsp import networkx_backend as nxb\n"
        "CALLS = collections.Counter()\n"
        f"for name in {STATS_FUNCTIONS!r}:\n"
        "    def wrap(fn, name=name):\n"
        "        def inner(*a, **k):\n"
        "            CALLS[name] += 1\n"
        "            return fn(*a, **k)\n"
        "        return staticmethod(inner)\n"
        "    setattr(nxb._BackendInterface, name, wrap(getattr(nxb, name)))\n"
        "def pytest_terminal_summary(terminalreporter):\n"
        "    terminalreporter.write_line(f'apsp calls: {sorted(CALLS)}')\n")
    here = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NETWORKX_TEST_BACKEND="apsp", NETWORKX_FALLBACK_TO_NX="True",
               PYTHONPATH=os.pathsep.join([str(here), str(tmp_path)]))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "count_apsp", "-W", "ignore", f"--rootdir={root}",
                          *map(str, modules)], env=env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:]
    assert f"apsp calls: {sorted(STATS_FUNCTIONS)}" in run.stdout


@pytest.mark.parametrize("weight_value", [0.0, 2.0, 3])
def test_wiener_index_of_a_directed_graph_has_networkxs_type(weight_value):
    """networkx sums float lengths where the weights are floats, whole or not (0.0, 4.0), and ints
    where they are ints; a single vertex sums no length at all (0, an int)."""
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=weight_value)
    G.add_edge(1, 0, weight=weight_value)
    for graph in (G, nx.DiGraph(G.subgraph([0]))):
        compare("direct", "wiener_index", graph, True, weight="weight")


@pytest.mark.parametrize("directed", [False, True])
def test_a_graph_is_converted_once_and_reversed_once(monkeypatch, rng, directed):
    """The converted graph keeps the apsp graph built from it and, for a directed graph, the
    reversed one that closeness searches: repeated calls build neither again, nor convert ``G``
    again when networkx caches the conversion."""
    import warnings

    from apsp.graph import Graph

    built, converted = [], []
    real_init, real_from_networkx = Graph.__init__, nxb.ApspGraph.from_networkx.__func__

    def counted_init(self, n, *args, **kwargs):
        built.append(n)
        real_init(self, n, *args, **kwargs)

    def counted_from_networkx(cls, *args, **kwargs):
        converted.append(1)
        return real_from_networkx(cls, *args, **kwargs)

    monkeypatch.setattr(Graph, "__init__", counted_init)
    monkeypatch.setattr(nxb.ApspGraph, "from_networkx", classmethod(counted_from_networkx))
    G = nx.gnp_random_graph(40, 0.15, seed=int(rng.integers(2 ** 31)), directed=directed)
    for u, v in G.edges:
        G[u][v]["weight"] = int(rng.integers(1, 9))
    want = nx.closeness_centrality(G, distance="weight")
    g = nxb.convert_from_nx(G, edge_attrs={"weight": 1})
    for _ in range(3):
        same(nxb.closeness_centrality(g, distance="weight"), want, False)
    assert converted == [1] and built == [40] * (2 if directed else 1)
    if REGISTERED:
        converted.clear()
        built.clear()
        monkeypatch.setattr(nx.config, "cache_converted_graphs", True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # networkx's note on a cached conversion
            for _ in range(3):
                same(nx.closeness_centrality(G, distance="weight", backend="apsp"), want, False)
        assert converted == [1] and built == [40] * (2 if directed else 1)
