"""Reading graphs and writing graphs and distance matrices, in every format apsp knows.

=========  =======================================  ============================  ==========
format     suffixes (any + ``.gz``)                 read                          write
=========  =======================================  ============================  ==========
homework   ``.txt`` ``.in`` ``.out``, no suffix     graph                         graph, distances
snap       ``.snap`` ``.edges`` ``.el`` ``.tsv``    graph                         graph
npy        ``.npy``                                 graph (dense matrix)          distances
mtx        ``.mtx``                                 graph                         graph, distances
dimacs     ``.gr``                                  graph                         graph
metis      ``.graph`` ``.metis``                    graph                         -
graphml    ``.graphml``                             graph (networkx)              -
csv        ``.csv``                                 graph (header source,target)  -
npz        ``.npz`` (not ``.gz``)                   - (`apsp.load_result`)        whole result
=========  =======================================  ============================  ==========

The format comes from the suffix (``.gz`` stripped) unless ``fmt`` names it; a
``.txt`` (or suffix-less) file that starts like another format (``#`` comments
as in SNAP's ``.txt.gz`` downloads, a Matrix Market banner, DIMACS ``c``/``p``
lines) is read as that format;
gzip input is recognised by its magic bytes, gzip output by a ``.gz`` suffix.
Every writer replaces its target whole or not at all (`apsp.io.atomic`).
Malformed input raises `apsp.errors.GraphFormatError` naming the file, the
1-based line and the problem.

Vertex names: formats that declare a vertex count and number vertices by index
(homework text, Matrix Market, DIMACS, METIS, ``.npy``) are read by index
(``EdgeList.labels`` None; `FIRST_VERTEX` is their first number). A SNAP edge
list names vertices by ids, compacted to 0..n-1 in increasing order with the
ids kept as labels (`apsp.io.edgelist`); GraphML keeps its node ids as string
labels; a CSV edge list (``source,target[,weight]`` header) keeps its ids, integers or strings, as
labels (`apsp.io.csvedges`). ``npz`` holds a whole `apsp.result.Result` (`apsp.io.result`); as a
distances output of `write_distances` it holds the matrix alone.
"""
from __future__ import annotations

import importlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

    from ..graph import EdgeList

__all__ = ["read_graph", "write_graph", "write_distances", "check_outputs", "FORMATS", "FIRST_VERTEX",
           "guess_format", "detect_format"]

#: format -> (module, can read a graph, can write a graph, can write distances)
FORMATS = {
    "homework": ("homework", True, True, True),
    "snap": ("edgelist", True, True, False),
    "npy": ("npy", True, False, True),
    "mtx": ("mtx", True, True, True),
    "dimacs": ("dimacs", True, True, False),
    "metis": ("metis", True, False, False),
    "graphml": ("graphml", True, False, False),
    "csv": ("csvedges", True, False, False),
    "npz": ("result", False, False, True),
}

#: the number a format gives its first vertex (apsp numbers from 0 inside; the CLI shows routes
#: and takes --from/--to in the file's own numbering), for inputs without labels
FIRST_VERTEX = {"homework": 1, "snap": 0, "npy": 0, "mtx": 1, "dimacs": 1, "metis": 1, "graphml": 0, "csv": 0}

_SUFFIXES = {"": "homework", ".txt": "homework", ".in": "homework", ".out": "homework",
             ".snap": "snap", ".edges": "snap", ".el": "snap", ".tsv": "snap",
             ".npy": "npy", ".mtx": "mtx", ".gr": "dimacs",
             ".graph": "metis", ".metis": "metis", ".graphml": "graphml", ".csv": "csv",
             ".npz": "npz"}

#: the names ``fmt`` takes: a format's name, a suffix without its dot, or one of these
_ALIASES = {**{name: name for name in FORMATS}, **{s[1:]: f for s, f in _SUFFIXES.items() if s},
            "hw": "homework", "text": "homework", "edgelist": "snap", "mm": "mtx", "matrixmarket": "mtx",
            "result": "npz"}


#: what each column of `FORMATS` lets a format do, for messages
_ABLE = {1: "be read", 2: "hold a graph written by apsp", 3: "hold distances"}


def _known(able: int = 1) -> str:
    """The formats that can do column ``able`` of `FORMATS` (1: read a graph), with their suffixes."""
    def suffixes(name):
        found = [s for s, f in _SUFFIXES.items() if f == name and s]
        return " ".join(found) + (" or none" if _SUFFIXES[""] == name else "")

    return "; ".join(f"{name} ({suffixes(name)})" for name, spec in FORMATS.items() if spec[able]) \
        + "; each also + .gz"


def guess_format(path, fmt: str | None = None, able: int | None = None) -> str:
    """The format name for ``path``: ``fmt`` (a name or alias) if given, else from the suffix.
    ``able``: the `FORMATS` column the caller needs (2: write a graph, 3: write distances): a
    format that cannot do it is refused, and errors list only the formats that can.

    Examples
    --------
    >>> guess_format("in.txt.gz"), guess_format("road.gr"), guess_format("x", "edgelist")
    ('homework', 'dimacs', 'snap')
    """
    if fmt is not None:
        key = str(fmt).lower().lstrip(".").removesuffix(".gz")
        if key not in _ALIASES:
            raise ValueError(f"unknown format {fmt!r}; known formats: {_known(able or 1)}")
        name = _ALIASES[key]
    else:
        p = Path(path)
        suffix = Path(p.stem if p.suffix.lower() == ".gz" else p).suffix.lower()
        if suffix not in _SUFFIXES:
            raise ValueError(f"cannot tell the format of {str(path)!r} from its suffix {suffix!r}; "
                             f"give it explicitly (fmt= or --format); known formats: {_known(able or 1)}")
        name = _SUFFIXES[suffix]
    if able and not FORMATS[name][able]:
        can = [f for f, spec in FORMATS.items() if spec[able]]
        raise ValueError(f"the {name} format cannot {_ABLE[able]}; formats that can: {', '.join(can)}")
    return name


def detect_format(path, fmt: str | None = None) -> str:
    """The format `read_graph` reads ``path`` as: ``fmt``, else the suffix, with ``.txt``-like
    files sniffed (see `_sniff`)."""
    name = guess_format(path, fmt)
    if fmt is None and name == "homework" and Path(path).is_file():
        name = _sniff(Path(path)) or name
    return name


def _sniff(path: Path) -> str | None:
    """The format of a ``.txt``-like file that is plainly not homework text.

    SNAP ships its edge lists as ``.txt(.gz)``, which starts with ``#``
    comments; a homework file never does. Matrix Market and DIMACS files are
    as easy to tell by their first bytes.
    """
    import gzip

    from ._file_bytes import GZIP_MAGIC

    try:
        with open(path, "rb") as f:
            head = f.read(4096)
            if head[:2] == GZIP_MAGIC:
                f.seek(0)
                head = gzip.GzipFile(fileobj=f).read(4096)
    except (OSError, EOFError):
        return None  # the reader reports it
    start = head.lstrip()
    if start[:14].lower() == b"%%matrixmarket":
        return "mtx"
    if start[:1] in (b"#", b"%"):
        return "snap"
    if start[:2] in (b"c ", b"p ", b"c\n"):
        return "dimacs"
    return None


def read_graph(path: str | os.PathLike[str], fmt: str | None = None, *,
               n: int | None = None) -> EdgeList | np.ndarray:
    """Read a graph file.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip-compressed files are recognised by their content.
    fmt : str, optional
        Format name or alias (``homework``, ``snap``, ``npy``, ``mtx``, ``dimacs``,
        ``metis``, ``graphml``); default from the suffix.
    n : int, optional
        Number of vertices, for SNAP edge lists only (other formats declare it).

    Returns
    -------
    EdgeList or numpy.ndarray
        An `apsp.graph.EdgeList` (0-based, file order), or the dense matrix of a ``.npy``.

    Raises
    ------
    GraphFormatError
        Malformed content, with file, line and problem.
    ValueError
        Unknown format.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.txt")
    >>> _ = open(p, "w").write("2 1\\n1 2 9\\n")
    >>> read_graph(p).weight.tolist()
    [9]
    """
    name = guess_format(path, fmt)
    if name == "npz":  # the one format that holds no graph
        raise ValueError(f"{path} is a result file (.npz), not a graph: read it with apsp.load_result")
    if name == "graphml":
        from ..errors import require

        require("networkx", "reading GraphML")
    p = Path(path)
    if n is not None and name != "snap":
        raise ValueError(f"n= applies to SNAP edge lists only; {name} files declare n themselves")
    try:
        mode = p.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"no such file: {p}") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{p} is a directory, not a graph file")
    if not stat.S_ISREG(mode):  # a pipe (/dev/stdin) or device: read once, into a file the readers can reread
        return _read_spooled(p, fmt, n)
    if fmt is None and name == "homework":
        name = _sniff(p) or name
    from ..sizes import working_set

    module = importlib.import_module(f"{__name__}.{FORMATS[name][0]}")
    with working_set():  # the file's bytes, its rows and its numbering fit the budget together
        return module.read_graph(p) if n is None else module.read_graph(p, n=n)


def _read_spooled(p: Path, fmt: str | None, n):
    """Read a stream (pipe, character device) by copying it to a temporary file first, named
    with the stream's suffixes.

    Format sniffing reads a file's start before the reader reads it all, which a stream
    allows only once. Errors still name the stream.
    """
    import shutil
    import tempfile

    from ..errors import GraphFormatError

    with tempfile.TemporaryDirectory(prefix="apsp-input-") as tmp:
        spool = Path(tmp) / ("input" + "".join(p.suffixes))
        with open(p, "rb") as src, open(spool, "wb") as dst:
            shutil.copyfileobj(src, dst, 16 << 20)
        try:
            loaded = read_graph(spool, fmt, n=n)
        except GraphFormatError as exc:
            raise GraphFormatError(p, exc.line, exc.problem) from None
    from ..graph import EdgeList

    if isinstance(loaded, EdgeList) and loaded.source is not None:
        loaded.source = str(p)
    return loaded


def write_graph(path, edges, fmt: str | None = None) -> None:
    """Write a graph (an `apsp.graph.EdgeList`) as homework text, SNAP, ``.mtx`` or DIMACS.

    The file is replaced whole or not at all; a ``.gz`` suffix compresses it.

    Examples
    --------
    >>> import tempfile, os
    >>> from apsp.graph import EdgeList
    >>> p = os.path.join(tempfile.mkdtemp(), "g.txt")
    >>> write_graph(p, EdgeList(2, [0], [1], [9]))
    >>> open(p).read()
    '2 1\\n1 2 9\\n'
    """
    from ..graph import EdgeList

    if not isinstance(edges, EdgeList):
        raise TypeError(f"write_graph takes an apsp.graph.EdgeList, not {type(edges).__name__}")
    name = guess_format(path, fmt, 2)
    importlib.import_module(f"{__name__}.{FORMATS[name][0]}").write_graph(path, edges)


def write_distances(path: str | os.PathLike[str], dist: ArrayLike, fmt: str | None = None, *, rows: tuple[int, int] | None = None,
                    first_row: int | None = None, progress: bool | None = None, keep_dtype: bool = False) -> None:
    """Write a distance matrix as homework text, ``.npy`` or ``.mtx``.

    Unreachable pairs print as ``INF`` in text and are left out of ``.mtx``; a
    ``.npy`` holds integer distances as float64 with ``inf`` where there is no path
    (unless ``keep_dtype``, or with a loud `apsp.io.npy.UnsafeFileWarning` where
    float64 is not exact or the disk lacks room: `apsp.io.npy`). The file is replaced
    whole or not at all; a ``.gz`` suffix compresses it. Writers go a block of
    rows at a time, so ``dist`` may be a memory map bigger than RAM.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    dist : numpy.ndarray, shape (n, n)
        The distances (a memory map is fine).
    fmt : str, optional
        ``homework``, ``npy`` or ``mtx``; default from the suffix.
    rows : (int, int), optional
        ``(i, j)`` writes rows ``i..j-1`` only (0-based): the same text lines,
        an (j-i) x n ``.npy`` array, or a (j-i) x n ``.mtx`` whose comment names
        the first row.
    first_row : int, optional
        ``dist`` holds the rows from this one on (a block computed for some
        sources); like ``rows`` without the slicing.
    progress : bool or None, optional
        A bar while writing big text outputs (None: only on a terminal or in a notebook).
    keep_dtype : bool, optional
        ``.npy``: keep an integer matrix's dtype ("no path" is then the dtype's maximum,
        `apsp.unreachable_value`): smaller, for readers that mask it.

    Raises
    ------
    ValueError
        For a format that cannot hold distances, or ``rows`` out of range.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> write_distances(p, np.array([[0, 5], [np.inf, 0]]))
    >>> open(p).read()
    '0 5\\nINF 0\\n'
    """
    import numpy as np

    name = guess_format(path, fmt, 3)
    d = np.asarray(dist)
    if d.ndim != 2 or (rows is None and first_row is None and d.shape[0] != d.shape[1]):
        raise ValueError(f"a distance matrix must be square 2-D, got shape {d.shape}")
    extra = {"progress": progress} if name == "homework" else {"keep_dtype": keep_dtype} if name == "npy" else {}
    if rows is not None:
        lo, hi = map(int, rows)
        if not 0 <= lo < hi <= len(d):
            raise ValueError(f"rows=({lo}, {hi}) must satisfy 0 <= i < j <= n = {len(d)}")
        d, first_row = d[lo:hi], lo
    writer = importlib.import_module(f"{__name__}.{FORMATS[name][0]}")
    writer.write_distances(path, d, first_row=None if first_row is None else int(first_row), **extra)


def check_outputs(outputs, inputs=None) -> None:
    """Refuse, before any work, outputs the writers could not produce whole.

    ``outputs`` maps a label for messages (``"-o"``, ``"--paths"``) to ``(path, fmt, kind)``
    with ``kind`` one of ``"distances"``, ``"graph"`` or ``"file"`` (any regular file, e.g. a
    checkpoint); entries with path None are skipped. Checks: a format that can hold ``kind``
    (for distances and graphs), an existing writable directory, a target that is a regular file,
    a character device, a FIFO or ``-`` (``"file"``: a regular file only), no two outputs
    naming the same file, and no output that is one of ``inputs`` (a map from a label to a
    path, say ``{"the input": "g.txt"}``): the same file by any name, a link included.

    Examples
    --------
    >>> check_outputs({"-o": ("d.txt", None, "distances"), "--paths": ("d.txt", "npy", "distances")})
    Traceback (most recent call last):
    ...
    ValueError: -o and --paths both name d.txt: one would overwrite the other
    """
    from .atomic import STDOUT, check_target

    seen: dict[str, str] = {}  # file -> label of the output naming it
    for label, (path, fmt, kind) in outputs.items():
        if path is None:
            continue
        key = STDOUT if str(path) == STDOUT else os.path.realpath(path)  # the file it ends up at
        if key in seen:
            raise ValueError(f"{seen[key]} and {label} both name {path}: one would overwrite the other")
        seen[key] = label
        for input_label, source in (inputs or {}).items():
            try:
                same = os.path.samefile(path, source)  # hard and symbolic links included
            except (OSError, ValueError, TypeError):  # either missing (or not a file name)
                same = False
            if same:
                raise ValueError(f"{label} {path} is {input_label} {source}: writing it would destroy "
                                 "the input; choose another output name")
        try:
            if kind != "file":
                guess_format(path, fmt, 3 if kind == "distances" else 2)
            if check_target(path) is None and kind == "file":
                raise ValueError(f"{path} needs a regular file (it is rewritten in place and read "
                                 "back), not standard output, a device or a FIFO")
        except OSError as exc:
            raise type(exc)(f"{label}: {exc}") from None
        except ValueError as exc:
            raise ValueError(f"{label}: {exc}") from None
