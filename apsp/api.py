"""The public Python API: validate the input, make the plan (`apsp.plan`), run its dtype attempts
narrowest first with the registered solvers (`run_plan`, `narrow_first`: the retry the distributed
solve shares), package the `Result`."""
from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, TypeVar, Union

import numpy as np

from . import exactness
from .choices import BACKENDS, METHODS, OUTPUTS, check_choice
from .engine import SolveRequest, check_keywords, get_solver
from .graph import EdgeList, Graph, lightest_edges, vertex_indices
from .jit import book_compile, compile_seconds, compiling
from .plan import make_plan
from .result import Result
from .sizes import memory_limit

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from .choices import Backend, DtypeChoice, Method, Output

    #: what `shortest_paths` and `as_graph` accept as a graph (scipy sparse matrices too)
    GraphLike = Union[Graph, EdgeList, ArrayLike, str, "os.PathLike[str]", Any]


def as_graph(graph: GraphLike, *, directed: bool = True, unweighted: bool = False,
             null_value: float | None = 0.0, fmt: str | None = None) -> Graph:
    """Turn user input into a validated `Graph`.

    Parameters
    ----------
    graph : Graph, EdgeList, array_like, scipy sparse matrix, list of tuples, networkx graph, \
pandas or polars DataFrame, torch tensor, DLPack or CUDA array, str or os.PathLike
        A `Graph` (used as is), an `EdgeList`, a square dense array
        (``null_value``, inf and nan mean no edge, as in scipy), a scipy sparse
        matrix (explicit entries are edges), a sequence of ``(u, v)`` or
        ``(u, v, w)`` tuples (0-based; ``n`` = largest vertex + 1), a networkx
        graph (its ``weight`` attribute; nodes kept as labels), an edge table
        with columns ``source``, ``target`` and optional ``weight`` (labels
        kept), a torch tensor (dense or sparse), an array on a GPU (DLPack or
        ``__cuda_array_interface__``: kept on its device, `apsp.gpu.devinput`;
        ``unweighted`` or ``directed=False`` read it on the host), or a path to
        a graph file (`apsp.inputs`).
    directed : bool, optional
        If False, an edge either way is an edge both ways (the lighter wins
        where both are given).
    unweighted : bool, optional
        Give every edge weight 1.
    null_value : float or None, optional
        For dense arrays: the entry that means "no edge" (default 0; None: only
        inf and nan do).
    fmt : str, optional
        For files: the format name (default: from the suffix), as in `apsp.read_graph`.

    Returns
    -------
    Graph

    Raises
    ------
    TypeError
        For input of another kind.
    ValueError
        For a non-square array, negative or non-integer vertex numbers, or NaN weights.
    GraphFormatError
        For a malformed file (naming file, line and problem).
    """
    if isinstance(graph, Graph):
        g = graph
    elif isinstance(graph, (str, os.PathLike)):
        from .io import read_graph

        loaded = read_graph(Path(graph), fmt=fmt)
        return as_graph(loaded, directed=directed, unweighted=unweighted, null_value=null_value)
    elif isinstance(graph, EdgeList):
        g = Graph.from_edges(graph)
    elif _is_scipy_sparse(graph):
        g = Graph.from_sparse(graph)
    elif isinstance(graph, np.ndarray):
        g = Graph.from_dense(graph, null_value=null_value)
    elif isinstance(graph, (list, tuple)):
        g = Graph.from_edges(_edges_from_tuples(graph))
    else:
        from .inputs import foreign_graph

        converted = foreign_graph(graph, null_value)
        if converted is None:
            raise TypeError(
                f"cannot read a graph from {type(graph).__name__}: give a square array, a scipy sparse "
                "matrix, an apsp.EdgeList, a list of (u, v[, w]) tuples, a networkx graph, a pandas or "
                "polars edge table (source, target[, weight]), a torch tensor, a DLPack or CUDA array, or a "
                "file path")
        return as_graph(converted, directed=directed, unweighted=unweighted, null_value=null_value)
    if unweighted:
        g = _unit_weights(g)
    if not directed:
        g = _symmetrized(g)
    return g


def _is_scipy_sparse(obj) -> bool:
    """A scipy sparse matrix or array? Without importing scipy.sparse (50 ms) when it is not
    loaded: then ``obj`` cannot be one."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(obj)


def _edges_from_tuples(items) -> EdgeList:
    arr = np.asarray(items)
    if arr.dtype.kind not in "biuf":  # strings, None, mixed objects
        bad = next((x for t in items for x in (t if isinstance(t, (list, tuple)) else [t])
                    if isinstance(x, (str, bytes)) or x is None), None)
        raise TypeError(f"edge tuples must hold numbers (u, v[, w]), found {bad!r}"
                        if bad is not None else "edge tuples must hold numbers (u, v[, w])")
    if arr.size == 0:
        return EdgeList(0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    if arr.ndim != 2 or arr.shape[1] not in (2, 3):
        raise ValueError("an edge list must hold (u, v) or (u, v, w) tuples")
    u = arr[:, 0].astype(np.int64)
    v = arr[:, 1].astype(np.int64)
    if (arr[:, :2] != np.floor(arr[:, :2])).any() or min(u.min(), v.min()) < 0:
        raise ValueError("edge endpoints must be non-negative integers (0-based)")
    w = arr[:, 2] if arr.shape[1] == 3 else np.ones(len(u), dtype=np.int64)
    return EdgeList(int(max(u.max(), v.max())) + 1, u, v, w)


def _unit_weights(g: Graph) -> Graph:
    csr = g.to_csr().copy()
    csr.data = np.ones_like(csr.data, dtype=np.int8)
    return Graph(n=g.n, csr=csr, source=g.source, labels=g.labels)


def _symmetrized(g: Graph) -> Graph:
    """Undirected: an edge either way is an edge both ways; with both present the lighter wins."""
    csr = g.to_csr().tocoo()
    sym = lightest_edges(g.n, np.concatenate([csr.row, csr.col]), np.concatenate([csr.col, csr.row]),
                         np.concatenate([csr.data, csr.data]))
    return Graph(n=g.n, csr=sym, source=g.source, labels=g.labels)


def shortest_paths(graph: GraphLike, method: Method = "auto", backend: Backend = "auto",
                   dtype: DtypeChoice = None, *, block_size: int | None = None,
                   directed: bool = True, unweighted: bool = False,
                   return_predecessors: bool = False, return_successors: bool = False,
                   null_value: float | None = 0.0, progress: bool | None = None,
                   sources: ArrayLike | None = None, output: Output | None = None, **options: Any) -> Result:
    """All-pairs shortest paths (or from some sources only).

    Parameters
    ----------
    graph, directed, unweighted, null_value
        The graph and how to read it, as `as_graph` takes them.
    method, backend : str, optional
        {"auto", "fw", "nd-fw", "bfs", "dijkstra", "johnson", "reference"} and {"auto", "cpu", "gpu"}
        (`apsp.choices`; another name is a ValueError naming these): "auto" as README's "Choosing a
        method" says (`apsp.plan`).
    dtype : {None, "int16", "int32", "int64", "float32", "float64", "uint8", "uint16"}
        None: the narrowest that holds the actual distances, verified after the solve
        (`apsp.exactness`; ``info["dtype_tried"]``, ``"dtype_check"``); uint8/uint16 for BFS only.
    block_size : int, optional
        Floyd-Warshall's blocking factor (None: the backend's best).
    sources : sequence of int, optional
        Only these sources' rows (labels when the graph has them): a (k, n) result, by k
        searches when they cost less than the full solve (`apsp.plan.auto_pick`).
    return_predecessors, return_successors : bool, optional
        Also return scipy-style predecessor and/or next-hop matrices (int32, -9999 = none).
    progress : bool or None, optional
        A progress bar (None: on a terminal only).
    output : {None, "numpy", "torch"}, optional
        What ``Result.distances`` (and the path matrices) are: numpy arrays on the host, or torch
        tensors: on the input's device for a GPU array, else where the solve left them (the GPU for
        in-core Floyd-Warshall on the GPU, without a copy to the host; the CPU otherwise). None
        (default): "torch" for an array on a GPU (torch, CuPy, JAX, ...: ``cupy.from_dlpack(result)``
        and ``jax.dlpack.from_dlpack`` take the result without a copy), "numpy" for anything else
        (a CPU torch tensor included).
    **options
        The fields of `apsp.engine.SolveRequest` (an unknown name is a `TypeError`):
        memory (``gpu_memory``, ``host_memory``, ``out_of_core``, ``scratch_dir``, ``ooc_rows``),
        checkpoints (``checkpoint``, ``resume``, ``checkpoint_every``, ``on_round``), engines.

    Returns
    -------
    Result
        Distances, method, backend, dtype, timings and info (``info["why"]``: the plan's reasons).

    Raises
    ------
    NegativeCycleError, DtypeError, BackendUnavailableError, MemoryPlanError, GraphFormatError, ValueError
        A negative cycle, a dtype too narrow, no usable GPU, no memory route fits, a bad file or argument.

    Examples
    --------
    >>> import numpy as np, apsp
    >>> r = apsp.shortest_paths(np.array([[0, 3, 0], [0, 0, 4], [1, 0, 0]]), backend="cpu")
    >>> r.distances.tolist(), r.dtype.name
    ([[0, 3, 7], [5, 0, 4], [1, 4, 0]], 'int16')
    """
    # compiles are counted only once Numba is listened to: never import it here for that
    t0, compiled = time.perf_counter(), compile_seconds() if "numba" in sys.modules else 0.0
    check_keywords(options, _PARAMETERS)
    check_choice("method", method, METHODS)
    check_choice("backend", backend, BACKENDS)
    if output is not None:
        check_choice("output", output, OUTPUTS)
    home = _input_device(graph)  # where a GPU array's result goes back to
    with memory_limit(options.get("host_memory")):  # a file read and the graph built within the budget
        g = as_graph(graph, directed=directed, unweighted=unweighted, null_value=null_value)
    card: Any = g if getattr(g, "device_matrix", None) is not None else None  # a `DeviceGraph`
    on_card = card is not None
    if on_card:
        options.setdefault("device", home)
        if str(options["device"]) != home:
            raise ValueError(f"the graph is on {home}, but device={options['device']!r} was asked for: "
                             "move the array there first, or leave device unset")
    options["output"] = output or ("torch" if home else "numpy")
    request = SolveRequest(progress=progress, **options)
    src = None if sources is None else source_vertices(sources, g.n, g.labels)
    t_plan = time.perf_counter()
    plan = make_plan(g, method, backend, dtype, block_size=block_size, predecessors=return_predecessors,
                     successors=return_successors, sources=src, request=request)
    note = None
    if on_card and plan.backend != "gpu":
        # the CPU engines read host memory: one copy of the matrix, planned as a host input is
        g, note = card.host_graph(), "copied to the host: the plan runs on the CPU"
        plan = make_plan(g, method, backend, dtype, block_size=block_size, predecessors=return_predecessors,
                         successors=return_successors, sources=src, request=request)
    stages = {"validate": t_plan - t0, "setup": time.perf_counter() - t_plan}
    book_compile(stages, compile_seconds() - compiled, "validate")  # a dense input's kernels, first run
    result = run_plan(g, plan, stages)
    if home:
        result.info["device_input"] = note or _device_note(plan, card)
        result = result.on_device(home) if options["output"] == "torch" else result
    return result


def _input_device(graph) -> str | None:
    """The device a GPU array (or a `DeviceGraph`) lives on, as torch names it; None for the host."""
    if getattr(graph, "device_matrix", None) is not None:
        return graph.device
    from .inputs import _library, on_device

    if _library(graph) == "torch":  # sparse tensors too, which export no DLPack
        where = getattr(graph, "device", None)
        return None if where is None or where.type == "cpu" else str(where)
    if not on_device(graph):
        return None
    from .gpu.tensors import wrap

    return str(wrap(graph).device)


def _device_note(plan, card) -> str:
    """What became of a GPU array's weights (``card``: its `DeviceGraph`, None where it was read on the
    host), for ``Result.info["device_input"]``."""
    if card is None:
        return "copied to the host: a sparse, unweighted or undirected input is read there"
    in_core_fw = plan.backend == "gpu" and any(
        s.method == "fw" and s.opts.memory is not None and not s.opts.memory.out_of_core for s in plan.steps)
    if not in_core_fw:
        return "copied to the host: the solver reads the host's edges"
    # the plan's estimates may have read the edges on the host (nested dissection's candidacy)
    return "kept on the device" + ("; its edges were also read on the host for the plan" if card.copied_to_host else "")


#: decisions (method, backend, dtype, memory plan) and retries are logged here at INFO level
log = logging.getLogger(__name__)

Out = TypeVar("Out")


class DtypeAttempt(Protocol):
    """What `narrow_first` reads of an attempt (`apsp.plan.Step`, `apsp.exactness.Attempt`)."""

    @property
    def dtype(self) -> np.dtype | None: ...

    @property
    def checked(self) -> bool: ...


AttemptT = TypeVar("AttemptT", bound=DtypeAttempt)


def narrow_first(attempts: Iterable[AttemptT], solve: Callable[..., Out],
                 suspected: Callable[[Out, AttemptT], bool], max_abs_weight,
                 requested: bool) -> tuple[Out, AttemptT, list[str]]:
    """Solve in each attempt's dtype (``.dtype``, ``.checked``) until a result is trusted.

    A checked attempt's result is kept only if ``suspected(out, attempt)`` is False; else the
    next, wider attempt runs. Returns the result, its attempt and the dtype names tried.

    Raises
    ------
    DtypeError
        When the last attempt may have cut off a distance (`apsp.exactness.cutoff_error`).
    """
    attempts = list(attempts)
    tried: list[str] = []
    for number, attempt in enumerate(attempts, 1):
        out = solve(attempt)
        if attempt.dtype is not None:
            tried.append(attempt.dtype.name)
        if not (attempt.checked and suspected(out, attempt)):
            return out, attempt, tried
        if number == len(attempts):
            raise exactness.cutoff_error(attempt.dtype, max_abs_weight, requested=requested)
        log.info("dtype %s may have cut off a distance (a value within max|w| of its limit): solving "
                 "again in %s", attempt.dtype, attempts[number].dtype)
        del out  # the wider solve may need the memory
    raise ValueError("a plan without attempts")


def run_plan(g, plan, timings: dict) -> Result:
    """Execute ``plan`` (`apsp.plan.make_plan`) on ``g``; ``timings``: the stages before it
    ("validate", "setup"), which the result's timings start with."""
    where = plan.backend
    compiled = compile_seconds()
    t_first = time.perf_counter()
    marks: dict = {}

    def solve(step):
        marks["try"] = time.perf_counter()
        if step.refusal is not None:
            raise step.refusal
        dt = step.dtype
        with compiling(f"CPU kernels for {dt.name if dt is not None else step.method.upper()}"):
            try:
                out = get_solver(step.solver, where)(g, step.opts)
            except BaseException as exc:
                if where == "gpu":  # a failed attempt leaves the card as it found it
                    from .gpu import give_back_memory

                    give_back_memory(exc)
                raise
            if where == "gpu":  # so that a retry, or the next call, plans against the whole card
                from .gpu import give_back_memory

                give_back_memory()
        if plan.sources is not None and not plan.rows_by_search:  # a full solve was cheaper: keep the rows
            src = plan.sources
            out.dist = _rows(out.dist, src)
            out.predecessors = None if out.predecessors is None else _rows(out.predecessors, src)
            out.successors = None if out.successors is None else _rows(out.successors, src)
        marks["solved"] = time.perf_counter()
        return out

    def suspected(out, step) -> bool:
        # an engine that can read its result on its device has checked it; else the host reads it
        suspect = out.info.pop("cutoff_suspected", None)
        if suspect is None:
            suspect = exactness.cutoff_suspected(out.dist, step.opts.cutoff_band)
        marks["checked"] = time.perf_counter()
        return suspect

    out, step, tried = narrow_first(plan.steps, solve, suspected, g.max_abs_weight,
                                    requested=plan.requested[2] is not None)
    t_checked = marks.get("checked", marks["solved"])
    if step.cast_to is not None:
        out.dist = _narrowed(out.dist, step, g)
        t_checked = time.perf_counter()
    info = out.info
    if plan.skipped:
        info["dtype_skipped"] = list(plan.skipped)
    if plan.fallback:
        info["method_fallback"] = plan.fallback
    if step.dtype is not None:
        info.update(dtype_tried=tried, dtype_retry=len(tried) > 1,
                    dtype_check="cast" if step.cast_to is not None else "verified" if step.checked else "bound")
    info["why"], info["plan"] = plan.why(info), plan.summary()
    t_end = time.perf_counter()
    # stages add up to the whole call: "retry" the narrower solves that were cut off, whole;
    # "check" verifying the result; "other" what the solver's own stages miss
    timings = dict(timings)
    if len(tried) > 1:
        timings["retry"] = marks["try"] - t_first
    timings.update(out.timings)
    checked = step.checked or step.cast_to is not None
    if checked:
        timings["check"] = t_checked - marks["solved"]
    elapsed = (marks["solved"] if checked else t_checked) - marks["try"]
    if out.timings:
        timings["other"] = max(0.0, elapsed - sum(out.timings.values()))
    else:
        timings["solve"] = elapsed
    timings["other"] = timings.get("other", 0.0) + (t_end - t_checked)  # the explanation, the bookkeeping
    # a first run compiles its kernels inside the solve: book those seconds as "compile"
    book_compile(timings, compile_seconds() - compiled, [*out.timings, "other", "solve", "retry"])
    result = Result(distances=out.dist, method=step.method, backend=where, dtype=_dtype_of(out.dist),
                  block_size=out.block_size, predecessors=out.predecessors, successors=out.successors,
                  timings=timings, info=info, sources=plan.sources, labels=g.labels)
    output = plan.steps[0].opts.request.output
    if output == "torch" and isinstance(result.distances, np.ndarray):
        result = result.on_device(plan.machine.device if where == "gpu" else "cpu")
    return result


def _narrowed(dist, step, g):
    """The exact result ``dist`` cast to the dtype asked for (``step.cast_to``), checked: on the host
    (into a scratch file where the solve streamed from one), or on the device where it was left."""
    if not isinstance(dist, np.ndarray):  # a result left on the device is narrowed there
        from .gpu.tensors import cast_checked

        return cast_checked(dist, step.cast_to, g.has_negative_weights)
    target = None
    memory = step.opts.memory
    if memory is not None and memory.out_of_core and memory.matrix_on_disk and dist.shape == (g.n, g.n):
        from .outofcore import HostMatrix  # the result stays off RAM, as the solve's did

        target = HostMatrix(g.n, step.cast_to, on_disk=True, scratch_dir=memory.scratch_dir).array
    return exactness.cast_checked(dist, step.cast_to, g.has_negative_weights, out=target)


def _rows(a, rows: np.ndarray):
    """Rows ``rows`` of a result (numpy, or a tensor on its device)."""
    if isinstance(a, np.ndarray):
        return a[rows]
    from .gpu.tensors import take_rows

    return take_rows(a, rows)


def _dtype_of(a) -> np.dtype:
    """A result's numpy dtype (a tensor's by its name)."""
    return a.dtype if isinstance(a, np.ndarray) else np.dtype(str(a.dtype).replace("torch.", ""))


def source_vertices(sources, n: int, labels: np.ndarray | None = None) -> np.ndarray:
    """``sources=`` as an int64 array of vertices in ``0..n-1`` (ValueError otherwise); with
    ``labels``, the sources are labels."""
    if labels is not None:
        return vertex_indices(labels, n, sources, "source")
    arr = np.atleast_1d(np.asarray(sources))
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError("sources must be a sequence of vertex numbers (0-based integers)")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"sources must be vertices in 0..{n - 1}")
    return arr


#: the named parameters of `shortest_paths` (for the nearest-name hint of an unknown keyword)
_PARAMETERS = ("method", "backend", "dtype", "block_size", "directed", "unweighted", "return_predecessors",
               "return_successors", "null_value", "progress", "output")
