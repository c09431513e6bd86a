"""The frozen lower layers' cache: the same loss and embeddings as the model's own forward,
invalidated when a text or a frozen weight changes, bounded in memory, used by training."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from adapter_zoo import ZooError
from adapter_zoo.biencoder.encoder import build_sentence_model, transformer_of
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.prefix_cache import PrefixCache

TEXTS = [
    "Which glass for a stout?",
    "A tulip glass keeps the head and the aroma of a strong ale.",
    "Fix a flat tyre",
    "How long does a keg stay fresh once it is tapped at a party?",
    "Porter or stout",
    "Tubeless tyres seal small punctures by themselves with sealant.",
]


def _model(base, drop_lower: int = 1):
    """The tiny sentence BERT without dropout (a cached and an uncached pass then draw
    nothing at random), with a bottleneck adapter above its lowest ``drop_lower`` layers."""
    from adapters import SeqBnConfig

    torch.manual_seed(0)
    model = build_sentence_model(str(base), device="cpu")
    transformer = transformer_of(model)
    for module in transformer.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
        if hasattr(module, "dropout_prob"):  # BERT's attention dropout, given to sdpa
            module.dropout_prob = 0.0
    config = SeqBnConfig(reduction_factor=2, leave_out=list(range(drop_lower)),
                         init_weights="mam_adapter")  # fmt: skip
    transformer.add_adapter("a", config=config)
    transformer.train_adapter("a")
    # the up-projection starts at zero: move it, so the adapter changes what it reads
    for name, param in transformer.named_parameters():
        if "adapter_up" in name:
            param.data.normal_(0, 0.5)
    return model, transformer


def _loss_and_grads(model, transformer):
    """MultipleNegativesRankingLoss of TEXTS as (anchor, positive) pairs, and its gradients."""
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    model.zero_grad()
    loss_fn = MultipleNegativesRankingLoss(model)
    features = [model.preprocess(TEXTS[0::2]), model.preprocess(TEXTS[1::2])]
    loss = loss_fn(features, None)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in transformer.named_parameters() if p.requires_grad}
    return loss.item(), grads


def test_a_cached_step_has_the_loss_and_gradients_of_the_uncached_one(tiny_sentence_bert_path):
    model, transformer = _model(tiny_sentence_bert_path)
    model.train()
    loss, grads = _loss_and_grads(model, transformer)
    cache = PrefixCache(transformer, 1)
    with cache.installed():
        cold = _loss_and_grads(model, transformer)
        warm = _loss_and_grads(model, transformer)
    assert cache.misses == len(TEXTS) and cache.hits == len(TEXTS)
    for other_loss, other_grads in (cold, warm):
        assert other_loss == pytest.approx(loss, abs=1e-6)
        assert other_grads.keys() == grads.keys() and grads
        for name, grad in grads.items():
            torch.testing.assert_close(other_grads[name], grad, atol=1e-6, rtol=0)
    # uninstalled: the model's own forward again
    assert "forward" not in vars(transformer)


def test_cached_embeddings_equal_the_models_own_and_a_changed_text_is_a_new_key(
    tiny_sentence_bert_path,
):
    model, transformer = _model(tiny_sentence_bert_path)
    own = model.encode(TEXTS, batch_size=4)
    cache = PrefixCache(transformer, 1)
    with cache.installed():
        first = model.encode(TEXTS, batch_size=4)
        again = model.encode(TEXTS, batch_size=3)  # other batches, other padding
        changed = model.encode([TEXTS[0] + " Or a porter?"], batch_size=1)
    np.testing.assert_allclose(first, own, atol=1e-6)
    np.testing.assert_allclose(again, own, atol=1e-6)
    assert (cache.misses, cache.hits) == (len(TEXTS) + 1, len(TEXTS))
    np.testing.assert_allclose(changed, model.encode([TEXTS[0] + " Or a porter?"]), atol=1e-6)


def test_a_changed_frozen_weight_empties_the_cache(tiny_sentence_bert_path):
    model, transformer = _model(tiny_sentence_bert_path)
    cache = PrefixCache(transformer, 1)
    with cache.installed():
        model.encode(TEXTS)
        with torch.no_grad():  # another base, or an edit of a frozen layer in place
            transformer.encoder.layer[0].output.dense.weight.mul_(1.5)
        after = model.encode(TEXTS)
        assert cache.misses == 2 * len(TEXTS) and cache.hits == 0
    np.testing.assert_allclose(after, model.encode(TEXTS), atol=1e-6)


def test_the_cache_keeps_no_more_than_its_bound_and_still_scores_every_text(
    tiny_sentence_bert_path,
):
    model, transformer = _model(tiny_sentence_bert_path)
    own = model.encode(TEXTS)
    one_text = 32 * 4 * 20  # a short text's states: hidden 32 x fp32 x ~20 tokens
    cache = PrefixCache(transformer, 1, max_bytes=one_text)
    with cache.installed():
        np.testing.assert_allclose(model.encode(TEXTS), own, atol=1e-6)
        np.testing.assert_allclose(model.encode(TEXTS), own, atol=1e-6)
    assert 0 < cache.stored_bytes <= one_text
    assert cache.record()["texts"] < len(TEXTS)


def test_the_cache_refuses_layers_that_train_and_a_depth_it_cannot_split(
    tiny_sentence_bert_path,
):
    model, transformer = _model(tiny_sentence_bert_path, drop_lower=0)
    with pytest.raises(ZooError) as error:
        PrefixCache(transformer, 1)
    assert str(error.value) == (
        "prefix cache: the lowest 1 layers must be frozen, but "
        "encoder.layer.0.output.adapters.a.adapter_down.0.weight trains"
    )
    with pytest.raises(ZooError, match=r"^prefix cache: 2 layers of 2; cache 1 to 1$"):
        PrefixCache(transformer, 2)


def test_training_with_drop_lower_reads_each_text_below_the_adapters_once(
    parsed_shipped, tiny_sentence_bert_path
):
    config = TrainingConfig(
        mode="adapter", data=str(parsed_shipped), forums=("beer",), name="cached",
        base_model=str(tiny_sentence_bert_path), batch_size=8, max_length=16, max_steps=4,
        eval_steps=2, seed=0, lr=3e-2, reduction_factor=2, dev_queries=8, drop_lower=1,
    )  # fmt: skip
    card = json.loads((train(config) / "card.json").read_text())
    record = card["training"]["memory"]["prefix_cache"]
    # every evaluation after the first reads the dev lists' texts from the cache
    assert record["layers"] == 1 and record["hits"] > 0
    assert record["misses"] >= record["texts"] > 0
    plain = json.loads((train(dataclasses.replace(config, name="plain", drop_lower=0)) / "card.json")
                       .read_text())  # fmt: skip
    assert "prefix_cache" not in plain["training"]["memory"]
