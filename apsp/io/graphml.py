"""GraphML (``.graphml``), read through networkx.

Vertices are numbered 0..n-1 in the file's node order inside, and keep their
node ids (strings, as GraphML writes them) in ``EdgeList.labels``: results,
routes and the command line name vertices by those ids. An undirected graph
gives each edge both ways. Edge weights come from the ``weight`` attribute
(default 1 where absent); of parallel edges (a multigraph to networkx) the
lighter wins, as networkx's searches take it. Integer weights must fit int64,
and a file mixing integer and float weights must have every integer exact in
float64: never rounded. networkx is needed (``pip install 'apsp[networkx]'``).
"""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from xml.etree.ElementTree import ParseError

import numpy as np

from ..errors import GraphFormatError
from ..graph import EdgeList
from ..sizes import check_memory, memory_allowed
from ._file_bytes import is_gzip

__all__ = ["read_graph"]

#: networkx's reading of a GraphML document at its largest (the element tree, the graph's
#: dictionaries, the edge arrays): per byte of XML, and per node and edge beyond that (20-30 per
#: byte and 350 per element measured, 2-core box, 2026-11-28)
XML_BYTES_PER_BYTE = 24
XML_BYTES_PER_ELEMENT = 400
#: bytes of the document counted at a time (decompressed, when gzip)
_COUNT_CHUNK = 1 << 20


def _xml_bytes(path: Path) -> int:
    """What reading the document at ``path`` will hold (`XML_BYTES_PER_BYTE`,
    `XML_BYTES_PER_ELEMENT`), counted in one streaming pass that stops as soon as the count
    passes the memory allowed: a small compressed file that expands without end is refused
    before it is parsed."""
    limit = memory_allowed()[0]
    size = elements = 0
    tail = b""
    with gzip.open(path, "rb") if is_gzip(path) else open(path, "rb") as f:
        while True:
            chunk = f.read(_COUNT_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            seen = tail + chunk  # a tag split between two chunks is counted once
            elements += seen.count(b"<node") + seen.count(b"<edge")  # the tail is too short for a whole tag
            tail = chunk[-4:]
            if XML_BYTES_PER_BYTE * size + XML_BYTES_PER_ELEMENT * elements > limit:
                break
    return XML_BYTES_PER_BYTE * size + XML_BYTES_PER_ELEMENT * elements


def read_graph(path, weight: str = "weight") -> EdgeList:
    """Read a GraphML file.

    Parameters
    ----------
    path : str or os.PathLike
    weight : str
        The edge attribute holding weights; edges without it weigh 1.

    Examples
    --------
    >>> import networkx as nx, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.graphml")
    >>> G = nx.DiGraph(); G.add_edge("a", "b", weight=3); G.add_edge("b", "c")
    >>> nx.write_graphml(G, p)
    >>> e = read_graph(p)
    >>> e.n, e.src.tolist(), e.dst.tolist(), e.weight.tolist(), e.labels.tolist()
    (3, [0, 1], [1, 2], [3, 1], ['a', 'b', 'c'])
    """
    try:
        import networkx as nx
    except ImportError as exc:  # pragma: no cover - networkx is a test dependency
        raise ImportError("reading GraphML needs networkx: pip install 'apsp[networkx]'") from exc
    path = Path(path)
    try:
        check_memory(_xml_bytes(path), f"{path}: reading the GraphML document", hold=True)
        with gzip.open(path, "rb") if is_gzip(path) else open(path, "rb") as f:
            g = nx.read_graphml(f)
    except ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise GraphFormatError(path, line, f"not well-formed XML ({exc})") from exc
    except (nx.NetworkXError, ValueError, KeyError, EOFError, OSError, zlib.error) as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
            raise
        raise GraphFormatError(path, None, f"not a readable GraphML graph ({exc})") from exc
    index = {node: k for k, node in enumerate(g.nodes)}
    src, dst = np.array([(index[u], index[v]) for u, v in g.edges()], dtype=np.int64).reshape(-1, 2).T.copy()
    raw = [data.get(weight, 1) for _, _, data in g.edges(data=True)]
    bad = [k for k, w in enumerate(raw) if isinstance(w, bool) or not isinstance(w, (int, float))]
    if bad:
        u, v = list(g.edges())[bad[0]][:2]
        raise GraphFormatError(path, None, f"edge {u!r} -> {v!r}: {weight!r} is {raw[bad[0]]!r}, "
                                           "not a number")
    w = _weights(path, g, raw, weight)
    if not g.is_directed():
        loops = src == dst
        src, dst, w = (np.concatenate([src, dst[~loops]]), np.concatenate([dst, src[~loops]]),
                       np.concatenate([w, w[~loops]]))
    if g.is_multigraph():  # parallel edges, as networkx reads them: the lighter wins
        src, dst, w = _lightest(src, dst, w)
    # Python strings, each its own length (a fixed-width array pads every id to the longest)
    labels = np.array([str(node) for node in index], dtype=object)
    return EdgeList(len(index), src, dst, w, source=str(path), labels=labels)


#: the largest integer float64 holds exactly, with every smaller one
_FLOAT_EXACT = 2 ** 53


def _weights(path, g, raw: list, weight: str) -> np.ndarray:
    """The edges' weights as int64, or float64 when some weight is a float; a weight int64
    cannot hold, or an integer a float64 array would round, is a `GraphFormatError`."""
    floats = any(isinstance(x, float) for x in raw)
    limit = _FLOAT_EXACT if floats else 2 ** 63
    for k, x in enumerate(raw):
        if isinstance(x, int) and not -limit <= x < limit:
            u, v = list(g.edges())[k][:2]
            held = ("float64 cannot hold it exactly beside this file's float weights" if floats
                    else "beyond int64 (-2^63..2^63-1)")
            raise GraphFormatError(path, None, f"edge {u!r} -> {v!r}: {weight!r} is {x}, {held}")
    return np.asarray(raw, dtype=np.float64 if floats else np.int64)


def _lightest(src: np.ndarray, dst: np.ndarray, w: np.ndarray):
    """One edge per (src, dst) pair, the lightest of those given."""
    order = np.lexsort((w, dst, src))
    src, dst, w = src[order], dst[order], w[order]
    first = np.ones(src.shape[0], dtype=np.bool_)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    return src[first], dst[first], w[first]
