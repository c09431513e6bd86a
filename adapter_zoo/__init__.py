"""adapter-zoo: cross-encoder rankers and per-forum adapters for question answering.

The public API is re-exported here and imported lazily, so that ``adapter-zoo parse``
and other torch-free commands start fast.

Example:
    >>> import adapter_zoo
    >>> ranker = adapter_zoo.load("beer")  # doctest: +SKIP
    >>> ranker.rank("Is stout stronger than lager?", ["No, ...", "Hops are ..."])  # doctest: +SKIP
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# name -> module that defines it
_EXPORTS = {
    "ZooError": "adapter_zoo.errors",
    "Ranker": "adapter_zoo.ranker",
    "BiEncoder": "adapter_zoo.biencoder",
    "resolve_base_model": "adapter_zoo.ranker",
    "register_heads": "adapter_zoo.ranker.heads",
    "load": "adapter_zoo.zoo",
    "list_entries": "adapter_zoo.zoo",
    "list": "adapter_zoo.zoo",  # an alias of list_entries
    "zoo_home": "adapter_zoo.zoo",
    "export_cross_encoder": "adapter_zoo.zoo.export",
    "TrainingConfig": "adapter_zoo.training",
    "train": "adapter_zoo.training",
    "push": "adapter_zoo.hub",
    "pull": "adapter_zoo.hub",
    "CascadeRanker": "adapter_zoo.cascade",
    "BM25Scorer": "adapter_zoo.compose",
    "ScoreFusion": "adapter_zoo.compose",
    "Rerank": "adapter_zoo.compose",
    "compose_entry": "adapter_zoo.compose",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'adapter_zoo' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
