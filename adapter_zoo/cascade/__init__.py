"""Cascade Transformer ranking: exits at intermediate layers, candidates dropped per exit.

Names are imported lazily so that ``adapter-zoo`` (which imports ``adapter_zoo.cascade.cli``)
starts without torch.

Example:
    >>> from adapter_zoo.cascade import CascadeConfig, CascadeRanker, train_cascade
    >>> ranker = CascadeRanker.from_base("minilm-l6", CascadeConfig(alpha=0.3))  # doctest: +SKIP
    >>> train_cascade(ranker, [("q", "good", 1), ("q", "bad", 0)], max_steps=10)  # doctest: +SKIP
    >>> ranker.rank_many([("q", ["good", "bad"])])  # doctest: +SKIP
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "CASCADE_CONFIGS": "adapter_zoo.cascade.config",
    "CascadeConfig": "adapter_zoo.cascade.config",
    "default_exits": "adapter_zoo.cascade.config",
    "get_config": "adapter_zoo.cascade.config",
    "CascadeOutput": "adapter_zoo.cascade.inference",
    "run_cascade": "adapter_zoo.cascade.inference",
    "CascadeRanker": "adapter_zoo.cascade.model",
    "keep_schedule": "adapter_zoo.cascade.schedule",
    "layer_flops": "adapter_zoo.cascade.schedule",
    "sample_exits": "adapter_zoo.cascade.schedule",
    "load_cascade": "adapter_zoo.cascade.storage",
    "train_cascade": "adapter_zoo.cascade.train",
    "train_entry": "adapter_zoo.cascade.train",
    "evaluate_cascade": "adapter_zoo.cascade.evaluate",
    "pairs_from_parsed": "adapter_zoo.cascade.data",
    "pairs_from_benchmark": "adapter_zoo.cascade.data",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'adapter_zoo.cascade' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
