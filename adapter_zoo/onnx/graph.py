"""A zoo model traced to one ONNX graph (``torch.onnx.export``, the TorchScript exporter).

A bi-encoder's graph maps ``input_ids``, ``attention_mask`` (and ``token_type_ids`` where the
tokenizer makes them) to ``last_hidden_state``: the adapters-enabled transformer with its
active adapter, so sentence-transformers' own Pooling (and Normalize) modules run after it as
they do in PyTorch. A cross-encoder's graph maps the same inputs to ``logits`` (batch, 1):
base, adapter and head, the pair-cosine head's query/candidate split derived inside the graph
from the token types (:func:`adapter_zoo.ranker.segments.segments_from_inputs`).

The TorchScript exporter (``dynamo=False``) is used: the dynamo exporter needs onnxscript and
traces the adapters library's Python-level composition code less reliably.

Example:
    >>> export_graph(encoder, "out/onnx/model.onnx")  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from pathlib import Path

import torch

from adapter_zoo.biencoder.encoder import transformer_of
from adapter_zoo.ranker.segments import SEGMENTS_KEY, segments_from_inputs

OPSET = 17
BI, CROSS = "bi", "cross"


class _BiGraph(torch.nn.Module):
    def __init__(self, transformer):
        super().__init__()
        self.transformer = transformer

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
        out = self.transformer(input_ids=input_ids, attention_mask=attention_mask, **extra)
        return out[0]


class _CrossGraph(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        config = model.config
        self.type_vocab_size = int(getattr(config, "type_vocab_size", 1) or 1)
        self.sep_token_id = getattr(config, "sep_token_id", None) or getattr(
            config, "eos_token_id", None
        )

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        segments = segments_from_inputs(
            input_ids, attention_mask, token_type_ids,
            type_vocab_size=self.type_vocab_size, sep_token_id=self.sep_token_id,
        )  # fmt: skip
        extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
        if segments is not None:
            extra[SEGMENTS_KEY] = segments
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, **extra)
        return out.logits if hasattr(out, "logits") else out[0]


def encoder_kind(scorer) -> str:
    """``bi`` for a BiEncoder, ``cross`` for a Ranker (by their ``encoder_kind``/``model``)."""
    return BI if getattr(scorer, "encoder_kind", None) == BI else CROSS


def tokenizer_of(scorer):
    """The tokenizer ``scorer`` reads its texts with."""
    return scorer.tokenizer


def graph_inputs(scorer) -> list[str]:
    """The graph's input names: those of the tokenizer among BERT's three."""
    names = list(
        getattr(tokenizer_of(scorer), "model_input_names", ["input_ids", "attention_mask"])
    )
    return [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in names]


def export_graph(scorer, path: str | Path) -> Path:
    """Trace ``scorer`` (a BiEncoder or a Ranker, on the CPU in fp32) into the ONNX file
    ``path``, with dynamic batch and sequence axes.

    Args:
        scorer: a :class:`~adapter_zoo.biencoder.BiEncoder` (its active adapter, if any, is
            in the graph) or a :class:`~adapter_zoo.ranker.Ranker` (adapter and head).
        path: the ``.onnx`` file to write (its folder must exist).

    Returns:
        ``path``.

    Example:
        >>> export_graph(load("beer", precision="fp32"), "model.onnx")  # doctest: +SKIP
    """
    path = Path(path)
    kind = encoder_kind(scorer)
    if kind == BI:
        module, output = _BiGraph(transformer_of(scorer.model)), "last_hidden_state"
        pairs = None
    else:
        module, output = _CrossGraph(scorer.model), "logits"
        pairs = (["what is a stout", "which glass"], ["a dark beer, often roasted", "a pint"])
    module.eval()
    tokenizer = tokenizer_of(scorer)
    if pairs is None:
        batch = tokenizer(["a stout is a dark beer", "hops"], padding=True, return_tensors="pt")
    else:
        batch = tokenizer(*pairs, padding=True, return_tensors="pt")
    names = graph_inputs(scorer)
    args = tuple(batch[n] for n in names)
    axes = {n: {0: "batch_size", 1: "sequence_length"} for n in names}
    axes[output] = {0: "batch_size"} if kind == CROSS else {0: "batch_size", 1: "sequence_length"}
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about Python control flow
        torch.onnx.export(
            module, args, str(path), input_names=names, output_names=[output],
            dynamic_axes=axes, opset_version=OPSET, do_constant_folding=True, dynamo=False,
        )  # fmt: skip
    return path


__all__ = ["BI", "CROSS", "OPSET", "encoder_kind", "export_graph", "graph_inputs"]
