"""pytest plugin: scipy's own shortest-path tests call apsp's drop-in instead of scipy's.

Loaded by ``tests/test_scipy_compat.py::test_scipy_own_shortest_path_suite`` with ``-p``; it
swaps the module's ``shortest_path`` (every method, 'FW' included, goes through it).
"""
from apsp import scipy_compat


def pytest_collection_modifyitems(items):
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "shortest_path"):
            module.shortest_path = scipy_compat.shortest_path
