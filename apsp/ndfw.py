"""Nested-dissection Floyd-Warshall: the schedule, as an engine of the FW skeleton (`apsp.fwsolve`).

The ordering and layout (`apsp.dissection`) decide, for each pivot round, the
few contiguous layout ranges where the pivot rows and columns can be finite;
the round is Floyd-Warshall's three phases restricted to them (close the pivot
tile, update the row and column panels over the ranges, then the min-plus
products of every pair of ranges). All rounds of one tree node share their
ranges, so an engine is handed a node's rounds at once, on its own matrix:
``pivots(a, b, ranges)`` runs the rounds of pivot layout positions ``a:b``
(whole tiles, in order), ``ranges`` a list of ``(start, end)`` layout ranges
(sorted, disjoint, one contains ``a:b``); after it, every entry in
``ranges x ranges`` has been relaxed through those pivots.

`ScheduleEngine` is what the skeleton sees of such an engine: ``rounds`` walks
the tree nodes and yields the layout positions done (so the skeleton's bar,
``on_round``, Ctrl-C and negative-cycle checks are dense FW's), and the
negative-cycle check names vertices, not layout positions. The engines
(`apsp.cpu.ndfw`, `apsp.gpu.ndfw`) add the layout matrix, ``pivots`` and the
result in vertex order.
"""
from __future__ import annotations

import time

import numpy as np

from .dissection import DEFAULT_LEAF, Dissection, dissect

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


def dissection_for(graph, opts, backend: str) -> tuple[Dissection, int]:
    """The dissection the ``backend``'s solver runs with these options, and its tile: the tile
    ``opts.block_size``, leaves of ``opts.leaf_size``, else `DEFAULTS` (cached on the graph, so the
    memory plan and the solver share it)."""
    tile, leaf = DEFAULTS[backend]
    tile = tile if opts.block_size is None else int(opts.block_size)
    return plan(graph, tile, opts.leaf_size or leaf), tile


def default_plan(graph, backend: str) -> Dissection:
    """The dissection the ``backend``'s engine uses with its default tile and leaf size."""
    tile, leaf = DEFAULTS[backend]
    return plan(graph, tile, leaf)


def layout_edges(graph, nd: Dissection):
    """The graph's edges in layout positions: ``(rows, cols, weights)`` (int64, int64, graph dtype)."""
    csr = graph.to_csr()
    rows = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(csr.indptr))
    return nd.position[rows], nd.position[csr.indices.astype(np.int64)], csr.data


class ScheduleEngine:
    """The skeleton's side of a nested-dissection engine over the dissection ``nd``: subclasses
    give ``pivots(a, b, ranges)``, ``layout_diagonal()`` (host numpy, layout order), ``load``,
    ``sync`` and ``finalize``. No checkpoints (the public layer refuses them for nd-fw), so no
    ``read_rows``/``write_rows``."""

    label = "nd-fw"
    resumes_anywhere = False  # rounds end where tree nodes do
    early_cycle_check = True  # a negative cycle found in one node makes the rest meaningless

    def __init__(self, nd: Dissection, negative: bool):
        self.nd = nd
        self.n = nd.size  # the skeleton counts layout positions
        self.negative = bool(negative)

    def rounds(self, block: int, start_vertex: int = 0):
        for a, b, ranges in self.nd.steps():
            if b > start_vertex:
                self.pivots(a, b, ranges)
                yield b
        self.sync()  # the compute stage ends when the work does

    def negative_diagonal(self) -> np.ndarray:
        """The vertices (input numbering, sorted) whose diagonal entry is negative."""
        bad = self.nd.order[np.flatnonzero(self.layout_diagonal()[:self.nd.size] < 0)]
        return np.sort(bad[bad >= 0])


def solve_with(graph, opts, backend: str, make_engine, stage_names=("prepare", "compute", "finalize")):
    """Both solvers' common part: the dissection (tile ``opts.block_size``, leaf ``leaf_size=``, else
    ``DEFAULTS[backend]``) and ``make_engine(nd, tile)`` run by the skeleton. Returns ``(out, engine)``,
    the skeleton's `SolveOutput` with ``order`` and its three stages under ``stage_names`` in its timings."""
    from .fwsolve import run

    t0 = time.perf_counter()
    nd, tile = dissection_for(graph, opts, backend)
    order = time.perf_counter() - t0
    engine = make_engine(nd, tile)
    out = run(graph, opts, engine, solver=f"nd-fw-{backend}", block=tile)
    out.timings = {"order": order, **{name: out.timings[stage]
                                      for stage, name in zip(("prepare", "compute", "finalize"), stage_names)}}
    out.info.update(layout=nd.size, tree_nodes=nd.nodes, updates=nd.updates(), tile=tile)
    return out, engine
