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

That bound is far above real distances (n = 32768 with weights 1..100: bound
3.3 million, real distances below 1000), so `dtype_attempts` plans from the
data instead: with non-negative integer weights it tries the narrowest integer
dtype whose sentinel exceeds the largest weight and trusts the result only
after `cutoff_suspected` says no distance was cut off; otherwise the caller
solves again in the next dtype of the plan.

Why the check is sufficient (non-negative weights, ``0 <= w <= W < INF``):

1. Kernels keep every entry in ``[0, INF]``: the start matrix is, and each
   update stores ``min(c, a + b)`` with ``c <= INF`` and ``a + b <= 2 INF``,
   which never wraps. So they compute ``min(c, min(a + b, INF))``: every
   operation of the exact algorithm, seen through ``s(x) = min(x, INF)``.
   Since ``s(min(x, y)) = min(s(x), s(y))`` and ``s(x + y) = s(s(x) + s(y))``
   for ``x, y >= 0``, the stored result is ``s(true distance)``: exact below
   ``INF``, ``INF`` for "no path" and for a path ``>= INF`` (cut off).
2. Suppose some true distance ``d(s, t) >= INF`` is finite. Along a shortest
   path from s to t the prefix distances are exact shortest distances, start
   at 0, end ``>= INF``, and grow by at most W per edge. The first of them
   ``>= INF - W`` is then ``< INF``: stored exactly, in ``[INF - W, INF)``,
   in row s.
3. So if no stored value lies in ``[INF - W, INF)``, no distance was cut off
   and every value is exact (and a row's check covers that row's distances).

Step 1 holds for any sequence of such updates that computes the exact
distances, so for every Floyd-Warshall schedule: blocked, out of core,
distributed tiles and nested-dissection order alike.

With negative weights step 1 fails (``INF + w`` with ``w < 0`` drops below
``INF`` and no longer means "cut off"), so negative weights keep the
worst-case rule. Float dtypes keep it too (rounding, not cut-off, is their
limit).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import DtypeError

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

#: dtypes every backend accepts for distances
SUPPORTED = (np.int16, np.int32, np.int64, np.float32, np.float64)
#: extra dtypes for hop counts (BFS): no negative values, so unsigned types are safe
HOP_ONLY = (np.uint8, np.uint16)
#: the integer distance dtypes a dtype plan chooses from, narrowest first
INTEGERS = tuple(map(np.dtype, (np.int16, np.int32, np.int64)))

#: entries of a row chunk of the passes over a whole result (cut-off check, finalize, casts): their
#: masks, a few bytes an entry on each core, stay a few MB beside the n x n matrix
ROW_CHUNK = 1 << 18


def as_dtype(dtype, allowed=SUPPORTED) -> np.dtype:
    """Normalise a user dtype (str, numpy type) and refuse those not in ``allowed``."""
    try:
        dt = np.dtype(dtype)
        if dt.type in allowed:
            return dt
        problem = f"dtype {dt.name} is not supported here"
    except TypeError:
        problem = f"unknown dtype {dtype!r}"
    raise DtypeError(f"{problem}; choose one of {', '.join(np.dtype(t).name for t in allowed)}") from None


def inf_value(dtype):
    """The sentinel kernels use for 'no path' in ``dtype``."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return dt.type(np.inf)
    return dt.type(np.iinfo(dt).max // 2)


def unreachable_value(dtype: DTypeLike) -> np.integer[Any] | np.floating[Any]:
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
    dt: np.dtype[Any] = np.dtype(dtype)
    if dt.kind == "f":
        return dt.type(np.inf)
    return dt.type(np.iinfo(dt).max)


def distance_bound(n: int, max_abs_weight) -> int | float:
    """Largest magnitude any shortest distance, or any weight a kernel loads, can have:
    ``(n - 1) * max|w|``, and at least ``max|w|`` (one vertex with a self-loop: its distance is
    0, but the loop's weight is still held in the distance dtype before the diagonal drops it).

    A Python int, exact, for a whole-number ``max|w|`` (an int64 weight is not a float: near
    the int64 limit a float rounds it by up to 512), so every comparison with a dtype's limit
    is exact; a float for fractional weights.
    """
    paths = max(n - 1, 1)
    if whole(max_abs_weight):
        return paths * int(max_abs_weight)
    return float(paths) * float(max_abs_weight)


def shown(bound) -> str:
    """A bound in messages: an int in full (no float conversion, which may overflow), else rounded."""
    return str(bound) if isinstance(bound, int) else f"{bound:.0f}"


def whole(value) -> bool:
    """Whether ``value`` is a whole number (an integer type, or a finite float with no fraction)."""
    return isinstance(value, (int, np.integer)) or float(value).is_integer()


def dtype_fits(dtype, bound: int | float, negative: bool, integral: bool = True) -> bool:
    """Whether ``dtype`` holds every distance of magnitude <= ``bound`` exactly."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        if not integral:
            return True  # float weights: rounding is the user's choice of precision
        # integer-valued weights stay exact while sums stay below 2**(mantissa+1)
        return bound < 2 ** (np.finfo(dt).nmant + 1)
    inf = int(inf_value(dt))
    return bound <= inf // 4 if negative else bound < inf


def choose_dtype(bound: int | float, negative: bool, integral: bool, requested=None) -> np.dtype:
    """Pick the distance dtype, or check the user's.

    Integer weights get the smallest integer dtype of `INTEGERS` that holds
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
                f"(n-1)*max|w| = {shown(bound)}, above the {dt.name} limit {limit}"
                f"{' for graphs with negative weights' if negative and dt.kind != 'f' else ''}; "
                f"choose a wider dtype or leave dtype unset")
        return dt
    chosen = dtype_attempts(bound, negative, integral, 0, saturating=False)[0].dtype
    assert chosen is not None  # dtype_attempts names every dtype it plans
    return chosen


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


@dataclass(frozen=True)
class Attempt:
    """One dtype of a dtype plan; ``checked``: trust the result only if `cutoff_suspected` says no;
    ``cast_to``: the narrower dtype asked for, which the exact result is cast to by `cast_checked`."""

    dtype: np.dtype | None  # None: the solver picks the narrowest that holds its result (BFS)
    checked: bool = False
    cast_to: np.dtype | None = None


@dataclass(frozen=True)
class HopDtypes:
    """The GPU breadth-first solve's dtypes, decided before it runs (`gpu_hop_dtypes`): the device
    counts hops in ``compute[0]`` and widens to the next as the search outgrows it (past the last:
    `DtypeError`); a result computed wider than ``narrow_to`` only for torch's lack of ``uint16``
    arithmetic is narrowed to it where the diameter allows; a float ``requested`` is the result's dtype."""

    compute: tuple[np.dtype, ...]
    narrow_to: np.dtype | None = None
    requested: np.dtype | None = None


def gpu_hop_dtypes(requested=None) -> HopDtypes:
    """`HopDtypes` of a GPU BFS asked for ``requested`` (None: the narrowest that holds the hops):
    ``uint8`` while the search is within 254 levels, then ``int32``, returned as ``uint16`` where
    the diameter allows; ``uint16`` asked for: ``int32`` on the device; another integer dtype as given.

    >>> [d.name for d in gpu_hop_dtypes().compute], gpu_hop_dtypes("uint16").narrow_to.name
    (['uint8', 'int32'], 'uint16')
    """
    want = None if requested is None else np.dtype(requested)
    if want is None or want.kind == "f":
        return HopDtypes((np.dtype(np.uint8), np.dtype(np.int32)), np.dtype(np.uint16), want)
    if want == np.uint16:
        return HopDtypes((np.dtype(np.int32),), want, want)
    return HopDtypes((want,), None, want)


def dtype_attempts(bound: int | float, negative: bool, integral: bool, max_abs_weight, requested=None,
                   saturating: bool = True) -> list[Attempt]:
    """The dtypes to solve in, narrowest first; each later one only if the one before was cut off.

    A dtype whose worst-case ``bound`` fits ends the plan unchecked; a narrower one is tried,
    and checked, when its result can be verified after the solve (module docstring: an integer
    dtype, non-negative integer weights, every weight below the sentinel) and the solver's
    kernels are ``saturating`` (they keep every entry at most INF, as Floyd-Warshall's do; a
    search computing in its output dtype does not). A requested dtype is the whole plan. With
    integer weights, one that the bound does not fit is checked after the solve when it can be
    (an integer dtype); else the solve runs in the integer dtype the bound fits and its exact
    result is cast (``cast_to``, `cast_checked`; a float dtype too, exact up to
    ``2**(mantissa+1)``). Only a requested dtype that not even that can give is refused now
    (`DtypeError`, as `choose_dtype`).

    Examples
    --------
    >>> [(a.dtype.name, a.checked) for a in dtype_attempts(3.3e6, False, True, 100)]
    [('int16', True), ('int32', False)]
    >>> [(a.dtype.name, a.checked) for a in dtype_attempts(3.3e6, True, True, 100)]
    [('int32', False)]
    >>> a = dtype_attempts(3.3e6, True, True, 100, "int16")[0]  # negative weights: cannot be checked
    >>> a.dtype.name, a.checked, a.cast_to.name
    ('int32', False, 'int16')
    """
    # a result can be verified (module docstring) with non-negative whole weights, each below the sentinel
    verifiable = saturating and not negative and integral and whole(max_abs_weight)
    if requested is not None:
        dt = as_dtype(requested)
        if integral and not dtype_fits(dt, bound, negative):
            if verifiable and dt.kind == "i" and int(max_abs_weight) < int(inf_value(dt)):
                return [Attempt(dt, checked=True)]
            wide = next((c for c in INTEGERS if dtype_fits(c, bound, negative)), None)
            if wide is not None:
                return [Attempt(wide, cast_to=dt)]
        return [Attempt(choose_dtype(bound, negative, integral, dt))]
    plan: list[Attempt] = []
    for cand in INTEGERS if integral else ():
        if dtype_fits(cand, bound, negative):
            return plan + [Attempt(cand)]
        if verifiable and cand.kind == "i" and int(max_abs_weight) < int(inf_value(cand)):
            plan.append(Attempt(cand, checked=True))
    if plan:
        return plan
    if not integral or dtype_fits(np.float64, bound, negative):
        return [Attempt(np.dtype(np.float64))]
    raise DtypeError(f"distances up to {shown(bound)} fit no supported dtype exactly")


def skip_bound_to_fail(attempts: list[Attempt], longest_found: float, max_abs_weight) -> tuple[list, list]:
    """The plan without the checked attempts that a distance already found would fail.

    A distance ``d`` the solve must produce lies in the dtype's `cutoff_band` or beyond it
    whenever ``d >= INF - max|w|``: that attempt's check would fail and its solve be thrown
    away. Returns the attempts kept and, for each one skipped, why. Compared in floats only
    below 2**31, where they are exact.
    """
    kept, why = [], []
    for i, attempt in enumerate(attempts):
        lo = cutoff_band(attempt.dtype, max_abs_weight)[0] if attempt.checked else None
        if lo is not None and i + 1 < len(attempts) and lo < 2 ** 31 and longest_found >= lo:
            why.append(f"{attempt.dtype}: a shortest distance of {longest_found:.0f} was found "
                       f"before solving; {attempt.dtype} is verified only below {lo}")
        else:
            kept.append(attempt)
    return kept, why


def cutoff_band(dtype, max_abs_weight) -> tuple[int, int]:
    """``(INF - W, INF)``: a verified result holds no value ``v`` with ``lo <= v < hi``.

    ``W`` must be exact (`Graph.max_abs_weight` is, a Python int for integer weights): a
    ``W`` rounded down starts the band too high and lets a cut-off distance pass.
    """
    inf = int(inf_value(dtype))
    return inf - int(max_abs_weight), inf


def cutoff_suspected(dist, band: tuple[int, int], chunk: int = ROW_CHUNK) -> bool:
    """Whether a checked solve's distances may have been cut off: some value lies in `cutoff_band`.

    False proves every value exact (module docstring). ``dist`` is the n x n result,
    finalized or not, as a numpy array (memory-mapped ones too) or anything with the same
    slicing, comparisons and ``any()`` (a torch tensor on its device); read in row chunks
    of about ``chunk`` entries so no full-size temporary is made.
    """
    lo, hi = band
    return any(over_row_chunks(lambda i0, i1: bool(((dist[i0:i1] >= lo) & (dist[i0:i1] < hi)).any()),
                               dist.shape, chunk, threads=isinstance(dist, np.ndarray)))


def row_chunk_threads() -> int:
    """Threads of `over_row_chunks`: every core, at most 8 (the passes are bound by memory)."""
    return min(8, os.cpu_count() or 1)


def row_pass_bytes(entries: int) -> int:
    """What the passes over a result of ``entries`` entries (cut-off check, finalize) hold beside
    it: up to three boolean masks of a row chunk per thread (the memory planner counts them)."""
    chunks = -(-entries // ROW_CHUNK)
    return 3 * min(entries, ROW_CHUNK) * min(chunks, row_chunk_threads() if chunks >= 4 else 1)


def over_row_chunks(fn, shape: tuple, chunk: int = ROW_CHUNK, threads: bool = True) -> list:
    """``[fn(i0, i1), ...]`` over the row chunks ``i0:i1`` of about ``chunk`` entries of a matrix of
    ``shape``, in row order; on every core with ``threads`` and four chunks or more (numpy's
    comparisons and casts release the GIL), else chunk after chunk (a torch tensor on its device).
    """
    n_rows = shape[0]
    step = max(1, chunk // max(1, shape[1] if len(shape) > 1 else 1))
    starts = range(0, n_rows, step)
    stops = [*starts[1:], n_rows]  # a chunk ends where the next one starts
    if not threads or len(starts) < 4:
        return list(map(fn, starts, stops))
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(len(starts), row_chunk_threads())) as pool:
        return list(pool.map(fn, starts, stops))


def cutoff_error(dtype, max_abs_weight, requested: bool = True) -> DtypeError:
    """The refusal when the last dtype of a plan did not pass `cutoff_suspected`; ``requested``:
    the user asked for it (else it was the widest the plan had)."""
    dt = np.dtype(dtype)
    lo, hi = cutoff_band(dt, max_abs_weight)
    advice = ("choose a wider dtype or leave dtype unset" if requested else
              "no supported dtype holds every distance exactly; scale the weights down")
    return DtypeError(
        f"dtype {dt.name} cannot hold every distance of this graph: a distance reached {lo} or more, "
        f"within the largest weight ({int(max_abs_weight)}) of the {dt.name} limit {hi - 1}, so longer "
        f"ones may have been cut off; {advice}")


def explain_check(tried: list, check: str, bound: int | float) -> str:
    """Why a result's dtype holds its distances, in words (for ``-v``): ``tried`` are the dtypes
    solved in, ``check`` is ``info["dtype_check"]`` ("bound", "verified" or "cast")."""
    retried = (f"; {' and '.join(tried[:-1])} may have cut off a distance, so solved again"
               if len(tried) > 1 else "")
    if check == "verified":
        return f"verified: no distance within max|w| of its limit{retried}"
    if check == "cast":
        return f"solved in {tried[-1]}, which holds every possible distance, then cast: every distance checked to fit"
    return f"holds every possible distance: bound (n-1)*max|w| = {shown(bound)}{retried}"


def cast_checked(dist: np.ndarray, dtype, negative: bool, chunk: int = ROW_CHUNK,
                 out: np.ndarray | None = None) -> np.ndarray:
    """An exact, finalized integer result ``dist`` in the narrower ``dtype``.

    Every reachable distance must lie within ``dtype``'s `reachable_limit` (as if solved in
    ``dtype``; for a float dtype, the integers it holds exactly, up to ``2**(mantissa+1)``),
    else `DtypeError`; unreachable pairs become ``dtype``'s `unreachable_value`.
    Converted in row chunks of about ``chunk`` entries into ``out`` (default: a new array;
    a memory-mapped one keeps a result too big for RAM off it), so no full-size temporary is made.
    """
    dt = np.dtype(dtype)
    limit = 2 ** (np.finfo(dt).nmant + 1) if dt.kind == "f" else int(reachable_limit(dt, negative))
    wide_unreachable, narrow_unreachable = unreachable_value(dist.dtype), unreachable_value(dt)
    out = np.empty(dist.shape, dtype=dt) if out is None else out

    def cast_rows(i0: int, i1: int):
        """Rows ``i0:i1`` into ``out``; the first distance that does not fit there, or None."""
        part = dist[i0:i1]
        no_path = part == wide_unreachable
        values = np.where(no_path, 0, part)
        bad = (values > limit) | (values < -limit)
        if bad.any():
            return int(values[bad][0])
        piece = out[i0:i1]
        piece[...] = values
        piece[no_path] = narrow_unreachable
        return None

    offending = [v for v in over_row_chunks(cast_rows, dist.shape, chunk) if v is not None]
    if offending:
        raise DtypeError(
            f"dtype {dt.name} cannot hold every distance of this graph: one is {offending[0]}, beyond "
            f"the {dt.name} limit {limit}; choose a wider dtype or leave dtype unset")
    return out


def finalize_unreachable(dist: np.ndarray, negative: bool) -> np.ndarray:
    """Turn kernel sentinels into ``unreachable_value`` in place and return ``dist`` (`finalize_checked`)."""
    finalize_checked(dist, negative)
    return dist


def finalize_checked(dist: np.ndarray, negative: bool, band: tuple[int, int] | None = None) -> bool | None:
    """Turn kernel sentinels into ``unreachable_value`` in place (`reachable_limit`) and, given the
    ``band`` (`cutoff_band`), answer `cutoff_suspected` from the same pass over ``dist`` (None
    without one); in row chunks, so the only temporaries are a chunk's masks (`ROW_CHUNK`)."""
    if dist.dtype.kind == "f":  # no sentinel to mark; and no checked attempt is a float one
        return None if band is None else cutoff_suspected(dist, band)
    limit, unreachable = reachable_limit(dist.dtype, negative), unreachable_value(dist.dtype)

    def rows(i0: int, i1: int) -> bool:
        part = dist[i0:i1]
        # checked before the mark, which moves nothing in the band (it lies below the sentinel)
        suspect = band is not None and bool(((part >= band[0]) & (part < band[1])).any())
        np.copyto(part, unreachable, where=part > limit)
        return suspect

    suspects = over_row_chunks(rows, dist.shape)
    return None if band is None else any(suspects)


def check_float_range(dtype, n: int, max_abs_weight, method: str, negative: bool) -> None:
    """Refuse a float ``dtype`` in which a ``method``'s sums could overflow to ``inf``.

    ``inf`` means "no path", so an overflowing sum would report a reachable pair as
    unreachable. Every sum a solver keeps is bounded: Floyd-Warshall keeps only shortest
    restricted paths, simple ones, so ``(n-1)*max|w|`` (a candidate above that loses to a
    finite value and may be ``inf`` harmlessly); a search's tentative lengths add one edge more;
    Johnson's reweighted lengths (negative weights) add two potentials, each within ``(n-1)*max|w|``.
    """
    dt = np.dtype(dtype)
    if dt.kind != "f":
        return
    # in floats: the question is a float dtype's range, and a huge whole bound must not overflow
    bound = float(max(n - 1, 0)) * float(max_abs_weight) + float(max_abs_weight)
    largest_sum = 3 * bound if method == "johnson" and negative else bound
    largest = float(np.finfo(dt).max)
    if not largest_sum < largest:
        wider = (" (float64 holds them)" if dt != np.float64 and largest_sum < float(np.finfo(np.float64).max)
                 else "")
        raise DtypeError(f"path lengths may reach {largest_sum:.3g}, beyond the largest {dt.name} "
                         f"({largest:.3g}): a reachable pair could overflow to inf and read as 'no path'; "
                         f"choose a wider dtype{wider} or scale the weights down")
