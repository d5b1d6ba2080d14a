"""Memory-traffic model of blocked Floyd-Warshall (the traffic model behind the ``block`` suite).

The matrix is cut into ``R = ceil(n / B)`` tile rows and columns. The model
assumes each tile an update needs is read once from main (device) memory into
fast memory (cache, shared memory) and each updated tile is written back once:

* phase 1, pivot tile P (p x p): read and write P;
* phase 2, each pivot-row / pivot-column tile T: read P, read and write T;
* phase 3, each other tile D(i,j): read C(i,K) and R(K,j), read and write D.

Achieved bandwidth is then ``bytes / time``. Kernels that tile phase 3 with
their own, larger tiles move less than the model says, so the figure is the
bandwidth the *blocking factor* asks for, comparable across B.

>>> blocked_fw_bytes(6, 2, 4)   # 3 rounds of 2x2 tiles, int32
1440
>>> blocked_fw_bytes(1000, 1000, 4) == 2 * 1000 * 1000 * 4   # one tile: read + write once
True
"""
from __future__ import annotations


def blocked_fw_elements(n: int, block: int) -> int:
    """Elements read plus written by the blocked algorithm under the model above."""
    if n < 0 or block < 1:
        raise ValueError("n must be >= 0 and block >= 1")
    rounds = -(-n // block)
    total = 0
    for k in range(rounds):
        p = min(block, n - k * block)  # pivot tile side (the last tile may be short)
        q = n - p  # rows (columns) outside the pivot
        others = rounds - 1
        phase1 = 2 * p * p
        phase2 = others * 2 * p * p + 4 * p * q  # pivot read per tile; each panel read+written
        phase3 = 2 * others * p * q + 2 * q * q  # C and R read per tile; D read+written
        total += phase1 + phase2 + phase3
    return total


def blocked_fw_bytes(n: int, block: int, itemsize: int) -> int:
    """Bytes moved between main and fast memory by blocked FW (see module docstring)."""
    return blocked_fw_elements(n, block) * int(itemsize)
