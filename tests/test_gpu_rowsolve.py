"""The GPU row solve from elimination factors (`apsp.gpu.rowsolve`) against numpy references."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from conftest import HAS_TRITON

from apsp import exactness
from apsp.dissection import plan
from apsp.graph import EdgeList, Graph

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs torch and triton")

DTYPES = ["int32", "float32", "float64", "int16"]


def _inf(dtype):
    return exactness.inf_value(np.dtype(dtype))


def _random_matrix(rng, shape, dtype, negative, inf_share=0.3):
    """Values a kernel may meet: non-negative (or, with ``negative``, some below zero, and for integers
    some below -INF, which the kernels raise to -INF), a share of them INF."""
    dt = np.dtype(dtype)
    inf = _inf(dt)
    if dt.kind == "f":
        x = rng.uniform(-50 if negative else 0, 100, size=shape).astype(dt)
    else:
        x = rng.integers(-60 if negative else 0, 100, size=shape).astype(dt)
        if negative:
            x[rng.random(shape) < 0.05] = np.iinfo(dt).min + 3  # below -INF: clamped on the way in
            x[rng.random(shape) < 0.05] = -inf
    x[rng.random(shape) < inf_share] = inf
    return x


def _product(c, a, b, negative):
    """``min(c, a (x) b)`` with the kernels' clamping: inputs and result raised to -INF (integers)."""
    dt = c.dtype
    inf = _inf(dt)
    if negative and dt.kind != "f":
        a, b = np.maximum(a, -inf), np.maximum(b, -inf)
    out = c.copy()
    for k in range(a.shape[1]):
        out = np.minimum(out, a[:, k, None] + b[None, k, :])  # no overflow: sums lie in [-2 INF, 2 INF]
    if negative and dt.kind != "f":
        out = np.maximum(out, -inf).astype(dt)
    return out


# --------------------------------------------------------------------------- the level kernel
def _level(nodes, device):
    """A `Level` and its flat down and index buffers from ``(v0, v1, bidx, down)`` per node."""
    import torch

    from apsp.gpu.rowsolve import Level

    v = [v1 - v0 for v0, v1, _, _ in nodes]
    b = [len(idx) for _, _, idx, _ in nodes]
    b_off = np.concatenate([[0], np.cumsum(b)])[:-1]
    d_off = np.concatenate([[0], np.cumsum(np.multiply(v, b))])[:-1]
    as_t = lambda x: torch.tensor(np.asarray(x, dtype=np.int64), device=device)  # noqa: E731
    level = Level(tuple(range(len(nodes))), as_t([n[0] for n in nodes]), as_t(v), as_t(b), as_t(b_off),
                  as_t(d_off), width=max(v), depth=max(b))
    bidx = torch.from_numpy(np.concatenate([n[2] for n in nodes]).astype(np.int32)).to(device)
    down = torch.from_numpy(np.concatenate([n[3].ravel() for n in nodes])).to(device)
    return level, down, bidx


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("negative", [False, True])
@pytest.mark.parametrize("column_major", [True, False])
def test_down_level_matches_numpy(rng, dtype, negative, column_major):
    import torch

    from apsp.gpu import default_device
    from apsp.gpu.rowsolve import down_level

    dev = default_device()
    rows, size = 21, 70
    # own ranges in columns 0:40 (ragged widths), boundaries drawn from 40:70 (ragged lengths; one empty,
    # one a multiple of the unrolled chunk, others with a remainder)
    spans = [(0, 3), (3, 20), (20, 21), (21, 38), (38, 40)]
    lengths = [5, 0, 9, 8, 30]
    nodes = []
    for (v0, v1), nb in zip(spans, lengths):
        idx = np.sort(rng.choice(np.arange(40, size), size=nb, replace=False))
        nodes.append((v0, v1, idx, _random_matrix(rng, (nb, v1 - v0), dtype, negative)))
    level, down, bidx = _level(nodes, dev)
    # D's entries are kernel results, never below -INF; the factors' entries may be (raised on loading)
    host = np.maximum(_random_matrix(rng, (rows, size), dtype, negative), -_inf(dtype))
    d = torch.from_numpy(host.T.copy()).to(dev).t() if column_major else torch.from_numpy(host.copy()).to(dev)
    down_level(d, level, down, bidx, negative)
    want = host.copy()
    for v0, v1, idx, blk in nodes:
        want[:, v0:v1] = _product(host[:, v0:v1], host[:, idx], blk, negative)
    got = d.cpu().numpy()
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------- the row solve
def _grid(side, rng):
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = rng.integers(1, 9, size=len(u))
    return Graph.from_edges(EdgeList(side * side, np.r_[u, v], np.r_[v, u], np.r_[w, w]))


def random_factors(nd, dtype, negative, rng):
    """A Factors-like record over ``nd`` with random blocks: each B_t a random subset of its
    ancestors' own positions (some empty)."""
    v = np.asarray(nd.end) - np.asarray(nd.own_start)
    boundary, closure, up, down = [], [], [], []
    for t in range(nd.nodes):
        above = np.concatenate([np.arange(nd.own_start[a], nd.end[a]) for a in nd.ancestors(t)] or [[]])
        keep = rng.random(len(above)) < rng.choice([0.0, 0.5, 1.0])
        b = np.sort(above[keep]).astype(np.int64)
        boundary.append(b)
        closure.append(_random_matrix(rng, (v[t], v[t]), dtype, negative, 0.2))
        up.append(_random_matrix(rng, (v[t], len(b)), dtype, negative, 0.2))
        down.append(_random_matrix(rng, (len(b), v[t]), dtype, negative, 0.2))
    return SimpleNamespace(nd=nd, boundary=tuple(boundary), closure=tuple(closure), up=tuple(up),
                           down=tuple(down), dtype=np.dtype(dtype), negative=negative)


def rows_numpy(f, s0, s1):
    """The row solve's definition, node by node in numpy."""
    nd, dt = f.nd, np.dtype(f.dtype)
    inf = _inf(dt)
    d = np.full((s1 - s0, nd.size), inf, dtype=dt)
    d[np.arange(s1 - s0), s0 + np.arange(s1 - s0)] = 0
    for t in range(nd.nodes):
        if nd.start[t] < s1 and nd.end[t] > s0:
            v = slice(nd.own_start[t], nd.end[t])
            d[:, v] = _product(np.full_like(d[:, v], inf), d[:, v], f.closure[t], f.negative)
            b = f.boundary[t]
            d[:, b] = _product(d[:, b], d[:, v], f.up[t], f.negative)
    for t in reversed(range(nd.nodes)):
        v = slice(nd.own_start[t], nd.end[t])
        d[:, v] = _product(d[:, v], d[:, f.boundary[t]], f.down[t], f.negative)
    return d


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
@pytest.mark.parametrize("negative", [False, True])
def test_rows_block_matches_the_definition(rng, dtype, negative):
    from apsp.gpu import default_device
    from apsp.gpu.rowsolve import device_bytes, packed_bytes, rows_block, upload

    nd = plan(_grid(5, rng), tile=1, leaf_size=6, pad=1)
    assert len(nd.levels()) >= 3  # leaves, separators, the root's
    f = random_factors(nd, dtype, negative, rng)
    packed = upload(f, default_device())
    assert packed_bytes(packed) == device_bytes(f)
    for s0, s1 in [(0, nd.size), (int(nd.own_start[nd.nodes - 1]), nd.size), (5, 13)]:
        got = rows_block(packed, s0, s1).cpu().numpy()
        np.testing.assert_array_equal(got, rows_numpy(f, s0, s1), err_msg=f"rows {s0}:{s1}")


def test_rows_block_refuses_a_wrong_block(rng):
    import torch

    from apsp.gpu import default_device
    from apsp.gpu.rowsolve import rows_block, upload

    nd = plan(_grid(4, rng), tile=1, leaf_size=8, pad=1)
    packed = upload(random_factors(nd, "int32", False, rng), default_device())
    with pytest.raises(ValueError, match="outside the layout"):
        rows_block(packed, 3, nd.size + 1)
    with pytest.raises(ValueError, match="the block needs"):
        rows_block(packed, 0, 2, out=torch.empty((2, nd.size), dtype=torch.float32))


def test_upload_refuses_mismatched_factors(rng):
    from apsp.gpu import default_device
    from apsp.gpu.rowsolve import upload

    nd = plan(_grid(4, rng), tile=1, leaf_size=8, pad=1)
    f = random_factors(nd, "int32", False, rng)
    f.down = f.down[:-1] + (np.zeros((1, 1), dtype=np.int32),)
    with pytest.raises(ValueError, match=f"node {nd.nodes - 1}"):
        upload(f, default_device())


# --------------------------------------------------------------------------- row blocks for reductions
def test_layout_blocks_cover_the_sources_only():
    from apsp.gpu.rowsolve import layout_blocks

    assert layout_blocks(np.array([7, 3, 4, 20, 21, 22, 23, 40]), 3) == [(3, 5), (7, 8), (20, 23), (23, 24),
                                                                      (40, 41)]
    assert layout_blocks(np.array([], dtype=np.int64), 4) == []


def test_row_stats_reduce_the_rows(rng):
    from apsp.gpu import default_device
    from apsp.gpu.rowsolve import row_stats, upload

    graph = _grid(5, rng)
    nd = plan(graph, tile=1, leaf_size=8, pad=1)
    f = random_factors(nd, "int32", False, rng)
    src = rng.choice(graph.n, size=9, replace=False)
    mask = rng.random(graph.n) < 0.7
    got = row_stats(upload(f, default_device()), src, mask, rows=4)
    full = rows_numpy(f, 0, nd.size)[np.asarray(nd.position)[src]][:, np.asarray(nd.position)[mask]].astype(np.int64)
    reached = full <= exactness.reachable_limit(np.int32, False)
    values = np.where(reached, full, 0)
    far = reached & (full != 0)
    harmonic = np.where(far, 1.0 / np.where(far, full, 1), 0.0).sum(1)
    np.testing.assert_array_equal(got[0], reached.sum(1))
    np.testing.assert_array_equal(got[1], values.sum(1))
    np.testing.assert_array_equal(got[2], values.max(1))
    np.testing.assert_allclose(got[3], harmonic, rtol=1e-12)
