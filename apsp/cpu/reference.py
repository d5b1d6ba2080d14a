"""The oracle as a solver (``method="reference"``): slow, obvious, exact.

With ``successors``/``predecessors`` requested it runs the textbook
Floyd-Warshall with pointer updates on strict improvement, one numpy
broadcast per intermediate vertex ``k``: ``next[i, j] = next[i, k]`` and
``pred[i, j] = pred[k, j]`` wherever ``d[i, k] + d[k, j] < d[i, j]``. Row and
column ``k`` do not change during step ``k`` (no negative cycle), so the
broadcast is exactly the sequential algorithm.
"""
from __future__ import annotations

import numpy as np

from .. import exactness
from ..engine import SolveOptions, SolveOutput
from ..paths import NO_VERTEX
from .oracle import WORK_INF, floyd_warshall_reference, narrowed, relax_through, widened


def floyd_warshall_with_paths(d: np.ndarray):
    """Textbook FW on start matrix ``d`` (INF sentinel), tracking next hops and predecessors.

    Returns ``(dist, successors, predecessors)``; ``dist`` keeps the INF sentinel
    and the dtype of ``d``. Stops at the first negative diagonal entry (a
    negative cycle), which the caller detects.

    Examples
    --------
    >>> import numpy as np
    >>> inf = np.iinfo(np.int32).max // 2
    >>> d = np.array([[0, 3, inf], [inf, 0, 4], [1, inf, 0]], dtype=np.int32)
    >>> dist, succ, pred = floyd_warshall_with_paths(d)
    >>> dist.tolist(), succ[0].tolist(), pred[0].tolist()
    ([[0, 3, 7], [5, 0, 4], [1, 4, 0]], [-9999, 1, 1], [-9999, 0, 1])
    """
    n = d.shape[0]
    work = widened(d)  # exact: int64 for integer dtypes
    edge = work < (np.inf if work.dtype.kind == "f" else WORK_INF)
    np.fill_diagonal(edge, False)
    vertices = np.arange(n, dtype=np.int32)
    succ = np.where(edge, vertices[None, :], NO_VERTEX).astype(np.int32)
    pred = np.where(edge, vertices[:, None], NO_VERTEX).astype(np.int32)
    for k in range(n):
        through_k = relax_through(work, k)
        better = through_k < work
        work[better] = through_k[better]
        succ = np.where(better, succ[:, k, None], succ)
        pred = np.where(better, pred[None, k, :], pred)
        if work[k, k] < 0:
            break
    dist = narrowed(work, d.dtype)
    return dist, succ, pred


def solve(graph, opts: SolveOptions) -> SolveOutput:
    start = graph.fw_matrix(opts.dtype)
    succ = pred = None
    if opts.successors or opts.predecessors:
        d, succ, pred = floyd_warshall_with_paths(start)
    else:
        d = floyd_warshall_reference(start)
    on_cycles = np.flatnonzero(np.diagonal(d) < 0)
    if len(on_cycles):
        from ..errors import NegativeCycleError

        raise NegativeCycleError("Negative cycle detected", vertices=on_cycles)
    exactness.finalize_unreachable(d, graph.has_negative_weights)
    return SolveOutput(dist=d, successors=succ if opts.successors else None,
                       predecessors=pred if opts.predecessors else None)
