"""pytest plugin: scipy's own shortest-path tests call apsp's drop-ins instead of scipy's.

Loaded by ``tests/test_scipy_compat.py::test_scipy_own_shortest_path_suite`` with ``-p``; it
swaps the module's ``shortest_path`` (every method, 'FW' included, goes through it), ``dijkstra``,
``johnson`` and ``bellman_ford``.
"""
from apsp import scipy_compat, scipy_searches

DROP_INS = {"shortest_path": scipy_compat.shortest_path, "dijkstra": scipy_searches.dijkstra,
            "johnson": scipy_searches.johnson, "bellman_ford": scipy_searches.bellman_ford}


def pytest_collection_modifyitems(items):
    for item in items:
        module = getattr(item, "module", None)
        for name, drop_in in DROP_INS.items():
            if module is not None and hasattr(module, name):
                setattr(module, name, drop_in)
