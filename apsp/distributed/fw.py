"""The distributed blocked Floyd-Warshall rounds, with one round of look-ahead.

Round ``K`` on a ``Pr x Pc`` grid (tile ``(I, J)`` on rank ``(I % Pr, J % Pc)``):

1. the owner of tile ``(K, K)`` closes it (phase 1) and sends it along its
   process row and process column;
2. the ranks of process row ``K % Pr`` update their part of the pivot row
   panel ``R = min(R, P (x) R)`` in place; the ranks of process column
   ``K % Pc`` update their part of the pivot column panel ``C = min(C, C (x) P)``
   (phase 2);
3. ``R`` is broadcast down each process column and ``C`` along each process
   row (nonblocking ``Ibcast``), and every rank updates all its other tiles with
   ``D = min(D, C (x) R)`` (phase 3).

Look-ahead: before the bulk of round ``K``'s phase 3, each rank first updates
its part of tile row and tile column ``K + 1``, then round ``K + 1``'s phases
1-2 run and its panel broadcasts start, so they travel while the rest of round
``K``'s phase 3 computes (polled between row chunks so MPI makes progress).

Kernel calls are few and large: phase 3 is one ``minplus_update`` per run of
contiguous local rows, over the FULL local width (the pivot column is then
restored from its panel, which is exact), so the target is always a
C-contiguous block of rows.

Every value computed is the same min over the same sums as in the
single-process blocked solve, so results are identical to it.
"""
from __future__ import annotations

from mpi4py import MPI

from .faults import maybe_inject
from .layout import BlockCyclic, complement, split_ranges


def solve_layout(layout: BlockCyclic, engine) -> BlockCyclic:
    """The layout ``engine`` solves on. GPU engines solve whole tiles only: the thin last tile is
    padded with unreachable vertices, so every product has tile-multiple shapes and aligned rows
    (unmasked, vectorised loads; a ragged n = 46341 solved 40% slower on an H200, 2026-11-22).
    The real entries keep their local positions: they are ``d[:rows, :cols]`` of the padded matrix."""
    return layout.whole_tiles() if engine.pads_tiles else layout


class DistributedFW:
    """Runs blocked FW on this rank's local matrix ``d`` (in place), collectively over ``grid``.

    Parameters
    ----------
    grid : ProcessGrid
    layout : BlockCyclic
    engine : CPUTiles or GPUTiles (`apsp.distributed.local`): the tile kernels, which know the
        dtype and whether weights may be negative (kernels clamp; see `apsp.exactness`)
    d : local matrix (engine array), C-contiguous, ``layout.local_shape(grid.coords)``
    timer : StageTimer
    poll_pieces : int
        Chunks of the deferred phase-3 update, between which pending broadcasts are polled.
    lookahead : bool
        Overlap round k+1's panel broadcasts with round k's update (default). False
        runs the rounds one after the other, for measuring what look-ahead gains.
    """

    def __init__(self, grid, layout: BlockCyclic, engine, d, timer, poll_pieces: int = 4,
                 lookahead: bool = True):
        self.grid, self.lay, self.eng, self.d = grid, layout, engine, d
        self.lookahead = bool(lookahead)
        self.timer = timer
        self.poll_pieces = max(1, int(poll_pieces))
        self.pr, self.pc = grid.coords
        self.Pr, self.Pc = grid.shape
        self.rows, self.cols = layout.local_shape(grid.coords)
        if tuple(d.shape) != (self.rows, self.cols):
            raise ValueError(f"local matrix has shape {tuple(d.shape)}, layout says {(self.rows, self.cols)}")
        b = layout.block
        with timer("copy"):
            # flat buffers: a thinner last tile uses a prefix, still contiguous
            self._cbuf = [engine.empty((self.rows * b,)) for _ in range(2)]
            self._rbuf = [engine.empty((b * self.cols,)) for _ in range(2)]
            self._pbuf = engine.empty((b * b,))
            if engine.staged:
                self._hc = [engine.host_empty((self.rows * b,)) for _ in range(2)]
                self._hr = [engine.host_empty((b * self.cols,)) for _ in range(2)]
                self._hp = engine.host_empty((b * b,))
        self._pending = None  # (requests, staged copies to finish)

    @staticmethod
    def bytes_needed(layout: BlockCyclic, coords, dtype) -> int:
        """Engine memory of one rank: its local matrix plus the panel buffers."""
        import numpy as np

        rows, cols = layout.local_shape(coords)
        b = layout.block
        return (rows * cols + 2 * rows * b + 2 * b * cols + b * b) * np.dtype(dtype).itemsize

    # -- geometry of round K -------------------------------------------------
    def _rows_of(self, k):
        """Local rows of tile row ``k``, None where this rank's process row holds none of it."""
        return self.lay.local_range(k, 0) if self.pr == k % self.Pr else None

    def _cols_of(self, k):
        return self.lay.local_range(k, 1) if self.pc == k % self.Pc else None

    def _cpanel(self, k):
        """Column panel of round ``k`` (rows x bk view). Stored transposed (bk x rows) when the
        engine's product kernel prefers it (GPU: contiguous loads of the ``a`` operand)."""
        bk = self.lay.tile_size(k)
        flat = self._cbuf[k % 2][: self.rows * bk]
        if self.eng.transposed_col_panels:
            return flat.reshape(bk, self.rows).T
        return flat.reshape(self.rows, bk)

    def _rpanel(self, k):
        bk = self.lay.tile_size(k)
        rows = self._rows_of(k)
        if rows is not None:
            return self.d[rows[0]:rows[1], :]
        return self._rbuf[k % 2][: bk * self.cols].reshape(bk, self.cols)

    def _pblock(self, k, host=False):
        bk = self.lay.tile_size(k)
        buf = self._hp if host else self._pbuf
        return buf[: bk * bk].reshape(bk, bk)

    # -- the solve -------------------------------------------------------------
    def run(self) -> None:
        nb = self.lay.tiles
        if nb == 0:
            return
        fault_round = min(1, nb - 1)
        self._start_round(0)
        self._finish_broadcasts()
        for k in range(nb):
            if k == fault_round:
                maybe_inject("compute", self.grid.comm.rank)
            nxt = k + 1 if k + 1 < nb else None
            cp, rp = self._cpanel(k), self._rpanel(k)
            skip_rows = [self._rows_of(k)]
            if nxt is not None and self.lookahead:
                self._look_ahead(k, nxt, cp, rp)
                self._start_round(nxt)
                skip_rows.append(self._rows_of(nxt))
            self._phase3_rows(complement(self.rows, skip_rows), cp, rp, k)
            if nxt is not None:
                if not self.lookahead:
                    self._start_round(nxt, fill_column_panel=True)
                self._finish_broadcasts()

    def _update(self, c, a, b, parallel=False):
        with self.timer("compute", sync=True):
            self.eng.minplus(c, a, b, parallel=parallel)

    def _copy(self, dst, src):
        with self.timer("copy", sync=True):
            self.eng.copy(dst, src)

    def _phase3_rows(self, ranges, cp, rp, k):
        """``D[rows] = min(D[rows], C[rows] (x) R)`` over full local width (``ranges``: non-empty), polling
        MPI between chunks; then the exact pivot-column values are put back from its panel."""
        pieces = self.poll_pieces if self._pending is not None else 1
        for r0, r1 in split_ranges(ranges, pieces, minimum=self.lay.block):
            self._update(self.d[r0:r1, :], cp[r0:r1], rp, parallel=True)
            self._poll()
        cols = self._cols_of(k)
        if cols is not None:
            for r0, r1 in ranges:
                self._copy(self.d[r0:r1, cols[0]:cols[1]], cp[r0:r1])

    def _look_ahead(self, k, nxt, cp, rp):
        """Bring tile row and tile column ``nxt`` up to date with round ``k`` before the rest."""
        nrows = self._rows_of(nxt)
        if nrows is not None:
            self._phase3_rows([nrows], cp, rp, k)
        ncols = self._cols_of(nxt)
        if ncols is not None:
            c0, c1 = ncols
            ncp = self._cpanel(nxt)
            self._copy(ncp, self.d[:, c0:c1])
            rp_next = rp[:, c0:c1]
            for r0, r1 in complement(self.rows, [self._rows_of(k), nrows]):
                self._update(ncp[r0:r1], cp[r0:r1], rp_next, parallel=True)

    def _start_round(self, k, fill_column_panel=False):
        """Phases 1 and 2 of round ``k`` on the ranks concerned, then start its panel broadcasts.

        Precondition: tile row ``k`` (in ``d``) and tile column ``k`` (in its
        column panel buffer, filled by the look-ahead; in ``d`` for round 0 or
        with ``fill_column_panel``) hold every update of rounds ``< k``.
        """
        eng, d = self.eng, self.d
        krows, kcols = self._rows_of(k), self._cols_of(k)
        in_row, in_col = krows is not None, kcols is not None
        p = self._pblock(k)
        cp = self._cpanel(k)
        if in_col and (k == 0 or fill_column_panel):
            c0, c1 = kcols
            self._copy(cp, d[:, c0:c1])
        if in_row and in_col:  # phase 1 on the owner
            (r0, r1), (c0, c1) = krows, kcols
            with self.timer("compute", sync=True):
                eng.close_block(d[r0:r1, c0:c1])
            self._copy(p, d[r0:r1, c0:c1])
        for inside, comm, ranks in ((in_row, self.grid.row_comm, self.Pc),
                                    (in_col, self.grid.col_comm, self.Pr)):
            if inside and ranks > 1:  # the pivot block, blocking
                finish = []
                self._wait([self._ibcast(p, lambda: self._pblock(k, host=True), in_row and in_col, comm,
                                         k % ranks, finish)], finish)
        if in_row:  # phase 2, pivot row panel, in place in d
            r0, r1 = krows
            rp = d[r0:r1, :]
            self._update(rp, p, rp)
            if in_col:
                c0, c1 = kcols
                self._copy(d[r0:r1, c0:c1], p)
        if in_col:  # phase 2, pivot column panel, in its buffer
            if in_row:
                r0, r1 = krows
                self._copy(cp[r0:r1], p)
            for r0, r1 in complement(self.rows, [krows]):
                self._update(cp[r0:r1], cp[r0:r1], p)
        self._post_broadcasts(k)

    def _post_broadcasts(self, k):
        bk = self.lay.tile_size(k)
        requests, finish = [], []
        if self.Pr > 1:  # row panel down each process column
            requests.append(self._ibcast(
                self._rpanel(k), lambda: self._hr[k % 2][: bk * self.cols].reshape(bk, self.cols),
                self._rows_of(k) is not None, self.grid.col_comm, k % self.Pr, finish))
        if self.Pc > 1:  # column panel along each process row, as its flat storage
            requests.append(self._ibcast(
                self._cbuf[k % 2][: self.rows * bk], lambda: self._hc[k % 2][: self.rows * bk],
                self._cols_of(k) is not None, self.grid.row_comm, k % self.Pc, finish))
        self._pending = (requests, finish)

    def _ibcast(self, panel, staging, is_root, comm, root, finish):
        """Start broadcasting ``panel``; through the host buffer ``staging()`` gives when the
        engine stages copies (receivers copy back once the request completes, via ``finish``)."""
        eng = self.eng
        buf = panel
        if eng.staged:
            buf = staging()
            if is_root:
                self._copy(buf, panel)
            else:
                finish.append((panel, buf))
        mpi_buf = eng.mpi_buffer(buf) if buf is panel else eng.host_mpi(buf)
        with self.timer("comm"):
            return comm.Ibcast(mpi_buf, root=root)

    def _poll(self):
        if self._pending is not None and self._pending[0]:
            with self.timer("comm"):
                MPI.Request.Testall(self._pending[0])

    def _finish_broadcasts(self):
        self._wait(*self._pending)
        self._pending = None

    def _wait(self, requests, finish):
        """Wait for the broadcasts ``requests``; then copy the staged panels of ``finish`` into place."""
        with self.timer("comm"):
            MPI.Request.Waitall(requests)
        for panel, host in finish:
            self._copy(panel, host)
