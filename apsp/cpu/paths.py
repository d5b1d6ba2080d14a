"""Pointer matrices on the CPU: next hops and predecessors from the final distances, checked
and repaired (`apsp.paths` says why a check is needed and what the matrices mean)."""
from __future__ import annotations
from typing import TYPE_CHECKING

import numpy as np

from ..paths import PathError

if TYPE_CHECKING:
    from ..engine import SolveOptions

# ---------------------------------------------------------------------------
# Pointer matrices from the final distances, their check and repair
# ---------------------------------------------------------------------------

def _tolerance(dist: np.ndarray, weights: np.ndarray) -> float:
    """How far from exact a tight edge may be: 0 for integers, a few rounding steps for floats."""
    if dist.dtype.kind != "f":
        return 0.0
    finite = dist[np.isfinite(dist)]
    scale = max(1.0, float(np.abs(finite).max()) if finite.size else 0.0,
                float(np.abs(weights).max()) if weights.size else 0.0)
    return 4.0 * dist.shape[0] * float(np.finfo(dist.dtype).eps) * scale


def _checked(ptr, reachable, dist, by_rows: bool, adjacency) -> int:
    """Check every tree of ``ptr`` and repair the failing ones in place; return how many failed."""
    from .pathkernels import check, repair

    bad = check(ptr, reachable, by_rows)
    if not bad.any():
        return 0
    csr = adjacency()
    wide = np.float64 if dist.dtype.kind == "f" else np.int64
    weights = csr.data.astype(dist.dtype).astype(wide)  # the weights the solver saw
    failed = repair(ptr, reachable, dist, by_rows, np.flatnonzero(bad), csr.indptr.astype(np.int64),
                    csr.indices.astype(np.int64), weights, wide(_tolerance(dist, weights)))
    if failed:
        raise PathError(f"could not rebuild shortest-path pointers for {failed} vertices: float rounding "
                        "hides their tight edges; use float64 or integer weights")
    return int(bad.sum())


def loops_possible(graph, dtype) -> bool:
    """Whether pointers built from tight edges could loop: only along a zero-weight cycle.

    False when every weight is positive and sums are exact (integer dtype, or
    integral weights in a float dtype that holds them), so the check can be skipped.
    """
    weights = graph.csr.data if graph.csr is not None else graph.dense[graph.edge_mask]
    exact = np.dtype(dtype).kind != "f" or graph.integral
    return not (exact and bool((weights > 0).all()))


def successors_checked(succ: np.ndarray, dist: np.ndarray, graph):
    """Check a next-hop matrix built from per-source search trees; repair it where it loops.

    Each row is one search's first hops; following them across rows can loop
    only along a zero-weight cycle. Returns ``(succ, repaired)`` like
    `pointers_from_distances`.
    """
    from .. import exactness

    reachable = dist != exactness.unreachable_value(dist.dtype)
    return succ, _checked(succ, reachable, dist, False, graph.to_csr)


def _by_weight(csr, wide) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR arrays (indptr, neighbours, weights as ``wide``) with each row's neighbours in
    increasing weight and self-loops dropped (a self-loop is never a useful next hop)."""
    n = csr.shape[0]
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(csr.indptr))
    cols = csr.indices.astype(np.int64)
    keep = rows != cols
    rows, cols, w = rows[keep], cols[keep], csr.data[keep].astype(wide)
    order = np.lexsort((w, rows))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return indptr, cols[order].astype(np.int32), w[order]


def _zero_edges(csr):
    """CSR (indptr, neighbours) of the zero-weight edges of ``csr``, self-loops dropped."""
    n = csr.shape[0]
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(csr.indptr))
    keep = (csr.data == 0) & (rows != csr.indices)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=n), out=indptr[1:])
    return indptr, csr.indices[keep].astype(np.int32)  # rows stay in order: CSR order kept


def pointers_from_distances(dist: np.ndarray, reachable: np.ndarray, graph, successors: bool,
                            check: bool = True):
    """Next-hop (``successors``) or predecessor matrix from final distances alone.

    The next hop from i towards j is any out-neighbour u with
    ``w(i,u) + D[u,j] == D[i,j]`` (the last hop: any in-neighbour p of j with
    ``D[i,p] + w(p,j) == D[i,j]``); trying neighbours in increasing weight finds
    one after a few tries on typical graphs, so this costs a few n^2 steps
    instead of tracking intermediates through the whole solve (measured ~8x
    slower). Such pointers can only loop round a zero-weight cycle. With
    integer distances and no negative weight, zero-weight edges are taken
    only by a search that cannot loop (`apsp.cpu.pathkernels.zero_edges_by_columns`);
    otherwise, with ``check`` (needed unless `loops_possible` is False), every
    tree is checked and repaired. Returns ``(matrix, repaired)``.
    """
    from . import pathkernels

    csr = graph.to_csr()
    wide = np.float64 if dist.dtype.kind == "f" else np.int64
    weights = csr.data.astype(dist.dtype).astype(wide)  # the weights the solver saw
    tol = wide(_tolerance(dist, weights))
    nonneg = not graph.has_negative_weights
    levels = check and dist.dtype.kind in "iu" and nonneg

    def in_edges():  # row v lists u for each edge u -> v
        reverse = csr.T.tocsr()
        reverse.sort_indices()
        return reverse

    if successors:
        ptr = pathkernels.successors_from_distances(dist, reachable, *_by_weight(csr, dist.dtype), tol,
                                                    levels, nonneg)
        if levels:
            zin, zout = _zero_edges(in_edges()), _zero_edges(csr)
            pathkernels.zero_edges_by_columns(ptr, dist, *zin, *zout,
                                              *pathkernels.zero_cycles(*zout, *zin))
            return ptr, 0
        return ptr, (_checked(ptr, reachable, dist, False, graph.to_csr) if check else 0)
    ptr = pathkernels.predecessors_from_distances(dist, reachable, *_by_weight(in_edges(), dist.dtype),
                                                  tol, levels, nonneg)
    if levels:
        pathkernels.zero_edges_by_rows(ptr, dist, reachable, *_zero_edges(csr))
        return ptr, 0
    return ptr, (_checked(ptr, reachable, dist, True, in_edges) if check else 0)


def recover_pointers(out, graph, dtype, opts: SolveOptions) -> None:
    """Fill ``out.successors`` / ``out.predecessors`` (a `SolveOutput` of final distances in vertex
    order) as ``opts`` asks, from the distances; the checks and repairs go to ``out.info``, the
    seconds to ``out.timings["paths"]``. The CPU solvers' path recovery (tracking intermediates
    in the FW kernels instead cost about 8x)."""
    import time

    from .. import exactness

    t0 = time.perf_counter()
    dist = out.dist
    reachable = dist != exactness.unreachable_value(dtype)
    check = loops_possible(graph, dtype)
    out.info["paths_checked"] = check
    if opts.successors:
        out.successors, repaired = pointers_from_distances(dist, reachable, graph, True, check)
        out.info["successor_targets_repaired"] = repaired
    if opts.predecessors:
        out.predecessors, repaired = pointers_from_distances(dist, reachable, graph, False, check)
        out.info["predecessor_sources_repaired"] = repaired
    out.timings["paths"] = time.perf_counter() - t0
