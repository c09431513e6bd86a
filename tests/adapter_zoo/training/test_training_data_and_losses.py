"""Training examples: round-robin batches, negatives (random, BM25, mined), pair kinds, losses."""

from __future__ import annotations

import json

import numpy as np
import pytest
from training_helpers import FAST, config, loss_on

from adapter_zoo import ZooError
from adapter_zoo.ranker.ranker import encode_pairs
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.data import (
    PairTable,
    embedding_neighbours,
    epoch_batches,
    round_robin,
    sample_negatives,
)


def test_round_robin_order():
    assert round_robin([["a1", "a2", "a3"], ["b1"], ["c1", "c2"]]) == [
        "a1",
        "b1",
        "c1",
        "a2",
        "c2",
        "a3",
    ]
    tables = {
        "a": [
            PairTable("a", "title_body", [f"a{i}" for i in range(10)], [f"A{i}" for i in range(10)])
        ],
        "b": [
            PairTable("b", "title_body", [f"b{i}" for i in range(4)], [f"B{i}" for i in range(4)])
        ],
        "c": [
            PairTable("c", "title_body", [f"c{i}" for i in range(6)], [f"C{i}" for i in range(6)])
        ],
    }
    batches = epoch_batches(tables, batch_size=4, k=1, loss="bce", seed=0, epoch=0)
    # 20, 8 and 12 examples (positive + 1 negative each) -> 5, 2 and 3 batches of one forum each
    assert [{q[0] for q, _, _ in batch} for batch in batches] == [
        {"a"},
        {"b"},
        {"c"},
        {"a"},
        {"b"},
        {"c"},
        {"a"},
        {"c"},
        {"a"},
        {"a"},
    ]
    assert sum(len(b) for b in batches) == 40
    again = epoch_batches(tables, batch_size=4, k=1, loss="bce", seed=0, epoch=0)
    next_epoch = epoch_batches(tables, batch_size=4, k=1, loss="bce", seed=0, epoch=1)
    assert again == batches and next_epoch != batches


def test_negatives_never_the_positive_and_resampled_each_epoch():
    table = PairTable("a", "title_body", [str(i) for i in range(5)], [str(i) for i in range(5)])
    first = sample_negatives(table, 3, np.random.default_rng([0, 0]))
    assert first.shape == (5, 3)
    assert all(i not in row for i, row in enumerate(first)) and first.max() < 5
    assert not np.array_equal(first, sample_negatives(table, 3, np.random.default_rng([0, 1])))


def test_losses_are_bce_and_hinge_on_the_head_logit(parsed_fixture, tiny_bert_path):
    import torch
    import torch.nn.functional as F

    from adapter_zoo.training.models import setup_model

    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer")
    torch.manual_seed(0)
    model, tokenizer, _ = setup_model(cfg)
    model.eval()  # no dropout: the same logits twice
    queries, positives, negatives = ["stout?", "hops?"], ["dark beer", "flowers"], ["a", "b c"]
    batch = tokenizer(queries * 2, positives + negatives, padding=True, return_tensors="pt")
    logits = model(**batch).logits[:, 0]
    labels = torch.tensor([1.0, 1.0, 0.0, 0.0])
    pointwise = list(zip(queries * 2, positives + negatives, labels.tolist()))
    expected_bce = F.binary_cross_entropy_with_logits(logits, labels)
    assert torch.allclose(loss_on(cfg, model, tokenizer, pointwise), expected_bce)
    pairwise_cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", loss="pairwise")
    hinge = torch.relu(1.0 - logits[:2] + logits[2:]).mean()
    got = loss_on(pairwise_cfg, model, tokenizer, list(zip(queries, positives, negatives)))
    assert torch.allclose(got, hinge + expected_bce)


def test_bm25_neighbours_are_the_most_similar_other_queries():
    from adapter_zoo.training.data import bm25_neighbours

    queries = [
        "stout porter roasted malt",
        "porter stout history",
        "hop varieties for ipa",
        "ipa hop bitterness",
        "cellar temperature",
    ]
    neighbours = bm25_neighbours(queries, pool=2)
    assert neighbours.shape == (5, 2)
    assert all(i not in row for i, row in enumerate(neighbours))
    assert [row[0] for row in neighbours[:4]] == [1, 0, 3, 2]
    assert bm25_neighbours(queries, pool=20).shape == (5, 4)  # at most the other queries


def test_hard_negatives_come_from_the_neighbours():
    from adapter_zoo.training.data import with_neighbours

    topics = ["stout", "hops", "cellar", "yeast"]
    queries = [f"{topics[i % 4]} brewing question {i}" for i in range(12)]
    (table,) = with_neighbours([PairTable("a", "title_body", queries, [str(i) for i in range(12)])])
    negatives = sample_negatives(table, 3, np.random.default_rng([0, 0]))
    for i, row in enumerate(negatives):
        assert len(set(row)) == 3 and set(row) <= set(table.neighbours[i]) and i not in row
    # the most similar query shares the topic word: the pool is ordered by BM25
    assert all(j % 4 == i % 4 for i, j in enumerate(table.neighbours[:, 0]))


def _embed_by_topic(texts):
    """Toy embeddings: a text's topic word as a one-hot row (what a base would rank near)."""
    topics = ["stout", "hops", "cellar", "yeast"]
    rows = np.array([[float(t in text) for t in topics] + [0.1] for text in texts], np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_mined_negatives_are_the_nearest_positives_but_never_a_near_copy_of_the_answer():
    from adapter_zoo.training.data import FALSE_NEGATIVE_MARGIN

    queries = ["stout q0", "stout q1", "hops q2", "hops q3", "cellar q4", "yeast q5"]
    positives = ["stout a0", "stout a1", "hops a2", "stout a0", "cellar a4", "yeast a5"]
    neighbours = embedding_neighbours(queries, positives, _embed_by_topic, pool=2)
    assert neighbours.shape == (6, 2)
    # q0: positive 1 is as close as its own answer (another stout answer: a false negative)
    # and positive 3 is its own answer's text; the rest rank level, in their order
    assert list(neighbours[0]) == [2, 4]
    # q3's own answer is about stout: hops a2 ranks above the bar of 95% of that similarity
    # and is left out as a likely answer too
    vectors = _embed_by_topic(queries + positives)
    own = vectors[3] @ vectors[6 + 3]
    assert vectors[3] @ vectors[6 + 2] >= FALSE_NEGATIVE_MARGIN * own and 2 not in neighbours[3]
    assert all(i not in row for i, row in enumerate(neighbours))
    # a table of one pair has nothing to mine
    assert embedding_neighbours(["q"], ["a"], _embed_by_topic).shape == (1, 0)


def test_the_base_miner_is_the_frozen_base_and_fills_the_tables(
    tiny_sentence_bert_path, monkeypatch
):
    from adapter_zoo.biencoder.encoder import BiEncoder
    from adapter_zoo.training.bi import negative_miner
    from adapter_zoo.training.data import with_neighbours

    def config(**options):
        return TrainingConfig(mode="adapter", data="x", forums=("beer",), name="m",
                              encoder="bi", base_model=str(tiny_sentence_bert_path),
                              **options)  # fmt: skip

    assert negative_miner(config(hard_negatives=True)) is None  # BM25's
    embed = negative_miner(config(hard_negatives=True, negative_miner="base"))
    texts = ["a stout", "a lager", "hop bitterness", "cellar temperature"]
    vectors = embed(texts)
    assert vectors.shape[0] == 4 and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    table = PairTable("a", "title_body", texts, texts[::-1])
    (table,) = with_neighbours([table], embed)
    assert (table.neighbours == embedding_neighbours(texts, texts[::-1], embed)).all()
    # a text comes back (another pair kind of the same forum): its row, not a second pass
    calls = []
    encode = BiEncoder.encode
    monkeypatch.setattr(
        BiEncoder, "encode", lambda self, t, **kw: calls.append(t) or encode(self, t, **kw)
    )
    again = embed(["a stout", "new text"])
    assert calls == [["new text"]] and np.array_equal(again[0], vectors[0])
    with pytest.raises(ZooError, match="unknown negative miner 'dense'; choose one of bm25, base"):
        config(hard_negatives=True, negative_miner="dense")
    with pytest.raises(
        ZooError,
        match="negative miner 'base' mines a bi-encoder's hard negatives: it needs encoder "
        "'bi' and hard_negatives",
    ):
        config(negative_miner="base")


def test_a_run_trains_on_the_negatives_the_base_mined(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    from adapter_zoo.training import bi

    built, pair_dataset = [], bi.pair_dataset
    monkeypatch.setattr(bi, "pair_dataset", lambda tables, **kw: built.append(tables)
                        or pair_dataset(tables, **kw))  # fmt: skip
    run = TrainingConfig(mode="adapter", data=str(parsed_shipped), forums=("beer",),
                         name="beer-mined", encoder="bi", base_model=str(tiny_sentence_bert_path),
                         hard_negatives=True, negative_miner="base", max_steps=2, eval_steps=2,
                         **FAST)  # fmt: skip
    card = json.loads((train(run) / "card.json").read_text())
    assert card["training"]["negative_miner"] == "base" and card["training"]["steps"] == 2
    embed = bi.negative_miner(run)
    for table in built[0]:
        assert (
            table.neighbours == embedding_neighbours(table.queries, table.positives, embed)
        ).all()


def test_listwise_batches_count_pairs_and_the_loss_is_softmax_cross_entropy(
    parsed_fixture, tiny_bert_path
):
    import torch
    import torch.nn.functional as F

    from adapter_zoo.training.models import setup_model

    tables = {
        "a": [
            PairTable("a", "title_body", [f"q{i}" for i in range(10)], [str(i) for i in range(10)])
        ]
    }
    batches = epoch_batches(tables, batch_size=8, k=3, loss="listwise", seed=0, epoch=0)
    assert [len(b) for b in batches] == [2, 2, 2, 2, 2]  # 8 pairs = 2 lists of 1 + 3
    assert all(len(negatives) == 3 and positive not in negatives for _, positive, negatives in
               batches[0])  # fmt: skip

    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", loss="listwise", negatives=2)
    torch.manual_seed(0)
    model, tokenizer, _ = setup_model(cfg)
    model.eval()
    batch = [("stout?", "dark beer", ("a", "b c")), ("hops?", "flowers", ("d", "e"))]
    pairs = [(q, c) for q, p, negs in batch for c in (p, *negs)]
    encoded = encode_pairs(tokenizer, *zip(*pairs), 32)
    logits = model(**encoded).logits[:, 0].view(2, 3)
    expected = F.cross_entropy(logits, torch.zeros(2, dtype=torch.long))
    assert torch.allclose(loss_on(cfg, model, tokenizer, batch), expected)


def test_question_answer_pairs_pose_title_and_body(parsed_beer):
    import datasets

    from adapter_zoo.training.data import load_pairs

    host = "beer.stackexchange.com"
    (qa,) = load_pairs(parsed_beer, host, ("question_answer",), "train")
    (ta,) = load_pairs(parsed_beer, host, ("title_answer",), "train")
    assert len(qa) == len(ta) > 400 and qa.positives == ta.positives
    questions = datasets.load_from_disk(str(parsed_beer / host / "questions")).to_list()
    by_title = {q["title"]: q for q in questions}
    for title, query in list(zip(ta.queries, qa.queries))[:50]:
        question = by_title[title]
        assert query == f"{question['title']} {question['body']}".strip()


@pytest.mark.parametrize(("mode", "layers"), [("adapter", None), ("full", None), ("adapter", 1)])
def test_bounded_activation_memory_keeps_loss_and_gradients(
    parsed_fixture, tiny_bert_path, mode, layers
):
    """Training recomputes activations in backward (``bound_activation_memory``), in every
    layer or the lowest ``layers``: dropout replays the same masks, so a step's loss and
    every gradient are those of the plain step."""
    import torch

    from adapter_zoo.training.models import (
        bound_activation_memory,
        setup_model,
        transformer_layers,
    )

    batch = [("stout?", "dark beer", 1.0), ("hops?", "a bitter flower", 0.0)] * 4
    cfg = config(parsed_fixture, tiny_bert_path, mode, "beer")
    steps = []
    for bounded in (False, True):
        torch.manual_seed(0)
        model, tokenizer, _ = setup_model(cfg)
        assert model.base_model.config.attention_probs_dropout_prob > 0  # masks to replay
        if bounded:
            bound_activation_memory(model, layers)
            flags = [layer.gradient_checkpointing for layer in transformer_layers(model)]
            rebuilt = len(flags) if layers is None else layers
            assert flags == [True] * rebuilt + [False] * (len(flags) - rebuilt)
        model.train()
        torch.manual_seed(1)
        loss = loss_on(cfg, model, tokenizer, batch)
        loss.backward()
        grads = {n: p.grad for n, p in model.named_parameters() if p.requires_grad}
        steps.append((loss.item(), grads, model.base_model.is_gradient_checkpointing))
    (plain, plain_grads, off), (bounded, bounded_grads, on) = steps
    assert not off and on
    assert bounded == pytest.approx(plain, abs=1e-6)
    assert plain_grads.keys() == bounded_grads.keys() and plain_grads
    assert any(g is not None for g in plain_grads.values())
    for name, grad in plain_grads.items():
        other = bounded_grads[name]
        # weights off the path to the loss (BERT's unused pooler) get no gradient in either
        assert (grad is None) == (other is None), name
        assert grad is None or torch.allclose(grad, other, atol=1e-6), name
