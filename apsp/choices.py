"""The choices the public API takes by name: one `Literal` alias each, for type checkers, and the
check every entry point runs on them, so that a misspelt name is a ValueError naming the choices
(never a ``KeyError`` deep inside the plan).

>>> from apsp.choices import BACKENDS, check_choice
>>> check_choice("backend", "cuda", BACKENDS)
Traceback (most recent call last):
    ...
ValueError: unknown backend 'cuda'; choose one of auto, cpu, gpu
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Union, get_args

if TYPE_CHECKING:
    import numpy as np

#: the all-pairs methods of `apsp.shortest_paths` ("auto": the cost model's pick)
Method = Literal["auto", "fw", "nd-fw", "bfs", "dijkstra", "johnson", "nd-rows", "reference"]
#: where a solve runs
Backend = Literal["auto", "cpu", "gpu"]
#: the searches of `apsp.distance_stats`
StatsMethod = Literal["auto", "bfs", "dijkstra", "johnson", "nd-rows"]
#: `apsp.distance_stats`: distances from each source ("out") or to it ("in")
Direction = Literal["out", "in"]
#: the distance dtypes by name (uint8 and uint16 hold hop counts of BFS only)
DtypeName = Literal["int16", "int32", "int64", "float32", "float64", "uint8", "uint16"]
#: a distance dtype as the API takes it: a name, a numpy dtype or scalar type, or None (the narrowest exact)
DtypeChoice = Union[DtypeName, "np.dtype[Any]", "type[np.number[Any]]", None]
#: the data frame libraries of `apsp.Result.to_frame`
FrameLibrary = Literal["pandas", "polars"]
#: what `apsp.shortest_paths` returns the distances as (``output=``; None: like the input, `apsp.api`)
Output = Literal["numpy", "torch"]

METHODS: tuple[str, ...] = get_args(Method)
BACKENDS: tuple[str, ...] = get_args(Backend)
STATS_METHODS: tuple[str, ...] = get_args(StatsMethod)
DIRECTIONS: tuple[str, ...] = get_args(Direction)
FRAME_LIBRARIES: tuple[str, ...] = get_args(FrameLibrary)
OUTPUTS: tuple[str, ...] = get_args(Output)


def check_choice(what: str, value: object, choices: tuple[str, ...]) -> None:
    """Raise ValueError naming ``choices`` unless ``value`` is one of them."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"unknown {what} {value!r}; choose one of {', '.join(choices)}")
