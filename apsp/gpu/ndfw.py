"""Nested-dissection Floyd-Warshall on the GPU: the engine over `apsp.gpu.minplus` and the solver.

The layout matrix lives on the device, its size rounded up to `ALIGN` with
isolated vertices that belong to no tree node. A tree node's rounds
(`apsp.dissection`) run one of three ways:

* the root (its ranges are the whole layout): in place on the whole matrix,
  each round one pivot closure, two panel products and one phase-3 product,
  all of whole `ALIGN` multiples (the kernels' unmasked path);
* otherwise the ``ranges x ranges`` entries are gathered into a square buffer
  (also rounded up to `ALIGN` with isolated vertices) with the node's pivots
  first, blocked Floyd-Warshall with only those pivots runs on it
  (`apsp.gpu.rounds.fw_inplace` with ``n_pivots``, look-ahead included), and
  the buffer is scattered back. Every round of the node only reads and writes
  those entries, so this is the same computation; gather and scatter cost two
  passes over the buffer against one product pass per round;
* when that buffer does not fit the memory budget, in place range pair by range pair.

Nodes of one level of the tree (`Dissection.levels`) are independent; where a level
has many small nodes (the leaves: 64 of them take 15 rounds each on a 350 x 350
grid), they run as one batch instead: every node's entries gathered into one
slice of a batch x w x w buffer by one launch, `apsp.gpu.rounds.fw_batched` (one
launch per phase per round for the whole batch), and one launch scattering the
slices back with an entry-wise minimum where the nodes' ranges meet. Each slice
puts the node's pivots first, then the rest of its subtree, then one slot per
ancestor depth, the same slots in every slice, so an ancestor's vertex has one
position in all of them and the scatter's programs never write the same entry
(each loops over the batch for its own positions). Batching trades launches for
the work of the common shape; `batches` weighs the two.

Distances come back in vertex order, row band by row band (gathered on the
device, copied by several threads), so the device never holds a second n x n matrix.
"""
from __future__ import annotations

from itertools import accumulate, product

import numpy as np
import torch
import triton
import triton.language as tl

from .. import exactness
from ..dissection import DEFAULTS, ScheduleEngine, solve_with
from ..engine import Finalized, NdGpuBudget, SolveOptions, SolveOutput
from .footprint import GPU_ALIGN, GPU_CHECK_CHUNK
from .fw import check_and_mark, finished
from .minplus import dtype_name, inf_for, minplus_update
from .rounds import TorchRuntime, close_block, fw_batched, fw_inplace
from .transfer import PARALLEL_BYTES, DeviceBands, HostResult, PinnedPieces, to_host

#: pivot round width (the K of every product, as dense GPU FW's block) and leaf size (tile products
#: counted with benchmarks/nd_counts.py: leaves of 2-4k are best at 128)
DEFAULT_TILE, DEFAULT_LEAF = DEFAULTS["gpu"]
#: matrix and node buffers are rounded up to this with isolated vertices (`apsp.gpu.footprint.GPU_ALIGN`).
#: Tree nodes themselves are not padded: padding them to 128 costs 33% more work on a 350 x 350
#: grid (benchmarks/nd_counts.py --pad)
ALIGN = GPU_ALIGN


def placed(ranges) -> list[tuple[int, int, int]]:
    """``(lo, hi, at)`` of each range, ``at`` its start when the ranges are put side by side."""
    return [(lo, hi, at) for (lo, hi), at in zip(ranges, accumulate((hi - lo for lo, hi in ranges), initial=0))]


class Engine(ScheduleEngine):
    """The GPU engine: the layout matrix on the device, rounded up to ``align`` with isolated
    vertices (``load``); a node's rounds run in place or on a gathered buffer (``pivots``). ``finalize``
    checks for cut-off distances (``cutoff_band``) and recovers paths (``paths_for``: ``(graph, opts)``).
    ``budget``: the plan's gather budget and batch model (`apsp.engine.NdGpuBudget`)."""

    kind = "gpu"
    sync_for_progress = True
    #: the root's rounds run in place on the whole matrix
    whole_in_place = True

    def __init__(self, nd, dtype, tile: int, negative: bool, device, budget: NdGpuBudget, cutoff_band=None,
                 paths_for=None, result: HostResult | None = None):
        super().__init__(nd, negative)
        self.budget = budget
        self.gather_bytes = budget.gather_bytes
        self.dtype = np.dtype(dtype)
        self.tile = tile
        self.rt = TorchRuntime(device)
        self.device, self.cuda = self.rt.device, self.rt.cuda  # the interpreter: small alignment, still exercised
        self.align = budget.align  # the plan's (`apsp.gpu.footprint.nd_aligned`)
        self.size = nd.size  #: layout size (d may be larger: isolated vertices)
        self.d: torch.Tensor | None = None  # the layout matrix, from load(); dropped by finalize()
        self.col_t: torch.Tensor | None = None  # a tile x size column panel buffer, from load()
        self.gathered = 0  #: nodes run on gathered buffers (reported)
        self.batched = 0  #: nodes run in batches (reported)
        self.cutoff_band, self.paths_for = cutoff_band, paths_for
        self.result = result  #: the result's host array, its pages faulted in while the rounds run

    def load(self, graph) -> None:
        self.sync()
        self.d = d = layout_matrix(graph, self.nd, self.dtype, self.device, self.align)
        self.col_t = torch.empty((self.tile, d.shape[0]), dtype=d.dtype, device=d.device)
        self.sync()

    def sync(self) -> None:
        self.rt.sync()

    def layout_diagonal(self) -> np.ndarray:
        assert self.d is not None
        diag = torch.diagonal(self.d)
        if not bool((diag < 0).any()):  # the check after every node: one flag, not the diagonal, to the host
            return np.zeros(0, dtype=self.dtype)
        return diag.cpu().numpy()

    def pivots(self, a, b, ranges):
        width = -(-sum(hi - lo for lo, hi in ranges) // self.align) * self.align
        if ranges == [(0, self.size)] and self.whole_in_place:
            self._in_place(self.d, a, b, [(0, self.d.shape[0])])
        elif width * width * self.d.element_size() <= self.gather_bytes:
            self._gathered(a, b, ranges, width)
        else:
            self._too_large(a, b, ranges)

    def _too_large(self, a, b, ranges):
        """A node whose gathered buffer does not fit: in place range pair by range pair."""
        self._in_place(self.d, a, b, ranges)

    def rounds(self, block: int, start_vertex: int = 0):
        """Level by level (`Dissection.levels`), each level in the batches `batches` chooses."""
        if start_vertex:
            raise ValueError("nested-dissection rounds do not resume part-way")
        nd, done = self.nd, 0
        depth = nd.depths()
        for level in nd.levels():
            for nodes in self.batches(level, depth):
                if len(nodes) == 1:
                    t = nodes[0]
                    self.pivots(int(nd.own_start[t]), int(nd.end[t]), nd.reach(t))
                else:
                    self._batched(nodes, depth)
                done += int(sum(nd.end[t] - nd.own_start[t] for t in nodes))
                yield done
        self.sync()

    def batches(self, level, depth) -> list[list[int]]:
        """``level``'s nodes split into batches (lists of nodes; one node: run on its own): as many
        as the memory budget allows per batch, and a batch only where the launches it saves
        (the budget's ``launch_seconds`` each) outweigh the extra updates of its common shape (at its
        ``batch_rate``)."""
        nd, item = self.nd, self.dtype.itemsize
        if len(level) < 2 or any(nd.reach(t) == [(0, self.size)] for t in level):
            return [[t] for t in level]
        width = batch_layout(nd, level, depth, self.align)[1]
        per_node = width * width * item + self.tile * width * item
        size = max(1, min(len(level), self.gather_bytes // per_node))
        out = []
        for i in range(0, len(level), size):
            nodes = level[i:i + size]
            if len(nodes) > 1 and self._batch_pays(nodes, depth):
                out.append(nodes)
            else:
                out += [[t] for t in nodes]
        return out

    def _batch_pays(self, nodes, depth) -> bool:
        nd, tile = self.nd, self.tile
        pivots, width, _ = batch_layout(nd, nodes, depth, self.align)
        alone_updates = alone_launches = 0
        for t in nodes:
            ranges, own = nd.reach(t), int(nd.end[t] - nd.own_start[t])
            reach = sum(hi - lo for lo, hi in ranges)
            alone_updates += reach * reach * own
            # ~6 launches a round (look-ahead), plus the gather's and scatter's copies
            alone_launches += 6 * -(-own // tile) + 2 * (len(ranges) + 2) ** 2
        batch_updates = len(nodes) * width * width * pivots
        batch_launches = 4 * -(-pivots // tile) + 2
        model = self.budget
        return ((batch_updates - alone_updates) / model.batch_rate
                < (alone_launches - batch_launches) * model.launch_seconds)

    def _batched(self, nodes, depth) -> None:
        """The rounds of ``nodes`` (one level) as one batch: gather, `fw_batched`, scatter."""
        assert self.d is not None
        pivots, width, index = batch_layout(self.nd, nodes, depth, self.align)
        index = torch.from_numpy(index).to(self.device)
        buf = torch.empty((len(nodes), width, width), dtype=self.d.dtype, device=self.device)
        block = 64 if self.cuda else 16
        grid = (triton.cdiv(width, block) ** 2, len(nodes))
        warps = 4 if self.cuda else 1
        _gather_kernel[grid](buf, self.d, index, width, self.d.stride(0), buf.stride(0), buf.stride(1),
                             inf_for(buf), BLOCK=block, num_warps=warps)
        fw_batched(buf, self.tile, self.negative, n_pivots=pivots)
        _scatter_min_kernel[(grid[0],)](self.d, buf, index, len(nodes), width, self.d.stride(0), buf.stride(0),
                                        buf.stride(1), BLOCK=block, num_warps=warps)
        self.batched += len(nodes)

    def _in_place(self, d, a, b, ranges):
        """Rounds on ``d`` itself: products between every pair of ranges."""
        for k0 in range(a, b, self.tile):
            k1 = min(k0 + self.tile, b)
            pivot = d[k0:k1, k0:k1]
            close_block(pivot, self.negative)
            col_t = self.col_t[:k1 - k0]
            places = placed(ranges)
            for lo, hi, at in places:
                row = d[k0:k1, lo:hi]
                minplus_update(row, pivot, row, self.negative)
                col = d[lo:hi, k0:k1]
                minplus_update(col, col, pivot, self.negative, out2=col_t[:, at:at + hi - lo].t())
            # phase 3 (pivot rows and columns again: P* (x) R* = R*, the same values)
            for (lo_i, hi_i, at_i), (lo_j, hi_j, _) in product(places, repeat=2):
                minplus_update(d[lo_i:hi_i, lo_j:hi_j], col_t[:, at_i:at_i + hi_i - lo_i].t(),
                               d[k0:k1, lo_j:hi_j], self.negative)

    @staticmethod
    def _pieces(a, b, ranges) -> list[tuple[int, int]]:
        """A node's layout ranges with its pivots ``a:b`` first, the rest in order."""
        pieces = [(a, b)]
        for lo, hi in ranges:
            if lo <= a and b <= hi:  # the range around the pivots: what is left of it on either side
                pieces += [(start, stop) for start, stop in ((lo, a), (b, hi)) if stop > start]
            else:
                pieces.append((lo, hi))
        return pieces

    def _node_buffer(self, width: int, used: int) -> torch.Tensor:
        """A ``width x width`` device buffer whose positions from ``used`` on are isolated vertices."""
        assert self.d is not None
        buf = torch.empty((width, width), dtype=self.d.dtype, device=self.device)
        if used < width:
            buf[used:].fill_(inf_for(buf))
            buf[:used, used:].fill_(inf_for(buf))
            torch.diagonal(buf)[used:].fill_(0)
        return buf

    def _gathered(self, a, b, ranges, width):
        """The node's ranges gathered into one buffer, pivots first; dense rounds on it; scattered back."""
        pieces = self._pieces(a, b, ranges)
        used = sum(hi - lo for lo, hi in pieces)
        buf = self._node_buffer(width, used)
        self._node_copy(buf[:used, :used], pieces, gather=True)
        fw_inplace(buf, self.tile, self.negative, n_pivots=b - a, col_buffer=self.col_t)
        self._node_copy(buf[:used, :used], pieces, gather=False)
        self.gathered += 1

    def _node_copy(self, buf, pieces, gather: bool) -> None:
        """The ``pieces x pieces`` entries of the layout matrix into the node buffer ``buf`` (the pieces
        side by side; ``gather``), or back."""
        assert self.d is not None
        for (lo_i, hi_i, at_i), (lo_j, hi_j, at_j) in product(placed(pieces), repeat=2):
            there, here = self.d[lo_i:hi_i, lo_j:hi_j], buf[at_i:at_i + hi_i - lo_i, at_j:at_j + hi_j - lo_j]
            dst, src = (here, there) if gather else (there, here)
            dst.copy_(src)

    def finalize(self) -> Finalized:
        """The result in vertex order: the cut-off check on the device first (no path recovery when
        a retry will redo it)."""
        d, dt = self.d, self.dtype
        assert d is not None
        suspect = None
        # the public layer's cut-off check (apsp.exactness), on the device: the layout is a permutation
        # of the vertices plus isolated padding, whose entries are 0 and INF
        if self.cutoff_band is not None and d.device.type == self.device.type:  # one kernel pass
            suspect = check_and_mark(self.rt, d, self.negative, self.cutoff_band, mark=False)
        elif self.cutoff_band is not None:  # a host matrix (`HostEngine`)
            suspect = exactness.cutoff_suspected(d, self.cutoff_band, chunk=GPU_CHECK_CHUNK)
        if self.paths_for is not None and not suspect:
            pos = torch.from_numpy(self.nd.position).to(self.device)
            work = d.index_select(0, pos).index_select(1, pos)  # vertex order (paths need it whole)
            self.d = d = None
            return finished(self.rt, work, self.negative, self.paths_for, suspect)
        limit = None if dt.kind == "f" else exactness.reachable_limit(dt, self.negative)
        unreachable = int(exactness.unreachable_value(dt)) if limit is not None else None
        return Finalized(unpermuted_to_host(d, self.nd.position, limit, unreachable, device=self.device,
                                            result=self.result), cutoff_suspected=suspect)


class HostEngine(Engine):
    """The GPU engine for a layout matrix larger than the card: the matrix lives in host memory
    (a CPU tensor) and streams through the GPU node by node, in postorder.

    A node whose ``ranges x ranges`` entries fit ``budget`` bytes runs as the in-core engine's
    gathered nodes do (`Engine._gathered`, its copies now host to device and back). A larger one
    (the top separators, whose ranges span most of the layout) runs its pivots as one round of
    blocked Floyd-Warshall with the whole separator as the pivot block: close it, update its row
    and column panels (``p x w`` and ``w x p``, small: ``p`` is a separator) on the device, then
    stream the ``ranges x ranges`` entries through the device in row stripes, each updated by one
    product of the panels. Blocked Floyd-Warshall is exact for any block size, so the result
    equals the in-core engine's. Distances only (paths need the whole matrix on the device).
    """

    def __init__(self, nd, dtype, tile: int, negative: bool, device, budget: NdGpuBudget, cutoff_band=None):
        super().__init__(nd, dtype, tile, negative, device, budget, cutoff_band)
        self.streamed = 0  #: nodes streamed in row stripes (reported)
        self.pinned: PinnedPieces | None = None  #: the host copies' pinned buffers (a GPU only)

    def load(self, graph) -> None:
        # not rounded up (the device buffers are): with unpadded tree nodes the host matrix is n x n,
        # so `finalize` un-permutes it in place and RAM holds one matrix, not the layout and the result
        self.d = layout_matrix(graph, self.nd, self.dtype, torch.device("cpu"), 1)
        self.col_t = torch.empty((self.tile, self.d.shape[0]), dtype=self.d.dtype, device=self.device)

    def finalize(self) -> Finalized:
        """The host matrix un-permuted in place into vertex order (`apsp.cpu.ndfw.unpermute_inplace`)
        where it is n x n (tree nodes unpadded), after the cut-off check; else `Engine.finalize`'s copy."""
        d = self.d
        assert d is not None
        if d.shape[0] != self.nd.n:
            return super().finalize()
        from ..cpu.ndfw import unpermute_inplace

        suspect = None
        if self.cutoff_band is not None:
            suspect = exactness.cutoff_suspected(d, self.cutoff_band, chunk=GPU_CHECK_CHUNK)
        dt = self.dtype
        limit = None if dt.kind == "f" else exactness.reachable_limit(dt, self.negative)
        unreachable = exactness.unreachable_value(dt) if limit is not None else 0
        host = d.numpy()
        self.d = None
        return Finalized(unpermute_inplace(host, self.nd.position, limit, unreachable), cutoff_suspected=suspect)

    rounds = ScheduleEngine.rounds  # node by node: a level's batch would not fit either
    whole_in_place = False  # the root streams too

    def _rows_to_device(self, r0: int, r1: int, ranges) -> torch.Tensor:
        """Host rows ``r0:r1`` over the column ``ranges``, side by side, on the device: through the
        pinned buffers on a GPU (`PinnedPieces`), else one contiguous host copy and one transfer."""
        assert self.d is not None
        width = sum(c1 - c0 for c0, c1 in ranges)
        pinned = self._pinned(width)
        if pinned is not None:
            out = torch.empty((r1 - r0, width), dtype=self.d.dtype, device=self.device)
            pinned.to_device(self.d, r0, r1, ranges, out)
            return out
        return torch.cat([self.d[r0:r1, c0:c1] for c0, c1 in ranges], 1).to(self.device)

    def _rows_to_host(self, rows: torch.Tensor, r0: int, ranges) -> None:
        """The inverse of `_rows_to_device`: a transfer, then the pieces into their places."""
        assert self.d is not None
        pinned = self._pinned(rows.shape[1])
        if pinned is not None:
            pinned.to_host(rows, self.d, r0, ranges)
            return
        rows = rows.cpu()
        for c0, c1, c in placed(ranges):
            self.d[r0:r0 + rows.shape[0], c0:c1].copy_(rows[:, c:c + c1 - c0])

    def _pinned(self, width: int) -> PinnedPieces | None:
        """The pinned buffers (made on first use) where copies of rows ``width`` wide go through them:
        on a GPU, rows narrower than a buffer."""
        assert self.d is not None
        if not self.cuda:
            return None
        if self.pinned is None:
            self.pinned = PinnedPieces(self.device)
        return self.pinned if self.pinned.fits(width, self.d.dtype) else None

    def _node_copy(self, buf, pieces, gather: bool) -> None:
        """`Engine._node_copy` between the host matrix and the device buffer, row piece by row piece."""
        for lo, hi, row in placed(pieces):
            if gather:
                buf[row:row + hi - lo] = self._rows_to_device(lo, hi, pieces)
            else:
                self._rows_to_host(buf[row:row + hi - lo], lo, pieces)

    def _too_large(self, a, b, ranges):
        """The pivots as one round of blocked FW, the ranges streamed in row stripes (see above)."""
        d, dev, neg = self.d, self.device, self.negative
        width = sum(hi - lo for lo, hi in ranges)
        pivot = d[a:b, a:b].to(dev)
        close_block(pivot, neg)
        row = self._rows_to_device(a, b, ranges)
        col = torch.cat([d[lo:hi, a:b] for lo, hi in ranges], 0).to(dev)
        minplus_update(row, pivot, row, neg)  # phase 2: R = min(R, P* (x) R), C = min(C, C (x) P*)
        minplus_update(col, col, pivot, neg)
        # phase 3 over every stripe of rows of the ranges: D = min(D, C (x) R), R and C final
        left = self.gather_bytes - (row.numel() + col.numel()) * d.element_size()
        height = max(1, min(width, left // (2 * width * d.element_size())))
        for lo, hi, at in placed(ranges):
            for r0 in range(lo, hi, height):
                r1 = min(r0 + height, hi)
                stripe = self._rows_to_device(r0, r1, ranges)
                minplus_update(stripe, col[at + r0 - lo:at + r1 - lo], row, neg)
                self._rows_to_host(stripe, r0, ranges)
        self.streamed += 1


def batch_layout(nd, nodes, depth, align: int):
    """Where each of ``nodes`` (one level) puts its entries in a batch: ``(pivots, width, index)``,
    ``index[i, p]`` the layout position at slice ``i``'s position ``p`` (-1: an isolated padding
    vertex). Positions ``0:pivots`` hold each node's own vertices, then the rest of its subtree,
    then one slot per ancestor depth (as wide as the level's widest separator at that depth),
    the width rounded up to ``align``."""
    own = [int(nd.end[t] - nd.own_start[t]) for t in nodes]
    below = [int(nd.own_start[t] - nd.start[t]) for t in nodes]
    chains = [list(nd.ancestors(t))[::-1] for t in nodes]  # root first: chain[k] has depth k
    slots = np.zeros(int(max(depth[t] for t in nodes)), dtype=np.int64)
    for chain in chains:
        for k, a in enumerate(chain):
            slots[k] = max(slots[k], nd.end[a] - nd.own_start[a])
    pivots, subtree = max(own), max(below)
    slot_start = pivots + subtree + np.concatenate([[0], np.cumsum(slots)[:-1]]).astype(np.int64)
    width = -(-max(pivots + subtree + int(slots.sum()), 1) // align) * align
    index = np.full((len(nodes), width), -1, dtype=np.int32)
    for i, t in enumerate(nodes):
        index[i, :own[i]] = np.arange(nd.own_start[t], nd.end[t])
        index[i, pivots:pivots + below[i]] = np.arange(nd.start[t], nd.own_start[t])
        for k, a in enumerate(chains[i]):
            index[i, slot_start[k]:slot_start[k] + nd.end[a] - nd.own_start[a]] = np.arange(nd.own_start[a], nd.end[a])
    return pivots, width, index


@triton.jit
def _gather_kernel(buf_ptr, d_ptr, index_ptr, width, stride_d, stride_bb, stride_bm, INF, BLOCK: tl.constexpr):
    # buf[b, p, q] = d[index[b, p], index[b, q]]; padding positions isolated (0 on the diagonal)
    batch = tl.program_id(1).to(tl.int64)
    tiles = tl.cdiv(width, BLOCK)
    rows = (tl.program_id(0) // tiles) * BLOCK + tl.arange(0, BLOCK)
    cols = (tl.program_id(0) % tiles) * BLOCK + tl.arange(0, BLOCK)
    row_in, col_in = rows < width, cols < width
    ri = tl.load(index_ptr + batch * width + rows, mask=row_in, other=-1).to(tl.int64)
    ci = tl.load(index_ptr + batch * width + cols, mask=col_in, other=-1).to(tl.int64)
    real = (ri >= 0)[:, None] & (ci >= 0)[None, :]
    v = tl.load(d_ptr + ri[:, None] * stride_d + ci[None, :], mask=real, other=INF)
    v = tl.where((rows[:, None] == cols[None, :]) & ~real, tl.zeros_like(v), v)
    tl.store(buf_ptr + batch * stride_bb + rows[:, None].to(tl.int64) * stride_bm + cols[None, :], v,
             mask=row_in[:, None] & col_in[None, :])


@triton.jit
def _scatter_min_kernel(d_ptr, buf_ptr, index_ptr, batches, width, stride_d, stride_bb, stride_bm,
                        BLOCK: tl.constexpr):
    # d[index[b, p], index[b, q]] = min(itself, buf[b, p, q]) for every b in turn: a position maps to
    # the same entry in every slice or to entries no other slice has, so only this program writes it
    tiles = tl.cdiv(width, BLOCK)
    rows = (tl.program_id(0) // tiles) * BLOCK + tl.arange(0, BLOCK)
    cols = (tl.program_id(0) % tiles) * BLOCK + tl.arange(0, BLOCK)
    row_in, col_in = rows < width, cols < width
    slice_ptrs = buf_ptr + rows[:, None].to(tl.int64) * stride_bm + cols[None, :]
    for _ in range(batches):  # pointers step slice by slice (64-bit, whatever the batch's size)
        ri = tl.load(index_ptr + rows, mask=row_in, other=-1).to(tl.int64)
        ci = tl.load(index_ptr + cols, mask=col_in, other=-1).to(tl.int64)
        real = (ri >= 0)[:, None] & (ci >= 0)[None, :]
        v = tl.load(slice_ptrs, mask=real)
        d_ptrs = d_ptr + ri[:, None] * stride_d + ci[None, :]
        tl.store(d_ptrs, tl.minimum(tl.load(d_ptrs, mask=real), v), mask=real)
        tl.debug_barrier()  # the next slice's loads see this one's stores
        index_ptr += width
        slice_ptrs += stride_bb


def layout_matrix(graph, nd, dtype: np.dtype, device, align: int = 1) -> torch.Tensor:
    """The start matrix in layout order on the device, rounded up to ``align`` (padding isolated)."""
    from ..dissection import layout_edges

    size = -(-max(nd.size, 1) // align) * align
    d = torch.empty((size, size), dtype=getattr(torch, np.dtype(dtype).name), device=device)
    d.fill_(inf_for(d))
    rows, cols, w = layout_edges(graph, nd)
    r, c = (torch.from_numpy(a).to(device) for a in (rows, cols))
    d[r, c] = torch.from_numpy(w.astype(dtype)).to(device)
    diag = torch.diagonal(d)
    diag.copy_(torch.clamp(diag, max=0))
    padding = torch.from_numpy(np.r_[np.flatnonzero(nd.order < 0), np.arange(nd.size, size)]).to(device)
    diag[padding] = 0
    return d


def unpermuted_to_host(d: torch.Tensor, position: np.ndarray, limit, unreachable, device=None,
                       result: HostResult | None = None) -> np.ndarray:
    """``out[i, j] = d[position[i], position[j]]`` on the host, entries above ``limit`` set to
    ``unreachable`` (integer dtypes): one `apsp.gpu.transfer.to_host` pipeline through the whole
    result (pinned staging buffers drained by threads), each staging band's rows gathered into
    vertex order on the copying stream just before its copy (`DeviceBands`), so the gathers hide
    behind the copies and the device never holds a second n x n matrix. ``d`` in host memory
    (`HostEngine`): each band's whole rows go to ``device`` first. Into ``result``'s array when given
    (``n x n``, ``d``'s dtype), band by band as its touchers let go."""
    n = len(position)
    out = np.empty((n, n), dtype=dtype_name(d.dtype)) if result is None else result.array
    assert out is not None, "a closed HostResult"
    if n == 0:
        return out
    device = d.device if device is None else device
    rows_at = torch.from_numpy(position).to(d.device)
    pos = rows_at.to(device)

    def band(i0: int, i1: int) -> torch.Tensor:
        rows = d.index_select(0, rows_at[i0:i1]).to(device).index_select(1, pos)
        if limit is not None:
            rows.masked_fill_(rows > limit, unreachable)
        return rows

    bands = DeviceBands((n, n), d.dtype, torch.device(device), band)
    return to_host(bands, out=out, claim=None if result is None else result.rows)


def solve_streamed(graph, opts: SolveOptions) -> SolveOutput:
    """nd-fw with its layout matrix in host memory, streamed through the GPU (`HostEngine`),
    registered as ``("nd-fw-out-of-core", "gpu")``: what the memory plan chooses when the matrix
    does not fit the card (``opts.nd_gpu``: the device bytes of its buffers and stripes)."""
    return solve(graph, opts, streamed=True)


def prefaulted_result(n: int, dtype: np.dtype, device) -> HostResult | None:
    """The in-core engine's ``n x n`` result on the host, made before the rounds, so that its pages
    fault in on other threads while they run (the copy into a fresh 60 GB array waits on its page
    faults about as long as on the transfer); None for a result the copy's threads fault in quickly,
    or a device that is not a GPU."""
    if n * n * dtype.itemsize >= PARALLEL_BYTES and TorchRuntime(device).cuda:
        return HostResult((n, n), dtype)
    return None


def solve(graph, opts: SolveOptions, streamed: bool = False) -> SolveOutput:
    """Nested-dissection Floyd-Warshall on the GPU, registered as ``("nd-fw", "gpu")`` (``streamed``:
    `HostEngine`, for `solve_streamed`).

    ``opts.block_size`` is the tile (default `DEFAULT_TILE`), ``leaf_size=`` the
    dissection's leaf size, ``opts.nd_gpu`` the plan's gather budget and batch model.
    Paths are recovered from the distances (`apsp.gpu.paths`).
    """
    if opts.nd_gpu is None:
        raise ValueError("GPU nd-fw runs a plan's step: opts.nd_gpu (apsp.costs.nd_gpu_budget) is not set")
    paths = opts.successors or opts.predecessors
    result = None if streamed or paths else prefaulted_result(graph.n, np.dtype(opts.dtype), opts.device)

    def make_engine(nd, tile):
        args = (nd, opts.dtype, tile, graph.has_negative_weights, opts.device, opts.nd_gpu)
        if not streamed:
            return Engine(*args, opts.cutoff_band, (graph, opts) if paths else None, result)
        return HostEngine(*args, opts.cutoff_band)

    try:
        out, engine = solve_with(graph, opts, "gpu", make_engine, ("h2d", "compute", "d2h"))
    finally:
        if result is not None:
            result.close()
    out.info.update(engine.rt.info(), gathered_nodes=engine.gathered, batched_nodes=engine.batched)
    if result is not None and result.prefaulted is not None:
        out.info["result_prefaulted"] = round(result.prefaulted, 3)
    if streamed:
        out.info.update(streamed_nodes=engine.streamed, out_of_core=True)
    return out
