"""Benchmark and profiling suites: ``apsp bench SUITE``.

Each suite measures one experiment, checks every result against
an independent reference, and writes ``SUITE.json`` / ``SUITE.csv`` (device,
versions, commit, date and one record per measured or skipped point), PNG plots
and a markdown table (also printed on stdout).

Suites: ``backends`` (time vs n per backend and peer), ``block`` (blocking-factor
sweep: updates/s, modelled bytes, bandwidth), ``breakdown`` (time per stage),
``memory`` (peak host and GPU memory vs n), ``scaling`` (MPI ranks), ``ceiling``
(the GPU's min-plus ceiling), and ``report DIR`` (redraw from results files).

>>> from apsp.bench import SUITES
>>> "backends" in SUITES
True
"""
from __future__ import annotations

SUITES = ("backends", "block", "breakdown", "memory", "scaling", "ceiling")
