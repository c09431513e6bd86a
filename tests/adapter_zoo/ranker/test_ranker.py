"""Ranker: base-model names, batching by length, ranking order."""

from __future__ import annotations

import numpy as np
import pytest

from adapter_zoo.ranker import Ranker, resolve_base_model

PAIRS = [
    ("why is my stout flat", "the yeast was dead so no carbonation happened at all in the bottle"),
    ("best glass for lager", "a pilsner glass"),
    ("what are hops", "flowers of the hop plant used for bitterness, aroma and to keep beer fresh"),
    ("is ale a lager", "no"),
    ("how long to age a barleywine", "a year or more in a cool cellar, tasting every few months"),
]


def test_resolve_base_model(minilm_path):
    assert resolve_base_model("minilm-l6") == str(minilm_path)
    assert resolve_base_model("bert-base") == "bert-base-uncased"
    assert resolve_base_model("roberta-base") == "roberta-base"
    assert resolve_base_model("/some/local/path") == "/some/local/path"


@pytest.fixture(scope="module")
def ranker(tiny_bert_path):
    return Ranker.from_base(str(tiny_bert_path), device="cpu")


def test_from_base_is_seeded_and_on_cpu(ranker, tiny_bert_path):
    again = Ranker.from_base(str(tiny_bert_path), device="cpu")
    np.testing.assert_array_equal(ranker.score(PAIRS), again.score(PAIRS))
    assert str(ranker.device) == "cpu" and ranker.card is None
    assert ranker.base_model == str(tiny_bert_path)


def test_score_restores_input_order_across_length_sorted_batches(ranker):
    scores = ranker.score(PAIRS, batch_size=2)
    assert scores.dtype == np.float32 and scores.shape == (len(PAIRS),)
    one_by_one = np.concatenate([ranker.score([pair]) for pair in PAIRS])
    np.testing.assert_allclose(scores, one_by_one, atol=1e-5)
    assert len(set(scores.tolist())) == len(PAIRS)  # distinct pairs, distinct scores
    assert ranker.score([]).shape == (0,)


def test_rank_sorts_best_first_and_keeps_input_order_on_ties(ranker):
    candidates = [c for _, c in PAIRS] + [PAIRS[0][1]]
    ranked = ranker.rank("why is my stout flat", candidates)
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)
    assert sorted(c for c, _ in ranked) == sorted(candidates)
    # the duplicated candidate ties with itself: both copies sit next to each other
    positions = [i for i, (c, _) in enumerate(ranked) if c == PAIRS[0][1]]
    assert positions[1] == positions[0] + 1
    assert ranker.rank("why is my stout flat", candidates, top_k=2) == ranked[:2]


def test_max_length_truncates_the_candidate(tiny_bert_path):
    short = Ranker.from_base(str(tiny_bert_path), max_length=8, device="cpu")
    encoded = short.encode(["why is my stout flat"], [PAIRS[0][1]])
    assert encoded["input_ids"].shape[1] == 8


def test_predict_is_score_as_cross_encoder_predict_returns_it(ranker):
    scores = ranker.score(PAIRS)
    predicted = ranker.predict(PAIRS)
    assert isinstance(predicted, np.ndarray) and predicted.dtype == np.float32
    np.testing.assert_array_equal(predicted, scores)
    single = ranker.predict(PAIRS[1])  # one pair: one numpy scalar, as CrossEncoder.predict
    assert isinstance(single, np.float32) and single == ranker.score([PAIRS[1]])[0]


def test_rank_returns_sentence_transformers_dicts_when_asked(ranker):
    candidates = [c for _, c in PAIRS] + [PAIRS[0][1]]
    scores = ranker.score([("why is my stout flat", c) for c in candidates])
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    with_text = ranker.rank("why is my stout flat", candidates, return_documents=True)
    assert with_text == [
        {"corpus_id": i, "score": float(scores[i]), "text": candidates[i]} for i in order
    ]
    without = ranker.rank("why is my stout flat", candidates, return_documents=False, top_k=2)
    assert without == [{"corpus_id": i, "score": float(scores[i])} for i in order[:2]]
    # the default stays (candidate, score) tuples, as every caller reads it
    assert ranker.rank("why is my stout flat", candidates) == [
        (candidates[i], float(scores[i])) for i in order
    ]


def _prose(chars: int, seed: int) -> str:
    """Word-like text of about ``chars`` characters (varied words, so tokens vary too)."""
    rng = np.random.default_rng(seed)
    words = ["stout", "porter", "yeast", "barrel", "hops", "a", "the", "fermentation,", "ale."]
    text = " ".join(rng.choice(words, size=chars // 5))
    return text[:chars]


def test_long_texts_are_cut_before_tokenisation_and_the_model_reads_the_same_tokens(ranker):
    from adapter_zoo.ranker.ranker import CHARS_PER_TOKEN, clip_text, encode_pairs

    query, candidate = _prose(20_000, 1), _prose(3_000, 2)
    normal = _prose(40 * CHARS_PER_TOKEN, 3)  # within the bound of max_length 64: untouched
    assert clip_text(normal, 64) is normal
    assert len(clip_text(query, 64)) <= 64 * CHARS_PER_TOKEN
    for max_length in (64, 63):  # both truncation parities of the pair budget
        clipped = encode_pairs(ranker.tokenizer, [query, normal], [candidate] * 2, max_length)
        whole = ranker.tokenizer(
            [query, normal], [candidate] * 2, truncation="longest_first",
            max_length=max_length, padding=True, return_tensors="pt",
        )  # fmt: skip
        assert clipped["input_ids"].tolist() == whole["input_ids"].tolist()


def test_a_megabyte_query_and_candidate_score_with_bounded_memory(ranker):
    """Before the cut, 1 MB each was killed by the OS (54 kB each added 855 MB)."""
    import threading

    import psutil

    from adapter_zoo.ranker.ranker import clip_text

    huge = _prose(1_000_000, 4)
    process, peak, done = psutil.Process(), [0], threading.Event()

    def watch():  # the resident size's peak while scoring (a sanity bound, not a timing)
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            done.wait(0.002)

    ranker.score([("warm up", "a short text")])
    before = process.memory_info().rss
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        [score] = ranker.score([(huge, huge)])
    finally:
        done.set()
        watcher.join()
    assert (peak[0] - before) / 2**20 < 300
    assert len(clip_text(huge, ranker.max_length)) <= ranker.max_length * 16
    beginning = huge[:50_000]  # the model reads the same tokens of both
    assert score == ranker.score([(beginning, beginning)])[0]
