"""Ranking inputs are strings: every scorer refuses other types and lone surrogates in one
line (``adapter_zoo.ranker.inputs``), and a token limit beyond the model's positions."""

from __future__ import annotations

import pytest

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.biencoder import BiEncoder
from adapter_zoo.compose import BM25Scorer, Rerank, ScoreFusion
from adapter_zoo.ranker import Ranker


@pytest.fixture(scope="module")
def scorers(tiny_bert_path, tiny_sentence_bert_path):
    """One scorer of each family: cross-encoder, bi-encoder, BM25, fusion, rerank."""
    cross = Ranker.from_base(str(tiny_bert_path), max_length=64)
    bi = BiEncoder.from_base(str(tiny_sentence_bert_path))
    return {
        "Ranker": cross,
        "BiEncoder": bi,
        "BM25Scorer": BM25Scorer(),
        "ScoreFusion": ScoreFusion([cross, BM25Scorer()]),
        "Rerank": Rerank(BM25Scorer(), bi, top_k=1),
    }


FAMILIES = ["Ranker", "BiEncoder", "BM25Scorer", "ScoreFusion", "Rerank"]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    ("query", "candidates", "message"),
    [
        ("q", [None, 3.5, "a"], "rank: candidate 0 is NoneType, not a string"),
        ("q", ["a", 3.5], "rank: candidate 1 is float, not a string"),
        ("q", "abc", "rank: candidates must be a list of strings, not one str"),
        ("q", b"abc", "rank: candidates must be a list of strings, not one bytes"),
        ("q", 7, "rank: candidates must be a list of strings, not int"),
        (None, ["a"], "rank: the query is NoneType, not a string"),
        (
            "\ud800",
            ["a"],
            "rank: the query holds a lone surrogate U+D800 at character 0; not valid Unicode text",
        ),
        (
            "q",
            ["a", "b\udfff"],
            "rank: candidate 1 holds a lone surrogate U+DFFF at character 1; not valid Unicode "
            "text",
        ),
    ],
)
def test_rank_refuses_what_is_not_a_list_of_strings_in_one_line(
    scorers, family, query, candidates, message
):
    with pytest.raises(ZooError) as error:
        scorers[family].rank(query, candidates)
    assert str(error.value) == message


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([("q", "a"), ("q", None)], "score: pair 1: candidate is NoneType, not a string"),
        ([(3, "a")], "score: pair 0: query is int, not a string"),
        ([("q", "a", "b")], "score: pair 0 must be a (query, candidate) pair, not tuple"),
        (["qa"], "score: pair 0 must be a (query, candidate) pair, not str"),
        ("qa", "score: pairs must be a list of strings, not one str"),
    ],
)
def test_score_refuses_pairs_that_are_not_two_strings(scorers, family, pairs, message):
    with pytest.raises(ZooError) as error:
        scorers[family].score(pairs)
    assert str(error.value) == message


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("top_k", [0, -1, 1.5])
def test_rank_refuses_a_top_k_below_one(scorers, family, top_k):
    with pytest.raises(ZooError) as error:
        scorers[family].rank("q", ["a", "b"], top_k=top_k)
    assert str(error.value) == f"rank: top_k must be a whole number >= 1, not {top_k}"


def test_strings_still_rank_and_the_single_string_case_ranks_nothing_by_character(scorers):
    ranked = scorers["BM25Scorer"].rank("stout glass", ["a bike", "a stout glass"], top_k=1)
    assert [c for c, _ in ranked] == ["a stout glass"]
    assert scorers["Ranker"].rank("q", ()) == []


def test_bi_encoder_encode_and_search_refuse_non_strings_and_bad_top_k(scorers):
    bi = scorers["BiEncoder"]
    with pytest.raises(ZooError) as error:
        bi.encode(["a", None])
    assert str(error.value) == "encode: text 1 is NoneType, not a string"
    with pytest.raises(ZooError) as error:
        bi.search("abc", ["a", "b"])
    assert str(error.value) == "search: queries must be a list of strings, not one str"
    with pytest.raises(ZooError) as error:
        bi.search(["q"], ["a", 5])
    assert str(error.value) == "search: corpus text 1 is int, not a string"
    with pytest.raises(ZooError) as error:
        bi.search(["q"], ["a", "b"], top_k=-1)
    assert str(error.value) == "search: top_k must be a whole number >= 1, not -1"


def test_max_length_beyond_the_models_positions_is_one_line_naming_both(
    tiny_bert_path, tiny_sentence_bert_path
):
    with pytest.raises(ZooError) as error:
        Ranker.from_base(str(tiny_bert_path), max_length=100_000)
    assert str(error.value) == f"max_length 100000 is above the 512 positions of {tiny_bert_path}"
    bi = BiEncoder.from_base(str(tiny_sentence_bert_path))
    before = bi.max_length
    for bad, message in [
        (513, f"max_length 513 is above the 512 positions of {tiny_sentence_bert_path}"),
        (0, "max_length must be a whole number >= 1, not 0"),
        (-5, "max_length must be a whole number >= 1, not -5"),
        (float("nan"), "max_length must be a whole number >= 1, not nan"),
    ]:
        with pytest.raises(ZooError) as error:
            bi.max_length = bad
        assert str(error.value) == message
    assert bi.max_length == before  # unchanged by the refused values
    ranker = Ranker.from_base(str(tiny_bert_path), max_length=512)
    with pytest.raises(ZooError, match=r"^max_length 600 is above the 512 positions of "):
        ranker.max_length = 600
    assert ranker.max_length == 512


def test_load_by_spec_refuses_non_strings_too(scorers):
    with pytest.raises(ZooError, match=r"^rank: candidate 0 is NoneType, not a string$"):
        adapter_zoo.load("bm25").rank("q", [None])
