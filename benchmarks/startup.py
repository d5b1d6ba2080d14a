"""Cold and warm start of the CLI, stage by stage: ``apsp bench startup`` (see apsp/bench/startup.py).

    python benchmarks/startup.py                  # README command 1 and the variants, CPU
    python benchmarks/startup.py --backend gpu --input g.txt --block 128 --variants int32
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apsp.bench.startup import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
