"""apsp: all-pairs shortest paths on CPU, one GPU and many GPUs.

Importing apsp imports numpy only; everything else loads when first used.

>>> import apsp
>>> int(apsp.shortest_paths([(0, 1, 2), (1, 2, 3)], backend="cpu").distances[0, 2])
5
"""
from __future__ import annotations

import time as _time

#: when ``import apsp`` began (`time.perf_counter`), and the CPU seconds the process had used by
#: then (the interpreter's own start): the CLI's ``startup`` stage is their sum (`apsp.cli.startup.start_command`)
_IMPORT_STARTED = _time.perf_counter()
_CPU_BEFORE_IMPORT = _time.process_time()

import importlib as _importlib  # noqa: E402
import importlib.util as _importlib_util  # noqa: E402

import lazy_loader as _lazy_loader  # noqa: E402

from ._version import __version__  # noqa: E402
from .jit import use_writable_cache_dir  # noqa: E402

use_writable_cache_dir()  # a read-only install and home: Numba's cache goes to a temp dir instead

# the public names and their modules come from the imports of __init__.pyi, their one list
_public_getattr, __dir__, __all__ = _lazy_loader.attach_stub(__name__, __file__)


def __getattr__(name: str):
    """A public name from its module on first use; any other name, a submodule (``apsp.api`` whether or
    not something imported it yet)."""
    try:
        return _public_getattr(name)
    except AttributeError:
        if _importlib_util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        return _importlib.import_module(f"{__name__}.{name}")
