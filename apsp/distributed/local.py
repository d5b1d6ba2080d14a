"""Local tile work of one rank: the CPU (Numba) or GPU (torch + Triton) min-plus kernels.

The distributed driver only talks to a `TileEngine`: allocate, copy, close a
pivot tile, update a panel product ``c = min(c, a (x) b)``, hand buffers to
MPI. Both engines call the shared tile-level kernels with the semantics of
DEVELOPING.md (``close_block(t, negative)``, ``minplus_update(c, a, b,
negative)``), so a distributed solve equals the single-process one.

* `CPUTiles`: numpy arrays, ``apsp.cpu.blocked`` kernels. A rank with several
  cores splits its big panel products by rows over a thread pool (the Numba
  kernels release the GIL).
* `GPUTiles`: torch tensors on this rank's GPU, ``apsp.gpu.minplus`` kernels.
  MPI gets device buffers directly when the MPI is CUDA-aware; otherwise each
  panel is staged through pinned host memory (``staged``).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class CPUTiles:
    """Tile kernels on host numpy arrays.

    Examples
    --------
    >>> import numpy as np
    >>> eng = CPUTiles(threads=1)
    >>> c = np.full((1, 2), 100, dtype=np.int32)
    >>> eng.update(c, np.array([[1, 5]], np.int32), np.array([[10, 1], [1, 10]], np.int32), False).tolist()
    [[6, 2]]
    """

    kind = "cpu"
    #: MPI reads and writes the arrays themselves
    staged = False
    cuda_aware = False
    #: the Numba kernel wants ``a`` with contiguous rows
    transposed_col_panels = False
    #: ragged tiles cost the Numba kernels nothing
    pads_tiles = False

    def __init__(self, threads: int = 1):
        from ..cpu import blocked

        self._kernels = blocked
        self.threads = max(1, int(threads))
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        self.device = "cpu"

    # -- memory -----------------------------------------------------------
    def from_host(self, a: np.ndarray) -> np.ndarray:
        return a

    def to_host(self, a: np.ndarray) -> np.ndarray:
        return a

    def empty(self, shape, dtype) -> np.ndarray:
        return np.empty(shape, dtype=dtype)

    def host_empty(self, shape, dtype) -> np.ndarray:
        return np.empty(shape, dtype=dtype)

    def host_mpi(self, a: np.ndarray) -> np.ndarray:
        return a

    def copy(self, dst, src) -> None:
        dst[...] = src

    def mpi_buffer(self, a):
        return a

    def gather_values(self, a, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return np.asarray(a[rows, cols])

    def check_memory(self, nbytes: int) -> None:
        """Host memory is checked by allocating it (the caller does, in an agreed stage)."""

    def sync(self) -> None:
        pass

    # -- kernels ------------------------------------------------------------
    def close_block(self, t, negative: bool) -> None:
        if t.size:
            self._kernels.close_block(t, negative)

    def update(self, c, a, b, negative: bool, parallel: bool = False):
        """``c = min(c, a (x) b)``; with ``parallel`` (no aliasing) rows are split over threads."""
        if c.size == 0 or a.shape[1] == 0:
            return c
        rows = c.shape[0]
        if not parallel or self._pool is None or rows < 2 * self.threads:
            return self._kernels.minplus_update(c, a, b, negative)
        step = -(-rows // self.threads)
        futures = [self._pool.submit(self._kernels.minplus_update, c[r:r + step], a[r:r + step], b, negative)
                   for r in range(0, rows, step)]
        for f in futures:
            f.result()
        return c

    def warm_up(self, dtype, negative: bool) -> None:
        """Load (or compile) the kernels for ``dtype`` now, so compute timings exclude it."""
        t = np.zeros((2, 2), dtype=dtype)
        self.close_block(t, negative)
        self._kernels.minplus_update(t, t.copy(), t.copy(), negative)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


class GPUTiles:
    """Tile kernels on torch tensors of one device (one rank per GPU).

    ``device`` is normally ``"cuda:<local rank>"``; ``"cpu"`` runs the same
    code on CPU tensors (Triton interpreter) so the tests cover this path
    without a GPU.
    """

    kind = "gpu"
    #: the Triton product reads ``a`` fastest as a transposed view of a contiguous k x r buffer
    transposed_col_panels = True
    #: solve on whole tiles (`apsp.distributed.fw.solve_layout`)
    pads_tiles = True

    def __init__(self, device, cuda_aware: bool):
        import torch

        from ..gpu import minplus

        self.torch = torch
        self._kernels = minplus
        self.device = torch.device(device)
        self.is_cuda = self.device.type == "cuda"
        if self.is_cuda:
            torch.cuda.set_device(self.device)
        self.cuda_aware = bool(cuda_aware) and self.is_cuda
        #: device buffers go through pinned host memory for MPI
        self.staged = not self.cuda_aware

    # -- memory -----------------------------------------------------------
    def _torch_dtype(self, dtype):
        return {np.dtype(np.int16): self.torch.int16, np.dtype(np.int32): self.torch.int32,
                np.dtype(np.int64): self.torch.int64, np.dtype(np.float32): self.torch.float32,
                np.dtype(np.float64): self.torch.float64}[np.dtype(dtype)]

    def from_host(self, a: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def to_host(self, t) -> np.ndarray:
        return np.ascontiguousarray(t.cpu().numpy())  # t may be a view of a padded matrix

    def empty(self, shape, dtype):
        return self.torch.empty(shape, dtype=self._torch_dtype(dtype), device=self.device)

    def full(self, shape, dtype, value):
        return self.torch.full(shape, value, dtype=self._torch_dtype(dtype), device=self.device)

    def host_empty(self, shape, dtype):
        """A host tensor in page-locked memory (plain memory without CUDA), for staging."""
        return self.torch.empty(shape, dtype=self._torch_dtype(dtype), pin_memory=self.is_cuda)

    def host_mpi(self, t) -> np.ndarray:
        """The numpy view MPI reads or fills (host staging buffers only)."""
        return t.numpy()

    def copy(self, dst, src) -> None:
        """Copy between tensors (device or pinned host) or numpy arrays, blocking.

        Host copies must be finished when this returns: MPI reads a staged buffer
        right after, and a later round receives into it again."""
        if isinstance(dst, np.ndarray):
            dst = self.torch.from_numpy(dst)
        if isinstance(src, np.ndarray):
            src = self.torch.from_numpy(src)
        dst.copy_(src)

    def mpi_buffer(self, t):
        """What MPI sends from or receives into: the tensor itself (CUDA-aware MPI reads
        ``__cuda_array_interface__``) after the stream's pending work is done."""
        self.sync()
        return t

    def check_memory(self, nbytes: int) -> None:
        """Refuse (`MemoryPlanError`) when this rank's share does not fit its GPU's free memory."""
        if not self.is_cuda:
            return
        from ..errors import MemoryPlanError

        free, total = self.torch.cuda.mem_get_info(self.device)
        if nbytes > free:
            raise MemoryPlanError(
                f"this rank's tiles and panels need {nbytes / 2**30:.2f} GiB on {self.device}, which has "
                f"{free / 2**30:.2f} of {total / 2**30:.2f} GiB free; use more GPUs (ranks) or a smaller dtype")

    def gather_values(self, t, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        if len(rows) == 0:
            return np.zeros(0, dtype=self.to_host(t[:0, :0]).dtype)
        idx_r = self.torch.as_tensor(rows, device=self.device)
        idx_c = self.torch.as_tensor(cols, device=self.device)
        return t[idx_r, idx_c].cpu().numpy()

    def sync(self) -> None:
        if self.is_cuda:
            self.torch.cuda.synchronize(self.device)

    # -- kernels ------------------------------------------------------------
    def close_block(self, t, negative: bool) -> None:
        if t.numel():
            self._kernels.close_block(t, negative)

    def update(self, c, a, b, negative: bool, parallel: bool = False):
        if c.numel() == 0 or a.shape[1] == 0:
            return c
        self._kernels.minplus_update(c, a, b, negative)
        return c

    def warm_up(self, dtype, negative: bool) -> None:
        """Compile the Triton kernels for ``dtype`` now, so compute timings exclude it."""
        t = self.from_host(np.zeros((2, 2), dtype=dtype))
        self.close_block(t, negative)
        self.update(t, t.T.contiguous().T, t.clone(), negative)
        self.sync()

    def close(self) -> None:
        pass


def make_engine(backend: str, grid, cuda_aware: bool, device=None, threads=None):
    """The tile engine for this rank.

    ``backend`` "cpu": Numba kernels with ``threads`` (default: this node's
    cores divided among its ranks). "gpu": this rank's GPU, ``device``
    (default ``cuda:<node rank mod GPU count>``).
    """
    if backend == "cpu":
        if threads is None:
            threads = max(1, available_cores() // max(1, grid.node_size))
        return CPUTiles(threads=threads)
    if backend == "gpu":
        if device is None:
            import torch

            from ..gpu import interpreting

            count = torch.cuda.device_count()
            if count:
                device = f"cuda:{grid.node_rank % count}"
            elif interpreting():  # Triton's CPU interpreter: the tests run this path without a GPU
                device = "cpu"
            else:
                raise RuntimeError("backend 'gpu' needs a CUDA GPU on every rank; torch sees none here")
        return GPUTiles(device, cuda_aware)
    raise ValueError(f"unknown distributed backend {backend!r}; choose cpu or gpu")
