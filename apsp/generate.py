"""Random directed graphs: uniform (Erdos-Renyi with an exact edge count) and web-like link graphs.

Both kinds are vectorised (no Python loop over edges) and fast for n = 40000:
candidate pairs are drawn in bulk, self-loops and repeats are dropped with
``np.unique``, and the deficit is drawn again until the edge count is reached.

>>> from apsp.generate import random_graph
>>> e = random_graph(1000, 0.01, weights=(1, 9), seed=7)
>>> e.n, e.m, int(e.weight.min()) >= 1, int(e.weight.max()) <= 9
(1000, 9990, True, True)
"""
from __future__ import annotations

import numbers

import numpy as np

from .graph import EdgeList, sorted_distinct

KINDS = ("uniform", "link-graph")

#: a Wikipedia-like link graph with about n^2/1000 links
LINK_GRAPH_DENSITY = 1e-3
#: power-law exponents of a web graph's degree distributions (Broder et al., 2000)
LINK_GRAPH_OUT_EXPONENT = 2.7
LINK_GRAPH_IN_EXPONENT = 2.1


def random_graph(n: int, density: float | None = None, weights: tuple[float, float] | None = (0, 100),
                 seed: int | np.random.Generator | None = None, kind: str = "uniform",
                 directed: bool = True) -> EdgeList:
    """A random graph on vertices ``0..n-1`` without self-loops or repeated edges.

    Parameters
    ----------
    n : int
        Number of vertices.
    density : float, optional
        Fraction of the ``n*(n-1)`` possible directed edges (of the ``n*(n-1)/2``
        vertex pairs when ``directed=False``). Default: 0.1 for ``"uniform"``,
        1/1000 (Wikipedia-like) for ``"link-graph"``.
    weights : (lo, hi) or None
        Edge weights drawn uniformly from ``lo..hi``: integers (both ends
        included) when ``lo`` and ``hi`` are integers, floats in ``[lo, hi)``
        otherwise. ``None`` gives every edge weight 1 (an unweighted graph).
    seed : int or numpy.random.Generator, optional
        Same seed, same graph.
    kind : {"uniform", "link-graph"}
        ``"uniform"``: every vertex pair equally likely (an Erdos-Renyi graph
        with exactly ``round(density * pairs)`` edges). ``"link-graph"``: a
        directed web-like graph (Chung-Lu model) whose out- and in-degrees
        follow power laws (exponents 2.7 and 2.1, as measured on the web),
        with vertex numbers shuffled so hubs are spread over the range.
    directed : bool
        ``False`` draws unordered pairs and returns both directions of each,
        with the same weight (``"uniform"`` only).

    Returns
    -------
    EdgeList
        Edges sorted by (src, dst).

    Examples
    --------
    >>> e = random_graph(5000, kind="link-graph", weights=None, seed=1)
    >>> e.m == round(1e-3 * 5000 * 4999)
    True
    """
    if kind not in KINDS:
        raise ValueError(f"unknown graph kind {kind!r}; choose one of {', '.join(KINDS)}")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    n = int(n)
    if density is None:
        density = LINK_GRAPH_DENSITY if kind == "link-graph" else 0.1
    if not 0.0 <= density <= 1.0:
        raise ValueError(f"density must lie in [0, 1], got {density!r}")
    if weights is not None:
        try:
            finite = len(weights) == 2 and all(np.isfinite(float(x)) for x in weights)
        except (TypeError, ValueError):
            finite = False
        if not finite:
            raise ValueError(f"weights must be two finite numbers (lo, hi), got {weights!r}")
    rng = np.random.default_rng(seed)
    if kind == "link-graph":
        if not directed:
            raise ValueError("a link graph is directed; use kind='uniform' for undirected graphs")
        src, dst = _link_graph_pairs(n, density, rng)
    else:
        src, dst = _uniform_pairs(n, density, directed, rng)
    w = _draw_weights(weights, len(src), rng)
    if not directed:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([w, w])
        order = np.lexsort((dst, src))
        src, dst, w = src[order], dst[order], w[order]
    return EdgeList(n, src, dst, w)


def _uniform_pairs(n: int, density: float, directed: bool, rng) -> tuple[np.ndarray, np.ndarray]:
    """Exactly ``round(density * pairs)`` distinct pairs, each pair equally likely."""
    pairs = n * (n - 1) if directed else n * (n - 1) // 2
    m = int(round(density * pairs))
    if m > pairs // 2:
        # dense: choose the pairs to leave out instead (cheaper, same distribution)
        keys = np.setdiff1d(np.arange(pairs, dtype=np.int64),
                            _distinct_keys(pairs, pairs - m, rng), assume_unique=True)
    else:
        keys = _distinct_keys(pairs, m, rng)
    if directed:
        # key k in [0, n(n-1)) -> (k // (n-1), k % (n-1)), skipping the diagonal
        src, dst = np.divmod(keys, n - 1)
        dst += dst >= src
        return src, dst
    # key k in [0, n(n-1)/2) -> row-major position in the strict upper triangle
    return _upper_triangle_pair(keys, n)


def _distinct_keys(pairs: int, m: int, rng) -> np.ndarray:
    """``m`` distinct integers drawn uniformly from ``[0, pairs)``, sorted."""
    return _distinct(lambda size: rng.integers(0, pairs, size=size, dtype=np.int64), m, rng)


def _distinct(draw, m: int, rng, rounds: int | None = None) -> np.ndarray:
    """Up to ``m`` distinct keys from ``draw(size)``, drawing again for the repeats; sorted.

    A uniformly random surplus is dropped, so every m-subset of what was drawn
    stays equally likely. ``rounds`` bounds the redraws (None: until m are found).
    """
    keys = np.zeros(0, np.int64)
    done = 0
    while len(keys) < m and (rounds is None or done < rounds):
        extra = m - len(keys)
        keys = sorted_distinct(np.concatenate([keys, draw(extra + extra // 8 + 16)]))
        done += 1
    if len(keys) > m:
        keys = np.sort(rng.choice(keys, size=m, replace=False))
    return keys


def _upper_triangle_pair(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    # row i starts at offset(i) = i*n - i*(i+1)/2; invert with the quadratic formula, then fix rounding
    def offset(r):
        return r * n - r * (r + 1) // 2

    k = keys.astype(np.float64)
    i = np.floor(((2 * n - 1) - np.sqrt((2 * n - 1) ** 2 - 8 * k)) / 2).astype(np.int64)
    i = np.where(offset(i) > keys, i - 1, i)
    i = np.where(offset(i + 1) <= keys, i + 1, i)
    return i, keys - offset(i) + i + 1


def _link_graph_pairs(n: int, density: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """Directed Chung-Lu graph: P(u -> v) proportional to out_w[u] * in_w[v]."""
    m = int(round(density * n * (n - 1)))
    if m == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    out_p = _power_law_probabilities(n, LINK_GRAPH_OUT_EXPONENT, m, rng)
    in_p = _power_law_probabilities(n, LINK_GRAPH_IN_EXPONENT, m, rng)

    def draw(size):
        src = rng.choice(n, size=size, p=out_p)
        dst = rng.choice(n, size=size, p=in_p)
        keep = src != dst
        return src[keep] * n + dst[keep]

    keys = _distinct(draw, m, rng, rounds=200)
    return keys // n, keys % n


def _power_law_probabilities(n: int, exponent: float, m: int, rng) -> np.ndarray:
    """Chung-Lu probabilities whose expected degrees follow a power law with ``exponent``, over the
    vertices in random order, capped so no vertex expects more than (n-1)/4 of m edges (keeps
    repeats rare)."""
    w = (np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0)))[rng.permutation(n)]
    cap = max((n - 1) / 4.0, 1.0)
    p = w / w.sum()
    for _ in range(50):
        over = p * m > cap
        if not over.any():
            break
        p[over] = cap / m
        rest = ~over
        p[rest] *= (1.0 - p[over].sum()) / p[rest].sum()
    return p / p.sum()


def _draw_weights(weights, m: int, rng) -> np.ndarray:
    if weights is None:
        return np.ones(m, dtype=np.int64)
    lo, hi = weights  # random_graph checked: two finite numbers
    if hi < lo:
        raise ValueError(f"weights (lo, hi) need lo <= hi, got {weights!r}")
    if all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in (lo, hi)):  # integers
        return rng.integers(int(lo), int(hi), size=m, endpoint=True, dtype=np.int64)
    return rng.uniform(float(lo), float(hi), size=m)
