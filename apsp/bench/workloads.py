"""Benchmark inputs and the independent correctness check.

Two workloads: ``weighted`` (each ordered pair an edge with probability
``density``, integer weights uniform in 1..100, as the homework's range without
zero so every peer reads the graph alike) and ``unit`` (same edges, weight 1,
for BFS). Graphs are reproducible from ``(workload, n, density, seed)``.

The reference is scipy's Dijkstra, an implementation independent of apsp's
kernels. It solves every source for small n and a fixed random sample of
sources for large n, so checking stays cheap next to the solve it checks.

>>> g = make_graph("weighted", 50, density=0.1, seed=1)
>>> g.n, g.has_negative_weights
(50, False)
>>> ref = Reference(g, full_up_to=10, sample=20, seed=1)
>>> len(ref.sources)
20
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..graph import Graph

WORKLOADS = ("weighted", "unit")
WEIGHT_RANGE = (1, 100)
_ROWS_PER_CHUNK = 1024


def make_graph(workload: str, n: int, density: float, seed: int) -> Graph:
    """A random directed graph on ``n`` vertices without self-loops, as CSR."""
    import scipy.sparse as sp

    if workload not in WORKLOADS:
        raise ValueError(f"unknown workload {workload!r}; choose one of {', '.join(WORKLOADS)}")
    if not 0 < density <= 1:
        raise ValueError(f"density must lie in (0, 1], got {density}")
    # the same edges for both workloads at one (n, seed), so their times compare
    rng = np.random.default_rng([seed, n])
    indices, data, counts = [], [], []
    for start in range(0, n, _ROWS_PER_CHUNK):  # chunks keep memory O(n * chunk)
        rows = min(_ROWS_PER_CHUNK, n - start)
        mask = rng.random((rows, n)) < density
        mask[np.arange(rows), np.arange(start, start + rows)] = False
        r, c = np.nonzero(mask)
        w = rng.integers(WEIGHT_RANGE[0], WEIGHT_RANGE[1] + 1, size=r.size, dtype=np.int16)
        indices.append(c.astype(np.int32))
        data.append(w if workload == "weighted" else np.ones(r.size, dtype=np.int16))
        counts.append(np.bincount(r, minlength=rows))
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(counts), dtype=np.int64)])
    csr = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr), shape=(n, n))
    csr.sort_indices()
    return Graph(n=n, csr=csr, source=f"{workload} n={n} density={density} seed={seed}")


@dataclass
class Check:
    """Outcome of comparing a result with the reference."""

    match: bool
    checked_sources: int
    mismatches: int

    def fields(self) -> dict:
        """The fields of a results record."""
        return {"match": self.match, "checked_sources": self.checked_sources, "mismatches": self.mismatches}


class Reference:
    """Distances from scipy's Dijkstra for all sources (n <= full_up_to) or ``sample`` of them.

    ``compare(rows_of)`` takes a function returning the float64 distance rows
    (``inf`` = no path) of the result under test for given sources.
    """

    def __init__(self, graph: Graph, full_up_to: int = 1024, sample: int = 128, seed: int = 0):
        from scipy.sparse.csgraph import dijkstra

        n = graph.n
        if n <= max(full_up_to, sample):
            self.sources = np.arange(n)
        else:
            rng = np.random.default_rng([seed, n, 7])
            self.sources = np.sort(rng.choice(n, size=sample, replace=False))
        self.name = ("scipy dijkstra, all sources" if len(self.sources) == n
                     else f"scipy dijkstra, {len(self.sources)} of {n} sources")
        self.rows = dijkstra(graph.to_csr().astype(np.float64), directed=True, indices=self.sources)

    def compare(self, rows_of) -> Check:
        got = np.asarray(rows_of(self.sources), dtype=np.float64)
        if got.shape != self.rows.shape:  # every entry counts as wrong
            return Check(False, len(self.sources), got.size)
        wrong = int(np.count_nonzero(got != self.rows))
        return Check(wrong == 0, len(self.sources), wrong)


def float_rows(distances: np.ndarray, unreachable=None):
    """A ``rows_of`` function for an apsp distance matrix (integer unreachable -> inf)."""
    def rows_of(sources):
        rows = np.asarray(distances[sources], dtype=np.float64)
        if unreachable is not None and distances.dtype.kind in "iu":
            rows[np.asarray(distances[sources]) == unreachable] = np.inf
        return rows

    return rows_of
