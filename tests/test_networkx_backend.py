"""The apsp networkx backend against networkx's own implementations.

Each function runs twice per graph: called directly from apsp.networkx_backend
(always), and through networkx's dispatcher with ``backend="apsp"`` (only when
the entry point is registered, i.e. apsp is installed; CI installs it). Both
must agree with networkx on its built-in graphs and on random graphs:
directed and undirected, multigraphs, int / float / missing weights,
self-loops, string and tuple node labels, negative weights and cycles.
"""
from __future__ import annotations

import inspect
import math
from collections import Counter, defaultdict
from importlib.metadata import entry_points

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

nx = pytest.importorskip("networkx")

from apsp import networkx_backend as nxb  # noqa: E402


REGISTERED = any(ep.name == "apsp" and ep.value.startswith("apsp.networkx_backend")
                 for ep in entry_points(group="networkx.backends"))
needs_registration = pytest.mark.skipif(
    not REGISTERED,
    reason="the 'apsp' networkx backend registers through an entry point only when apsp is "
           "installed (pip install -e .); direct-call tests still ran")

FUNCTIONS = list(nxb.FUNCTIONS)
CALLS = ["direct", pytest.param("dispatch", marks=needs_registration)]


class Ledger:
    """Who did the work: calls into apsp's solvers (by entry point) and the backend's hand-backs to
    networkx's own code (by function), so that a comparison cannot pass on networkx's answer alone."""

    def __init__(self):
        self.solves = Counter()
        self.handed_back = []

    def snapshot(self):
        return Counter(self.solves), len(self.handed_back)

    def since(self, snapshot):
        """(solver calls by entry point, hand-backs) since ``snapshot``."""
        solves, backs = snapshot
        return self.solves - solves, self.handed_back[backs:]


LEDGER = Ledger()
#: apsp's entry points the backend's functions reach: the solve, the reductions, its own BFS
SOLVERS = [("apsp.api", "shortest_paths"), ("apsp.stats", "distance_stats"),
           ("apsp.networkx_backend", "_bfs_tree")]


@pytest.fixture(scope="module", autouse=True)
def _apsp_ledger():
    """Count into `LEDGER` every call into apsp's solvers and every hand-back to networkx; and let
    networkx's dispatcher never fall back to its own code on its own."""
    import importlib

    def counting(key, fn):
        def counted(*args, **kwargs):
            LEDGER.solves[key] += 1
            return fn(*args, **kwargs)
        return counted

    def handing_back(fn):
        def handed_back(name, *args, **kwargs):
            LEDGER.handed_back.append(name)
            return fn(name, *args, **kwargs)
        return handed_back

    with pytest.MonkeyPatch.context() as mp:
        for module, name in SOLVERS:
            module = importlib.import_module(module)
            mp.setattr(module, name, counting(name, getattr(module, name)))
        mp.setattr(nxb, "_networkx", handing_back(nxb._networkx))
        mp.setattr(nx.config, "fallback_to_nx", False)
        yield LEDGER


@pytest.fixture(autouse=True)
def _fresh_networkx_config():
    # cached conversions would warn on reuse; keep each test's view of the graph fresh
    cache = nx.config.cache_converted_graphs
    nx.config.cache_converted_graphs = False
    yield
    nx.config.cache_converted_graphs = cache


def call(how, name, G, *args, **kwargs):
    if how == "direct":
        return getattr(nxb, name)(G, *args, **kwargs)
    return getattr(nx, name)(G, *args, backend="apsp", **kwargs)


def reference(name, G, *args, **kwargs):
    return getattr(nx, name)(G, *args, backend="networkx", **kwargs)


# -- graphs ----------------------------------------------------------------------

def builtin_graphs():
    return {
        "karate": nx.karate_club_graph(),
        "les_miserables": nx.les_miserables_graph(),
        "florentine": nx.florentine_families_graph(),
        "davis": nx.davis_southern_women_graph(),
    }


LABELS = {
    "int": lambda i: i,
    "str": lambda i: f"v{i:02d}",
    "tuple": lambda i: (i % 3, f"x{i}"),
}


@st.composite
def nx_graphs(draw, weights=("int", "float", "none", "mixed", "intfloat"), negative=False,
              multigraph=None, directed=None, max_n=11):
    directed = draw(st.booleans()) if directed is None else directed
    multigraph = draw(st.booleans()) if multigraph is None else multigraph
    kind = draw(st.sampled_from(weights))
    n = draw(st.integers(0, max_n))
    label = LABELS[draw(st.sampled_from(sorted(LABELS)))]
    cls = {(False, False): nx.Graph, (True, False): nx.DiGraph,
           (False, True): nx.MultiGraph, (True, True): nx.MultiDiGraph}[(directed, multigraph)]
    G = cls()
    G.add_nodes_from(label(i) for i in draw(st.permutations(range(n))))  # node order != label order
    if n == 0:
        return G, kind
    lo = -3 if negative else 0
    weight = {
        "int": st.integers(lo, 9),
        "float": st.floats(lo, 10, allow_nan=False).map(lambda x: round(x, 3)),
        "none": st.none(),
        "mixed": st.one_of(st.none(), st.integers(lo, 9)),
        # Python ints and floats on one graph: networkx's lengths are ints or floats by path
        "intfloat": st.one_of(st.integers(lo, 9), st.floats(lo, 10, allow_nan=False).map(lambda x: round(x, 3))),
    }[kind]
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), weight),
                          max_size=3 * n))
    for u, v, w in edges:
        attrs = {} if w is None else {"weight": w}
        G.add_edge(label(u), label(v), **attrs)
    return G, kind


def edge_weight(G, u, v, weight="weight", default=1.0):
    """networkx's reading of the lightest u -> v edge."""
    data = G.get_edge_data(u, v)
    if G.is_multigraph():
        return min(d.get(weight, default) for d in data.values())
    return data.get(weight, default)


# -- comparisons ---------------------------------------------------------------------

def assert_close(a, b, exact):
    if exact or math.isinf(b):
        assert a == b
    else:
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def assert_same_length_dict(ours, theirs, exact, types):
    assert type(ours) is dict
    assert ours.keys() == theirs.keys()
    assert next(iter(ours), None) == next(iter(theirs), None)  # the source first
    for k, v in theirs.items():
        assert_close(ours[k], v, exact)
        if types:
            assert type(ours[k]) is type(v), (k, ours[k], v)


def assert_same_generator(ours, theirs, exact, types=True):
    assert inspect.isgenerator(ours)
    ours, theirs = list(ours), list(theirs)
    assert [u for u, _ in ours] == [u for u, _ in theirs]
    for (_, mine), (_, ref) in zip(ours, theirs):
        assert_same_length_dict(mine, ref, exact, types)


def assert_same_fw_dist(ours, theirs, exact, types):
    assert type(ours) is dict and ours.keys() == theirs.keys()
    for u, row in theirs.items():
        assert isinstance(ours[u], defaultdict) and math.isinf(ours[u].default_factory())
        assert ours[u].keys() == row.keys()
        for v, d in row.items():
            assert_close(ours[u][v], d, exact)
            if types:
                assert type(ours[u][v]) is type(d), (u, v, ours[u][v], d)


def assert_valid_fw_pred(G, pred, dist, reference_pred, weight="weight"):
    """Same keys as networkx; each entry a last hop of a shortest path; equal where forced."""
    assert type(pred) is dict
    assert {u: set(row) for u, row in pred.items()} == \
        {u: set(row) for u, row in reference_pred.items()}
    adj = G.pred if G.is_directed() else G.adj
    for u, row in pred.items():
        for v, p in row.items():
            if u == v:
                assert p == u and G.has_edge(u, u)
                continue
            assert G.has_edge(p, v)
            assert math.isclose(dist[u][p] + edge_weight(G, p, v, weight), dist[u][v],
                                rel_tol=1e-12, abs_tol=1e-12)
            path = nx.reconstruct_path(u, v, pred)
            assert path[0] == u and path[-1] == v and len(path) <= len(G)
            candidates = [k for k in adj[v] if k != v and math.isclose(
                dist[u][k] + edge_weight(G, k, v, weight), dist[u][v], rel_tol=1e-12, abs_tol=1e-12)]
            if len(candidates) == 1:
                assert p == reference_pred[u][v]


def one_number_type(G, weight="weight"):
    """Whether networkx adds numbers of one type only: no edge has ``weight``, or every edge has
    it and they are all ints or all floats."""
    given = [w for *_, w in G.edges(data=weight)]
    present = [w for w in given if w is not None]
    return not present or (len(present) == len(given) and len({isinstance(w, float) for w in present}) == 1)


def compare_all(G, kind, how, negative=False):
    """Every implemented function on G, against networkx; on a graph of one number type without
    negative weights, every one of them answered by apsp's solvers, none handed back."""
    exact = kind not in ("float", "intfloat")
    before = LEDGER.snapshot()
    _compare_all(G, kind, how, negative, exact)
    if len(G) and not negative and one_number_type(G):
        solves, handed_back = LEDGER.since(before)
        assert handed_back == []
        # 2 floyd_warshall_numpy, 2 Floyd-Warshall dicts, 5 cutoffs of path lengths, 4 of
        # Dijkstra, 1 Bellman-Ford; the 5 path lists by apsp's own BFS from every node
        assert solves == Counter(shortest_paths=14, _bfs_tree=5 * len(G)), solves


def _compare_all(G, kind, how, negative, exact):
    # floyd_warshall_numpy, with G's node order and with a shuffled nodelist
    nodelist = list(G)[::-1]
    for nl in (None, nodelist):
        ours = call(how, "floyd_warshall_numpy", G, nodelist=nl)
        theirs = reference("floyd_warshall_numpy", G, nodelist=nl)
        assert type(ours) is np.ndarray and ours.dtype == np.float64 and ours.shape == theirs.shape
        if exact:
            np.testing.assert_array_equal(ours, theirs)
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    theirs_pred, theirs_dist = reference("floyd_warshall_predecessor_and_distance", G)
    assert_same_fw_dist(call(how, "floyd_warshall", G), theirs_dist, exact, True)
    ours_pred, ours_dist = call(how, "floyd_warshall_predecessor_and_distance", G)
    assert_same_fw_dist(ours_dist, theirs_dist, exact, True)
    has_negative_cycle = any(theirs_dist[u][u] < 0 for u in G)
    if has_negative_cycle:  # networkx's own result, handed back unchanged
        assert ours_pred == theirs_pred
    else:
        assert_valid_fw_pred(G, ours_pred, ours_dist, theirs_pred)
    for cutoff in (None, 0, 1, 2.5, -1):
        assert_same_generator(call(how, "all_pairs_shortest_path_length", G, cutoff=cutoff),
                              reference("all_pairs_shortest_path_length", G, cutoff=cutoff), True)
        ours = call(how, "all_pairs_shortest_path", G, cutoff=cutoff)
        assert inspect.isgenerator(ours)
        # networkx's breadth-first order is reproduced exactly: same paths, same key order
        assert [(u, list(p.items())) for u, p in ours] == \
            [(u, list(p.items())) for u, p in reference("all_pairs_shortest_path", G, cutoff=cutoff)]
    if not negative:
        for cutoff in (None, 0, 3, 4.5):
            assert_same_generator(
                call(how, "all_pairs_dijkstra_path_length", G, cutoff=cutoff),
                reference("all_pairs_dijkstra_path_length", G, cutoff=cutoff), exact)
    try:
        theirs_bf = list(reference("all_pairs_bellman_ford_path_length", G))
    except nx.NetworkXUnbounded:
        with pytest.raises(nx.NetworkXUnbounded):
            list(call(how, "all_pairs_bellman_ford_path_length", G))
    else:
        assert_same_generator(call(how, "all_pairs_bellman_ford_path_length", G),
                              iter(theirs_bf), exact)


# -- tests -----------------------------------------------------------------------------

@pytest.mark.parametrize("how", CALLS)
@pytest.mark.parametrize("name", sorted(builtin_graphs()))
def test_builtin_graphs(name, how):
    G = builtin_graphs()[name]
    compare_all(G, "int" if name in ("karate", "les_miserables") else "none", how)
    compare_all(G.to_directed(), "int" if name in ("karate", "les_miserables") else "none", how)


@pytest.mark.parametrize("how", CALLS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=nx_graphs())
def test_random_graphs(graph, how):
    G, kind = graph
    compare_all(G, kind, how)


@pytest.mark.parametrize("how", CALLS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=nx_graphs(weights=("int", "mixed", "intfloat"), negative=True))
def test_random_graphs_with_negative_weights(graph, how):
    G, kind = graph
    compare_all(G, kind, how, negative=True)


@pytest.mark.parametrize("how", CALLS)
def test_dijkstra_with_negative_weights_is_networkxs_answer(how):
    G = nx.DiGraph()
    G.add_weighted_edges_from([(0, 1, 4), (0, 2, 1), (2, 1, -2), (1, 3, 1)])
    assert dict(call(how, "all_pairs_dijkstra_path_length", G)) == \
        dict(reference("all_pairs_dijkstra_path_length", G))
    # here networkx's Dijkstra finalises 1 before meeting the negative edge into it
    G.add_weighted_edges_from([(0, 1, 1), (0, 2, 5), (2, 1, -10)])
    with pytest.raises(ValueError, match="Contradictory paths"):
        dict(reference("all_pairs_dijkstra_path_length", G))
    with pytest.raises(ValueError, match="Contradictory paths"):
        dict(call(how, "all_pairs_dijkstra_path_length", G))


@pytest.mark.parametrize("how", CALLS)
@pytest.mark.parametrize("loop_weight", [0.0, 0, 2.5])
def test_floyd_warshall_value_types_follow_networkx(how, loop_weight):
    G = nx.Graph()
    G.add_edge("a", "b", weight=2.0)
    G.add_edge("b", "b", weight=loop_weight)  # a 0.0 self-loop makes networkx's diagonal 0.0
    G.add_node("c")
    ours, theirs = call(how, "floyd_warshall", G), reference("floyd_warshall", G)
    assert ours == theirs
    for u in theirs:
        assert [type(x) for x in ours[u].values()] == [type(theirs[u][v]) for v in ours[u]]


@pytest.mark.parametrize("how", CALLS)
@pytest.mark.parametrize("missing", [False, True])
def test_int_and_float_weights_together_give_networkxs_types(how, missing):
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=2)
    G.add_edge(1, 2, weight=1.5)  # 0 -> 2 and 0 -> 4 go through a float edge: floats
    G.add_edge(0, 3, weight=1)  # 0 -> 1 and 0 -> 3 do not: ints
    G.add_edge(2, 4, weight=3)
    if missing:
        G.add_edge(4, 5)  # networkx reads 1.0 in Floyd-Warshall, 1 in Dijkstra and Bellman-Ford
    compare_all(G, "intfloat", how)
    ours = call(how, "floyd_warshall", G)[0]
    assert [type(ours[v]) for v in (1, 2, 3)] == [int, float, int]


@pytest.mark.parametrize("missing", [None, 1, 1.0])
def test_int_weights_with_missing_ones_give_networkxs_types(missing):
    # ints plus an edge without a weight: Floyd-Warshall's lengths through it are floats in networkx
    G = nx.DiGraph()
    G.add_edge("a", "b", weight=2)
    G.add_edge("b", "c", **({} if missing is None else {"weight": missing}))
    compare_all(G, "int" if missing == 1 else "mixed", "direct")


def test_one_number_type_is_still_solved_by_apsp(monkeypatch):
    def handed_back(*args, **kwargs):
        raise AssertionError("handed back to networkx")

    monkeypatch.setattr(nxb, "_networkx", handed_back)
    for w in ((2, 1, 3), (2.0, 1.5, 3.25)):
        G = nx.DiGraph()
        G.add_weighted_edges_from([(0, 1, w[0]), (1, 2, w[1]), (0, 2, w[2])])
        dist = nxb.floyd_warshall(G)
        want = nx.floyd_warshall(G)
        assert {u: {v: (type(x), x) for v, x in r.items()} for u, r in dist.items()} == \
            {u: {v: (type(x), x) for v, x in r.items()} for u, r in want.items()}
        for name in ("all_pairs_dijkstra_path_length", "all_pairs_bellman_ford_path_length"):
            ours = {u: {v: (type(x), x) for v, x in r.items()} for u, r in getattr(nxb, name)(G)}
            assert ours == {u: {v: (type(x), x) for v, x in r.items()} for u, r in getattr(nx, name)(G)}


@pytest.mark.parametrize("how", CALLS)
def test_negative_self_loop(how):
    G = nx.DiGraph()
    G.add_weighted_edges_from([(0, 1, 2), (1, 1, -1), (1, 2, 3)])
    # floyd_warshall_numpy zeroes the diagonal: the loop never counts
    np.testing.assert_array_equal(call(how, "floyd_warshall_numpy", G),
                                  reference("floyd_warshall_numpy", G))
    assert call(how, "floyd_warshall", G) == reference("floyd_warshall", G)
    with pytest.raises(nx.NetworkXUnbounded):
        list(call(how, "all_pairs_bellman_ford_path_length", G))


@pytest.mark.parametrize("how", CALLS)
def test_multigraph_uses_lightest_parallel_edge(how):
    G = nx.MultiDiGraph()
    G.add_weighted_edges_from([("a", "b", 5), ("a", "b", 2), ("b", "c", 1), ("b", "c", 7)])
    np.testing.assert_array_equal(call(how, "floyd_warshall_numpy", G),
                                  reference("floyd_warshall_numpy", G))
    assert call(how, "floyd_warshall", G)["a"]["c"] == 3


@pytest.mark.parametrize("how", CALLS)
def test_other_weight_attribute_and_weight_none(how):
    G = nx.Graph()
    G.add_edge("a", "b", cost=3, weight=10)
    G.add_edge("b", "c", cost=4)
    G.add_edge("a", "c", cost=9, weight=1)
    for weight in ("cost", None, "weight", "absent"):
        np.testing.assert_array_equal(call(how, "floyd_warshall_numpy", G, weight=weight),
                                      reference("floyd_warshall_numpy", G, weight=weight))
        assert call(how, "floyd_warshall", G, weight=weight) == \
            reference("floyd_warshall", G, weight=weight)
        assert dict(call(how, "all_pairs_dijkstra_path_length", G, weight=weight)) == \
            dict(reference("all_pairs_dijkstra_path_length", G, weight=weight))


@pytest.mark.parametrize("how", CALLS)
def test_empty_and_single_node_graphs(how):
    for G in (nx.Graph(), nx.DiGraph([(1, 1)]), nx.empty_graph(["only"])):
        for name in FUNCTIONS:
            try:
                theirs = reference(name, G)
            except (nx.NetworkXException, ValueError) as exc:  # e.g. the diameter of no nodes
                with pytest.raises(type(exc)):
                    call(how, name, G)
                continue
            ours = call(how, name, G)
            if isinstance(theirs, np.ndarray):
                np.testing.assert_array_equal(ours, theirs)
            elif inspect.isgenerator(theirs):
                assert inspect.isgenerator(ours) and dict(ours) == dict(theirs)
            else:
                assert ours == theirs


@pytest.mark.parametrize("how", CALLS)
def test_bad_nodelist_raises_as_networkx(how):
    G = nx.path_graph(3)
    for bad in ([0, 1], [0, 1, 1], [0, 1, 7]):
        with pytest.raises(nx.NetworkXError) as theirs:
            reference("floyd_warshall_numpy", G, nodelist=bad)
        with pytest.raises(nx.NetworkXError) as ours:
            call(how, "floyd_warshall_numpy", G, nodelist=bad)
        assert str(ours.value) == str(theirs.value)


def test_can_run_declines_weight_functions_and_non_graphs():
    G = nx.path_graph(3)

    def cost(u, v, d):
        return 1

    assert nxb.can_run("all_pairs_dijkstra_path_length", (G,), {"weight": cost}) is not True
    assert "weight functions" in nxb.can_run("all_pairs_dijkstra_path_length", (G, None, cost), {})
    assert nxb.can_run("all_pairs_dijkstra_path_length", (G,), {"weight": "w"}) is True
    assert nxb.can_run("floyd_warshall_numpy", ([[0, 1], [1, 0]],), {}) is not True
    assert nxb.can_run("pagerank", (G,), {}) is not True
    for name in FUNCTIONS:
        assert nxb.can_run(name, (G,), {}) is True


def test_should_run_leaves_path_lists_to_networkx(monkeypatch):
    monkeypatch.setitem(nxb._STARTED, "solved", True)  # apsp's kernels loaded: the sizes measured warm
    G = nx.path_graph(3000)
    assert nxb.should_run("all_pairs_shortest_path", (G,), {}) is not True
    for name in FUNCTIONS:
        if name != "all_pairs_shortest_path":
            assert nxb.should_run(name, (G,), {}) is True


@pytest.mark.parametrize("name", [f for f in FUNCTIONS if f != "all_pairs_shortest_path"])
def test_should_run_declines_graphs_below_the_measured_size(name, monkeypatch):
    monkeypatch.setitem(nxb._STARTED, "solved", True)  # apsp's kernels loaded: the sizes measured warm
    smallest = nxb.SHOULD_RUN_FROM[name]
    assert 10 <= smallest <= 1000  # measured by benchmarks/networkx_threshold.py
    small, large = nx.path_graph(smallest - 1), nx.path_graph(smallest)
    reason = nxb.should_run(name, (small,), {})
    assert isinstance(reason, str) and str(smallest) in reason
    assert nxb.should_run(name, (large,), {}) is True
    assert nxb.should_run(name, (), {"G": nxb.ApspGraph.from_networkx(large)}) is True


def test_should_run_leaves_small_graphs_to_networkx_until_apsp_has_solved(monkeypatch):
    """A process's first call pays apsp's start-up: automatic dispatch keeps graphs below the cold
    size with networkx until apsp has solved once, then only those below the warm size."""
    monkeypatch.setitem(nxb._STARTED, "solved", False)
    G = nx.les_miserables_graph()  # 77 nodes: above floyd_warshall's warm size, below its cold one
    assert nxb.SHOULD_RUN_FROM["floyd_warshall"] <= len(G) < nxb.COLD_FROM["floyd_warshall"]
    reason = nxb.should_run("floyd_warshall", (G,), {})
    assert isinstance(reason, str) and str(nxb.COLD_FROM["floyd_warshall"]) in reason
    big = nx.path_graph(nxb.COLD_FROM["floyd_warshall"])
    assert nxb.should_run("floyd_warshall", (big,), {}) is True
    nx.floyd_warshall(nx.path_graph(4), backend="apsp")  # apsp solves once
    assert nxb._STARTED["solved"]
    assert nxb.should_run("floyd_warshall", (G,), {}) is True


def test_every_function_is_registered_in_one_place():
    """One decorator per function fills the docs notes, the thresholds and the backend interface."""
    assert set(nxb.FUNCTIONS) == set(nxb.SHOULD_RUN_FROM) == set(nxb.get_info()["functions"])
    for name in nxb.FUNCTIONS:
        assert getattr(nxb.backend_interface, name) is getattr(nxb, name)
    for hook in ("can_run", "should_run", "convert_from_nx", "convert_to_nx"):
        assert getattr(nxb.backend_interface, hook) is getattr(nxb, hook)


def test_default_config_and_its_use(monkeypatch):
    assert nxb.get_info()["default_config"] == {"backend": "auto", "dtype": None, "block_size": None,
                                                "block": None}
    seen = []
    import apsp.api

    real = apsp.api.shortest_paths

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(apsp.api, "shortest_paths", spy)
    G = nx.karate_club_graph()
    expected = reference("floyd_warshall_numpy", G)
    np.testing.assert_array_equal(nxb.floyd_warshall_numpy(G), expected)
    assert {k: seen[-1][k] for k in ("backend", "dtype", "block_size")} == {
        "backend": "auto", "dtype": None, "block_size": None}
    config = getattr(nx.config.backends, "apsp", None)
    if config is None:
        pytest.skip("the apsp backend is not registered with networkx (pip install -e .)")
    monkeypatch.setattr(config, "backend", "cpu")
    monkeypatch.setattr(config, "dtype", "float64")
    monkeypatch.setattr(config, "block_size", 16)
    np.testing.assert_array_equal(nx.floyd_warshall_numpy(G, backend="apsp"), expected)
    assert {k: seen[-1][k] for k in ("backend", "dtype", "block_size")} == {
        "backend": "cpu", "dtype": "float64", "block_size": 16}
    # the former name: still used for one release, with a DeprecationWarning
    monkeypatch.setattr(config, "block_size", None)
    monkeypatch.setattr(config, "block", 8)
    with pytest.warns(DeprecationWarning, match="block is now block_size"):
        np.testing.assert_array_equal(nx.floyd_warshall_numpy(G, backend="apsp"), expected)
    assert seen[-1]["block_size"] == 8


@needs_registration
def test_a_configured_dtype_too_small_is_an_error_not_a_silent_fallback(monkeypatch):
    from apsp.errors import DtypeError

    monkeypatch.setattr(nx.config.backends.apsp, "dtype", "int16")
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, 30000, "weight")
    with pytest.raises(DtypeError):
        nx.floyd_warshall_numpy(G, backend="apsp")


@needs_registration
def test_reused_conversion_is_noted_once_per_process_and_follows_mutations(monkeypatch):
    """A session of calls on one graph: at most one cache note (networkx's 25 lines never), and a
    change through the graph's methods is seen; README and the module say what the note means."""
    import warnings
    from pathlib import Path

    from apsp import networkx_cache

    monkeypatch.setitem(networkx_cache._said, "note", False)
    G = nx.karate_club_graph()
    nx.config.cache_converted_graphs = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(6):
            nx.floyd_warshall_numpy(G, backend="apsp")
            nx.closeness_centrality(G, backend="apsp")
            nx.eccentricity(G, backend="apsp")
            dict(nx.all_pairs_dijkstra_path_length(G, backend="apsp"))
        G.add_edge(0, 33, weight=0.001)
        assert nx.floyd_warshall_numpy(G, backend="apsp")[0, 33] == 0.001
    notes = [w for w in caught if "cache" in str(w.message)]
    assert len(notes) == 1 and "networkx graph" in str(notes[0].message), [str(w.message)[:80] for w in caught]
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for text in (readme, nxb.__doc__):
        assert 'warnings_to_ignore.add("cache")' in text and "__networkx_cache__.clear()" in text
    assert "warnings_to_ignore.add('cache')" in networkx_cache.NOTE


@needs_registration
def test_no_caching_when_networkx_is_told_not_to(monkeypatch):
    from apsp import networkx_cache

    monkeypatch.setitem(networkx_cache._said, "note", True)  # said already
    calls = []
    real = nxb.ApspGraph.from_networkx
    monkeypatch.setattr(nxb.ApspGraph, "from_networkx", classmethod(
        lambda cls, G, attrs=None: calls.append(1) or real(G, attrs)))
    G = nx.path_graph(5)
    nx.config.cache_converted_graphs = True
    nx.floyd_warshall_numpy(G, backend="apsp")
    nx.floyd_warshall_numpy(G, backend="apsp")
    assert len(calls) == 1  # kept
    nx.config.cache_converted_graphs = False
    nx.floyd_warshall_numpy(G, backend="apsp")
    assert len(calls) == 2 and isinstance(networkx_cache.ConversionSlot(), dict)


@needs_registration
def test_backend_priority_skips_apsp_for_path_lists(monkeypatch):
    calls = []
    real = nxb.all_pairs_shortest_path

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(nxb.backend_interface, "all_pairs_shortest_path", staticmethod(spy))
    G = nx.karate_club_graph()
    priority = nx.config.backend_priority.algos
    nx.config.backend_priority.algos = ["apsp"]
    try:
        assert dict(nx.all_pairs_shortest_path(G)) == dict(reference("all_pairs_shortest_path", G))
        assert calls == []
        dict(nx.all_pairs_shortest_path(G, backend="apsp"))
        assert calls == [1]
    finally:
        nx.config.backend_priority.algos = priority


def test_conversion_reads_networkx_weights_once():
    G = nx.MultiDiGraph()
    G.add_edge("a", "b", weight=4)
    G.add_edge("a", "b", weight=2)
    G.add_edge("b", "a")  # no weight: networkx's default
    g = nxb.convert_from_nx(G, edge_attrs={"weight": 1})
    assert isinstance(g, nxb.ApspGraph) and g.__networkx_backend__ == "apsp"
    assert g.is_directed() and g.is_multigraph() and len(g) == 2
    assert g.indptr.tolist() == [0, 1, 2] and g.indices.tolist() == [1, 0]
    assert g.weights["weight"].tolist() == [2, 1]
    assert g.missing_weights["weight"] and g.int_weights["weight"]
    assert nxb.convert_from_nx(g) is g
    assert nxb.convert_to_nx(g) is G
    assert nxb.convert_to_nx({"a": 1}) == {"a": 1}


@pytest.mark.parametrize("values", [["a", "b"], [1 + 2j, 1], [float("nan"), 1], [2 ** 70, 1],
                                    [None, 1], ["a", 1]])
@pytest.mark.parametrize("cls", [nx.DiGraph, nx.MultiGraph])
def test_weights_apsp_cannot_add_refuse_conversion(values, cls):
    G = cls()
    G.add_edge(0, 1, weight=values[0])
    G.add_edge(1, 2, weight=values[1])
    if G.is_multigraph():
        G.add_edge(1, 2, weight=values[0])  # parallel edges are compared with min()
    with pytest.raises(NotImplementedError):
        nxb.convert_from_nx(G, edge_attrs={"weight": 1})


@needs_registration
def test_unusable_weights_fall_back_to_networkx_under_priority():
    from fractions import Fraction

    G = nx.DiGraph()
    G.add_edge("a", "b", weight=Fraction(1, 3))
    G.add_edge("b", "c", weight=Fraction(1, 6))
    priority = nx.config.backend_priority.algos
    nx.config.backend_priority.algos = ["apsp"]
    try:
        assert nx.floyd_warshall(G)["a"]["c"] == Fraction(1, 2)
    finally:
        nx.config.backend_priority.algos = priority


def test_rebuilt_networkx_graph_matches():
    G = nx.les_miserables_graph()
    g = nxb.ApspGraph.from_networkx(G, {"weight": 1})
    g.source_graph = None
    H = nxb.convert_to_nx(g)
    assert type(H) is nx.Graph and set(H.nodes) == set(G.nodes)
    assert {frozenset(e) for e in H.edges} == {frozenset(e) for e in G.edges}
    assert all(H[u][v]["weight"] == d["weight"] for u, v, d in G.edges(data=True))


def test_get_info_lists_every_function():
    info = nxb.get_info()
    assert info["backend_name"] == "apsp"
    assert set(info["functions"]) == set(FUNCTIONS)
    for name in FUNCTIONS:
        assert hasattr(nxb.backend_interface, name)
        assert hasattr(nx, name)
        params = list(inspect.signature(getattr(nxb, name)).parameters)
        theirs = [p for p in inspect.signature(getattr(nx, name)).parameters
                  if p not in ("backend", "backend_kwargs")]
        assert params == theirs


# -- through networkx's dispatcher only ----------------------------------------------------

@needs_registration
def test_backend_is_registered_with_networkx():
    assert "apsp" in nx.utils.backends.backends
    assert nx.utils.backends.backend_info["apsp"]["backend_name"] == "apsp"


@needs_registration
def test_weight_function_with_explicit_backend_is_not_implemented():
    G = nx.path_graph(4)
    with pytest.raises(NotImplementedError):
        dict(nx.all_pairs_dijkstra_path_length(G, weight=lambda u, v, d: 2, backend="apsp"))


@needs_registration
def test_backend_priority_runs_apsp_and_falls_back_for_weight_functions(monkeypatch):
    calls = []
    real = nxb.floyd_warshall_numpy

    def spy(*args, **kwargs):
        calls.append("floyd_warshall_numpy")
        return real(*args, **kwargs)

    monkeypatch.setattr(nxb.backend_interface, "floyd_warshall_numpy", staticmethod(spy))
    G = nx.karate_club_graph()
    priority = nx.config.backend_priority.algos
    nx.config.backend_priority.algos = ["apsp"]
    try:
        np.testing.assert_array_equal(nx.floyd_warshall_numpy(G),
                                      reference("floyd_warshall_numpy", G))
        assert calls == []  # 34 nodes: networkx's own code is faster
        monkeypatch.setitem(nxb.SHOULD_RUN_FROM, "floyd_warshall_numpy", len(G))
        np.testing.assert_array_equal(nx.floyd_warshall_numpy(G),
                                      reference("floyd_warshall_numpy", G))
        assert calls == ["floyd_warshall_numpy"]
        cost = dict(nx.all_pairs_dijkstra_path_length(G, weight=lambda u, v, d: 2))
        assert cost == dict(reference("all_pairs_dijkstra_path_length", G,
                                      weight=lambda u, v, d: 2))
    finally:
        nx.config.backend_priority.algos = priority


@needs_registration
def test_apsp_graph_input_dispatches_without_backend_keyword():
    G = nx.florentine_families_graph()
    g = nxb.convert_from_nx(G, edge_attrs={"weight": 1})
    np.testing.assert_array_equal(nx.floyd_warshall_numpy(g), reference("floyd_warshall_numpy", G))
