"""Mixing two sources of negatives (adapter_zoo.adapt.negatives): equal shares, each text
once, and a short source's turns left to the other."""

from __future__ import annotations

import numpy as np

from adapter_zoo.adapt.negatives import CachedEmbedder, base_nearest, mixed_negatives


def test_equal_shares_bm25_the_odd_one():
    negatives, sources = mixed_negatives(list("abcdefg"), list("tuvwxyz"), 5)
    assert negatives == list("atbuc") and sources == ["bm25", "base"] * 2 + ["bm25"]


def test_a_text_both_sources_chose_is_counted_once():
    negatives, sources = mixed_negatives(list("abcd"), list("axbyz"), 4)
    # the base's a and b were BM25's first: the base's next texts take their places
    assert negatives == ["a", "x", "b", "y"] and sources == ["bm25", "base", "bm25", "base"]
    assert len(set(negatives)) == len(negatives)


def test_a_short_source_leaves_its_turns_to_the_other():
    negatives, sources = mixed_negatives(list("abcdef"), ["a", "x"], 5)
    assert negatives == ["a", "x", "b", "c", "d"]
    assert sources == ["bm25", "base", "bm25", "bm25", "bm25"]
    assert mixed_negatives([], list("xy"), 3) == (["x", "y"], ["base", "base"])


def test_the_base_leaves_out_positives_and_near_copies():
    query = np.array([1.0, 0.0])
    pool = np.array([[1.0, 0.0], [0.99, 0.141], [0.8, 0.6], [0.6, 0.8], [0.0, 1.0]])
    positive = pool[[2]]  # the query's own answer: similarity 0.8
    excluded = np.array([False, False, True, False, False])
    # rows 0 and 1 are above 95% of 0.8 (likely second answers), row 2 is the positive
    assert base_nearest(query, positive, pool, excluded, 3) == [3, 4]


def test_the_embedder_encodes_each_text_once():
    calls = []

    class Encoder:
        def encode(self, texts):
            calls.append(list(texts))
            return np.eye(3, dtype=np.float32)[[len(t) % 3 for t in texts]]

    embed = CachedEmbedder(Encoder)
    first = embed(["a", "bb", "a"])
    second = embed(["bb", "ccc"])
    assert calls == [["a", "bb"], ["ccc"]]
    np.testing.assert_array_equal(first[1], second[0])
