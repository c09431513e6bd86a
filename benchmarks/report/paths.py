"""Where the report reads and writes: the checkout's root and the recorded results."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the one place the report names the perf scripts' results folder
RESULTS = ROOT / "benchmarks" / "results"
