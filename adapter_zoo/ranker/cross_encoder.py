"""A ranker's adapters model as a sentence-transformers ``CrossEncoder``, to train it with
``CrossEncoderTrainer``.

A zoo cross-encoder is an ``adapters.AutoAdapterModel`` with our own heads (the pair-cosine
head for sentence-embedding bases), not the ``AutoModelForSequenceClassification`` that
sentence-transformers' ``Transformer`` module loads; this input module puts that model inside
a ``CrossEncoder``, so the library's trainer, samplers, evaluators and losses run on it.
"""

from __future__ import annotations

from typing import Any

import torch
from sentence_transformers import CrossEncoder
from sentence_transformers.base.modules import InputModule

from adapter_zoo.ranker.ranker import encode_pairs


class AdapterPairScorer(InputModule):
    """Scores (query, candidate) pairs: our pair encoding, the model's one ranking logit.

    Args:
        model: the adapters model with its active ranking head.
        tokenizer: its tokenizer.
        max_length: tokens per pair (:func:`adapter_zoo.ranker.ranker.encode_pairs`).
    """

    def __init__(self, model, tokenizer, max_length: int):
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.max_seq_length = max_length

    def preprocess(self, inputs, prompt: str | None = None, **kwargs) -> dict[str, Any]:
        """Pairs as :func:`~adapter_zoo.ranker.ranker.encode_pairs` encodes them; single
        texts (sentence-transformers' model card counts a dataset column's tokens) alone."""

        if inputs and isinstance(inputs[0], str):
            return dict(self.tokenizer(list(inputs), truncation=True, padding=True,
                                       max_length=self.max_seq_length, return_tensors="pt"))  # fmt: skip
        queries, candidates = zip(*inputs) if inputs else ((), ())
        return dict(encode_pairs(self.tokenizer, queries, candidates, self.max_seq_length))

    def forward(self, features: dict[str, torch.Tensor], **kwargs) -> dict[str, torch.Tensor]:
        logits = self.model(**features).logits
        return {**features, "scores": logits[:, :1]}

    def save(self, output_path: str, *args, safe_serialization: bool = True, **kwargs) -> None:
        # Zoo entries are written by adapter_zoo.zoo.layouts (adapter, fusion or full layout);
        # checkpoints by adapter_zoo.training.checkpoint (trainable weights only).
        raise TypeError(
            "AdapterPairScorer is saved as a zoo entry (adapter_zoo.zoo.layouts), "
            "not as a sentence-transformers model folder"
        )


def as_cross_encoder(model, tokenizer, max_length: int):
    """``model`` (an adapters model with a ranking head) inside a ``CrossEncoder``.

    Its ``preprocess`` and forward are ours (``scores`` is the ranking logit), so
    sentence-transformers' cross-encoder losses and :mod:`adapter_zoo.losses` train it.

    Example:
        >>> from adapter_zoo.ranker.model import build_model  # doctest: +SKIP
        >>> cross = as_cross_encoder(*build_model("minilm-l6"), 300)  # doctest: +SKIP
    """

    device = next(model.parameters()).device
    return CrossEncoder(modules=[AdapterPairScorer(model, tokenizer, max_length)], device=device)
