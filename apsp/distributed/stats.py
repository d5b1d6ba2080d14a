"""`apsp.distance_stats` over MPI ranks: each rank reduces a slice of the sources, rank 0 gathers.

Every rank reads the graph (each search needs all of it) and reduces the rows of its
consecutive slice of the sources, cut at multiples of 64 so no bit-parallel BFS batch is
split; the per-source sums (a few numbers per source) go to rank 0, which returns one
`DistanceStats` (None on the other ranks). A rank's GPU work runs on its own device (its node
rank's, `apsp.gpu.rank_device`, as in the distributed FW). Numba's threads per rank follow
``NUMBA_NUM_THREADS``: with several ranks on one host, give each its share of the cores.
"""
from __future__ import annotations

import numpy as np
from mpi4py import MPI

from ..stats import DistanceStats, merge_stats, source_slices
from .grid import node_placement


def distance_stats(graph, sources=None, comm=None, **options) -> DistanceStats | None:
    """`apsp.distance_stats` (same keywords) with the sources split over the ranks of ``comm``
    (default ``MPI.COMM_WORLD``); the result on rank 0, None on the others. Every rank calls it
    with the same arguments; errors in them raise alike on every rank. Each rank's GPU work runs
    on `rank_device` (unless ``device=`` names one)."""
    from ..api import as_graph, source_vertices
    from ..stats import distance_stats as local_stats

    comm = comm or MPI.COMM_WORLD
    if options.get("backend", "auto") != "cpu" and options.get("device") is None:
        options["device"] = rank_device(comm)
    g = as_graph(graph, directed=options.pop("directed", True),
                 unweighted=options.pop("unweighted", False))
    # checked here on every rank alike: a bad vertex in one rank's slice alone would leave the
    # others waiting at the gather
    src = np.arange(g.n, dtype=np.int64) if sources is None else source_vertices(sources, g.n, g.labels)
    lo, hi = source_slices(len(src), comm.size)[comm.rank]
    part = local_stats(g, src[lo:hi], **options)
    parts = comm.gather(part, root=0)
    if comm.rank != 0:
        return None
    merged = merge_stats(parts)
    merged.info["ranks"] = comm.size
    return merged


def rank_device(comm) -> str | None:
    """This rank's device (collective): its node rank's GPU (`apsp.gpu.rank_device`), "cpu" under
    Triton's interpreter, None without a GPU."""
    from ..gpu import machine_facts

    return machine_facts(rank=node_placement(comm)[1]).device

