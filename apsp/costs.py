"""How long each method should take on a graph: the estimates the automatic choice compares.

Every estimate is work counted from the graph's facts (n, m, the weights, the dtype's width, nested
dissection's ordering where one exists) over a rate of one machine kind (`Rates`), plus the fixed
costs: a GPU call's setup, the result's copy to the host, nd-fw's per-round overhead.

`estimate` prices one ``(method, backend)``; `estimates` prices several and decides whether nd-fw's
ordering is worth building (`nd_plausible`): a dissection is built only when a cheap bound from two
breadth-first sweeps (`separator_proxy`) says nd-fw may beat the other candidates; random and
expander-like graphs, whose middle BFS level holds a large share of the vertices, are priced from
the bound alone and never dissected. `fastest` is the smallest estimate.

What a call pays once in a process is priced where a method needs it and the process has not paid it:
torch's import (`TORCH_IMPORT_SECONDS`) and scipy's search module (`SEARCH_IMPORT_SECONDS`). The
first compile of a method's Numba kernels is not: it is paid once per machine and kept in Numba's
disk cache (on the 2-core box, cold: FW 3.5 s, Dijkstra and BFS 4-5.5 s, nd-fw 10-13 s), so pricing it
would keep the automatic choice on whichever method compiled first (there, a 10,000-vertex road graph
would stay on Dijkstra, 2.7 s a call, because nd-fw's 0.4 s solve had a 13 s compile still to come).
The CLI says when a compile makes the user wait.

`rates_for` picks the table: a calibration of this machine (``apsp bench calibrate``, cached as
JSON in the user's cache directory, `cache_path`) when one matches it, else the shipped defaults
for the GPU named (`SHIPPED`: ``"H100"``, ``"H200"``, by substring) or the CPU (``"cpu"``).
"""
from __future__ import annotations

import functools
import json
import os
import platform
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import numpy as np

from . import exactness
from .calibrations import RATE_SPREAD, cache_path, read_tables, save_table
from .dissection import DEFAULTS, bfs_levels, default_plan
from .exactness import dtype_attempts, dtype_fits, skip_bound_to_fail
from .gpu.footprint import fw_needs, nd_needs
from .methods import FUNCTIONS, METHOD, SEARCHES, TABLE
from .sizes import matrix_bytes

if TYPE_CHECKING:
    from .engine import SolveOptions
    from .engine import NdGpuBudget
    from .gpu import MachineFacts
    from .dissection import Dissection
    from .graph import Graph


@dataclass(frozen=True)
class Rates:
    """One machine kind's speeds. Work units: Floyd-Warshall and nd-fw count min-plus updates
    (n^3 for dense FW, `Dissection.updates` for nd-fw), Dijkstra ``n (m + n)`` queue steps with the
    bucket queue (`dijkstra_units`), BFS ``n (m + n)`` edge visits. Rates are per second; the
    ``*_seconds`` fields are fixed costs. FW rates are int32's, other widths scale by
    ``fw_dtype_speedup`` (itemsize -> factor)."""

    name: str = "cpu"
    fw_cpu: float = 3.0e10
    ndfw_cpu: float = 2.0e10
    #: a round of nd-fw on cores not busy with other work (the busy case is the next field): 2.5 ms,
    #: between the 1 ms of an idle pair and a load average near 1 (BENCHMARKS.md section 21)
    nd_round_cpu_seconds: float = 2.5e-3
    #: the same with the cores busy with other work (`rates_for` switches to it by the load average):
    #: 5 ms, road-6000's 67 rounds with a busy-loop process on one of the 2 cores (0.50 s, of which
    #: 0.16 s is the updates at `ndfw_cpu`; BENCHMARKS.md section 28). It was 15 ms while the rounds'
    #: parallel regions waited at OpenMP's barriers for a preempted thread; the rounds' ranges are
    #: now handed to whichever thread is free
    nd_round_cpu_busy_seconds: float = 5e-3
    dijkstra_cpu: float = 1.3e8
    bfs_cpu: float = 1.2e9
    #: a Dijkstra or Johnson call's fixed cost (the searches' graph and queue, the threads' start):
    #: 3.0 ms on 77 vertices on both the 2-core machine and the H100 host
    search_call_seconds: float = 2.5e-3
    #: host bytes per second of writing a fresh n x n result (first touch of its pages)
    result_fill: float = 6.0e9
    fw_gpu: float = 1.4e13
    #: dense FW on the GPU reaches half its rate at this n (small products do not fill the chip)
    fw_gpu_half_n: float = 1500.0
    ndfw_gpu: float = 1.0e13
    #: nd-fw on the GPU reaches half its rate at this n: a small graph's levels are narrow products
    ndfw_gpu_half_n: float = 30000.0
    #: building nd-fw's ordering (METIS bisections, separators): seconds per edge and level of
    #: bisection (`ordering_seconds`); host work. 190-440 ns on the 2-core machine (2026-11-26)
    order_seconds_per_edge: float = 4e-7
    #: and each piece bisected (its METIS call, separator and components, about n / leaf of them):
    #: small graphs' orderings took 2.5-3.5 times their edges' share (1,500-10,000 vertices, 2026-11-27)
    order_seconds_per_node: float = 2.5e-3
    #: one batched round of a dissection level on the GPU (its launches)
    nd_round_gpu_seconds: float = 1e-4
    #: the host's time to launch one dense FW round on the GPU (its phases' kernels, the look-ahead):
    #: 0.5-1.7 ms a round on the H100 host (whole calls' compute stage at n = 1500-4096, int16, where
    #: the rounds' work is far less, 2026-11-26; the CUDA driver runtime at the top of that range)
    fw_round_gpu_seconds: float = 1.0e-3
    bfs_gpu: float = 5.0e11
    #: a GPU call's fixed cost (BFS: setup, launches, synchronisation); FW's and nd-fw's
    #: (the start matrix on the device, the cut-off check: n = 2642 roads took 14 ms in all)
    gpu_call_seconds: float = 3e-3
    gpu_fw_call_seconds: float = 8e-3
    h2d: float = 1.6e10
    d2h: float = 1.6e10
    fw_dtype_speedup: tuple[tuple[int, float], ...] = ((1, 1.65), (2, 1.65), (4, 1.0), (8, 0.45))
    fw_gpu_dtype_speedup: tuple[tuple[int, float], ...] = ((1, 1.9), (2, 1.9), (4, 1.0), (8, 0.25))
    #: where the rates came from ("shipped" or a calibration's date and machine)
    source: str = "shipped"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Rates":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown rate fields {', '.join(unknown)}")
        values = dict(data)
        for key in ("fw_dtype_speedup", "fw_gpu_dtype_speedup"):
            if key in values:
                values[key] = tuple((int(a), float(b)) for a, b in values[key])
        return cls(**values)


#: the H100 host (16 Xeon cores, one H100 80 GB HBM3), measured there by `apsp bench calibrate`
#: on 2026-11-26 (BENCHMARKS.md section 18): blocked FW 1.04e11 updates/s (int16 1.14x), Dijkstra
#: 1.25e9 steps/s (1.1e9 since), bit-parallel BFS 1.1e10 visits/s, a fresh result's pages 4.8 GB/s, nd-fw rounds
#: 1.3 ms on the CPU; on the GPU dense FW int32 1.38e13 (int16 1.49x at n = 8192), nd-fw 4.4e12
#: updates/s with 0.87 ms per batched round (grids of 64^2 and 160^2), BFS 1.1e11 visits/s, a call
#: 2.5 ms (BFS) and 3.3 ms (FW). The ordering: 1.6 us an edge (METIS on a 350 x 350 grid, 0.8 s of
#: the default call's setup). The H200 host's table is the H100's with its GPU's rates (BENCHMARKS.md
#: section 1: 14 against 12.6 T updates/s) and its own Dijkstra rate: its searches ran 1.30x the H100
#: host's estimates (median of 22 whole calls on the real-graph suite, BENCHMARKS.md section 21).
#: The GPU's nd-fw and FW rounds were then fitted to whole calls on the real-graph suite (n = 77-10,000,
#: every method timed with torch loaded, BENCHMARKS.md section 18) and to the 250 and 350 square grids'
#: compute (section 17): nd-fw 8.6-8.9e12 updates/s at n = 62,500-122,500 and 0.7-1.5e12 at
#: n = 3,000-10,000 (`ndfw_gpu_half_n`), 0.1-0.3 ms per batched round, an ordering 0.3 us per edge
#: and level of bisection (0.8 s for the 350 x 350 grid); a dense FW round 0.5-1.7 ms (1.2 ms at
#: n = 4,096-10,000). Refitted on the suite's H100 and H200 runs of 2026-11-27 (BENCHMARKS.md
#: section 22): a dense FW round 0.5-1.0 ms at n = 1,022-2,000, and the H100 host's searches
#: 1.06-1.19x the estimate at 1.25e9 steps/s.
_H100 = Rates(name="H100", fw_cpu=1.04e11, ndfw_cpu=1.04e11, nd_round_cpu_seconds=1.3e-3, dijkstra_cpu=1.1e9,
              bfs_cpu=1.1e10, result_fill=4.8e9, fw_gpu=1.38e13, ndfw_gpu=1.1e13, order_seconds_per_edge=3e-7,
              order_seconds_per_node=2e-3,
              nd_round_gpu_seconds=3e-4, fw_round_gpu_seconds=1.0e-3, bfs_gpu=1.1e11, gpu_call_seconds=2.5e-3,
              gpu_fw_call_seconds=3.3e-3,
              fw_dtype_speedup=((1, 1.14), (2, 1.14), (4, 1.0), (8, 0.45)),
              fw_gpu_dtype_speedup=((1, 1.49), (2, 1.49), (4, 1.0), (8, 0.25)))
#: shipped tables. "cpu": the 2-core dev machine (AMD EPYC, shared with other sessions, load
#: average 2-5), 2026-11-26: `apsp bench calibrate` (dense FW int32 15-34 G updates/s, int16
#: 1.5-1.7x that; Dijkstra with the bucket queue 0.5-1.3e8 steps/s; BFS 0.8-1.3 G visits/s;
#: nd-fw rounds 7-19 ms with the cores oversubscribed; a fresh result's pages 4-8 GB/s) and
#: benchmarks/real_graphs.py (Dijkstra 0.95-3.5e8 steps/s on its graphs, median 1.5e8, counting
#: the empty buckets crossed; nd-fw rounds 15-18 ms even below a load average of 2 on 2 cores,
#: about 1 ms on an idle pair, BENCHMARKS.md section 12).
SHIPPED = {
    "cpu": Rates(name="cpu"),
    "H200": replace(_H100, name="H200", fw_gpu=_H100.fw_gpu * 14 / 12.6, ndfw_gpu=_H100.ndfw_gpu * 14 / 12.6,
                    dijkstra_cpu=9.6e8),
    "H100": _H100,
}


# -- the cache of calibrations ------------------------------------------------

@functools.lru_cache(maxsize=None)
def machine_key(device_name: str | None = None) -> str:
    """This machine's identity in the cache: CPU model, core count and the GPU's name (read once
    a process: they do not change under it)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model} | {os.cpu_count()} cores | {device_name or 'no GPU'}"


def load_calibrations(path: Path | None = None) -> dict[str, Rates]:
    """The cached tables by machine key: those valid (`apsp.calibrations.read_tables`: types, and
    every number within `RATE_SPREAD` of the shipped tables' range); empty without a cache."""
    return read_tables(path or cache_path(), Rates.from_json, _field_bounds())


#: the cache file's signature (path, inode, size, modification time) and its tables, as last read
_READ: dict = {}


def _calibrations() -> dict[str, Rates]:
    """`load_calibrations` of the cache file, read again only when its signature changed (one stat
    a plan, not a read and a parse: a tiny graph's plan is a fraction of a millisecond)."""
    path = cache_path()
    try:
        st = os.stat(path)
        signature: tuple = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        signature = (str(path), None)
    if _READ.get("signature") != signature:
        _READ.update(signature=signature, tables=load_calibrations(path))
    return _READ["tables"]


def save_calibration(rates: Rates, key: str, path: Path | None = None) -> Path:
    """Store ``rates`` under ``key`` beside the other machines' tables (under a lock, written whole
    or not at all)."""
    return save_table(path or cache_path(), key, rates.to_json(), load_calibrations)


@functools.lru_cache(maxsize=None)
def _field_bounds() -> dict:
    """Each number field's range in a calibration: the shipped tables' smallest and largest value,
    widened by `RATE_SPREAD` (pair fields: None, their factors checked by the reader)."""
    bounds: dict = {}
    for f in fields(Rates):
        values = [getattr(t, f.name) for t in SHIPPED.values()]
        if isinstance(values[0], tuple):
            bounds[f.name] = None
        elif isinstance(values[0], (int, float)):
            bounds[f.name] = (min(values) / RATE_SPREAD, max(values) * RATE_SPREAD)
    return bounds


def rates_for(device_name: str | None = None) -> Rates:
    """The rates for this machine with the GPU ``device_name`` (None: no GPU): a cached calibration
    of this machine if there is one, else the shipped table whose name the GPU's contains; nd-fw's
    rounds at their oversubscribed cost while `cpu_oversubscribed`. With
    ``APSP_RATES=shipped`` in the environment, the shipped table as it is (reproducible choices:
    the test suite sets it)."""
    if os.environ.get("APSP_RATES") == "shipped":
        return shipped_rates(device_name)
    cached = _calibrations().get(machine_key(device_name))
    rates = cached if cached is not None else shipped_rates(device_name)
    return replace(rates, nd_round_cpu_seconds=rates.nd_round_cpu_busy_seconds) if cpu_oversubscribed() else rates


#: (monotonic seconds, this process's CPU seconds) at the calls of the last minute
_own_cpu: list[tuple[float, float]] = []


def cpu_oversubscribed() -> bool:
    """Other work on most cores over the last minute, as on a shared machine: then nd-fw's many
    small parallel rounds each wait for a thread (on the 2-core machine rounds took 15-18 ms at load
    averages 1.5-3, about 1 ms idle). Other work: the 1-minute load average less this process's own
    (its CPU seconds per second since its calls of up to a minute ago; a process solving one graph
    after another keeps the load average up by itself), above 3/4 of the cores."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False
    cores = os.cpu_count() or 1
    if load <= 0.75 * cores:  # not even with this process's own share: its CPU clock not read (the
        return False  # read stalled for milliseconds in a threaded process on a loaded VM)
    now, cpu = time.monotonic(), time.process_time()
    if not _own_cpu or now - _own_cpu[-1][0] >= 1.0:
        _own_cpu.append((now, cpu))
    while now - _own_cpu[0][0] > 60.0:
        del _own_cpu[0]
    then, cpu_then = _own_cpu[0]
    own = (cpu - cpu_then) / (now - then) if now - then >= 1.0 else 0.0
    return load - own > 0.75 * cores


def shipped_rates(device_name: str | None = None) -> Rates:
    """The shipped table for the GPU ``device_name``: the first of `SHIPPED` whose name it
    contains, H100's for other GPUs, ``"cpu"`` without one."""
    for name, rates in SHIPPED.items():
        if name != "cpu" and device_name and name.lower() in device_name.lower():
            return rates
    return SHIPPED["H100"] if device_name else SHIPPED["cpu"]


def gpu_name() -> str | None:
    """The name of the GPU the automatic choice may use (`apsp.gpu.gpu_available`), else None."""
    from .gpu import gpu_available

    ok, name = gpu_available()
    return name if ok else None


def this_machine() -> Rates:
    """`rates_for` this machine and its GPU: one table prices both backends (a GPU host's CPU side
    is not the 2-core machine's)."""
    return rates_for(gpu_name())


# -- work counted from the graph ------------------------------------------------

#: the bucket queue takes whole-number weights below this (`apsp.cpu.searches.MAX_BUCKETS`)
MAX_BUCKET_WEIGHT = 1 << 16
#: a binary heap's search costs about this many bucket-queue steps per log2(n)
HEAP_STEP = 1.0 / 6.0


def search_units(g: Graph) -> float:
    """Edge and vertex visits of one search per source: ``c (m + c)`` for the sources of the
    largest component (``c`` vertices, `separator_proxy`'s; a sparse graph's others reach little),
    one visit for every other source."""
    n, m = float(g.n), float(g.nnz)
    c = float(separator_proxy(g)[1]) if sparse_enough(g) else n
    return c * (m + c) + (n - c)


def dijkstra_units(g: Graph, reweighted: bool = False) -> float:
    """One search per source: `search_units` queue steps with the bucket queue (small whole-number
    weights; ``reweighted``: Johnson's, whose weights stay whole and grow by at most max|w|), plus
    the empty buckets it crosses: about the source's eccentricity in weight units, taken as the
    BFS depth times the mean weight (roads' lengths: 1.4-1.9 times slower per step than graphs of
    weights 1..100 on the H100 host, 2026-11-26); ``log2(n) / 6`` times the steps with the heap."""
    known = g.derived.dijkstra_units  # every automatic call asks
    if reweighted not in known:
        units = search_units(g)
        n = float(g.n)
        bound = MAX_BUCKET_WEIGHT // 2 if reweighted else MAX_BUCKET_WEIGHT
        buckets = g.integral and (reweighted or not g.has_negative_weights) and g.max_abs_weight < bound
        if not buckets:
            units *= max(1.0, HEAP_STEP * np.log2(max(n, 2.0)))
        elif sparse_enough(g) and g.nnz:
            crossed = _sweep(g)[2] * float(np.abs(g.to_csr().data).mean())
            units += separator_proxy(g)[1] * min(crossed, 4.0 * (n + g.nnz))  # the queue's budget
        known[reweighted] = units
    return known[reweighted]




def solve_itemsize(g: Graph, method: str) -> int:
    """Bytes per entry the ``method`` most likely solves and returns in, by its dtype ladder: FW and
    nd-fw the dtype plan's first attempt that a distance already found (`Graph.longest_distance_found`,
    cached) does not rule out, the searches the worst case's dtype, BFS uint8 (a hop count up to 254).
    Kept on the graph: every estimate asks."""
    found = g.derived.longest_found is not None
    known = g.derived.solve_itemsize
    if (method, found) in known:
        return known[method, found]
    # whole numbers no dtype holds exactly are solved, when asked, in float64: priced so
    facts = g.distance_bound, g.has_negative_weights, g.integral_for(None) and dtype_fits(
        np.float64, g.distance_bound, g.has_negative_weights), g.max_abs_weight
    ladder = METHOD[method].ladder
    if ladder == "hops":
        size = 1 if g.n <= 255 else 2 if g.n <= 65535 else 4
    elif ladder == "saturating":
        attempts = dtype_attempts(*facts)
        # only a distance already found rules the narrow attempt out: pricing runs no search
        if attempts[0].checked and len(attempts) > 1 and found:
            attempts = skip_bound_to_fail(attempts, g.longest_distance_found(), g.max_abs_weight)[0]
        size = int(np.dtype(attempts[0].dtype).itemsize)
    else:
        size = int(np.dtype(dtype_attempts(*facts, saturating=False)[0].dtype).itemsize)
    known[method, found] = size
    return size


# -- nested dissection's work, with and without its ordering ------------------------

#: nd-fw is priced from its ordering only up to this many edges per vertex; denser graphs have
#: separators too large for it to beat dense FW (counted as n^3 work, no BFS either)
ND_MAX_EDGES_PER_VERTEX = 16
#: `nd_proxy_work`'s model against the ordering's counted updates, fitted on grids, Delaunay
#: meshes, k-NN, road-like, random and R-MAT graphs of 1,000-100,000 vertices (benchmarks/
#: real_graphs.py --proxy, 2026-11-26): counted / proxy 0.30-1.67, so the counted work lies within
#: a factor ``ND_PROXY_SPREAD`` of the proxy either way (BFS levels overestimate the separators
#: METIS finds on large meshes)
ND_PROXY_FACTOR = 0.6
ND_PROXY_SPREAD = 3.5
#: separators wider than this many sqrt(c) are not planar-like: on random, power-law (R-MAT) and
#: expander graphs s is 25-65 sqrt(c) (roads, meshes, grids, k-NN: 1-4.6), nd-fw's counted work
#: is 0.3-0.8 c^3, near dense FW's, and its ordering is never built to find out
ND_PLANAR_SEPARATOR = 8.0


def _structure(g: Graph):
    """The symmetric pattern the dissection orders (cached on the graph)."""
    if g.derived.structure is None:
        csr = g.to_csr()
        sym = (csr + csr.T).tocsr()
        sym.data = np.ones_like(sym.data, dtype=np.int8)
        g.derived.structure = sym
    return g.derived.structure


def sparse_enough(g: Graph) -> bool:
    """Few enough edges per vertex (`ND_MAX_EDGES_PER_VERTEX`) for the BFS sweeps to be worth it."""
    return g.nnz <= ND_MAX_EDGES_PER_VERTEX * g.n


def separator_proxy(g: Graph) -> tuple[int, int]:
    """``(s, c)``: the width of the BFS level that holds the median vertex of the largest
    component (``c`` vertices), levels from a pseudo-peripheral vertex (two sweeps). That level
    separates the component's two halves; on planar-like graphs (roads, meshes, grids, geometric)
    ``s`` is about sqrt(c), on random graphs a large fraction of ``c``. Costs three BFS sweeps
    (O(m)); cached on the graph."""
    return _sweep(g)[:2]


def _sweep(g: Graph) -> tuple[int, int, int]:
    """`separator_proxy`'s ``(s, c)`` and the number of BFS levels (the component's depth in hops)."""
    if g.derived.sweep is None:  # a graph without vertices has no component
        g.derived.sweep = (0, 0, 0) if g.n == 0 else _middle_level(
            bfs_levels(_structure(g), _largest_component_vertex(g)))
    return g.derived.sweep


def _largest_component_vertex(g: Graph) -> int:
    from scipy.sparse.csgraph import connected_components

    _, label = connected_components(_structure(g), directed=False)
    return int(np.argmax(label == np.argmax(np.bincount(label))))


def _middle_level(level: np.ndarray) -> tuple[int, int, int]:
    level = level[level >= 0]
    c = len(level)
    if c == 0:
        return 0, 0, 0
    counts = np.bincount(level)
    return int(counts[np.sort(level)[c // 2]]), c, len(counts)


def nd_proxy_work(g: Graph, backend: str) -> tuple[float, float]:
    """nd-fw's (updates, rounds) from `separator_proxy`, without an ordering: the schedule of a
    balanced dissection of the largest component whose separators shrink as ``s (size / c)^a``,
    ``a = log s / log c`` within [1/2, 1] (planar-like graphs 1/2, expanders 1), each pivot round
    costing its reach (the subtree and every ancestor's separator) squared, times
    `ND_PROXY_FACTOR`; at most n^3. Graphs denser than `ND_MAX_EDGES_PER_VERTEX` are priced n^3."""
    tile, leaf = DEFAULTS[backend]
    n = float(g.n)
    if not sparse_enough(g) or g.n <= leaf:
        return n ** 3, n / tile + 1.0
    s, c = separator_proxy(g)
    a = min(1.0, max(0.5, np.log(max(s, 1)) / np.log(max(c, 2))))
    work, above, size, count = 0.0, 0.0, float(c), 1.0
    while size > leaf:
        sep = min(s * (size / c) ** a, size / 2)
        work += count * sep * (size + above) ** 2
        above, size, count = above + sep, (size - sep) / 2, count * 2
    work += count * size * (size + above) ** 2
    rest = n - c  # the other components: pieces of at most a leaf each
    work = ND_PROXY_FACTOR * work + rest * min(rest, float(leaf)) ** 2
    return min(work, n ** 3), n / tile + 2.0 * n / leaf


def nd_rounds(nd: Dissection, backend: str) -> float:
    """Rounds whose fixed cost nd-fw pays: one per tile of each node on the CPU; on the GPU a
    level's nodes run batched, one round per tile of the level's widest node."""
    if backend != "gpu":
        return float(sum(1 for _ in nd.rounds()))
    width = nd.end - nd.own_start
    return float(sum(-(-int(width[level].max()) // nd.tile) for level in map(np.asarray, nd.levels())))


def cached_ordering(g: Graph, backend: str):
    """The dissection nd-fw's default plan on ``backend`` uses, if it was built already."""
    tile, leaf = DEFAULTS[backend]
    return g.derived.dissections.get((tile, leaf, 1, 0))  # `apsp.dissection.plan`'s key


# -- the estimates ------------------------------------------------------------

#: seconds of torch's import in a process that has not imported it (3-5 s of the homework command
#: on the GPU hosts, DEVELOPING.md): the GPU engines of nd-fw and BFS run on torch tensors, dense FW
#: also on the CUDA driver (`apsp.plan.gpu_runtime`)
TORCH_IMPORT_SECONDS = 3.0


def _gpu_fixed(g: Graph, method: str, result_bytes: float, rates: Rates) -> float:
    """A GPU call: its setup, torch's import where the method's engine needs it and it is not loaded
    yet, the edges' copy in and the result's copy out."""
    import sys

    record = METHOD[method]
    call = getattr(rates, record.gpu_call)
    if not record.driver_runtime and "torch" not in sys.modules:
        call += TORCH_IMPORT_SECONDS
    return call + 12.0 * g.nnz / rates.h2d + result_bytes / rates.d2h


def estimate(g: Graph, method: str, backend: str, dtype=None, rates: Rates | None = None,
             ordering: Dissection | None = None, result: bool = True) -> float:
    """Seconds ``method`` should take on ``g`` on ``backend`` ("cpu" or "gpu") in ``dtype`` (None:
    the dtype plan's first), at ``rates`` (None: `rates_for` this machine): its record's estimate
    (`apsp.methods.Method.estimate`) plus, on the GPU, the call's fixed costs. nd-fw's work is
    counted from ``ordering`` (or the one cached on the graph by an earlier solve or `estimates`),
    else bounded by `nd_proxy_work`: this function never builds a dissection. ``result`` False:
    without the n x n result's writing and copy to the host (reductions that keep no matrix)."""
    rates = rates or this_machine()
    record = METHOD.get(method)
    if record is None:
        raise ValueError(f"no estimate for method {method!r}")
    on_gpu = backend == "gpu"
    if backend not in record.backends:
        raise ValueError(f"{method} runs on the {' and '.join(record.backends).upper()} only")
    itemsize = int(np.dtype(dtype).itemsize) if dtype is not None else solve_itemsize(g, method)
    seconds = FUNCTIONS[record.estimate](g, on_gpu, itemsize, rates, ordering)
    out = float(g.n) ** 2 * itemsize if result else 0.0
    if on_gpu:
        return float(seconds + _gpu_fixed(g, method, out, rates))
    return float(seconds + out / rates.result_fill)


def fw_seconds(g: Graph, on_gpu: bool, itemsize: int, rates: Rates, ordering=None) -> float:
    """Dense FW's n^3 updates at the dtype's rate."""
    n = float(g.n)
    speedup = dict(rates.fw_gpu_dtype_speedup if on_gpu else rates.fw_dtype_speedup).get(itemsize, 1.0)
    return _fw_gpu_seconds(n, speedup, rates) if on_gpu else n ** 3 / (rates.fw_cpu * speedup)


def reference_seconds(g: Graph, on_gpu: bool, itemsize: int, rates: Rates, ordering=None) -> float:
    """The oracle: dense FW's work a hundred times slower (numpy steps over whole matrices)."""
    return 100.0 * fw_seconds(g, on_gpu, itemsize, rates)


def nd_fw_seconds(g: Graph, on_gpu: bool, itemsize: int, rates: Rates, ordering=None) -> float:
    """nd-fw's counted updates (``ordering``, or the one cached) or their proxy, its rounds' fixed
    costs and, without an ordering, the ordering's own cost."""
    backend, n = ("gpu" if on_gpu else "cpu"), float(g.n)
    speedup = dict(rates.fw_gpu_dtype_speedup if on_gpu else rates.fw_dtype_speedup).get(itemsize, 1.0)
    nd = ordering if ordering is not None else cached_ordering(g, backend)
    if nd is not None:
        work, rounds, order = float(nd.updates()), nd_rounds(nd, backend), 0.0
    else:
        work, rounds = nd_proxy_work(g, backend)
        order = ordering_seconds(g, backend, rates)
    rate = (rates.ndfw_gpu * n / (n + rates.ndfw_gpu_half_n) if on_gpu else rates.ndfw_cpu) * speedup
    seconds = work / rate + (order + rounds * (rates.nd_round_gpu_seconds if on_gpu
                                               else rates.nd_round_cpu_seconds))
    if on_gpu and g.n <= DEFAULTS["gpu"][1]:
        # one leaf: dense FW's work on one node, in fewer launches than dense FW's rounds
        seconds = min(seconds, ND_ONE_LEAF_GPU * _fw_gpu_seconds(n, speedup, rates))
    return seconds


def dijkstra_seconds(g: Graph, on_gpu: bool, itemsize: int, rates: Rates, ordering=None) -> float:
    """One search per source (`dijkstra_units`)."""
    return dijkstra_units(g) / rates.dijkstra_cpu + rates.search_call_seconds


def johnson_seconds(g: Graph, on_gpu: bool, itemsize: int, rates: Rates, ordering=None) -> float:
    """Bellman-Ford's few passes, then searches on the reweighted graph."""
    return (dijkstra_units(g, reweighted=True) + 10.0 * g.nnz) / rates.dijkstra_cpu + rates.search_call_seconds


def bfs_seconds(g: Graph, on_gpu: bool, itemsize: int, rates: Rates, ordering=None) -> float:
    """One breadth-first search per source (`search_units`)."""
    return search_units(g) / (rates.bfs_gpu if on_gpu else rates.bfs_cpu)


#: the nested dissection's row solve (`apsp.supernodal`): its min-plus updates run at this share of
#: `Rates.ndfw_cpu` (lanes of a block of sources against nd-fw's blocked tiles; 1.0-2.0e9 updates a
#: second a thread on the 2-core dev box, 2026-11-28, against 2.0e10 for nd-fw on both cores)
ND_ROWS_SHARE = 0.15
#: its reductions: seconds per (source, target) on the whole of the 2-core dev box (the same day)
ND_ROWS_REDUCE_SECONDS = 1.5e-9
#: a graph's per-source row work by the proxy, in units of ``n sqrt(leaf)`` (grids: 4.1 at leaf 64)
ND_ROWS_PROXY = 5.0
#: the elimination's Python work per tree node (its front built, its panels kept), seconds
ND_ROWS_NODE_SECONDS = 1e-4


def nd_rows_plausible(g: Graph) -> bool:
    """Whether the row solve may pay: a sparse graph with planar-like separators (`nd_plausible`'s
    test without its price)."""
    if not sparse_enough(g) or g.n < 2:
        return False
    s, c = separator_proxy(g)
    return s <= ND_PLANAR_SEPARATOR * np.sqrt(c)


def nd_rows_work(g: Graph, ordering=None) -> tuple[float, float]:
    """``(per source row, elimination)`` min-plus updates of the row solve: counted from the
    dissection ``ordering`` (leaves of `apsp.supernodal.ROWS_LEAF`) and its boundaries where given,
    else by the proxy ``ND_ROWS_PROXY n sqrt(leaf)`` a row and ``sqrt(n)`` rows' worth to eliminate."""
    from .supernodal import ROWS_LEAF, boundaries, node_work

    if ordering is not None:
        row, elim = node_work(ordering, boundaries(g, ordering))
        return float(row), float(elim)
    row = ND_ROWS_PROXY * g.n * np.sqrt(ROWS_LEAF)
    return row, row * np.sqrt(max(g.n, 1)) * 4.0


def nd_rows_stats_seconds(g: Graph, sources: int, itemsize: int, rates: Rates, ordering=None) -> float:
    """The row solve's statistics for ``sources`` sources: the ordering (unless given: then it is
    built), the elimination, every source's row and its reduction."""
    from .supernodal import ROWS_LEAF

    row, elim = nd_rows_work(g, ordering)
    scale = rates.ndfw_cpu / SHIPPED["cpu"].ndfw_cpu  # this machine against the dev box
    order = 0.0 if ordering is not None else ordering_seconds(g, "cpu", rates)
    width = max(1.0, itemsize / 4.0)  # int64 and float64 lanes hold half as many
    nodes = ordering.nodes if ordering is not None else 2 * g.n / ROWS_LEAF
    return (order + nodes * ND_ROWS_NODE_SECONDS + (elim + sources * row) * width / (ND_ROWS_SHARE * rates.ndfw_cpu)
            + sources * g.n * ND_ROWS_REDUCE_SECONDS / scale + rates.search_call_seconds)


#: the GPU row solve's downward level kernel against dense FW's GPU rate: 9.1-9.3 T updates/s a
#: second against the dense product's ceiling of 16.3 (int32, H200, `apsp.gpu.rowsolve`'s tile table)
ND_ROWS_GPU_SHARE = 0.55
#: one launch of the GPU row solve from Python (a level of the downward pass; the upward pass's
#: products, gathers and scatters at each node above a block's sources); not timed yet
ND_ROWS_LAUNCH_SECONDS = 2e-5
#: launches per node of the upward pass (its product, the boundary's gather, product and scatter)
ND_ROWS_UPWARD_LAUNCHES = 6
#: the device reductions (`apsp.gpu.rowsolve.reduce_columns`: one read of each distance, a float64
#: division per reached pair): (source, target) pairs a second; not timed yet
ND_ROWS_GPU_REDUCE_RATE = 2e11
#: the factors' copy to the device, bytes a second
ND_ROWS_UPLOAD_RATE = 1e10


def nd_rows_gpu_stats_seconds(g: Graph, sources: int, itemsize: int, rates: Rates, ordering,
                              block_rows: int, factor_bytes: int = 0) -> float:
    """The row solve's statistics on the GPU (`apsp.gpu.rowsolve.rows_stats`) for ``sources``
    sources over the built dissection ``ordering``: the elimination on the host (as
    `nd_rows_stats_seconds`), the factors' upload, every source's row at the level kernel's share of
    the GPU min-plus rate, the launches (per block: one a level downward, `ND_ROWS_UPWARD_LAUNCHES`
    a node upward over the block's leaves and their ancestors) and the device reductions."""
    from .supernodal import ROWS_LEAF

    row, elim = nd_rows_work(g, ordering)
    width = max(1.0, itemsize / 4.0)
    host = ordering.nodes * ND_ROWS_NODE_SECONDS + elim * width / (ND_ROWS_SHARE * rates.ndfw_cpu)
    speedup = dict(rates.fw_gpu_dtype_speedup).get(itemsize, 1.0)
    device = sources * row / (ND_ROWS_GPU_SHARE * rates.fw_gpu * speedup)
    levels = len(ordering.levels())
    blocks = -(-max(sources, 0) // max(block_rows, 1))
    upward = ND_ROWS_UPWARD_LAUNCHES * (min(block_rows, g.n) / ROWS_LEAF + levels)
    launches = blocks * (levels + upward) * ND_ROWS_LAUNCH_SECONDS
    return (host + factor_bytes / ND_ROWS_UPLOAD_RATE + device + launches
            + sources * g.n / ND_ROWS_GPU_REDUCE_RATE + rates.gpu_call_seconds)


def nd_rows_seconds(g: Graph, on_gpu: bool, itemsize: int, rates: Rates, ordering=None) -> float:
    """Rows of every source by the row solve (`nd_rows_stats_seconds` without the reductions)."""
    row, elim = nd_rows_work(g, ordering)
    order = ordering_seconds(g, "cpu", rates)
    return order + (elim + g.n * row) * max(1.0, itemsize / 4.0) / (ND_ROWS_SHARE * rates.ndfw_cpu)


#: nd-fw on the GPU over a graph of one leaf against dense FW on the GPU: the same n^3 work, in its
#: own launches (measured 0.70-1.11, median 0.92, at n = 1,022-3,000 on the H100 and H200, torch
#: loaded, 2026-11-27)
ND_ONE_LEAF_GPU = 0.9


def _fw_gpu_seconds(n: float, speedup: float, rates: Rates) -> float:
    """Dense FW's rounds on the GPU: n^3 updates at the dtype's rate, which small products do not
    reach (`fw_gpu_half_n`), and at least the host's launches of its rounds: below a few thousand
    vertices the GPU waits for them (the rounds' work overlaps them above)."""
    rate = rates.fw_gpu * speedup * n / (n + rates.fw_gpu_half_n) if n else rates.fw_gpu
    return max(n ** 3 / rate, np.ceil(n / 128.0) * rates.fw_round_gpu_seconds)


def applicable(g: Graph, backend: str, gpu: bool = False) -> list[tuple[str, str]]:
    """The ``(method, backend)`` pairs that can solve ``g`` exactly and may be the fastest: backend
    "auto" means the CPU, and the GPU too where ``gpu`` (the plan's verdict,
    `apsp.plan.gpu_available`). nd-fw only on graphs `sparse_enough` for it: on denser ones its
    separators are too wide, and it is dense FW with an ordering's and its rounds' overheads."""
    backends = [backend] if backend != "auto" else ["cpu"] + (["gpu"] if gpu else [])
    unit, negative = g.unit_weights, g.has_negative_weights
    pairs = []
    for b in backends:
        # a record's `Method.candidate` rule: Johnson only with a negative weight, where Dijkstra cannot
        for m in _HOPS_FIRST:
            if b in m.backends and (unit or m.weighted) and (m.negative or not negative) and (m.candidate == "always" or (
                    m.candidate == "sparse" and sparse_enough(g)) or (m.candidate == "negative" and negative)):
                pairs.append((m.name, b))
    return pairs


#: the records, hop counts first: the order the estimates are listed in (`-v`)
_HOPS_FIRST = sorted(TABLE, key=lambda m: m.weights != "unit")


def ordering_seconds(g: Graph, backend: str, rates: Rates) -> float:
    """Building nd-fw's ordering for ``backend``'s leaves: each level of bisection reads every edge
    (log2(n / leaf) levels), and each of the about n / leaf pieces bisected has its own cost; a graph
    of one leaf is not bisected. The 350 x 350 grid's took 0.8 s of the default call's setup on the
    H100 host (5.4 levels of 488,600 edges, 41 pieces), a 1,500-vertex road graph's 8.5 ms there."""
    leaf = DEFAULTS[backend][1]
    if g.n <= leaf:
        return 0.0
    levels = max(1.0, np.log2(g.n / leaf))
    return g.nnz * rates.order_seconds_per_edge * levels + g.n / leaf * rates.order_seconds_per_node


def nd_plausible(g: Graph, backend: str, others: float, rates: Rates, proxy: float | None = None) -> bool:
    """Whether nd-fw on ``backend`` may beat ``others`` seconds (the best other candidate): the
    graph's separators are planar-like (`ND_PLANAR_SEPARATOR`) and its proxy estimate, the work
    divided by `ND_PROXY_SPREAD` (the proxy's error) and the ordering's own cost as it is, is below
    ``others``. Only then is the ordering worth building to count its work."""
    if not sparse_enough(g):
        return False
    s, c = separator_proxy(g)
    if s > ND_PLANAR_SEPARATOR * np.sqrt(c):
        return False
    order = ordering_seconds(g, backend, rates)
    if proxy is None:  # ``proxy``: this estimate, when the caller has it
        proxy = estimate(g, "nd-fw", backend, rates=rates, ordering=None)
    return order + (proxy - order) / ND_PROXY_SPREAD < others


def estimates(g: Graph, candidates: Iterable[tuple[str, str]] | None = None, dtype=None,
              rates: Rates | None = None, order: bool = True) -> dict[tuple[str, str], float]:
    """Estimated seconds of each ``(method, backend)`` candidate (default: `applicable` on
    "auto"). nd-fw's ordering is built (`apsp.dissection.default_plan`, cached on the graph for the
    solver) only when `order` and `nd_plausible` against the other candidates; else its proxy
    price stands. ``rates`` None: `this_machine`."""
    rates = rates or this_machine()
    out: dict[tuple[str, str], float] = {}
    best, nd_best = float("inf"), None  # the best other candidate, nd-fw's best backend
    for pair in (candidates if candidates is not None else applicable(g, "auto")):
        out[pair] = seconds = estimate(g, *pair, dtype, rates)  # nd-fw: cached ordering or proxy
        if METHOD[pair[0]].candidate != "sparse":  # priced by its proxy until it may win
            best = min(best, seconds)
        elif nd_best is None or seconds < out[nd_best]:
            nd_best = pair
    # one ordering at most, for the backend whose nd-fw looks best: it is what would run
    if order and nd_best is not None and cached_ordering(g, nd_best[1]) is None and nd_plausible(
            g, nd_best[1], best, rates, out[nd_best] if dtype is None else None):
        out[nd_best] = estimate(g, *nd_best, dtype, rates, ordering=default_plan(g, nd_best[1]))
    return out


def fastest(g: Graph, backend: str = "auto", candidates: Iterable[tuple[str, str]] | None = None,
            rates: Rates | None = None) -> tuple[tuple[str, str], float, dict[tuple[str, str], float]]:
    """The candidate with the smallest estimate: ``((method, backend), seconds, every estimate)``.
    ``candidates`` None: `applicable` on ``backend``."""
    table = estimates(g, candidates if candidates is not None else applicable(g, backend), rates=rates)
    pick = min(table, key=table.__getitem__)
    return pick, table[pick], table


#: seconds to import scipy's searches (most of what `Graph.longest_distance_found` costs a small graph)
SEARCH_IMPORT_SECONDS = 0.25
#: what one of those searches costs beyond its work: scipy's call, its checks of the graph, the
#: largest component's search (0.3-0.5 ms on graphs of 77-128 vertices on the H100 host, where
#: the automatic call ran 0.8-2.2 ms longer than the method it picked, 2026-11-26)
SWEEP_SECONDS = 3e-4


def worth_searching(g: Graph, method: str, backend: str, dtype=None, rates: Rates | None = None,
                    sweeps: int = 4) -> bool:
    """Whether the searches of `Graph.longest_distance_found` cost at most a quarter of the narrow
    attempt they may save (in ``dtype``: pricing it may not run them): its solve and, on the GPU, its
    result's copy to the host. ``rates`` None: `this_machine`."""
    import sys

    rates = rates or this_machine()
    n = float(g.n)
    imported = "scipy.sparse.csgraph" in sys.modules  # a process that has searched pays no import
    one = SWEEP_SECONDS + estimate(g, "dijkstra", "cpu", rates=rates, result=False) / max(n, 1.0)
    searches = (0.0 if imported else SEARCH_IMPORT_SECONDS) + sweeps * one
    attempt = estimate(g, method, backend, dtype=dtype, rates=rates)  # with its result's copy to the host
    return searches < attempt / 4




# -- bytes: what each method holds (its record's memory and workers functions; `apsp.plan` sums them) --
def matrix_needs(n: int, dt: np.dtype, backend: str, paths: int, block: int, interpreted: bool,
                 layout: int = 0, checked: bool = False) -> tuple[int, int]:
    """(host, GPU) bytes of a solve that keeps the result and its path matrices: the searches'
    and BFS's; on the GPU the device matrices of `apsp.gpu.footprint.fw_needs`."""
    host = matrix_bytes(n, dt) + paths * matrix_bytes(n, np.int32)
    return host, (fw_needs(n, dt, paths, block, interpreted) if backend == "gpu" else 0)


def fw_memory(n: int, dt: np.dtype, backend: str, paths: int, block: int, interpreted: bool,
              layout: int = 0, checked: bool = False) -> tuple[int, int]:
    """Dense FW: the matrices, and on the CPU path recovery's reachable mask and the row chunks of
    the cut-off check and finalize."""
    host = matrix_bytes(n, dt) + paths * matrix_bytes(n, np.int32)
    if backend == "gpu":
        return host, fw_needs(n, dt, paths, block, interpreted)
    return host + (matrix_bytes(n, np.bool_) if paths else 0) + exactness.row_pass_bytes(n * n), 0


def nd_fw_memory(n: int, dt: np.dtype, backend: str, paths: int, block: int, interpreted: bool,
                 layout: int = 0, checked: bool = False) -> tuple[int, int]:
    """nd-fw: as dense FW on the CPU; on the GPU its layout matrix (`apsp.gpu.footprint.nd_needs`)."""
    if backend == "cpu":
        return fw_memory(n, dt, backend, paths, block, interpreted)
    host = matrix_bytes(n, dt) + paths * matrix_bytes(n, np.int32)
    return host, nd_needs(n, dt, paths, block, interpreted, layout or n, checked)


def reference_memory(n: int, dt: np.dtype, backend: str, paths: int, block: int, interpreted: bool,
                     layout: int = 0, checked: bool = False) -> tuple[int, int]:
    """The oracle's 8-byte work matrix, each step's candidate matrix and its comparison mask; with
    paths both pointer matrices and their per-step replacements."""
    host, gpu = matrix_needs(n, dt, backend, paths, block, interpreted)
    host += 2 * matrix_bytes(n, np.float64) + matrix_bytes(n, np.bool_)
    if paths:
        host += (4 - paths) * matrix_bytes(n, np.int32) + matrix_bytes(n, np.bool_)
    return host, gpu


#: what a CPU worker thread holds beyond the arrays it is given: its stack's and its allocator
#: arena's touched pages (16 workers of blocked FW and of nd-fw rose 4-5 MB beyond their plan on the
#: 16-core H100 host, 2026-11-26; `tests/test_memory_peaks.py`)
WORKER_BYTES = 320 << 10


def fw_workers(n: int, threads: int, itemsize: int, paths: int, block: int) -> int:
    """Blocked FW's phase-2 panel pieces (two workers a panel at most), and the own pages of every
    thread that works: phase 3's tasks, a tile each of the ``(blocks - 1)^2`` a round updates, run
    on as many threads as there are tasks (`thread_bytes`)."""
    from .cpu.blocked import PANEL_BYTES, SMALL_N

    if n <= SMALL_N:  # solved whole, on one thread, without the panel copies
        return 0
    cols = max(PANEL_BYTES // itemsize, 1)
    workers = min(threads, 2 * -(-n // cols))
    busy = min(threads, max(workers, (-(-n // max(block, 1)) - 1) ** 2))
    return workers * 2 * min(block, n) * min(cols, n) * itemsize + busy * WORKER_BYTES


def nd_fw_workers(n: int, threads: int, itemsize: int, paths: int, block: int) -> int:
    """nd-fw's workers hold their own pages only (`thread_bytes`)."""
    return threads * WORKER_BYTES


def bfs_workers(n: int, threads: int, itemsize: int, paths: int, block: int) -> int:
    """Bit-parallel BFS's work arrays per worker (`thread_bytes`)."""
    return threads * (3 * 8 * n + 8 * n + 64 * n * max(itemsize, 1) + (2 * 64 * 4 * n if paths else 0))


def search_bytes(n: int, m: int, itemsize: int, method: str, workers: int = 1) -> int:
    """Host bytes of searches on a graph of ``n`` vertices and ``m`` edges beyond the graph itself
    (`apsp.cpu.searches`, `apsp.query`): the kernels' copy of the edges, per worker the labels,
    predecessors and queue of one search, and what ``method`` adds (a reversed copy of the edges
    for "bidirectional-dijkstra" and "bellman-ford", Johnson's potentials). Result rows are not
    counted.

    Examples
    --------
    >>> search_bytes(1000, 5000, 4, "dijkstra") < search_bytes(1000, 5000, 4, "bidirectional-dijkstra")
    True
    """
    edges = (n + 1) * 8 + m * (8 + max(itemsize, 8))  # int32/int64 indices, weights in the dtype
    # one search: labels, predecessors and hops, and the heap, bucket or BFS queue arrays
    one = n * (itemsize + 8) + max(n, m + 1) * 4 + (m + 1) * (itemsize + 8 + 4)
    need = edges + workers * one
    search = SEARCHES.get(method)
    if search is not None and (search.bidirectional or search.negative):
        need += 2 * edges + n * (itemsize + 4) + (m + 1) * (itemsize + 4)  # scipy's transpose, its copy
    if search is not None and (search.negative or search.reweights):
        need += n * (8 + 8 + 8 + 3) + m * 8  # wide labels, predecessors, queue, flags; wide weights
    return need


#: largest block of search rows the statistics keep at once, bytes (the blocks of Dijkstra and Johnson)
MAX_STATS_BLOCK_BYTES = 64 << 20


def stats_bytes(n: int, m: int, itemsize: int, batched: bool, histogram: bool, threads: int,
                limit: int) -> tuple[int, int]:
    """The statistics' working set in bytes, and the block of search rows it holds within ``limit``.

    Bit-parallel BFS: per thread three uint64 and two int64 n-long work arrays and an
    n-long histogram; searches: one block of rows (at least 4 per thread, at most
    `MAX_STATS_BLOCK_BYTES` unless that is all), per worker a heap over the edges, and the
    histogram; both: five n-long accumulators and the graph's CSR in both directions.
    """
    fixed = 5 * 8 * n + 2 * (n + 1 + m) * 8 + m * 8
    if batched:
        return fixed + threads * (6 * 8 * n + (8 * n if histogram else 0)), 0
    row = n * itemsize
    workers = 4 * threads
    heaps = workers * ((m + 1) * (itemsize + 8) + 4 * max(n, m + 1))
    fixed += heaps + (threads * 8 * n if histogram else 0)
    block_rows = max(workers, min(n, MAX_STATS_BLOCK_BYTES // max(row, 1)))
    block_rows = max(workers, min(block_rows, (limit - fixed) // max(row, 1)))
    return fixed + block_rows * row, block_rows


__all__ = ["Rates", "SHIPPED", "rates_for", "estimate", "estimates", "fastest", "applicable",
           "worth_searching", "separator_proxy", "nd_plausible", "cache_path",
           "machine_key", "shipped_rates", "this_machine", "gpu_name", "load_calibrations", "save_calibration"]


# ----------------------------------------------------------------------------- the GPU engines' budgets
#: GPU nd-fw's gathered node buffers may take this share of the device memory left after its load
ND_GATHER_SHARE = 0.8
#: GPU nd-fw's batch model (`apsp.gpu.ndfw.Engine.batches`): a kernel launch from Python costs about
#: `ND_LAUNCH_SECONDS`; a batch's extra updates (the common shape's padding) run at about
#: `ND_BATCH_RATE` (int32 products on an H100/H200; int16 runs faster, which only favours batching more)
ND_LAUNCH_SECONDS = 2e-5
ND_BATCH_RATE = 1.2e13
#: the GPU reductions' blocks (`apsp.gpu.reductions`) leave a tenth of the free memory to torch's
#: allocator and Triton, and `REDUCTIONS_HEADROOM` beside the block's bit arrays: more than a solve's
#: `GPU_HEADROOM`, since the level and counting kernels' launches keep their own scratch beside arrays
#: that fill the card
REDUCTIONS_SHARE = 0.9
REDUCTIONS_HEADROOM = 1 << 30


def nd_gpu_budget(graph, opts: SolveOptions, facts: MachineFacts, memory=None) -> NdGpuBudget:
    """GPU nd-fw's gather budget and batch model (`apsp.engine.NdGpuBudget`). Streamed (``memory``
    out of core): the GPU budget less the planned panels. In core: `ND_GATHER_SHARE` of the device
    memory the engine's load leaves free (the layout matrix, its column panel, the edges uploaded
    to build it); under the interpreter without a bound. ``opts``: the step's
    `apsp.engine.SolveOptions`; ``memory``: its `apsp.plan.MemoryPlan`."""
    from .engine import NdGpuBudget
    from .gpu.footprint import GPU_ALIGN, INTERPRETER_ALIGN, nd_aligned

    if memory is not None and memory.out_of_core:
        gather = max(0, memory.gpu_limit - memory.gpu_bytes)
    elif facts.interpreted:
        gather = int(ND_GATHER_SHARE * (1 << 62))
    else:
        from .dissection import dissection_for

        nd, tile = dissection_for(graph, opts, "gpu")
        dt = np.dtype(opts.dtype)
        size = nd_aligned(nd.size, False)
        loaded = matrix_bytes(size, dt) + tile * size * dt.itemsize + graph.nnz * (16 + dt.itemsize)
        gather = int(ND_GATHER_SHARE * max(0, (facts.measured().free or 0) - loaded))
    return NdGpuBudget(gather, ND_LAUNCH_SECONDS, ND_BATCH_RATE, INTERPRETER_ALIGN if facts.interpreted else GPU_ALIGN)


def reduction_words(graph, facts: MachineFacts, gpu_memory=None) -> int:
    """32-bit words (32 sources each) per block of the GPU reductions (`apsp.gpu.reductions.bfs_stats`):
    the three n x words bit arrays within the budget (``gpu_memory``, else `REDUCTIONS_SHARE` of what
    the device has free once the CSR and the accumulators are on it; small blocks interpreted), or
    `MemoryPlanError` if not even one word fits."""
    from .errors import MemoryPlanError
    from .sizes import format_size, parse_size

    n = graph.n
    if gpu_memory is not None:
        budget = parse_size(gpu_memory)
    elif facts.interpreted:
        budget = REDUCTIONS_HEADROOM + 48 * n + (64 << 20)
    else:
        index = 4 if n < 2**31 - 1 and graph.nnz < 2**31 - 1 else 8
        uploaded = (n + 1 + graph.nnz) * index + n + 4 * 8 * n  # in-CSR, the targets, the accumulators
        budget = int(REDUCTIONS_SHARE * max(0, (facts.measured().free or 0) - uploaded))
    fits = (budget - REDUCTIONS_HEADROOM - 48 * n) // max(1, 12 * n)  # 48 n: CSR offsets, accumulators
    if fits < 1:
        raise MemoryPlanError(
            f"the GPU reductions for n={n} need at least {format_size(REDUCTIONS_HEADROOM + 60 * n)} of GPU "
            f"memory (bit arrays of 32 sources, accumulators), but {format_size(budget)} are "
            f"allowed (gpu_memory); use backend='cpu'")
    return int(min(max(1, (n + 31) // 32), fits))

