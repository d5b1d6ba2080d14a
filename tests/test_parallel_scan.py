"""Record files parsed in pieces on threads give the same graph, or the same first error (same
line, same words), as one pass, whatever lies where the pieces meet."""
from __future__ import annotations

import numpy as np
import pytest

from apsp.errors import GraphFormatError
from apsp.io import _records, read_graph

FORMATS = {"homework": ".txt", "snap": ".snap", "dimacs": ".gr", "mtx": ".mtx"}


def _lines(rng, fmt: str, n: int, m: int) -> tuple[list[str], int]:
    rows = []
    for _ in range(m):
        i, j = rng.integers(1, n + 1, size=2)
        if i == j:
            j = i % n + 1
        w = int(rng.integers(-5, 100))
        if fmt == "snap":
            rows.append(f"{i - 1}\t{j - 1}")
        elif fmt == "dimacs":
            rows.append(f"a {i} {j} {w}")
        elif fmt == "mtx":
            rows.append(f"{i} {j} {w if rng.random() < 0.8 else w + 0.25}")
        else:
            rows.append(f"{i} {j} {w}")
    return rows, m


def _header(fmt: str, n: int, m: int) -> list[str]:
    return {"homework": [f"{n} {m}"], "snap": ["# a comment", f"# Nodes: {n} Edges: {m}"],
            "dimacs": ["c comment", f"p sp {n} {m}"],
            "mtx": ["%%MatrixMarket matrix coordinate real general", f"{n} {n} {m}"]}[fmt]


def _damage(rng, fmt: str, rows: list[str]) -> list[str]:
    rows = list(rows)
    kind = rng.integers(0, 9)
    at = int(rng.integers(0, len(rows)))
    if kind == 0:
        rows[at] = rows[at] + " 7 9"  # too many fields
    elif kind == 1:
        rows[at] = rows[at].rsplit(maxsplit=1)[0] if fmt != "snap" else rows[at].split()[0]
    elif kind == 2:
        rows[at] = rows[at].replace("1", "x", 1) if "1" in rows[at] else "1 2 z"
    elif kind == 3:
        rows.insert(at, rows[at])  # one line more than declared
    elif kind == 4:
        del rows[at]  # one fewer
    elif kind == 5:
        for _ in range(3):
            rows.insert(int(rng.integers(0, len(rows))), "" if rng.random() < 0.5 else "   \t")
    elif kind == 6:
        rows[at] = "99999 1 1" if fmt != "snap" else "-3\t1"
    elif kind == 7:
        rows[at] = rows[at] + "\r"
    return rows  # kind 8: left whole


def _outcome(path):
    try:
        g = read_graph(path)
    except GraphFormatError as exc:
        return ("error", str(exc))
    return ("graph", g.n, g.src.tolist(), g.dst.tolist(), np.asarray(g.weight).tolist())


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_pieces_on_threads_equal_one_pass(fmt, tmp_path, monkeypatch):
    rng = np.random.default_rng(sorted(FORMATS).index(fmt))
    scan_in_chunks, split = _records._scan_in_chunks, []

    def counted(*args):
        out = scan_in_chunks(*args)
        split.append(out is not None)
        return out

    monkeypatch.setattr(_records, "_scan_in_chunks", counted)
    kinds = set()
    for trial in range(40):
        n, m = int(rng.integers(2, 30)), int(rng.integers(1, 60))
        rows, m = _lines(rng, fmt, n, m)
        rows = _damage(rng, fmt, rows)
        text = "\n".join(_header(fmt, n, m) + rows) + ("\n" if rng.random() < 0.7 else "")
        path = tmp_path / f"g{trial}{FORMATS[fmt]}"
        path.write_text(text)
        monkeypatch.setattr(_records, "PARALLEL_SCAN_BYTES", 1 << 40)
        one_pass = _outcome(path)
        monkeypatch.setattr(_records, "PARALLEL_SCAN_BYTES", 0)
        for cores in (2, 3, 7):
            monkeypatch.setattr(_records, "thread_count", lambda c=cores: c)
            assert _outcome(path) == one_pass, (fmt, trial, cores, text)
        kinds.add(one_pass[0])
    assert kinds == {"graph", "error"} and any(split), "both outcomes, and pieces really parsed apart"
