"""Distance dtypes, the unreachable sentinel, and overflow-safe dtype choice.

Kernels see a dense matrix whose unreachable entries hold ``inf_value(dtype)``:
``np.inf`` for floats and ``iinfo.max // 2`` for integers. The integer sentinel
is half the range so that ``a + b`` of two entries can never wrap around:

* with non-negative weights every entry stays in ``[0, INF]`` and ``INF + INF``
  fits;
* with negative weights an entry may become ``INF - x`` (an unreachable pair
  reached through a negative edge). Kernels then clamp phase-1/phase-2 values
  at ``-INF`` so nothing wraps, and any value above ``INF // 2`` means
  unreachable. This needs every real distance within ``INF // 4``.

So the largest possible distance ``bound = (n - 1) * max|w|`` must satisfy
``bound < INF`` (non-negative weights) or ``bound <= INF // 4`` (negative
weights); ``choose_dtype`` picks the smallest dtype that does, or refuses.
"""
from __future__ import annotations

import numpy as np

from .errors import DtypeError

#: dtypes every backend accepts for distances
SUPPORTED = (np.int16, np.int32, np.int64, np.float32, np.float64)
#: extra dtypes for hop counts (BFS): no negative values, so unsigned types are safe
HOP_ONLY = (np.uint8, np.uint16)


def as_dtype(dtype, allowed=SUPPORTED) -> np.dtype:
    """Normalise a user dtype (str, numpy type) and refuse those not in ``allowed``."""
    names = ", ".join(np.dtype(t).name for t in allowed)
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise DtypeError(f"unknown dtype {dtype!r}; choose one of {names}") from exc
    if dt not in [np.dtype(t) for t in allowed]:
        raise DtypeError(f"dtype {dt.name} is not supported here; choose one of {names}")
    return dt


def inf_value(dtype):
    """The sentinel kernels use for 'no path' in ``dtype``."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return dt.type(np.inf)
    return dt.type(np.iinfo(dt).max // 2)


def unreachable_value(dtype):
    """The value apsp returns for 'no path': ``inf`` for floats, ``iinfo.max`` for integers.

    Parameters
    ----------
    dtype : dtype-like
        The distances' type.

    Returns
    -------
    numpy scalar of ``dtype``

    Examples
    --------
    >>> import apsp
    >>> int(apsp.unreachable_value("int16")), float(apsp.unreachable_value("float32"))
    (32767, inf)
    """
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return dt.type(np.inf)
    return dt.type(np.iinfo(dt).max)


def distance_bound(n: int, max_abs_weight) -> float:
    """Largest magnitude any shortest distance can have: ``(n - 1) * max|w|``."""
    return float(max(n - 1, 0)) * float(max_abs_weight)


def dtype_fits(dtype, bound: float, negative: bool, integral: bool = True) -> bool:
    """Whether ``dtype`` holds every distance of magnitude <= ``bound`` exactly."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        if not integral:
            return True  # float weights: rounding is the user's choice of precision
        # integer-valued weights stay exact while sums stay below 2**(mantissa+1); strict, as
        # the bound itself is a float product that may have rounded down onto the limit
        return bound < 2.0 ** (np.finfo(dt).nmant + 1)
    inf = int(inf_value(dt))
    return bound <= inf // 4 if negative else bound < inf


def choose_dtype(bound: float, negative: bool, integral: bool, requested=None,
                 candidates=(np.int16, np.int32, np.int64)) -> np.dtype:
    """Pick the distance dtype, or check the user's.

    Integer weights get the smallest integer dtype of ``candidates`` that holds
    ``bound``; float weights get float64 (or float32 if requested).
    """
    if requested is not None:
        dt = as_dtype(requested)
        if dt.kind in "iu" and not integral:
            raise DtypeError(f"dtype {dt.name} cannot hold fractional weights; use float32 or float64")
        if not dtype_fits(dt, bound, negative, integral):
            if dt.kind == "f":
                limit = int(2.0 ** (np.finfo(dt).nmant + 1))
            else:
                limit = int(inf_value(dt)) // 4 if negative else int(inf_value(dt)) - 1
            raise DtypeError(
                f"dtype {dt.name} cannot hold every possible distance: the largest is bounded by "
                f"(n-1)*max|w| = {bound:.0f}, above the {dt.name} limit {limit}"
                f"{' for graphs with negative weights' if negative and dt.kind != 'f' else ''}; "
                f"choose a wider dtype or leave dtype unset")
        return dt
    if not integral:
        return np.dtype(np.float64)
    for cand in candidates:
        if dtype_fits(cand, bound, negative):
            return np.dtype(cand)
    if dtype_fits(np.float64, bound, negative):
        return np.dtype(np.float64)
    raise DtypeError(f"distances up to {bound:.3g} fit no supported dtype exactly")


def reachable_limit(dtype, negative: bool):
    """The largest value a kernel result may hold for a reachable pair; above it means unreachable.

    With negative weights, integer entries above ``INF // 2`` are unreachable
    pairs that picked up a negative edge on the way (see module docstring).
    """
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return float(np.finfo(dt).max)
    inf = int(inf_value(dt))
    return inf // 2 if negative else inf - 1


def finalize_unreachable(dist: np.ndarray, negative: bool) -> np.ndarray:
    """Turn kernel sentinels into ``unreachable_value`` in place (`reachable_limit`) and return ``dist``."""
    if dist.dtype.kind == "f":
        return dist
    dist[dist > reachable_limit(dist.dtype, negative)] = unreachable_value(dist.dtype)
    return dist


def check_float_range(dtype, largest_sum: float) -> None:
    """Refuse a float ``dtype`` in which a solver's sums could overflow to ``inf``.

    ``inf`` means "no path", so an overflowing sum would report a reachable pair
    as unreachable. ``largest_sum`` bounds every sum a solver keeps (see
    `largest_float_sum`).
    """
    dt = np.dtype(dtype)
    if dt.kind != "f":
        return
    largest = float(np.finfo(dt).max)
    if not largest_sum < largest:
        wider = (" (float64 holds them)" if dt != np.float64 and largest_sum < float(np.finfo(np.float64).max)
                 else "")
        raise DtypeError(f"path lengths may reach {largest_sum:.3g}, beyond the largest {dt.name} "
                         f"({largest:.3g}): a reachable pair could overflow to inf and read as 'no path'; "
                         f"choose a wider dtype{wider} or scale the weights down")


def largest_float_sum(n: int, max_abs_weight, method: str, negative: bool) -> float:
    """A bound on the magnitude of every sum a solver keeps.

    Floyd-Warshall keeps only shortest restricted paths, simple ones, so
    ``(n-1)*max|w|``; a candidate above that loses to a finite value and may be
    ``inf`` harmlessly. A search's tentative lengths add one edge more; Johnson's
    reweighted lengths add two potentials, each within ``(n-1)*max|w|``.
    """
    bound = distance_bound(n, max_abs_weight) + float(max_abs_weight)
    return 3 * bound if method == "johnson" and negative else bound
