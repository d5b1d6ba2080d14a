"""Results out of the grid: gather on rank 0, or parallel writes into ONE file.

No rank ever holds the ``n x n`` matrix when writing a file:

* ``.npy``: rank 0 writes the header; every rank then writes its tiles
  through an MPI-IO file view built with ``Create_darray`` (the MPI type that
  describes exactly a 2-D block-cyclic piece), in one collective ``Write_all``.
* homework text: each rank formats its tiles (``apsp.io.homework.format_rows``),
  the per-(row, tile) byte lengths give every piece's file offset (row sums
  within process rows, prefix sums over rows), and one ``hindexed`` file view
  per rank places them; chunks go out with collective ``Write_at_all``.

Both write a temporary file beside the target; rank 0 renames it only after
every rank has written (see `faults`).
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np
from mpi4py import MPI
from mpi4py.util.dtlib import from_numpy_dtype

from ..io.npy import npy_header
from .layout import BlockCyclic

#: bytes of formatted text written per collective call and rank (bounds the memory of the reorder)
TEXT_CHUNK_BYTES = 64 << 20


def darray_type(layout: BlockCyclic, rank: int, dtype) -> MPI.Datatype:
    """The MPI datatype of ``rank``'s local matrix inside the global C-order ``n x n`` array."""
    return from_numpy_dtype(np.dtype(dtype)).Create_darray(
        layout.size, rank, [layout.n, layout.n], [MPI.DISTRIBUTE_CYCLIC] * 2, [layout.block, layout.block],
        list(layout.grid), MPI.ORDER_C).Commit()


def gather_to_root(grid, layout: BlockCyclic, local: np.ndarray):
    """Collective: the full matrix on rank 0 (None elsewhere). Received straight into place
    with one darray receive per rank, no repacking."""
    comm = grid.cart
    if comm.rank != 0:
        comm.Send(np.ascontiguousarray(local), dest=0, tag=21)
        return None
    full = np.empty((layout.n, layout.n), dtype=local.dtype)
    full[layout.global_block(grid.coords)] = local
    for r in range(1, comm.size):
        dt = darray_type(layout, r, local.dtype)
        try:
            comm.Recv([full, 1, dt], source=r, tag=21)
        finally:
            dt.Free()
    return full


def temp_name(target: Path) -> Path:
    """Hidden temporary name beside ``target``, as `apsp.io.atomic` makes them (the writer's pid, so
    a later writer can tell a dead job's leftover; suffixes kept last)."""
    return target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp{''.join(target.suffixes)}")


def write_npy(grid, layout: BlockCyclic, local: np.ndarray, path, keep_dtype: bool = False) -> None:
    """Collective: write the distributed matrix as one ``.npy`` file at ``path``; integers as float64 with
    ``inf`` where there is no path, as `apsp.io.npy` writes them, unless ``keep_dtype`` or a rank's
    float64 copy does not fit its memory (int8..int32 only: they are exact; then, with a warning, the
    integers)."""
    comm = grid.cart
    if local.dtype.kind in "iu" and not keep_dtype:
        local = _widened(comm, local, path)
    header = npy_header((layout.n, layout.n), local.dtype)
    fh = MPI.File.Open(comm, str(path), MPI.MODE_WRONLY | MPI.MODE_CREATE)
    try:
        if comm.rank == 0:
            fh.Write_at(0, header)
        dt = darray_type(layout, comm.rank, local.dtype)
        fh.Set_view(len(header), from_numpy_dtype(local.dtype), dt)
        fh.Write_all(np.ascontiguousarray(local))
        dt.Free()
    finally:
        fh.Close()


def _widened(comm, local: np.ndarray, path) -> np.ndarray:
    """``local`` as float64 with ``inf`` for the dtype's maximum, when every rank can (collective)."""
    import warnings

    from ..io.npy import UnsafeFileWarning
    from ..sizes import memory_allowed

    fits = local.dtype.itemsize <= 4 and local.size * 8 <= memory_allowed()[0]
    if comm.allreduce(bool(fits), op=MPI.LAND):
        wide = local.astype(np.float64)
        wide[local == np.iinfo(local.dtype).max] = np.inf
        return wide
    if comm.rank == 0:
        no_path = np.iinfo(local.dtype).max
        warnings.warn(f"{path}: distances kept as {local.dtype.name}, not float64 with inf (a rank's float64 "
                      f"copy would not fit, or int64 may not be exact): 'no path' is {no_path}; mask it before "
                      "any arithmetic", UnsafeFileWarning, stacklevel=3)
    return local


def _format_segments(layout, coords, local, format_rows):
    """Format every (local row, local tile column) piece.

    Returns (list of uint8 arrays, one per local tile column, each holding
    that column's pieces row after row; lengths array rows x tile-columns)."""
    tiles = list(layout.local_tiles(coords[1], 1))
    rows = local.shape[0]
    texts, lengths = [], np.zeros((rows, len(tiles)), dtype=np.int64)
    for jl, tj in enumerate(tiles):
        c0, c1 = layout.local_range(tj, 1)
        if rows == 0:
            texts.append(np.zeros(0, dtype=np.uint8))
            continue
        raw = np.frombuffer(format_rows(local[:, c0:c1]), dtype=np.uint8).copy()
        ends = np.flatnonzero(raw == ord("\n"))
        if len(ends) != rows:
            raise RuntimeError(f"format_rows gave {len(ends)} lines for {rows} rows")
        if tj != layout.tiles - 1:  # a piece inside a line ends with the separator, not a newline
            raw[ends] = ord(" ")
        lengths[:, jl] = np.diff(np.concatenate([[-1], ends]))
        texts.append(raw)
    return texts, lengths


def _piece_offsets(grid, layout, lengths):
    """File offset of every local piece (rows x local tile columns), collectively."""
    pr, pc = grid.coords
    rows = lengths.shape[0]
    # all pieces of my rows, across my process row, in global tile-column order
    everyone = grid.row_comm.allgather(lengths)
    full = np.zeros((rows, layout.tiles), dtype=np.int64)
    for q, part in enumerate(everyone):
        full[:, layout.local_tiles(q, 1)] = part
    row_len = full.sum(axis=1)
    before_in_row = np.cumsum(full, axis=1) - full
    # row starts: every process row's row lengths, placed in global row order
    all_rows = grid.col_comm.allgather((layout.global_indices(pr, 0), row_len))
    global_len = np.zeros(layout.n, dtype=np.int64)
    for idx, lens in all_rows:
        global_len[idx] = lens
    row_start = np.cumsum(global_len) - global_len
    mine = list(layout.local_tiles(pc, 1))
    starts = row_start[layout.global_indices(pr, 0)]
    return starts[:, None] + before_in_row[:, mine]


def write_text(grid, layout: BlockCyclic, local: np.ndarray, path, format_rows) -> None:
    """Collective: write the homework text of the distributed matrix into one file at ``path``.

    ``local`` holds final distances (unreachable as ``exactness.unreachable_value``);
    ``format_rows(rows_2d) -> bytes`` formats each row as one line."""
    comm = grid.cart
    texts, lengths = _format_segments(layout, grid.coords, local, format_rows)
    offsets = _piece_offsets(grid, layout, lengths)
    # pieces in file order (row, then tile column) -> source positions in `texts`
    col_start = np.concatenate([[0], np.cumsum([len(t) for t in texts])]) if texts else np.zeros(1, np.int64)
    src_in_col = np.cumsum(lengths, axis=0) - lengths  # start of each piece inside its column text
    src = (col_start[:-1][None, :] + src_in_col).ravel()
    lens = lengths.ravel()
    disp = offsets.ravel()
    blob = np.concatenate(texts) if texts else np.zeros(0, dtype=np.uint8)

    # merge pieces adjacent in the file into one view block (whole rows when Pc == 1)
    keep = lens > 0
    lens, disp, src = lens[keep], disp[keep], src[keep]
    new_block = np.ones(len(disp), dtype=bool)
    new_block[1:] = disp[1:] != disp[:-1] + lens[:-1]
    blk_disp = disp[new_block]
    blk_len = np.bincount(np.cumsum(new_block) - 1, weights=lens).astype(np.int64)

    fh = MPI.File.Open(comm, str(path), MPI.MODE_WRONLY | MPI.MODE_CREATE)
    try:
        if len(blk_disp):
            view = MPI.BYTE.Create_hindexed([int(x) for x in blk_len], [int(x) for x in blk_disp]).Commit()
        else:
            view = MPI.BYTE.Create_contiguous(0).Commit()
        fh.Set_view(0, MPI.BYTE, view)
        # pieces go out in file order, CHUNK bytes at a time (rearranged from column order)
        piece_end = np.cumsum(lens)
        total_mine = int(piece_end[-1]) if len(piece_end) else 0
        chunks = -(-total_mine // TEXT_CHUNK_BYTES) if total_mine else 0
        rounds = comm.allreduce(chunks, op=MPI.MAX)
        first = 0
        for c in range(rounds):
            if first < len(lens):
                limit = (c + 1) * TEXT_CHUNK_BYTES
                last = max(first + 1, int(np.searchsorted(piece_end, limit, side="right")))
                sel_len, sel_src = lens[first:last], src[first:last]
                start = int(piece_end[first - 1]) if first else 0
                index = np.repeat(sel_src - (np.cumsum(sel_len) - sel_len), sel_len) + np.arange(sel_len.sum())
                out = blob[index]
                first = last
            else:
                start, out = total_mine, np.zeros(0, dtype=np.uint8)
            fh.Write_at_all(start, out)
        view.Free()
    finally:
        fh.Close()


def finalize_file(comm, tmp: Path, target: Path) -> None:
    """Once every rank has written, rank 0 renames the temporary file over ``target``."""
    comm.Barrier()
    if comm.rank == 0:
        os.replace(tmp, target)
    comm.Barrier()
