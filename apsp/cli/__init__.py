"""Command line: ``apsp IN_FILE OUT_FILE [BLOCK]`` (the homework form) and subcommands.

Every failure prints one clear line to stderr and exits non-zero; output files
are written whole (temporary file, then rename) or not at all.

`program` is the entry (`main`, `run`); `homework` reads the homework form's words, `parser` builds
the ``apsp`` parser from the commands' modules (`solve`, `gen`, `info`, `path`, `stats`; ``apsp
bench`` hands its words to `apsp.bench.cli`), `options` holds the options they share, `startup`,
`vertices` and `report` what the commands share beside them.
"""
from .program import main, run

__all__ = ["main", "run"]
