"""The near-square Cartesian process grid and its row and column communicators."""
from __future__ import annotations

from dataclasses import dataclass

from mpi4py import MPI


def grid_shape(size: int) -> tuple[int, int]:
    """The most nearly square ``Pr x Pc`` factorisation of ``size`` (``Pr >= Pc``).

    >>> grid_shape(4), grid_shape(6), grid_shape(7)
    ((2, 2), (3, 2), (7, 1))
    """
    dims = MPI.Compute_dims(size, 2)
    return int(dims[0]), int(dims[1])


def node_placement(comm) -> tuple[int, int]:
    """``(ranks on this rank's node, its index among them)``; collective. The index picks the
    rank's GPU (`apsp.gpu.rank_device`)."""
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    size, rank = node.size, node.rank
    node.Free()
    return size, rank


@dataclass
class ProcessGrid:
    """Ranks of ``comm`` arranged as a ``Pr x Pc`` Cartesian grid (row-major ranks).

    ``row_comm`` joins the ranks of one process row (its rank there is the
    column coordinate); ``col_comm`` joins one process column (rank = row
    coordinate). Pivot row panels travel along ``col_comm``, pivot column
    panels along ``row_comm``.
    """

    comm: MPI.Comm
    cart: MPI.Cartcomm
    row_comm: MPI.Comm
    col_comm: MPI.Comm
    shape: tuple[int, int]
    coords: tuple[int, int]
    #: ranks sharing this rank's node, and this rank's index among them
    node_size: int
    node_rank: int

    @classmethod
    def create(cls, comm=None, shape=None) -> "ProcessGrid":
        """Build the grid on ``comm`` (default ``COMM_WORLD``); collective."""
        comm = MPI.COMM_WORLD if comm is None else comm
        shape = grid_shape(comm.size) if shape is None else (int(shape[0]), int(shape[1]))
        if shape[0] * shape[1] != comm.size:
            raise ValueError(f"process grid {shape[0]}x{shape[1]} does not match {comm.size} ranks")
        # reorder=False keeps ranks row-major in comm's order, as Create_darray assumes
        cart = comm.Create_cart(list(shape), periods=[False, False], reorder=False)
        row, col = cart.Get_coords(cart.rank)
        coords = (int(row), int(col))
        node_size, node_rank = node_placement(comm)
        return cls(comm=comm, cart=cart, row_comm=cart.Sub([False, True]), col_comm=cart.Sub([True, False]),
                   shape=shape, coords=coords, node_size=node_size, node_rank=node_rank)

    def free(self) -> None:
        for c in (self.row_comm, self.col_comm, self.cart):
            c.Free()
