"""A dense weight matrix read in place: its weight facts and its Floyd-Warshall start matrix, each in
one pass of a Numba kernel split over threads by rows (`apsp.cpu.threads.run_split`).

scipy's dense convention: an entry is an edge unless it is inf, nan or the null value. No boolean
mask of the edges is made: each pass tests the entries as it reads them. The null value is
compared as numpy compares it with the array (`NullRule`), so the edges are those of
``isfinite(a) & (a != null_value)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from . import exactness
from .cpu.threads import run_split

#: input dtypes the kernels read in place (booleans as int8); others go through numpy
KERNEL_DTYPES = frozenset(map(np.dtype, ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8")))
#: entries below which one thread does a pass alone (a thread hand-off costs more)
THREADED_ENTRIES = 1 << 18


@dataclass(frozen=True)
class NullRule:
    """Which entries of a dense array are no edge besides inf and nan: those equal to ``null`` (of the
    array's dtype, or float64 where numpy compares in float64 and that differs), when ``active``."""

    null: object
    active: bool

    @classmethod
    def of(cls, dtype: np.dtype, null_value) -> "NullRule":
        """The rule of ``null_value`` for an array of ``dtype`` (a `KERNEL_DTYPES` member), as numpy's
        ``a != null_value`` compares: a Python number in the array's type (a float with integers in
        float64), a numpy scalar in their common type; an integer outside the array's range equals
        no entry, and inf or nan adds nothing to the finiteness test."""
        dt = np.dtype(dtype)
        inactive = cls(dt.type(0), False)
        if null_value is None:
            return inactive
        if dt.kind == "f":
            weak = isinstance(null_value, (int, float, bool)) and not isinstance(null_value, np.generic)
            if not weak and np.result_type(dt, np.asarray(null_value).dtype) != dt:  # compared wider
                compared = np.float64(null_value)
                with np.errstate(over="ignore"):
                    return cls(dt.type(compared), True) if np.float64(dt.type(compared)) == compared else inactive
            with np.errstate(over="ignore"):
                value = dt.type(null_value)
            return cls(value, True) if np.isfinite(value) else inactive
        wide = float(null_value) if isinstance(null_value, (float, np.floating)) else None
        if wide is not None and not np.isfinite(wide):
            return inactive
        if wide is not None and not wide.is_integer():
            return inactive  # numpy compares in float64: no whole number equals it
        if wide is not None and dt.itemsize == 8 and abs(wide) >= 2.0 ** 53:
            return cls(np.float64(wide), True)  # float64 compares several int64 values equal to it
        value = int(null_value)
        info = np.iinfo(dt)
        return cls(dt.type(value), True) if info.min <= value <= info.max else inactive


#: the IEEE layouts of float64 and float32: (bits type, mantissa bits, exponent bias)
_FLOAT_BITS = {np.dtype(np.float64): (np.int64, 52, 1023), np.dtype(np.float32): (np.int32, 23, 127)}


@njit(inline="always")
def _is_edge(x, null, active):
    # x - x is 0 exactly when x is finite; bitwise, so that the loops have no branch
    return (x - x == 0) & ((x != null) | (not active))


@njit(nogil=True, cache=True)
def _float_facts(b, null, zero_null, active, shift, mbits, bias, count, low, high, fractional,
                 lo, hi):  # pragma: no cover - Numba
    # A float array read as its bits (signed integers, widened to int64: Numba would widen them
    # anyway), so that every step is an integer one that vectorises without fast-math (which would
    # fold the finiteness test away). Per row: edges, the keys of the lightest and heaviest edge
    # (key = the bits with all but the sign flipped for negatives: integer order is float order),
    # and whether an edge is not a whole number.
    one, zero = np.int64(1), np.int64(0)
    absm = (one << shift) - one
    mant = (one << mbits) - one
    expo = absm & ~mant
    idle = not active
    for i in range(lo, hi):
        c = 0
        mn = absm  # a NaN's key: never an edge's
        mx = ~absm
        frac = zero
        for j in range(b.shape[1]):
            x = np.int64(b[i, j])
            ab = x & absm
            differs = (ab != zero) if zero_null else (x != null)  # +0 and -0 both equal a null 0
            e = ((x & expo) != expo) & (differs | idle)
            c += e
            key = x ^ ((x >> shift) & absm)
            mn = min(mn, key if e else absm)
            mx = max(mx, key if e else ~absm)
            exponent = (ab >> mbits) - bias
            cut = min(max(mbits - exponent, zero), mbits)  # mantissa bits below the units
            part = ab & mant & ((one << cut) - one)
            frac |= (e & (ab != zero) & ((exponent < zero) | (part != zero))) * one
        count[i], low[i], high[i], fractional[i] = c, mn, mx, frac != zero


@njit(nogil=True, cache=True)
def _int_facts(a, null, active, count, low, high, top, bottom, lo, hi):  # pragma: no cover - Numba
    idle = not active
    for i in range(lo, hi):
        c = 0
        mn = top
        mx = bottom
        for j in range(a.shape[1]):
            x = a[i, j]
            e = (x != null) | idle
            c += e
            mn = min(mn, x if e else top)
            mx = max(mx, x if e else bottom)
        count[i], low[i], high[i] = c, mn, mx


@njit(nogil=True, cache=True)
def _start_rows(a, null, active, inf, out, pitch, first, lo, hi):  # pragma: no cover - Numba
    # rows first + lo..first + hi of the start matrix into out, row first + r at r * pitch: the
    # edge's weight cast to out's type, inf elsewhere, then min(0, w_ii) on the diagonal
    cast = out.dtype.type
    zero = cast(0)
    nothing = a.dtype.type(0)
    for r in range(lo, hi):
        i = first + r
        base = r * pitch
        for j in range(a.shape[1]):
            x = a[i, j]
            e = _is_edge(x, null, active)
            w = cast(x if e else nothing)  # a non-edge's value is never cast (nan, inf)
            out[base + j] = w if e else inf
        if out[base + i] > zero:
            out[base + i] = zero


def kernel_view(a: np.ndarray) -> np.ndarray:
    """``a`` as the kernels read it, without a copy: booleans as int8, a subclass as its plain array;
    a Fortran-ordered array stays as it is (the facts read its transpose, `facts`)."""
    a = a.view(np.ndarray) if type(a) is not np.ndarray else a  # a memmap or matrix: its plain array
    return a.view(np.int8) if a.dtype.kind == "b" else a


def _split(kernel, rows: int, entries: int, *args) -> None:
    run_split(kernel, rows, *args, threads=None if entries >= THREADED_ENTRIES else 1)


def facts(a: np.ndarray, rule: NullRule) -> tuple:
    """(edges, max |w|, any negative, all integral, all 1) of the dense ``a``'s edges, as
    `apsp.graph._weight_facts` gives them (integer weights' max as a Python int), in one pass."""
    if a.ndim == 2 and a.flags.f_contiguous and not a.flags.c_contiguous:
        a = a.T  # the facts do not depend on the order: read the memory in its own order
    rows = a.shape[0]
    count = np.zeros(rows, dtype=np.int64)
    low, high = np.empty(rows, dtype=a.dtype), np.empty(rows, dtype=a.dtype)
    if a.dtype.kind == "f":
        bits, mbits, bias = _FLOAT_BITS[a.dtype]
        fractional = np.zeros(rows, dtype=np.bool_)
        keys_low, keys_high = np.empty(rows, dtype=np.int64), np.empty(rows, dtype=np.int64)
        null_bits = np.int64(np.asarray(rule.null, dtype=a.dtype).view(bits)[()])
        _split(_float_facts, rows, a.size, a.view(bits), null_bits, bool(rule.null == 0), rule.active,
               np.int64(8 * a.itemsize - 1), np.int64(mbits), np.int64(bias), count, keys_low, keys_high,
               fractional)
        low, high = _from_keys(keys_low, a.dtype), _from_keys(keys_high, a.dtype)
    else:
        info = np.iinfo(a.dtype)
        _split(_int_facts, rows, a.size, a, rule.null, rule.active, count, low, high,
               a.dtype.type(info.max), a.dtype.type(info.min))
        fractional = np.zeros(1, dtype=np.bool_)
    some = count > 0
    edges = int(count.sum())
    if not edges:
        return 0, 0, False, True, True
    lo, hi = low[some].min(), high[some].max()
    if a.dtype.kind == "f":
        top: int | float = float(max(abs(float(lo)), abs(float(hi))))
    else:
        top = max(int(hi), -int(lo))
    return edges, top, bool(lo < 0), not bool(fractional.any()), bool(lo == 1 and hi == 1)


def _from_keys(keys: np.ndarray, dtype) -> np.ndarray:
    """The floats whose keys (`_float_facts`) these are: the same flip undoes itself."""
    bits = _FLOAT_BITS[np.dtype(dtype)][0]
    k = keys.astype(bits)
    shift = 8 * k.itemsize - 1
    flip = np.asarray((1 << shift) - 1, dtype=bits)
    return (k ^ ((k >> shift) & flip)).view(dtype)


def start_rows(a: np.ndarray, rule: NullRule, dtype, out: np.ndarray, i0: int, i1: int) -> None:
    """Rows ``i0:i1`` of the Floyd-Warshall start matrix of the dense ``a`` (`apsp.graph.Graph.fw_matrix`)
    written into ``out`` ((i1 - i0) x n of ``dtype``, each row contiguous) in one pass."""
    dt = np.dtype(dtype)
    n = a.shape[1]
    if i1 <= i0:
        return
    if out.dtype != dt or out.shape != (i1 - i0, n):
        raise ValueError(f"out must be a {dt} array of shape {(i1 - i0, n)}, got {out.dtype} {out.shape}")
    if out.strides[1] != dt.itemsize or out.strides[0] < n * dt.itemsize or not out.flags.writeable:
        whole = np.empty(out.shape, dtype=dt)  # rows apart in memory: made whole, then copied over
        start_rows(a, rule, dt, whole, i0, i1)
        out[...] = whole
        return
    pitch = out.strides[0] // dt.itemsize
    # the rows as one flat run of memory from out[0, 0] (padding between rows included)
    flat = np.lib.stride_tricks.as_strided(out, shape=((i1 - i0 - 1) * pitch + n,), strides=(dt.itemsize,))
    _split(_start_rows, i1 - i0, (i1 - i0) * n, a, rule.null, rule.active, exactness.inf_value(dt),
           flat, pitch, np.int64(i0))

