"""The result of a solve: distances, how they were computed, and the paths and names around them."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from . import exactness
from .graph import vertex_index, vertex_indices, vertex_labels
from .paths import NoPathError, reconstruct_path, walk_back

if TYPE_CHECKING:
    import pandas
    import polars
    from numpy.typing import ArrayLike

    from .choices import FrameLibrary


@dataclass(eq=False, repr=False)
class Result:
    """All-pairs shortest paths of one graph, as `shortest_paths` returns them.

    ``distances[i, j]`` is the length of a shortest path from i to j; pairs with
    no path hold ``unreachable`` (``inf`` for float dtypes, the dtype's maximum
    for integer dtypes). Use ``reachable`` for a boolean mask, ``to_float()`` for
    scipy's float64-with-inf convention.

    Attributes
    ----------
    distances : numpy.ndarray, shape (n, n), or (k, n) with ``sources``
        Shortest distances, of ``dtype``; ``unreachable`` where there is no path.
        Row r holds the distances from ``sources[r]`` when sources were given.
        A torch tensor with ``output="torch"`` (the default for an array on a GPU:
        "GPU arrays in and out" in the guide); the result exports it through DLPack
        (``__dlpack__``, `to_dlpack`, `to_torch`), and `to_numpy` brings it to the host,
        where the methods that name vertices (`path`, `distance`, `to_frame`, `save`) read it.
    method : str
        The method that ran: ``"fw"``, ``"bfs"``, ``"dijkstra"``, ``"johnson"`` or ``"reference"``.
    backend : str
        Where it ran: ``"cpu"`` or ``"gpu"``.
    dtype : numpy.dtype
        The distances' type (chosen from the weights unless one was asked for).
    block_size : int or None
        Floyd-Warshall's blocking factor (None for other methods).
    predecessors : numpy.ndarray or None
        With ``return_predecessors=True``: int32, ``predecessors[i, j]`` is the
        vertex before j on a shortest path from i, -9999 where there is none.
    successors : numpy.ndarray or None
        With ``return_successors=True``: int32, ``successors[i, j]`` is the
        vertex after i on a shortest path to j, -9999 where there is none.
    timings : dict of str to float
        Seconds spent in each stage (``validate``, ``setup``, the solver's own
        stages such as ``h2d``, ``compute``, ``d2h``, and ``other``).
    info : dict
        Facts about the run worth keeping, e.g. the out-of-core plan.
    sources : numpy.ndarray or None
        The source vertices of the rows (``sources=``) as indices, None for all pairs.
    labels : numpy.ndarray or None
        The input's name of each vertex, ``labels[i]`` for row/column i (SNAP ids,
        GraphML node ids), or None when the input numbered its vertices by index.
        Methods that name vertices (`path`, `distance`, `index_of`, `to_frame`)
        take and give labels when there are labels, indices otherwise.
    n : int
        Number of vertices.
    unreachable : scalar
        The value of ``distances`` where there is no path.
    reachable : numpy.ndarray of bool, shape (n, n)
        Where a path exists.
    on_host : bool
        The distances are a numpy array (else a torch tensor: `to_numpy`).
    """

    distances: np.ndarray
    method: str
    backend: str
    dtype: np.dtype
    block_size: int | None = None
    predecessors: np.ndarray | None = None
    successors: np.ndarray | None = None
    timings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    sources: np.ndarray | None = None
    labels: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of vertices."""
        return self.distances.shape[1]

    def __repr__(self) -> str:
        """One short line: what was solved and how, never the arrays themselves."""
        rows = "" if self.sources is None else f", rows={len(self.sources)}"
        extras = [name for name in ("predecessors", "successors", "labels") if getattr(self, name) is not None]
        return (f"Result(n={self.n}{rows}, dtype={self.dtype.name}, method={self.method!r}, "
                f"backend={self.backend!r}" + "".join(f", {name}=..." for name in extras) + ")")

    def __eq__(self, other: object) -> bool:
        """Equal when both hold the same answer: distances (dtype included), predecessors,
        successors, source rows and labels, wherever they are (host or device); how it was
        computed (method, backend, timings, info) does not count."""
        if not isinstance(other, Result):
            return NotImplemented
        mine, theirs = self.to_numpy(), other.to_numpy()  # tensors on a device compared on the host
        return mine.distances.dtype == theirs.distances.dtype and all(
            _same(getattr(mine, name), getattr(theirs, name))
            for name in ("distances", "predecessors", "successors", "sources", "labels"))

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside

    @property
    def unreachable(self) -> np.generic:
        """The value of ``distances`` where there is no path (`apsp.unreachable_value`)."""
        return exactness.unreachable_value(self.dtype)

    @property
    def reachable(self) -> np.ndarray:
        """Boolean (n, n) mask: True where a path exists."""
        return self.distances != self.unreachable

    # -- arrays on a device -------------------------------------------------------------
    @property
    def on_host(self) -> bool:
        """Whether the distances are a numpy array (else a torch tensor, `to_numpy`)."""
        return isinstance(self.distances, np.ndarray)

    def on_device(self, device) -> "Result":
        """This result with its distances and path matrices as torch tensors on ``device``.

        Parameters
        ----------
        device : str or torch.device
            "cuda:0", "cpu", ...

        Returns
        -------
        Result
            Tensors already there kept, host arrays copied there once (a CPU tensor shares the
            numpy array's memory).
        """
        from .gpu.tensors import to_device

        return self._with(lambda a: to_device(a, device))

    def to_numpy(self) -> "Result":
        """This result with numpy arrays on the host.

        Returns
        -------
        Result
            Its distances and path matrices copied from their device once (a result on the host is
            returned as it is).
        """
        if self.on_host:
            return self
        from .gpu.tensors import as_numpy

        return self._with(as_numpy)

    def _with(self, convert) -> "Result":
        from dataclasses import replace

        return replace(self, distances=convert(self.distances),
                       predecessors=None if self.predecessors is None else convert(self.predecessors),
                       successors=None if self.successors is None else convert(self.successors))

    def to_torch(self):
        """The distances as a torch tensor, where they are.

        Returns
        -------
        torch.Tensor
            ``distances`` itself, or for a host result a CPU tensor sharing its memory (no copy).
        """
        from .gpu.tensors import to_device

        if self.on_host:
            return to_device(self.distances, "cpu")
        return self.distances

    def __dlpack__(self, **kwargs):
        """The distances through DLPack, where they are (``cupy.from_dlpack(result)``,
        ``torch.from_dlpack(result)``, ``numpy.from_dlpack(result)`` on the host): no copy."""
        return self.distances.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.distances.__dlpack_device__()

    def to_dlpack(self):
        """The distances as a DLPack capsule, where they are (no copy).

        Returns
        -------
        PyCapsule
            For libraries that take a capsule rather than an object with ``__dlpack__``.
        """
        return self.distances.__dlpack__()

    def to_float(self) -> np.ndarray:
        """Distances as float64 with ``inf`` where there is no path (scipy's convention)."""
        out = self.distances.astype(np.float64)
        out[~self.reachable] = np.inf
        return out

    def index_of(self, label: Any) -> int:
        """The row/column index of the vertex named ``label``.

        Parameters
        ----------
        label : int or str
            A label of `labels`; without labels, the index itself (checked).

        Returns
        -------
        int
            ``i`` with ``labels[i] == label``.

        Raises
        ------
        ValueError
            If no vertex has that label.

        Examples
        --------
        >>> import apsp
        >>> r = apsp.shortest_paths(apsp.EdgeList(2, [0], [1], [4], labels=[10, 20]))
        >>> r.index_of(20), int(r.distances[r.index_of(10), r.index_of(20)])
        (1, 4)
        """
        return vertex_index(self.labels, self.n, label)

    def distance(self, u: Any, v: Any) -> int | float:
        """The length of a shortest path from ``u`` to ``v`` (labels, or indices without labels).

        Parameters
        ----------
        u, v : int or str
            Start and end vertex; ``u`` must be one of the rows' sources.

        Returns
        -------
        int or float
            A Python int for integer dtypes, a float otherwise; ``math.inf`` when
            there is no path.
        """
        i, j = self._row_of(u), self.index_of(v)
        value = self.distances[i, j]
        if value == self.unreachable:
            return float("inf")
        return int(value) if self.distances.dtype.kind in "iu" else float(value)

    def _row_of(self, label) -> int:
        """The row of ``distances`` that holds the vertex named ``label``'s distances."""
        return int(self._rows_of([label])[0])

    def _rows_of(self, labels) -> np.ndarray:
        """The rows of ``distances`` of the vertices named ``labels``."""
        wanted = vertex_indices(self.labels, self.n, labels)
        if self.sources is None:
            return wanted
        order = np.argsort(self.sources, kind="stable")
        if not order.size:
            raise ValueError("the result holds no rows (sources=[])")
        pos = np.minimum(np.searchsorted(self.sources[order], wanted), len(order) - 1)
        missing = self.sources[order][pos] != wanted
        if missing.any():
            name = np.atleast_1d(np.asarray(labels, dtype=object)).reshape(-1)[np.argmax(missing)]
            raise ValueError(f"vertex {name!r} is not one of the sources")
        return order[pos]

    def path(self, i: Any, j: Any) -> list[Any]:
        """Vertices of a shortest path from i to j.

        Parameters
        ----------
        i, j : int or str
            Start and end vertex: labels when the result has `labels`, else 0-based indices.

        Returns
        -------
        list
            From ``i`` to ``j`` inclusive, named as ``i`` and ``j`` are.

        Raises
        ------
        ValueError
            If the solve kept neither predecessors nor successors (predecessors
            with ``sources``), or ``i`` is not one of the sources.
        apsp.paths.NoPathError
            If there is no path from ``i`` to ``j``.
        """
        a, b = self.index_of(i), self.index_of(j)
        try:
            if self.sources is not None:  # each row of predecessors is a whole shortest-path tree
                row = self._row_of(i)
                if self.predecessors is None:
                    raise ValueError("with sources=, solve with return_predecessors=True to get paths")
                if a != b and self.predecessors[row, b] < 0:
                    raise NoPathError(f"there is no path from {a} to {b}")
                route = walk_back(self.predecessors[row], a, b)
            elif self.successors is not None:
                route = reconstruct_path(self.successors, a, b, kind="successors")
            elif self.predecessors is not None:
                route = reconstruct_path(self.predecessors, a, b, kind="predecessors")
            else:
                raise ValueError("solve with return_predecessors=True or return_successors=True to get paths")
        except NoPathError:
            if self.labels is None:
                raise
            raise NoPathError(f"there is no path from {i!r} to {j!r}") from None
        return route if self.labels is None else self.labels[route].tolist()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the whole result to one ``.npz`` file, whole or not at all (`apsp.load_result` reads it).

        Parameters
        ----------
        path : str or os.PathLike
            The file: distances, the predecessor and successor matrices and
            sources when present, labels, and method, backend, block size,
            timings and info as JSON (`apsp.io.result`).

        Examples
        --------
        >>> import apsp, numpy as np, tempfile, os
        >>> r = apsp.shortest_paths(np.array([[0, 3], [1, 0]]))
        >>> p = os.path.join(tempfile.mkdtemp(), "r.npz")
        >>> r.save(p)
        >>> back = apsp.load_result(p)
        >>> np.array_equal(back.distances, r.distances), back.method == r.method
        (True, True)
        """
        from .io.result import save_result

        save_result(path, self)

    @overload
    def to_frame(self, library: Literal["pandas"] = ..., sources: ArrayLike | None = ...,
                 max_rows: int = ...) -> pandas.DataFrame: ...
    @overload
    def to_frame(self, library: Literal["polars"], sources: ArrayLike | None = ...,
                 max_rows: int = ...) -> polars.DataFrame: ...
    def to_frame(self, library: FrameLibrary = "pandas", sources: ArrayLike | None = None,
                 max_rows: int = 10_000_000) -> pandas.DataFrame | polars.DataFrame:
        """The reachable pairs as an edge table: columns ``source``, ``target``, ``distance``.

        Parameters
        ----------
        library : {"pandas", "polars"}
            The data frame library (imported only now; ``pip install 'apsp[frames]'``).
        sources : sequence, optional
            Only the rows of these vertices (labels, or indices without labels); default all rows.
        max_rows : int, optional
            Refuse, before building anything, a table of more reachable pairs than this.

        Returns
        -------
        pandas.DataFrame or polars.DataFrame
            One row per reachable pair (a vertex reaches itself at distance 0), by
            source then target; ``source`` and ``target`` are labels when the
            result has them, else indices; ``distance`` keeps the result's dtype.

        Raises
        ------
        ValueError
            For an unknown library, a vertex not among the rows, or more pairs than ``max_rows``.
        apsp.errors.MissingDependencyError
            When the library is not installed.
        """
        from .frames import edge_table

        return edge_table(self, library, sources, max_rows)


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Both None, or arrays of the same shape and values."""
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.array_equal(a, b))


def load_result(path: str | os.PathLike[str]) -> Result:
    """Read a result file written by `Result.save` (or ``apsp solve -o result.npz``).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file (`apsp.io.result` describes it).

    Returns
    -------
    Result
        The arrays bit for bit as saved, labels, and method, backend, block size,
        timings and info as JSON gave them back (tuples as lists).

    Raises
    ------
    GraphFormatError
        For a file that is not an apsp result file (any other ``.npz`` or zip included).
    MemoryPlanError
        Before reading arrays the memory available cannot hold.
    """
    from .io.result import read_result

    fields = read_result(path)
    fields["labels"] = vertex_labels(fields["labels"], fields["distances"].shape[1])
    return Result(**fields)
