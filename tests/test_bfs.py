"""Bit-parallel BFS (CPU Numba and GPU Triton) against FW with unit weights and scipy's unweighted BFS."""
from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import shortest_path

import apsp
from apsp import exactness
from apsp.cpu.oracle import floyd_warshall_reference
from apsp.errors import DtypeError
from apsp.generate import random_graph
from apsp.graph import EdgeList
from pathcheck import as_float, check_predecessors, check_successors, dense_weights


def unit_edges(n, src, dst):
    return EdgeList(n, np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
                    np.ones(len(src), dtype=np.int64))


def references(e: EdgeList):
    """(FW oracle on unit weights, scipy unweighted BFS), both float64 with inf."""
    g = apsp.as_graph(e)
    d = floyd_warshall_reference(g.fw_matrix(np.int32)).astype(np.float64)
    d[d >= exactness.inf_value(np.int32)] = np.inf
    a = sp.csr_matrix((np.ones(e.m), (e.src, e.dst)), shape=(e.n, e.n))
    return d, shortest_path(a, unweighted=True)


def check_bfs(e: EdgeList, backend="cpu", **options):
    oracle, scipy_d = references(e)
    np.testing.assert_array_equal(oracle, scipy_d)
    r = apsp.shortest_paths(e, method="bfs", backend=backend, return_predecessors=True,
                            return_successors=True, **options)
    got = r.to_float()
    np.testing.assert_array_equal(got, oracle)
    finite = oracle[np.isfinite(oracle)]
    diameter = int(finite.max()) if finite.size else 0
    expected = np.uint8 if diameter <= 254 else np.uint16 if diameter <= 65534 else np.int32
    assert r.distances.dtype == expected
    assert r.info["diameter"] == diameter
    unit = dense_weights(e.src, e.dst, np.ones(e.m), e.n)
    check_predecessors(r.predecessors, got, unit)
    check_successors(r.successors, got, unit)
    return r


# -- CPU -----------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 150), density=st.floats(0.0, 0.2), seed=st.integers(0, 2**31))
def test_cpu_random_graphs_match_oracle_and_scipy(n, density, seed):
    check_bfs(random_graph(n, density, weights=None, seed=seed))


@pytest.mark.parametrize("n", [63, 64, 65, 127, 129, 200])
def test_cpu_sizes_around_the_word_width(n):
    check_bfs(random_graph(n, 4.0 / n, weights=None, seed=n))


def test_cpu_link_graph():
    check_bfs(random_graph(300, kind="link-graph", density=0.01, weights=None, seed=3))


def test_isolated_vertices_and_empty_graph():
    r = check_bfs(unit_edges(70, [3, 4], [4, 5]))
    assert r.distances[0, 1] == np.iinfo(np.uint8).max  # unreachable = dtype max
    r = check_bfs(unit_edges(5, [], []))
    assert (r.distances == np.where(np.eye(5, dtype=bool), 0, 255)).all()


def test_self_loops_and_duplicate_edges():
    src = [0, 0, 1, 1, 1, 2, 2, 3, 3]
    dst = [0, 1, 1, 2, 2, 0, 2, 3, 1]
    check_bfs(unit_edges(4, src, dst))


def test_long_chain_needs_uint16_then_refuses_uint8():
    n = 300  # diameter 299 > 254
    e = unit_edges(n, np.arange(n - 1), np.arange(1, n))
    r = check_bfs(e)
    assert r.distances[0, n - 1] == 299 and r.distances[n - 1, 0] == np.iinfo(np.uint16).max
    with pytest.raises(DtypeError, match="uint8"):
        apsp.shortest_paths(e, method="bfs", backend="cpu", dtype="uint8")


@pytest.mark.parametrize("n,dtype", [(300, "uint8"), (300, "int16"), (65_536, "int16"), (65_536, "uint16")])
def test_source_rows_in_a_narrow_dtype_refuse_instead_of_wrapping(n, dtype):
    e = unit_edges(n, np.arange(n - 1), np.arange(1, n))
    fits = n - 1 <= np.iinfo(dtype).max - 1
    for method in ("bfs", "auto"):  # one breadth-first search per source either way
        if fits:
            r = apsp.shortest_paths(e, method=method, backend="cpu", dtype=dtype, sources=[0])
            assert r.distances.dtype == np.dtype(dtype)
            assert r.distances[0].tolist() == list(range(n))
            continue
        with pytest.raises(DtypeError, match=dtype):
            apsp.shortest_paths(e, method=method, backend="cpu", dtype=dtype, sources=[0])
        # rows whose distances fit are answered, as the all-pairs rule would answer them
        r = apsp.shortest_paths(e, method=method, backend="cpu", dtype=dtype, sources=[n - 100, n - 1])
        assert r.distances.dtype == np.dtype(dtype)
        assert r.distances[0, n - 100:].tolist() == list(range(100))
        assert r.distances[1, 0] == np.iinfo(dtype).max and r.distances[1, n - 1] == 0


@pytest.mark.slow
def test_source_rows_in_a_narrow_dtype_refuse_on_the_command_line(tmp_path):
    import subprocess
    import sys

    n = 300
    (tmp_path / "chain.txt").write_text(f"{n} {n - 1}\n" + "".join(f"{i} {i + 1} 1\n" for i in range(1, n)))
    for extra in (["--method", "bfs", "--sources", "1"], ["--sources", "1"], ["--rows", "0:1"]):
        r = subprocess.run([sys.executable, "-m", "apsp", "solve", str(tmp_path / "chain.txt"), "-o", "-",
                            "--dtype", "uint8", *extra], capture_output=True, text=True)
        assert r.returncode == 1 and r.stdout == "", extra
        assert "uint8" in r.stderr and "Traceback" not in r.stderr, extra


def test_chain_with_extra_sources_widens_only_where_needed():
    # a long chain plus a shortcut-free dense corner: some batches overflow uint8, others do not
    n = 400
    src = list(range(n - 1)) + [300, 301, 302]
    dst = list(range(1, n)) + [350, 390, 399]
    check_bfs(unit_edges(n, src, dst))


def test_user_dtypes_are_honoured():
    e = random_graph(90, 0.05, weights=None, seed=11)
    oracle, _ = references(e)
    for name in ("uint8", "uint16", "int16", "int32"):  # each is a Numba compile: keep few
        r = apsp.shortest_paths(e, method="bfs", backend="cpu", dtype=name)
        assert r.distances.dtype == np.dtype(name)
        np.testing.assert_array_equal(r.to_float(), oracle)
    r = apsp.shortest_paths(e, method="bfs", backend="cpu", dtype="float32")
    assert r.distances.dtype == np.float32
    np.testing.assert_array_equal(r.distances.astype(np.float64), oracle)
    with pytest.raises(DtypeError):
        apsp.shortest_paths(e, method="bfs", backend="cpu", dtype="int8")


def test_weighted_graph_needs_unweighted_flag():
    e = EdgeList(3, [0, 1], [1, 2], [2, 5])
    with pytest.raises(ValueError, match="unit weights"):
        apsp.shortest_paths(e, method="bfs", backend="cpu")
    r = apsp.shortest_paths(e, method="bfs", backend="cpu", unweighted=True)
    assert r.distances[0, 2] == 2


def test_auto_picks_bfs_for_sparse_unit_graphs():
    e = random_graph(300, 0.01, weights=None, seed=5)
    r = apsp.shortest_paths(e, backend="cpu")
    assert r.method == "bfs"


# -- GPU (Triton; under the interpreter when there is no CUDA device) -----------

def _gpu_ready():
    # the interpreter must be chosen before triton is first imported (its own helpers are jitted then)
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"
    pytest.importorskip("triton")


def gpu_solve(e: EdgeList, **extra):
    _gpu_ready()
    from apsp.engine import SolveOptions
    from apsp.gpu import bfs as gpu_bfs

    g = apsp.as_graph(e)
    parents = extra.pop("parents", True)
    return gpu_bfs.solve(g, SolveOptions.build(dtype=extra.pop("dtype", None), predecessors=parents,
                                         successors=parents, **extra))


def check_gpu(e: EdgeList, **extra):
    oracle, _ = references(e)
    out = gpu_solve(e, **extra)
    got = as_float(out.dist)
    np.testing.assert_array_equal(got, oracle)
    unit = dense_weights(e.src, e.dst, np.ones(e.m), e.n)
    check_predecessors(out.predecessors, got, unit)
    check_successors(out.successors, got, unit)
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("n,density,seed", [(1, 0.0, 1), (33, 0.1, 2), (70, 0.04, 3)])
def test_gpu_random_graphs(n, density, seed):
    out = check_gpu(random_graph(n, density, weights=None, seed=seed), block_vertices=32, block_words=1)
    assert out.dist.dtype == np.uint8


@pytest.mark.gpu
def test_gpu_adversarial_small():
    # isolated vertices, self-loops, duplicate edges, n not a multiple of 32
    src = [0, 0, 1, 1, 5, 5, 6, 40, 41]
    dst = [0, 1, 1, 5, 6, 6, 40, 41, 0]
    check_gpu(unit_edges(45, src, dst), block_vertices=64, block_words=2)


@pytest.mark.gpu
def test_gpu_user_dtype():
    e = random_graph(40, 0.08, weights=None, seed=9)
    oracle, _ = references(e)
    for name in ("int16", "uint16", "float64"):
        out = gpu_solve(e, dtype=np.dtype(name), block_vertices=64, block_words=2)
        assert out.dist.dtype == np.dtype(name)
        np.testing.assert_array_equal(as_float(out.dist), oracle)


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_long_chain_widens_past_uint8():
    # one program per level (the interpreter's cost is per program); no parents, to keep it short
    n = 257  # diameter 256 > 254
    e = unit_edges(n, np.arange(n - 1), np.arange(1, n))
    oracle, _ = references(e)
    out = gpu_solve(e, parents=False, block_vertices=512, block_words=16)
    assert out.dist.dtype == np.uint16 and out.dist[0, n - 1] == 256
    np.testing.assert_array_equal(as_float(out.dist), oracle)
    with pytest.raises(DtypeError):
        gpu_solve(e, dtype=np.dtype(np.uint8), parents=False, block_vertices=512, block_words=16)


_COMPILE_SCRIPT = r"""
import sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from apsp.gpu.bfs import BLOCK_V, BLOCK_W, NUM_WARPS, _bfs_level_kernel

args = {"in_ptr": "*i32", "in_idx": "*i32", "frontier": "*i32", "nxt": "*i32", "visited": "*i32",
        "flags": "*i32", "dist": "*u8", "pred": "*i32", "succ": "*i32", "n": "i32",
        "n_words": "i32", "level": "i32", "s_base": "i32"}
for dist in ("*u8", "*i16", "*i32", "*i64"):
    for first in (True, False):
        for parents in (False, True):
            const = {"FIRST": first, "WITH_PRED": parents, "WITH_SUCC": parents,
                     "WITH_PARENT": parents, "WITH_DIST": True, "BLOCK_V": BLOCK_V,
                     "BLOCK_W": BLOCK_W}
            sig = dict(args, dist=dist, **{k: "constexpr" for k in const})
            names = list(sig)
            src = ASTSource(fn=_bfs_level_kernel, signature=sig,
                            constexprs={(names.index(k),): v for k, v in const.items()})
            kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                                    options={"num_warps": NUM_WARPS})
            assert kernel.asm.get("cubin"), "no cubin"
# apsp.gpu.reductions: the level kernel without distance rows, and the counting kernel
from apsp.gpu.reductions import _count_level_kernel

counting = {"nxt": "*i32", "flags": "*i32", "targets": "*i8", "found": "*i32", "n": "i32",
            "n_words": "i32", "level": "i32", "chunk": "i32"}
for fn, sig, const in [(_bfs_level_kernel, args, {"FIRST": True}),
                       (_bfs_level_kernel, args, {"FIRST": False}), (_count_level_kernel, counting, {})]:
    if fn is _bfs_level_kernel:
        const.update(WITH_PRED=False, WITH_SUCC=False, WITH_PARENT=False, WITH_DIST=False)
    const.update(BLOCK_V=BLOCK_V, BLOCK_W=BLOCK_W)
    sig = dict(sig, **{k: "constexpr" for k in const})
    names = list(sig)
    src = ASTSource(fn=fn, signature=sig, constexprs={(names.index(k),): v for k, v in const.items()})
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": NUM_WARPS})
    assert kernel.asm.get("cubin"), "no cubin"
print("compiled")
"""


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_kernel_compiles_for_hopper():
    """The level kernels (whole solves, and `apsp.gpu.reductions`' blocks with its counting kernel)
    compile for real (TTIR -> PTX -> cubin for sm_90), not only interpret."""
    import subprocess
    import sys

    pytest.importorskip("triton.backends.nvidia")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "compiled" in done.stdout, done.stderr[-3000:]
