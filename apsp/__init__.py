"""apsp: all-pairs shortest paths on CPU, one GPU and many GPUs.

Importing apsp imports numpy only; everything else loads when first used.

>>> import apsp
>>> int(apsp.shortest_paths([(0, 1, 2), (1, 2, 3)], backend="cpu").distances[0, 2])
5
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports
from ._version import __version__
from .jit import use_writable_cache_dir

use_writable_cache_dir()  # a read-only install and home: Numba's cache goes to a temp dir instead

_EXPORTS = {
    "shortest_paths": "apsp.api",
    "Result": "apsp.api",
    "as_graph": "apsp.api",
    "shortest_path_between": "apsp.query",
    "Route": "apsp.query",
    "floyd_warshall": "apsp.scipy_compat",
    "shortest_path": "apsp.scipy_compat",
    "random_graph": "apsp.generate",
    "reconstruct_path": "apsp.paths",
    "read_graph": "apsp.io",
    "write_distances": "apsp.io",
    "load_result": "apsp.io.result",
    "EdgeList": "apsp.graph",
    "Graph": "apsp.graph",
    "NegativeCycleError": "apsp.errors",
    "GraphFormatError": "apsp.errors",
    "DtypeError": "apsp.errors",
    "BackendUnavailableError": "apsp.errors",
    "MemoryPlanError": "apsp.errors",
    "unreachable_value": "apsp.dtypes",
}

if TYPE_CHECKING:  # what type checkers see; at run time the names load lazily (below)
    from .api import Result, as_graph, shortest_paths
    from .dtypes import unreachable_value
    from .errors import (BackendUnavailableError, DtypeError, GraphFormatError, MemoryPlanError,
                         NegativeCycleError)
    from .generate import random_graph
    from .graph import EdgeList, Graph
    from .io import read_graph, write_distances
    from .io.result import load_result
    from .paths import reconstruct_path
    from .query import Route, shortest_path_between
    from .scipy_compat import floyd_warshall, shortest_path

__all__ = sorted(_EXPORTS) + ["__version__"]


__getattr__ = lazy_exports(__name__, _EXPORTS, globals(), submodules=True)


def __dir__() -> list[str]:
    return __all__
