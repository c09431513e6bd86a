"""BM25 as a ranker: ``score(pairs)`` with term statistics from each query's own candidates.

Example:
    >>> scorer = BM25Scorer()
    >>> scorer.rank("which glass for a stout", ["a bike chain", "a nonic glass for stout"])[0][0]
    'a nonic glass for stout'
"""

from __future__ import annotations

import numpy as np

from adapter_zoo.compose.scoring import Composite, query_groups
from adapter_zoo.ranker.inputs import text_pairs


class BM25Scorer(Composite):
    """BM25 over each query's own candidates (the ``bm25`` baseline's query scope).

    ``score(pairs)`` groups the pairs by query; the candidates of one query (all its pairs,
    duplicates included) are that query's BM25 corpus, exactly as the ``bm25`` baseline scores
    a benchmark list (``stackexchange.lists.bm25_candidate_scores``: bm25s, Lucene variant,
    k1=1.5, b=0.75, English stopwords). So scores of different queries do not compare, and a
    query scored with a single candidate gets BM25 over that one text.
    """

    def __init__(self):
        self.card = {"name": "bm25", "kind": "bm25"}

    def score(self, pairs, *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """BM25 score of each (query, candidate) pair, in input order (``batch_size`` and
        ``progress`` are accepted for the common interface and unused)."""
        from stackexchange.lists import bm25_candidate_scores

        pairs = text_pairs(pairs)
        scores = np.zeros(len(pairs), dtype=np.float32)
        groups = query_groups(pairs)
        per_query = bm25_candidate_scores(
            [pairs[g[0]][0] for g in groups], [[pairs[i][1] for i in g] for g in groups]
        )
        for indices, values in zip(groups, per_query):
            scores[indices] = values
        return scores

    def __repr__(self) -> str:
        return "BM25Scorer()"
