"""torch tensors and the arrays of other libraries, without Triton: what a CPU install of torch can run.

`wrap` takes any array torch can share (DLPack, ``__cuda_array_interface__``); `sparse_to_scipy`
reads a sparse tensor as scipy's matrix; `to_device`, `as_numpy`, `take_rows` and `cast_checked`
are the result's way back (`apsp.api`, `apsp.Result`). The GPU route itself is `apsp.gpu.devinput`.
"""
from __future__ import annotations

import numpy as np
import torch

from .. import exactness

#: entries of a result one step of `cast_checked` converts at a time
CAST_CHUNK = 1 << 22


def numpy_dtype(dtype) -> np.dtype:
    """The numpy dtype of a torch dtype (bfloat16, which numpy lacks, as float32: it widens exactly)."""
    if dtype == torch.bfloat16:
        return np.dtype(np.float32)
    return np.dtype(str(dtype).replace("torch.", ""))


def wrap(obj) -> torch.Tensor:
    """``obj`` as a torch tensor on its own device, sharing its memory: a torch tensor as it is, a
    DLPack exporter through `torch.from_dlpack`, a ``__cuda_array_interface__`` through
    `torch.as_tensor` (both zero copy)."""
    if isinstance(obj, torch.Tensor):
        return obj
    if hasattr(obj, "__dlpack__"):
        return torch.from_dlpack(obj)
    if hasattr(obj, "__cuda_array_interface__"):
        if not torch.cuda.is_available():
            from ..errors import BackendUnavailableError

            raise BackendUnavailableError("an array with __cuda_array_interface__ needs a CUDA device, "
                                          "and torch sees none")
        return torch.as_tensor(obj, device="cuda")
    raise TypeError(f"{type(obj).__name__} exports neither DLPack nor __cuda_array_interface__")


def to_device(a, device) -> torch.Tensor:
    """``a`` (numpy, or a tensor already) as a torch tensor on ``device`` (a CPU tensor shares numpy's
    memory; another device gets one copy)."""
    t = a if isinstance(a, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(a))
    return t if t.device == torch.device(device) else t.to(device)


def as_numpy(t) -> np.ndarray:
    """A tensor's values as a numpy array on the host (a CPU tensor without a copy)."""
    if not isinstance(t, torch.Tensor):
        return np.asarray(t)
    if t.device.type == "cpu":
        return t.detach().numpy()
    from .transfer import to_host

    return to_host(t)


def cast_checked(t: torch.Tensor, dtype, negative: bool) -> torch.Tensor:
    """`apsp.exactness.cast_checked` on the device: the finalized integer distances ``t`` in the
    narrower ``dtype`` (every reachable one within its limit, else `DtypeError`), a row chunk at a time."""
    dt = np.dtype(dtype)
    limit = 2 ** (np.finfo(dt).nmant + 1) if dt.kind == "f" else int(exactness.reachable_limit(dt, negative))
    wide_unreachable = exactness.unreachable_value(numpy_dtype(t.dtype))
    out = torch.empty(tuple(t.shape), dtype=getattr(torch, dt.name), device=t.device)
    rows = max(1, CAST_CHUNK // max(t.shape[1] if t.dim() == 2 else 1, 1))
    for i in range(0, t.shape[0], rows):
        part = t[i:i + rows]
        no_path = part.eq(wide_unreachable.item())
        values = torch.where(no_path, torch.zeros_like(part), part)
        bad = (values > limit) | (values < -limit)
        if bool(bad.any()):
            from ..errors import DtypeError

            raise DtypeError(f"dtype {dt.name} cannot hold every distance of this graph: one is "
                             f"{int(values[bad][0])}, beyond the {dt.name} limit {limit}; choose a wider "
                             "dtype or leave dtype unset")
        piece = values.to(out.dtype)
        piece[no_path] = exactness.unreachable_value(dt).item()
        out[i:i + rows] = piece
    return out


def sparse_to_scipy(t):
    """A torch sparse tensor (COO or CSR, any device) as a scipy sparse matrix on the host: one
    copy of its index and value arrays (the sparse engines read the host's CSR). A COO tensor's
    repeated entries are kept (the lightest wins, as for scipy's COO), never summed."""
    import scipy.sparse as sp

    if t.dim() != 2 or t.shape[0] != t.shape[1]:
        raise ValueError(f"a graph's matrix must be square, got shape {tuple(t.shape)}")

    def host(v):
        v = v.detach()
        return (v.float() if v.dtype in (torch.bfloat16, torch.float16) else v).cpu().numpy()

    if t.layout == torch.sparse_coo:
        rows, cols = host(t._indices())
        return sp.coo_matrix((host(t._values()), (rows, cols)), shape=tuple(t.shape))
    if t.layout == torch.sparse_csr:
        return sp.csr_matrix((host(t.values()), host(t.col_indices()), host(t.crow_indices())), shape=tuple(t.shape))
    raise TypeError(f"a torch tensor of layout {t.layout} is not read here: give a dense tensor, or a "
                    "sparse COO or CSR one")


def take_rows(t: torch.Tensor, rows: np.ndarray) -> torch.Tensor:
    """Rows ``rows`` of a tensor, gathered on its device."""
    return t[torch.as_tensor(rows, device=t.device)]
