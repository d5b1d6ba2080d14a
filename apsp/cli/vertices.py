"""Vertices as the command line names them (labels, or numbers in the input's numbering) to 0-based
indices and back to what the API takes: ``--from``/``--to``, ``--rows``, ``--sources``."""
from __future__ import annotations


def sources_arg(args, n: int):
    """The source vertices (0-based) of ``--rows`` or ``--sources``; None for all."""
    rows = parse_rows(getattr(args, "rows", None), n)
    listed = getattr(args, "sources", None)
    if rows and listed:
        raise ValueError("give --rows or --sources, not both")
    if rows:
        import numpy as np

        return np.arange(rows[0], rows[1])
    if not listed:
        return None
    from ..graph import vertex_indices
    from ..io import FIRST_VERTEX, detect_format

    first = FIRST_VERTEX[detect_format(args.input, args.fmt)]
    given = [v.strip() for v in str(listed).split(",") if v.strip()]
    if not given:
        raise ValueError("--sources needs at least one vertex")
    labels = getattr(args, "_labels", None)
    if labels is not None:
        return vertex_indices(labels, n, given, "--sources")
    return [vertex_arg("--sources", v, first, n) for v in given]


def parse_rows(text, n: int):
    """``--rows I:J`` as (I, J), 0-based, J exclusive; None when not given."""
    if text is None:
        return None
    try:
        lo_text, hi_text = str(text).split(":")  # ValueError unless one colon
        lo = int(lo_text) if lo_text.strip() else 0
        hi = int(hi_text) if hi_text.strip() else n
    except ValueError:
        raise ValueError(f"--rows takes I:J (0-based rows I..J-1, e.g. 0:100 or 500:), got {text!r}") from None
    if not 0 <= lo < hi <= n:
        raise ValueError(f"--rows {text}: need 0 <= I < J <= n = {n}")
    return lo, hi


def vertex_arg(option: str, value, first: int, g) -> int:
    """A vertex given as the input names it (a label, or a number in the file's numbering), as
    a 0-based index (ValueError if there is none such). ``g``: the graph, or its vertex count."""
    from ..graph import vertex_index

    n, labels = (g, None) if isinstance(g, int) else (g.n, g.labels)
    if labels is not None:
        return vertex_index(labels, n, value, option)
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{option} takes a vertex number, got {value!r}") from None
    if not first <= number < n + first:
        raise ValueError(f"{option} {value} is not a vertex: this graph numbers its {n} vertices "
                         f"{first}..{n - 1 + first}")
    return number - first


def api_vertices(labels, indices):
    """The vertices ``indices`` as the API takes them for this graph: labels, or the indices."""
    return list(indices) if labels is None else labels[list(indices)].tolist()
