"""apsp: all-pairs shortest paths on CPU, one GPU and many GPUs.

Importing apsp imports numpy only; everything else loads when first used.

>>> import apsp
>>> apsp.shortest_paths([(0, 1, 2), (1, 2, 3)], backend="cpu").distances[0, 2]
np.int16(5)
"""
from __future__ import annotations

from ._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "shortest_paths": "apsp.api",
    "Result": "apsp.api",
    "as_graph": "apsp.api",
    "floyd_warshall": "apsp.scipy_compat",
    "shortest_path": "apsp.scipy_compat",
    "random_graph": "apsp.generate",
    "reconstruct_path": "apsp.paths",
    "read_graph": "apsp.io",
    "write_distances": "apsp.io",
    "EdgeList": "apsp.graph",
    "Graph": "apsp.graph",
    "NegativeCycleError": "apsp.errors",
    "GraphFormatError": "apsp.errors",
    "DtypeError": "apsp.errors",
    "BackendUnavailableError": "apsp.errors",
    "MemoryPlanError": "apsp.errors",
    "unreachable_value": "apsp.dtypes",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


__getattr__ = lazy_exports(__name__, _EXPORTS, globals(), submodules=True)


def __dir__():
    return __all__
