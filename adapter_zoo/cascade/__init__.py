"""Cascade Transformer ranking: exits at intermediate layers, candidates dropped per exit.

The modules that import torch at their top (the model and its inference) are imported on
first use of their names, so that importing the package stays torch-free.

Scoring a cascade on a benchmark is ``benchmarks.cascade`` (``evaluate_cascade``,
``pairs_from_benchmark``).

Example:
    >>> from adapter_zoo.cascade import CascadeConfig, CascadeRanker, train_cascade
    >>> ranker = CascadeRanker.from_base("minilm-l6", CascadeConfig(alpha=0.3))  # doctest: +SKIP
    >>> train_cascade(ranker, [("q", "good", 1), ("q", "bad", 0)], max_steps=10)  # doctest: +SKIP
    >>> ranker.rank_many([("q", ["good", "bad"])])  # doctest: +SKIP
"""

from __future__ import annotations

from adapter_zoo.cascade.config import CASCADE_CONFIGS, CascadeConfig, default_exits, get_config
from adapter_zoo.cascade.data import pairs_from_parsed
from adapter_zoo.cascade.schedule import keep_schedule, layer_flops, sample_exits
from adapter_zoo.cascade.train import train_cascade, train_entry

_LAZY = ("CascadeOutput", "CascadeRanker", "load_cascade", "run_cascade")

__all__ = [
    "CASCADE_CONFIGS",
    "CascadeConfig",
    "CascadeOutput",
    "CascadeRanker",
    "default_exits",
    "get_config",
    "keep_schedule",
    "layer_flops",
    "load_cascade",
    "pairs_from_parsed",
    "run_cascade",
    "sample_exits",
    "train_cascade",
    "train_entry",
]


def __getattr__(name: str):
    # torch is imported at the top of these modules: only on first use of their names.
    if name == "CascadeRanker":
        # heavy: cascade.model loads torch, transformers, adapters when imported
        from adapter_zoo.cascade.model import CascadeRanker as value
    elif name == "load_cascade":
        # heavy: cascade.model loads torch, transformers, adapters when imported
        from adapter_zoo.cascade.model import load_cascade as value
    elif name == "CascadeOutput":
        # heavy: cascade.inference loads torch when imported
        from adapter_zoo.cascade.inference import CascadeOutput as value
    elif name == "run_cascade":
        # heavy: cascade.inference loads torch when imported
        from adapter_zoo.cascade.inference import run_cascade as value
    else:
        raise AttributeError(f"module 'adapter_zoo.cascade' has no attribute {name!r}")
    globals()[name] = value
    return value
