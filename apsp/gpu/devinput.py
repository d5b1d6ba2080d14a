"""Arrays on a GPU in and out without a round trip through the host.

A dense matrix that lives on a CUDA device (a torch tensor, or any array that exports DLPack or
``__cuda_array_interface__``: CuPy, JAX, Numba, ...) is wrapped as a torch tensor without a copy
(`wrap`), its weight facts are read on the device (`dense_facts`: row chunks of torch reductions,
one synchronisation at the end) and it becomes a `DeviceGraph`: a `apsp.graph.Graph` whose weights
stay on the device. The GPU engine builds its padded start matrix from it device to device
(`fill_start`: one Triton pass that reads the input once and writes the padded matrix once), so the
only device copy beside the input is the engine's own working matrix, which Floyd-Warshall must
own (it works in place; the input is never written).

Routes that need the weights on the host (the CPU engines, nested dissection's ordering, the
out-of-core stream, the statistics' searches) get them through `DeviceGraph.host_graph`: one copy of
the matrix to the host, made once and kept, which the public layer notes in ``Result.info``.

The way back (a result to a torch tensor on a device, a tensor to numpy, the checked narrowing cast
on the device) and the sparse tensors' reading are in `apsp.gpu.tensors`, which needs torch only.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
import triton
import triton.language as tl

from .. import exactness
from ..graph import Derived, Graph
from .minplus import inf_for
from .tensors import wrap

#: entries of the matrix one chunk of `dense_facts` reads at a time (its temporaries: masks and a
#: masked copy of the chunk, some 60 MiB at most, inside the GPU headroom the plan keeps)
FACT_CHUNK = 1 << 22
#: rows x columns of one program of `fill_start`
FILL_TILE = 64
#: torch dtypes read as weights (bool as int8: the host route reads booleans as 0/1 in int8)
WEIGHT_DTYPES = (torch.bool, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64,
                 torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _checked_matrix(t: torch.Tensor) -> torch.Tensor:
    if t.dim() != 2 or t.shape[0] != t.shape[1]:
        raise ValueError(f"a dense graph must be a square 2-D array, got shape {tuple(t.shape)}")
    if t.dtype not in WEIGHT_DTYPES:
        raise ValueError(f"graph weights must be real numbers, got dtype {t.dtype}")
    if t.dtype == torch.bool:
        return t.view(torch.int8)  # the same bytes, 0/1: no copy
    return t.detach()


def edge_mask(a: torch.Tensor, null_value) -> torch.Tensor:
    """Where the rows ``a`` hold an edge: finite, and not ``null_value`` (as `Graph.from_dense`)."""
    mask = torch.isfinite(a) if a.is_floating_point() else torch.ones_like(a, dtype=torch.bool)
    if null_value is not None and not (isinstance(null_value, float) and np.isinf(null_value)):
        mask &= a != null_value
    return mask


def dense_facts(t: torch.Tensor, null_value) -> tuple:
    """``(count, max |w|, any negative, all integral, all 1)`` of the edges of the square ``t`` on its
    device, as `apsp.graph.Graph` reads them on the host (NaN means no edge in a dense matrix). Row
    chunks of `FACT_CHUNK` entries, each a few reductions that need no synchronisation; the partial
    results stay on the device until one read at the end."""
    n = t.shape[0]
    rows = max(1, FACT_CHUNK // max(n, 1))
    floating = t.is_floating_point()
    wide = torch.float64 if floating else torch.int64
    # what a non-edge counts as in the maximum and the minimum: never above or below an edge
    low_end, high_end = (-float("inf"), float("inf")) if floating else (torch.iinfo(t.dtype).min,
                                                                         torch.iinfo(t.dtype).max)
    parts = []
    for i in range(0, n, rows):
        a = t[i:i + rows]
        mask = edge_mask(a, null_value)
        none = ~mask
        whole = ((a == torch.floor(a)) | none).all() if floating else torch.ones((), dtype=torch.bool, device=a.device)
        parts.append(torch.stack([mask.sum().to(wide), torch.where(mask, a, low_end).amax().to(wide),
                                  torch.where(mask, a, high_end).amin().to(wide), whole.to(wide),
                                  ((a == 1) | none).all().to(wide)]))
    if not parts:
        return 0, 0, False, True, True
    table = torch.stack(parts).cpu()  # the one synchronisation
    count = int(table[:, 0].sum().item())
    if not count:
        return 0, 0, False, True, True
    top, low = table[:, 1].max().item(), table[:, 2].min().item()
    if floating:
        biggest: int | float = float(max(abs(top), abs(low)))
    else:
        biggest = max(int(top), -int(low))
    return count, biggest, low < 0, bool(table[:, 3].all()), bool(table[:, 4].all())


class DeviceGraph(Graph):
    """A dense graph whose weights stay on their device (`device_matrix`, a torch tensor, the
    caller's memory: never written). Its weight facts come from `dense_facts`; the conversions a
    host route asks for (`to_csr`, `fw_matrix`) go through `host_graph`, one host copy kept.
    Neither ``dense`` nor ``csr`` is set: a solver that reads the host's weights asks `host_graph`."""

    def __init__(self, n: int, device_matrix: Any, null_value: float | None, weight_facts: tuple,
                 source: str | None = None, labels: np.ndarray | None = None) -> None:
        self.n, self.csr, self.dense, self._mask, self._rule = n, None, None, None, None
        self.source, self.labels, self.null_value = source, labels, null_value
        self.derived = Derived()
        self.device_matrix = device_matrix
        (self.nnz, self.max_abs_weight, self.has_negative_weights, self.integral,
         self.unit_weights) = weight_facts
        self.float_weights = device_matrix.is_floating_point()
        self.distance_bound = exactness.distance_bound(n, self.max_abs_weight)
        self._host: Graph | None = None

    __eq__ = object.__eq__  # the tensors are compared by identity, never entry by entry
    __hash__ = object.__hash__

    @property
    def device(self) -> str:
        """The input's device, as torch names it ("cuda:0")."""
        return str(self.device_matrix.device)

    def host_graph(self) -> Graph:
        """The same graph on the host: the matrix copied once (half floats widened to float32, exactly)."""
        if self._host is None:
            a = self.device_matrix.cpu()
            if a.dtype in (torch.bfloat16, torch.float16):  # numpy lacks one, scipy's sparse both
                a = a.float()
            self._host = Graph.from_dense(a.numpy(), null_value=self.null_value, source=self.source)
            self._host.labels = self.labels
        return self._host

    @property
    def copied_to_host(self) -> bool:
        return self._host is not None

    def to_csr(self):
        return self.host_graph().to_csr()

    def fw_matrix(self, dtype, out: np.ndarray | None = None, rows: tuple[int, int] | None = None) -> np.ndarray:
        return self.host_graph().fw_matrix(dtype, out=out, rows=rows)


def device_graph(obj, null_value: float | None = 0.0, source: str | None = None) -> DeviceGraph:
    """The `DeviceGraph` of a dense square matrix on a device (anything `wrap` takes)."""
    t = _checked_matrix(wrap(obj))
    facts = dense_facts(t, null_value)
    return DeviceGraph(n=int(t.shape[0]), source=source or f"{type(obj).__module__.split('.')[0]} array on {t.device}",
                       device_matrix=t, null_value=null_value, weight_facts=facts)


@triton.jit
def _fill_start_kernel(d_ptr, src_ptr, n, n_pad, d_stride, s_stride0, s_stride1, null, inf,
                       FLOAT: tl.constexpr, HAS_NULL: tl.constexpr, BLOCK: tl.constexpr):
    # one read of the input tile, one write of the padded tile: the weight where an edge is, INF
    # elsewhere and in the padding, min(0, w_ii) on the input's diagonal (the FW start matrix)
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = (rows < n)[:, None] & (cols < n)[None, :]
    w = tl.load(src_ptr + rows.to(tl.int64)[:, None] * s_stride0 + cols.to(tl.int64)[None, :] * s_stride1,
                mask=inside, other=0)
    edge = inside
    if FLOAT:
        edge = edge & ((w - w) == 0)  # finite: inf - inf and nan - nan are nan
    if HAS_NULL:
        edge = edge & (w != null)
    out_ty = d_ptr.dtype.element_ty
    v = tl.where(edge, w.to(out_ty), inf).to(out_ty)
    diagonal = (rows[:, None] == cols[None, :]) & inside
    v = tl.where(diagonal, tl.minimum(v, 0), v).to(out_ty)
    keep = (rows < n_pad)[:, None] & (cols < n_pad)[None, :]
    tl.store(d_ptr + rows.to(tl.int64)[:, None] * d_stride + cols[None, :], v, mask=keep)


def fill_start(d: torch.Tensor, graph: DeviceGraph) -> None:
    """The padded FW start matrix ``d`` (a square tensor on the input's device) from ``graph``'s
    device matrix, device to device."""
    src = graph.device_matrix
    if src.device != d.device:
        raise ValueError(f"the graph's matrix is on {src.device}, the solve's on {d.device}")
    floating = src.is_floating_point()
    null: Any = graph.null_value
    has_null = null is not None and not (isinstance(null, float) and np.isinf(null))
    if has_null and not floating:
        has_null = float(null).is_integer()  # no integer equals a fractional null value
        null = int(null) if has_null else 0
    elif not has_null:
        null = 0
    n_pad, n = d.shape[0], graph.n
    grid = (triton.cdiv(n_pad, FILL_TILE), triton.cdiv(n_pad, FILL_TILE))
    _fill_start_kernel[grid](d, src, n, n_pad, d.stride(0), src.stride(0), src.stride(1),
                             float(null) if floating else null, inf_for(d), FLOAT=floating, HAS_NULL=has_null,
                             BLOCK=FILL_TILE, num_warps=4)
