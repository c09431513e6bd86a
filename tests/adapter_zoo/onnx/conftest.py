"""Tiny bi- and cross-encoder adapter entries (random BERT, bottleneck adapters) to export."""

from __future__ import annotations

import pytest
import torch

from adapter_zoo.training import TrainingConfig
from adapter_zoo.training.models import setup_model, write_entry_weights
from adapter_zoo.zoo import save_entry

PAIRS = [
    ("why is my stout flat", "dead yeast"),
    ("what are hops", "flowers of the hop plant, for bitterness and aroma"),
    ("which glass for lager", "a tall pilsner glass, rinsed cold"),
    ("what are hops", "a tall pilsner glass"),
    ("why is my stout flat", "flowers of the hop plant"),
]


def make_entry(parsed, base, encoder: str, name: str, mode: str = "adapter", method=None):
    """An ``encoder`` entry of ``mode`` (``method``) on ``base`` with randomised trainable
    weights."""
    config = TrainingConfig(
        mode=mode, data=str(parsed), forums=("beer",), name=name, base_model=str(base),
        encoder=encoder, max_length=64, method=method,
    )  # fmt: skip
    torch.manual_seed(7)
    model, tokenizer, setup = setup_model(config)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.requires_grad:
                parameter.add_(torch.randn_like(parameter) * 0.1)
    card = {
        "mode": mode, "encoder": encoder, "layout": config.layout, "base_model": str(base),
        "forums": ["beer.stackexchange.com"], "head": setup.get("head"), "max_length": 64,
        "scores": {"dev_map": 0.5},
    }  # fmt: skip
    return save_entry(
        lambda folder: write_entry_weights(model, tokenizer, config, setup, folder), name, card
    )


@pytest.fixture
def bi_entry(parsed_fixture, tiny_sentence_bert_path):
    return make_entry(parsed_fixture, tiny_sentence_bert_path, "bi", "beer-bi")


@pytest.fixture
def cross_entry(parsed_fixture, tiny_sentence_bert_path):
    """A cross-encoder adapter with the pair-cosine head (a sentence-encoder base)."""
    return make_entry(parsed_fixture, tiny_sentence_bert_path, "cross", "beer-cross")


@pytest.fixture
def cls_entry(parsed_fixture, tiny_bert_path):
    """A cross-encoder adapter with the CLS classification head (a plain BERT base)."""
    return make_entry(parsed_fixture, tiny_bert_path, "cross", "beer-cls")


@pytest.fixture
def lora_bi_entry(parsed_fixture, tiny_sentence_bert_path):
    return make_entry(parsed_fixture, tiny_sentence_bert_path, "bi", "beer-lora", method="lora")


@pytest.fixture
def full_cross_entry(parsed_fixture, tiny_sentence_bert_path):
    return make_entry(parsed_fixture, tiny_sentence_bert_path, "cross", "beer-full", mode="full")
