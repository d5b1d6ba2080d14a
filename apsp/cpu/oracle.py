"""The plain Floyd-Warshall oracle: obviously correct, used by the tests.

One numpy broadcast per intermediate vertex k, exactly the textbook
recurrence d(i,j) = min(d(i,j), d(i,k) + d(k,j)). Integer inputs are summed in
int64 with an explicit "no path" mask, never in float64, so the oracle is exact
for every distance an integer dtype can hold (float64 rounds above 2**53).
"""
from __future__ import annotations

import numpy as np

from .. import exactness


#: "no path" while the oracle works in int64: the sum of two never wraps
WORK_INF = np.iinfo(np.int64).max // 2


def widened(d: np.ndarray) -> np.ndarray:
    """``d`` (INF sentinel of its dtype) as the oracle's work matrix: float64 with ``inf``
    for float inputs, int64 with `WORK_INF` for integer ones."""
    if d.dtype.kind == "f":
        return d.astype(np.float64)
    work = d.astype(np.int64)
    work[d >= exactness.inf_value(d.dtype)] = WORK_INF
    return work


def relax_through(work: np.ndarray, k: int) -> np.ndarray:
    """The candidate matrix ``work[i, k] + work[k, j]``, "no path" where either leg has none."""
    col, row = work[:, k], work[k, :]
    through = col[:, None] + row[None, :]
    if work.dtype.kind != "f":
        through[(col >= WORK_INF)[:, None] | (row >= WORK_INF)[None, :]] = WORK_INF
    return through


def narrowed(work: np.ndarray, dtype) -> np.ndarray:
    """The work matrix back in ``dtype``, "no path" as its INF sentinel."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return work.astype(dt)
    out = np.full(work.shape, exactness.inf_value(dt), dtype=dt)
    finite = work < WORK_INF
    out[finite] = work[finite].astype(dt)
    return out


def floyd_warshall_reference(d: np.ndarray) -> np.ndarray:
    """Return the closure of start matrix ``d`` (INF sentinel of its dtype), same dtype.

    Raises nothing: a negative cycle shows as a negative diagonal entry, and
    the caller decides. Unreachable entries come back as the INF sentinel.

    Examples
    --------
    >>> import numpy as np
    >>> inf = np.iinfo(np.int64).max // 2
    >>> d = np.array([[0, 2**53 + 1, inf], [inf, 0, 1], [inf, inf, 0]], dtype=np.int64)
    >>> floyd_warshall_reference(d)[0].tolist() == [0, 2**53 + 1, 2**53 + 2]
    True
    """
    work = widened(d)
    for k in range(d.shape[0]):
        np.minimum(work, relax_through(work, k), out=work)
        if work[k, k] < 0:  # negative cycle: stop before values run away
            break
    return narrowed(work, d.dtype)
