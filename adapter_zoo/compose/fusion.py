"""Score fusion: a weighted sum of the members' per-query z-scores.

Example:
    >>> import numpy as np
    >>> fuse([np.array([1.0, 2.0, 3.0]), np.array([5.0, 5.0, 5.0])], [1.0, 0.5]).tolist()
    [-1.2247449159622192, 0.0, 1.2247449159622192]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapter_zoo.compose.scoring import Composite, query_groups, score_with, zscores
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.inputs import text_pairs


def fuse(member_scores: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """The fused float32 scores of ONE query's candidates: ``sum_m w_m * z(scores_m)``, each
    member's scores z-normalised over the candidates (a constant member contributes 0)."""
    total = sum(w * zscores(s) for w, s in zip(weights, member_scores, strict=True))
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
    ):
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
            fused[indices] = fuse([s[indices] for s in member_scores], self.weights)
        return fused

    def __repr__(self) -> str:
        terms = " + ".join(f"{w:g}*{n}" for w, n in zip(self.weights, self.names))
        return f"ScoreFusion({terms})"
