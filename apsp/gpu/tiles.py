"""This rank's GPU tiles for the distributed FW: `apsp.gpu.fw.GPUEngine` with what MPI needs (host
staging buffers, the buffers MPI reads), kept under `apsp.gpu` with every other use of torch;
`apsp.distributed.local` builds it for a rank."""
from __future__ import annotations

import numpy as np
import torch

from .fw import GPUEngine


class GPUTiles(GPUEngine):
    """`GPUEngine` on ``device`` (normally ``"cuda:<local rank>"``; ``"cpu"`` runs the same code on CPU
    tensors in Triton's interpreter, so the tests cover this path without a GPU). MPI gets device
    buffers directly when it is CUDA-aware (``cuda_aware``); otherwise each panel is staged
    through pinned host memory (``staged``)."""

    def __init__(self, dtype, negative: bool, device, cuda_aware: bool):
        super().__init__(dtype, negative, device=torch.device(device))
        self.tdtype = getattr(torch, self.dtype.name)
        if self.cuda:
            torch.cuda.set_device(self.device)
        self.cuda_aware = bool(cuda_aware) and self.cuda
        #: device buffers go through pinned host memory for MPI
        self.staged = not self.cuda_aware

    def from_host(self, a: np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def to_host(self, t) -> np.ndarray:
        return np.ascontiguousarray(t.cpu().numpy())  # t may be a view of a padded matrix

    def full(self, shape, value):
        return torch.full(shape, value, dtype=self.tdtype, device=self.device)

    def host_empty(self, shape):
        """A host tensor in page-locked memory (plain memory without CUDA), for staging."""
        return torch.empty(shape, dtype=self.tdtype, pin_memory=self.cuda)

    def host_mpi(self, t) -> np.ndarray:
        """The numpy view MPI reads or fills (host staging buffers only)."""
        return t.numpy()

    def copy(self, dst, src) -> None:
        """Copy between tensors (device or pinned host) or numpy arrays, blocking.

        Host copies must be finished when this returns: MPI reads a staged buffer
        right after, and a later round receives into it again."""
        dst, src = (torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in (dst, src))
        dst.copy_(src)

    def mpi_buffer(self, t):
        """What MPI sends from or receives into: the tensor itself (CUDA-aware MPI reads
        ``__cuda_array_interface__``) after the stream's pending work is done."""
        self.sync()
        return t

    def check_memory(self, nbytes: int) -> None:
        """Refuse (`MemoryPlanError`) when this rank's share does not fit its GPU's free memory."""
        if not self.cuda:
            return
        from ..errors import MemoryPlanError

        free, total = torch.cuda.mem_get_info(self.device)
        if nbytes > free:
            raise MemoryPlanError(
                f"this rank's tiles and panels need {nbytes / 2**30:.2f} GiB on {self.device}, which has "
                f"{free / 2**30:.2f} of {total / 2**30:.2f} GiB free; use more GPUs (ranks) or a smaller dtype")

    def gather_values(self, t, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return t[torch.as_tensor(rows, device=self.device), torch.as_tensor(cols, device=self.device)].cpu().numpy()

    def warm_up(self) -> None:
        """Compile the Triton kernels now, so compute timings exclude it."""
        t = self.from_host(np.zeros((2, 2), dtype=self.dtype))
        self.close_block(t)
        self.minplus(t, t.T.contiguous().T, t.clone())
        self.sync()

    def close(self) -> None:
        pass


def gpu_tiles(dtype, negative: bool, device, cuda_aware: bool) -> GPUTiles:
    """`GPUTiles` for this rank."""
    return GPUTiles(dtype, negative, device, cuda_aware)
