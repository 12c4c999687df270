"""Imported first by every study: puts ``scripts/benchmarks/`` (the shared ``_common`` and
``_harness``, and the benchmarks a study builds on) on ``sys.path``."""

import sys
from pathlib import Path

BENCHMARKS = str(Path(__file__).resolve().parents[1] / "benchmarks")
if BENCHMARKS not in sys.path:
    sys.path.insert(0, BENCHMARKS)
