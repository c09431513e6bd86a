"""The one model-name parser (``adapter_zoo.names``) and the one home of the default token
limits (``adapter_zoo.lengths``): every syntax, the refused ones, and the length a card
without ``max_length`` is scored at."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import adapter_zoo
from adapter_zoo import ModelName, ZooError, parse_model_name
from adapter_zoo.lengths import BI_MAX_LENGTH, CROSS_MAX_LENGTH
from adapter_zoo.registry import card_max_length, is_baseline
from adapter_zoo.zoo.snippets import library_lines, local_folder


@pytest.mark.parametrize(
    ("name", "kind", "base", "baseline"),
    [
        ("sbert:minilm-l6", "sbert", "minilm-l6", True),
        ("sbert:sentence-transformers/all-MiniLM-L6-v2", "sbert",
         "sentence-transformers/all-MiniLM-L6-v2", True),
        ("base:bert-base", "base", "bert-base", False),
        ("bm25", "lexical", None, True),
        ("tfidf", "lexical", None, True),
        ("fusion:beer+sbert:minilm-l6*0.2+bm25*0.1", "composition", None, False),
        ("rerank:sbert:minilm-l6>beer@10", "composition", None, False),
        ("beer", "entry", None, False),
        ("travel.stackexchange.com", "entry", None, False),
        ("org/beer-adapter", "entry", None, False),
        ("./zoo/beer", "entry", None, False),
        ("/models/multicqa/pytorch_adapter.bin", "entry", None, False),
        ("BM25", "entry", None, False),  # names are case-sensitive: a zoo entry
        ("fusion", "entry", None, False),  # no colon: a zoo entry named fusion
    ],
)  # fmt: skip
def test_every_name_syntax_parses_to_its_kind(name, kind, base, baseline):
    parsed = parse_model_name(name)
    assert parsed == ModelName(name, kind, base)
    assert is_baseline(name) is baseline
    assert parsed.is_entry is (kind == "entry")


@pytest.mark.parametrize("text", ["bm25", "sbert:minilm-l6", "fusion:a+b"])
def test_a_path_object_is_always_a_folder(text):
    assert parse_model_name(Path(text)) == ModelName(text, "entry")


def test_a_parsed_name_is_frozen():
    parsed = parse_model_name("sbert:minilm-l6")
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.category = "entry"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("sbert:", "model name 'sbert:' names no base model: write sbert:<base>, such as "
                   "sbert:minilm-l6"),
        ("base:", "model name 'base:' names no base model: write base:<base>, such as "
                  "base:minilm-l6"),
        ("base:  ", "model name 'base:  ' names no base model: write base:<base>, such as "
                    "base:minilm-l6"),
    ],
)  # fmt: skip
def test_a_prefix_without_a_base_is_refused_in_one_line(name, message):
    with pytest.raises(ZooError) as error:
        parse_model_name(name)
    assert str(error.value) == message
    with pytest.raises(ZooError) as loading:  # load reads the name through the parser
        adapter_zoo.load(name)
    assert str(loading.value) == message


def test_a_name_that_is_not_text_is_a_type_error():
    with pytest.raises(TypeError, match="a model name is a string or a path, not int"):
        parse_model_name(5)


def test_a_bad_spec_keeps_its_own_message_when_loaded():
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("rerank:bm25")
    assert str(error.value) == ("model spec 'rerank:bm25': expected rerank:RETRIEVER>RERANKER[@K]")


def test_card_without_max_length_has_its_encoders_default():
    assert (BI_MAX_LENGTH, CROSS_MAX_LENGTH) == (256, 300)
    assert card_max_length({"mode": "adapter", "encoder": "bi"}) == 256
    assert card_max_length({"mode": "adapter", "encoder": "cross"}) == 300
    assert card_max_length({"mode": "adapter"}) == 300  # cards before ``encoder``: cross
    assert card_max_length({"mode": "composite", "encoder": "composite"}) == 300
    assert card_max_length({"mode": "adapter", "encoder": "bi", "max_length": 128}) == 128


def test_readme_snippets_use_the_cards_length_or_its_encoders_default():
    def lines(card):
        return "\n".join(library_lines(card, local_folder("/zoo/x"), None))

    bi = {"mode": "adapter", "encoder": "bi", "layout": "adapter", "base_model": "minilm-l6"}
    cross = {"mode": "adapter", "layout": "adapter", "base_model": "bert-base"}
    assert "model.max_seq_length = 256\n" in lines(bi)
    assert "model.max_seq_length = 64\n" in lines({**bi, "max_length": 64})
    assert "    max_length=300,\n" in lines(cross)
    assert "    max_length=64,\n" in lines({**cross, "max_length": 64})


def test_loaded_entries_without_max_length_score_at_their_encoders_default(
    tiny_bert_path, tiny_sentence_bert_path
):
    from adapter_zoo.biencoder.layouts import write_bi_full
    from adapter_zoo.zoo.layouts import write_full
    from adapter_zoo.zoo.store import save_entry

    ranker = adapter_zoo.Ranker.from_base(str(tiny_bert_path), device="cpu")
    save_entry(lambda folder: write_full(ranker.model, ranker.tokenizer, folder), "old-cross",
               {"mode": "full", "layout": "full", "base_model": str(tiny_bert_path)})  # fmt: skip
    encoder = adapter_zoo.BiEncoder.from_base(str(tiny_sentence_bert_path), device="cpu")
    assert encoder.max_length == 32  # the tiny base's own, so the card's default shows below
    save_entry(lambda folder: write_bi_full(encoder.model, folder), "old-bi",
               {"mode": "full", "encoder": "bi", "layout": "full",
                "base_model": str(tiny_sentence_bert_path)})  # fmt: skip
    assert adapter_zoo.load("old-cross", device="cpu").max_length == 300
    assert adapter_zoo.load("old-bi", device="cpu").max_length == 256
