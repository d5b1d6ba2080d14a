"""Shortest paths, not only distances: next-hop / predecessor matrices and `reconstruct_path`.

Two pointer matrices describe the routes (both int32, ``-9999`` where there
is no path and on the diagonal):

* successors (next hops): ``succ[i, j]`` is the vertex after ``i`` on a shortest
  path from ``i`` to ``j``;
* predecessors (scipy's convention): ``pred[i, j]`` is the vertex before ``j`` on
  a shortest path from ``i`` to ``j``.

The CPU solvers derive both from the final distances
(`apsp.cpu.paths.pointers_from_distances`): a pointer is a neighbour on a tight edge, an edge
on a shortest path (the GPU does the same on the device, `apsp.gpu.paths`). Following pointers
for *another* pair cannot loop unless a zero-weight cycle of tight edges
exists; unless all weights are positive (`apsp.cpu.paths.loops_possible`), every matrix
is therefore checked (O(n^2)), and in any row or
column that fails, each vertex whose walk fails is re-pointed to a
neighbour on a shortest path whose own walk succeeds, which cannot loop.
``Result.info`` reports how many rows/columns needed it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

from .errors import APSPError

#: scipy's "no vertex" marker in predecessor matrices; apsp uses it in successor matrices too
NO_VERTEX = -9999


class PathError(APSPError, ValueError):
    """A pointer matrix does not describe a path (loop, broken chain, bad entry)."""


class NoPathError(PathError):
    """There is no path between the two vertices."""


def reconstruct_path(matrix: ArrayLike, i: int, j: int, kind: str = "successors") -> list[int]:
    """Vertices of the shortest path from ``i`` to ``j`` stored in a pointer matrix.

    Parameters
    ----------
    matrix : (n, n) integer array
        Successor (next-hop) or predecessor matrix, ``-9999`` for "none".
    i, j : int
        Start and end vertex (0-based).
    kind : {"successors", "predecessors"}
        How ``matrix`` is to be read.

    Returns
    -------
    list of int, from ``i`` to ``j`` inclusive (``[i]`` when ``i == j``).

    Raises
    ------
    NoPathError
        ``j`` is not reachable from ``i``.
    PathError
        The matrix loops, points outside ``0..n-1``, or breaks off before the end.

    Examples
    --------
    >>> import numpy as np
    >>> succ = np.array([[-9999, 1, 1], [2, -9999, 2], [0, 0, -9999]])
    >>> reconstruct_path(succ, 0, 2)
    [0, 1, 2]
    >>> pred = np.array([[-9999, 0, 1], [2, -9999, 1], [2, 0, -9999]])
    >>> reconstruct_path(pred, 0, 2, kind="predecessors")
    [0, 1, 2]
    """
    m = np.asarray(matrix)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise PathError(f"a {kind} matrix must be square, got shape {m.shape}")
    if m.dtype.kind not in "iu":
        raise PathError(f"a {kind} matrix must hold integers, got dtype {m.dtype}")
    if kind not in ("successors", "predecessors"):
        raise ValueError(f"kind must be 'successors' or 'predecessors', got {kind!r}")
    n = m.shape[0]
    for name, v in (("start", i), ("end", j)):
        if int(v) != v or not 0 <= v < n:
            raise ValueError(f"{name} vertex {v!r} is not in 0..{n - 1}")
    i, j = int(i), int(j)
    if i == j:
        return [i]
    forward = kind == "successors"
    # successors: walk i -> ... -> j along column j; predecessors: walk j -> ... -> i along row i
    current, goal = (i, j) if forward else (j, i)
    route = [current]
    seen = {current}
    while current != goal:
        step = int(m[current, j] if forward else m[i, current])
        if step == NO_VERTEX:
            if current == route[0]:
                raise NoPathError(f"there is no path from {i} to {j}")
            raise PathError(f"broken {kind} chain from {i} to {j}: no entry at vertex {current} "
                            f"after {' -> '.join(map(str, route if forward else route[::-1]))}")
        if not 0 <= step < n:
            raise PathError(f"{kind} matrix entry {step} at vertex {current} (path {i} -> {j}) "
                            f"is not a vertex of 0..{n - 1}")
        if step in seen:
            raise PathError(f"{kind} matrix loops on the path from {i} to {j}: vertex {step} "
                            f"comes back after {' -> '.join(map(str, route if forward else route[::-1]))}")
        seen.add(step)
        route.append(step)
        current = step
    return route if forward else route[::-1]


def walk_back(pred: np.ndarray, s: int, t: int) -> list[int]:
    """The path s -> t of a shortest-path tree from its predecessor row (``t`` reached from ``s``).

    >>> walk_back(np.array([-9999, 0, 1]), 0, 2)
    [0, 1, 2]
    """
    route = [int(t)]
    while route[-1] != s:
        route.append(int(pred[route[-1]]))
        if len(route) > len(pred):
            raise ValueError(f"the predecessor row of {s} loops")
    return route[::-1]
