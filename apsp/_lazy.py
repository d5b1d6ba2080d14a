"""Lazy package attributes: a name is imported from its module on first use (PEP 562)."""
from __future__ import annotations

import importlib
import importlib.util


def lazy_exports(package: str, exports: dict, namespace: dict, submodules: bool = False):
    """A module ``__getattr__`` for ``package``: ``exports`` maps a name to the module defining it;
    the value is cached in ``namespace`` (the package's globals). With ``submodules``, other names
    resolve to the package's submodules (``apsp.api`` whether or not anything imported it yet)."""

    def __getattr__(name):
        module = exports.get(name)
        if module is None:
            if submodules and importlib.util.find_spec(f"{package}.{name}") is not None:
                return importlib.import_module(f"{package}.{name}")
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
