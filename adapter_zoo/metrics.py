"""Ranking metrics MAP, MRR, P@1 and nDCG@10 with explicit conventions.

Conventions (why: peers differ here, so their numbers don't compare):

* **Ties** are scored as the *expectation over all orders of the tied candidates*, computed in
  closed form (McSherry & Najork, ECIR 2008). A constant scorer therefore gets exactly the
  chance level (P@1 = positives / candidates), never the score of the input order — the
  failure of mteb#5092, where a constant scorer reached MRR 1.0 because ties kept input order.
  Without ties the values are the standard ones (checked against pytrec_eval in the tests).
  Why not the alternatives: a pessimistic break (relevant items last in their tie) puts a
  constant scorer *below* chance and punishes coarse but honest scorers such as BM25 with
  equal scores; a seeded shuffle reaches chance only on average and adds noise to every run.
  The expectation is what an infinitely repeated shuffle would report, exactly and
  deterministically.
* **Relevance**: a label > 0 is relevant for MAP, MRR and P@1; nDCG uses the label as the gain
  (trec_eval's linear gain, log2(rank + 1) discount, ideal ranking from all labels).
* **Queries without a relevant candidate**: ``no_positive="drop"`` leaves them out of the mean
  (WikiQA, TREC-QA, AskUbuntu, MultiCQA's pools), ``"zero"`` counts 0 for every metric (the
  SemEval task 3 scorer divides by all queries). The number of queries used is returned.

Example:
    >>> round(average_precision([0.9, 0.5, 0.1], [0, 1, 1]), 4)
    0.5833
    >>> precision_at_1([1.0, 1.0, 1.0, 1.0], [1, 0, 0, 0])
    0.25
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb, log2

import numpy as np

from adapter_zoo.errors import ZooError

METRICS = ("map", "mrr", "p@1", "ndcg@10")


def _tie_groups(scores: Sequence[float], labels: Sequence[float]):
    """Yield ``(start, size, gains)`` per group of equal scores, best group first.

    ``start`` is the 0-based rank of the group's first position.
    """
    scores = np.asarray(scores, dtype=np.float64)
    gains = np.asarray(labels, dtype=np.float64)
    if scores.shape != gains.shape:
        raise ZooError(f"{len(scores)} scores for {len(gains)} labels")
    if np.isnan(scores).any():
        raise ZooError("scores contain NaN")
    order = np.argsort(-scores, kind="stable")
    sorted_scores, sorted_gains = scores[order], gains[order]
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and sorted_scores[end] == sorted_scores[start]:
            end += 1
        yield start, end - start, sorted_gains[start:end]
        start = end


def average_precision(scores, labels) -> float:
    """Expected AP over tie orders; 0.0 when nothing is relevant.

    Within a tie group of n items with r relevant, starting after position s with R relevant
    above it, position s + j holds a relevant item with probability r/n, and given that, each
    of the j - 1 earlier group positions is relevant with probability (r-1)/(n-1).
    """
    total = sum(1 for label in labels if label > 0)
    if total == 0:
        return 0.0
    value, above = 0.0, 0
    for start, n, gains in _tie_groups(scores, labels):
        r = int((gains > 0).sum())
        if r:
            for j in range(1, n + 1):
                earlier = (j - 1) * (r - 1) / (n - 1) if n > 1 else 0.0
                value += (r / n) * (above + 1 + earlier) / (start + j)
        above += r
    return value / total


def reciprocal_rank(scores, labels) -> float:
    """Expected 1/rank of the first relevant candidate over tie orders; 0.0 if none.

    In the first group with r relevant among n, P(first relevant at group position j) =
    C(n - j, r - 1) / C(n, r).
    """
    for start, n, gains in _tie_groups(scores, labels):
        r = int((gains > 0).sum())
        if r:
            return sum(comb(n - j, r - 1) / comb(n, r) / (start + j) for j in range(1, n - r + 2))
    return 0.0


def precision_at_1(scores, labels) -> float:
    """Expected fraction of relevant candidates at rank 1: the relevant share of the top tie group."""
    for _, n, gains in _tie_groups(scores, labels):
        return float((gains > 0).sum()) / n
    return 0.0


def ndcg_at_k(scores, labels, k: int = 10) -> float:
    """Expected nDCG@k over tie orders (each tied position gets the group's mean gain)."""
    ideal = sorted((g for g in labels if g > 0), reverse=True)[:k]
    idcg = sum(g / log2(i + 2) for i, g in enumerate(ideal))
    if idcg == 0:
        return 0.0
    dcg = 0.0
    for start, n, gains in _tie_groups(scores, labels):
        mean_gain = float(gains.sum()) / n
        dcg += sum(mean_gain / log2(pos + 2) for pos in range(start, min(start + n, k)))
    return dcg / idcg


_FUNCTIONS = {
    "map": average_precision,
    "mrr": reciprocal_rank,
    "p@1": precision_at_1,
    "ndcg@10": ndcg_at_k,
}


def evaluate_rankings(scores_per_query, labels_per_query, *, no_positive: str = "drop") -> dict:
    """Mean of every metric over queries, following the benchmark's ``no_positive`` policy.

    Args:
        scores_per_query: one sequence of candidate scores per query.
        labels_per_query: the matching label sequences (> 0 relevant; graded for nDCG).
        no_positive: ``"drop"`` or ``"zero"``; see the module docstring.

    Returns:
        ``{"map", "mrr", "p@1", "ndcg@10": float, "queries": int, "queries_without_positive": int}``.
    """
    if no_positive not in ("drop", "zero"):
        raise ZooError(f"no_positive must be 'drop' or 'zero', not {no_positive!r}")
    sums = dict.fromkeys(METRICS, 0.0)
    used = skipped = 0
    for scores, labels in zip(scores_per_query, labels_per_query, strict=True):
        if not any(label > 0 for label in labels):
            skipped += 1
            if no_positive == "drop":
                continue
        else:
            for name, function in _FUNCTIONS.items():
                sums[name] += function(scores, labels)
        used += 1
    means = {name: (value / used if used else 0.0) for name, value in sums.items()}
    return {**means, "queries": used, "queries_without_positive": skipped}
