"""Exceptions raised by apsp.

`NegativeCycleError` subclasses scipy's own class, so code written for
``scipy.sparse.csgraph`` catches ours unchanged. It is built on first use (PEP 562): importing
scipy.sparse.csgraph costs about 0.4 s, which a command that never meets a negative cycle
should not pay. Modules raise it through `negative_cycle_error` or import it where they raise.
"""
from __future__ import annotations

from typing import TYPE_CHECKING


class APSPError(Exception):
    """Base class of apsp's own errors."""


if TYPE_CHECKING:  # the class `__getattr__` builds, as type checkers see it
    from numpy.typing import ArrayLike
    from scipy.sparse.csgraph import NegativeCycleError as _ScipyNegativeCycleError

    class NegativeCycleError(_ScipyNegativeCycleError, APSPError):
        vertices: ArrayLike | None

        def __init__(self, message: str = ..., vertices: ArrayLike | None = None) -> None: ...


def __getattr__(name):
    if name != "NegativeCycleError":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError

    class NegativeCycleError(ScipyNegativeCycleError, APSPError):
        """The graph has a cycle of negative total weight, so shortest paths are undefined."""

        def __init__(self, message: str = "Negative cycle detected", vertices=None):
            if message == "Negative cycle detected" and vertices is not None and len(vertices):
                message = f"{message} through vertices {_listed(vertices)} (indices, 0-based)"
            super().__init__(message)
            #: vertices whose distance to themselves became negative (0-based), when known
            self.vertices = vertices

    NegativeCycleError.__qualname__ = "NegativeCycleError"  # its __module__ is this one already
    globals()[name] = NegativeCycleError
    return NegativeCycleError


def _listed(vertices, shown: int = 10) -> str:
    """The first ``shown`` vertices, and how many more."""
    named = [int(v) for v in list(vertices)[:shown]]
    more = len(vertices) - len(named)
    return ", ".join(map(str, named)) + (f" and {more} more" if more > 0 else "")


class GraphFormatError(APSPError, ValueError):
    """A graph file is malformed. Names the file, the 1-based line and the problem."""

    def __init__(self, path, line, problem: str):
        self.path = str(path) if path is not None else "<input>"
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class DtypeError(APSPError, ValueError):
    """The requested dtype cannot hold every possible distance (or is unsupported)."""


class BackendUnavailableError(APSPError, RuntimeError):
    """The requested backend cannot run here; the message says why and what to install."""


class MemoryPlanError(APSPError, MemoryError):
    """The problem does not fit the memory available; the message says how much it needs."""


class MissingDependencyError(APSPError, ImportError):
    """An optional dependency a feature needs is not installed; the message names the extra."""


def has_module(name: str) -> bool:
    """Whether ``name`` can be imported (found, not imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package is missing or broken
        return False


#: optional module -> the apsp extra that installs it
EXTRAS = {"mpi4py": "mpi", "networkx": "networkx", "matplotlib": "plot", "torch": "gpu",
          "triton": "gpu", "pymetis": "sparse", "pandas": "frames", "polars": "frames"}


def require(module: str, feature: str) -> None:
    """Stop with one line naming the extra to install when ``feature`` needs a missing ``module``.

    Checked before any work starts (nothing is imported: ``find_spec`` only).

    Parameters
    ----------
    module : str
        The optional module, a key of `EXTRAS`.
    feature : str
        What needs it, in the user's words (``"--distributed"``, ``"reading GraphML"``).

    Raises
    ------
    apsp.errors.MissingDependencyError
        When ``module`` is not installed.

    Examples
    --------
    >>> require("numpy", "everything")
    >>> require("no_such_module_here", "this example")
    Traceback (most recent call last):
    ...
    apsp.errors.MissingDependencyError: this example needs no_such_module_here, which is not installed
    """
    if has_module(module):
        return
    extra = EXTRAS.get(module)
    fix = f": pip install 'apsp[{extra}]'" if extra else ""
    raise MissingDependencyError(f"{feature} needs {module}, which is not installed{fix}")
