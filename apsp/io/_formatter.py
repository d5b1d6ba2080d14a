"""Text out: the Numba formatter and the edge writers every format module shares.

`format_rows` prints rows of a distance matrix (``INF`` for unreachable) and `format_edges` prints
edge records, into a preallocated byte buffer. Whole-valued floats print as integers; other floats
use numpy's shortest round-trip repr. `write_edges` and `write_edge_file` write edge records in
chunks of bounded size into files opened by `apsp.io.atomic.atomic_write`; `check_edges` and
`last_assignment_wins` make sure the file means the graph it was given.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .atomic import atomic_write

#: bytes of formatted text per write() call; bounds a writer's extra memory
CHUNK_BYTES = 16 << 20


# -- formatting ------------------------------------------------------------------
_PAIRS = np.frombuffer("".join(f"{k:02d}" for k in range(100)).encode(), dtype=np.uint8).copy()


@njit(cache=True, nogil=True, inline="always")
def _ndigits(u):
    n = 1
    while u >= np.uint64(10000):
        u //= np.uint64(10000)
        n += 4
    if u >= np.uint64(100):
        n += 2
        u //= np.uint64(100)
    if u >= np.uint64(10):
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _put_int(out, p, v):
    """Write int64 ``v`` in decimal at ``out[p]``; return the position after it."""
    if v < 0:
        out[p] = 45
        p += 1
        u = np.uint64(-(v + 1)) + np.uint64(1)  # |v|, exact even for INT64_MIN
    else:
        u = np.uint64(v)
    n = _ndigits(u)
    q = p + n
    hundred = np.uint64(100)
    while u >= hundred:  # two digits per step from a table
        r = np.int64(u % hundred) * 2
        u //= hundred
        q -= 2
        out[q] = _PAIRS[r]
        out[q + 1] = _PAIRS[r + 1]
    if u >= np.uint64(10):
        r = np.int64(u) * 2
        out[q - 2] = _PAIRS[r]
        out[q - 1] = _PAIRS[r + 1]
    else:
        out[q - 1] = np.uint8(np.uint64(48) + u)
    return p + n


@njit(cache=True, nogil=True, inline="always")
def _put_inf(out, p):
    out[p] = 73
    out[p + 1] = 78
    out[p + 2] = 70
    return p + 3


#: whole floats below this print as integers; 2**49 is exact in float32 and float64,
#: so numpy (which compares float32 in float32) and Numba agree on every value
_WHOLE_LIMIT = 2.0 ** 49


@njit(cache=True, nogil=True, inline="always")
def _put_float(out, p, v, strs, lens, k):
    """Whole floats as integers, the rest from numpy's repr strings; returns (p, k)."""
    if v == np.inf:
        return _put_inf(out, p), k
    if v == np.floor(v) and abs(v) < _WHOLE_LIMIT:
        return _put_int(out, p, np.int64(v)), k
    for b in range(lens[k]):
        out[p + b] = strs[k, b]
    return p + lens[k], k + 1


@njit(cache=True, nogil=True)  # nogil: the writer formats several blocks on threads
def format_rows(rows, unreachable, strs, lens, out):
    """Rows of distances as text into ``out``; returns its length. Integers: ``unreachable``
    prints as ``INF`` (``strs`` None); floats: non-whole values from `float_strings`."""
    p = 0
    k = 0
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            if j:
                out[p] = 32
                p += 1
            if strs is None:
                v = np.int64(rows[i, j])
                p = _put_inf(out, p) if v == unreachable else _put_int(out, p, v)
            else:
                p, k = _put_float(out, p, rows[i, j], strs, lens, k)
        out[p] = 10
        p += 1
    return p


@njit(cache=True, nogil=True)
def format_edges(src, dst, add, weights, strs, lens, prefix, sep, out):
    """Records ``prefix src+add sep dst+add [sep w]``, one a line, into ``out``.

    ``weights``: None (no weight), int64 (``strs`` None) or floats (non-whole values
    from ``strs``/``lens`` in order).
    """
    p = 0
    k = 0
    for r in range(src.shape[0]):
        for b in range(prefix.shape[0]):
            out[p] = prefix[b]
            p += 1
        p = _put_int(out, p, src[r] + add)
        out[p] = sep
        p = _put_int(out, p + 1, dst[r] + add)
        if weights is not None:
            out[p] = sep
            if strs is None:
                p = _put_int(out, p + 1, weights[r])
            else:
                p, k = _put_float(out, p + 1, weights[r], strs, lens, k)
        out[p] = 10
        p += 1
    return p


def float_strings(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """numpy's shortest repr of the floats `_put_float` cannot print as integers.

    Returns a (k, width) uint8 matrix and the k lengths, in row-major order.
    """
    values = np.asarray(values)
    flat = values.reshape(-1)
    whole = (flat == np.floor(flat)) & (np.abs(flat) < _WHOLE_LIMIT)
    special = ~(whole | (flat == np.inf))
    picked = flat[special]
    if picked.size == 0:
        return np.zeros((1, 1), dtype=np.uint8), np.zeros(1, dtype=np.int64)
    s = picked.astype("S32")
    mat = s.view(np.uint8).reshape(picked.size, 32)
    lens = np.count_nonzero(mat, axis=1).astype(np.int64)
    return mat, lens


def write_edges(f, src, dst, weights, *, add: int = 0, prefix: bytes = b"", sep: bytes = b" ") -> None:
    """Write records ``prefix src+add sep dst+add [sep w]`` in chunks of bounded size.

    Integer weights print exactly; float weights as whole numbers when they
    are, else in numpy's shortest round-trip form; ``weights=None`` writes none.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    m = src.shape[0]
    floats = weights is not None and weights.dtype.kind not in "iub"
    if weights is not None and not floats:
        weights = np.asarray(weights, dtype=np.int64)
    width = len(prefix) + 2 * 21 + (0 if weights is None else 33 if floats else 21) + 1
    step = max(1, CHUNK_BYTES // width)
    out = np.empty(min(m, step) * width + 1, dtype=np.uint8)
    for start in range(0, m, step):
        w = None if weights is None else np.ascontiguousarray(weights[start:start + step])
        strs, lens = float_strings(w) if floats and w is not None else (None, None)
        nbytes = format_edges(src[start:start + step], dst[start:start + step], add, w, strs, lens,
                              np.frombuffer(prefix, dtype=np.uint8), sep[0], out)
        f.write(out[:nbytes])


def write_edge_file(path, header: str, src, dst, weights, **options) -> None:
    """``header`` and then the edge records (`write_edges` with ``options``) into ``path``, whole
    or not at all (gzip by a ``.gz`` suffix)."""
    with atomic_write(path, gz=True) as f:
        f.write(header.encode())
        write_edges(f, src, dst, weights, **options)




@njit(cache=True, nogil=True)
def last_of_each_pair(src, dst):
    """Mask of the edges that are the last of their (src, dst) pair, in O(m).

    Open addressing over edge indices (8 bytes a slot, load <= 1/2): a sort
    of 10**7 pairs takes seconds, this a fraction of one.
    """
    m = src.shape[0]
    size = 16
    while size < 2 * m:
        size *= 2
    mask = np.uint64(size - 1)
    slots = np.full(size, -1, dtype=np.int64)
    for i in range(m):
        h = (np.uint64(src[i]) * np.uint64(0x9E3779B97F4A7C15)
             ^ np.uint64(dst[i]) * np.uint64(0xC2B2AE3D27D4EB4F))
        h = (h ^ (h >> np.uint64(29))) & mask
        while True:
            j = slots[h]
            if j == -1 or (src[j] == src[i] and dst[j] == dst[i]):
                slots[h] = i  # a later edge replaces an earlier one
                break
            h = (h + np.uint64(1)) & mask
    keep = np.zeros(m, dtype=np.bool_)
    for h in range(size):
        if slots[h] != -1:
            keep[slots[h]] = True
    return keep



def last_assignment_wins(src, dst, weight):
    """Drop earlier duplicates of the same (src, dst), keeping file order of the rest.

    Writers of formats whose readers elsewhere sum (Matrix Market) or take the
    minimum (DIMACS) of parallel edges use this, so the file means the same
    graph to every tool as to apsp.
    """
    keep = last_of_each_pair(np.ascontiguousarray(src), np.ascontiguousarray(dst))
    if keep.all():
        return src, dst, weight
    return src[keep], dst[keep], weight[keep]


def check_edges(edges) -> None:
    """Refuse an EdgeList a writer cannot write faithfully."""
    if edges.m and (min(edges.src.min(), edges.dst.min()) < 0
                    or max(edges.src.max(), edges.dst.max()) >= edges.n):
        raise ValueError(f"edge endpoints must lie in 0..{edges.n - 1}")
    if edges.weight.dtype.kind not in "iubf":
        raise ValueError(f"edge weights must be numeric, got dtype {edges.weight.dtype}")
