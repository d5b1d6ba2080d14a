"""The methods: one frozen record each, the only place a method's properties are written down.

The plan (`apsp.plan`), the cost model (`apsp.costs`), the statistics, the single-pair query, the
solver registry (`apsp.engine.get_solver`) and the command line read these records instead of
testing method names. A record names its functions as ``"module:function"`` (`load` imports one
when it is first asked for), so this module imports nothing and sits below every other layer.

Adding a CPU method: its record here, its solver (``solve(graph, opts)`` beside its kernels) and
its estimate in `apsp.costs`; the automatic choice then weighs it with the others (DEVELOPING.md,
"Adding a method").
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

#: the backends a caller may name ("auto": the plan chooses)
BACKENDS = ("auto", "cpu", "gpu")

#: the dtypes of weighted distances a caller may ask for (``--dtype``)
WEIGHTED_DTYPES = ("int16", "int32", "int64", "float32", "float64")
#: every dtype a caller may ask for: BFS's hop counts also take the unsigned ones
DTYPES = ("uint8", "uint16") + WEIGHTED_DTYPES


def _blocks(**by_backend: int) -> Mapping[str, int]:
    return MappingProxyType(dict(by_backend))


@dataclass(frozen=True)
class Method:
    """What the plan, the cost model and the registry know of one method."""

    name: str
    #: backend -> the registered solver of a whole solve, ``"module:function"``
    solvers: Mapping[str, str]
    #: the weights it solves exactly: "unit" (hop counts), "non-negative" or "any"
    weights: str
    #: its dtype ladder: "saturating" (Floyd-Warshall's kernels: narrowest first, checked after the
    #: solve), "worst-case" (computes in its output dtype: the worst-case bound decides) or "hops"
    #: (hop counts: the narrowest that holds them)
    ladder: str
    #: a few source rows: "search" (one search each), "few" (one search each while few are asked
    #: for, `apsp.plan.few_sources_for_bfs`), "solve" (rows of the full solve) or "whole" (rows of
    #: the full solve, and never chosen for some rows: its ordering is of the whole graph)
    rows: str
    #: the solver of rows by search (None: the whole solve's solver takes ``opts.sources``)
    rows_solver: str | None = None
    #: backend -> the solver streaming its matrix out of core (`SolveOptions.memory`)
    streamed: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: its state can be saved and resumed (`apsp.checkpoint`)
    checkpointable: bool = False
    #: a candidate of the automatic choice: "always", "sparse" (only `apsp.costs.sparse_enough`
    #: graphs), "negative" (only with a negative weight: a cheaper method solves the others), "never"
    candidate: str = "always"
    #: backend -> its default block (Floyd-Warshall's tile edge); none: the method has no block
    blocks: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: nd-fw's leaf size per backend (the dissection stops there)
    leaves: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: the method the automatic choice runs instead when this one's memory plan fails
    fallback: str | None = None
    #: its in-core GPU solve may run on the CUDA driver without torch (`apsp.plan.gpu_runtime`)
    driver_runtime: bool = False
    #: the `apsp.costs.Rates` field of one GPU call's fixed cost
    gpu_call: str = "gpu_fw_call_seconds"
    #: seconds on ``g``: ``estimate(g, on_gpu, itemsize, rates, ordering)``
    estimate: str = ""
    #: (host, GPU) bytes in core: ``memory(n, dtype, backend, paths, block, interpreted, layout, checked)``
    memory: str = "apsp.costs:matrix_needs"
    #: host bytes of ``threads`` CPU workers: ``(n, threads, itemsize, paths, block)``, or None
    workers: str | None = None
    #: what the statistics say when they choose it for a graph's weights
    why: str = ""
    #: backend -> the row engine of a dissection's factors (`apsp.supernodal.Factors`): the
    #: statistics' blocks of rows, reduced where computed (``rows_stats(...)``; the GPU's takes the
    #: device as the keyword ``device``)
    row_engines: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: the backends it runs on (its solvers' keys)
    backends: tuple[str, ...] = field(init=False)
    #: it takes weights other than 1, and negative ones (from ``weights``)
    weighted: bool = field(init=False)
    negative: bool = field(init=False)
    #: the registry keys of its solvers: the whole solve's, rows by search's, the streamed one's
    keys: tuple[str, str, str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "backends", tuple(self.solvers))
        object.__setattr__(self, "weighted", self.weights != "unit")
        object.__setattr__(self, "negative", self.weights == "any")
        rows = f"{self.name}-rows" if self.rows_solver else self.name
        object.__setattr__(self, "keys", (self.name, rows, f"{self.name}-out-of-core"))

    @property
    def streams_everywhere(self) -> bool:
        """It streams its matrix out of core on every backend it runs on."""
        return set(self.streamed) == set(self.solvers)

    def takes(self, unit: bool, negative: bool) -> bool:
        """Whether it solves a graph of these weights exactly."""
        return (unit or self.weighted) and (not negative or self.negative)

    def block(self, backend: str) -> int | None:
        """Its default block on ``backend`` (None: it has none)."""
        return self.blocks.get(backend)

    def solver(self, streamed: bool = False, rows_by_search: bool = False) -> str:
        """The registry key of the solver a plan step runs."""
        return self.keys[2 if streamed else 1 if rows_by_search else 0]


#: the methods, in the order the command line lists them. Blocks: cpu, ``benchmarks/cpu_fw.py
#: --sweep`` on the 2-core dev machine: 256 was fastest or within noise of the fastest for every
#: dtype at n = 1000..4000; 128 costs 5-20% more at n = 2000 (twice the rounds); 384 gains nothing.
#: gpu: the K of every phase-3 product; 128 balances the sequential phase 1 against the memory
#: passes of phase 3 (BENCHMARKS.md). The distributed engines keep the values their scaling runs
#: were measured with: smaller tiles balance CPU ranks better, and GPU ranks want whole 256-row
#: tiles of the product kernel. nd-fw: its tile and leaf per backend (`apsp.dissection`).
TABLE: tuple[Method, ...] = (
    Method("fw", MappingProxyType({"cpu": "apsp.cpu.blocked:solve", "gpu": "apsp.gpu.fw:solve"}),
           weights="any", ladder="saturating", rows="solve",
           streamed=MappingProxyType({"cpu": "apsp.outofcore:solve", "gpu": "apsp.outofcore:solve"}),
           checkpointable=True,
           blocks=_blocks(cpu=256, gpu=128, **{"distributed-cpu": 128, "distributed-gpu": 256}),
           driver_runtime=True, estimate="apsp.costs:fw_seconds", memory="apsp.costs:fw_memory",
           workers="apsp.costs:fw_workers"),
    Method("nd-fw", MappingProxyType({"cpu": "apsp.cpu.ndfw:solve", "gpu": "apsp.gpu.ndfw:solve"}),
           weights="any", ladder="saturating", rows="whole",
           streamed=MappingProxyType({"gpu": "apsp.gpu.ndfw:solve_streamed"}),
           candidate="sparse", blocks=_blocks(cpu=128, gpu=128),
           leaves=MappingProxyType({"cpu": 500, "gpu": 3000}), fallback="fw",
           estimate="apsp.costs:nd_fw_seconds", memory="apsp.costs:nd_fw_memory",
           workers="apsp.costs:nd_fw_workers",
           why="non-negative weights on the GPU: nested-dissection Floyd-Warshall on the device, "
               "its rows reduced there"),
    Method("bfs", MappingProxyType({"cpu": "apsp.cpu.bfs:solve", "gpu": "apsp.gpu.bfs:solve"}),
           weights="unit", ladder="hops", rows="few",
           rows_solver="apsp.cpu.searches:solve_bfs_rows", gpu_call="gpu_call_seconds",
           estimate="apsp.costs:bfs_seconds", workers="apsp.costs:bfs_workers",
           why="every weight is 1: breadth-first search"),
    Method("dijkstra", MappingProxyType({"cpu": "apsp.cpu.searches:solve_dijkstra"}),
           weights="non-negative", ladder="worst-case", rows="search",
           estimate="apsp.costs:dijkstra_seconds", why="non-negative weights: Dijkstra"),
    Method("johnson", MappingProxyType({"cpu": "apsp.cpu.searches:solve_johnson"}),
           weights="any", ladder="worst-case", rows="search", candidate="negative",
           estimate="apsp.costs:johnson_seconds",
           why="some weight is negative: Johnson (Bellman-Ford reweighting, then Dijkstra)"),
    Method("nd-rows", MappingProxyType({"cpu": "apsp.cpu.rowsolve:solve"}),
           weights="non-negative", ladder="worst-case", rows="search", candidate="never",
           leaves=MappingProxyType({"cpu": 64}), estimate="apsp.costs:nd_rows_seconds",
           row_engines=MappingProxyType({"cpu": "apsp.cpu.rowsolve:rows_stats",
                                          "gpu": "apsp.gpu.rowsolve:rows_stats"}),
           why="non-negative weights on a graph with small separators: rows of the distance matrix "
               "from the nested dissection's elimination, block by block"),
    Method("reference", MappingProxyType({"cpu": "apsp.cpu.reference:solve"}),
           weights="any", ladder="worst-case", rows="solve", candidate="never",
           estimate="apsp.costs:reference_seconds", memory="apsp.costs:reference_memory"),
)

#: name -> record
METHOD: Mapping[str, Method] = MappingProxyType({m.name: m for m in TABLE})

#: the methods a caller may name ("auto": the plan chooses)
METHODS = ("auto",) + tuple(METHOD)

#: the searches `apsp.distance_stats` reduces rows of, in the order the automatic choice tries them
#: (the first that takes the graph's weights)
STATS_METHODS = ("auto",) + tuple(m.name for m in TABLE if m.rows in ("search", "few"))


def _registry() -> dict[tuple[str, str], str]:
    out = {}
    for m in TABLE:
        out.update({(m.name, b): target for b, target in m.solvers.items()})
        out.update({(m.solver(streamed=True), b): target for b, target in m.streamed.items()})
        if m.rows_solver:
            out[(m.solver(rows_by_search=True), "cpu")] = m.rows_solver
    return out


#: (solver key, backend) -> "module:function" (`apsp.engine.get_solver` imports it when chosen)
REGISTRY: dict[tuple[str, str], str] = _registry()


@dataclass(frozen=True)
class Search:
    """A single-pair search of `apsp.shortest_path_between` (`apsp.plan.choose_search`)."""

    name: str
    #: it searches from both ends (a reversed copy of the edges)
    bidirectional: bool = False
    #: labels in the widest dtype, negative weights allowed (Bellman-Ford; a reversed copy too)
    negative: bool = False
    #: hop counts only
    hops: bool = False
    #: it reweights the edges first (Johnson's potentials: wide labels, no reversed copy)
    reweights: bool = False


#: name -> the single-pair searches, and Johnson's share of the search memory (`apsp.costs.search_bytes`)
SEARCHES: Mapping[str, Search] = MappingProxyType({s.name: s for s in (
    Search("bfs", hops=True), Search("dijkstra"), Search("bidirectional-dijkstra", bidirectional=True),
    Search("bellman-ford", negative=True), Search("johnson", reweights=True))})


class _Functions(dict):
    """``"module:function"`` -> the function, imported when first asked for."""

    def __missing__(self, target: str) -> Callable[..., Any]:
        module, name = target.split(":")
        fn = self[target] = getattr(importlib.import_module(module), name)
        return fn


#: the records' functions by name: ``FUNCTIONS[record.estimate](...)``
FUNCTIONS: dict[str, Callable[..., Any]] = _Functions()


def load(target: str) -> Callable[..., Any]:
    """The function ``"module:function"`` names (imported on first use)."""
    return FUNCTIONS[target]


__all__ = ["Method", "Search", "TABLE", "METHOD", "METHODS", "BACKENDS", "DTYPES", "WEIGHTED_DTYPES", "STATS_METHODS",
           "SEARCHES", "REGISTRY", "FUNCTIONS", "load"]
