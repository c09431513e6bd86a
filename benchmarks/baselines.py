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

from adapter_zoo.names import BM25, TFIDF
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
    """Cosine of scikit-learn TF-IDF vectors (fit on the candidates of the query or corpus);
    the query scope is :class:`adapter_zoo.compose.tfidf.TfidfScorer`'s."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from adapter_zoo.compose.tfidf import tfidf_candidate_scores, tfidf_cosine

    queries, candidates = list(dataset["query"]), list(dataset["candidates"])
    if scope == "corpus":
        vectorizer = TfidfVectorizer().fit(list(_unique_candidates(dataset)))
        return [tfidf_cosine(vectorizer, q, c) for q, c in zip(queries, candidates)]
    return tfidf_candidate_scores(queries, candidates)


def benchmark_pairs(dataset) -> list[tuple[str, str]]:
    """A benchmark split's (query, candidate) pairs, query by query, in list order."""
    return [(q, c) for q, cs in zip(dataset["query"], dataset["candidates"]) for c in cs]


def split_per_query(flat, dataset) -> list[np.ndarray]:
    """Flat per-pair scores in :func:`benchmark_pairs`' order, cut into one array per query."""
    bounds = np.cumsum([0] + [len(c) for c in dataset["candidates"]])
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def ranker_scorer(ranker, batch_size: int = 64) -> Callable:
    """Cross-encoder scores from an ``adapter_zoo.Ranker`` (one logit per pair)."""

    def scores(dataset, scope: str = "query") -> list[np.ndarray]:
        pairs = benchmark_pairs(dataset)
        flat = np.asarray(
            ranker.score(pairs, batch_size=batch_size, progress=True), dtype=np.float64
        )
        sizes = np.cumsum([len(cs) for cs in dataset["candidates"]])[:-1]
        return list(np.split(flat, sizes))

    return scores


def is_lexical(model) -> bool:
    """Whether ``model`` names a lexical baseline (``bm25``, ``tfidf``: a baseline kind with
    no encoder), scored here over a benchmark's own ``bm25_scope``."""
    from adapter_zoo.kinds import kind_for_name

    if not isinstance(model, str):
        return False
    kind = kind_for_name(model)
    return kind is not None and kind.baseline and kind.encoder is None


def get_scorer(model) -> Callable:
    """The scorer for ``bm25``, ``tfidf`` or a Ranker-like object (``evaluate`` loads
    every other name with ``adapter_zoo.load``)."""
    if is_lexical(model):
        return {BM25: bm25_scores, TFIDF: tfidf_scores}[model]
    if hasattr(model, "score"):
        return ranker_scorer(model)
    raise BenchmarkError(f"no scorer for model {model!r}")
