"""`solve`: the distributed solve from input to result, stage by stage."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
from mpi4py import MPI

from .. import exactness
from ..api import narrow_first
from ..errors import DtypeError, NegativeCycleError
from ..plan import distributed_backend, distributed_method
from . import inputs, output as out_mod
from .faults import RankFailedError, abort_on_failure, agreed, maybe_inject
from .fw import DistributedFW, solve_layout
from .grid import ProcessGrid
from .layout import BlockCyclic
from .local import make_engine
from .profile import StageTimer, format_rank_table, stage_maxima


@dataclass
class DistributedRun:
    """What `solve` returns on rank 0 when it wrote the distances straight to a file."""

    output: str
    n: int
    dtype: np.dtype
    block_size: int
    backend: str
    #: per stage, the largest seconds over ranks
    timings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)


def cuda_aware_mpi() -> bool:
    """Whether this MPI passes CUDA device buffers directly (``MPIX_Query_cuda_support``).

    Open MPI and MPICH both export the query; an MPI without it counts as not
    CUDA-aware (buffers are then staged through host memory).
    """
    try:
        query = ctypes.CDLL(MPI.__file__).MPIX_Query_cuda_support  # its dependencies include libmpi
        query.restype = ctypes.c_int
        return bool(query())
    except Exception:  # noqa: BLE001 - no such query, or a broken extension, means "no"
        return False


def _resolve_cuda_aware(option) -> bool:
    if option in (True, "yes", "on", "true"):
        return True
    if option in (False, "no", "off", "false"):
        return False
    if option in (None, "auto"):
        return cuda_aware_mpi()
    raise ValueError(f"cuda_aware must be 'auto', 'yes' or 'no', got {option!r}")


def output_format(path, fmt=None) -> str:
    """``"npy"`` or ``"homework"``: the output format of ``path`` (by ``fmt``, else by suffix,
    as `apsp.io.write_distances` decides); other formats and ``.gz`` are refused, since
    they cannot be written in parallel at known offsets."""
    from ..io import guess_format

    name = guess_format(path, fmt)
    if name not in ("npy", "homework"):
        raise ValueError(f"the distributed solver writes .npy or homework text in parallel, not {name}; "
                         "write .npy and convert, or solve on one node")
    if str(path).lower().endswith(".gz"):
        raise ValueError(f"the distributed solver writes uncompressed files; drop the .gz of {path}")
    return name


def _gpu_here(forced: bool) -> tuple[bool, str]:
    """Can this rank run the GPU engine? "auto" wants a real CUDA device; a forced
    ``backend="gpu"`` also accepts Triton's interpreter (TRITON_INTERPRET=1)."""
    from ..gpu import machine_facts

    return machine_facts().available(explicit=forced)


def _choose_backend(comm, backend: str) -> str:
    """The backend every rank uses (collective; decided by `apsp.plan.distributed_backend`)."""
    chosen, failed = distributed_backend(backend, lambda forced: comm.allgather(_gpu_here(forced)))
    if failed is not None:
        raise RankFailedError(failed[0], comm.size, "choosing the backend",
                              f"backend 'gpu' cannot run there: {failed[1]}")
    return chosen


def cast_agreed(comm, host: np.ndarray, dtype, negative: bool) -> np.ndarray:
    """This rank's finalized tiles in the requested narrower ``dtype`` (`apsp.exactness.cast_checked`);
    a distance that does not fit on any rank raises the same `DtypeError` on every rank."""
    try:
        narrow, problem = exactness.cast_checked(host, dtype, negative), None
    except DtypeError as exc:
        narrow, problem = None, str(exc)
    problems = [p for p in comm.allgather(problem) if p]
    if problems:
        raise DtypeError(problems[0])
    assert narrow is not None  # this rank's cast raised nothing
    return narrow


def solve(graph=None, comm=None, *, output=None, out_format=None, block_size=None, dtype=None,
          backend="auto", cuda_aware="auto", method="fw", directed=True, unweighted=False,
          null_value=0.0, fmt=None, grid=None, device=None, threads=None, poll_pieces=4, profile=False,
          lookahead=True, keep_dtype=False):
    """All-pairs shortest paths with blocked Floyd-Warshall across the ranks of ``comm``.

    Collective: every rank of ``comm`` calls it. Only rank 0's ``graph`` is
    read (other ranks may pass None); the matrix is then distributed 2-D
    block-cyclically and never held whole by one rank, unless you ask for it
    back (``output=None``).

    Parameters
    ----------
    graph : path, array, scipy sparse matrix, EdgeList, ... (see `apsp.as_graph`); rank 0 only
    comm : mpi4py communicator, default ``MPI.COMM_WORLD``
    output : path, optional
        Write the distances there in parallel (``.npy``, else homework text) and
        return a `DistributedRun` instead of gathering them.
    out_format : {"npy", "homework"}, optional
        Output format (default: from the suffix).
    keep_dtype : bool, optional
        ``.npy``: keep integer distances ("no path": the dtype's maximum) instead of float64 with inf.
    block_size : int, optional
        Tile edge (default 128 on CPU, 256 on GPU); any n works.
    dtype : distance dtype (default: the narrowest that holds the actual distances, as in
        `apsp.shortest_paths`: verified after the solve, solved again wider if cut off)
    backend : {"auto", "cpu", "gpu"}
        "gpu": one rank per GPU (``cuda:<node rank mod GPUs>``), torch + Triton
        tile kernels; "auto" picks it when every rank sees a GPU.
    cuda_aware : {"auto", "yes", "no"}
        Hand device buffers to MPI directly ("auto": when ``MPIX_Query_cuda_support``
        says so) or stage them through pinned host memory.
    grid : (Pr, Pc), optional
        Process grid (default: the most nearly square).
    threads : int, optional
        Numba threads per CPU rank (default: the node's cores / its ranks).
    profile : bool
        On GPUs, wait for each kernel group so the time split is exact (costs
        some overlap of communication with compute). CPU splits are always exact.
    lookahead : bool
        Overlap the next round's panel broadcasts with this round's update (default).

    Returns
    -------
    On rank 0: `apsp.result.Result` (``output=None``) or `DistributedRun`; None on other ranks.
    ``timings`` hold, per stage, the largest seconds over ranks; ``info["rank_timings"]``
    each rank's split (read, scatter, compute, comm, copy, write, gather).

    Raises
    ------
    RankFailedError
        On every rank, when some rank failed before compute (bad input, dtype,
        output path, memory, no GPU); names the rank and the cause.
    NegativeCycleError
        On every rank, when the graph has a negative cycle.

    A rank that fails during the collective rounds cannot be waited for: it
    prints which rank failed and why, and aborts the job (``MPI_Abort``).

    Examples
    --------
    Run by every rank, e.g. under ``mpiexec -n 2 python script.py``:

    >>> from apsp.distributed import solve
    >>> r = solve([(0, 1, 2), (1, 2, 3)], block_size=2)  # doctest: +SKIP
    >>> r.distances[0, 2] if r is not None else None      # doctest: +SKIP
    5
    """
    comm = MPI.COMM_WORLD if comm is None else comm
    timer = StageTimer()
    method = distributed_method(method)
    with timer("setup"):
        pgrid = ProcessGrid.create(comm, grid)
    rank = comm.rank
    engine = None
    try:
        with timer("setup"):
            chosen = _choose_backend(comm, backend)

        g = problem = target = out_kind = None
        with timer("read"), agreed(comm, "reading the input"):
            if rank == 0:
                g, problem = inputs.load_on_root(graph, dtype=dtype, block_size=block_size, backend=chosen,
                                                 directed=directed, unweighted=unweighted,
                                                 null_value=null_value, fmt=fmt)
                if output is not None:
                    target = inputs.check_output_path(output)
                    out_kind = output_format(target, out_format)
                    if out_kind == "homework":
                        from ..io.homework import format_rows  # noqa: F401 - fail now if missing
        problem = comm.bcast(problem, root=0)
        layout = BlockCyclic(problem.n, problem.block, pgrid.shape)

        def solve_in(attempt):
            # every rank solves in the attempt's dtype; the skeleton of a rank's solve
            nonlocal engine
            problem.dtype = attempt.dtype
            if engine is not None:
                engine.close()
                engine = None
            with timer("setup"), agreed(comm, "setting up the local tile engine"):
                aware = _resolve_cuda_aware(cuda_aware) if chosen == "gpu" else False
                engine = make_engine(chosen, pgrid, aware, problem.dtype, problem.negative, device=device,
                                     threads=threads)
                engine.warm_up()
                maybe_inject("setup", rank)
            if chosen == "gpu" and profile:
                timer.sync = engine.sync

            return _solve_on_ranks(comm, pgrid, layout, problem, g, engine, chosen, timer,
                                   poll_pieces=poll_pieces, lookahead=lookahead)

        def suspected(run, attempt) -> bool:
            # a checked dtype's result is kept only if no distance came within max|w| of its
            # limit on any rank (apsp.exactness); otherwise every rank solves again one dtype wider
            with timer("check", sync=True):
                band = exactness.cutoff_band(problem.dtype, problem.max_abs_weight)
                return comm.allreduce(bool(exactness.cutoff_suspected(run.d_real, band)), op=MPI.LOR)

        attempts = [exactness.Attempt(np.dtype(name), checked, cast) for name, checked, cast in problem.attempts]
        run, attempt, tried = narrow_first(attempts, solve_in, suspected, problem.max_abs_weight,
                                           requested=dtype is not None)
        checked, cast_to = attempt.checked, attempt.cast_to
        d, d_real, host, stage, negative_here = run.d, run.d_real, run.host, run.stage, run.negative
        del run
        labels = None if g is None else g.labels
        g = None  # rank 0 frees the graph before the output stage
        negative_all = [v for part in comm.allgather(negative_here) for v in part]
        if negative_all:
            raise NegativeCycleError("Negative cycle detected", vertices=np.array(sorted(negative_all)))

        with abort_on_failure(comm, stage):
            stage[0] = "copying the result to the host"
            if d is not host:
                with timer("copy", sync=True):
                    engine.copy(host, d_real)
            del d, d_real
            exactness.finalize_unreachable(host, problem.negative)
        if cast_to is not None:
            with timer("check"):
                host = cast_agreed(comm, host, cast_to, problem.negative)
            problem.dtype = host.dtype
        full, target = _deliver(comm, pgrid, layout, host, stage, timer,
                                None if output is None else (target, out_kind), keep_dtype)
        summaries = comm.gather(timer.summary(), root=0)
    finally:
        if engine is not None:
            engine.close()
        pgrid.free()

    if rank != 0:
        return None
    check = "cast" if cast_to is not None else "verified" if checked else "bound"
    return _answer(comm, pgrid, engine, summaries, tried, check, problem, method, chosen, full, target, labels)


def _answer(comm, pgrid, engine, summaries, tried, check, problem, method: str, backend: str, full, target,
            labels):
    """Rank 0's answer: the `Result` with the gathered matrix, or the `DistributedRun` of the file
    written (``target``); the stages' times are each the slowest rank's (``summaries``: every rank's)."""
    info = {"ranks": comm.size, "grid": tuple(pgrid.shape), "cuda_aware": bool(engine.cuda_aware),
            "staged": bool(engine.staged), "rank_timings": summaries, "device": str(engine.device),
            "dtype_tried": tried, "dtype_retry": len(tried) > 1, "dtype_check": check,
            "max_abs_weight": problem.max_abs_weight}
    worst = stage_maxima(summaries)
    if target is not None:
        return DistributedRun(output=str(target), n=problem.n, dtype=problem.dtype, block_size=problem.block,
                              backend=backend, timings=worst, info=info)
    from ..result import Result

    return Result(distances=full, method=method, backend=backend, dtype=full.dtype, block_size=problem.block,
                  timings=worst, info=info, labels=labels)


def _solve_on_ranks(comm, pgrid, layout, problem, g, engine, backend: str, timer, **fw_options):
    """One attempt's rounds on every rank: the input cut into this rank's blocks (from rank 0's
    ``g``), the matrix allocated, the rounds run, the diagonal read. Returns the run: its matrices,
    the stage reached (for the error of a later failure) and this rank's vertices on a negative cycle."""
    prepared = None
    with agreed(comm, "preparing the input for distribution"):
        if comm.rank == 0 and problem.transport == "edges":
            prepared = inputs.edges_by_rank(g, layout, problem.dtype)
    with agreed(comm, "allocating memory"):
        host, d = _allocate(pgrid, layout, engine, problem.dtype, backend)
        solver = DistributedFW(pgrid, solve_layout(layout, engine), engine, d, timer, **fw_options)
    d_real = d[: host.shape[0], : host.shape[1]]  # see solve_layout
    stage = ["distributing the input"]
    with abort_on_failure(comm, stage, None):
        with timer("scatter"):
            if problem.transport == "edges":
                inputs.scatter_edges(pgrid.cart, layout, pgrid.coords, prepared, host)
            else:
                inputs.scatter_dense(pgrid.cart, layout, pgrid.coords, g, host)
        del prepared
        if d is not host:
            with timer("copy", sync=True):
                engine.copy(d_real, host)
        stage[0] = "computing"
        solver.run()
        stage[0] = "checking for negative cycles"
        di, dj, verts = layout.local_diagonal(pgrid.coords)
        diag = engine.gather_values(d_real, di, dj)
    return SimpleNamespace(d=d, d_real=d_real, host=host, stage=stage, negative=verts[diag < 0].tolist())


def _allocate(pgrid, layout, engine, dtype, backend: str):
    """This rank's host block and the matrix its engine computes in (the host block itself on the
    CPU; a padded device matrix on the GPU), after checking the engine's memory for both."""
    shape = layout.local_shape(pgrid.coords)
    compute_layout = solve_layout(layout, engine)
    padded_shape = compute_layout.local_shape(pgrid.coords)
    needed = DistributedFW.bytes_needed(compute_layout, pgrid.coords, dtype)
    if padded_shape != shape:  # copies into and out of a strided view go through a temporary
        needed += shape[0] * shape[1] * np.dtype(dtype).itemsize
    engine.check_memory(needed)
    host = np.empty(shape, dtype=dtype)
    return host, (host if backend == "cpu" else engine.full(padded_shape, exactness.inf_value(dtype)))


def _deliver(comm, pgrid, layout, host, stage: list, timer, output, keep_dtype: bool):
    """The result gathered on rank 0 (``output`` None), or written in parallel to ``output``'s
    ``(target, format)`` (rank 0's) through a temporary file renamed when whole, removed if the job
    aborts: ``(gathered matrix or None, target)``."""
    full, target = None, None
    tmp: list[Any] = [None]  # the temporary file, once named
    with abort_on_failure(comm, stage, lambda: tmp[0] and tmp[0].unlink(missing_ok=True)):
        if output is None:
            stage[0] = "gathering the result"
            with timer("gather"):
                full = out_mod.gather_to_root(pgrid, layout, host)
            return full, None
        stage[0] = "writing the output"
        names = None
        if comm.rank == 0:
            from ..io.atomic import remove_stale_temporaries

            remove_stale_temporaries(output[0])  # a killed job's leftovers
            names = (output[0], out_mod.temp_name(output[0]), output[1])
        target, tmp[0], kind = comm.bcast(names, root=0)
        with timer("write"):
            if kind == "npy":
                out_mod.write_npy(pgrid, layout, host, tmp[0], keep_dtype)
            else:
                from ..io.homework import format_rows

                out_mod.write_text(pgrid, layout, host, tmp[0], format_rows)
            maybe_inject("write", comm.rank)
            out_mod.finalize_file(pgrid.cart, tmp[0], target)
    return full, target


def rank_table(run) -> str:
    """The per-rank time split of a `Result`/`DistributedRun` from `solve`, as text."""
    return format_rank_table(run.info["rank_timings"])

