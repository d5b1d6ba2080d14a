"""Nested-dissection orderings compared: METIS (pymetis) against breadth-first level bisection.

Min-plus updates of the nd-fw schedule (leaves of 3000, tile 128) and the ordering's time on grids,
k-NN and Delaunay graphs (BENCHMARKS.md section 17). ``python benchmarks/nd_orderings.py``
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from nd_graphs import grid, knn
from apsp.dissection import dissect
for name, g in [("grid100", grid(100)), ("grid200", grid(200)), ("grid350", grid(350)), ("knn40k", knn(40000)), ("knn122k", knn(122500))]:
    row = [name]
    for ordering in ("metis", "levels"):
        t = time.perf_counter(); nd = dissect(g, leaf_size=3000, tile=128, ordering=ordering); dt = time.perf_counter() - t
        row.append(f"{ordering}: updates {nd.updates():.3e} size {nd.size} order {dt:.2f}s")
    print(" | ".join(row), flush=True)
from scipy.spatial import Delaunay
import scipy.sparse as sp
rng = np.random.default_rng(0)
for n in (40000, 122500):
    pts = rng.random((n, 2)); tri = Delaunay(pts).simplices
    u = np.concatenate([tri[:,0],tri[:,1],tri[:,2]]); v = np.concatenate([tri[:,1],tri[:,2],tri[:,0]])
    g = sp.csr_matrix((np.ones(len(u)), (u, v)), shape=(n, n)); g = (g + g.T).tocsr()
    row = [f"delaunay{n}"]
    for ordering in ("metis", "levels"):
        t = time.perf_counter(); nd = dissect(g, leaf_size=3000, tile=128, ordering=ordering); dt = time.perf_counter() - t
        row.append(f"{ordering}: updates {nd.updates():.3e} size {nd.size} order {dt:.2f}s")
    print(" | ".join(row), flush=True)
