"""Benchmarks: registry, loaders, metrics, baselines, evaluation, builder and leaderboard.

Example:
    >>> import benchmarks
    >>> "wikiqa" in benchmarks.names()
    True
    >>> benchmarks.evaluate("bm25", "wikiqa", data_dir="data")  # doctest: +SKIP
"""

from __future__ import annotations

from benchmarks import datasets  # noqa: F401  (registers every family on import)
from benchmarks.builder import build_from_forum
from benchmarks.errors import BenchmarkError
from benchmarks.evaluate import evaluate, evaluate_each, evaluate_models
from benchmarks.finetune import to_parse_folder
from benchmarks.leaderboard import write_leaderboard
from benchmarks.registry import Benchmark, DatasetMetadata, Reference, SourceFile, get, names
from benchmarks.results import check_record, read_results

__all__ = [
    "Benchmark",
    "BenchmarkError",
    "DatasetMetadata",
    "Reference",
    "SourceFile",
    "build_from_forum",
    "evaluate",
    "evaluate_each",
    "evaluate_models",
    "get",
    "names",
    "read_results",
    "check_record",
    "to_parse_folder",
    "write_leaderboard",
]
