"""A zoo of small domain adapters inside a sentence-embedding model: rank answers and find
duplicate questions in a domain nobody labelled.

adapter-zoo trains one bottleneck adapter per StackExchange forum from its own posts, inside
all-MiniLM-L6-v2 as a bi-encoder (the default) or inside BERT or RoBERTa as a cross-encoder
(the papers' model); :func:`adapt` builds a model for a domain nobody labelled from its own
posts; ``benchmarks`` measures every model against the one a user already has; :func:`push`
and :func:`pull` share entries on the Hugging Face Hub, ``adapter-zoo export --format onnx``
writes them as ONNX.

The public API is re-exported here. The modules imported below are light (they import torch
and transformers inside their functions); the two names whose modules import torch at the
top are imported on first use, so that ``adapter-zoo parse`` and other torch-free commands
start fast.

Example:
    >>> import adapter_zoo
    >>> ranker = adapter_zoo.load("beer")  # doctest: +SKIP
    >>> ranker.rank("Is stout stronger than lager?", ["No, ...", "Hops are ..."])  # doctest: +SKIP
"""

from __future__ import annotations

# ``adapt`` is the function: the package adapter_zoo.adapt is imported first (binding the
# module here), then the name is rebound to the function, and stays so (a later import of a
# submodule, adapter_zoo.adapt.domain, finds the package in sys.modules and rebinds nothing).
from adapter_zoo.adapt import adapt
from adapter_zoo.biencoder import BiEncoder
from adapter_zoo.build import build_entry
from adapter_zoo.compose import BM25Scorer, Rerank, ScoreFusion, compose_entry
from adapter_zoo.errors import ZooError, ZooWarning
from adapter_zoo.export import export_cross_encoder, export_merged_lora
from adapter_zoo.hub import pull, push
from adapter_zoo.loading import list_entries, load
from adapter_zoo.names import ModelName, parse_model_name
from adapter_zoo.ranker import Ranker, resolve_base_model
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.zoo import zoo_home

__version__ = "0.1.0"

_LAZY = ("CascadeRanker", "register_heads")

__all__ = [
    "BM25Scorer",
    "BiEncoder",
    "CascadeRanker",
    "ModelName",
    "Ranker",
    "Rerank",
    "ScoreFusion",
    "TrainingConfig",
    "ZooError",
    "ZooWarning",
    "adapt",
    "build_entry",
    "compose_entry",
    "export_cross_encoder",
    "export_merged_lora",
    "list_entries",
    "load",
    "parse_model_name",
    "pull",
    "push",
    "register_heads",
    "resolve_base_model",
    "train",
    "zoo_home",
]


def __getattr__(name: str):
    # These modules import torch at their top; importing them here on first use keeps
    # ``import adapter_zoo`` torch-free.
    if name == "CascadeRanker":
        # heavy: cascade.model loads torch, transformers, adapters when imported
        from adapter_zoo.cascade.model import CascadeRanker as value
    elif name == "register_heads":
        # heavy: ranker.heads loads torch, transformers, adapters when imported
        from adapter_zoo.ranker.heads import register_heads as value
    else:
        raise AttributeError(f"module 'adapter_zoo' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


# ``list`` stays as an alias of ``list_entries`` (``adapter_zoo.list()``); bound last so that
# the builtin stays usable above.
list = list_entries  # noqa: A001
