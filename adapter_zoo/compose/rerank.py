"""Retrieve, then rerank: a cheap retriever's top k rescored by a stronger reranker.

Example:
    >>> import numpy as np
    >>> retrieved = np.array([4.0, 1.0, 3.0, 2.0])
    >>> top = top_indices(retrieved, 2)
    >>> top.tolist()
    [0, 2]
    >>> merge_scores(retrieved, top, np.array([-2.0, 4.0])).tolist()
    [-2.0, -4.0, 4.0, -3.0]
"""

from __future__ import annotations

import numpy as np

from adapter_zoo.compose.scoring import Composite, query_groups, score_with
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.inputs import text_pairs
from stackexchange.numbers import MAX_LIST, check_number

DEFAULT_TOP_K = 20


def top_indices(retrieved: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` best retriever scores, best first; ties keep input order."""
    return np.argsort(-np.asarray(retrieved), kind="stable")[:k]


def merge_scores(retrieved: np.ndarray, top: np.ndarray, reranked: np.ndarray) -> np.ndarray:
    """One query's final float32 scores: the reranker's score for each of the ``top``
    positions, and for the rest their retriever score shifted down so that the best of the
    rest sits exactly 1 below the lowest reranked score. Sorting by these scores puts the top
    k in the reranker's order above the rest in the retriever's order."""
    scores = np.asarray(retrieved, dtype=np.float64).copy()
    rest = np.ones(len(scores), dtype=bool)
    rest[top] = False
    if rest.any() and len(top):
        scores[rest] += np.min(reranked) - 1.0 - scores[rest].max()
    scores[top] = reranked
    return scores.astype(np.float32)


class Rerank(Composite):
    """Per query, the retriever scores every candidate and the reranker rescores its top k.

    Only the ``top_k`` best-retrieved pairs of each query reach the reranker (that is the
    point: a slow cross-encoder sees k pairs, not the whole list).

    ``score(pairs)`` returns scores consistent with that order (see :func:`merge_scores`):
    a reranked pair keeps the reranker's score; every other pair gets its retriever score
    shifted by one constant per query, so the best of them is 1 below the lowest reranked
    score. The retriever's ties at the k-th place are broken by input order.

    Args:
        retriever: anything with ``score(pairs)``, e.g. a bi-encoder or BM25.
        reranker: anything with ``score(pairs)``, e.g. a cross-encoder Ranker.
        top_k: how many of each query's best-retrieved candidates are reranked.

    Example:
        >>> from adapter_zoo.compose import BM25Scorer
        >>> rerank = Rerank(BM25Scorer(), BM25Scorer(), top_k=1)
        >>> [c for c, _ in rerank.rank("stout glass", ["a bike", "a stout glass"])]
        ['a stout glass', 'a bike']
    """

    def __init__(self, retriever, reranker, top_k: int = DEFAULT_TOP_K, *, card=None):
        check_number("rerank: top_k", top_k, integer=True, low=1, high=MAX_LIST, error=ZooError)
        self.retriever = retriever
        self.reranker = reranker
        self.top_k = int(top_k)
        self.card = card

    def score(self, pairs, *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Scores of ``pairs`` in input order: the retriever scores all pairs in one call,
        then the reranker scores the top ``top_k`` of every query in one call."""
        pairs = text_pairs(pairs)
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        kwargs = {"batch_size": batch_size, "progress": progress}
        retrieved = score_with(self.retriever, pairs, **kwargs)
        groups = query_groups(pairs)
        tops = [indices[top_indices(retrieved[indices], self.top_k)] for indices in groups]
        chosen = np.concatenate(tops)
        reranked = score_with(self.reranker, [pairs[i] for i in chosen], **kwargs)
        scores = np.zeros(len(pairs), dtype=np.float32)
        start = 0
        for indices, top in zip(groups, tops):
            local = np.searchsorted(indices, top)  # positions of ``top`` within ``indices``
            part = reranked[start : start + len(top)]
            scores[indices] = merge_scores(retrieved[indices], local, part)
            start += len(top)
        return scores

    def __repr__(self) -> str:
        return f"Rerank({self.retriever!r} > {self.reranker!r} @ {self.top_k})"
