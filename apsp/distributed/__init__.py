"""Blocked Floyd-Warshall over MPI ranks: 2-D block-cyclic tiles, CPU or GPU per rank.

Launch with MPI (one rank per GPU, or per core group on CPU)::

    mpiexec -n 4 python -m apsp graph.txt dist.txt 128 --distributed
    mpiexec -n 2 python -m apsp solve graph.txt -o dist.npy --distributed --backend gpu --profile

or from Python, under ``mpiexec``::

    from apsp.distributed import solve
    result = solve("graph.txt" if rank == 0 else None)   # Result on rank 0, None elsewhere

This is the only package of apsp that imports mpi4py (lazily: importing
`apsp.distributed` alone does not start MPI). The pieces: `api` (`solve`),
`layout` (who owns which tile), `grid` (Cartesian communicators), `inputs`
(read once on rank 0, validate, scatter), `fw` (the rounds, with look-ahead),
`local` (CPU/GPU tile kernels and MPI buffers), `output` (gather, parallel
``.npy`` and text writes), `faults` (how a failing rank ends the job),
`profile` (time split per rank); `stats` (`apsp.distance_stats` with the sources
split over the ranks).
"""
from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    "solve": "apsp.distributed.api",
    "distance_stats": "apsp.distributed.stats",
    "DistributedRun": "apsp.distributed.api",
    "cuda_aware_mpi": "apsp.distributed.api",
    "rank_table": "apsp.distributed.api",
    "output_format": "apsp.distributed.api",
    "RankFailedError": "apsp.distributed.faults",
    "BlockCyclic": "apsp.distributed.layout",
    "ProcessGrid": "apsp.distributed.grid",
    "grid_shape": "apsp.distributed.grid",
}

__all__ = sorted(_EXPORTS)


# lazy, so that `apsp.distributed.layout` and friends load without initialising MPI
__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


def __dir__():
    return __all__
