"""How many of apsp's functions the homework command passes through, warm (``sys.setprofile``).

Runs ``apsp IN OUT B`` in this process once to warm the imports and Numba's caches, then again under
a profile hook that records every Python function of the apsp package entered (comprehensions and
lambdas included, as the hook sees them). Prints the count, the files, and with ``--list`` every
function.

    python benchmarks/homework_trace.py [--input apsp/data/knuth-miles.txt] [--block 32] [--list]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def trace(argv: list[str]) -> set[tuple[str, str]]:
    from apsp.cli import main

    package = str(ROOT / "apsp")
    seen: set[tuple[str, str]] = set()

    def hook(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code.co_filename.startswith(package):
                seen.add((os.path.relpath(code.co_filename, ROOT), code.co_qualname))

    sys.setprofile(hook)
    try:
        main(argv)
    finally:
        sys.setprofile(None)
    return seen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=str(ROOT / "apsp/data/knuth-miles.txt"))
    ap.add_argument("--block", default="32")
    ap.add_argument("--extra", nargs="*", default=[],
                    help="options after IN OUT B (default: none, the homework form)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    from apsp.cli import main as cli_main

    with tempfile.TemporaryDirectory() as tmp:
        argv = [args.input, str(Path(tmp) / "out.txt"), args.block, *args.extra]
        if cli_main(argv):
            return 1
        seen = trace(argv)
    files = sorted({f for f, _ in seen})
    print(f"{len(seen)} functions in {len(files)} files")
    for f in files:
        print(f"  {f}: {sum(1 for g, _ in seen if g == f)}")
    if args.list:
        for f, name in sorted(seen):
            print(f"{f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
