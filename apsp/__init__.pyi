# apsp's public names: this stub is their one list. Type checkers read it instead of __init__.py, and
# __init__.py reads its imports (lazy_loader.attach_stub) to load each name from its module on first use,
# so `import apsp` still imports numpy only. Add a public name here and nowhere else.
from ._version import __version__ as __version__
from .api import as_graph as as_graph, shortest_paths as shortest_paths
from .errors import BackendUnavailableError as BackendUnavailableError, DtypeError as DtypeError
from .errors import GraphFormatError as GraphFormatError, MemoryPlanError as MemoryPlanError
from .errors import NegativeCycleError as NegativeCycleError
from .exactness import unreachable_value as unreachable_value
from .generate import random_graph as random_graph
from .graph import EdgeList as EdgeList, Graph as Graph
from .io import read_graph as read_graph, write_distances as write_distances
from .paths import reconstruct_path as reconstruct_path
from .query import Route as Route, shortest_path_between as shortest_path_between
from .result import Result as Result, load_result as load_result
from .scipy_compat import floyd_warshall as floyd_warshall, shortest_path as shortest_path
from .scipy_searches import bellman_ford as bellman_ford, dijkstra as dijkstra, johnson as johnson
from .stats import DistanceStats as DistanceStats, distance_stats as distance_stats

_IMPORT_STARTED: float
_CPU_BEFORE_IMPORT: float
