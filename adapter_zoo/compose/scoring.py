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
from adapter_zoo.precision import BF16, FP32, INT8, apply_precision, precision_name
from adapter_zoo.ranker.inputs import text_pairs
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
    precision_dtype = None  # set by set_precision; members loaded later get it too

    def parts(self) -> list:
        """The loaded member scorers (members, retriever and reranker, a routing embedder)."""
        found = [*getattr(self, "members", []), *(getattr(self, k, None) for k in
                 ("retriever", "reranker", "embedder"))]  # fmt: skip
        return [part for part in found if part is not None and not isinstance(part, str)]

    def set_precision(self, dtype):
        """Every member that runs a model scores in ``dtype`` (see
        :mod:`adapter_zoo.precision`); members loaded later (a route's) get it when loaded."""

        self.precision_dtype = dtype
        for part in self.parts():
            apply_precision(part, dtype)
        return self

    @property
    def precision(self) -> str:
        """``int8`` when a loaded member scores through its int8 export, ``bf16`` when one
        runs in bf16 (or, none loaded yet, when it was set to bf16), else ``fp32``."""

        ran = {getattr(part, "precision", FP32) for part in self.parts()}
        if INT8 in ran:  # its members score through their int8 exports (adapter_zoo.onnx)
            return INT8
        if self.precision_dtype is None:
            return FP32
        return BF16 if BF16 in ran else precision_name(self.precision_dtype) if not ran else FP32

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
