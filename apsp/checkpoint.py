"""Checkpoints of a Floyd-Warshall solve: save the state every few minutes, resume after an interrupt.

After round ``r`` of blocked Floyd-Warshall the matrix holds the shortest
distances whose intermediate vertices all lie in ``0..k-1`` (``k`` =
``vertices_done``), whatever the block size or the backend. A checkpoint is
that matrix plus ``k``, the graph's fingerprint and the options that shape
the result, in one file written whole or not at all (`apsp.io.atomic`):

=========  =============================================================
bytes      content
=========  =============================================================
0..7       ``APSPCKPT``
8..15      header length L (little-endian uint64)
16..16+L   JSON header: version, n, dtype, vertices_done, negative,
           fingerprint, solver, block, crc32 of the matrix bytes, time,
           and header_crc32: the crc32 of the header's other fields (so of the
           matrix's crc32 too; an edited ``vertices_done`` is refused)
4096..     the n x n matrix (row-major, the kernels' INF sentinels)
=========  =============================================================

Resuming continues from ``k`` and gives the identical result for integer
dtypes: a state caught in the middle of a round (Ctrl-C) is also saved as
"``k`` = the round's start", which is exact because every entry is then the
length of a real path and no larger than the round's start value, and the
remaining rounds are monotone. Float results equal up to rounding, so a float
checkpoint is resumed only by the same solver with the same block size.

Examples
--------
>>> import numpy as np, os, tempfile
>>> from apsp import shortest_paths
>>> w = np.array([[0, 3, 0], [0, 0, 4], [1, 0, 0]])
>>> ck = os.path.join(tempfile.mkdtemp(), "state.ckpt")
>>> shortest_paths(w, method="fw", backend="cpu", checkpoint=ck).distances.tolist()
[[0, 3, 7], [5, 0, 4], [1, 4, 0]]
>>> os.path.exists(ck)   # removed once the solve has finished
False
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
import zlib
from pathlib import Path

import numpy as np

from .errors import APSPError
from .io.atomic import atomic_path, remove_stale_temporaries
from .sizes import format_size

__all__ = ["CheckpointError", "graph_fingerprint", "save_checkpoint", "read_header",
           "CheckpointSession", "DEFAULT_EVERY"]

MAGIC = b"APSPCKPT"
VERSION = 2
DATA_OFFSET = 4096
#: seconds between checkpoints unless checkpoint_every= says otherwise
DEFAULT_EVERY = 300.0
_CHUNK = 64 << 20


class CheckpointError(APSPError, ValueError):
    """A checkpoint cannot be used: another graph or options, a damaged file, or one in the way."""


# ----------------------------------------------------------------------------- fingerprint
def graph_fingerprint(graph) -> str:
    """SHA-256 of the graph's vertex count and its sorted, de-duplicated weighted edges.

    Examples
    --------
    >>> from apsp.graph import EdgeList, Graph
    >>> a = Graph.from_edges(EdgeList(3, [0, 1], [1, 2], [5, 7]))
    >>> b = Graph.from_edges(EdgeList(3, [1, 0], [2, 1], [7.0, 5.0]))
    >>> graph_fingerprint(a) == graph_fingerprint(b), graph_fingerprint(a)[:12]
    (True, 'edb2c0680202')
    """
    csr = graph.to_csr()
    h = hashlib.sha256()
    h.update(f"apsp-graph-v1 n={graph.n} nnz={csr.nnz}\n".encode())
    h.update(np.ascontiguousarray(csr.indptr, dtype=np.int64).data)
    h.update(np.ascontiguousarray(csr.indices, dtype=np.int64).data)
    w = csr.data
    exact = graph.integral and (w.dtype.kind in "iub" or not w.size or np.abs(w).max() < 2.0 ** 62)
    wt = np.dtype(np.int64 if exact else np.float64)
    h.update(f"{wt.name}\n".encode())
    h.update(np.ascontiguousarray(w, dtype=wt).data)
    return h.hexdigest()


# ----------------------------------------------------------------------------- the file
def save_checkpoint(path, header: dict, read_rows, n: int, dtype) -> None:
    """Write a checkpoint atomically; ``read_rows(i0, i1)`` gives rows i0..i1-1 of the matrix."""
    dt = np.dtype(dtype)
    step = max(1, _CHUNK // max(1, n * dt.itemsize))
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(b"\0" * DATA_OFFSET)  # header written last, with the checksum
        crc = 0
        for i0 in range(0, n, step):
            rows = np.ascontiguousarray(read_rows(i0, min(n, i0 + step)), dtype=dt)
            if rows.shape != (min(n, i0 + step) - i0, n):
                raise ValueError(f"checkpoint rows {i0}: expected shape {(min(n, i0 + step) - i0, n)}, "
                                 f"got {rows.shape}")
            crc = zlib.crc32(rows.data, crc)
            f.write(rows.data)
        meta = dict(header, version=VERSION, n=int(n), dtype=dt.name, crc32=crc)
        meta["header_crc32"] = _header_crc(meta)
        blob = json.dumps(meta, sort_keys=True).encode()
        if 16 + len(blob) > DATA_OFFSET:
            raise ValueError("checkpoint header too long")
        f.seek(0)
        f.write(MAGIC + len(blob).to_bytes(8, "little") + blob)


def _header_crc(meta: dict) -> int:
    """crc32 of every header field but ``header_crc32`` itself, in a canonical form."""
    fields = {k: v for k, v in meta.items() if k != "header_crc32"}
    return zlib.crc32(json.dumps(fields, sort_keys=True).encode())


def read_header(path) -> dict:
    """The JSON header of a checkpoint file, after checking its layout and size."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            head = f.read(DATA_OFFSET)
        size = path.stat().st_size
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {path}: {exc}") from exc
    if head[:8] != MAGIC:
        raise CheckpointError(f"{path} is not an apsp checkpoint (no APSPCKPT signature)")
    length = int.from_bytes(head[8:16], "little")
    try:
        if 16 + length > DATA_OFFSET:
            raise ValueError("header length out of range")
        meta = json.loads(head[16:16 + length])
        n, dt = int(meta["n"]), np.dtype(meta["dtype"])
        int(meta["vertices_done"]), int(meta["crc32"]), str(meta["fingerprint"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"checkpoint {path} has a damaged header ({exc})") from exc
    if meta.get("version") != VERSION:
        raise CheckpointError(f"checkpoint {path} has format version {meta.get('version')}; "
                              f"this apsp reads version {VERSION}")
    if meta.get("header_crc32") != _header_crc(meta):
        raise CheckpointError(f"checkpoint {path} is damaged: its header fails the crc32 check")
    if size != DATA_OFFSET + n * n * dt.itemsize:
        raise CheckpointError(f"checkpoint {path} is truncated or damaged: {size} bytes, expected "
                              f"{DATA_OFFSET + n * n * dt.itemsize} for n={n} {dt.name}")
    return meta


def read_rows(path, meta: dict, write_rows) -> None:
    """Stream the saved matrix to ``write_rows(i0, i1, rows)``, checking the crc32.

    Plain reads, never a memory map: a file truncated meanwhile is a `CheckpointError`
    naming it, where a map would end the process with SIGBUS.
    """
    n, dt = int(meta["n"]), np.dtype(meta["dtype"])
    if n == 0:
        return
    step = max(1, _CHUNK // (n * dt.itemsize))
    rows = np.empty((min(step, n), n), dtype=dt)
    crc = 0
    try:
        with open(path, "rb") as f:  # buffered: readinto fills the rows unless the file ends
            f.seek(DATA_OFFSET)
            for i0 in range(0, n, step):
                part = rows[:min(n, i0 + step) - i0]
                if f.readinto(part.data) != part.nbytes:
                    raise CheckpointError(f"checkpoint {path} is truncated: it changed while it was read "
                                          f"(rows {i0}..{i0 + part.shape[0] - 1} of {n} missing)")
                crc = zlib.crc32(part.data, crc)
                write_rows(i0, i0 + part.shape[0], part)
            if f.read(1):
                raise CheckpointError(f"checkpoint {path} changed while it was read (it grew)")
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {path}: {exc}") from exc
    if crc != int(meta["crc32"]):
        raise CheckpointError(f"checkpoint {path} is damaged: its matrix fails the crc32 check")


# ----------------------------------------------------------------------------- the session
class CheckpointSession:
    """Saves a solve's state every ``every`` seconds of rounds; restores it on resume.

    Solvers call `after_round` after each round, `interrupted` when Ctrl-C
    stops them, and `finish` once the answer is complete (the file is then
    removed). ``start_vertex`` says where a resumed solve continues.
    """

    def __init__(self, path, graph, dtype, solver: str, block: int, every: float | None, resume: bool):
        self.path = Path(path)
        self.n = graph.n
        self.dtype = np.dtype(dtype)
        self.solver = solver
        self.block = int(block)
        self.every = DEFAULT_EVERY if every is None else float(every)
        self.negative = bool(graph.has_negative_weights)
        self.fingerprint = graph_fingerprint(graph)
        self.resuming = False
        self.start_vertex = 0
        self.saves = 0
        self._meta: dict | None = None  # the saved header, read when resuming
        if self.path.is_dir():
            raise CheckpointError(f"checkpoint {self.path} is a directory; give a file name")
        remove_stale_temporaries(self.path)  # left by savers killed mid-write (a live one's is kept)
        if self.path.exists():
            if not resume:
                raise CheckpointError(
                    f"checkpoint {self.path} already exists; pass resume=True (--resume) to continue "
                    "from it, or remove it to start over")
            self._open_existing()
        elif not self.path.parent.is_dir():
            raise CheckpointError(f"cannot write checkpoint {self.path}: directory {self.path.parent} "
                                  "does not exist")
        need = self.n * self.n * self.dtype.itemsize + DATA_OFFSET
        free = shutil.disk_usage(self.path.parent).free
        if need > free:
            raise CheckpointError(f"checkpoint {self.path} needs {format_size(need)} free in "
                                  f"{self.path.parent}, but {format_size(free)} are free")
        self._vertices_done = self.start_vertex
        self._saved_vertices = self.start_vertex if self.resuming else -1
        self._last = time.monotonic()

    def _open_existing(self) -> None:
        meta = read_header(self.path)
        where = f"checkpoint {self.path}"
        if int(meta["n"]) != self.n or meta["fingerprint"] != self.fingerprint:
            raise CheckpointError(
                f"{where} was saved for a different graph (n={meta['n']}, fingerprint "
                f"{meta['fingerprint'][:12]}), not this one (n={self.n}, fingerprint "
                f"{self.fingerprint[:12]}); remove it or give another checkpoint file")
        if meta["dtype"] != self.dtype.name:
            raise CheckpointError(
                f"{where} holds {meta['dtype']} distances, but this solve uses {self.dtype.name}; "
                f"pass dtype='{meta['dtype']}' (--dtype {meta['dtype']}) to resume it")
        if bool(meta.get("negative")) != self.negative:
            raise CheckpointError(f"{where} disagrees with this graph about negative weights")
        if self.dtype.kind == "f" and (meta.get("solver") != self.solver or int(meta["block"]) != self.block):
            raise CheckpointError(
                f"{where} was saved by {meta.get('solver')} with block {meta['block']}; float results "
                f"depend on the schedule, so resume it with the same solver and block size "
                f"(this solve: {self.solver}, block {self.block})")
        done = int(meta["vertices_done"])
        if not 0 <= done <= self.n:
            raise CheckpointError(f"{where} is damaged: vertices_done={done} for n={self.n}")
        self._meta = meta
        self.resuming = True
        self.start_vertex = done

    def block_for(self, requested: int | None, default: int) -> int:
        """The block size an in-core solver uses: one that divides the resume point.

        ``requested`` is the user's block size (None when not given).
        """
        if not self.resuming:
            return requested or default
        assert self._meta is not None  # resuming: _open_existing read it
        saved = int(self._meta["block"])
        for b in [requested] if requested else [default, saved]:
            if b and self.start_vertex % b == 0:
                return int(b)
        raise CheckpointError(
            f"checkpoint {self.path} stopped after vertex {self.start_vertex}, which block size "
            f"{requested} does not divide; pass block_size={saved} (--block-size {saved})")

    def restore(self, write_rows) -> None:
        """Stream the saved matrix into the solver: ``write_rows(i0, i1, rows)``."""
        assert self._meta is not None, "restore() needs a checkpoint opened to resume"
        read_rows(self.path, self._meta, write_rows)

    def save(self, vertices_done: int, read_rows, sync=None) -> None:
        """Save the state after ``vertices_done`` vertices (``sync()`` first: the engine's work done)."""
        if sync is not None:
            sync()
        header = {"format": "apsp-checkpoint", "vertices_done": int(vertices_done), "negative": self.negative,
                  "fingerprint": self.fingerprint, "solver": self.solver, "block": self.block,
                  "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
        save_checkpoint(self.path, header, read_rows, self.n, self.dtype)
        self._saved_vertices = vertices_done
        self.saves += 1
        self._last = time.monotonic()

    def after_round(self, vertices_done: int, read_rows, sync=None) -> None:
        """Record a finished round; save when ``every`` seconds have passed since the last save."""
        self._vertices_done = vertices_done
        if vertices_done < self.n and time.monotonic() - self._last >= self.every:
            self.save(vertices_done, read_rows, sync)

    def interrupted(self, read_rows, sync=None, exc: BaseException | None = None) -> None:
        """Ctrl-C: save the state as of the last finished round, if it is newer than the file.

        The state may be in the middle of the next round; that is a valid
        state for "the round's start" (see the module docstring). A note on
        ``exc`` tells the user where to resume from.
        """
        note = None
        if self._vertices_done > max(self._saved_vertices, 0):
            self.save(self._vertices_done, read_rows, sync)
            note = (f"checkpoint saved to {self.path} after {self._vertices_done} of {self.n} vertices; "
                    f"continue with --resume (resume=True)")
        elif self.path.exists():
            note = (f"checkpoint {self.path} holds the state after {self._saved_vertices} of {self.n} "
                    f"vertices; continue with --resume (resume=True)")
        if note and exc is not None and hasattr(exc, "add_note"):
            exc.add_note(note)

    def finish(self) -> None:
        """The solve is complete: the checkpoint has served its purpose."""
        self.path.unlink(missing_ok=True)
        remove_stale_temporaries(self.path)

    def info(self) -> dict:
        out = {"checkpoint": str(self.path), "checkpoints_saved": self.saves}
        if self.resuming:
            out["resumed_from_vertex"] = self.start_vertex
        return out
