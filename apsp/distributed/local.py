"""Local tile work of one rank: the CPU or GPU engine of the FW skeleton, plus what MPI needs.

The distributed driver (`apsp.distributed.fw`) talks to the same tile-engine
protocol as the single-process solvers (`apsp.engine.TileEngine`: allocate,
copy, close a pivot tile, ``c = min(c, a (x) b)``, synchronise), so a
distributed solve equals the single-process one bit for bit. The classes here
add what MPI needs: host staging buffers and the buffers MPI reads.

* `CPUTiles`: `apsp.cpu.blocked.CPUEngine` (numpy arrays, Numba kernels). A rank
  with several cores splits its big panel products by rows over threads.
* `GPUTiles`: `apsp.gpu.fw.GPUEngine` (torch tensors on this rank's GPU, Triton
  kernels). MPI gets device buffers directly when the MPI is CUDA-aware;
  otherwise each panel is staged through pinned host memory (``staged``).
"""
from __future__ import annotations

import numpy as np


def cpu_tiles(dtype, negative: bool, threads: int = 1):
    """`CPUTiles` (built on first use so that ``import apsp.distributed.local`` stays light).

    Examples
    --------
    >>> import numpy as np
    >>> eng = cpu_tiles(np.int32, negative=False, threads=1)
    >>> c = np.full((1, 2), 100, dtype=np.int32)
    >>> eng.minplus(c, np.array([[1, 5]], np.int32), np.array([[10, 1], [1, 10]], np.int32))
    >>> c.tolist()
    [[6, 2]]
    """
    from ..cpu.blocked import CPUEngine

    class CPUTiles(CPUEngine):
        #: MPI reads and writes the arrays themselves (never staged: no host buffers)
        staged = False
        cuda_aware = False
        device = "cpu"

        def from_host(self, a: np.ndarray) -> np.ndarray:
            return a

        def to_host(self, a: np.ndarray) -> np.ndarray:
            return a

        def mpi_buffer(self, a):
            return a

        def gather_values(self, a, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
            return np.asarray(a[rows, cols])

        def check_memory(self, nbytes: int) -> None:
            """Host memory is checked by allocating it (the caller does, in an agreed stage)."""

        def warm_up(self) -> None:
            """Load (or compile) the kernels now, so compute timings exclude it."""
            t = np.zeros((2, 2), dtype=self.dtype)
            self.close_block(t)
            self.minplus(t, t.copy(), t.copy())

    return CPUTiles(dtype, negative, threads=max(1, int(threads)))


def gpu_tiles(dtype, negative: bool, device, cuda_aware: bool):
    """`apsp.gpu.tiles.gpu_tiles`: this rank's GPU tiles on ``device`` (normally ``"cuda:<local rank>"``;
    ``"cpu"`` runs the same code on CPU tensors in Triton's interpreter, so the tests cover this path
    without a GPU)."""
    from ..gpu.tiles import gpu_tiles as tiles

    return tiles(dtype, negative, device, cuda_aware)


def make_engine(backend: str, grid, cuda_aware: bool, dtype, negative: bool, device=None, threads=None):
    """The tile engine for this rank, for ``dtype`` distances (``negative``: weights may be negative).

    ``backend`` "cpu": Numba kernels with ``threads`` (default: this node's
    cores divided among its ranks). "gpu": this rank's GPU, ``device``
    (default ``cuda:<node rank mod GPU count>``).
    """
    if backend == "cpu":
        if threads is None:
            from ..cpu.blocked import available_cores

            threads = max(1, available_cores() // max(1, grid.node_size))
        return cpu_tiles(dtype, negative, threads=threads)
    if backend == "gpu":
        if device is None:
            from ..gpu import machine_facts

            # the node rank's GPU (`apsp.gpu.rank_device`); "cpu" under Triton's interpreter, so the
            # tests run this path without a GPU
            device = machine_facts(rank=grid.node_rank).device
            if device is None:
                raise RuntimeError("backend 'gpu' needs a CUDA GPU on every rank; torch sees none here")
        return gpu_tiles(dtype, negative, device, cuda_aware)
    raise ValueError(f"unknown distributed backend {backend!r}; choose cpu or gpu")
