"""Searches (BFS, Dijkstra, Bellman-Ford, Johnson), single-pair queries and `sources=` against the
oracle on random graphs; numbering of `apsp path` per input format; exactness above 2**53; Ctrl-C."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import apsp
from apsp import exactness
from apsp.cpu.oracle import floyd_warshall_reference
from apsp.cpu.searches import SearchGraph, potentials, search_rows
from apsp.errors import NegativeCycleError
from apsp.graph import EdgeList
from randgraphs import random_edges

BIG = 2**53 + 1


def oracle(e: EdgeList):
    """Exact distances as float64 with inf (int64 oracle arithmetic, weights here stay small)."""
    g = apsp.as_graph(e)
    d = floyd_warshall_reference(g.fw_matrix(np.int64)).astype(np.float64)
    d[d >= float(exactness.inf_value(np.int64)) // 2] = np.inf
    return d


def as_float(d):
    out = d.astype(np.float64)
    if d.dtype.kind != "f":
        out[d == exactness.unreachable_value(d.dtype)] = np.inf
    return out


def walk_length(e: EdgeList, path):
    w = {}
    for u, v, x in zip(e.src.tolist(), e.dst.tolist(), e.weight.tolist()):
        w[(u, v)] = x  # later repeats win, as in apsp
    return sum(w[(a, b)] for a, b in zip(path, path[1:]))


def with_unreachable(rng, e: EdgeList, extra: int = 3) -> EdgeList:
    """The graph plus a few isolated vertices (unreachable targets)."""
    return EdgeList(e.n + extra, e.src, e.dst, e.weight)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("negative", [False, True])
def test_single_pair_queries_against_oracle(rng, negative, bidirectional, monkeypatch):
    import apsp.plan

    if bidirectional:  # every size: the small graphs here would otherwise search one way
        monkeypatch.setattr(apsp.plan, "BIDIRECTIONAL_MIN_N", 1)
    dijkstra = "bidirectional-dijkstra" if bidirectional else "dijkstra"
    for _ in range(12):
        n = int(rng.integers(1, 25))
        e = with_unreachable(rng, random_edges(rng, n, float(rng.uniform(0.05, 0.4)), lo=0, hi=9,
                                               negative=negative))
        d = oracle(e)
        for _ in range(8):
            s, t = (int(x) for x in rng.integers(0, e.n, 2))
            r = apsp.shortest_path_between(e, s, t)
            expect = "bellman-ford" if apsp.as_graph(e).has_negative_weights else dijkstra
            assert r.method in (expect, "bfs")
            if np.isinf(d[s, t]):
                assert r.path is None and r.length is None and not r.reachable
                continue
            assert r.length == d[s, t] and isinstance(r.length, int)
            assert r.path[0] == s and r.path[-1] == t
            assert walk_length(e, r.path) == r.length
            if s == t:
                assert r.path == [s] and r.length == 0


def test_single_pair_unit_weights_use_bfs(rng):
    e = random_edges(rng, 30, 0.1, lo=1, hi=1)
    d = oracle(e)
    for s, t in rng.integers(0, 30, (20, 2)).tolist():
        r = apsp.shortest_path_between(e, s, t)
        assert r.method == "bfs"
        assert (r.length if r.reachable else np.inf) == d[s, t]


def test_single_pair_float_weights(rng):
    e = random_edges(rng, 20, 0.3, lo=0, hi=5, floats=True)
    d = oracle(EdgeList(e.n, e.src, e.dst, e.weight))  # fw_matrix in int64 truncates: use float
    g = apsp.as_graph(e)
    dref = floyd_warshall_reference(g.fw_matrix(np.float64))
    for s, t in rng.integers(0, 20, (20, 2)).tolist():
        r = apsp.shortest_path_between(e, s, t)
        assert r.dtype == np.float64
        if np.isinf(dref[s, t]):
            assert not r.reachable
        else:
            assert r.length == pytest.approx(dref[s, t], rel=1e-12)
    del d


def test_negative_cycle_on_and_off_the_route():
    # cycle 2 -> 3 -> 2 of weight -1, reachable from 0; vertex 5 is reached from 0 without it
    edges = [(0, 1, 1), (1, 2, 1), (2, 3, -2), (3, 2, 1), (3, 4, 1), (0, 5, 7), (6, 7, -3), (7, 6, 1)]
    with pytest.raises(NegativeCycleError) as err:
        apsp.shortest_path_between(edges, 0, 4)  # every walk to 4 can loop the cycle
    assert sorted(err.value.vertices) == [2, 3]
    assert "2" in str(err.value) and "3" in str(err.value)
    r = apsp.shortest_path_between(edges, 0, 5)  # the cycle cannot reach 5
    assert r.path == [0, 5] and r.length == 7
    r = apsp.shortest_path_between(edges, 0, 1)  # 1 is before the cycle
    assert r.path == [0, 1] and r.length == 1
    r = apsp.shortest_path_between(edges, 0, 6)  # the other cycle is not reachable from 0
    assert not r.reachable


def test_out_of_range_vertices():
    for s, t in ((0, 3), (-1, 0), (0, 1.5)):
        with pytest.raises(ValueError, match="not in 0..2"):
            apsp.shortest_path_between([(0, 1, 1), (1, 2, 1)], s, t)


def test_single_pair_exact_above_2_53():
    r = apsp.shortest_path_between([(0, 1, BIG), (1, 2, 1)], 0, 2)
    assert r.length == BIG + 1 and r.dtype == np.int64
    r = apsp.shortest_path_between([(0, 1, BIG), (1, 2, -1), (0, 2, BIG)], 0, 2)
    assert r.method == "bellman-ford" and r.length == BIG - 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("last", [0.5, -0.5])  # Dijkstra, then Bellman-Ford (a negative weight)
def test_single_pair_float_overflow_is_refused(dtype, last):
    from apsp.errors import DtypeError

    big = 3e38 if dtype == "float32" else 1.5e308  # 0 -> 2 is 2 * big: past the dtype's largest
    edges = [(0, 1, big), (1, 2, big), (2, 3, last)]
    with pytest.raises(DtypeError, match="overflow"):
        apsp.shortest_path_between(edges, 0, 2, dtype=dtype)
    # solves refuse the same graph alike
    with pytest.raises(DtypeError, match="overflow"):
        apsp.shortest_paths(edges, dtype=dtype)
    if dtype == "float32":  # float64 holds 6e38, and the length reported is in the dtype reported
        r = apsp.shortest_path_between(edges, 0, 2, dtype="float64")
        assert r.path == [0, 1, 2] and r.length == 6e38 and r.dtype == np.float64
    # breadth-first routes count hops, which no float dtype overflows
    r = apsp.shortest_path_between(edges, 0, 2, dtype=dtype, unweighted=True)
    assert r.method == "bfs" and r.length == 2 and r.dtype == np.dtype(dtype)


def test_single_pair_bellman_ford_length_is_in_the_dtype_reported():
    # 1 - 2**-30 needs 31 significant bits: a float64 sum labelled float32 would keep them
    r = apsp.shortest_path_between([(0, 1, 1.0), (1, 2, -2.0**-30), (0, 2, 5.0)], 0, 2, dtype="float32")
    assert r.method == "bellman-ford" and r.dtype == np.float32 and r.path == [0, 1, 2]
    assert r.length == float(np.float32(1.0 - 2.0**-30))


@pytest.mark.parametrize("kind", ["dijkstra", "johnson", "bfs"])
@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64, np.float32, np.float64])
def test_search_rows_against_oracle(rng, kind, dtype):
    negative = kind == "johnson"
    lo, hi = (1, 1) if kind == "bfs" else (0, 9)
    e = with_unreachable(rng, random_edges(rng, int(rng.integers(2, 40)), 0.15, lo=lo, hi=hi,
                                           negative=negative))
    d = oracle(e)
    g = SearchGraph.from_csr(apsp.as_graph(e).to_csr(), dtype)
    sources = rng.integers(0, e.n, int(rng.integers(1, 2 * e.n)))
    rows = search_rows(g, sources, kind, want_pred=True, want_hop=True)
    assert rows.dist.dtype == dtype and rows.dist.shape == (len(sources), e.n)
    np.testing.assert_array_equal(as_float(rows.dist), d[sources])
    w = np.full((e.n, e.n), np.inf)
    w[e.src, e.dst] = e.weight
    r, v = np.nonzero(np.isfinite(d[sources]) & (sources[:, None] != np.arange(e.n)))
    p, h = rows.pred[r, v], rows.hop[r, v]
    assert np.allclose(d[sources[r], p] + w[p, v], d[sources[r], v])
    assert np.allclose(w[sources[r], h] + d[h, v], d[sources[r], v])
    floats = search_rows(g, sources, kind, as_float=True)  # converted inside the searches
    assert floats.dist.dtype == np.float64
    np.testing.assert_array_equal(floats.dist, as_float(rows.dist))
    unreached = ~np.isfinite(d[sources]) | (sources[:, None] == np.arange(e.n))
    assert (rows.pred[unreached] == -9999).all() and (rows.hop[unreached] == -9999).all()


def test_bucket_queue_gives_up_to_the_heap(rng):
    """Weights too large for buckets, or buckets whose scan runs past its budget: heap results."""
    from apsp.cpu.searches import MAX_BUCKETS, bucket_count, bucket_row

    n = 30
    chain = EdgeList(n, np.arange(n - 1), np.arange(1, n), rng.integers(50_000, 60_000, n - 1))
    g = SearchGraph.from_csr(apsp.as_graph(chain).to_csr(), np.int64)
    assert bucket_count(g) > 0
    m = g.indices.shape[0]
    scratch = [np.empty(x, dtype=t) for x, t in ((n, np.int64), (n, np.int32), (n, np.int32),
                                                  (bucket_count(g), np.int32), (m + 1, np.int32),
                                                  (m + 1, np.int32))]
    assert bucket_row(g.indptr, g.indices, g.weights, 0, -1, *scratch[:3], False, False,
                      exactness.unreachable_value(np.int64), *scratch[3:], 4 * (n + m)) == -1
    large = EdgeList(n, chain.src, chain.dst, chain.weight + MAX_BUCKETS)
    assert bucket_count(SearchGraph.from_csr(apsp.as_graph(large).to_csr(), np.int64)) == 0
    for e in (chain, large, random_edges(rng, 40, 0.1, lo=0, hi=60_000)):
        g = SearchGraph.from_csr(apsp.as_graph(e).to_csr(), np.int64)
        sources = np.arange(e.n)
        for to_float in (False, True):
            rows = search_rows(g, sources, "dijkstra", want_pred=True, as_float=to_float)
            got = rows.dist if to_float else as_float(rows.dist)
            np.testing.assert_array_equal(got, oracle(e))


def test_johnson_names_a_real_negative_cycle(rng):
    for _ in range(10):
        e = random_edges(rng, 12, 0.3, lo=-3, hi=6)
        g = SearchGraph.from_csr(apsp.as_graph(e).to_csr(), np.int32)
        has_cycle = (np.diag(oracle(e)) < 0).any()
        if not has_cycle:
            potentials(g)
            continue
        with pytest.raises(NegativeCycleError) as err:
            potentials(g)
        cyc = err.value.vertices
        assert walk_length(e, cyc + cyc[:1]) < 0


def test_sources_block_equals_full_solve_rows(rng):
    e = random_edges(rng, 60, 0.05, lo=0, hi=30)
    full = apsp.shortest_paths(e, method="fw").distances
    for method in ("auto", "dijkstra", "fw"):
        src = [5, 0, 59, 5]
        r = apsp.shortest_paths(e, method=method, sources=src, return_predecessors=True)
        assert r.distances.shape == (4, 60)
        np.testing.assert_array_equal(as_float(r.distances), as_float(full[src]))
        assert r.sources.tolist() == src and r.n == 60
        for j in np.flatnonzero(np.isfinite(as_float(full[59]))):
            route = r.path(59, int(j))
            assert route[0] == 59 and route[-1] == j
            assert walk_length(e, route) == full[59, j]
    sparse = random_edges(rng, 300, 0.01, lo=0, hi=30)
    assert apsp.shortest_paths(sparse, sources=[1, 2]).method == "dijkstra"  # 2 searches beat FW
    unit = random_edges(rng, 64, 0.05, lo=1, hi=1)
    r = apsp.shortest_paths(unit, sources=[3, 4])
    assert r.method == "bfs" and r.distances.dtype == np.uint8
    np.testing.assert_array_equal(as_float(r.distances), oracle(unit)[[3, 4]])
    with pytest.raises(ValueError, match="sources"):
        apsp.shortest_paths(e, sources=[60])


def test_scipy_indices_equal_scipy(rng):
    from scipy.sparse.csgraph import shortest_path as scipy_shortest_path

    e = random_edges(rng, 40, 0.08, lo=1, hi=20)
    m = apsp.as_graph(e).to_csr().astype(np.float64)
    for indices in (3, [0, 39, -1], np.arange(10)):
        for method in ("D", "J", "auto"):
            for unweighted in (False, True):
                ours = apsp.shortest_path(m, method=method, indices=indices, unweighted=unweighted)
                theirs = scipy_shortest_path(m, method=method, indices=indices, unweighted=unweighted)
                np.testing.assert_array_equal(ours, theirs)


# -- the command line --------------------------------------------------------------------------

def run_cli(*args, check=False):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return subprocess.run([sys.executable, "-m", "apsp", *map(str, args)], capture_output=True,
                          text=True, check=check, env=env)


@pytest.mark.slow
def test_path_numbering_follows_the_format(tmp_path):
    edges = [(0, 1, 2), (1, 2, 3)]
    (tmp_path / "g.txt").write_text("3 2\n1 2 2\n2 3 3\n")
    (tmp_path / "g.gr").write_text("p sp 3 2\na 1 2 2\na 2 3 3\n")
    (tmp_path / "g.snap").write_text("0 1 2\n1 2 3\n")
    dense = np.zeros((3, 3), dtype=np.int64)
    for u, v, w in edges:
        dense[u, v] = w
    np.save(tmp_path / "g.npy", dense)
    for name, first in (("g.txt", 1), ("g.gr", 1), ("g.snap", 0), ("g.npy", 0)):
        out = run_cli("path", tmp_path / name, "--from", first, "--to", first + 2, "--json", check=True)
        got = json.loads(out.stdout)
        assert got["schema_version"] == got["schema"] == 1 and got["first_vertex"] == first
        assert got["path"] == [first, first + 1, first + 2] and got["length"] == 5
        assert got["method"] == "dijkstra" and got["hops"] == 2
        bad = run_cli("path", tmp_path / name, "--from", first + 3, "--to", first)
        assert bad.returncode == 1 and f"{first}..{first + 2}" in bad.stderr


@pytest.mark.slow
def test_path_cli_refuses_a_float_overflow(tmp_path):
    (tmp_path / "g.el").write_text("0 1 1.5e308\n1 2 1.5e308\n2 3 0.5\n")
    for extra in ([], ["--method", "fw"], ["--method", "dijkstra"]):
        r = run_cli("path", tmp_path / "g.el", "--from", 0, "--to", 2, *extra)
        assert r.returncode == 1 and "no path" not in r.stdout, extra
        assert "overflow" in r.stderr and "Traceback" not in r.stderr, extra


@pytest.mark.slow
def test_path_cli_text_verbose_profile_and_no_path(tmp_path):
    (tmp_path / "g.txt").write_text("4 3\n1 2 3\n2 3 -1\n1 4 5\n")
    out = run_cli("path", tmp_path / "g.txt", "--from", 1, "--to", 3, "-v", "--profile", check=True)
    assert out.stdout.splitlines() == ["1 -> 2 -> 3", "length 2"]
    assert "bellman-ford" in out.stderr and "negative" in out.stderr
    assert "search" in out.stderr and "total" in out.stderr
    none = run_cli("path", tmp_path / "g.txt", "--from", 4, "--to", 1)
    assert none.returncode == 1 and none.stdout.strip() == "no path from 4 to 1"
    (tmp_path / "c.txt").write_text("3 3\n1 2 1\n2 3 -2\n3 2 1\n")
    cyc = run_cli("path", tmp_path / "c.txt", "--from", 1, "--to", 3)
    assert cyc.returncode == 1 and "3 -> 2 -> 3" in cyc.stderr or "2 -> 3 -> 2" in cyc.stderr
    # an explicit all-pairs method answers the same
    fw = run_cli("path", tmp_path / "g.txt", "--from", 1, "--to", 3, "--method", "fw", check=True)
    assert fw.stdout.splitlines()[-2:] == ["1 -> 2 -> 3", "length 2"]


@pytest.mark.slow
def test_searches_stop_on_sigint(tmp_path):
    code = (
        "import numpy as np, apsp, time\n"
        "rng = np.random.default_rng(0)\n"
        "n, m = 20000, 80000\n"
        "e = apsp.EdgeList(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 9, m))\n"
        "apsp.shortest_paths(e, method='dijkstra', sources=np.arange(40))\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    apsp.shortest_paths(e, method='dijkstra', sources=np.arange(n), progress=False)\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.getcwd()},  # Ctrl-C as from a terminal,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # also under `&`
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)  # every source: seconds of work even on 16 fast cores (3000 took under 1 s there)
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    waited = time.perf_counter() - sent
    assert out.strip() == "interrupted"
    assert waited < 5.0  # one chunk (about 0.25 s of work) on a shared machine
