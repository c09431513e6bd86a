"""Scorers: the IR baselines ``bm25`` and ``tfidf``, and Rankers (``sbert:<base>`` included).

Every scorer maps a benchmark split (a query–candidates–labels Dataset) to one score array per
query: ``scorer(dataset, scope) -> list[numpy.ndarray]``. ``scope`` is the benchmark's
``bm25_scope``: ``"query"`` computes term statistics over each query's candidates, ``"corpus"``
over all candidates of the split.

Example:
    >>> scorer = get_scorer("bm25")
    >>> rows = {"query": ["stout beer"], "candidates": [["a stout beer", "a bike"]]}
    >>> [int(s.argmax()) for s in scorer(rows, "query")]
    [0]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from adapter_zoo.names import BM25, LEXICAL, TFIDF, parse_model_name
from benchmarks.errors import BenchmarkError


def _unique_candidates(dataset):
    texts: dict[str, int] = {}
    for candidates in dataset["candidates"]:
        for text in candidates:
            texts.setdefault(text, len(texts))
    return texts


def bm25_scores(dataset, scope: str = "query") -> list[np.ndarray]:
    """BM25 (bm25s defaults: Lucene variant, k1=1.5, b=0.75, English stopwords).

    Both scopes use ``stackexchange.lists``' one bm25s wrapper: ``query`` is
    :func:`~stackexchange.lists.bm25_candidate_scores` (also behind
    ``adapter_zoo.compose.BM25Scorer``), ``corpus`` one index over the split's candidates.
    """
    from stackexchange.lists import BM25Neighbours, bm25_candidate_scores

    if scope == "corpus":
        corpus = _unique_candidates(dataset)
        per_query = BM25Neighbours(list(corpus)).scores(list(dataset["query"]))
        return [
            scores[[corpus[c] for c in candidates]]
            for scores, candidates in zip(per_query, dataset["candidates"])
        ]
    return bm25_candidate_scores(dataset["query"], dataset["candidates"])


def tfidf_scores(dataset, scope: str = "query") -> list[np.ndarray]:
    """Cosine of scikit-learn TF-IDF vectors (fit on the candidates of the query or corpus)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    def cosine(vectorizer, query, candidates):
        return np.asarray(
            (vectorizer.transform(candidates) @ vectorizer.transform([query]).T).todense()
        ).ravel()

    if scope == "corpus":
        vectorizer = TfidfVectorizer().fit(list(_unique_candidates(dataset)))
        return [cosine(vectorizer, q, c) for q, c in zip(dataset["query"], dataset["candidates"])]
    scores = []
    for query, candidates in zip(dataset["query"], dataset["candidates"]):
        try:
            vectorizer = TfidfVectorizer().fit(candidates)
        except ValueError:  # every candidate empty or stop words only: no vocabulary
            scores.append(np.zeros(len(candidates)))
            continue
        scores.append(cosine(vectorizer, query, candidates))
    return scores


def ranker_scorer(ranker, batch_size: int = 64) -> Callable:
    """Cross-encoder scores from an ``adapter_zoo.Ranker`` (one logit per pair)."""

    def scores(dataset, scope: str = "query") -> list[np.ndarray]:
        pairs = [(q, c) for q, cs in zip(dataset["query"], dataset["candidates"]) for c in cs]
        flat = np.asarray(
            ranker.score(pairs, batch_size=batch_size, progress=True), dtype=np.float64
        )
        sizes = np.cumsum([len(cs) for cs in dataset["candidates"]])[:-1]
        return list(np.split(flat, sizes))

    return scores


def get_scorer(model) -> Callable:
    """The scorer for ``bm25``, ``tfidf`` or a Ranker-like object (``evaluate`` loads
    ``sbert:<base>`` as a :class:`adapter_zoo.BiEncoder`, one of those)."""
    if isinstance(model, str) and parse_model_name(model).kind == LEXICAL:
        return {BM25: bm25_scores, TFIDF: tfidf_scores}[model]
    if hasattr(model, "score"):
        return ranker_scorer(model)
    raise BenchmarkError(f"no scorer for model {model!r}")
