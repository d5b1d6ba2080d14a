"""The homework form, ``apsp IN OUT [BLOCK] [options]``: ``solve``'s namespace from its words, with no
parser built when no options follow (`apsp.cli.options.SOLVE_DEFAULTS`)."""
from __future__ import annotations

import argparse
import os

from .options import SOLVE_DEFAULTS, add_solve_arguments
from .parser import SUBCOMMANDS, build_parser, parsers


def homework_args(argv: list[str]) -> argparse.Namespace | None:
    """``solve``'s namespace for ``apsp IN OUT [BLOCK] [options]``, or None when ``argv`` starts with a
    command or an option: IN, OUT and BLOCK, then the options after them (`SOLVE_DEFAULTS` for the
    rest). Their errors and --help read as after ``apsp solve IN -o OUT``; words that are neither a
    command nor this form raise ``argparse.ArgumentError``."""
    if not argv or argv[0].startswith("-"):
        return None
    positional = []
    for token in argv:
        if token.startswith("-") and token != "-":  # "-" is standard output, not an option
            break
        positional.append(token)
    # a command's name, unless the whole line is two or three bare words, the first an existing
    # file, for a command that could not take them (each of these needs an option or takes none)
    if argv[0] in SUBCOMMANDS and not (len(positional) == len(argv) and len(argv) in (2, 3)
                                       and argv[0] in ("solve", "gen", "info", "path")
                                       and os.path.isfile(argv[0])):
        return None
    if len(positional) not in (2, 3):
        count = f"{len(positional)} argument{'s' if len(positional) != 1 else ''}"
        raise argparse.ArgumentError(None, (
            f"{argv[0]!r} is not a command; the homework form is apsp IN_FILE OUT_FILE [BLOCK] "
            f"(got {count}), or run a command: {', '.join(SUBCOMMANDS)} (see apsp --help)"))
    if len(positional) == 3 and not (positional[2].isdigit() and int(positional[2]) > 0):
        raise argparse.ArgumentError(
            None, f"BLOCK must be a positive integer (the blocking factor), got {positional[2]!r}")
    args = argparse.Namespace(command="solve", input=positional[0], **{
        **SOLVE_DEFAULTS, "output": positional[1],
        "block_size": int(positional[2]) if len(positional) == 3 else None})
    options = argv[len(positional):]
    if options:
        words = _HomeworkOptions(prog="apsp solve")
        add_solve_arguments(words, homework=True)
        args, unknown = words.parse_known_args(options, args)
        if unknown:
            build_parser().error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


class _HomeworkOptions(argparse.ArgumentParser):
    """The options after ``apsp IN OUT [BLOCK]``; its usage line and help are ``solve``'s."""

    def format_usage(self) -> str:
        return parsers()[1]["solve"].format_usage()

    def format_help(self) -> str:
        return parsers()[1]["solve"].format_help()
