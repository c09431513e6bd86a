"""Which zoo model to serve a target domain with, from domain similarity alone.

:func:`plan_adaptation` turns the cosine similarities between the target's centroid and each
entry's centroid (:mod:`adapter_zoo.zoo.domain`) into an :class:`AdaptationPlan`: the
strategy, its members and their weights, and a sentence saying why.

Example:
    >>> import numpy as np
    >>> target = np.array([1.0, 0.0])
    >>> entries = {"beer": np.array([0.9, 0.1]), "bikes": np.array([0.0, 1.0])}
    >>> plan = plan_adaptation(target, entries, "nearest")
    >>> plan.members, plan.weights
    (('beer',), (1.0,))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from adapter_zoo.errors import ZooError
from adapter_zoo.names import ZERO_SHOT_MODEL
from stackexchange.numbers import MAX_LIST, check_number

ZERO_SHOT = "zero-shot"
NEAREST = "nearest"
SOUP = "soup"
FUSION = "fusion"
ROUTE = "route"
MULTITASK = "multitask"
# The similarity rule below: a zoo strategy or the base, from centroids alone.
CENTROID = "centroid"
STRATEGIES = (ZERO_SHOT, NEAREST, SOUP, FUSION, ROUTE, MULTITASK, CENTROID)
# adapt's default (adapter_zoo.adapt.learn): learn from the target, decide on its decision
# lists; not a plan from similarity, so plan_adaptation does not take it.
AUTO = "auto"

# Soup and fusion weights: softmax(similarity / T). The eight shipped forums' centroid cosines
# to one another lie between about 0.0 and 0.85, so T = 0.05 makes a 0.05 lead worth a factor
# e: the nearest forum dominates without silencing the others.
SIMILARITY_TEMPERATURE = 0.05
# The centroid rule: use AUTO_STRATEGY when the best similarity is at least
# AUTO_MIN_SIMILARITY, else the zero-shot base. Chosen by the leave-one-forum-out study
# (benchmarks/studies/transfer.py, results/transfer.json: the rule with the best mean MAP gain
# over the eight forums, nested so that no forum chose its own rule): score fusion of the
# top 3, only when the nearest entry reaches 0.3.
AUTO_STRATEGY = FUSION
AUTO_MIN_SIMILARITY = 0.3


@dataclass(frozen=True)
class AdaptationPlan:
    """What to serve a target with, and why.

    Attributes:
        strategy: one of :data:`STRATEGIES` (never ``centroid``: the rule's choice).
        members: zoo entry names (``(base,)`` for zero-shot).
        weights: one per member, summing to 1.
        similarities: cosine of the target's centroid with each entry's (all entries).
        reason: one readable sentence.
    """

    strategy: str
    members: tuple[str, ...]
    weights: tuple[float, ...]
    similarities: dict[str, float] = field(hash=False)
    reason: str


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of two vectors (float64)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ZooError(f"domain centroids of different sizes ({a.size} and {b.size})")
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    if norm == 0 or not math.isfinite(norm):
        raise ZooError("a domain centroid is zero or not finite")
    return float(a @ b) / norm


def similarity_weights(similarities, temperature: float = SIMILARITY_TEMPERATURE) -> list[float]:
    """``softmax(similarities / temperature)``, summing to 1.

    Example:
        >>> [round(w, 3) for w in similarity_weights([0.8, 0.75, 0.5])]
        [0.73, 0.268, 0.002]
    """
    values = np.asarray(list(similarities), dtype=np.float64) / temperature
    values = np.exp(values - values.max())
    return [float(w) for w in values / values.sum()]


def plan_adaptation(
    target_centroid: np.ndarray,
    entries: dict[str, np.ndarray],
    strategy: str = CENTROID,
    *,
    top_k: int | None = 3,
    multitask: str | None = None,
    base: str = ZERO_SHOT_MODEL,
) -> AdaptationPlan:
    """Plan how to serve the target whose centroid is ``target_centroid`` from ``entries``.

    Args:
        target_centroid: the target's domain centroid.
        entries: entry name -> its domain centroid (the candidate members).
        strategy: one of :data:`STRATEGIES`; ``centroid`` is :data:`AUTO_STRATEGY` when the
            best similarity is at least :data:`AUTO_MIN_SIMILARITY`, else zero-shot.
        top_k: members of soup, fusion and route (route: all entries when None).
        multitask: the multi-task entry (strategy ``multitask``); it is a candidate like
            the others for the similarity-based strategies only if it is in ``entries``.
        base: the zero-shot model.

    Returns:
        The plan; ``similarities`` holds every entry's, best first.

    Example:
        >>> t = np.array([1.0, 0.0])
        >>> plan_adaptation(t, {"a": np.array([0.0, 1.0])}).strategy
        'zero-shot'
    """
    if strategy not in STRATEGIES:
        raise ZooError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    if top_k is not None:
        check_number("top_k", top_k, integer=True, low=1, high=MAX_LIST, error=ZooError)
    sims = {name: cosine(target_centroid, c) for name, c in entries.items()}
    sims = dict(sorted(sims.items(), key=lambda item: -item[1]))
    ranked = list(sims)
    if strategy == ZERO_SHOT:
        return AdaptationPlan(ZERO_SHOT, (base,), (1.0,), sims, f"zero-shot was asked for: {base}.")
    if strategy == MULTITASK:
        if not multitask:
            raise ZooError("strategy 'multitask' needs the multi-task entry's name (multitask=)")
        about = f" (similarity {sims[multitask]:.3f})" if multitask in sims else ""
        return AdaptationPlan(
            MULTITASK, (multitask,), (1.0,), sims,
            f"multitask was asked for: the multi-task entry {multitask}{about}.",
        )  # fmt: skip
    if not ranked:
        raise ZooError("no zoo entry with a domain centroid to plan from")
    best, best_sim = ranked[0], sims[ranked[0]]
    if strategy == CENTROID:
        if best_sim < AUTO_MIN_SIMILARITY:
            return AdaptationPlan(
                ZERO_SHOT, (base,), (1.0,), sims,
                f"centroid: the nearest entry {best} has similarity {best_sim:.3f} < "
                f"{AUTO_MIN_SIMILARITY}, so no zoo model is expected to beat the zero-shot "
                f"{base}.",
            )  # fmt: skip
        if AUTO_STRATEGY == MULTITASK and not multitask:
            return AdaptationPlan(
                ZERO_SHOT, (base,), (1.0,), sims,
                f"centroid: the rule is {MULTITASK}, and the zoo has no multi-task entry, so the "
                f"zero-shot {base}.",
            )  # fmt: skip
        chosen = plan_adaptation(
            target_centroid, entries, AUTO_STRATEGY, top_k=top_k, multitask=multitask, base=base
        )
        reason = (
            f"centroid: the nearest entry {best} has similarity {best_sim:.3f} >= "
            f"{AUTO_MIN_SIMILARITY}, so {AUTO_STRATEGY}: " + chosen.reason
        )
        return AdaptationPlan(chosen.strategy, chosen.members, chosen.weights, sims, reason)
    if strategy == NEAREST:
        return AdaptationPlan(
            NEAREST, (best,), (1.0,), sims,
            f"nearest: {best} is the entry most similar to the target ({best_sim:.3f}).",
        )  # fmt: skip
    members = ranked if (strategy == ROUTE and top_k is None) else ranked[: top_k or 3]
    listed = ", ".join(f"{m} ({sims[m]:.3f})" for m in members)
    if strategy == ROUTE:
        return AdaptationPlan(
            ROUTE, tuple(members), tuple(1.0 / len(members) for _ in members), sims,
            f"route: each query goes to the nearest of the {len(members)} most similar "
            f"entries: {listed}.",
        )  # fmt: skip
    weights = similarity_weights([sims[m] for m in members])
    what = "weight average" if strategy == SOUP else "score fusion"
    return AdaptationPlan(
        strategy, tuple(members), tuple(weights), sims,
        f"{strategy}: a {what} of the {len(members)} most similar entries, {listed}, weighted "
        f"by softmax(similarity / {SIMILARITY_TEMPERATURE}).",
    )  # fmt: skip
