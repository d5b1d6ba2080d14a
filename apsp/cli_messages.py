"""What the command line says: API errors in its own words, its JSON summary, and the notice
for an option's former spelling (still accepted, by `add_renamed_option`, here rather than in
`apsp.cli` as the ``apsp bench`` commands below it take it too).

The Python API's messages name keywords (``unweighted=True``, ``fmt=``); the
command line turns them into the options a user types (``--unweighted``,
``--out-format``) at its boundary, so neither layer's messages bend to the other.

Examples
--------
>>> cli_words("method='bfs' needs unit weights: pass unweighted=True or choose another method")
'--method bfs needs unit weights: pass --unweighted or choose another method'
>>> cli_words("give another directory with scratch_dir= (--scratch-dir DIR), or a smaller dtype")
'give another directory with --scratch-dir DIR, or a smaller dtype'
"""
from __future__ import annotations

import argparse
import re
import sys
from typing import Callable

#: version of the ``--json`` summary's layout; it changes only when a key changes meaning or goes
SOLVE_JSON_SCHEMA = 1


def _option(match: re.Match[str]) -> str:
    """The option of the keyword that ``match``'s first group names: ``out_of_core`` -> ``--out-of-core``."""
    return "--" + match[1].replace("_", "-")


#: API phrase (regular expression) -> the command line's words, applied in order
_WORDS: list[tuple[str, str | Callable[[re.Match[str]], str]]] = [
    # "API (CLI)" pairs keep the CLI half only
    (r"\b[a-z_]+=\S*\s+\((--[^)]*)\)", r"\1"),
    (r"\(fmt= or --format\)", "(--format)"),
    (r"\bfmt=", "--format "),
    (r"\b(unweighted|out_of_core|resume)=True\b", _option),
    (r"\bdirected=False\b", "--undirected"),
    (r"\b(method|backend|dtype)='(\w+)'", r"--\1 \2"),
    (r"\b(block_size|checkpoint_every)\b", _option),
    (r"\s*\(out_of_core=False\)", ""),
    (r"\(host_memory\)", "(--host-memory)"),
    (r"\b(gpu_memory|host_memory|scratch_dir|checkpoint)=", lambda match: f"{_option(match)} "),
    (r"\breturn_predecessors=True or return_successors=True\b", "--paths FILE"),
    (r"\brows=\((\d+), (\d+)\)", r"--rows \1:\2"),
]


#: former option spellings, still accepted for one release: old -> new
RENAMED_OPTIONS = {"--block": "--block-size", "--memory": "--host-memory", "--scratch": "--scratch-dir"}


class _RenamedOption(argparse.Action):
    """A former spelling: stores its value under the new option's name and says it was renamed."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"apsp: DeprecationWarning: {option_string} is now {RENAMED_OPTIONS[option_string]}; "
              "the old spelling goes in the next release", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_renamed_option(parser, name: str, **kwargs) -> None:
    """``parser.add_argument(name, **kwargs)``, plus its former spelling (`RENAMED_OPTIONS`),
    hidden from ``--help``."""
    action = parser.add_argument(name, **kwargs)
    old = next(o for o, n in RENAMED_OPTIONS.items() if n == name)
    parser.add_argument(old, dest=action.dest, type=kwargs.get("type"), metavar=action.metavar,
                        default=argparse.SUPPRESS, action=_RenamedOption, help=argparse.SUPPRESS)


def cli_words(message: str, output: str | None = None) -> str:
    """``message`` with the API's keyword names replaced by the command line's options.

    ``output``: the output path; a format complaint about it names ``--out-format``.
    """
    if output is not None and repr(str(output)) in message:
        message = message.replace("(fmt= or --format)", "(--out-format)")
    for pattern, words in _WORDS:
        message = re.sub(pattern, words, message)
    return re.sub(r"  +", " ", message).replace(" )", ")")


def negative_cycle_message(exc, first: int, source: str | None = None, labels=None) -> str:
    """One line for a `NegativeCycleError`, vertices named as the input file names them
    (``labels[v]`` when the input has labels, else ``v + first``).

    A route (``a -> b -> a``, from the searches) is kept as a route; a set of
    vertices (from Floyd-Warshall, those whose distance to themselves turned
    negative) is listed, the first ten only.

    Examples
    --------
    >>> from apsp.errors import NegativeCycleError
    >>> negative_cycle_message(NegativeCycleError("Negative cycle detected: 1 -> 2 -> 1", [1, 2]), 1)
    'the graph has a negative cycle, 2 -> 3 -> 2 (1-based), so shortest paths are undefined'
    >>> negative_cycle_message(NegativeCycleError("Negative cycle detected", [0, 4]), 0, "g.snap")
    'the graph has a negative cycle through vertices 0, 4 (0-based, as in g.snap), so shortest paths are undefined'
    >>> import numpy as np
    >>> negative_cycle_message(NegativeCycleError("Negative cycle detected: 0 -> 1 -> 0", [0, 1]), 0,
    ...                        "g.graphml", np.array(["a", "b"]))
    'the graph has a negative cycle, a -> b -> a (labels, as in g.graphml), so shortest paths are undefined'
    """
    from .graph import vertex_name

    vertices = getattr(exc, "vertices", None)
    numbering = ("labels" if labels is not None else f"{first}-based") + (f", as in {source}" if source else "")
    if vertices is None or len(vertices) == 0:
        return "the graph has a negative cycle, so shortest paths are undefined"
    named = [vertex_name(labels, v, first) for v in vertices]
    if "->" in str(exc):
        route = " -> ".join(map(str, named + named[:1]))
        return f"the graph has a negative cycle, {route} ({numbering}), so shortest paths are undefined"
    listed = ", ".join(map(str, named[:10])) + (f" and {len(named) - 10} more" if len(named) > 10 else "")
    return (f"the graph has a negative cycle through vertices {listed} ({numbering}), "
            "so shortest paths are undefined")


def solve_summary(*, n: int, edges: int | None, method: str, backend: str, dtype: str,
                  block_size: int | None, timings: dict, info: dict, ranks: int = 1) -> dict:
    """The ``--json`` summary of a solve: the same keys on every run (see README, "JSON summary").

    Examples
    --------
    >>> sorted(solve_summary(n=3, edges=2, method="fw", backend="cpu", dtype="int16",
    ...                      block_size=256, timings={"compute": 0.1}, info={}))
    ['backend', 'block_size', 'dtype', 'edges', 'info', 'method', 'n', 'ranks', 'schema_version', 'timings_s']
    """
    from .io.result import json_ready

    return {
        "schema_version": SOLVE_JSON_SCHEMA,
        "n": int(n),
        "edges": None if edges is None else int(edges),
        "method": method,
        "backend": backend,
        "dtype": dtype,
        "block_size": block_size,
        "ranks": int(ranks),
        "timings_s": {stage: round(float(sec), 6) for stage, sec in timings.items()},
        "info": json_ready(info),
    }


def cli_message(exc: BaseException, args) -> str:
    """An API error in the command line's words (options, the input file's vertex numbering)."""
    from .errors import NegativeCycleError

    inp = getattr(args, "input", None)
    if isinstance(exc, NegativeCycleError):
        from .io import FIRST_VERTEX, detect_format

        try:  # the number the input gives its first vertex (1 for homework text, DIMACS, ...)
            first = FIRST_VERTEX[detect_format(inp, getattr(args, "fmt", None))] if inp is not None else 0
        except (ValueError, OSError, KeyError):
            first = 0
        return negative_cycle_message(exc, first, inp, getattr(args, "_labels", None))
    if isinstance(exc, MemoryError) and not str(exc):  # Python's own, raised where an allocation failed
        from .sizes import format_size, memory_allowed

        limit, words = memory_allowed()
        return f"out of memory ({format_size(limit)} {words}); try --host-memory or a smaller input"
    return cli_words(str(exc), output=getattr(args, "output", None))
