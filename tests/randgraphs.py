"""Random test graphs as `EdgeList`s, including negative edges without negative cycles."""
from __future__ import annotations

import numpy as np

from apsp.graph import EdgeList, Graph


def random_edges(rng, n: int, density: float, lo: int = 0, hi: int = 20, negative: bool = False,
                 floats: bool = False) -> EdgeList:
    """Directed graph on n vertices, each ordered pair an edge with probability ``density``.

    With ``negative``, weights are ``w + p[u] - p[v]`` for a random potential p: many
    edges are negative but every cycle keeps its non-negative weight, so there is no
    negative cycle (and zero-weight cycles do occur when ``lo`` is 0).
    """
    mask = rng.random((n, n)) < density
    np.fill_diagonal(mask, False)
    src, dst = np.nonzero(mask)
    if floats:
        w = rng.uniform(lo, hi, size=src.size)
    else:
        w = rng.integers(lo, hi + 1, size=src.size)
    if negative:
        p = rng.integers(0, max(hi, 1), size=n)
        w = w + p[src] - p[dst]
    return EdgeList(n, src, dst, w)


def random_graph(rng, n, density, **kw) -> Graph:
    return Graph.from_edges(random_edges(rng, n, density, **kw))


def sentinel_path(rng, total: int, edges: int, isolated: int = 0) -> Graph:
    """A path 0 -> 1 -> ... -> edges of total length exactly ``total`` (nearly equal weights), plus
    random backward edges no heavier than the path's: cycles and many pairs, no forward shortcut;
    then ``isolated`` vertices without edges (they raise the worst-case bound only)."""
    n = edges + 1
    w = np.full(edges, total // edges, dtype=np.int64)
    w[: total % edges] += 1
    back_src = rng.integers(1, n, size=2 * edges)
    back_dst = rng.integers(0, back_src)
    back_w = rng.integers(0, w.max() + 1, size=back_src.size)
    src = np.concatenate([np.arange(edges), back_src])
    dst = np.concatenate([np.arange(1, n), back_dst])
    return Graph.from_edges(EdgeList(n + isolated, src, dst, np.concatenate([w, back_w])))

