"""Integration: MiniLM + a beer adapter trained on the real parsed beer forum.

One short training run (``TRAIN``: batch 16, max length 64, 80 steps; under a minute on 2 idle
CPU cores) must make the adapter rank each held-out (test split) question's own body above
9 random other test bodies clearly better than the untrained model (MRR asserted).
Measured: untrained MRR 0.28, trained 0.80 at max length 64 (0.30 / 0.84 at 96), so the
asserted gain of 0.3 leaves a wide margin.
"""

from __future__ import annotations

import json

import numpy as np

import adapter_zoo
from adapter_zoo.ranker import Ranker
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.data import load_pairs

HOST = "beer.stackexchange.com"
CANDIDATES = 10
MAX_LENGTH = 64
# lr 1e-3 instead of the paper's 1e-4: 80 steps instead of several epochs.
TRAIN = {"batch_size": 16, "max_length": MAX_LENGTH, "max_steps": 80, "lr": 1e-3, "dev_queries": 20}
MARGIN = 0.3


def held_out_lists(parsed):
    """Each test title with its own body first, then 9 other test bodies (fixed seed)."""
    (table,) = load_pairs(parsed, HOST, ("title_body",), "test")
    rng = np.random.default_rng(0)
    lists = []
    for i in range(len(table)):
        others = rng.choice(len(table) - 1, size=CANDIDATES - 1, replace=False)
        others = others + (others >= i)
        lists.append(
            (table.queries[i], [table.positives[i]] + [table.positives[j] for j in others])
        )
    return lists


def mrr(ranker, lists) -> float:
    pairs = [(query, candidate) for query, candidates in lists for candidate in candidates]
    scores = ranker.score(pairs).reshape(len(lists), CANDIDATES)
    ranks = 1 + (scores[:, 1:] >= scores[:, :1]).sum(axis=1)  # ties count against the positive
    return float(np.mean(1.0 / ranks))


def test_beer_adapter_ranks_held_out_bodies_better_than_untrained(parsed_beer):
    lists = held_out_lists(parsed_beer)
    stats = json.loads((parsed_beer / HOST / "stats.json").read_text())
    assert len(lists) == stats["splits"]["title_body"]["test"] > 50

    untrained = mrr(Ranker.from_base("minilm-l6", max_length=MAX_LENGTH), lists)
    config = TrainingConfig(
        mode="adapter",
        data=str(parsed_beer),
        forums=("beer",),
        name="beer",
        base_model="minilm-l6",
        **TRAIN,
    )
    entry = train(config)
    card = json.loads((entry / "card.json").read_text())
    assert card["pairs"][HOST]["train"] == {"title_body": stats["splits"]["title_body"]["train"]}
    assert card["training"]["steps"] == 80

    ranker = adapter_zoo.load("beer")
    trained = mrr(ranker, lists)
    print(f"held-out beer MRR@{CANDIDATES}: untrained {untrained:.3f}, adapter {trained:.3f}")
    assert trained >= untrained + MARGIN, (untrained, trained)

    query, candidates = lists[0]
    ranked = ranker.rank(query, candidates[::-1])
    assert sorted(ranked, key=lambda item: -item[1]) == ranked and len(ranked) == CANDIDATES
