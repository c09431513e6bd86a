"""The answer stage on the decision lists: the query feedback chosen there (kept off unless
the lists say otherwise), and the fusions' weights and normalisation tried there and
recorded beside the default weights that answer (:data:`FUSION_NOT_APPLIED`).

* :func:`choose_fusion`: BM25's share (:data:`BM25_SHARES`), the normalisation (z-scores,
  min-max, reciprocal ranks: :data:`~adapter_zoo.compose.fusion.NORMALISATIONS`) and, for
  the fusion of the best candidate with the base, the candidate's share of the rest against
  the base's (:data:`MEMBER_SHARES`). Applied to the base alone it gives the base fused with
  BM25 at its tuned weight.
* :func:`choose_feedback`: dense pseudo-relevance feedback's k and w
  (:data:`FEEDBACK_GRID`) against no feedback.

A grid's best point replaces the default only when it beats the default by more than the
lists' noise: the paired bootstrap of :func:`adapter_zoo.adapt.decide.paired_bootstrap`, its
one-sided lower bound above 0 at the confidence Bonferroni's correction gives for the grid's
size (the best of many points beats the default by chance more often than one point does:
on a small list set the default stays). Each grid point is a cheap recombination of scores
the decision already has; the feedback grid reuses the base's embeddings of the lists.

Example:
    >>> import numpy as np
    >>> base = np.array([0.2, 0.9, 0.4, 0.1])  # one list of four, the second relevant
    >>> bm25 = np.array([0.0, 1.0, 0.0, 0.0])
    >>> choice = choose_fusion([base], bm25, [[0, 1, 0, 0]], lists=[4])
    >>> choice.replaced, choice.point
    (False, (0.9, 0.1, 'zscore'))
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from adapter_zoo.adapt.decide import BOOTSTRAP_SAMPLES, CONFIDENCE, list_average_precisions
from adapter_zoo.compose.fusion import NORMALISATIONS
from adapter_zoo.compose.prf import feedback_scores
from adapter_zoo.fusion_defaults import (
    BASE_FUSION_WEIGHTS,
    FUSION_WEIGHTS,
    NORMALISATION,
)

# BM25's share of the fused weights tried (0: the members alone)
BM25_SHARES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
# the best candidate's share of the members' weight, the base's the rest
MEMBER_SHARES = (0.25, 0.5, 0.75)
# (k, w) of the feedback tried; (0, 0.0) is no feedback, the default
FEEDBACK_OFF = (0, 0.0)
FEEDBACK_GRID = (FEEDBACK_OFF, *itertools.product((1, 3, 5), (0.1, 0.3, 0.5)))


@dataclass(frozen=True)
class GridChoice:
    """A grid's choice on the decision lists.

    Attributes:
        point: the chosen point (the default unless ``replaced``).
        default: the default point.
        best: the grid's best point by mean AP (chosen only when ``replaced``).
        map: mean AP of the chosen point; ``default_map``, ``best_map`` likewise.
        delta: the best point's mean AP minus the default's; ``lower`` its one-sided lower
            bound at ``confidence``; ``interval`` the two-sided interval at the same level.
        confidence: the bootstrap's confidence, Bonferroni-corrected for ``points``.
        points: grid points tried; ``lists``: decision lists.
        replaced: whether the best point replaced the default.
    """

    point: tuple
    default: tuple
    best: tuple
    map: float
    default_map: float
    best_map: float
    delta: float
    lower: float
    interval: tuple[float, float]
    confidence: float
    points: int
    lists: int
    replaced: bool
    aps: np.ndarray = field(repr=False, compare=False)

    def to_card(self, names: Sequence[str]) -> dict:
        """The card's record: the chosen and best points by ``names``, the margin and rule."""

        def named(point):
            return dict(zip(names, point, strict=True))

        return {
            "chosen": named(self.point), "default": named(self.default), "best": named(self.best),
            "map": round(self.map, 4), "default_map": round(self.default_map, 4),
            "best_map": round(self.best_map, 4), "delta": round(self.delta, 4),
            "lower": round(self.lower, 4), "interval": [round(x, 4) for x in self.interval],
            "replaced": self.replaced, "points": self.points, "lists": self.lists,
            "rule": (
                f"the grid's best of {self.points} points replaces the default only when its "
                f"paired-bootstrap {self.confidence:.2%} lower bound over the default is above 0 "
                f"({BOOTSTRAP_SAMPLES} resamples of {self.lists} lists; {CONFIDENCE:.0%} "
                "Bonferroni-corrected for the grid)"
            ),
        }  # fmt: skip


def choose(aps: dict[tuple, np.ndarray], default: tuple, *, seed: int = 0) -> GridChoice:
    """The grid's choice from each point's per-list APs (the same lists): its best point by
    mean AP (ties: the default, else the earliest) when the paired bootstrap puts it above ``default`` beyond
    the noise (see the module), else ``default``."""
    if default not in aps:
        raise ValueError(f"the default point {default} is not in the grid")
    points = len(aps)
    best = max(aps, key=lambda p: float(np.mean(aps[p])))
    if np.mean(aps[default]) >= np.mean(aps[best]):  # a tie keeps the default
        best = default
    tail = (1 - CONFIDENCE) / max(1, points - 1)
    delta = np.asarray(aps[best], np.float64) - np.asarray(aps[default], np.float64)
    rng = np.random.default_rng(seed)
    means = delta[rng.integers(0, len(delta), size=(BOOTSTRAP_SAMPLES, len(delta)))].mean(axis=1)
    lower = float(np.quantile(means, tail))
    interval = (float(np.quantile(means, tail / 2)), float(np.quantile(means, 1 - tail / 2)))
    replaced = best != default and lower > 0
    point = best if replaced else default
    return GridChoice(
        point=point, default=default, best=best, map=float(np.mean(aps[point])),
        default_map=float(np.mean(aps[default])), best_map=float(np.mean(aps[best])),
        delta=float(delta.mean()), lower=lower, interval=interval, confidence=1 - tail,
        points=points, lists=len(delta), replaced=replaced, aps=np.asarray(aps[point]),
    )  # fmt: skip


def _normalised(scores: np.ndarray, bounds: np.ndarray, how: str) -> np.ndarray:
    normalise = NORMALISATIONS[how]
    return np.concatenate([normalise(scores[a:b]) for a, b in zip(bounds[:-1], bounds[1:])])


def fusion_points(members: int) -> list[tuple[float, ...]]:
    """The weight points tried for ``members`` members and BM25: one member, (1 - s, s) for
    each BM25 share s; two, the first's share b of the rest: (b(1 - s), (1 - b)(1 - s), s).
    The default's weights are among them."""
    points = []
    for share in BM25_SHARES:
        rest = 1 - share
        if members == 1:
            points.append((round(rest, 10), share))
        else:
            points.extend((round(b * rest, 10), round((1 - b) * rest, 10), share)
                          for b in MEMBER_SHARES)  # fmt: skip
    return points


def choose_fusion(
    member_scores: Sequence[np.ndarray],
    bm25: np.ndarray,
    labels: Sequence[Sequence[int]],
    *,
    lists: Sequence[int],
    seed: int = 0,
) -> GridChoice:
    """The fusion of one or two members (flat scores over the lists' pairs, in list order)
    with BM25: each point ``(*weights, normalisation)`` of :func:`fusion_points` times
    :data:`~adapter_zoo.compose.fusion.NORMALISATIONS`, against the default
    (:mod:`adapter_zoo.fusion_defaults`), chosen by :func:`choose`.

    Args:
        member_scores: each member's scores (the best candidate first, then the base).
        bm25: BM25's scores of the same pairs.
        labels: each list's labels.
        lists: each list's length (the flat arrays' cut).
    """
    members = len(member_scores)
    if members not in (1, 2):
        raise ValueError(f"a fusion of 1 or 2 members with BM25 is chosen, not {members}")
    bounds = np.concatenate([[0], np.cumsum(lists)])
    parts = [*member_scores, bm25]
    aps = {}
    for how in NORMALISATIONS:
        normalised = [_normalised(np.asarray(p, np.float64), bounds, how) for p in parts]
        for weights in fusion_points(members):
            fused = sum(w * n for w, n in zip(weights, normalised))
            aps[(*weights, how)] = list_average_precisions(fused, labels)
    default = (*(BASE_FUSION_WEIGHTS if members == 1 else FUSION_WEIGHTS), NORMALISATION)
    return choose(aps, default, seed=seed)


def choose_feedback(
    query_vectors: np.ndarray,
    candidate_vectors: np.ndarray,
    labels: Sequence[Sequence[int]],
    *,
    lists: Sequence[int],
    grid: Sequence[tuple[int, float]] = FEEDBACK_GRID,
    seed: int = 0,
) -> GridChoice:
    """Dense pseudo-relevance feedback's ``(k, w)`` on the lists, from each pair's query and
    candidate embeddings (the base's, computed once), against no feedback
    (:data:`FEEDBACK_OFF`), chosen by :func:`choose`."""
    groups = _groups(lists)
    aps = {}
    for k, w in grid:
        if (k, w) == FEEDBACK_OFF:
            scores = np.einsum("ij,ij->i", query_vectors, candidate_vectors)
        else:
            scores = feedback_scores(query_vectors, candidate_vectors, groups, k=k, weight=w)
        aps[(k, w)] = list_average_precisions(scores, labels)
    return choose(aps, FEEDBACK_OFF, seed=seed)


# adapt's candidate name for what this module adds: the base with query feedback (when the
# lists replace the default)
FEEDBACK = "prf:base"
BASE_FUSION_NAMES = ("base", "bm25", "normalisation")
FUSION_NAMES = ("best", "base", "bm25", "normalisation")
# A fusion grid's choice is recorded, not applied: the decision lists are the target's own
# texts, which rate fusion weights unlike its questions do (each replacement they chose lost
# on a test set: docs/results.md); the card keeps the verdict beside the weights that answer.
FUSION_NOT_APPLIED = (
    "recorded, not applied: the fusion answers at the default weights (on the outside study's "
    "sets the decision lists' replacements of them lost on the test sets; docs/results.md)"
)


def _recorded(choice: GridChoice, names: Sequence[str]) -> dict:
    """A fusion grid's card record, with the weights that answer: the default's."""
    return {**choice.to_card(names), "applied": False, "answers_with": dict(
        zip(names, choice.default, strict=True)), "note": FUSION_NOT_APPLIED}  # fmt: skip


def tune_base(scorer, zero_shot: str, *, base: str, seed: int = 0) -> dict:
    """The answer stage of the base on ``scorer``'s decision lists (a
    :class:`~adapter_zoo.adapt.decision_scores.DecisionScorer`: the base scored, its BM25
    scores and, when the base is a bi-encoder, its embeddings of the lists' pairs,
    ``vectors``): its query feedback, added as the candidate :data:`FEEDBACK` where it
    replaces the default (no feedback), and its fusion with BM25's grid, recorded. Returns
    the card's records (``base_fusion``, ``feedback``). ``base`` names the base's candidate.
    """
    labels = scorer.lists.labels
    lists = [len(c) for c in scorer.lists.candidates]
    fusion = choose_fusion([scorer.scores[base]], scorer.bm25, labels, lists=lists, seed=seed)
    card = {"base_fusion": _recorded(fusion, BASE_FUSION_NAMES)}
    if getattr(scorer, "vectors", None) is not None:
        queries, candidates = scorer.vectors
        feedback = choose_feedback(queries, candidates, labels, lists=lists, seed=seed)
        card["feedback"] = feedback.to_card(("k", "w"))
        if feedback.replaced:
            k, w = feedback.point
            scores = feedback_scores(queries, candidates, _groups(lists), k=k, weight=w)
            scorer.record(FEEDBACK, scores, f"prf:{zero_shot}@k={k},w={w:g}")
    else:
        card["feedback"] = {"skipped": "the base gives no embeddings to feed back"}
    return card


def tune_fusion(scorer, best: str, *, base: str, seed: int = 0) -> dict:
    """The card's record of the best candidate's fusion with the base and BM25 on the
    decision lists (:func:`choose_fusion` of two members); the fusion answers at the
    default weights (:data:`~adapter_zoo.fusion_defaults.FUSION_WEIGHTS`)."""
    labels = scorer.lists.labels
    lists = [len(c) for c in scorer.lists.candidates]
    parts = [scorer.scores[best], scorer.scores[base]]
    choice = choose_fusion(parts, scorer.bm25, labels, lists=lists, seed=seed)
    return _recorded(choice, FUSION_NAMES)


def _groups(lists: Sequence[int]) -> list[np.ndarray]:
    bounds = np.concatenate([[0], np.cumsum(lists)]).astype(np.int64)
    return [np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
