"""Dev selection: the dev ranking lists a run is scored on, the scores (dev MAP and P@1, the
benchmarks' way), and the sentence-transformers evaluator both trainers select by.

A forum's dev lists are made like the held-out benchmarks (:func:`forum_dev_lists`): each dev
question with an accepted answer (title + body) is ranked against its answer and the accepted
answers of its most BM25-similar questions, exactly as ``build-benchmark`` builds the
LAS-style test sets (``stackexchange.lists``). Selecting on these lists picks the model that
is best on the kind of list it will be judged on; random negatives are too easy to tell a
good sentence encoder from a better one. Cross-encoders select on lists with sampled
negatives (:func:`sampled_dev_lists`, the papers' way) unless the folder holds a benchmark's.

A folder made from a benchmark (``benchmarks.to_parse_folder``) has no forum questions; it
holds the benchmark's own dev lists instead (``dev_lists/``: query, candidates with the
positive first), which are read as they are.

The trainers call :class:`DevListsEvaluator` at every evaluation and keep the best checkpoint
by its ``dev_map`` (``metric_for_best_model``).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np

from adapter_zoo.errors import ZooError
from adapter_zoo.metrics import evaluate_rankings
from stackexchange.lists import answer_selection_lists

log = logging.getLogger(__name__)

DEV_CANDIDATES = 20
DEV_LISTS = "dev_lists"  # a benchmark's dev split, written by benchmarks.to_parse_folder
# Dev texts are scored in small batches (each sorted by length by the scorer): a large batch of
# long answers raises the dev pass's peak memory (docs/performance.md, the measurements behind
# the defaults).
DEV_BATCH_SIZE = 16
_QUESTION_COLUMNS = {"id", "title", "body", "accepted_answer_id", "accepted_answer", "split"}


def forum_dev_lists(
    data: str | Path,
    hosts: list[str],
    *,
    candidates: int = DEV_CANDIDATES,
    seed: int = 0,
    queries: int | None = None,
) -> list[tuple[str, list[str]]]:
    """(query, [positive, negative, ...]) for every answered dev question of ``hosts``.

    ``queries`` caps the lists of each forum (a seeded sample, kept in the forum's order):
    a dev pass scores every list at every evaluation, so without a cap a large forum's
    selection would cost more than its training.

    Example:
        >>> lists = forum_dev_lists("parsed", ["beer.stackexchange.com"])  # doctest: +SKIP
        >>> len(lists[0][1])  # doctest: +SKIP
        20
    """
    # datasets on first use: the CLI starts without it
    import datasets

    lists = []
    for host in hosts:
        given = Path(data) / host / DEV_LISTS
        if given.is_dir():
            rows = datasets.load_from_disk(str(given))
            lists += [(r["query"], r["candidates"]) for r in _sample(rows, queries, seed)]
            continue
        folder = Path(data) / host / "questions"
        try:
            questions = datasets.load_from_disk(str(folder))
        except FileNotFoundError:
            raise ZooError(f"{folder}: missing (run adapter-zoo parse)") from None
        missing = sorted(_QUESTION_COLUMNS - set(questions.column_names))
        if missing:
            raise ZooError(f"{folder}: missing columns {missing}")
        rng = np.random.default_rng(seed)
        rows = answer_selection_lists(questions.to_list(), candidates, rng)["dev"]
        for row in _sample(rows, queries, seed):
            positive = row["labels"].index(1)
            others = [c for i, c in enumerate(row["candidates"]) if i != positive]
            lists.append((row["query"], [row["candidates"][positive], *others]))
    return lists


def _sample(rows, queries: int | None, seed: int) -> list:
    """``rows`` (a list or a dataset), or a seeded sample of ``queries`` of them in their
    order."""
    if queries is None or len(rows) <= queries:
        return list(rows)
    kept = np.sort(np.random.default_rng([seed, 20_000]).permutation(len(rows))[:queries])
    return [rows[int(i)] for i in kept]


def sampled_dev_lists(
    forum_tables: dict, *, queries: int, candidates: int, seed: int
) -> list[tuple[str, list[str]]]:
    """Fixed dev ranking lists from each forum's dev pairs (``PairTable`` lists by forum):
    (query, [positive, negative, ...]) with sampled negatives."""
    rng = np.random.default_rng([seed, 10_000])
    lists = []
    for tables in forum_tables.values():
        if not tables:
            continue
        table = tables[0]  # the first pair kind (title-body by default) measures dev MAP
        if len(table) < 2:
            continue
        picked = rng.permutation(len(table))[:queries]
        size = min(candidates - 1, len(table) - 1)
        for i in picked:
            others = rng.choice(len(table) - 1, size=size, replace=False)
            others = others + (others >= i)
            lists.append(
                (table.queries[i], [table.positives[i]] + [table.positives[j] for j in others])
            )
    return lists


def dev_metrics(ranker, lists) -> dict:
    """Dev MAP and P@1 over ranking lists whose first candidate is the single positive.

    The numbers are :func:`adapter_zoo.metrics.evaluate_rankings`' (the benchmarks' own), so
    a dev score published in a card means what a benchmark score means: ties count as the
    expectation over their orders, and a constant scorer gets chance level.
    """
    if not lists:
        return {}
    pairs = [(q, c) for q, cands in lists for c in cands]
    # Up to a minute on a CPU (a forum's few hundred dev lists): said in the log, and a bar
    # on a terminal (tqdm's, as parse shows; none in a log file or CI).
    log.info("scoring %d dev lists (%d pairs)", len(lists), len(pairs))
    scores = ranker.score(pairs, batch_size=DEV_BATCH_SIZE, progress=sys.stderr.isatty())
    return positive_first_metrics(np.split(scores, np.cumsum([len(c) for _, c in lists])[:-1]))


def positive_first_metrics(score_lists) -> dict:
    """``dev_map`` and ``dev_p@1`` of score arrays whose element 0 is the single positive's
    (see :func:`dev_metrics`).

    Example:
        >>> positive_first_metrics([np.array([0.9, 0.1]), np.array([0.2, 0.5, 0.2])])
        {'dev_map': 0.7083333333333333, 'dev_p@1': 0.5}
    """
    if not len(score_lists):
        return {}
    labels = [np.eye(1, len(scores)).ravel() for scores in score_lists]  # positive first
    summary = evaluate_rankings(score_lists, labels)
    return {"dev_map": float(summary["map"]), "dev_p@1": float(summary["p@1"])}


def dev_scores(record: dict) -> dict:
    """The dev metrics of a training log record (``dev_map``, ``dev_p@1``), as a card's
    ``scores`` holds them: without the record's step, phase or timing."""
    return {k: v for k, v in record.items() if k.startswith("dev_") and k != "dev_seconds"}


def __getattr__(name: str):
    # DevListsEvaluator subclasses sentence-transformers' BaseEvaluator, which imports torch
    # and transformers: the class is made on first use, so the dev lists and metrics import
    # without them (compose, benchmarks, ``import adapter_zoo``)
    if name == "DevListsEvaluator":
        globals()[name] = _evaluator_class()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _evaluator_class() -> type:
    # sentence-transformers on first use: the CLI starts without it
    from sentence_transformers.base.evaluation import BaseEvaluator

    class DevListsEvaluator(BaseEvaluator):
        """Dev MAP and P@1 of a scorer over ranking lists whose first candidate is the positive.

        The numbers are :func:`dev_metrics`' (the benchmarks' own: ties count as the expectation
        over their orders), so a card's dev score means what a benchmark score means; rankers
        that order ties otherwise (MTEB's, trec_eval's) differ exactly there
        (tests/benchmarks/test_mteb.py).

        Args:
            scorer: what scores the pairs (a :class:`adapter_zoo.ranker.Ranker` or a bi-encoder
                over the model being trained); it scores in eval mode and is left in the
                training mode it found.
            lists: (query, [positive, negative, ...]) dev lists.

        Example:
            >>> evaluator = DevListsEvaluator(ranker, lists)  # doctest: +SKIP
            >>> evaluator(cross_encoder)  # doctest: +SKIP
            {'dev_map': 0.61, 'dev_p@1': 0.45}
        """

        def __init__(self, scorer, lists):
            super().__init__()
            self.scorer, self.lists = scorer, lists
            self.primary_metric = "dev_map"

        def __call__(self, model, output_path=None, epoch=-1, steps=-1) -> dict:
            was_training = self.scorer.model.training
            # the trainer's evaluation loop has switched dropout off already; a direct call
            # (the base before training, another length after it) has not
            self.scorer.model.eval()
            try:
                return dev_metrics(self.scorer, self.lists)
            finally:
                self.scorer.model.train(was_training)

    return DevListsEvaluator
