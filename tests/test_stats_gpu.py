"""GPU reductions of hop distances (`apsp.gpu.reductions`) against the CPU's, under the Triton
interpreter when there is no GPU; and the level kernel compiled for real for an H100."""
from __future__ import annotations

import os
import subprocess
import sys

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


def test_distance_stats_on_the_gpu_backend():
    rng = np.random.default_rng(8)
    g = Graph.from_edges(random_edges(rng, 50, 0.05, lo=1, hi=1))
    gpu = apsp.distance_stats(g, backend="gpu", direction="in", progress=False)
    cpu = apsp.distance_stats(g, backend="cpu", direction="in", progress=False)
    assert gpu.info["backend"] == "gpu" and cpu.info["backend"] == "cpu"
    assert gpu.closeness().tolist() == cpu.closeness().tolist()
    assert gpu.eccentricity.tolist() == cpu.eccentricity.tolist()
    weighted = apsp.as_graph([(0, 1, 2), (1, 2, 3)])
    with pytest.raises(ValueError, match="hop distances only"):
        apsp.distance_stats(weighted, backend="gpu")
    with pytest.raises(ValueError, match="CPU only"):
        apsp.distance_stats(g, backend="gpu", histogram=True)


_COMPILE_SCRIPT = r"""
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from apsp.gpu.bfs import BLOCK_V, BLOCK_W, NUM_WARPS, _bfs_level_kernel
from apsp.gpu.reductions import _count_level_kernel

level = {"in_ptr": "*i32", "in_idx": "*i32", "frontier": "*i32", "nxt": "*i32",
         "visited": "*i32", "flags": "*i32", "dist": "*i32", "pred": "*i32", "succ": "*i32",
         "n": "i32", "n_words": "i32", "level": "i32", "s_base": "i32"}
blocks = {"WITH_PRED": False, "WITH_SUCC": False, "WITH_PARENT": False, "WITH_DIST": False}
counting = {"nxt": "*i32", "flags": "*i32", "targets": "*i8", "found": "*i32", "n": "i32",
            "n_words": "i32", "level": "i32", "chunk": "i32"}
for fn, sig, const in [(_bfs_level_kernel, level, {"FIRST": True, **blocks}),
                       (_bfs_level_kernel, level, {"FIRST": False, **blocks}),
                       (_count_level_kernel, counting, {})]:
    const = dict(const, BLOCK_V=BLOCK_V, BLOCK_W=BLOCK_W)
    full = dict(sig, **{k: "constexpr" for k in const})
    names = list(full)
    src = ASTSource(fn=fn, signature=full,
                    constexprs={(names.index(k),): v for k, v in const.items()})
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": NUM_WARPS})
    assert kernel.asm.get("cubin"), "no cubin"
print("compiled")
"""


def test_level_kernel_compiles_for_hopper():
    pytest.importorskip("triton.backends.nvidia")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "compiled" in done.stdout, done.stderr[-3000:]
