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

import lazy_loader as _lazy_loader

# lazy, so that `apsp.distributed.layout` and friends load without initialising MPI; the names and their
# modules are the imports of __init__.pyi, their one list
__getattr__, __dir__, __all__ = _lazy_loader.attach_stub(__name__, __file__)
