"""2-D block-cyclic layout: which rank owns which tile, and where it sits locally.

The ``n x n`` matrix is cut into ``block x block`` tiles (the last tile row and
column may be thinner). Tile ``(I, J)`` lives on the rank at grid coordinates
``(I % Pr, J % Pc)``. Each rank stores its tiles as ONE C-contiguous local
matrix: its tile rows stacked in increasing ``I``, its tile columns side by
side in increasing ``J`` (ScaLAPACK's local storage, and MPI's
``Create_darray`` order, so MPI-IO writes it without repacking). A whole local
tile row is then a contiguous block of local rows, which lets the driver update
long panels with one kernel call.

Pure numpy: no MPI here, so the index arithmetic is tested directly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BlockCyclic:
    """Block-cyclic distribution of an ``n x n`` matrix over a ``grid[0] x grid[1]`` grid.

    Examples
    --------
    >>> lay = BlockCyclic(n=5, block=2, grid=(2, 1))
    >>> lay.tiles, lay.tile_size(2)
    (3, 1)
    >>> lay.local_shape((0, 0)), lay.local_shape((1, 0))
    ((3, 5), (2, 5))
    >>> lay.global_indices(0, axis=0).tolist()
    [0, 1, 4]
    """

    n: int
    block: int
    grid: tuple[int, int]

    def __post_init__(self):
        if self.n < 0:
            raise ValueError(f"n must be >= 0, got {self.n}")
        if self.block < 1:
            raise ValueError(f"block size must be a positive integer, got {self.block}")
        if len(self.grid) != 2 or min(self.grid) < 1:
            raise ValueError(f"process grid must be two positive sizes, got {self.grid}")

    # -- tiles ----------------------------------------------------------------
    @property
    def tiles(self) -> int:
        """Tiles per dimension, ``ceil(n / block)``."""
        return -(-self.n // self.block)

    def tile_size(self, t: int) -> int:
        return min(self.block, self.n - t * self.block)

    def whole_tiles(self) -> "BlockCyclic":
        """The same tiles with the thin last one grown to a whole tile (n rounded up to a
        multiple of ``block``). Every local index of this layout keeps its place there.

        >>> BlockCyclic(n=5, block=2, grid=(2, 1)).whole_tiles().local_shape((0, 0))
        (4, 6)
        """
        return BlockCyclic(self.tiles * self.block, self.block, self.grid)

    # -- one grid coordinate along one axis (0: rows, 1: columns) --------------
    def local_tiles(self, p: int, axis: int) -> range:
        """Global tile indices held by grid coordinate ``p`` along ``axis``, in local order."""
        return range(p, self.tiles, self.grid[axis])

    def local_extent(self, p: int, axis: int) -> int:
        """Number of local rows (axis 0) or columns (axis 1) at grid coordinate ``p``."""
        owned = self.local_tiles(p, axis)
        return (len(owned) - 1) * self.block + self.tile_size(owned[-1]) if owned else 0

    def local_range(self, t: int, axis: int) -> tuple[int, int]:
        """Local indices of global tile ``t`` on the coordinate that owns it."""
        start = (t // self.grid[axis]) * self.block
        return start, start + self.tile_size(t)

    def local_shape(self, coords) -> tuple[int, int]:
        return self.local_extent(coords[0], 0), self.local_extent(coords[1], 1)

    def global_indices(self, p: int, axis: int) -> np.ndarray:
        """Global row/column index of every local row/column at coordinate ``p`` (int64)."""
        parts = [np.arange(t * self.block, t * self.block + self.tile_size(t), dtype=np.int64)
                 for t in self.local_tiles(p, axis)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def global_block(self, coords):
        """The ``np.ix_`` index of the local matrix at ``coords`` inside the global matrix."""
        return np.ix_(self.global_indices(coords[0], 0), self.global_indices(coords[1], 1))

    def locate(self, g: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
        """For global indices ``g``: (owning grid coordinate, local index there)."""
        g = np.asarray(g, dtype=np.int64)
        t = g // self.block
        p = self.grid[axis]
        return t % p, (t // p) * self.block + g % self.block

    # -- ranks ----------------------------------------------------------------
    @property
    def size(self) -> int:
        return self.grid[0] * self.grid[1]

    def coords_of(self, rank: int) -> tuple[int, int]:
        """Row-major grid coordinates of a rank (the order of ``MPI_Cart_create`` and darray)."""
        return rank // self.grid[1], rank % self.grid[1]

    def rank_of(self, pr, pc):
        return pr * self.grid[1] + pc

    def local_diagonal(self, coords) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Local (row, col) positions of diagonal entries held at ``coords``, and their vertex ids."""
        rows = self.global_indices(coords[0], 0)
        cols = self.global_indices(coords[1], 1)
        vertices, li, lj = np.intersect1d(rows, cols, assume_unique=True, return_indices=True)
        return li, lj, vertices


def complement(extent: int, excluded) -> list[tuple[int, int]]:
    """Ranges of ``0..extent`` outside the ``excluded`` (start, stop) ranges, in order.

    >>> complement(10, [(2, 4), (7, 8)])
    [(0, 2), (4, 7), (8, 10)]
    """
    out, pos = [], 0
    for start, stop in sorted(r for r in excluded if r is not None and r[1] > r[0]):
        if start > pos:
            out.append((pos, start))
        pos = max(pos, stop)
    if pos < extent:
        out.append((pos, extent))
    return out


def split_ranges(ranges, pieces: int, minimum: int = 1) -> list[tuple[int, int]]:
    """Cut ranges into about ``pieces`` parts (for progress polls), keeping order. Part
    sizes are multiples of ``minimum`` (a tile edge, so GPU kernels see whole tiles).

    >>> split_ranges([(0, 10)], 3)
    [(0, 4), (4, 8), (8, 10)]
    >>> split_ranges([(0, 10)], 3, minimum=3)
    [(0, 6), (6, 10)]
    """
    total = sum(b - a for a, b in ranges)
    if total == 0:
        return []
    minimum = max(1, minimum)
    step = -(-max(minimum, -(-total // max(1, pieces))) // minimum) * minimum
    out = []
    for a, b in ranges:
        while a < b:
            out.append((a, min(b, a + step)))
            a += step
    return out
