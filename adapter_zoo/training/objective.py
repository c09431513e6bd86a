"""What training measures: dev MAP and P@1 of ranking lists, the benchmarks' way."""

from __future__ import annotations

import logging
import sys

import numpy as np

from adapter_zoo.metrics import evaluate_rankings

log = logging.getLogger(__name__)
# Dev texts are scored in small batches (each sorted by length by the scorer): a batch of 64
# forum answers at 512 tokens took the dev pass from 1.12 GB peak RSS (at 256) to 1.37 GB.
DEV_BATCH_SIZE = 16


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
