"""Score one set of pairs with many adapters over one base model, sharing the work.

Scoring a benchmark this way, with records, is ``benchmarks.sweep.sweep_benchmark``.

Example:
    >>> from adapter_zoo.sweep import sweep
    >>> scores = sweep("minilm-l6", ["beer", "cooking"], [("q", "a")])  # doctest: +SKIP
    >>> scores["beer"].shape  # doctest: +SKIP
    (1,)
"""

from __future__ import annotations

from adapter_zoo.sweep.sweep import (
    independent_scores,
    load_parallel_model,
    parallel_groups,
    resolve_adapter,
    sweep,
)

__all__ = [
    "independent_scores",
    "load_parallel_model",
    "parallel_groups",
    "resolve_adapter",
    "sweep",
]
