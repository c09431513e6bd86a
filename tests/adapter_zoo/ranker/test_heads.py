"""The pair-cosine head: what it computes, which bases get it, and that it survives the zoo."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker import Ranker
from adapter_zoo.ranker.heads import PAIR_COSINE, SEGMENTS_KEY
from adapter_zoo.ranker.model import add_ranking_head, build_model, mean_pooling_base
from adapter_zoo.ranker.ranker import encode_pairs
from adapter_zoo.ranker.segments import add_pair_segments, segments_from_inputs
from adapter_zoo.training import TrainingConfig, train

PAIRS = [
    ("what is a stout", "a dark beer brewed with roasted malt"),
    ("what is a stout", "oil the bicycle chain every month"),
    ("how long does ale keep", "a year in a cool cellar, less when hoppy"),
]


def test_sentence_encoders_get_the_pair_cosine_head_others_cls(
    minilm_path, tiny_bert_path, tiny_sentence_bert_path
):
    assert mean_pooling_base(str(minilm_path)) and mean_pooling_base(str(tiny_sentence_bert_path))
    assert not mean_pooling_base(str(tiny_bert_path))
    kinds = {}
    for name, base in (("plain", tiny_bert_path), ("sentence", tiny_sentence_bert_path)):
        model, _ = build_model(str(base))
        add_ranking_head(model, "r")
        kinds[name] = model.heads["r"].config["head_type"]
    assert kinds == {"plain": "classification", "sentence": PAIR_COSINE}


def test_pair_segments_mark_query_and_candidate_tokens(tiny_sentence_bert_path):
    _, tokenizer = build_model(str(tiny_sentence_bert_path))
    batch = encode_pairs(tokenizer, ["a stout"], ["dark beer here"], 32)
    ids, segments = batch["input_ids"][0].tolist(), batch[SEGMENTS_KEY][0].tolist()
    query = [t for t, s in zip(ids, segments) if s == 1]
    candidate = [t for t, s in zip(ids, segments) if s == 2]
    assert tokenizer.decode(query) == "a stout"
    assert tokenizer.decode(candidate) == "dark beer here"
    assert all(s == 0 for t, s in zip(ids, segments) if t in tokenizer.all_special_ids)


def test_pair_cosine_is_scaled_cosine_of_segment_means(tiny_sentence_bert_path):
    torch.manual_seed(0)
    ranker = Ranker.from_base(str(tiny_sentence_bert_path), max_length=32)
    head = ranker.model.heads["ranker"]
    with torch.no_grad():
        head.scale.fill_(7.0)
        head.bias.fill_(-2.0)
    scores = ranker.score(PAIRS)
    batch = encode_pairs(ranker.tokenizer, *zip(*PAIRS), 32)
    with torch.no_grad():
        hidden = ranker.model.base_model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            token_type_ids=batch["token_type_ids"],
        ).last_hidden_state
    expected = []
    for row in range(len(PAIRS)):
        segments = batch[SEGMENTS_KEY][row]
        query = hidden[row][segments == 1].mean(0)
        candidate = hidden[row][segments == 2].mean(0)
        expected.append(7.0 * torch.cosine_similarity(query, candidate, dim=0).item() - 2.0)
    np.testing.assert_allclose(scores, expected, atol=1e-5, rtol=0)


def test_segments_of_a_plain_batch_equal_encode_pairs(tiny_sentence_bert_path):
    _, tokenizer = build_model(str(tiny_sentence_bert_path))
    pairs = PAIRS + [("a very long question " * 9, "a short answer")]  # truncated query
    expected = encode_pairs(tokenizer, *zip(*pairs), 24)
    plain = tokenizer(
        *map(list, zip(*pairs)), padding=True, truncation=True, max_length=24, return_tensors="pt"
    )
    by_types = segments_from_inputs(
        plain["input_ids"], plain["attention_mask"], plain["token_type_ids"]
    )
    by_separators = segments_from_inputs(
        plain["input_ids"], plain["attention_mask"], None, sep_token_id=tokenizer.sep_token_id
    )
    assert torch.equal(by_types, expected[SEGMENTS_KEY])
    assert torch.equal(by_separators, expected[SEGMENTS_KEY])
    assert segments_from_inputs(plain["input_ids"], plain["attention_mask"], None) is None


def test_registered_plain_adapters_model_scores_a_tokenizer_batch_as_the_ranker(
    parsed_fixture, tiny_sentence_bert_path
):
    """adapters + transformers only, once adapter_zoo.register_heads() has run: the pair-cosine
    head finds the two texts in the plain tokenizer batch and scores as the Ranker."""
    import adapters
    from transformers import AutoTokenizer

    path = train(
        TrainingConfig(
            mode="adapter",
            data=str(parsed_fixture),
            forums=("beer",),
            name="beer",
            base_model=str(tiny_sentence_bert_path),
            epochs=1,
            batch_size=8,
            max_length=32,
            max_steps=2,
            lr=1e-3,
            encoder="cross",
        )  # fmt: skip
    )
    model = adapters.AutoAdapterModel.from_pretrained(str(tiny_sentence_bert_path))
    adapter_zoo.register_heads(model)
    adapter_zoo.register_heads(model)  # twice is harmless: one hook
    model.load_adapter(str(path), set_active=True, use_safetensors=True)
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_sentence_bert_path))
    batch = tokenizer(
        [q for q, _ in PAIRS], [c for _, c in PAIRS],
        padding=True, truncation=True, max_length=32, return_tensors="pt",
    )  # fmt: skip
    with torch.no_grad():
        scores = model.eval()(**batch).logits[:, 0].numpy()
    assert model.heads["beer"].config["head_type"] == PAIR_COSINE
    # a plain padded batch and score()'s length-sorted batches: two code paths through float
    # kernels, equal to a tolerance (not to the bit on every machine)
    np.testing.assert_allclose(scores, adapter_zoo.load("beer").score(PAIRS), rtol=0, atol=1e-6)
    assert list(model._forward_pre_hooks.values()).count(add_pair_segments) == 1


def test_pair_cosine_head_says_what_it_needs_when_the_texts_cannot_be_found(
    tiny_sentence_bert_path,
):
    ranker = Ranker.from_base(str(tiny_sentence_bert_path), max_length=32)
    batch = ranker.tokenizer(["a stout"], ["dark beer"], return_tensors="pt")
    del batch["token_type_ids"]  # BERT's config names no separator token
    with pytest.raises(ZooError) as error:
        ranker.model(**batch)
    assert str(error.value) == (
        "the pair_cosine head needs the 'pair_segments' tensor of "
        "adapter_zoo.ranker.encode_pairs, or input_ids with token_type_ids (or a separator "
        "token) to find the two texts"
    )


@pytest.mark.parametrize("mode", ["adapter", "full", "fusion"])
def test_pair_cosine_entries_reload_bit_identically(mode, parsed_fixture, tiny_sentence_bert_path):
    def config(mode, name, **extra):
        return TrainingConfig(
            mode=mode, data=str(parsed_fixture), forums=("beer",), name=name,
            base_model=str(tiny_sentence_bert_path), epochs=1, batch_size=8, max_length=32,
            max_steps=3, lr=1e-3, encoder="cross", **extra,
        )  # fmt: skip

    if mode == "fusion":
        train(config("adapter", "one"))
        train(config("adapter", "two", seed=7))
        path = train(config("fusion", "entry", adapters=("one", "two")))
    else:
        path = train(config(mode, "entry"))
    first, second = adapter_zoo.load("entry"), adapter_zoo.load(str(path))
    assert first.model.heads[first.model.active_head].config["head_type"] == PAIR_COSINE
    head = json.loads((path / "card.json").read_text())["head"]
    assert head == first.model.active_head
    np.testing.assert_array_equal(first.score(PAIRS), second.score(PAIRS))
    untrained = Ranker.from_base(str(tiny_sentence_bert_path), max_length=32).score(PAIRS)
    assert np.abs(first.score(PAIRS) - untrained).max() > 1e-4  # trained weights were loaded
