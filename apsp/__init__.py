"""apsp: all-pairs shortest paths on CPU, one GPU and many GPUs.

Importing apsp imports numpy only; everything else loads when first used.

>>> import apsp
>>> int(apsp.shortest_paths([(0, 1, 2), (1, 2, 3)], backend="cpu").distances[0, 2])
5
"""
from __future__ import annotations

import time as _time

#: when ``import apsp`` began (`time.perf_counter`), and the CPU seconds the process had used by
#: then (the interpreter's own start): the CLI's ``startup`` stage is their sum (`apsp.cli.startup.start_command`)
_IMPORT_STARTED = _time.perf_counter()
_CPU_BEFORE_IMPORT = _time.process_time()

from typing import TYPE_CHECKING  # noqa: E402

from ._lazy import lazy_exports
from ._version import __version__
from .jit import use_writable_cache_dir

use_writable_cache_dir()  # a read-only install and home: Numba's cache goes to a temp dir instead

#: the module of each public name, imported on first use
_EXPORTS = {name: f"apsp.{module}" for module, names in {
    "api": ("as_graph", "shortest_paths"),
    "errors": ("BackendUnavailableError", "DtypeError", "GraphFormatError", "MemoryPlanError",
               "NegativeCycleError"),
    "exactness": ("unreachable_value",),
    "generate": ("random_graph",),
    "graph": ("EdgeList", "Graph"),
    "io": ("read_graph", "write_distances"),
    "paths": ("reconstruct_path",),
    "query": ("Route", "shortest_path_between"),
    "result": ("Result", "load_result"),
    "scipy_compat": ("floyd_warshall", "shortest_path"),
    "stats": ("DistanceStats", "distance_stats"),
}.items() for name in names}

if TYPE_CHECKING:  # what type checkers see (``X as X``: an explicit re-export); at run time, lazily
    from .api import as_graph as as_graph, shortest_paths as shortest_paths
    from .result import Result as Result, load_result as load_result
    from .exactness import unreachable_value as unreachable_value
    from .errors import BackendUnavailableError as BackendUnavailableError, DtypeError as DtypeError
    from .errors import GraphFormatError as GraphFormatError, MemoryPlanError as MemoryPlanError
    from .errors import NegativeCycleError as NegativeCycleError
    from .generate import random_graph as random_graph
    from .graph import EdgeList as EdgeList, Graph as Graph
    from .io import read_graph as read_graph, write_distances as write_distances
    from .paths import reconstruct_path as reconstruct_path
    from .query import Route as Route, shortest_path_between as shortest_path_between
    from .scipy_compat import floyd_warshall as floyd_warshall, shortest_path as shortest_path
    from .stats import DistanceStats as DistanceStats, distance_stats as distance_stats

# a literal list, so that type checkers read it (tests/test_public_api_docs.py keeps it = _EXPORTS)
__all__ = [
    "BackendUnavailableError", "DistanceStats", "DtypeError", "EdgeList", "Graph", "GraphFormatError",
    "MemoryPlanError", "NegativeCycleError", "Result", "Route", "__version__", "as_graph", "distance_stats",
    "floyd_warshall", "load_result", "random_graph", "read_graph", "reconstruct_path", "shortest_path",
    "shortest_path_between", "shortest_paths", "unreachable_value", "write_distances",
]


__getattr__ = lazy_exports(__name__, _EXPORTS, globals(), submodules=True)


def __dir__() -> list[str]:
    return __all__
