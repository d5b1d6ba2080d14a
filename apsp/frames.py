"""Results as edge tables in pandas or polars (`apsp.api.Result.to_frame`).

The libraries are imported only here, when a table is asked for; a missing one
stops with one line naming the extra (``pip install 'apsp[frames]'``).
"""
from __future__ import annotations

import numpy as np

#: rows of the distance matrix read at a time while counting and gathering pairs
ROWS_PER_STEP = 1024


def edge_table(result, library: str, sources, max_rows: int):
    """``source``, ``target``, ``distance`` of every reachable pair of the chosen rows."""
    if library not in ("pandas", "polars"):
        raise ValueError(f"unknown library {library!r}: choose 'pandas' or 'polars'")
    from .errors import require

    require(library, "Result.to_frame")
    rows = np.arange(result.distances.shape[0]) if sources is None else result._rows_of(sources)
    d, unreachable = result.distances, result.unreachable
    steps = np.split(rows, range(ROWS_PER_STEP, rows.shape[0], ROWS_PER_STEP))
    # count first, so that a table too large is refused before anything of its size exists
    total = sum(int(np.count_nonzero(d[chosen] != unreachable)) for chosen in steps)
    if total > max_rows:
        raise ValueError(f"the table would have {total:,} rows (reachable pairs), more than "
                         f"max_rows={max_rows:,}: pass sources= for fewer rows, or a larger max_rows")
    src = np.empty(total, dtype=np.int64)
    dst = np.empty(total, dtype=np.int64)
    dist = np.empty(total, dtype=d.dtype)
    at = 0
    for chosen in steps:
        block = d[chosen]
        r, c = np.nonzero(block != unreachable)
        src[at:at + r.shape[0]] = chosen[r]
        dst[at:at + r.shape[0]] = c
        dist[at:at + r.shape[0]] = block[r, c]
        at += r.shape[0]
    if result.sources is not None:  # rows of a (k, n) block: row r is vertex sources[r]
        src = np.asarray(result.sources, dtype=np.int64)[src]
    if result.labels is not None:
        src, dst = result.labels[src], result.labels[dst]
    from importlib import import_module

    # both libraries build a frame from a dict of columns
    return import_module(library).DataFrame({"source": src, "target": dst, "distance": dist})
