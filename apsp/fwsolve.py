"""The Floyd-Warshall solve skeleton: one loop of rounds around any engine.

Every Floyd-Warshall solver (in core on the CPU or the GPU, out of core
through either) is this skeleton over an engine. The skeleton owns what
surrounds the rounds, so it is written once:

* the block size, and the checkpoint session (`apsp.checkpoint`): start from
  the graph or resume from a saved state;
* the rounds, with a progress bar, ``on_round`` and checkpoints after each;
* Ctrl-C (the state is saved when checkpointing, then the interrupt goes on);
* the negative-cycle check and the final pass that turns sentinels into
  ``dtypes.unreachable_value``.

An engine owns where the matrix lives and how a round runs:

* tile kernels (the tile-engine protocol, `TileEngine`: allocate, copy, close
  a block, min-plus update, synchronise), shared with the out-of-core stream
  and the distributed driver;
* ``rounds(block, start_vertex)``: run the rounds from ``start_vertex``,
  yielding the vertices done after each. This is the engine's fast path: one
  Numba call per round on the CPU, the look-ahead pipeline on the GPU, the
  stripe stream out of core;
* ``n``, ``negative``, ``kind``; ``load(graph)`` / ``write_rows(i0, i1, rows)``
  (resume), ``read_rows(i0, i1)`` (checkpoints), ``negative_diagonal()`` (the
  vertices on a negative cycle) and ``finalize()`` (the result);
* flags: ``early_cycle_check`` (check the diagonal after each round: cheap on
  a host matrix), ``sync_for_progress`` (wait for queued work before moving the
  bar: the GPU's bar shows finished work), ``resumes_anywhere`` (else only at a
  multiple of the block size).

A schedule that is not a sequence of rounds plugs in as an engine whose
``rounds`` runs its own products over the tile kernels: nested-dissection FW
(`apsp.ndfw.ScheduleEngine`; DEVELOPING.md, "Solve skeleton and engines").
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .progress import progress_bar
from .solvers import SolveOutput


@dataclass
class Finalized:
    """What every engine's ``finalize`` returns: the distances on the host, the path matrices it
    recovered, and the verdict of its cut-off check (None: it made none)."""

    dist: np.ndarray
    successors: np.ndarray | None = None
    predecessors: np.ndarray | None = None
    cutoff_suspected: bool | None = None


class TileEngine(Protocol):
    """Tile kernels over one kind of memory (numpy arrays, torch tensors). ``c``, ``a``, ``b``
    and ``t`` are 2-D arrays of the engine; every operation may be asynchronous until `sync`."""

    kind: str
    negative: bool

    def empty(self, shape): ...

    def copy(self, dst, src) -> None: ...

    def close_block(self, t) -> None:
        """Floyd-Warshall on the square tile ``t`` in place (phase 1)."""

    def minplus(self, c, a, b) -> None:
        """``c = min(c, a (x) b)`` in place; ``c`` may overlap ``a`` or ``b`` when the other is closed."""

    def sync(self) -> None: ...


def run(graph, opts, engine, solver: str, block: int | None = None, default_block: int | None = None) -> SolveOutput:
    """Solve ``graph`` with ``engine``: the `SolveOutput` of ``engine.finalize()`` (a `Finalized`),
    the block, ``prepare``, ``compute`` and ``finalize`` seconds, the checkpoint session's info and
    ``info["cutoff_suspected"]`` where the engine checked.

    ``block`` fixes the round width (out of core: the planned pivot panel);
    otherwise ``opts.block_size`` or ``default_block``, or on resume the
    saved one when that is what divides the resume point. ``solver`` names
    the schedule in checkpoints.
    """
    t0 = time.perf_counter()
    requested = block or opts.block_size
    block = requested or default_block
    session = None
    if opts.checkpoint:  # checkpoints only where asked for: their module is not even loaded otherwise
        from .checkpoint import CheckpointSession

        session = CheckpointSession(opts.checkpoint, graph, opts.dtype, solver, block, opts.checkpoint_every,
                                    opts.resume)
    if session is not None and not engine.resumes_anywhere:
        block = session.block_for(requested, default_block)
    start = 0
    if session is not None and session.resuming:
        session.restore(engine.write_rows)
        start = session.start_vertex
    else:
        engine.load(graph)
    t1 = time.perf_counter()
    drive(engine, block, start, opts.progress, opts.on_round, session)
    if session is not None:
        session.finish()
    t2 = time.perf_counter()
    bad = engine.negative_diagonal()
    if len(bad):
        from .errors import NegativeCycleError  # here: building it imports scipy

        raise NegativeCycleError("Negative cycle detected", vertices=bad)
    result = engine.finalize()
    info = session.info() if session is not None else {}
    if result.cutoff_suspected is not None:
        info["cutoff_suspected"] = result.cutoff_suspected
    return SolveOutput(dist=result.dist, predecessors=result.predecessors, successors=result.successors,
                       block_size=block, info=info,
                       timings=dict(prepare=t1 - t0, compute=t2 - t1, finalize=time.perf_counter() - t2))


def drive(engine, block: int, start_vertex: int = 0, progress=None, on_round=None, session=None) -> None:
    """The rounds of ``engine`` from ``start_vertex``: progress bar, negative-cycle stop,
    checkpoints (``session``), ``on_round(vertices_done)``, Ctrl-C."""
    n = engine.n
    rounds_total = -(-n // block) if n else 0
    done_before = -(-start_vertex // block)
    label = getattr(engine, "label", "fw")
    with progress_bar(rounds_total, progress, desc=f"apsp {label} {engine.kind} n={n}", unit="round") as bar:
        bar.set_to(done_before)
        sync_every = max(1, rounds_total // 100)
        rounds = engine.rounds(block, start_vertex)
        try:
            for vertices_done in rounds:
                rounds_done = -(-vertices_done // block)
                if bar.shown and (rounds_done % sync_every == 0 or rounds_done == rounds_total):
                    if engine.sync_for_progress:
                        engine.sync()
                    bar.set_to(rounds_done)
                if engine.early_cycle_check and engine.negative and len(engine.negative_diagonal()):
                    break  # a negative cycle: the rest of the solve is meaningless
                if session is not None:
                    session.after_round(vertices_done, engine.read_rows, sync=engine.sync)
                if on_round is not None:
                    on_round(vertices_done)
        except KeyboardInterrupt as exc:
            rounds.close()  # the engine finishes what it queued
            if session is not None:
                session.interrupted(engine.read_rows, sync=engine.sync, exc=exc)
            raise
        finally:
            rounds.close()
