"""The memory plan's records, below every layer that reads them: `MemoryPlan` (where a solve
keeps its data and what it needs, decided by `apsp.plan.plan_memory`) and `StreamPlan` (an
out-of-core solve's tiles, `apsp.outofcore.plan_stream`). Engines receive them in
`apsp.engine.SolveOptions.memory`; nothing here imports the rest of the package.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StreamPlan:
    """Tile sizes of an out-of-core solve.

    ``n`` is the host matrix's side (padded on a GPU), ``n_pivots`` the real
    vertices, ``block`` the pivot panel width B, ``rows`` the stripe height,
    ``buffers`` the number of stripe buffers.
    """

    n: int
    n_pivots: int
    itemsize: int
    block: int
    rows: int
    buffers: int
    budget: int
    where: str = "GPU"

    @property
    def panel_bytes(self) -> int:
        # current and next round's row and column panels, the pivot block and (on a GPU) its
        # transpose; in RAM also phase 2's copy of the panel it updates (the old values it reads)
        in_ram = self.where == "RAM"
        return ((4 + in_ram) * self.block * self.n + (2 - in_ram) * self.block * self.block) * self.itemsize

    @property
    def device_bytes(self) -> int:
        return self.panel_bytes + self.buffers * self.rows * self.n * self.itemsize

    @property
    def staging_bytes(self) -> int:
        """Pinned bounce buffers when the host matrix is not pinned (two in, two out)."""
        return 4 * self.rows * self.n * self.itemsize if self.where == "GPU" else 0

    @property
    def rounds(self) -> int:
        return -(-self.n_pivots // self.block) if self.n_pivots else 0

    @property
    def stripes(self) -> int:
        return -(-self.n // self.rows)

    def summary(self) -> dict:
        return {"ooc_block": self.block, "ooc_rows": self.rows, "ooc_buffers": self.buffers,
                "ooc_rounds": self.rounds, "ooc_stripes": self.stripes, "ooc_device_bytes": self.device_bytes}


@dataclass(frozen=True)
class MemoryPlan:
    """Where a solve keeps its data and what it needs (bytes)."""

    method: str
    backend: str
    n: int
    dtype: np.dtype
    host_bytes: int
    gpu_bytes: int = 0
    host_limit: int = 0
    gpu_limit: int = 0
    #: the matrix is streamed through the GPU (or RAM) in stripes
    out_of_core: bool = False
    #: the streamed matrix lives in a scratch file (else in RAM)
    matrix_on_disk: bool = False
    scratch_dir: str | None = None
    #: `StreamPlan` when out_of_core (nd-fw streams node by node, without one)
    stream: StreamPlan | None = None
    #: in-core dense FW on the GPU: the device matrix's side, n padded to whole kernel tiles
    padded: int | None = None

    def summary(self) -> dict:
        out = {"host_bytes": self.host_bytes, "gpu_bytes": self.gpu_bytes, "out_of_core": self.out_of_core}
        if self.out_of_core:
            out["matrix_on_disk"] = self.matrix_on_disk
            if self.stream is not None:  # nd-fw streams node by node, without a stripe plan
                out.update(self.stream.summary())
        return out
