"""TF-IDF as a ranker: the ``tfidf`` baseline's query scope with ``score(pairs)``.

Example:
    >>> TfidfScorer().rank("which glass for a stout", ["a bike chain", "a glass for stout"])[0][0]
    'a glass for stout'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapter_zoo.compose.scoring import PerQueryScorer


def tfidf_candidate_scores(
    queries: Sequence[str], candidate_lists: Sequence[Sequence[str]]
) -> list[np.ndarray]:
    """Per query, the cosine of scikit-learn TF-IDF vectors fitted on that query's candidates
    (the ``tfidf`` baseline's query scope); zeros where the candidates have no vocabulary."""
    # sklearn on first use: importing this module stays light
    from sklearn.feature_extraction.text import TfidfVectorizer

    scores = []
    for query, candidates in zip(queries, candidate_lists):
        try:
            vectorizer = TfidfVectorizer().fit(candidates)
        except ValueError:  # every candidate empty or stop words only: no vocabulary
            scores.append(np.zeros(len(candidates)))
            continue
        scores.append(tfidf_cosine(vectorizer, query, candidates))
    return scores


def tfidf_cosine(vectorizer, query: str, candidates: Sequence[str]) -> np.ndarray:
    """Cosine of ``query``'s TF-IDF vector with each candidate's (rows are L2-normalised)."""
    return np.asarray(
        (vectorizer.transform(candidates) @ vectorizer.transform([query]).T).todense()
    ).ravel()


class TfidfScorer(PerQueryScorer):
    """TF-IDF over each query's own candidates, as the ``tfidf`` baseline scores a list."""

    def __init__(self):
        self.card = {"name": "tfidf", "mode": "tfidf"}

    def candidate_scores(self, queries, candidate_lists):
        return tfidf_candidate_scores(queries, candidate_lists)
