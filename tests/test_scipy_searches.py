"""apsp's dijkstra / johnson / bellman_ford against scipy.sparse.csgraph's, input by input."""
from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.sparse import csgraph

import apsp
from apsp import scipy_searches

NULL = -9999


@st.composite
def graphs(draw, negative=False):
    n = draw(st.integers(1, 9))
    mask = draw(hnp.arrays(np.bool_, (n, n), elements=st.booleans()))
    lo = -3 if negative else 0
    if draw(st.booleans()):
        w = draw(hnp.arrays(np.int64, (n, n), elements=st.integers(lo, 9))).astype(np.float64)
    else:
        w = draw(hnp.arrays(np.int64, (n, n), elements=st.integers(lo * 4, 40))) / 4.0
    rows, cols = np.nonzero(mask)
    g = sp.csr_matrix((w[rows, cols], (rows, cols)), shape=(n, n))  # explicit zeros are edges
    return g if draw(st.booleans()) else g.toarray()


def indices_for(n, draw):
    return draw(st.one_of(st.none(), st.integers(-n, n - 1),
                          st.lists(st.integers(-n, n - 1), min_size=1, max_size=4)))


def both(name, g, **kwargs):
    """(ours, scipy's) or None after checking both raised the same error with the same message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = getattr(csgraph, name)(g.copy(), **kwargs)
        except Exception as exc:  # noqa: BLE001 - whatever scipy raises, ours must too
            with pytest.raises(type(exc)) as ours:
                getattr(scipy_searches, name)(g.copy(), **kwargs)
            assert str(ours.value) == str(exc)
            return None
        return getattr(scipy_searches, name)(g.copy(), **kwargs), theirs




@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), g=graphs(), directed=st.booleans(), unweighted=st.booleans(),
       return_predecessors=st.booleans(), limit=st.sampled_from([np.inf, 0, 1.5, 4, 7]))
def test_dijkstra_matches_scipy(data, g, directed, unweighted, return_predecessors, limit):
    n = g.shape[0]
    indices = indices_for(n, data.draw)
    got = both("dijkstra", g, directed=directed, indices=indices, unweighted=unweighted,
               return_predecessors=return_predecessors, limit=limit)
    if got is None:
        return
    ours, theirs = got
    if return_predecessors:
        (ours, pred), (theirs, their_pred) = ours, theirs
        assert pred.dtype == np.int32 and pred.shape == their_pred.shape
        np.testing.assert_array_equal(pred == NULL, their_pred == NULL)
    assert ours.dtype == np.float64 and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), g=graphs(), directed=st.booleans(), unweighted=st.booleans(),
       limit=st.sampled_from([np.inf, 0, 2.5, 6]))
def test_dijkstra_min_only_matches_scipy(data, g, directed, unweighted, limit):
    n = g.shape[0]
    indices = indices_for(n, data.draw)
    got = both("dijkstra", g, directed=directed, indices=indices, unweighted=unweighted,
               return_predecessors=True, limit=limit, min_only=True)
    assert got is not None
    (dist, pred, sources), (their_dist, their_pred, their_sources) = got
    assert dist.shape == pred.shape == sources.shape == (n,)
    assert pred.dtype == sources.dtype == np.int32
    np.testing.assert_array_equal(dist, their_dist)
    np.testing.assert_array_equal(sources == NULL, their_sources == NULL)
    starts = set((np.arange(n) if indices is None else np.atleast_1d(indices) % n).tolist())
    for v in np.flatnonzero(sources != NULL):  # each chain runs back to its source, a given one
        hops, u = 0, v
        while pred[u] != NULL:
            assert sources[pred[u]] == sources[v]
            u, hops = pred[u], hops + 1
            assert hops <= n
        assert u == sources[v] and u in starts
    only_dist = scipy_searches.dijkstra(g, directed=directed, indices=indices, unweighted=unweighted,
                                        limit=limit, min_only=True)
    np.testing.assert_array_equal(only_dist, their_dist)


@pytest.mark.parametrize("name", ["johnson", "bellman_ford"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), g=graphs(negative=True), directed=st.booleans(), unweighted=st.booleans(),
       return_predecessors=st.booleans())
def test_johnson_and_bellman_ford_match_scipy(name, data, g, directed, unweighted, return_predecessors):
    indices = indices_for(g.shape[0], data.draw)
    got = both(name, g, directed=directed, indices=indices, unweighted=unweighted,
               return_predecessors=return_predecessors)
    if got is None:
        return
    ours, theirs = got
    if return_predecessors:
        (ours, pred), (theirs, their_pred) = ours, theirs
        np.testing.assert_array_equal(pred == NULL, their_pred == NULL)
    np.testing.assert_array_equal(ours, theirs)


def test_negative_cycle_is_apsps_class_with_scipys_message():
    g = np.array([[0, 1, 0], [0, 0, -3], [1, 0, 0]], dtype=float)
    for name in ("johnson", "bellman_ford"):
        with pytest.raises(csgraph.NegativeCycleError) as theirs:
            getattr(csgraph, name)(g)
        with pytest.raises(apsp.NegativeCycleError) as ours:
            getattr(scipy_searches, name)(g)
        assert str(ours.value) == str(theirs.value)


def test_searches_run_on_apsps_engines(monkeypatch):
    """scipy's own function is not called where apsp's searches apply."""
    from apsp import scipy_compat

    def refuse(*args, **kwargs):
        raise AssertionError("scipy's own search ran")

    monkeypatch.setattr(scipy_compat, "_scipys", refuse)
    monkeypatch.setattr(scipy_searches, "_scipys", refuse)
    g = sp.random(30, 30, density=0.2, random_state=1, format="csr")
    scipy_searches.dijkstra(g, indices=[1, 2], limit=0.5, return_predecessors=True)
    scipy_searches.dijkstra(g, indices=[1, 2], min_only=True, return_predecessors=True)
    scipy_searches.johnson(g, directed=False)
    scipy_searches.bellman_ford(g, unweighted=True)


def test_signatures_match_scipy():
    for name in ("dijkstra", "johnson", "bellman_ford"):
        params = ",".join(p if v.default is inspect.Parameter.empty
                          else f"{p}={'np.inf' if v.default == np.inf else repr(v.default)}"
                          for p, v in inspect.signature(getattr(scipy_searches, name)).parameters.items())
        doc = getattr(csgraph, name).__doc__
        assert re.sub(r"\s", "", doc[: doc.index(")") + 1]) == f"{name}({params})"
