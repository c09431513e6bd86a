"""What training optimises and measures: the ranking loss and dev MAP."""

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


def ranking_loss(model, tokenizer, batch, config, device):
    """The training loss of one minibatch, computed from the head's logit.

    The adapters library's one-label head would compute MSE when given labels, so the
    logits are taken without labels and the loss is computed here.

    Args:
        batch: (query, candidate, label) triples for ``config.loss == "bce"``,
            (query, positive, negative) triples for ``"pairwise"``, or
            (query, positive, (negative, ...)) for ``"listwise"``.
        config: a :class:`TrainingConfig` (``loss``, ``margin``, ``max_length``).
    """
    import torch
    import torch.nn.functional as F

    from adapter_zoo.ranker.ranker import encode_pairs

    def logits(queries, candidates):
        enc = encode_pairs(tokenizer, queries, candidates, config.max_length)
        return model(**{k: v.to(device) for k, v in enc.items()}).logits[:, 0]

    queries, seconds, thirds = zip(*batch)
    if config.loss == "listwise":
        lists = [(q, c) for q, p, negs in batch for c in (p, *negs)]
        scores = logits([q for q, _ in lists], [c for _, c in lists]).view(len(batch), -1)
        target = torch.zeros(len(batch), dtype=torch.long, device=device)  # positive first
        return F.cross_entropy(scores, target)
    if config.loss == "bce":
        labels = torch.tensor(thirds, dtype=torch.float32, device=device)
        return F.binary_cross_entropy_with_logits(logits(queries, seconds), labels)
    # Laskar et al. 2020: hinge on the positive-negative margin plus pointwise BCE.
    both = logits(queries + queries, seconds + thirds)
    positive, negative = both[: len(batch)], both[len(batch) :]
    hinge = torch.relu(config.margin - positive + negative).mean()
    labels = torch.cat([torch.ones_like(positive), torch.zeros_like(negative)])
    return hinge + F.binary_cross_entropy_with_logits(both, labels)
