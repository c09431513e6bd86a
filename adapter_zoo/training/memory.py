"""Training memory as a budget: GradCache, chunked backward and recomputed activations only
where a training step would not fit.

A step keeps, for backward, the activations of every text it encodes: with attention dropout
on, CPU attention takes the math path, which keeps each layer's attention matrices (batch x
heads x length x length floats, several per layer). Without attention dropout
(``TrainingConfig.attention_dropout=0``) it takes PyTorch's fused kernel instead, which keeps
none of them (:func:`keeps_attention_matrices`).

Three ways bound that, each at a price in
compute, and a plan takes the cheapest that fits the budget:

1. ``plain``: the whole batch's activations held (one forward pass, one backward pass).
2. ``recompute``: the fewest layers that make the step fit keep only their input and
   rebuild their activations in backward (non-reentrant checkpointing, the same dropout
   masks: the same gradients), about one extra forward pass of each such layer; the others
   are held as in ``plain``.
3. ``bounded``: recomputed activations and the batch encoded a few texts at a time:
   bi-encoders through GradCache (sentence-transformers' Cached losses: the same in-batch
   loss from embeddings computed :data:`~adapter_zoo.losses.registry.CACHED_MINI_BATCH`
   texts at a time, one more forward pass), cross-encoders backpropagating
   :data:`~adapter_zoo.losses.cross.CHUNK_PAIRS` pairs at a time.

The estimate is per text and layer: ``tokens x hidden x HIDDEN_FLOATS`` plus ``heads x
tokens^2 x ATTENTION_FLOATS`` floats, calibrated on all-MiniLM-L6-v2 on 2 CPU cores
(benchmarks/speed/train_memory.py): a bi-encoder step of 64 texts at 256 tokens held 6.8 GB,
a cross-encoder step of 32 pairs at 300 tokens 5.1 GB; the constants round both up.

Example:
    >>> from transformers import BertConfig
    >>> config = BertConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=12)
    >>> plan = plan_memory(config, texts=96, length=128, budget=8 * GB)
    >>> plan.mode, round(plan.estimate / GB, 1)
    ('plain', 4.2)
    >>> plan = plan_memory(config, texts=96, length=128, budget=3 * GB)
    >>> plan.mode, plan.layers  # the lowest 3 of the 6 layers rebuilt in backward
    ('recompute', 3)
    >>> plan_memory(config, texts=96, length=128, budget=GB).layers
    6
    >>> plan_memory(config, texts=96, length=256, budget=GB).mode
    'bounded'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import psutil

from adapter_zoo.errors import ZooError

# decimal units, as psutil-based peak RSS is recorded everywhere in this project
GB = 10**9
HIDDEN_FLOATS = 21
ATTENTION_FLOATS = 4
FLOAT_BYTES = 4
# The share of the memory available at the start that a run using every core takes when not
# told: the rest is left to the process itself (model, optimizer, data) and to whatever else
# runs beside it.
DEFAULT_SHARE = 0.5
MODES = ("plain", "recompute", "bounded")
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": GB, "gb": GB}


@dataclass(frozen=True)
class MemoryPlan:
    """How a training step fits its memory budget.

    Attributes:
        budget: bytes a step's activations may take.
        estimate: bytes the activations of one step take when all are held (``plain``).
        mode: ``plain``, ``recompute`` or ``bounded`` (the module docstring says what each
            costs).
        layers: the lowest layers whose activations are rebuilt in backward (0 for
            ``plain``; every layer for ``bounded``).
    """

    budget: int
    estimate: int
    mode: str
    layers: int = 0

    @property
    def recompute(self) -> bool:
        """Rebuild each layer's activations in backward (checkpointing)."""
        return self.mode != "plain"

    @property
    def bounded(self) -> bool:
        """Encode the batch a few texts at a time (GradCache, or chunks of pairs)."""
        return self.mode == "bounded"

    def to_card(self) -> dict:
        """What the card's ``training.memory`` records."""
        card = {
            "mode": self.mode,
            "budget_gb": round(self.budget / GB, 2),
            "estimate_gb": round(self.estimate / GB, 2),
        }
        if self.mode == "recompute":
            card["recomputed_layers"] = self.layers
        return card


def parse_budget(text: str) -> int:
    """Bytes of a memory budget written as ``8GB``, ``512MB``, ``1.5G`` or a byte count.

    Raises:
        ZooError: not a positive size.

    Example:
        >>> parse_budget("1.5GB"), parse_budget("512mb"), parse_budget("4096")
        (1500000000, 512000000, 4096)
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?b?)\s*", str(text).lower())
    if not match or float(match.group(1)) <= 0:
        raise ZooError(f"memory budget {text!r}: give a positive size such as 8GB or 512MB")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def default_budget() -> int:
    """:data:`DEFAULT_SHARE` of the memory available now (the GPU's free memory when training
    runs on CUDA, else psutil's), times this process's share of the cores.

    Jobs that split a machine's cores split its memory the same way: a Ray task gets
    ``OMP_NUM_THREADS`` from its ``num_cpus`` and a pytest-xdist worker from
    tests/conftest.py, so torch's thread count says how many such jobs may run beside this
    one, and together they stay within the share.
    """
    # torch on first use: the CLI starts without it
    import torch

    if torch.cuda.is_available():
        return int(torch.cuda.mem_get_info()[0] * DEFAULT_SHARE)

    cores = min(1.0, torch.get_num_threads() / (os.cpu_count() or 1))
    return int(psutil.virtual_memory().available * DEFAULT_SHARE * cores)


def activation_bytes(model_config, *, texts: int, length: int, layers: int | None = None,
                     attention_matrices: bool = True) -> int:  # fmt: skip
    """Estimated bytes held for backward by ``texts`` texts of ``length`` tokens through
    ``layers`` layers (default: all of ``model_config``'s), with or without each layer's
    attention matrices."""
    layers = model_config.num_hidden_layers if layers is None else layers
    per_layer = length * model_config.hidden_size * HIDDEN_FLOATS
    if attention_matrices:
        per_layer += model_config.num_attention_heads * length * length * ATTENTION_FLOATS
    return texts * layers * per_layer * FLOAT_BYTES


def keeps_attention_matrices(model_config, attention_dropout: float | None) -> bool:
    """Whether a training step holds each layer's attention matrices for backward: always,
    but where attention runs through PyTorch's fused kernel (``sdpa``) without dropout,
    which keeps only a row statistic per token (the training config's
    ``attention_dropout``: None is the base's own, ``attention_probs_dropout_prob``).

    Example:
        >>> from transformers import BertConfig
        >>> config = BertConfig(attn_implementation="sdpa")
        >>> keeps_attention_matrices(config, None), keeps_attention_matrices(config, 0.0)
        (True, False)
    """
    dropout = attention_dropout
    if dropout is None:
        dropout = getattr(model_config, "attention_probs_dropout_prob", 0.0)
    return not (getattr(model_config, "_attn_implementation", None) == "sdpa" and dropout == 0)


def plan_memory(model_config, *, texts: int, length: int, budget: int | None,
                attention_matrices: bool = True) -> MemoryPlan:  # fmt: skip
    """The cheapest way for a step of ``texts`` texts (pairs, for a cross-encoder) of up to
    ``length`` tokens to fit ``budget`` bytes (None: :func:`default_budget`).

    Args:
        model_config: the base's transformers config (hidden size, layers, heads).
        texts: texts a step encodes (a bi-encoder's anchors, positives and negatives; a
            cross-encoder's pairs).
        length: the longest a text is truncated to.
        budget: bytes, or None for the default share of the memory available.
        attention_matrices: whether the step holds attention matrices
            (:func:`keeps_attention_matrices`).
    """
    budget = default_budget() if budget is None else int(budget)
    held = activation_bytes(model_config, texts=texts, length=length,
                            attention_matrices=attention_matrices)  # fmt: skip
    if held <= budget:
        return MemoryPlan(budget, held, "plain")
    # a checkpointed layer keeps its input (tokens x hidden floats) and rebuilds its
    # activations in backward, one layer at a time; the layers above it are held
    layers = model_config.num_hidden_layers
    layer_input = texts * length * model_config.hidden_size * FLOAT_BYTES
    one_layer = activation_bytes(model_config, texts=texts, length=length, layers=1,
                                 attention_matrices=attention_matrices)  # fmt: skip
    for rebuilt in range(1, layers + 1):
        if (layers - rebuilt) * one_layer + rebuilt * layer_input + one_layer <= budget:
            return MemoryPlan(budget, held, "recompute", rebuilt)
    return MemoryPlan(budget, held, "bounded", layers)
