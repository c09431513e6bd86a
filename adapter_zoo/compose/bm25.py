"""BM25 as a ranker: ``score(pairs)`` with term statistics from each query's own candidates.

Example:
    >>> scorer = BM25Scorer()
    >>> scorer.rank("which glass for a stout", ["a bike chain", "a nonic glass for stout"])[0][0]
    'a nonic glass for stout'
"""

from __future__ import annotations

from adapter_zoo.compose.scoring import PerQueryScorer
from stackexchange.lists import bm25_candidate_scores


class BM25Scorer(PerQueryScorer):
    """BM25 over each query's own candidates (the ``bm25`` baseline's query scope,
    ``stackexchange.lists.bm25_candidate_scores``: bm25s, Lucene variant, k1=1.5, b=0.75,
    English stopwords); a query scored with a single candidate gets BM25 over that one text.
    """

    def __init__(self):
        self.card = {"name": "bm25", "mode": "bm25"}

    def candidate_scores(self, queries, candidate_lists):
        return bm25_candidate_scores(queries, candidate_lists)
