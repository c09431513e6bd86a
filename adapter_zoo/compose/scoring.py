"""What every composition shares: calling a member's ``score``, grouping pairs by query,
z-scores, and ``rank`` as :class:`~adapter_zoo.Ranker` ranks.

Example:
    >>> [g.tolist() for g in query_groups([("q1", "a"), ("q2", "b"), ("q1", "c")])]
    [[0, 2], [1]]
    >>> zscores(np.array([1.0, 3.0])).tolist(), zscores(np.array([2.0, 2.0])).tolist()
    ([-1.0, 1.0], [0.0, 0.0])
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np

from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.ranker import rank_candidates


def score_with(member, pairs, *, batch_size: int | None = None, progress: bool = False):
    """``member.score(pairs)`` as float64, passing ``batch_size`` and ``progress`` on only when
    the member's ``score`` takes them (a member needs no more than ``score(pairs)``)."""
    try:
        accepted = inspect.signature(member.score).parameters
    except (TypeError, ValueError):  # a builtin or C callable: no introspection
        accepted = {}
    kwargs = {}
    if batch_size is not None and "batch_size" in accepted:
        kwargs["batch_size"] = batch_size
    if progress and "progress" in accepted:
        kwargs["progress"] = progress
    scores = np.asarray(member.score(list(pairs), **kwargs), dtype=np.float64).reshape(-1)
    if len(scores) != len(pairs):
        raise ZooError(f"{member!r} gave {len(scores)} scores for {len(pairs)} pairs")
    return scores


def query_groups(pairs: Sequence[tuple[str, str]]) -> list[np.ndarray]:
    """Indices of ``pairs`` per distinct query, queries in order of first appearance and each
    query's pairs in input order (they need not be adjacent)."""
    groups: dict[str, list[int]] = {}
    for i, (query, _) in enumerate(pairs):
        groups.setdefault(str(query), []).append(i)
    return [np.asarray(indices, dtype=np.int64) for indices in groups.values()]


def zscores(scores: np.ndarray) -> np.ndarray:
    """``(scores - mean) / std`` (population std); all zeros when the std is 0."""
    scores = np.asarray(scores, dtype=np.float64)
    std = scores.std()
    return (scores - scores.mean()) / std if std > 0 else np.zeros_like(scores)


class Composite:
    """Base of the compositions (each defines ``score``): ``rank`` and ``name`` from it.

    Attributes:
        card: the zoo card when loaded from a zoo entry, else a small dict naming the spec.
    """

    card: dict | None = None

    @property
    def name(self) -> str | None:
        """The zoo entry's name or the spec the composition was made from."""
        return (self.card or {}).get("name")

    def rank(
        self, query: str, candidates: Sequence[str], *, top_k: int | None = None
    ) -> list[tuple[str, float]]:
        """``candidates`` sorted best first as (candidate, score); ties keep input order."""
        return rank_candidates(self, query, candidates, top_k=top_k)


class PerQueryScorer(Composite):
    """A lexical scorer whose statistics come from each query's own candidates (``bm25``,
    ``tfidf``): ``score(pairs)`` groups the pairs by query, and the candidates of one query
    (all its pairs, duplicates included) are that query's corpus, as the baselines score a
    benchmark list; so scores of different queries do not compare. Subclasses define
    :meth:`candidate_scores`."""

    def candidate_scores(self, queries: list[str], candidate_lists: list[list[str]]) -> list:
        """One score array per query, over that query's candidates."""
        raise NotImplementedError

    def score(self, pairs, *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """The score of each (query, candidate) pair, in input order (``batch_size`` and
        ``progress`` are accepted for the common interface and unused)."""
        from adapter_zoo.ranker.inputs import text_pairs

        pairs = text_pairs(pairs)
        scores = np.zeros(len(pairs), dtype=np.float64)
        groups = query_groups(pairs)
        per_query = self.candidate_scores(
            [pairs[g[0]][0] for g in groups], [[pairs[i][1] for i in g] for g in groups]
        )
        for indices, values in zip(groups, per_query):
            scores[indices] = values
        return scores

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
