"""Metrics agree with trec_eval (pytrec_eval) without ties; ties score at chance level."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval

from adapter_zoo.errors import ZooError
from adapter_zoo.metrics import (
    average_precision,
    evaluate_rankings,
    evaluate_run,
    ndcg_at_k,
    precision_at_1,
    recall_at_k,
    reciprocal_rank,
)

TREC = {"map": "map", "mrr": "recip_rank", "p@1": "P_1", "ndcg@10": "ndcg_cut_10"}


def random_run(seed: int, queries: int = 60, graded: bool = False):
    rng = np.random.default_rng(seed)
    scores, labels = [], []
    for _ in range(queries):
        n = int(rng.integers(2, 40))
        label = rng.integers(0, 3 if graded else 2, size=n)
        if label.sum() == 0:
            label[rng.integers(n)] = 1
        scores.append(rng.permutation(n * 7)[:n] / 7.0 + rng.random())  # distinct scores
        labels.append(label.tolist())
    return scores, labels


@pytest.mark.parametrize("seed,graded", [(0, False), (1, False), (2, True), (3, True)])
def test_agrees_with_trec_eval_without_ties(seed, graded):
    scores, labels = random_run(seed, graded=graded)
    qrels = {f"q{i}": {f"d{j}": int(g) for j, g in enumerate(ls)} for i, ls in enumerate(labels)}
    run = {f"q{i}": {f"d{j}": float(s) for j, s in enumerate(ss)} for i, ss in enumerate(scores)}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values()))
    per_query = evaluator.evaluate(run)
    ours = evaluate_rankings(scores, labels)
    for name, trec in TREC.items():
        expected = float(np.mean([per_query[q][trec] for q in per_query]))
        assert ours[name] == pytest.approx(expected, abs=1e-9), name
    assert ours["queries"] == 60


def test_constant_scorer_gets_chance_level_not_input_order():
    # relevant candidate first in input order: an input-order tie break would give 1.0
    labels = [[1, 0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0]]
    scores = [[0.0] * len(ls) for ls in labels]
    result = evaluate_rankings(scores, labels)
    assert result["p@1"] == pytest.approx(np.mean([1 / 5, 1 / 4, 2 / 4]), abs=1e-12)
    # two relevant of four: the first relevant is at rank 1, 2, 3 with probability 3/6, 2/6, 1/6
    two_of_four = 3 / 6 * 1 + 2 / 6 * 1 / 2 + 1 / 6 * 1 / 3
    assert result["mrr"] == pytest.approx(
        np.mean(
            [
                np.mean([1, 1 / 2, 1 / 3, 1 / 4, 1 / 5]),
                np.mean([1, 1 / 2, 1 / 3, 1 / 4]),
                two_of_four,
            ]
        ),
        abs=1e-12,
    )
    assert result["map"] < 0.6 and result["ndcg@10"] < 0.7


def brute_force(metric, scores, labels):
    """Mean of ``metric`` over every order of the tied candidates (small lists only)."""
    import itertools

    values = []
    for order in itertools.permutations(range(len(scores))):
        # break ties by the permutation: a strictly decreasing rank offset inside each tie
        rank = {j: k for k, j in enumerate(order)}
        broken = [s - 1e-6 * rank[j] for j, s in enumerate(scores)]
        values.append(metric(broken, labels))
    return float(np.mean(values))


@pytest.mark.parametrize(
    "scores,labels",
    [
        ([1.0, 1.0, 1.0, 1.0, 1.0], [0, 1, 0, 1, 0]),
        ([2.0, 1.0, 1.0, 1.0, 0.0, 0.0], [0, 1, 0, 1, 1, 0]),
        ([3.0, 3.0, 1.0, 1.0, 1.0, 0.5], [1, 0, 2, 0, 1, 1]),
    ],
)
@pytest.mark.parametrize(
    "metric",
    [
        average_precision,
        reciprocal_rank,
        precision_at_1,
        lambda s, ls: ndcg_at_k(s, ls, 3),
        lambda s, ls: reciprocal_rank(s, ls, k=3),
        lambda s, ls: recall_at_k(s, ls, 3),
    ],
)
def test_tie_expectation_equals_mean_over_all_tie_orders(scores, labels, metric):
    assert metric(scores, labels) == pytest.approx(brute_force(metric, scores, labels), abs=1e-12)


def test_no_positive_policy():
    scores = [[0.9, 0.1], [0.5, 0.4]]
    labels = [[1, 0], [0, 0]]
    dropped = evaluate_rankings(scores, labels, no_positive="drop")
    zero = evaluate_rankings(scores, labels, no_positive="zero")
    assert dropped["map"] == 1.0 and dropped["queries"] == 1
    assert zero["map"] == 0.5 and zero["queries"] == 2
    assert zero["queries_without_positive"] == dropped["queries_without_positive"] == 1
    with pytest.raises(ZooError, match="no_positive must be 'drop' or 'zero'"):
        evaluate_rankings(scores, labels, no_positive="skip")


def test_bad_input():
    with pytest.raises(ZooError, match="2 scores for 3 labels"):
        average_precision([1.0, 2.0], [1, 0, 0])
    with pytest.raises(ZooError, match="scores contain NaN"):
        precision_at_1([float("nan"), 1.0], [1, 0])


def test_training_dev_metrics_are_the_benchmark_metrics():
    """Training's dev MAP and P@1 (what entries keep and cards publish) are evaluate_rankings'
    numbers: a tie with the positive is the expectation over its orders, not a loss."""
    from adapter_zoo.training.selection import positive_first_metrics

    rng = np.random.default_rng(0)
    lists = [rng.integers(0, 3, size=n).astype(float) for n in (2, 5, 9, 20)]
    summary = evaluate_rankings(lists, [np.eye(1, len(s)).ravel() for s in lists])
    assert positive_first_metrics(lists) == {
        "dev_map": pytest.approx(summary["map"]),
        "dev_p@1": pytest.approx(summary["p@1"]),
    }
    # a constant scorer is at chance level: MAP = mean of 1/rank over the 4 places
    assert positive_first_metrics([np.zeros(4)]) == {
        "dev_map": pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4),
        "dev_p@1": pytest.approx(0.25),
    }


# a retrieval run: trec_eval's measures of it (pytrec_eval), MRR@10 as recip_rank of the
# run cut to its first 10 documents
RUN_TREC = {"ndcg@10": "ndcg_cut_10", "map": "map", "recall@100": "recall_100"}


def trec_means(run, qrels):
    """pytrec_eval's mean of each retrieval metric over the judged queries (a query the run
    lacks counts 0, as ``trec_eval -c``)."""
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(RUN_TREC.values())).evaluate(run)
    top10 = {q: dict(sorted(hits.items(), key=lambda h: -h[1])[:10]) for q, hits in run.items()}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    means = {
        name: sum(per_query.get(q, {}).get(trec, 0.0) for q in qrels) / len(qrels)
        for name, trec in RUN_TREC.items()
    }
    means["mrr@10"] = sum(rr.get(q, {}).get("recip_rank", 0.0) for q in qrels) / len(qrels)
    return means


def test_retrieval_run_by_hand_and_by_trec_eval():
    """A hand-made run whose every number is known: graded gains, a relevant document the
    run missed, a judged query without a relevant document, one without hits, a first
    relevant document at rank 11 (MRR@10 0) and one at rank 103 (outside Recall@100)."""
    qrels = {
        "graded": {"d1": 2, "d2": 1, "d3": 0},
        "missed": {"d4": 1, "d9": 1},
        "none-relevant": {"d5": 0},
        "no-hits": {"d6": 1},
        "rank-11": {"r10": 1},
        "deep": {"r49": 1, "r102": 1},
    }
    run = {
        "graded": {"d2": 3.0, "d3": 2.0, "d1": 1.0, "d7": 0.5},
        "missed": {"d8": 2.0, "d4": 1.0},
        "none-relevant": {"d5": 1.0},
        "rank-11": {f"r{i}": 100.0 - i for i in range(12)},
        "deep": {f"r{i}": 200.0 - i for i in range(105)},
        "unjudged": {"d1": 1.0},
    }
    ours = evaluate_run(run, qrels)
    assert (ours["queries"], ours["queries_without_positive"]) == (6, 1)
    ideal = 2 + 1 / np.log2(3)
    by_hand = {
        # graded: d2 (gain 1) first, d1 (gain 2) third; missed: d4 second of two relevant;
        # rank-11 and deep (ranks 50 and 103) have nothing in the first 10
        "ndcg@10": (2 / ideal + (1 / np.log2(3)) / (1 + 1 / np.log2(3))) / 6,
        "map": ((1 + 2 / 3) / 2 + (1 / 2) / 2 + 1 / 11 + (1 / 50 + 2 / 103) / 2) / 6,
        "mrr@10": (1 + 1 / 2) / 6,
        "recall@100": (1 + 1 / 2 + 1 + 1 / 2) / 6,
    }
    expected = trec_means(run, qrels)
    for name, value in by_hand.items():
        assert ours[name] == pytest.approx(value, abs=1e-12), name
        assert ours[name] == pytest.approx(expected[name], abs=1e-12), name
    dropped = evaluate_run(run, qrels, no_positive="drop")
    assert dropped["queries"] == 5
    assert dropped["map"] == pytest.approx(ours["map"] * 6 / 5, abs=1e-12)
    with pytest.raises(ZooError, match="no_positive must be 'drop' or 'zero'"):
        evaluate_run(run, qrels, no_positive="skip")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_retrieval_runs_agree_with_trec_eval(seed):
    """Random runs of up to 150 documents over a corpus of 300, graded judgements, relevant
    documents the run misses, distinct scores."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(40):
        judged = rng.choice(300, size=int(rng.integers(1, 12)), replace=False)
        qrels[f"q{q}"] = {f"d{d}": int(rng.integers(0, 4)) for d in judged}
        hits = rng.choice(300, size=int(rng.integers(1, 150)), replace=False)
        scores = rng.permutation(len(hits) * 5)[: len(hits)] + rng.random()
        run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(hits, scores)}
    ours, expected = evaluate_run(run, qrels), trec_means(run, qrels)
    for name, value in expected.items():
        assert ours[name] == pytest.approx(value, abs=1e-9), name
