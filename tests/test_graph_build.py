"""Graph.from_edges: CSR built in Numba, the last assignment of a (src, dst) winning."""
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from apsp import exactness
from apsp.graph import EdgeList, Graph


def reference(n, src, dst, weight):
    """The obvious rule: a dict filled in input order, so the last (src, dst) given wins."""
    last = {}
    for s, d, w in zip(src.tolist(), dst.tolist(), weight.tolist()):
        last[(s, d)] = w
    return last


def check_csr(g, n, src, dst, weight, dtype):
    csr = g.csr
    assert isinstance(csr, sp.csr_matrix)
    assert csr.shape == (n, n) and g.n == n
    assert csr.dtype == dtype
    assert csr.indptr.shape == (n + 1,)
    assert csr.indices.dtype == csr.indptr.dtype == np.int32
    assert csr.has_sorted_indices
    for r in range(n):  # columns strictly increasing within each row (sorted, no duplicates)
        assert np.all(np.diff(csr.indices[csr.indptr[r]:csr.indptr[r + 1]]) > 0)
    got = {}
    for r in range(n):
        for t in range(csr.indptr[r], csr.indptr[r + 1]):
            got[(r, int(csr.indices[t]))] = csr.data[t].item()
    assert got == reference(n, src, dst, weight)
    assert csr.nnz == len(got)
    # scipy agrees about what it was handed
    coo = csr.tocoo()
    assert {(int(i), int(j)): v.item() for i, j, v in zip(coo.row, coo.col, coo.data)} == got


def reference_fw(n, src, dst, weight, dtype):
    d = np.full((n, n), exactness.inf_value(np.dtype(dtype)), dtype=dtype)
    for (i, j), w in reference(n, src, dst, weight).items():
        d[i, j] = w
    for i in range(n):
        d[i, i] = min(d[i, i], 0)
    return d


@st.composite
def edge_lists(draw, max_n=40, max_m=400):
    """Small n and up to many edges, so most (src, dst) pairs repeat; self-loops included."""
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(0, max_m))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # sometimes only a few distinct pairs, to pile up duplicates
    hot = draw(st.integers(1, n))
    src = rng.integers(0, hot, m) if draw(st.booleans()) else rng.integers(0, n, m)
    dst = rng.integers(0, hot, m) if draw(st.booleans()) else rng.integers(0, n, m)
    return n, src.astype(np.int64), dst.astype(np.int64), rng


@settings(max_examples=60, deadline=None)
@given(edge_lists(), st.sampled_from([np.int64, np.int32, np.int8, np.uint16]))
def test_random_int_weights_last_wins(case, wdtype):
    n, src, dst, rng = case
    info = np.iinfo(wdtype)
    weight = rng.integers(max(info.min, -50), min(info.max, 50), len(src)).astype(wdtype)
    g = Graph.from_edges(EdgeList(n, src, dst, weight))
    check_csr(g, n, src, dst, weight, np.dtype(wdtype))
    np.testing.assert_array_equal(g.fw_matrix(np.int32), reference_fw(n, src, dst, weight, np.int32))


@settings(max_examples=60, deadline=None)
@given(edge_lists(), st.sampled_from([np.float64, np.float32]))
def test_random_float_weights_last_wins(case, wdtype):
    n, src, dst, rng = case
    weight = rng.uniform(-10, 10, len(src)).astype(wdtype)
    weight[rng.random(len(src)) < 0.1] = 0.0  # explicit zero weights stay edges
    g = Graph.from_edges(EdgeList(n, src, dst, weight))
    check_csr(g, n, src, dst, weight, np.dtype(wdtype))
    ref = reference_fw(n, src, dst, weight, np.float64)
    np.testing.assert_array_equal(g.fw_matrix(np.float64), ref)


@settings(max_examples=30, deadline=None)
@given(edge_lists(max_n=12, max_m=200))
def test_random_integral_fw_matrix_int32(case):
    n, src, dst, rng = case
    weight = rng.integers(-3, 4, len(src)).astype(np.float64)  # float weights, whole numbers
    g = Graph.from_edges(EdgeList(n, src, dst, weight))
    np.testing.assert_array_equal(g.fw_matrix(np.int32), reference_fw(n, src, dst, weight, np.int32))


@pytest.mark.parametrize("n,m", [(3000, 20000), (300, 60000), (5, 5000)])
def test_larger_lists_both_row_strategies(n, m):
    # long sparse rows (sorted) and rows dense in n (scanned)
    rng = np.random.default_rng(n + m)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    weight = rng.integers(-1000, 1000, m)
    g = Graph.from_edges(EdgeList(n, src, dst, weight))
    check_csr(g, n, src, dst, weight, np.dtype(np.int64))


def test_no_edges():
    for n in (0, 1, 5):
        g = Graph.from_edges(EdgeList(n, [], [], np.array([], dtype=np.int32)))
        assert g.csr.shape == (n, n) and g.csr.nnz == 0 and g.csr.dtype == np.int32
        assert g.csr.indptr.tolist() == [0] * (n + 1)
    g = Graph.from_edges(EdgeList(1, [], [], []))
    assert g.csr.dtype == np.float64
    np.testing.assert_array_equal(g.fw_matrix(np.int32), [[0]])


def test_one_vertex_self_loops():
    g = Graph.from_edges(EdgeList(1, [0, 0, 0], [0, 0, 0], [5, -2, 7]))
    assert g.csr.indptr.tolist() == [0, 1] and g.csr.indices.tolist() == [0]
    assert g.csr.data.tolist() == [7] and g.nnz == 1
    np.testing.assert_array_equal(g.fw_matrix(np.int32), [[0]])
    g = Graph.from_edges(EdgeList(1, [0, 0], [0, 0], [5, -2]))
    np.testing.assert_array_equal(g.fw_matrix(np.int32), [[-2]])


def test_later_assignment_wins_and_zero_is_an_edge():
    g = Graph.from_edges(EdgeList(3, [0, 1, 0, 2, 0], [1, 2, 1, 2, 2], [4, 1, 0, 3, 9]))
    assert g.csr.indptr.tolist() == [0, 2, 3, 4]
    assert g.csr.indices.tolist() == [1, 2, 2, 2]
    assert g.csr.data.tolist() == [0, 9, 1, 3]


@pytest.mark.parametrize("wdtype,expected", [
    (np.int8, np.int8), (np.uint64, np.uint64), (np.float32, np.float32),
    (np.longdouble, np.longdouble), (bool, np.float64), (object, np.float64),
])
def test_weight_dtypes(wdtype, expected):
    weight = np.array([1, 2, 3]).astype(wdtype)
    g = Graph.from_edges(EdgeList(3, [0, 1, 0], [1, 2, 1], weight))
    assert g.csr.dtype == expected
    assert g.csr.indices.tolist() == [1, 2]
    assert g.csr.data.tolist() == [expected(weight[2]), expected(weight[1])]


def test_non_numeric_weights_converted_after_deduplication():
    # the overwritten entry is never converted (as before)
    weight = np.array(["not a number", "2", "3"], dtype=object)
    g = Graph.from_edges(EdgeList(2, [0, 1, 0], [1, 0, 1], weight))
    assert g.csr.dtype == np.float64 and g.csr.data.tolist() == [3.0, 2.0]


def test_dtypes_scipy_refuses_still_refused():
    for weight in (np.ones(2, np.float16), np.ones(2, np.dtype(">i4"))):
        with pytest.raises(ValueError, match="scipy.sparse does not support dtype"):
            Graph.from_edges(EdgeList(2, [0, 1], [1, 0], weight))


@pytest.mark.parametrize("n,src,dst", [(3, [0, 3], [1, 1]), (3, [0], [-1]), (0, [0], [0])])
def test_endpoint_range_error(n, src, dst):
    with pytest.raises(ValueError, match=r"^edge endpoints must lie in 0\.\.%d$" % (n - 1)):
        Graph.from_edges(EdgeList(n, src, dst, np.ones(len(src))))


def test_non_contiguous_inputs():
    rng = np.random.default_rng(7)
    src = rng.integers(0, 9, 400)[::2]
    dst = rng.integers(0, 9, 400)[::2]
    weight = rng.integers(0, 9, (200, 2))[:, 1]
    g = Graph.from_edges(EdgeList(9, src, dst, weight))
    check_csr(g, 9, src, dst, weight, weight.dtype)


def test_import_apsp_does_not_import_numba():
    code = "import sys, apsp, apsp.graph; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_duplicate_sparse_entries_are_parallel_edges_the_lightest_wins():
    import scipy.sparse as sp
    from scipy.sparse.csgraph import floyd_warshall as scipy_fw

    import apsp

    csr = sp.csr_matrix((np.array([5, 3, 2]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 2))
    assert scipy_fw(csr)[0, 1] == 3
    coo = sp.coo_matrix((np.array([5, 3, 2]), (np.array([0, 0, 1]), np.array([1, 1, 0]))), shape=(2, 2))
    for m in (csr, coo, csr.tocsc()):
        for method in ("fw", "dijkstra", "reference"):
            assert apsp.shortest_paths(m, method=method).distances.tolist() == [[0, 3], [2, 0]], (m.format, method)
    # with directed=False the reverse edge joins the comparison
    assert apsp.shortest_paths(csr, directed=False).distances.tolist() == [[0, 2], [2, 0]]


def test_weight_facts_are_read_when_the_graph_is_built():
    """A graph knows its weight facts from the start: a NaN weight is refused when it is built,
    and the facts of a dense and a sparse graph of the same edges agree."""
    with pytest.raises(ValueError, match="NaN"):
        Graph.from_sparse(sp.csr_matrix(np.array([[0.0, np.nan], [1.0, 0.0]])))
    dense = np.array([[0, -3, 0], [2, 0, 5], [0, 0, 0]])
    for g in (Graph.from_dense(dense), Graph.from_sparse(sp.csr_matrix(dense))):
        facts = (g.nnz, g.max_abs_weight, g.has_negative_weights, g.integral, g.unit_weights, g.distance_bound)
        assert facts == (3, 5, True, True, False, 10)
        assert isinstance(g.max_abs_weight, int) and isinstance(g.distance_bound, int)


def test_symmetry_sees_explicit_zero_edges_and_weights():
    import scipy.sparse as sp

    def graph(rows, cols, w):
        return Graph.from_sparse(sp.csr_matrix((np.array(w), (np.array(rows), np.array(cols))), shape=(3, 3)))

    assert graph([0, 1, 1, 2], [1, 0, 2, 1], [0, 0, 5, 5]).is_symmetric()
    assert not graph([0], [1], [0]).is_symmetric()  # an explicit zero one way only
    assert not graph([0, 1], [1, 0], [3, 4]).is_symmetric()  # both ways, other weights
    g = graph([0, 1], [1, 2], [1, 1])
    assert not g.is_symmetric() and g.reversed_csr()[2, 1] == 1 and g.reversed_csr()[1, 2] == 0
    assert Graph.from_sparse(sp.csr_matrix((0, 0))).is_symmetric()
