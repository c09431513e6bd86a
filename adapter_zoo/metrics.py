"""Ranking metrics MAP, MRR, P@1 and nDCG@10 with explicit conventions, and over a retrieved
run (:func:`evaluate_run`: nDCG@10, MAP, MRR@10, Recall@100).

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
    """The groups of equal scores, best group first: ``(start, size, relevant, gain)`` each,
    ``start`` the 0-based rank of the group's first position, ``relevant`` how many of its
    labels are > 0, ``gain`` the sum of its labels.

    Found with numpy in one pass (a retrieved run holds a thousand documents a query); the
    metrics below then visit only the groups they need.
    """
    scores = np.asarray(scores, dtype=np.float64)
    gains = np.asarray(labels, dtype=np.float64)
    if scores.shape != gains.shape:
        raise ZooError(f"{len(scores)} scores for {len(gains)} labels")
    if np.isnan(scores).any():
        raise ZooError("scores contain NaN")
    if not len(scores):
        return []
    order = np.argsort(-scores, kind="stable")
    sorted_scores, sorted_gains = scores[order], gains[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = sorted_scores[1:] != sorted_scores[:-1]
    starts = np.flatnonzero(first)
    sizes = np.diff(np.append(starts, len(order)))
    relevant = np.add.reduceat((sorted_gains > 0).astype(np.int64), starts)
    gain = np.add.reduceat(sorted_gains, starts)
    return list(zip(starts.tolist(), sizes.tolist(), relevant.tolist(), gain.tolist()))


def average_precision(scores, labels, *, relevant: int | None = None) -> float:
    """Expected AP over tie orders; 0.0 when nothing is relevant.

    Within a tie group of n items with r relevant, starting after position s with R relevant
    above it, position s + j holds a relevant item with probability r/n, and given that, each
    of the j - 1 earlier group positions is relevant with probability (r-1)/(n-1).

    ``relevant``: how many relevant documents the query has in all, when ``labels`` are a
    retrieved run's (trec_eval's AP: a relevant document the run missed adds 0 but counts in
    the denominator); default the relevant labels'.
    """
    total = sum(1 for label in labels if label > 0) if relevant is None else relevant
    if total == 0:
        return 0.0
    value, above = 0.0, 0
    for start, n, r, _ in _tie_groups(scores, labels):
        if r:
            for j in range(1, n + 1):
                earlier = (j - 1) * (r - 1) / (n - 1) if n > 1 else 0.0
                value += (r / n) * (above + 1 + earlier) / (start + j)
        above += r
    return value / total


def reciprocal_rank(scores, labels, *, k: int | None = None) -> float:
    """Expected 1/rank of the first relevant candidate over tie orders; 0.0 if none (or, with
    ``k``, none in the first ``k`` ranks: MRR@k).

    In the first group with r relevant among n, P(first relevant at group position j) =
    C(n - j, r - 1) / C(n, r).
    """
    for start, n, r, _ in _tie_groups(scores, labels):
        if k is not None and start >= k:
            break
        if r:
            last = n - r + 1 if k is None else min(n - r + 1, k - start)
            return sum(comb(n - j, r - 1) / comb(n, r) / (start + j) for j in range(1, last + 1))
    return 0.0


def precision_at_1(scores, labels) -> float:
    """Expected fraction of relevant candidates at rank 1: the relevant share of the top tie group."""
    for _, n, r, _ in _tie_groups(scores, labels):
        return r / n
    return 0.0


def ndcg_at_k(scores, labels, k: int = 10, *, ideal: Sequence[float] | None = None) -> float:
    """Expected nDCG@k over tie orders (each tied position gets the group's mean gain).

    ``ideal``: the gains of every relevant document of the query, when ``labels`` are a
    retrieved run's (the ideal ranking is of all of them, as trec_eval's); default the labels.
    """
    ideal = sorted((g for g in (labels if ideal is None else ideal) if g > 0), reverse=True)[:k]
    idcg = sum(g / log2(i + 2) for i, g in enumerate(ideal))
    if idcg == 0:
        return 0.0
    dcg = 0.0
    for start, n, _, gain in _tie_groups(scores, labels):
        if start >= k:
            break
        mean_gain = gain / n
        dcg += sum(mean_gain / log2(pos + 2) for pos in range(start, min(start + n, k)))
    return dcg / idcg


def recall_at_k(scores, labels, k: int = 100, *, relevant: int | None = None) -> float:
    """Expected share of the relevant documents in the first ``k`` ranks over tie orders (a
    group cut by rank ``k`` holds its relevant share of the places above the cut); 0.0 when
    nothing is relevant. ``relevant``: as :func:`average_precision`'s.

    Example:
        >>> recall_at_k([0.9, 0.8, 0.1], [1, 0, 1], k=2, relevant=4)
        0.25
    """
    total = sum(1 for label in labels if label > 0) if relevant is None else relevant
    if total == 0:
        return 0.0
    found = 0.0
    for start, n, r, _ in _tie_groups(scores, labels):
        if start >= k:
            break
        found += r * min(n, k - start) / n
    return found / total


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


RETRIEVAL_METRICS = ("ndcg@10", "map", "mrr@10", "recall@100")


def evaluate_run(run, qrels, *, no_positive: str = "zero") -> dict:
    """Mean of the retrieval metrics of a run over the judged queries, as trec_eval takes them.

    Each query's retrieved documents are scored with the functions above, given the query's
    judgements for what the run missed: AP and Recall@100 divide by all its relevant
    documents, nDCG@10's ideal ranking is of all its judged gains, MRR@10 counts a first
    relevant document in the first 10 ranks. A judged query the run has no hit for scores 0
    (trec_eval's ``-c``); a run's query without judgements is not scored.

    Args:
        run: ``{query id: {document id: score}}``, the retrieved documents of each query.
        qrels: ``{query id: {document id: relevance}}``, the judgements (> 0 relevant; the
            relevance is nDCG's gain).
        no_positive: ``"zero"`` (a judged query without a relevant document counts 0, as
            trec_eval and BEIR average) or ``"drop"``.

    Returns:
        ``{"ndcg@10", "map", "mrr@10", "recall@100": float, "queries": int,
        "queries_without_positive": int}``.

    Example:
        >>> run = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}
        >>> qrels = {"q1": {"d2": 1, "d9": 1}, "q2": {"d3": 0}}
        >>> result = evaluate_run(run, qrels)
        >>> round(result["map"], 4), result["queries"], result["queries_without_positive"]
        (0.125, 2, 1)
    """
    if no_positive not in ("drop", "zero"):
        raise ZooError(f"no_positive must be 'drop' or 'zero', not {no_positive!r}")
    sums = dict.fromkeys(RETRIEVAL_METRICS, 0.0)
    used = skipped = 0
    for values in query_metrics(run, qrels).values():
        if values is None:
            skipped += 1
            used += no_positive == "zero"
            continue
        for name, value in values.items():
            sums[name] += value
        used += 1
    means = {name: (value / used if used else 0.0) for name, value in sums.items()}
    return {**means, "queries": used, "queries_without_positive": skipped}


def query_metrics(run, qrels) -> dict[str, dict[str, float] | None]:
    """Each judged query's retrieval metrics (:func:`evaluate_run`'s, before the mean);
    None for a query without a relevant document.

    Example:
        >>> query_metrics({"q1": {"d1": 2.0, "d2": 1.0}}, {"q1": {"d2": 1}, "q2": {"d3": 0}})
        {'q1': {'ndcg@10': 0.6309297535714575, 'map': 0.5, 'mrr@10': 0.5, 'recall@100': 1.0}, 'q2': None}
    """
    values: dict[str, dict[str, float] | None] = {}
    for query, judged in qrels.items():
        gains = [g for g in judged.values() if g > 0]
        if not gains:
            values[query] = None
            continue
        hits = run.get(query) or {}
        scores = list(hits.values())
        labels = [judged.get(document, 0) for document in hits]
        values[query] = {
            "ndcg@10": ndcg_at_k(scores, labels, 10, ideal=gains),
            "map": average_precision(scores, labels, relevant=len(gains)),
            "mrr@10": reciprocal_rank(scores, labels, k=10),
            "recall@100": recall_at_k(scores, labels, 100, relevant=len(gains)),
        }
    return values
