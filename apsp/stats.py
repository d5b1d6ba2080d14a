"""Reductions of all shortest distances without the n x n matrix: centralities, eccentricity, diameter.

`distance_stats` runs the searches in blocks of source rows and reduces each
row where it is computed, then drops it: per source it keeps the number of
targets reached, the sum of the finite distances, the largest one, the sum of
1/d, and (on request) a histogram of the distances. The working set is a few
n-long arrays per thread (bit-parallel BFS, which never writes a row) or one
block of k x n rows (Dijkstra, Johnson), planned before it is allocated.
Everything else is derived from those sums by `DistanceStats`: closeness
(networkx's, with ``wf_improved``), harmonic centrality, eccentricity,
diameter, radius, center, periphery, average distance, Wiener index, global
efficiency.

Integer sums are exact (Python ints past int64), hop counts and integer
weights stay integers; float weights are summed in float64 with compensation.

>>> import apsp
>>> s = apsp.distance_stats([(0, 1), (1, 2), (2, 3)], directed=False)
>>> s.eccentricity.tolist(), s.diameter(), s.radius(), s.center().tolist()
([3, 2, 2, 3], 3, 2, [1, 2])
>>> [round(float(c), 3) for c in s.closeness()]
[0.5, 0.75, 0.75, 0.5]
>>> s.wiener_index(), float(s.average_distance())
(10, 1.6666666666666667)
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from . import exactness
from .choices import BACKENDS, DIRECTIONS, check_choice

__all__ = ["DistanceStats", "distance_stats", "choose_stats_method", "merge_stats", "source_slices"]

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from .api import GraphLike
    from .choices import Backend, Direction, DtypeChoice, StatsMethod


def __getattr__(name: str):
    if name == "choose_stats_method":  # decided in the plan (`apsp.plan.choose_stats_method`)
        from .plan import choose_stats_method

        return choose_stats_method
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: the integer distance histogram's largest size (bins); larger distances need no histogram
MAX_HISTOGRAM_BINS = 1 << 24
#: seconds one chunk of BFS batches should take: short enough for Ctrl-C to land promptly
CHUNK_SECONDS = 0.25


@dataclass(frozen=True)
class DistanceStats:
    """Per-source reductions of shortest distances (entry i: source ``sources[i]``).

    ``direction`` "out" reduces the distances from each source, "in" those to it
    (networkx's closeness uses "in" on directed graphs). Distances to vertices
    outside ``targets`` are not counted; unreachable targets count as infinitely far.
    ``sources`` holds indices (0..n-1); where the input named its vertices (SNAP ids,
    GraphML node ids: ``labels``), `vertices`, `center` and `periphery` give those names.
    """

    #: vertices of the graph
    n: int
    #: the source vertex of each entry (its index, 0..n-1)
    sources: np.ndarray
    #: how many targets the distances were taken to
    targets: int
    #: "out" (distances from the source) or "in" (distances to it)
    direction: str
    #: the search: "bfs" (hop counts), "dijkstra" or "johnson"
    method: str
    #: why that search (`choose_stats_method`)
    reason: str
    #: the distances' dtype; sums and extremes below are exact in it (int64 / Python int, float64)
    dtype: np.dtype
    #: targets reached, the source itself included when it is a target
    reachable: np.ndarray
    #: sum of the finite distances (int64, Python ints past int64, or float64)
    total: np.ndarray
    #: largest finite distance (0 where nothing but the source is reached)
    eccentricity: np.ndarray
    #: sum of 1/d over the finite distances d != 0
    harmonic: np.ndarray
    #: (source, target) pairs of distinct vertices: what averages divide by
    pairs: int = 0
    #: the distances' histogram (index: distance; the sources' own 0 included), when asked for
    histogram: np.ndarray | None = None
    #: the graph's distances are symmetric (an undirected graph)
    symmetric: bool = False
    info: dict = field(default_factory=dict)
    #: the input's name of each vertex (``labels[i]`` names vertex i), or None where it numbered them
    labels: np.ndarray | None = None

    @property
    def vertices(self) -> np.ndarray:
        """The source of each entry as the input names it: its label, or its index without labels."""
        return self.sources.copy() if self.labels is None else self.labels[self.sources]

    @property
    def reaches_all(self) -> np.ndarray:
        """Whether each source reaches every target (its eccentricity is finite)."""
        return self.reachable == self.targets

    def closeness(self, wf_improved: bool = True) -> NDArray[np.float64]:
        """networkx's closeness: ``(r - 1) / total``, times ``(r - 1) / (n - 1)`` with
        ``wf_improved`` (r: targets reached); 0 where the total is 0. Float64 per source."""
        r = self.reachable.astype(np.float64) - 1.0
        total = np.asarray(self.total, dtype=np.float64)
        out = np.zeros(len(self.sources), dtype=np.float64)
        ok = total > 0
        if self.n > 1:
            out[ok] = r[ok] / total[ok]
            if wf_improved:
                out[ok] *= r[ok] / (self.n - 1)
        return out

    def diameter(self):
        """The largest eccentricity (inf if some source misses a target; 0 without sources)."""
        if not self.reaches_all.all():
            return math.inf
        return self.eccentricity.max(initial=0).item()

    def radius(self):
        """The smallest eccentricity (inf if every source misses a target; 0 without sources)."""
        finite = self.eccentricity[self.reaches_all]
        if finite.size:
            return finite.min().item()
        return math.inf if len(self.sources) else 0

    def center(self) -> np.ndarray:
        """Sources whose eccentricity is the radius (labels where the input has them)."""
        radius = self.radius()
        if math.isinf(radius):
            return self.vertices
        return self.vertices[self.reaches_all & (self.eccentricity == radius)]

    def periphery(self) -> np.ndarray:
        """Sources whose eccentricity is the diameter (labels where the input has them)."""
        diameter = self.diameter()
        if math.isinf(diameter):
            return self.vertices[~self.reaches_all]
        return self.vertices[self.eccentricity == diameter]

    def total_distance(self):
        """Sum of every finite distance counted (exact: a Python int for integer distances)."""
        return (math.fsum if self.total.dtype.kind == "f" else sum)(self.total.tolist())

    def wiener_index(self):
        """Sum of the distances between pairs: ordered pairs, or unordered ones when the
        distances are symmetric and every vertex is a source (inf if some pair is unreachable)."""
        if not self.reaches_all.all():
            return math.inf
        total = self.total_distance()
        if self.symmetric and len(self.sources) == self.n:
            return total // 2 if isinstance(total, int) else total / 2
        return total

    def average_distance(self):
        """Mean distance over (source, target) pairs of distinct vertices (inf if some pair is
        unreachable); exact division of the exact sum."""
        if not self.reaches_all.all():
            return math.inf
        return self.total_distance() / self.pairs if self.pairs else 0.0

    def global_efficiency(self) -> float:
        """Mean of 1/d over (source, target) pairs of distinct vertices (1/inf = 0)."""
        return math.fsum(self.harmonic.tolist()) / self.pairs if self.pairs else 0.0


def source_slices(k: int, parts: int, align: int = 64) -> list[tuple[int, int]]:
    """``parts`` consecutive ``(lo, hi)`` slices of ``range(k)`` cut at multiples of ``align``
    (one bit-parallel BFS batch), as even as that allows; some may be empty when k is small.

    >>> source_slices(200, 3)
    [(0, 64), (64, 128), (128, 200)]
    >>> source_slices(10, 2)
    [(0, 0), (0, 10)]
    """
    chunks = -(-k // align)
    cuts = [min(k, align * (chunks * r // parts)) for r in range(parts + 1)]  # the last is k
    return list(zip(cuts[:-1], cuts[1:]))


def merge_stats(parts: list) -> DistanceStats:
    """One `DistanceStats` from parts over consecutive slices of the sources (the ranks of
    `apsp.distributed.stats`), in order: entries concatenated, histograms added."""
    first = parts[0]
    hist = None
    if first.histogram is not None:
        hist = np.zeros(max(len(p.histogram) for p in parts), dtype=np.int64)
        for p in parts:
            hist[:len(p.histogram)] += p.histogram
    # an exact (object) total among int64 ones makes them all Python ints
    joined = {name: np.concatenate([getattr(p, name) for p in parts])
              for name in ("sources", "reachable", "total", "eccentricity", "harmonic")}
    return replace(first, **joined, pairs=sum(p.pairs for p in parts), histogram=hist,
                   info={**first.info, "parts": [p.info for p in parts]})


def distance_stats(graph: GraphLike, sources: ArrayLike | None = None, *, targets: ArrayLike | None = None,
                   direction: Direction = "out", method: StatsMethod = "auto", backend: Backend = "auto",
                   dtype: DtypeChoice = None, histogram: bool = False, directed: bool = True,
                   unweighted: bool = False, progress: bool | None = None, host_memory: int | str | None = None,
                   gpu_memory: int | str | None = None, device: str | None = None) -> DistanceStats:
    """Per-source reductions of the shortest distances, computed without the distance matrix.

    Parameters
    ----------
    graph : Graph, EdgeList, array_like, scipy sparse matrix, list of tuples, str or os.PathLike
        Anything `apsp.as_graph` reads.
    sources : array_like of int or str, optional
        The vertices to reduce rows of (default every vertex), in that order: labels where the
        input names its vertices (SNAP ids, GraphML node ids), indices 0..n-1 otherwise.
    targets : array_like of int or str, optional
        Only distances to these vertices count (default every vertex); labels as ``sources``.
    direction : {"out", "in"}
        Distances from each source ("out") or to it ("in": the searches run on the
        reversed graph; networkx's closeness and harmonic centrality use these).
    method : {"auto", "bfs", "dijkstra", "johnson", "nd-rows"}
        The search (`choose_stats_method` for "auto"); "nd-rows": rows of the distance matrix from
        the nested dissection's elimination (non-negative weights), which "auto" takes on the CPU
        where the cost model prices it below Dijkstra (graphs with small separators: grids, meshes,
        roads, k-NN graphs).
    backend : {"auto", "cpu", "gpu"}
        Where the searches run. The GPU runs the bit-parallel BFS (unit weights) on blocks
        of sources, and for non-negative weights nested-dissection Floyd-Warshall in core
        (``method="auto"``), its rows reduced on the device, or "nd-rows" (the factors
        uploaded once, blocks of sources' rows solved and reduced there; 32-bit integer or
        float distances): the plan prices them against Dijkstra and the CPU's rows; "auto"
        weighs the GPU when a CUDA device is usable.
    dtype : dtype-like, optional
        The distance dtype of weighted searches (default the narrowest exact one);
        hop counts are always integers.
    histogram : bool
        Also count the distances by value (integer distances only).
    directed, unweighted : bool
        As in `apsp.as_graph`.
    progress : bool or None
        A progress bar over the sources (None: on a terminal only).
    host_memory : int or str, optional
        RAM budget of the working set (default what the system has available).
    gpu_memory : int or str, optional
        GPU memory for a block's bit arrays (default what the device has free).
    device : str, optional
        The GPU to run on ("cuda:1"; default this process's: its node rank's GPU under MPI, as
        `apsp.gpu.rank_device` says, else the first).

    Returns
    -------
    DistanceStats

    Raises
    ------
    MemoryPlanError
        The working set does not fit ``host_memory``.
    NegativeCycleError
        Johnson met a negative cycle.
    ValueError, DtypeError
        Bad arguments, or a dtype too narrow for the graph's distances.
    BackendUnavailableError
        ``backend="gpu"`` without a usable GPU.
    """
    from .api import as_graph, source_vertices
    from .graph import Graph
    from .plan import make_stats_plan

    check_choice("direction", direction, DIRECTIONS)
    check_choice("backend", backend, BACKENDS)
    g = as_graph(graph, directed=directed, unweighted=unweighted)
    n = g.n
    labels = g.labels
    src = np.arange(n, dtype=np.int64) if sources is None else source_vertices(sources, n, labels)
    mask = np.zeros(n, dtype=np.bool_)
    mask[slice(None) if targets is None else source_vertices(targets, n, labels)] = True
    symmetric = g.is_symmetric()
    if direction == "in" and not symmetric:
        g = Graph(n=n, csr=g.reversed_csr(), source=g.source)
    plan = make_stats_plan(g, method, backend, dtype, sources=len(src), histogram=histogram,
                           host_memory=host_memory, gpu_memory=gpu_memory, device=device)
    chosen, reason, where, dt, batched = plan.method, plan.reason, plan.backend, plan.dtype, plan.bit_parallel
    t0 = time.perf_counter()
    gpu_info = {}
    # a source without out-edges reaches only itself: no search, so isolated vertices cost O(1)
    searched = np.diff(g.to_csr().indptr)[src] > 0
    all_src, src = src, src[searched]
    if not len(src):
        acc, hist = _nothing_searched(dt), (np.zeros(1, dtype=np.int64) if histogram else None)
    elif where == "gpu":
        from .costs import nd_gpu_budget, reduction_words
        from .engine import SolveOptions
        from .gpu import give_back_memory
        from .gpu.reductions import bfs_stats, ndfw_stats

        facts = plan.machine  # measured once by the plan
        assert facts is not None  # the plan runs on the GPU
        try:
            if chosen == _ROWS_METHOD:
                acc, hist = _dissection_rows(g, src, mask, dt, histogram, plan.block_rows, progress,
                                             backend="gpu", device=facts.device)
            elif plan.by_dissection:
                acc, gpu_info = ndfw_stats(g, src, mask, dt, budget=nd_gpu_budget(g, SolveOptions(dtype=dt), facts),
                                           device=facts.device, progress=progress)
            else:
                acc, gpu_info = bfs_stats(g, src, mask, words=reduction_words(g, facts, gpu_memory),
                                          device=facts.device, progress=progress)
                batched = True
            if chosen != _ROWS_METHOD:
                hist = None
        except BaseException as exc:  # the card as it was found, also after a failure
            give_back_memory(exc)
            raise
        give_back_memory()  # so that the next call plans against the whole card
    elif chosen == _ROWS_METHOD:
        acc, hist = _dissection_rows(g, src, mask, dt, histogram, plan.block_rows, progress)
    elif batched:
        acc, hist = _bfs_batched(g, src, mask, histogram, progress)
    else:
        acc, hist = _searched(g, src, mask, chosen, dt, histogram, plan.block_rows, progress)
    acc, src = _with_unsearched(acc, searched, mask[all_src]), all_src
    if hist is not None:
        hist[0] += int((mask[src] & ~searched).sum())  # their own distance 0
        hist = np.trim_zeros(hist, "b")
    count, total, ecc, harmonic = acc
    ntargets = int(mask.sum())
    return DistanceStats(n=n, sources=src, targets=ntargets, direction=direction,
                         method=chosen, reason=reason, dtype=dt, reachable=count, total=total,
                         eccentricity=ecc, harmonic=harmonic,
                         pairs=len(src) * ntargets - int(mask[src].sum()), histogram=hist,
                         symmetric=symmetric, labels=labels,
                         info={"seconds": time.perf_counter() - t0, "memory": plan.memory,
                               "bit_parallel": batched, "backend": where, **gpu_info})


def _nothing_searched(dt) -> tuple:
    """The accumulators of no source: (count, total, eccentricity, harmonic)."""
    kept = np.int64 if dt.kind in "iu" else np.float64
    return tuple(np.zeros(0, dtype=t) for t in (np.int64, kept, kept, np.float64))


def _with_unsearched(acc, searched, own_target) -> tuple:
    """The searched sources' accumulators spread over every source; a source not searched reaches
    itself alone (counted where it is a target, at distance 0)."""
    out = []
    for k, part in enumerate(acc):
        whole = np.zeros(len(searched), dtype=part.dtype)  # object sums start at int 0
        if k == 0:
            whole[:] = own_target
        whole[searched] = part
        out.append(whole)
    return tuple(out)


def _bfs_batched(g, src, mask, histogram, progress):
    """Bit-parallel BFS over the batches holding ``src``, reduced level by level."""
    from .cpu.bfs import PUSH_FACTOR, WORD, csr_arrays
    from .cpu.reductions import bfs_stats_tasks
    from .cpu.threads import thread_count
    from .progress import progress_bar

    n = g.n
    arrays = csr_arrays(g)
    threads = thread_count()
    count, total, ecc = (np.zeros(n, dtype=np.int64) for _ in range(3))
    harmonic = np.zeros(n, dtype=np.float64)
    hist = np.zeros((threads, n + 1), dtype=np.int64)  # the kernels count levels either way
    batches = np.unique(src // WORD)
    counted = np.zeros(n, dtype=np.bool_)  # a batch's other sources are searched, not counted
    counted[src] = True
    done = 0
    chunk = threads
    with progress_bar(len(batches) * WORD, progress, desc=f"stats bfs n={n}", unit="source") as bar:
        while done < len(batches):
            part = batches[done:done + chunk]
            t0 = time.perf_counter()
            bfs_stats_tasks(arrays, part, PUSH_FACTOR, mask, counted, (count, total, ecc, harmonic), hist)
            spent = time.perf_counter() - t0
            bar.update(len(part) * WORD)
            done += len(part)
            chunk = max(threads, int(CHUNK_SECONDS / max(spent / len(part), 1e-9)))
    acc = (count[src], total[src], ecc[src], harmonic[src])
    return acc, hist.sum(axis=0) if histogram else None


def _searched(g, src, mask, kind, dt, histogram, block_rows, progress):
    """One search per source in blocks of ``block_rows`` rows, each block reduced then dropped."""
    from .cpu.reductions import CARRY_UNIT, reduce_rows
    from .cpu.searches import SearchGraph, search_rows
    from .cpu.threads import thread_count
    from .progress import progress_bar

    k, n = len(src), g.n
    sg = SearchGraph.from_csr(g.to_csr(), dt)
    integer = dt.kind in "iu"
    unreachable = exactness.unreachable_value(dt)
    kept = np.int64 if integer else np.float64  # sums and extremes of the distances
    count, total, ecc, harmonic = (np.zeros(k, dtype=t) for t in (np.int64, kept, kept, np.float64))
    carry = np.zeros(k, dtype=np.int64) if integer else None
    hist = np.zeros((thread_count(), 1), dtype=np.int64) if histogram else None
    with progress_bar(k, progress, desc=f"stats {kind} n={n}", unit="source") as bar:
        for lo in range(0, k, block_rows):
            hi = min(k, lo + block_rows)
            # Johnson finds its potentials again per block: one Bellman-Ford, cheap next to k searches
            block = search_rows(sg, src[lo:hi], kind).dist
            part = (count[lo:hi], total[lo:hi], None if carry is None else carry[lo:hi],
                    ecc[lo:hi], harmonic[lo:hi])
            reduce_rows(block, unreachable, mask, part)
            if hist is not None:
                hist = _block_histogram(block, unreachable, mask, ecc[lo:hi], hist)
            bar.update(hi - lo)
            del block
    if carry is not None and carry.any():
        total = np.array([int(t) + int(c) * CARRY_UNIT for t, c in zip(total, carry)], dtype=object)
    return (count, total, ecc, harmonic), None if hist is None else hist.sum(axis=0)


#: the method whose rows come from the nested dissection's factors, on either backend
_ROWS_METHOD = "nd-rows"


def _dissection_rows(g, src, mask, dt, histogram, block_rows, progress, backend="cpu", device=None):
    """Rows from the nested dissection's factors (`apsp.supernodal`, eliminated on the host), each
    block of sources reduced where it is computed and dropped: the method record's row engine of
    ``backend`` (`apsp.cpu.rowsolve.rows_stats`, or `apsp.gpu.rowsolve.rows_stats` on ``device``)."""
    from .cpu.reductions import CARRY_UNIT
    from .dissection import plan
    from .methods import METHOD, load
    from .progress import progress_bar
    from .supernodal import ROWS_LEAF, eliminate

    nd = plan(g, 1, ROWS_LEAF, 1)
    factors = eliminate(g, dt, nd)
    rows_stats = load(METHOD[_ROWS_METHOD].row_engines[backend])
    on_device = {} if backend == "cpu" else {"device": device}
    with progress_bar(len(src), progress, desc=f"stats nd-rows n={g.n}", unit="source") as bar:
        (count, total, carry, ecc, harmonic), hist = rows_stats(
            factors, nd.position[src], nd.position, mask, histogram, block_rows, max_bins=MAX_HISTOGRAM_BINS,
            on_block=bar.update, **on_device)
    del factors
    if carry is not None and carry.any():
        total = np.array([int(t) + int(c) * CARRY_UNIT for t, c in zip(total, carry)], dtype=object)
    return (count, total, ecc, harmonic), hist


def _block_histogram(block, unreachable, mask, ecc, hist):
    """Add ``block``'s finite distances to ``hist`` (threads x bins), grown to the block's largest."""
    from .cpu.reductions import histogram_rows

    if block.size and (block.min() < 0):
        raise ValueError("histogram=True needs non-negative distances; this graph has negative ones")
    bins = int(ecc.max(initial=0)) + 1
    if bins > MAX_HISTOGRAM_BINS:
        raise ValueError(f"histogram=True: a distance of {bins - 1} needs more than "
                         f"{MAX_HISTOGRAM_BINS} bins; leave the histogram out")
    if bins > hist.shape[1]:
        hist = np.pad(hist, ((0, 0), (0, bins - hist.shape[1])))
    histogram_rows(block, unreachable, mask, hist)
    return hist
