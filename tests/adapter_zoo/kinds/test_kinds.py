"""The registry of model kinds: every name and card has exactly one kind, and ``load`` opens
each through it (cascades, tfidf and ``base:`` included); a new kind is one registration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.errors import ZooError
from adapter_zoo.kinds import (
    ModelKind,
    get_kind,
    is_baseline,
    kind_for_card,
    kind_for_name,
    register_kind,
    registered_kinds,
)
from adapter_zoo.registry import _KINDS

CARD_KINDS = ("adapter", "full", "multitask", "fusion", "tanda", "cascade", "composite", "soup")

# what train, compose, adapt and the cascade write into cards -> the kind that opens them
WRITTEN_CARDS = [
    ({"mode": "adapter", "encoder": "cross", "layout": "adapter"}, "cross-adapter"),
    ({"mode": "adapter"}, "cross-adapter"),  # cards from before the encoder field
    ({"mode": "multitask", "encoder": "cross", "layout": "adapter"}, "cross-multitask"),
    ({"mode": "full", "encoder": "cross", "layout": "full"}, "cross-full"),
    ({"mode": "fusion", "encoder": "cross", "layout": "fusion"}, "cross-fusion"),
    ({"mode": "tanda", "encoder": "cross", "layout": "full"}, "cross-full"),
    ({"mode": "tanda", "encoder": "bi", "layout": "adapter"}, "bi-adapter"),
    ({"mode": "adapter", "encoder": "bi", "layout": "adapter"}, "bi-adapter"),
    ({"mode": "multitask", "encoder": "bi", "layout": "adapter"}, "bi-multitask"),
    ({"mode": "soup", "encoder": "bi", "layout": "adapter"}, "bi-soup"),
    ({"mode": "full", "encoder": "bi", "layout": "full"}, "bi-full"),
    ({"mode": "fusion", "encoder": "bi", "layout": "fusion"}, "bi-fusion"),
    ({"mode": "composite", "encoder": "composite", "composition": "fusion"}, "composite"),
    ({"mode": "cascade"}, "cascade"),
]


@pytest.mark.parametrize(("card", "expected"), WRITTEN_CARDS)
def test_each_written_card_has_its_kind(card, expected):
    assert kind_for_card(card).name == expected


def test_no_card_is_claimed_by_two_kinds():
    kinds = [k for k in registered_kinds().values() if k.card_modes]
    for mode, encoder, layout in itertools.product(
        CARD_KINDS, ("cross", "bi", "composite", None), ("adapter", "full", "fusion", None)
    ):
        card = {"mode": mode, **({"encoder": encoder} if encoder else {})}
        card.update({"layout": layout} if layout else {})
        claimed = [k.name for k in kinds if k.recognises_card(card)]
        assert len(claimed) <= 1, (card, claimed)


@pytest.mark.parametrize(
    ("name", "expected", "baseline", "role"),
    [
        ("sbert:minilm-l6", "sbert", True, "peer"),
        ("base:minilm-l6", "base", False, "baseline"),
        ("fusion:beer+bm25*0.1", "spec", False, "ours"),
        ("rerank:bm25>beer@5", "spec", False, "ours"),
        ("bm25", "bm25", True, "baseline"),
        ("tfidf", "tfidf", True, "baseline"),
    ],
)
def test_a_name_says_its_kind_by_its_spelling(name, expected, baseline, role):
    kind = kind_for_name(name)
    assert (kind.name, kind.baseline, kind.role) == (expected, baseline, role)
    assert is_baseline(name) is baseline


def test_an_entry_name_has_no_kind_until_its_card_is_read(tmp_path):
    from pathlib import Path

    assert kind_for_name("beer") is None and kind_for_name(Path("bm25")) is None
    assert kind_for_name(str(tmp_path)) is None  # a folder without MultiCQA weights
    (tmp_path / "pytorch_adapter.bin").write_bytes(b"")
    assert kind_for_name(str(tmp_path)).name == "multicqa"


def test_an_unknown_card_kind_is_refused_naming_the_file():
    with pytest.raises(ZooError) as error:
        kind_for_card({"mode": "adapter", "encoder": "bi", "layout": "cascade"}, "x/card.json")
    assert str(error.value) == (
        "x/card.json: field 'mode' names no registered model kind ('adapter' with encoder "
        "'bi', layout 'cascade'; entry cards say one of adapter, cascade, composite, full, "
        "fusion, multitask, soup, tanda)"
    )


def test_default_lengths_come_from_the_kind():
    assert get_kind("bi-adapter").default_max_length == 256
    assert get_kind("cross-adapter").default_max_length == 300
    assert (
        kind_for_card({"mode": "soup", "encoder": "bi", "max_length": 128}).max_length(
            {"mode": "soup", "encoder": "bi", "max_length": 128}
        )
        == 128
    )


def test_load_opens_a_cascade_entry(tiny_bert_path, tmp_path):
    from adapter_zoo.cascade import CascadeConfig, CascadeRanker

    ranker = CascadeRanker.from_base(str(tiny_bert_path), CascadeConfig(exits=(1, 2)), device="cpu")
    entry = ranker.save(tmp_path / "cascade")
    loaded = adapter_zoo.load(str(entry), device="cpu")
    assert isinstance(loaded, CascadeRanker)
    pairs = [("what is a stout", "a dark beer"), ("what is a stout", "a bicycle")]
    np.testing.assert_array_equal(loaded.score(pairs), ranker.score(pairs))
    with pytest.raises(ZooError, match="a cascade's token limit is fixed by its config"):
        adapter_zoo.load(str(entry), device="cpu", max_length=64)


def test_load_opens_tfidf_as_the_baseline_scores_a_list():
    from benchmarks.baselines import tfidf_scores

    query = "which glass for a stout"
    candidates = ["a nonic glass for a stout", "a bicycle chain", "stout glass"]
    scorer = adapter_zoo.load("tfidf")
    expected = tfidf_scores({"query": [query], "candidates": [candidates]}, "query")[0]
    np.testing.assert_array_equal(scorer.score([(query, c) for c in candidates]), expected)
    assert scorer.rank(query, candidates)[0][0] == "a nonic glass for a stout"


def test_load_opens_the_untrained_base_with_its_seeded_head(tiny_bert_path):
    pairs = [("q", "an answer"), ("q", "another")]
    first = adapter_zoo.load(f"base:{tiny_bert_path}", device="cpu")
    second = adapter_zoo.load(f"base:{tiny_bert_path}", device="cpu")
    assert isinstance(first, adapter_zoo.Ranker)
    np.testing.assert_array_equal(first.score(pairs), second.score(pairs))


def test_max_length_at_load_sets_encoders_and_is_refused_without_one(tiny_bert_path):
    ranker = adapter_zoo.load(f"base:{tiny_bert_path}", device="cpu", max_length=32)
    assert ranker.max_length == 32
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("bm25", max_length=32)
    assert str(error.value) == (
        "bm25: a bm25 model has no token limit of its own; max_length is for encoders (its "
        "members keep theirs)"
    )


@pytest.fixture
def plugin_kind():
    """A kind registered from outside the package, removed again after the test."""

    @register_kind
    class Echo(ModelKind):
        name = "echo"
        baseline = True
        role = "baseline"

        def recognises_name(self, name):
            return name.text == "echo:"

        def load_name(self, name, *, device=None, base_model=None):
            from adapter_zoo.compose.bm25 import BM25Scorer

            return BM25Scorer()

    yield Echo
    del _KINDS["echo"]


def test_a_new_kind_is_one_registration(plugin_kind):
    assert isinstance(adapter_zoo.load("echo:"), adapter_zoo.BM25Scorer)
    assert is_baseline("echo:")
    from benchmarks.leaderboard.table import model_role

    assert model_role({"model": "echo:"}) == "baseline"


def test_a_kind_name_is_registered_once(plugin_kind):
    class Other(ModelKind):
        name = "echo"

    with pytest.raises(ZooError, match="model kind 'echo' is registered already"):
        register_kind(Other)
