"""Score fusion: a weighted sum of the members' per-query normalised scores.

Each member's scores of one query's candidates are put on one scale first, in one of three
ways (:data:`NORMALISATIONS`): z-scores (the default), min-max (each list's scores mapped to
[0, 1]; Pyserini's BEIR fusions' best on most corpora), or reciprocal ranks (RRF: ``1 / (60 +
rank)``, Cormack, Clarke & Büttcher, SIGIR 2009, its k of 60), which keeps only the order.

Example:
    >>> import numpy as np
    >>> fuse([np.array([1.0, 2.0, 3.0]), np.array([5.0, 5.0, 5.0])], [1.0, 0.5]).tolist()
    [-1.2247449159622192, 0.0, 1.2247449159622192]
    >>> fuse([np.array([1.0, 2.0, 4.0])], [1.0], normalisation="minmax").tolist()
    [0.0, 0.3333333432674408, 1.0]
    >>> (fuse([np.array([1.0, 3.0, 2.0])], [1.0], normalisation="rrf") * 61).astype(float).round(4).tolist()
    [0.9683, 1.0, 0.9839]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapter_zoo.compose.scoring import Composite, query_groups, score_with, zscores
from adapter_zoo.errors import ZooError
from adapter_zoo.fusion_defaults import NORMALISATION
from adapter_zoo.ranker.inputs import text_pairs
from stackexchange.errors import unknown_name

# RRF's constant: a rank's share falls slowly, so one member's top does not outweigh the rest
RRF_K = 60


def minmax(scores: np.ndarray) -> np.ndarray:
    """``(scores - min) / (max - min)``; all zeros when the scores are all equal."""
    scores = np.asarray(scores, dtype=np.float64)
    spread = scores.max() - scores.min() if len(scores) else 0.0
    return (scores - scores.min()) / spread if spread > 0 else np.zeros_like(scores)


def reciprocal_ranks(scores: np.ndarray) -> np.ndarray:
    """``1 / (RRF_K + rank)``, rank 1 the highest score; tied scores share their mean rank,
    so a constant member moves no candidate. numpy rather than scipy's ``rankdata``: scipy
    is no dependency of the package."""
    scores = np.asarray(scores, dtype=np.float64)
    _, inverse, counts = np.unique(-scores, return_inverse=True, return_counts=True)
    starts = np.cumsum(counts) - counts
    return 1.0 / (RRF_K + (starts + (counts + 1) / 2)[inverse.reshape(-1)])


# the per-query normalisations a fusion may use, by the name its spec writes (``@minmax``)
NORMALISATIONS = {"zscore": zscores, "minmax": minmax, "rrf": reciprocal_ranks}


def check_normalisation(name: str) -> str:
    """``name`` when it is one of :data:`NORMALISATIONS`, else a ZooError naming them."""
    if name not in NORMALISATIONS:
        raise unknown_name("fusion normalisation", name, NORMALISATIONS, ZooError)
    return name


def fuse(
    member_scores: Sequence[np.ndarray],
    weights: Sequence[float],
    *,
    normalisation: str = NORMALISATION,
) -> np.ndarray:
    """The fused float32 scores of ONE query's candidates: ``sum_m w_m * n(scores_m)``, each
    member's scores normalised over the candidates by ``normalisation`` (z-scores by
    default; a constant member contributes 0, or the same to every candidate)."""
    normalise = NORMALISATIONS[check_normalisation(normalisation)]
    total = sum(w * normalise(s) for w, s in zip(weights, member_scores, strict=True))
    return np.asarray(total, dtype=np.float32)


class ScoreFusion(Composite):
    """Weighted sum of per-query z-normalised member scores.

    Members are anything with ``score(pairs)`` (a Ranker, a bi-encoder, :class:`BM25Scorer`,
    another composition). Scores of different members live on different scales (logits,
    cosines, BM25), so each member's scores are z-normalised over one query's candidates
    first; a member whose scores are all equal for a query adds nothing to it.

    Args:
        members: the scorers.
        weights: one weight per member (default all 1).
        names: one name per member (for the card and ``repr``; default ``m0``, ``m1``, ...).
        normalisation: how each member's scores of a query are put on one scale
            (:data:`NORMALISATIONS`; z-scores by default).

    Example:
        >>> from adapter_zoo.compose import BM25Scorer
        >>> fusion = ScoreFusion([BM25Scorer(), BM25Scorer()], [1.0, 0.5], ["bm25", "again"])
        >>> fusion.rank("stout glass", ["a bike", "a stout glass"])[0][0]
        'a stout glass'
    """

    def __init__(
        self,
        members: Sequence,
        weights: Sequence[float] | None = None,
        names: Sequence[str] | None = None,
        *,
        card: dict | None = None,
        normalisation: str = NORMALISATION,
    ):
        self.normalisation = check_normalisation(normalisation)
        self.members = list(members)
        self.weights = [1.0] * len(self.members) if weights is None else list(map(float, weights))
        self.names = [f"m{i}" for i in range(len(self.members))] if names is None else list(names)
        if not self.members:
            raise ZooError("score fusion needs at least one member")
        if not len(self.weights) == len(self.names) == len(self.members):
            raise ZooError(
                f"score fusion: {len(self.members)} members, {len(self.weights)} weights, "
                f"{len(self.names)} names"
            )
        self.card = card

    def score(self, pairs, *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Fused scores of ``pairs`` in input order.

        Each member scores all pairs once; the pairs are then grouped by query (they need not
        be adjacent) and z-normalised per query and member, so a score compares only with the
        other candidates of its own query.
        """
        pairs = text_pairs(pairs)
        fused = np.zeros(len(pairs), dtype=np.float32)
        if not pairs:
            return fused
        member_scores = [
            score_with(m, pairs, batch_size=batch_size, progress=progress) for m in self.members
        ]
        for indices in query_groups(pairs):
            fused[indices] = fuse([s[indices] for s in member_scores], self.weights,
                                  normalisation=self.normalisation)  # fmt: skip
        return fused

    def __repr__(self) -> str:
        terms = " + ".join(f"{w:g}*{n}" for w, n in zip(self.weights, self.names))
        how = "" if self.normalisation == NORMALISATION else f", {self.normalisation}"
        return f"ScoreFusion({terms}{how})"
