"""apsp.floyd_warshall / apsp.shortest_path against scipy.sparse.csgraph itself.

Every input is given, in separate copies, to apsp and to scipy; distances must
match (exactly for whole-number and dyadic weights, to 1e-12 relative for
general floats), both must raise NegativeCycleError on the same inputs, and
predecessor matrices must describe shortest paths (Floyd-Warshall's equal to scipy's,
ties included; the searches' equal to scipy's wherever the last hop is unique).
"""
from __future__ import annotations

import copy
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
import apsp.plan
from apsp import scipy_compat


NULL = -9999
SPARSE_FORMATS = ("csr", "csc", "lil", "coo", "dok", "bsr", "dia")
SCIPY_FW_FORMATS = ("csr", "csc", "lil")  # scipy's floyd_warshall refuses the others
REPRESENTATIONS = ("dense", "list", "masked") + SPARSE_FORMATS


# -- graph generation ----------------------------------------------------------

@st.composite
def weighted_graphs(draw, max_n=9, kinds=("int", "dyadic", "float"), negative=None):
    """(n, edge mask, weights, kind): weights are meaningful where mask is True."""
    n = draw(st.integers(0, max_n))
    kind = draw(st.sampled_from(kinds))
    neg = draw(st.booleans()) if negative is None else negative
    lo = -4 if neg else 0
    mask = draw(hnp.arrays(np.bool_, (n, n), elements=st.booleans()))
    if kind == "int":
        w = draw(hnp.arrays(np.int64, (n, n), elements=st.integers(lo, 12))).astype(np.float64)
    elif kind == "dyadic":  # exact in float64 whatever the order of additions
        w = draw(hnp.arrays(np.int64, (n, n), elements=st.integers(lo * 4, 48))) / 4.0
    else:
        w = draw(hnp.arrays(np.float64, (n, n), elements=st.floats(
            max(lo, 0), 50, allow_nan=False, allow_infinity=False)))
    return n, mask, w, kind


def represent(mask, w, rep, rng_seed=0):
    """The graph in one of scipy's input forms. Dense forms cannot hold zero-weight edges."""
    n = mask.shape[0]
    rng = np.random.default_rng(rng_seed)
    if rep in ("dense", "list"):
        a = np.where(mask, w, 0.0)
        # non-edges written as 0, inf or nan: all mean "no edge" to scipy
        filler = rng.choice(np.array([0.0, np.inf, np.nan]), size=(n, n))
        a = np.where(mask, a, filler)
        return a.tolist() if rep == "list" else a
    if rep == "masked":
        junk = rng.integers(-5, 5, size=(n, n)).astype(np.float64)
        return np.ma.masked_array(np.where(mask, w, junk), mask=~mask)
    rows, cols = np.nonzero(mask)
    coo = sp.coo_matrix((w[rows, cols], (rows, cols)), shape=(n, n))  # explicit zeros kept
    return coo.asformat(rep)


def scipy_input(graph):
    """What scipy gets: a copy, converted to CSR (as scipy's own solvers read it) where
    scipy's FW refuses the format."""
    if sp.issparse(graph) and graph.format not in SCIPY_FW_FORMATS:
        from scipy.sparse.csgraph._validation import validate_graph

        return validate_graph(graph, directed=True, dense_output=False)
    return copy.deepcopy(graph)


def effective_weights(graph, directed, unweighted):
    """The weights Floyd-Warshall uses, by scipy's documented rules (inf = no edge)."""
    if sp.issparse(graph):
        # the conversion scipy's reference run got (bsr blocks can hold explicit zeros that some
        # scipy versions keep in tocsr() and others do not)
        g = graph if graph.format in SCIPY_FW_FORMATS else scipy_input(graph)
        a = csgraph.csgraph_to_dense(g, null_value=np.inf)
    elif np.ma.isMaskedArray(graph):
        a = np.array(graph.data, dtype=np.float64)
        a[np.ma.getmaskarray(graph) | (a == 0)] = np.inf
    else:
        a = np.array(graph, dtype=np.float64)
        # scipy masks dense entries *close* to the null value 0 (np.ma.masked_values)
        a[np.isclose(a, 0.0) | ~np.isfinite(a)] = np.inf
    if unweighted:
        a[np.isfinite(a)] = 1.0
    np.fill_diagonal(a, np.inf)  # self-loops never help
    if not directed:
        a = np.minimum(a, a.T)
    return a


def search_weights(graph, directed, unweighted):
    """The weights scipy's searches (D, J) read: its validator's CSR (a masked array's unmasked
    zeros are edges there, unlike in Floyd-Warshall)."""
    from scipy.sparse.csgraph._validation import validate_graph

    a = csgraph.csgraph_to_dense(validate_graph(graph, directed=True, dense_output=False),
                                 null_value=np.inf)
    if unweighted:
        a[np.isfinite(a)] = 1.0
    np.fill_diagonal(a, np.inf)
    return a if directed else np.minimum(a, a.T)


# -- checks --------------------------------------------------------------------

def assert_same_distances(ours, theirs, exact):
    assert ours.dtype == np.float64 and ours.shape == theirs.shape
    assert ours.flags.c_contiguous
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(theirs))
    if exact:
        np.testing.assert_array_equal(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def assert_valid_predecessors(dist, pred, w_eff, reference=None, sources=None):
    """pred describes shortest paths; equals ``reference`` where the last hop is forced.

    Row r of ``dist``/``pred`` holds the search from ``sources[r]`` (default: vertex r).
    """
    n = w_eff.shape[0]
    dist = dist.reshape(-1, n) if n else dist
    pred = pred.reshape(-1, n) if n else pred
    src = np.arange(n) if sources is None else np.atleast_1d(sources).reshape(-1) % max(n, 1)
    assert pred.dtype == np.int32 and pred.shape == dist.shape and pred.flags.c_contiguous
    if reference is not None:
        reference = reference.reshape(-1, n) if n else reference
    off_diag = src[:, None] != np.arange(n)[None, :]
    reach = np.isfinite(dist) & off_diag
    assert (pred[~reach] == NULL).all()
    r, j = np.nonzero(reach)
    i = src[r]
    p = pred[r, j].astype(np.int64)
    assert ((p >= 0) & (p < n)).all()
    # the last hop is an edge that completes a shortest path
    np.testing.assert_allclose(dist[r, p] + w_eff[p, j], dist[r, j], rtol=1e-12, atol=1e-12)
    # following predecessors gets back to the source within n - 1 hops
    cur = j.copy()
    for _ in range(n):
        step = cur != i
        cur[step] = pred[r[step], cur[step]]
    assert (cur == i).all()
    if reference is not None:
        # hops k that could precede j on a shortest path from i
        candidates = np.isclose(dist[r][:, :, None] + w_eff[:, j].T[:, :, None],
                                dist[r, j][:, None, None], rtol=1e-12, atol=1e-12)[:, :, 0]
        forced = candidates.sum(axis=1) == 1
        np.testing.assert_array_equal(p[forced], reference[r[forced], j[forced]])


def run_both(ours_fn, theirs_fn):
    """Call both; return (ours, theirs), or None after checking that both raised alike.

    A NegativeCycleError from apsp must be apsp's class (a subclass of scipy's);
    any other error must have scipy's type and message.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. scipy's ComplexWarning, negative-weight notes
        try:
            theirs = theirs_fn()
        except csgraph.NegativeCycleError as exc:
            with pytest.raises(apsp.NegativeCycleError) as ours:
                ours_fn()
            assert str(ours.value) == str(exc)
            return None
        except Exception as exc:  # noqa: BLE001 - any error scipy raises, we must raise too
            with pytest.raises(type(exc)) as ours:
                ours_fn()
            assert str(ours.value) == str(exc)
            return None
        return ours_fn(), theirs


# -- floyd_warshall ------------------------------------------------------------

@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=weighted_graphs(), rep=st.sampled_from(REPRESENTATIONS), directed=st.booleans(),
       unweighted=st.booleans(), return_predecessors=st.booleans(), overwrite=st.booleans(),
       seed=st.integers(0, 2**16))
def test_floyd_warshall_matches_scipy(graph, rep, directed, unweighted, return_predecessors,
                                      overwrite, seed):
    n, mask, w, kind = graph
    x = represent(mask, w, rep, seed)
    ours_in, theirs_in = copy.deepcopy(x), scipy_input(x)
    kwargs = dict(directed=directed, return_predecessors=return_predecessors,
                  unweighted=unweighted)
    # scipy on numpy 2 raises for overwrite=True on a list (np.array(copy=False));
    # its docs say overwrite only applies to float64 arrays, so apsp ignores it there
    theirs_overwrite = overwrite and rep != "list"
    both = run_both(lambda: apsp.floyd_warshall(ours_in, overwrite=overwrite, **kwargs),
                    lambda: csgraph.floyd_warshall(theirs_in, overwrite=theirs_overwrite, **kwargs))
    if both is None:
        return
    ours, theirs = both
    exact = kind != "float" or unweighted
    if return_predecessors:
        (d_ours, p_ours), (d_theirs, p_theirs) = ours, theirs
        # scipy's loop order: the same sums and, on ties, the same predecessor
        np.testing.assert_array_equal(d_ours, d_theirs)
        np.testing.assert_array_equal(p_ours, p_theirs)
    else:
        d_ours = ours
        assert_same_distances(ours, theirs, exact)
    if overwrite and isinstance(ours_in, np.ndarray) and not np.ma.isMaskedArray(ours_in):
        # scipy's contract: a C-ordered float64 input holds the result afterwards
        if ours_in.dtype == np.float64 and ours_in.flags.c_contiguous:
            np.testing.assert_array_equal(ours_in, d_ours)
    elif not overwrite and not sp.issparse(x):
        np.testing.assert_array_equal(np.ma.getdata(ours_in), np.ma.getdata(x))


@settings(max_examples=120, deadline=None)
@given(graph=weighted_graphs(kinds=("int",)), directed=st.booleans(), seed=st.integers(0, 2**16))
def test_predecessors_with_zero_weight_edges(graph, directed, seed):
    """Sparse input with many explicit zero edges: ties and zero cycles everywhere."""
    n, mask, w, _ = graph
    w = np.where(np.random.default_rng(seed).random(w.shape) < 0.5, 0.0, np.abs(w))
    x = represent(mask, w, "csr")
    d, p = apsp.floyd_warshall(x.copy(), directed=directed, return_predecessors=True)
    d_ref, p_ref = csgraph.floyd_warshall(x.copy(), directed=directed, return_predecessors=True)
    np.testing.assert_array_equal(d, d_ref)
    np.testing.assert_array_equal(p, p_ref)


# -- shortest_path ---------------------------------------------------------------

@st.composite
def indices_for(draw, n):
    choice = draw(st.sampled_from(["none", "int", "list", "array"]))
    if choice == "none" or n == 0:
        return None
    if choice == "int":
        return draw(st.integers(-n, n - 1))
    return draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), rep=st.sampled_from(REPRESENTATIONS),
       method=st.sampled_from(["auto", "FW", "D", "BF", "J"]), directed=st.booleans(),
       unweighted=st.booleans(), return_predecessors=st.booleans(), overwrite=st.booleans())
def test_shortest_path_matches_scipy(data, rep, method, directed, unweighted,
                                     return_predecessors, overwrite):
    # scipy's Dijkstra may hang or abort on negative cycles: give it non-negative weights
    graph = data.draw(weighted_graphs(negative=False if method == "D" else None))
    n, mask, w, kind = graph
    x = represent(mask, w, rep, data.draw(st.integers(0, 2**16)))
    indices = None if method == "FW" else data.draw(indices_for(n))
    if rep not in SCIPY_FW_FORMATS + ("dense", "list", "masked") and method in ("auto", "FW"):
        x = x.tocsr()  # scipy cannot run FW on these formats; apsp's extension is tested below
    kwargs = dict(method=method, directed=directed, return_predecessors=return_predecessors,
                  unweighted=unweighted, indices=indices)
    ours_in, theirs_in = copy.deepcopy(x), copy.deepcopy(x)
    theirs_overwrite = overwrite and rep != "list"  # see test_floyd_warshall_matches_scipy
    both = run_both(lambda: apsp.shortest_path(ours_in, overwrite=overwrite, **kwargs),
                    lambda: csgraph.shortest_path(theirs_in, overwrite=theirs_overwrite, **kwargs))
    if both is None:
        return
    ours, theirs = both
    exact = kind != "float" or unweighted
    if not return_predecessors:
        assert_same_distances(ours, theirs, exact)
        return
    (d_ours, p_ours), (d_theirs, p_theirs) = ours, theirs
    assert_same_distances(d_ours, d_theirs, exact)
    ran_fw = method == "FW" or (method == "auto" and scipy_compat._auto_method(x, indices) == "FW")
    if ran_fw:
        assert_valid_predecessors(d_ours, p_ours, effective_weights(x, directed, unweighted),
                                  reference=p_theirs if exact else None)
    elif method == "BF":
        np.testing.assert_array_equal(p_ours, p_theirs)  # scipy computed both
    else:  # apsp's searches: any shortest-path tree, scipy's hop wherever it is forced
        assert_valid_predecessors(d_ours, p_ours, search_weights(x, directed, unweighted),
                                  reference=p_theirs if exact else None, sources=indices)


@pytest.mark.parametrize("method", ["auto", "FW", "D", "BF", "J"])
def test_shortest_path_auto_choice_and_fw_delegation(method, monkeypatch):
    """'auto' picks FW exactly when scipy would; FW then runs apsp's solver."""
    calls = []
    real = apsp.plan.make_plan

    def spy(*args, **kwargs):  # FW runs apsp's plan: make_plan(g, method, backend, ...)
        calls.append(args[1] if len(args) > 1 else kwargs.get("method"))
        return real(*args, **kwargs)

    monkeypatch.setattr(apsp.plan, "make_plan", spy)
    def with_edges(count):  # 6 vertices: scipy's auto picks FW from 36/4 = 9 edges on
        g = np.zeros((6, 6))
        rows, cols = np.nonzero(~np.eye(6, dtype=bool))
        g[rows[:count], cols[:count]] = np.arange(1, count + 1)
        return g

    cases = [(with_edges(30), True), (with_edges(9), True), (with_edges(8), False),
             (with_edges(2), False)]
    for g, auto_is_fw in cases:
        calls.clear()
        ours = apsp.shortest_path(g, method=method)
        np.testing.assert_array_equal(ours, csgraph.shortest_path(g, method=method))
        expected_fw = method == "FW" or (method == "auto" and auto_is_fw)
        assert calls == (["fw"] if expected_fw else [])


# -- documented edge cases -------------------------------------------------------

def test_scipy_docstring_example():
    graph = sp.csr_matrix([[0, 1, 2, 0], [0, 0, 0, 1], [2, 0, 0, 3], [0, 0, 0, 0]])
    dist, pred = apsp.floyd_warshall(graph, directed=False, return_predecessors=True)
    np.testing.assert_array_equal(dist, [[0, 1, 2, 2], [1, 0, 3, 1], [2, 3, 0, 3], [2, 1, 3, 0]])
    np.testing.assert_array_equal(pred, [[NULL, 0, 0, 1], [1, NULL, 0, 1],
                                         [2, 0, NULL, 2], [1, 3, 3, NULL]])
    d0, p0 = apsp.shortest_path(graph, directed=False, indices=0, return_predecessors=True)
    np.testing.assert_array_equal(d0, [0, 1, 2, 2])
    np.testing.assert_array_equal(p0, [NULL, 0, 0, 1])


def test_explicit_sparse_zero_is_an_edge_but_dense_zero_is_not():
    x = sp.csr_matrix((np.array([0.0]), np.array([1]), np.array([0, 1, 1])), shape=(2, 2))
    np.testing.assert_array_equal(apsp.floyd_warshall(x), [[0, 0], [np.inf, 0]])
    np.testing.assert_array_equal(apsp.floyd_warshall(x.toarray()), [[0, np.inf], [np.inf, 0]])


def test_duplicate_sparse_entries_keep_smaller_weight():
    x = sp.csr_matrix((np.array([5.0, 2.0]), np.array([1, 1]), np.array([0, 2, 2])), shape=(2, 2))
    np.testing.assert_array_equal(apsp.floyd_warshall(x), csgraph.floyd_warshall(x))
    np.testing.assert_array_equal(apsp.floyd_warshall(x), [[0, 2], [np.inf, 0]])


@pytest.mark.parametrize("fmt", ["coo", "dok", "bsr", "dia"])
def test_formats_scipy_fw_refuses_are_read_like_scipy_dijkstra(fmt):
    g = sp.coo_matrix(([5.0, 2.0, 0.0, 4.0], ([0, 0, 1, 2], [1, 1, 0, 0])), shape=(3, 3))
    x = g.asformat(fmt)
    with pytest.raises(ValueError, match="lil, csr, or csc"):
        csgraph.floyd_warshall(x)
    ours = apsp.floyd_warshall(x)
    np.testing.assert_array_equal(ours, csgraph.shortest_path(x, method="D"))
    np.testing.assert_array_equal(ours, apsp.shortest_path(x, method="FW"))


def test_negative_self_loop_is_ignored_by_fw_but_not_by_johnson():
    g = np.array([[-1.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(apsp.floyd_warshall(g), [[0, 1], [1, 0]])
    np.testing.assert_array_equal(apsp.floyd_warshall(g), csgraph.floyd_warshall(g))
    for method in ("BF", "J"):
        with pytest.raises(apsp.NegativeCycleError):
            apsp.shortest_path(g, method=method)


def test_negative_edge_undirected_is_a_negative_cycle():
    g = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    apsp.floyd_warshall(g)  # fine directed
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.floyd_warshall(g, directed=False)
    assert isinstance(info.value, csgraph.NegativeCycleError)
    with pytest.raises(csgraph.NegativeCycleError):
        csgraph.floyd_warshall(g, directed=False)


def test_negative_cycle_from_scipy_methods_is_apsps_class():
    g = np.array([[0.0, 1.0], [-2.0, 0.0]])
    for method in ("BF", "J", "FW", "auto"):
        with pytest.raises(apsp.NegativeCycleError):
            apsp.shortest_path(g, method=method)


def test_overwrite_writes_result_into_c_float64_input_only():
    g = np.array([[0, 1.0, 0], [0, 0, 1.0], [1.0, 0, 0]])
    expected = csgraph.floyd_warshall(g)
    a = g.copy()
    out = apsp.floyd_warshall(a, overwrite=True)
    np.testing.assert_array_equal(a, expected)
    assert np.shares_memory(out, a)
    f = np.asfortranarray(g)  # not C-ordered: left alone (scipy's own code errs here)
    np.testing.assert_array_equal(apsp.floyd_warshall(f, overwrite=True), expected)
    np.testing.assert_array_equal(f, g)
    i = g.astype(np.int64)
    np.testing.assert_array_equal(apsp.floyd_warshall(i, overwrite=True), expected)
    np.testing.assert_array_equal(i, g)
    b = g.copy()
    out = apsp.shortest_path(b, method="FW", overwrite=True)
    np.testing.assert_array_equal(b, expected)
    c = g.copy()
    apsp.floyd_warshall(c)
    np.testing.assert_array_equal(c, g)


def test_overwrite_masked_float64_like_scipy():
    data = np.array([[0, 1.0, 0], [0, 0, 1.0], [1.0, 0, 0]])
    ours = np.ma.masked_array(data.copy(), mask=[[0, 0, 0], [1, 0, 0], [0, 0, 0]])
    theirs = copy.deepcopy(ours)
    np.testing.assert_array_equal(apsp.floyd_warshall(ours, overwrite=True),
                                  csgraph.floyd_warshall(theirs, overwrite=True))
    np.testing.assert_array_equal(ours.data, theirs.data)


def test_sparse_minus_inf_edge_matches_scipy():
    x = sp.csr_matrix((np.array([-np.inf, 1.0]), np.array([1, 2]), np.array([0, 1, 2, 2])),
                      shape=(3, 3))
    np.testing.assert_array_equal(apsp.floyd_warshall(x), csgraph.floyd_warshall(x))


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_sparse_nan_and_inf_entries_are_no_edge(value):
    x = sp.csr_matrix((np.array([value, 1.0]), np.array([1, 2]), np.array([0, 1, 2, 2])),
                      shape=(3, 3))
    np.testing.assert_array_equal(apsp.floyd_warshall(x), csgraph.floyd_warshall(x))


def test_big_whole_weights_are_summed_in_float64_like_scipy(monkeypatch):
    dtypes_used = []
    real = apsp.api.run_plan

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        dtypes_used.append(result.dtype)
        return result

    monkeypatch.setattr(apsp.api, "run_plan", spy)
    big = float(2 ** 55)
    g = np.array([[0, big, 0, 0], [0, 0, 3 * big, 0], [0, 0, 0, big], [big, 0, 0, 0]])
    np.testing.assert_array_equal(apsp.floyd_warshall(g), csgraph.floyd_warshall(g))
    small = np.array([[0, 3, 0], [0, 0, 4], [1, 0, 0]])
    np.testing.assert_array_equal(apsp.floyd_warshall(small), csgraph.floyd_warshall(small))
    frac = small / 3.0
    np.testing.assert_allclose(apsp.floyd_warshall(frac), csgraph.floyd_warshall(frac), rtol=1e-15)
    assert dtypes_used == [np.dtype(np.float64), np.dtype(np.int16), np.dtype(np.float64)]


@pytest.mark.parametrize("graph", [
    np.zeros((0, 0)), np.zeros((1, 1)), np.array([[5.0]]), [[0, 1], [1, 0]],
    np.matrix([[0, 2], [0, 0]]), np.array([[False, True], [True, False]]),
    sp.csr_matrix((0, 0)), sp.csr_matrix((3, 3)),
], ids=["empty", "one", "one-loop", "list", "matrix", "bool", "sparse-empty", "sparse-no-edges"])
def test_small_and_odd_inputs(graph):
    for rp in (False, True):
        ours = apsp.floyd_warshall(graph, return_predecessors=rp)
        theirs = csgraph.floyd_warshall(copy.deepcopy(graph), return_predecessors=rp)
        if rp:
            np.testing.assert_array_equal(ours[0], theirs[0])
            np.testing.assert_array_equal(ours[1], theirs[1])
            assert ours[1].dtype == np.int32
        else:
            np.testing.assert_array_equal(ours, theirs)
            assert ours.dtype == np.float64


BAD_GRAPHS = [np.zeros((2, 3)), np.zeros(3), np.zeros((2, 2, 2)), sp.csr_matrix((2, 3)),
              np.ma.masked_array(np.zeros((2, 3))), np.ma.masked_array(np.zeros(3)), 5]


@pytest.mark.parametrize("graph", BAD_GRAPHS, ids=lambda g: f"{type(g).__name__}{np.shape(g)}")
@pytest.mark.parametrize("func", ["floyd_warshall", "shortest_path"])
def test_bad_shapes_raise_as_scipy(graph, func):
    with pytest.raises(ValueError) as theirs:
        getattr(csgraph, func)(graph)
    with pytest.raises(ValueError) as ours:
        getattr(apsp, func)(graph)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("kwargs", [dict(method="XX"), dict(method="fw"), dict(method=None),
                                    dict(method="FW", indices=0), dict(method="FW", indices=[0])])
def test_bad_method_and_indices_raise_as_scipy(kwargs):
    g = np.array([[0, 1.0], [1.0, 0]])
    with pytest.raises(ValueError) as theirs:
        csgraph.shortest_path(g, **kwargs)
    with pytest.raises(ValueError) as ours:
        apsp.shortest_path(g, **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_bad_shape_is_reported_before_bad_method():
    with pytest.raises(ValueError, match="square"):
        apsp.shortest_path(np.zeros((2, 3)), method="XX")


def test_indices_out_of_range_raise_as_scipy():
    g = np.array([[0, 1.0], [1.0, 0]])
    with pytest.raises(ValueError, match="indices out of range"):
        apsp.shortest_path(g, indices=5)


def test_signatures_match_scipy():
    import inspect

    for name in ("floyd_warshall", "shortest_path"):
        params = ",".join(p if v.default is inspect.Parameter.empty else f"{p}={v.default!r}"
                          for p, v in inspect.signature(getattr(scipy_compat, name)).parameters.items())
        doc = getattr(csgraph, name).__doc__
        theirs = re.sub(r"\s", "", doc[: doc.index(")") + 1])
        assert theirs == f"{name}({params})"


def test_scipy_own_shortest_path_suite(tmp_path):
    """scipy's own test module for shortest_path, run against the drop-in: every answer it
    checks (ties in predecessors, exception messages) must be scipy's."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import scipy.sparse.csgraph as csgraph_package

    suite = Path(csgraph_package.__file__).parent / "tests" / "test_shortest_path.py"
    if not suite.exists():
        pytest.skip("this scipy install has no tests")
    here = Path(__file__).resolve().parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(here), str(here.parent), os.environ.get("PYTHONPATH", "")]))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                          "scipy_suite_plugin", "-c", str(tmp_path / "pytest.ini"),
                          "--rootdir", str(tmp_path), str(suite)],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
