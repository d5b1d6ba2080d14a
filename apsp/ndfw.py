"""Nested-dissection Floyd-Warshall: the schedule and the driver shared by the CPU and GPU engines.

The ordering and layout (`apsp.dissection`) decide, for each pivot round, the
few contiguous layout ranges where the pivot rows and columns can be finite;
the round is Floyd-Warshall's three phases restricted to them (close the pivot
tile, update the row and column panels over the ranges, then the min-plus
products of every pair of ranges). All rounds of one tree node share their
ranges, so an *engine* is handed a node's rounds at once, on its own matrix:

* ``pivots(a, b, ranges)``: the rounds of pivot layout positions ``a:b`` (whole
  tiles, in order), ``ranges`` a list of ``(start, end)`` layout ranges
  (sorted, disjoint, one contains ``a:b``); after it, every entry in
  ``ranges x ranges`` has been relaxed through those pivots;
* ``negative_diagonal()``: whether some diagonal entry is negative (a negative cycle).

`run_schedule` drives the rounds (progress bar, Ctrl-C between rounds, early
stop on a negative cycle); the engines (`apsp.cpu.ndfw`, `apsp.gpu.ndfw`) build
the layout matrix, run the schedule and give the distances back in vertex order.
"""
from __future__ import annotations

import numpy as np

from .dissection import DEFAULT_LEAF, Dissection, dissect
from .progress import progress_bar

#: the method's name in the solver registry
METHOD = "nd-fw"


def plan(graph, tile: int, leaf_size: int | None = None, pad: int = 1, seed: int = 0) -> Dissection:
    """The dissection of ``graph``: rounds ``tile`` wide, leaves of at most ``leaf_size`` vertices,
    every node's vertices padded to a multiple of ``pad``. Cached on the graph (the automatic
    method choice orders it first, then the solver reuses the ordering)."""
    leaf = DEFAULT_LEAF if leaf_size is None else int(leaf_size)
    key = (int(tile), leaf, int(pad), seed)
    cache = graph.__dict__.setdefault("_dissections", {})
    if key not in cache:
        cache[key] = dissect(graph.to_csr(), leaf_size=leaf, tile=tile, pad=pad, seed=seed)
    return cache[key]


#: (tile, leaf size) the engines use by default, per backend
DEFAULTS = {"cpu": (128, 500), "gpu": (128, 3000)}


def default_plan(graph, backend: str) -> Dissection:
    """The dissection the ``backend``'s engine uses with its default tile and leaf size."""
    tile, leaf = DEFAULTS[backend]
    return plan(graph, tile, leaf)


def layout_edges(graph, nd: Dissection):
    """The graph's edges in layout positions: ``(rows, cols, weights)`` (int64, int64, graph dtype)."""
    csr = graph.to_csr()
    rows = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(csr.indptr))
    return nd.position[rows], nd.position[csr.indices.astype(np.int64)], csr.data


def run_schedule(nd: Dissection, engine, negative: bool, progress=None, desc: str = "nd-fw") -> int:
    """All pivot rounds of ``nd`` on ``engine``; returns the number of rounds run.

    With ``negative`` the diagonal is checked after every round and the solve
    stops at the first negative entry (the caller raises `NegativeCycleError`).
    Ctrl-C lands between tree nodes.
    """
    total = sum(1 for _ in nd.rounds())
    done = 0
    with progress_bar(total, progress, desc=f"{desc} n={nd.n}", unit="round") as bar:
        for a, b, ranges in nd.steps():
            engine.pivots(a, b, ranges)
            rounds = -(-(b - a) // nd.tile)
            done += rounds
            bar.update(rounds)
            if negative and engine.negative_diagonal():
                break
    return done


def dense_updates(n: int) -> int:
    """Updates of dense Floyd-Warshall: n^3."""
    return int(n) ** 3
