"""Deciding on the target's own held-out lists: every candidate's pseudo-dev MAP, and the
base kept unless a candidate beats it by more than the lists' noise.

The noise is measured by a paired bootstrap over lists (Efron & Tibshirani, 1993; as
Koehn, 2004 for MT systems): the lists are resampled with replacement
:data:`BOOTSTRAP_SAMPLES` times and the candidate's mean AP minus the base's recomputed on
each sample. The best candidate replaces the base only when the lower end of that
difference's one-sided :data:`CONFIDENCE` interval is above zero. scipy's ``bootstrap``
resamples one statistic of independent samples; the paired difference of two systems on
the same lists is a few lines of numpy, written here.

Example:
    >>> import numpy as np
    >>> base = np.array([0.5, 0.5, 0.5, 0.5] * 25)
    >>> better = base + 0.3
    >>> decide({"base": base, "own": better}, base="base")["chosen"]
    'own'
    >>> decide({"base": base, "own": base + 0.0}, base="base")["chosen"]
    'base'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapter_zoo.metrics import average_precision

BOOTSTRAP_SAMPLES = 2000
CONFIDENCE = 0.95


def list_average_precisions(scores: Sequence[float], labels: Sequence[Sequence[int]]) -> np.ndarray:
    """AP of each list, from the flat ``scores`` of all lists' candidates in order."""

    scores = np.asarray(scores, dtype=np.float64)
    out, start = [], 0
    for row in labels:
        out.append(average_precision(scores[start : start + len(row)], row))
        start += len(row)
    if start != len(scores):
        raise ValueError(f"{len(scores)} scores for {start} candidates")
    return np.asarray(out, dtype=np.float64)


def paired_bootstrap(
    candidate: np.ndarray, base: np.ndarray, *, samples: int = BOOTSTRAP_SAMPLES, seed: int = 0
) -> dict:
    """Mean AP difference ``candidate - base`` over the same lists, with its bootstrap
    one-sided lower bound (at :data:`CONFIDENCE`), two-sided interval and the share of
    resamples in which the candidate is not better (``p``)."""
    delta = np.asarray(candidate, np.float64) - np.asarray(base, np.float64)
    rng = np.random.default_rng(seed)
    means = delta[rng.integers(0, len(delta), size=(samples, len(delta)))].mean(axis=1)
    tail = 1 - CONFIDENCE
    return {
        "delta": float(delta.mean()),
        "lower": float(np.quantile(means, tail)),
        "interval": [float(np.quantile(means, tail / 2)), float(np.quantile(means, 1 - tail / 2))],
        "p": float((means <= 0).mean()),
    }


def decide(
    aps: dict[str, np.ndarray],
    *,
    base: str,
    seed: int = 0,
    hedge: str | None = None,
    hedged: frozenset[str] = frozenset(),
) -> dict:
    """The decision among candidates, from each one's per-list APs on the same lists.

    With ``hedge`` (a fusion of the best single model with the base and BM25): when the
    chosen candidate is one of ``hedged`` (the single models the fusion may hold) and does
    not beat ``hedge`` by more than the noise, while ``hedge`` itself beats ``base``, the
    hedge is chosen. The target's held-out lists are made of its own texts, which the
    candidates trained on: on MedQuAD's FAQ pairs the trained adapter won its held-out lists
    by +0.020 MAP and then lost to the zero-shot base on the consumer questions of the same
    domain (issue 43); the fusion keeps the base's share of the ranking.

    Returns:
        ``chosen`` (a candidate's name), ``best`` (the best candidate other than the base),
        ``candidates`` (name -> ``map`` and its paired bootstrap against the base),
        ``lists``, ``rule`` and ``reason`` (a sentence for the card).
    """
    table = {}
    for name, values in aps.items():
        record = {"map": float(np.mean(values))}
        if name != base:
            record.update(paired_bootstrap(values, aps[base], seed=seed))
        table[name] = record
    others = [n for n in aps if n != base]
    best = max(others, key=lambda n: table[n]["map"]) if others else None
    lists = len(aps[base])
    rule = (
        f"keep {base} unless the best candidate's mean AP gain has a paired-bootstrap "
        f"{CONFIDENCE:.0%} lower bound above 0 ({BOOTSTRAP_SAMPLES} resamples of the {lists} "
        "held-out lists)"
    )
    if best is None:
        chosen, reason = base, f"no candidate besides {base}"
    elif table[best]["lower"] > 0:
        chosen = best
        reason = (
            f"{best} beats {base} by {table[best]['delta']:+.4f} MAP on {lists} held-out "
            f"lists (lower bound {table[best]['lower']:+.4f} > 0)"
        )
    else:
        chosen = base
        reason = (
            f"the best candidate {best} ({table[best]['delta']:+.4f} MAP, lower bound "
            f"{table[best]['lower']:+.4f}) is within the noise of {lists} held-out lists, "
            f"so {base} is kept"
        )
    if hedge in aps and chosen in hedged and chosen != hedge and table[hedge].get("lower", 0) > 0:
        versus = paired_bootstrap(aps[chosen], aps[hedge], seed=seed)
        if versus["lower"] <= 0:
            reason += (
                f"; {chosen} does not beat {hedge} by more than the noise "
                f"({versus['delta']:+.4f}, lower bound {versus['lower']:+.4f}), so {hedge} "
                "is chosen: it keeps the base's share of the ranking"
            )
            chosen = hedge
    return {
        "chosen": chosen,
        "best": best,
        "base": base,
        "candidates": table,
        "lists": lists,
        "rule": rule,
        "reason": reason,
    }
