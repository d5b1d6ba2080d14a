"""Small real graphs bundled with apsp (see ``apsp/data/README.md`` for sources and licenses).

* ``"roget"``: cross-references between the 1022 categories of Roget's
  Thesaurus (1879), 5075 directed unweighted links (one a self-loop): a real
  link graph, for BFS. SNAP edge list, 0-based.
* ``"knuth-miles"``: highway mileages between 128 North American cities
  (1949), every pair both ways: a real dense weighted graph, for FW.
  Homework text (``N M``, then ``i j w``, 1-based).

>>> from apsp import datasets
>>> g = datasets.load("roget")
>>> g.n, g.m
(1022, 5075)
>>> datasets.names("roget")[0]
'existence'
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from .graph import EdgeList


@dataclass(frozen=True)
class Dataset:
    file: str
    fmt: str  # "snap" (0-based "u v" lines, '#' comments) or "homework" ("N M" then 1-based "i j w")
    names_file: str


#: the graphs the module's docstring describes
DATASETS = {
    "roget": Dataset("roget.txt", "snap", "roget.names.txt"),
    "knuth-miles": Dataset("knuth-miles.txt", "homework", "knuth-miles.names.txt"),
}


def available() -> list[str]:
    """Names of the bundled graphs."""
    return sorted(DATASETS)


def _dataset(name: str) -> Dataset:
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(f"no bundled graph {name!r}; choose one of {', '.join(available())}") from None


def _data_file(file: str) -> Path:
    return Path(str(resources.files("apsp") / "data" / file))


def path(name: str) -> Path:
    """Where the bundled graph file lies (to pass to ``apsp solve`` or `apsp.read_graph`)."""
    return _data_file(_dataset(name).file)


def names(name: str) -> list[str]:
    """Vertex labels of a bundled graph, in vertex order (category names, city names)."""
    return _data_file(_dataset(name).names_file).read_text(encoding="utf-8").splitlines()


def load(name: str) -> EdgeList:
    """A bundled graph as an `EdgeList` (vertices 0-based; unweighted graphs get weight 1)."""
    ds = _dataset(name)
    file = path(name)
    n = len(names(name))
    if ds.fmt == "snap":
        pairs = np.loadtxt(file, comments="#", dtype=np.int64, ndmin=2)
        src, dst, w = pairs[:, 0], pairs[:, 1], np.ones(len(pairs), dtype=np.int64)
    else:
        rows = np.loadtxt(file, dtype=np.int64, skiprows=1, ndmin=2)
        src, dst, w = rows[:, 0] - 1, rows[:, 1] - 1, rows[:, 2]
    return EdgeList(n, src, dst, w, source=str(file))
