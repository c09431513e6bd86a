"""Deciding on the target's decision lists: every candidate's MAP on them, and the
answer: a candidate that beats the base by more than the lists' noise, else the base fused
with BM25 (:func:`decide`, its :class:`Decision`).

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
    >>> decide({"base": base, "own": better}, base="base").chosen
    'own'
    >>> decide({"base": base, "own": base + 0.0}, base="base").chosen
    'base'
    >>> decide({"base": base, "own": base + 0.0, "fused": base}, base="base", floor="fused").chosen
    'fused'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` chose among the candidates, and why.

    Attributes:
        chosen: the candidate that answers.
        best: the best candidate other than the base (None: the base alone was scored).
        base: the candidate every other is measured against.
        candidates: name -> its ``map`` and, but for the base, its paired bootstrap against
            the base (:func:`paired_bootstrap`).
        lists: the decision lists the candidates were scored on.
        rule: the rule the decision follows, as a sentence.
        reason: why ``chosen`` answers, as a sentence for the card.
    """

    chosen: str
    best: str | None
    base: str
    candidates: dict[str, dict]
    lists: int
    rule: str
    reason: str

    def to_card(self) -> dict:
        """The card's ``decision`` record (the candidates and the reason are recorded apart)."""
        return {"chosen": self.chosen, "best": self.best, "base": self.base, "rule": self.rule,
                "lists": self.lists}  # fmt: skip


def decide(
    aps: dict[str, np.ndarray],
    *,
    base: str,
    seed: int = 0,
    floor: str | None = None,
    hedge: str | None = None,
    hedged: frozenset[str] = frozenset(),
) -> Decision:
    """The decision among candidates, from each one's per-list APs on the same lists.

    A candidate wins when it beats ``base`` by more than the lists' noise. The answer keeps
    the base's and BM25's shares of the ranking either way:

    * when nothing wins, ``floor`` (the base fused with BM25) answers, not the base alone;
    * a winner among ``hedged`` (single models) answers through ``hedge``, its fusion with
      the base and BM25.

    The decision lists are made of the target's own texts, which the trained candidates
    learned from, and their negatives are BM25's nearest texts, so they overrate the one and
    underrate the other: a trained adapter can win its lists by far and gain little on the
    test, and the base fused with BM25, what a user has without training, is seldom below
    the base on a test where its lists put it below (benchmarks/results/outside_study.json
    and adapt_study.json; docs/results.md).

    Returns:
        The :class:`Decision`: the chosen candidate, every candidate's record and the
        sentences that say why.
    """
    table = {}
    for name, values in aps.items():
        record = {"map": float(np.mean(values))}
        if name != base:
            record.update(paired_bootstrap(values, aps[base], seed=seed))
        table[name] = record
    others = [n for n in aps if n != base]
    best = max(others, key=lambda n: table[n]["map"]) if others else None
    kept = floor if floor in aps else base
    lists = len(aps[base])
    rule = (
        f"keep {kept} unless the best candidate's mean AP gain over {base} has a "
        f"paired-bootstrap {CONFIDENCE:.0%} lower bound above 0 ({BOOTSTRAP_SAMPLES} "
        f"resamples of the {lists} held-out lists)"
    )
    if hedge in aps:
        rule += f"; a single model that wins answers through {hedge}"
    if best is None:
        chosen, reason = kept, f"no candidate besides {base}"
    elif table[best]["lower"] > 0:
        chosen = best
        reason = (
            f"{best} beats {base} by {table[best]['delta']:+.4f} MAP on {lists} held-out "
            f"lists (lower bound {table[best]['lower']:+.4f} > 0)"
        )
    else:
        chosen = kept
        reason = (
            f"the best candidate {best} ({table[best]['delta']:+.4f} MAP, lower bound "
            f"{table[best]['lower']:+.4f}) is within the noise of {lists} held-out lists, "
            f"so {kept} is kept"
        )
    if hedge in aps and chosen in hedged:
        reason += (
            f"; {chosen} answers through {hedge}, which keeps the base's and BM25's shares "
            "of the ranking"
        )
        chosen = hedge
    return Decision(chosen=chosen, best=best, base=base, candidates=table, lists=lists,
                    rule=rule, reason=reason)  # fmt: skip
