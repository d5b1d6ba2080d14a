"""The examples in apsp's docstrings run and give what they show (numpy-style docs are tested)."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "apsp", "apsp.api", "apsp.graph", "apsp.generate", "apsp.datasets", "apsp.scipy_compat", "apsp.networkx_graph",
    "apsp.scipy_searches", "apsp.choices", "apsp.inputs", "apsp.info", "apsp.errors", "apsp.paths", "apsp.sizes", "apsp.engine", "apsp.outofcore", "apsp.checkpoint",
    "apsp.cpu.blocked", "apsp.cpu.reference", "apsp.cpu.bfs", "apsp.cpu.searches",
    "apsp.io", "apsp.io.atomic", "apsp.io.homework", "apsp.io.edgelist", "apsp.io.npy",
    "apsp.io.mtx", "apsp.io.dimacs", "apsp.io.metis", "apsp.io.graphml", "apsp.io.csvedges", "apsp.io.result", "apsp.exactness",
    "apsp.cli_messages", "apsp.stats", "apsp.plan", "apsp.result",
    "apsp.bench.results", "apsp.bench.timing",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
