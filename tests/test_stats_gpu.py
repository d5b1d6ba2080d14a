"""GPU reductions of hop distances (`apsp.gpu.reductions`) against the CPU's, under the Triton
interpreter when there is no GPU (`tests/test_bfs.py` compiles their kernels for an H100)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import apsp
from apsp.graph import EdgeList, Graph

from randgraphs import random_edges

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _interpreter():
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"


def same_as_cpu(g, src, mask, words):
    from apsp.gpu.reductions import bfs_stats

    (count, total, ecc, harmonic), info = bfs_stats(g, src, mask, words=words)
    ref = apsp.distance_stats(g, src, targets=np.flatnonzero(mask), backend="cpu", progress=False)
    assert count.tolist() == ref.reachable.tolist()
    assert total.tolist() == ref.total.tolist()
    assert ecc.tolist() == ref.eccentricity.tolist()
    assert harmonic.tolist() == ref.harmonic.tolist()  # the same sums in the same order
    return info


@pytest.mark.parametrize("n, density, words", [(1, 0.0, 1), (70, 0.04, 1), (100, 0.03, 2)])
def test_blocks_of_sources_match_the_cpu(n, density, words):
    rng = np.random.default_rng(n)
    g = Graph.from_edges(random_edges(rng, n, density, lo=1, hi=1))
    mask = np.ones(n, dtype=bool)
    mask[::5] = False  # some targets left out
    info = same_as_cpu(g, np.arange(n), mask, words)
    assert info["words_per_block"] == words


def test_subset_of_sources_isolated_vertices_and_loops():
    # isolated vertices, a self-loop, duplicate edges, n not a multiple of 32; sources in two blocks
    src = [0, 0, 1, 1, 5, 5, 6, 40, 41]
    dst = [0, 1, 1, 5, 6, 6, 40, 41, 0]
    g = apsp.as_graph(EdgeList(45, np.array(src), np.array(dst), np.ones(len(src))))
    same_as_cpu(g, np.array([44, 3, 40, 0, 33]), np.ones(45, dtype=bool), words=1)


def test_a_slice_of_the_sources_runs_only_its_own_words():
    # an MPI rank's slice starting mid-block must not run the whole block around it
    from apsp.gpu.reductions import source_blocks

    assert source_blocks(np.arange(0, 500_000), 11065) == [(0, 11065), (354_080, 4560)]
    assert source_blocks(np.arange(500_000, 1_000_000), 11065) == [(500_000, 11065), (854_080, 4560)]
    assert source_blocks(np.array([44, 3, 40, 0, 33]), 1) == [(0, 1), (32, 1)]
    assert source_blocks(np.array([5, 40, 1000, 1001]), 2) == [(0, 2), (992, 1)]
    rng = np.random.default_rng(3)
    g = Graph.from_edges(random_edges(rng, 150, 0.03, lo=1, hi=1))
    same_as_cpu(g, np.arange(70, 150), np.ones(150, dtype=bool), words=2)  # blocks at 64 and 128


def test_distance_stats_on_the_gpu_backend():
    rng = np.random.default_rng(8)
    g = Graph.from_edges(random_edges(rng, 50, 0.05, lo=1, hi=1))
    gpu = apsp.distance_stats(g, backend="gpu", direction="in", progress=False)
    cpu = apsp.distance_stats(g, backend="cpu", direction="in", progress=False)
    assert gpu.info["backend"] == "gpu" and cpu.info["backend"] == "cpu"
    assert gpu.closeness().tolist() == cpu.closeness().tolist()
    assert gpu.eccentricity.tolist() == cpu.eccentricity.tolist()
    weighted = apsp.as_graph([(0, 1, 2), (1, 2, 3)])
    r = apsp.distance_stats(weighted, backend="gpu", progress=False)  # nd-fw, reduced on the device
    assert r.method == "nd-fw" and r.eccentricity.tolist() == [5, 3, 0] and r.total.tolist() == [7, 3, 0]
    with pytest.raises(ValueError, match="needs 'dijkstra' here"):
        apsp.distance_stats(weighted, backend="gpu", method="dijkstra")
    with pytest.raises(ValueError, match="CPU only"):
        apsp.distance_stats(g, backend="gpu", histogram=True)


@pytest.mark.parametrize("direction", ["out", "in"])
@pytest.mark.slow
def test_weighted_reductions_by_nd_fw_on_the_device_match_the_cpu(rng, direction):
    # a directed grid with weights 1..50 and a few isolated vertices: nd-fw in core, rows reduced there
    side = 9
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel(), idx[:, 1:].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel(), idx[:, :-1].ravel()])
    g = EdgeList(side * side + 3, u, v, rng.integers(1, 51, size=len(u)))
    src = np.array([0, 5, 40, side * side + 1, 7])
    got = apsp.distance_stats(g, src, direction=direction, backend="gpu", progress=False)
    ref = apsp.distance_stats(g, src, direction=direction, backend="cpu", progress=False)
    assert got.method == "nd-fw" and got.info["backend"] == "gpu" and ref.method == "dijkstra"
    assert got.reachable.tolist() == ref.reachable.tolist()
    assert [int(t) for t in got.total] == [int(t) for t in ref.total]
    assert got.eccentricity.tolist() == ref.eccentricity.tolist()
    np.testing.assert_allclose(got.harmonic, ref.harmonic, rtol=1e-14)
