"""Read the graph once (rank 0), check everything, then hand each rank its tiles.

Rank 0 parses and validates the whole input (file format, vertex range, dtype
bound, block size, output path) before anything is distributed, so every
input error is reported before compute starts, by every rank alike (see
`faults.agreed`). The start matrix is never built whole: sparse inputs travel
as per-rank edge lists (``Scatterv``, O(m) in total) and each rank builds its
own part of ``Graph.fw_matrix``; dense inputs (an array given to the API) go
out one rank's block at a time.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mpi4py import MPI
from mpi4py.util.dtlib import from_numpy_dtype

from .. import exactness
from .layout import BlockCyclic



@dataclass
class Problem:
    """What every rank must agree on before compute (broadcast from rank 0)."""

    n: int
    dtype: np.dtype
    negative: bool
    block: int
    #: "edges" (Scatterv of edge lists) or "dense" (one block per rank)
    transport: str
    #: the dtype plan (`apsp.exactness.dtype_attempts`): ``(dtype name, checked, cast_to name or None)``,
    #: narrowest first; ``dtype`` is the one being solved in
    attempts: tuple = ()
    #: largest |weight| (exact: an int for integer weights): a checked dtype's cut-off band is
    #: ``[INF - it, INF)``
    max_abs_weight: int | float = 0


def load_on_root(graph, *, dtype=None, block_size=None, backend="cpu", directed=True, unweighted=False,
                 null_value=0.0, fmt=None):
    """Rank 0: read and validate the graph; return (Graph, Problem). Raises on any input error."""
    from ..api import as_graph

    from ..engine import check_block
    from ..plan import distributed_block

    block_size = check_block(block_size)
    if graph is None:
        raise ValueError("rank 0 got no graph: pass the graph (or its file path) on rank 0")
    g = as_graph(graph, directed=directed, unweighted=unweighted, null_value=null_value, fmt=fmt)
    attempts = exactness.dtype_attempts(g.distance_bound, g.has_negative_weights, g.integral_for(dtype),
                                        g.max_abs_weight, dtype)
    return g, Problem(n=g.n, dtype=attempts[0].dtype, negative=g.has_negative_weights,
                      block=distributed_block(block_size, backend),
                      transport="dense" if g.csr is None else "edges",
                      attempts=tuple((a.dtype.name, a.checked, a.cast_to and a.cast_to.name) for a in attempts),
                      max_abs_weight=g.max_abs_weight)


def check_output_path(path) -> Path:
    """Fail now (before compute) if ``path`` cannot be written (`apsp.io.atomic.check_target`: the
    same checks and messages as every output); a stream (``-``, a device, a FIFO) is refused, since
    the ranks write a temporary file beside the target."""
    from ..io.atomic import check_target

    if check_target(path) is None:
        raise ValueError(f"cannot write {path}: the distributed solver writes a regular file, not a stream")
    return Path(path)


def _fix_diagonal(local, layout, coords):
    """``min(0, .)`` on the diagonal entries this rank holds (as ``Graph.fw_matrix``)."""
    di, dj, _ = layout.local_diagonal(coords)
    local[di, dj] = np.minimum(local[di, dj], 0)
    return local


def dense_block(g, layout: BlockCyclic, coords, dtype) -> np.ndarray:
    """The local start matrix of ``coords`` cut from a dense graph (same rules as ``fw_matrix``)."""
    dt = np.dtype(dtype)
    local = np.full(layout.local_shape(coords), exactness.inf_value(dt), dtype=dt)
    sel = layout.global_block(coords)
    np.copyto(local, g.dense[sel], where=g.edges_at(sel), casting="unsafe")  # this block's mask only
    return _fix_diagonal(local, layout, coords)


def edges_by_rank(g, layout: BlockCyclic, dtype):
    """Rank 0: the graph's edges sorted by owning rank, with local indices there.

    Returns (counts per rank, local row, local col, weight as ``dtype``)."""
    csr = g.csr
    rows = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(csr.indptr))
    cols = csr.indices.astype(np.int64)
    pr, li = layout.locate(rows, 0)
    pc, lj = layout.locate(cols, 1)
    dest = pr * layout.grid[1] + pc
    order = np.argsort(dest, kind="stable")
    counts = np.bincount(dest, minlength=layout.size).astype(np.int64)
    weights = csr.data.astype(np.dtype(dtype))[order]
    return counts, li[order], lj[order], weights


def scatter_edges(comm, layout, coords, prepared, out: np.ndarray) -> np.ndarray:
    """Collective: rank 0 sends each rank its edges (``prepared`` by `edges_by_rank`);
    every rank builds its part of ``Graph.fw_matrix`` in ``out``: INF, then its edges, then the diagonal."""
    dt = out.dtype
    displs: np.ndarray | None  # where each rank's edges start (rank 0 only)
    if comm.rank == 0:
        counts, li, lj, w = prepared
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    else:
        counts = displs = li = lj = w = None
    mine = comm.scatter(None if counts is None else [int(c) for c in counts], root=0)
    received = (np.empty(mine, dtype=np.int64), np.empty(mine, dtype=np.int64), np.empty(mine, dtype=dt))
    for sent, recv, mpi_type in zip((li, lj, w), received, (MPI.INT64_T, MPI.INT64_T, from_numpy_dtype(dt))):
        # the buffer description matters on rank 0 only
        comm.Scatterv(None if sent is None or displs is None
                      else [sent, [int(c) for c in counts], [int(x) for x in displs], mpi_type], recv, root=0)
    out.fill(exactness.inf_value(dt))
    out[received[0], received[1]] = received[2]
    return _fix_diagonal(out, layout, coords)


def scatter_dense(comm, layout, coords, g, out: np.ndarray) -> np.ndarray:
    """Collective: rank 0 cuts and sends each rank's block of a dense graph, one at a time,
    into every rank's ``out``."""
    dt = out.dtype
    if comm.rank == 0:
        for r in range(1, comm.size):
            comm.Send(dense_block(g, layout, layout.coords_of(r), dt), dest=r, tag=11)
        out[...] = dense_block(g, layout, coords, dt)
    else:
        comm.Recv(out, source=0, tag=11)
    return out
