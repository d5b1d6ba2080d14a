"""How long each method should take on a graph: the estimates the plan compares.

Every estimate is work (counted from the graph's facts) over a rate measured on some machine;
the automatic choice (`apsp.plan`) picks the smallest, and ``-v`` prints them side by side.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .graph import Graph


#: work per second of each (method, backend), the units of `estimated_seconds`: FW and nd-fw
#: count min-plus updates, dijkstra/johnson n (m + n) log2 n steps. CPU: measured with
#: benchmarks/nd_auto_rule.py (2-core dev machine, shared, BENCHMARKS.md section 12); GPU: dense
#: FW's int32 rate on an H200 (section 1); nd-fw measured on an H200 at n = 122,500 (section 12):
#: 7.9-8.0 T updates/s on a grid, 4.9-5.8 on a k-NN graph (its products are smaller than dense FW's)
WORK_RATES = {("fw", "cpu"): 1.5e10, ("nd-fw", "cpu"): 8e9, ("dijkstra", "cpu"): 2.2e8,
              ("johnson", "cpu"): 2.2e8, ("fw", "gpu"): 1.3e13, ("nd-fw", "gpu"): 9e12}
#: fixed cost of one nd-fw pivot round (parallel regions, launches): its rounds are many and can
#: be small. CPU: 1 ms on an idle core pair, up to 60 ms when the machine is oversubscribed; GPU:
#: little, the small nodes' rounds run in batches (H200, n = 122,500: 9-10 T updates/s overall)
ND_ROUND_SECONDS = {"cpu": 0.01, "gpu": 2e-5}


def estimated_seconds(g: Graph, method: str, backend: str) -> float:
    """Seconds ``method`` should take on ``g`` on ``backend``: its work over `WORK_RATES`.

    nd-fw's work is counted from its ordering (`apsp.ndfw.plan`, cached on the graph for the
    solver), so asking costs that ordering once.
    """
    n, m = float(g.n), float(g.nnz)
    fixed = 0.0
    if method == "fw":
        work = n ** 3
    elif method == "nd-fw":
        from .ndfw import default_plan

        nd = default_plan(g, backend)
        work = float(nd.updates())
        fixed = sum(1 for _ in nd.rounds()) * ND_ROUND_SECONDS[backend]
    elif method in ("dijkstra", "johnson"):
        work = n * (m + n) * np.log2(max(n, 2.0))
    else:
        raise ValueError(f"no work estimate for method {method!r}")
    return work / WORK_RATES[(method, backend)] + fixed


#: measured on the 2-core machine (benchmarks/queries.py): one Dijkstra costs about this many
#: Floyd-Warshall updates per (edge + vertex) * log2(n)
SEARCH_COST = 60.0
#: a GPU solve's fixed cost in CPU update-equivalents (about 50 ms of CPU work: launches, copies)
GPU_FIXED_COST = 1e8


#: seconds to import scipy's searches (most of what `Graph.longest_distance_found` costs a small graph)
SEARCH_IMPORT_SECONDS = 0.25
#: bytes per second of a result's copy from the GPU to the host (`apsp.gpu.transfer.to_host`)
D2H_RATE = 1.6e10


def worth_searching(g: Graph, method: str, backend: str, sweeps: int = 4) -> bool:
    """Whether the searches of `Graph.longest_distance_found` cost at most a quarter of the narrow
    attempt they may save: its solve and, on the GPU, its result's copy to the host."""
    n = float(g.n)
    searches = SEARCH_IMPORT_SECONDS + sweeps * estimated_seconds(g, "dijkstra", "cpu") / max(n, 1.0)
    attempt = estimated_seconds(g, method, backend) + (2 * n * n / D2H_RATE if backend == "gpu" else 0.0)
    return searches < attempt / 4
