"""Graphs from other libraries: a networkx graph, a pandas or polars edge table, a CPU torch tensor.

`as_graph` (and so `shortest_paths` and `distance_stats`) hands anything it does not know itself to
`foreign_graph`, which recognises these by their module without importing the library (a program
that never uses one never loads it) and turns them into what apsp reads:

* a networkx graph: its nodes, in ``G``'s order, named by their labels (`Result.labels`); its
  edges' ``weight`` attribute (1 where an edge has none; a multigraph's lightest parallel edge), an
  undirected graph's edges both ways (`apsp.networkx_graph.ApspGraph`, the backend's conversion);
* an edge table (pandas or polars ``DataFrame``): columns ``source`` and ``target`` (any labels:
  integers, strings, or other values by their ``str``) and an optional ``weight`` (default 1); the
  vertices are the labels that appear, sorted, and keep them;
* a torch tensor on the CPU: a dense square matrix, read as a numpy array is (its ``null_value``,
  ``inf`` and ``nan`` mean no edge); a sparse one (COO or CSR) as a scipy sparse matrix is;
* an array on a GPU: a torch tensor on CUDA, or anything that exports DLPack (``__dlpack__`` and
  ``__dlpack_device__``: CuPy, JAX, ...) or ``__cuda_array_interface__`` (Numba, ...): a dense
  matrix stays on its device (`apsp.gpu.devinput.DeviceGraph`, wrapped by torch without a copy);
  a sparse one (a torch sparse tensor, a ``cupyx.scipy.sparse`` matrix) is copied to the host,
  where the sparse routes read their CSR;
* a DLPack exporter on the CPU (a numpy array, a JAX array on the CPU, ...): read as the numpy
  array `numpy.from_dlpack` makes of it, without a copy.

Examples
--------
>>> import networkx as nx, apsp
>>> G = nx.Graph(); G.add_edge("a", "b", weight=2); G.add_edge("b", "c", weight=3)
>>> r = apsp.shortest_paths(G)
>>> r.labels.tolist(), int(r.distance("a", "c"))
(['a', 'b', 'c'], 5)
>>> import pandas as pd
>>> table = pd.DataFrame({"source": ["x", "y"], "target": ["y", "z"], "weight": [1, 4]})
>>> r = apsp.shortest_paths(table)
>>> r.labels.tolist(), int(r.distance("x", "z"))
(['x', 'y', 'z'], 5)
"""
from __future__ import annotations

import numpy as np

from .graph import EdgeList, compact_ids

#: the columns an edge table names (``weight`` optional)
TABLE_COLUMNS = ("source", "target", "weight")


def _library(obj) -> str:
    """The top-level package ``obj``'s type comes from ('' for builtins)."""
    return type(obj).__module__.split(".", 1)[0]


#: DLPack's device types (``__dlpack_device__()[0]``): the host, and CUDA memory
DLPACK_CPU, DLPACK_CUDA, DLPACK_CUDA_HOST, DLPACK_CUDA_MANAGED = 1, 2, 3, 13


def foreign_graph(graph, null_value: float | None = 0.0):
    """``graph`` as an `EdgeList`, a numpy array, a scipy sparse matrix or a device graph
    (`apsp.gpu.devinput.DeviceGraph`) when it comes from networkx, pandas, polars, torch or another
    array library (DLPack, ``__cuda_array_interface__``), else None (the caller says what it takes)."""
    library = _library(graph)
    if library == "networkx" and hasattr(graph, "adjacency"):
        return from_networkx(graph)
    if library in ("pandas", "polars") and hasattr(graph, "columns"):
        return from_table(graph)
    if library == "torch" and hasattr(graph, "device") and hasattr(graph, "layout"):
        return from_tensor(graph, null_value)
    if library == "cupyx" and hasattr(graph, "get") and hasattr(graph, "format"):
        return graph.get()  # a cupyx.scipy.sparse matrix: its scipy twin on the host
    if on_device(graph):
        from .gpu.devinput import device_graph

        return device_graph(graph, null_value)
    if hasattr(graph, "__dlpack__") and hasattr(graph, "__dlpack_device__"):
        return from_dlpack(graph)
    return None


def on_device(obj) -> bool:
    """Whether ``obj`` is an array in GPU memory: ``__cuda_array_interface__``, or a DLPack device
    other than the host (asked without importing its library)."""
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    if hasattr(obj, "__dlpack_device__") and hasattr(obj, "__dlpack__"):
        return int(obj.__dlpack_device__()[0]) != DLPACK_CPU
    return False


def from_dlpack(obj) -> np.ndarray:
    """An array on the host that exports DLPack, as numpy sees it (no copy)."""
    try:
        return np.from_dlpack(obj)
    except (TypeError, BufferError, RuntimeError) as exc:
        raise TypeError(f"cannot read a graph from {type(obj).__name__} through DLPack: {exc}") from exc


def from_networkx(G, weight: str = "weight") -> EdgeList:
    """A networkx graph's edges, its nodes kept as labels (see the module docstring)."""
    from .networkx_graph import ApspGraph

    converted = ApspGraph.from_networkx(G, {weight: 1})
    n = len(converted.nodes)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(converted.indptr))
    return EdgeList(n, src, converted.indices, converted.weights[weight],
                    source=f"networkx {type(G).__name__}", labels=_labels(converted.nodes))


def from_table(table) -> EdgeList:
    """A pandas or polars edge table's edges, its labels kept (see the module docstring)."""
    columns = [str(c) for c in table.columns]
    missing = [c for c in TABLE_COLUMNS[:2] if c not in columns]
    if missing:
        raise ValueError(f"an edge table needs columns 'source' and 'target' (and 'weight', optional); "
                         f"this one has {columns}")
    ends = [_column(table, name) for name in TABLE_COLUMNS[:2]]
    m = ends[0].shape[0]
    weight = _column(table, "weight") if "weight" in columns else np.ones(m, dtype=np.int64)
    if weight.dtype.kind not in "biuf":
        raise ValueError(f"the 'weight' column must hold numbers, not {weight.dtype}")
    labels, src, dst = _table_ids(*ends)
    return EdgeList(len(labels), src, dst, weight, source=f"{_library(table)} edge table",
                    labels=labels if len(labels) else None)


def _column(table, name: str) -> np.ndarray:
    column = table[name]
    values = column.to_numpy()
    if hasattr(column, "isna") and bool(column.isna().any()) or (
            hasattr(column, "null_count") and column.null_count()):
        raise ValueError(f"the edge table's {name!r} column has missing values")
    return values


def _table_ids(src: np.ndarray, dst: np.ndarray):
    """``(labels, src, dst)``: the distinct labels, sorted, and each end's index among them."""
    both = np.concatenate([src, dst])
    if both.dtype.kind in "iu" or (both.dtype.kind == "f" and np.array_equal(both, np.floor(both))):
        return compact_ids(src.astype(np.int64), dst.astype(np.int64))
    if both.dtype.kind == "f":
        raise ValueError("the edge table's vertex labels are fractional numbers; use integers or strings")
    names = _labels(list(both))
    labels, inverse = np.unique(names, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    return labels, inverse[: src.shape[0]], inverse[src.shape[0]:]


def _labels(values: list) -> np.ndarray:
    """Labels as apsp keeps them: integers stay integers, strings stay strings, any other (or a mix) by
    ``str``."""
    if values and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.asarray(values, dtype=np.int64)
    return np.asarray([v if isinstance(v, str) else str(v) for v in values], dtype=str)


def from_tensor(tensor, null_value: float | None = 0.0):
    """A torch tensor: dense on the CPU as a numpy array (no copy where numpy can share its memory;
    dense on a GPU as a device graph
    (`apsp.gpu.devinput`); sparse (COO, CSR) as a scipy sparse matrix on the host. Half floats
    (float16, bfloat16) are widened to float32, which holds each of their values exactly."""
    if str(tensor.layout) != "torch.strided":
        from .gpu.tensors import sparse_to_scipy

        return sparse_to_scipy(tensor)
    if tensor.device.type != "cpu":
        from .gpu.devinput import device_graph

        return device_graph(tensor, null_value)
    if str(tensor.dtype) in ("torch.bfloat16", "torch.float16"):
        return tensor.detach().float().numpy()  # scipy's sparse matrices hold no half floats
    return tensor.detach().numpy()
