"""Dense pseudo-relevance feedback: a bi-encoder's query moved towards its top candidates.

Rocchio's feedback (Rocchio, 1971) on embeddings, as Pyserini's dense PRF (Li et al., 2021,
"Pseudo Relevance Feedback with Deep Language Models and Dense Retrievers"): each query's
embedding is moved towards the mean of its ``k`` best-scored candidates' embeddings,
``q' = normalise((1 - w) * q + w * mean(top-k))``, and the candidates are scored again by their
cosine with ``q'``. The candidates' embeddings are the ones the first scoring computed: a
feedback round costs a few dot products, no second encoding. ``w = 0`` is the encoder alone.

sentence-transformers and Pyserini's feedback work on a Lucene or Faiss index of a corpus;
this one works on any ranked list (``score``, ``rank``) and on a corpus in memory (``search``),
so it is a few lines of numpy, written here.

Example:
    >>> import numpy as np
    >>> q = np.array([1.0, 0.0])
    >>> candidates = np.array([[0.0, 1.0], [0.6, 0.8], [1.0, 0.0]])
    >>> rocchio(q, candidates, k=1, weight=0.5).round(4).tolist()
    [1.0, 0.0]
    >>> rocchio(q, candidates, k=2, weight=0.5).round(4).tolist()
    [0.9762, 0.2169]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapter_zoo.compose.scoring import Composite, query_groups
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.inputs import check_texts, check_top_k, distinct_texts, text_pairs

# what ``prf:<model>`` means without ``@k=...,w=...``: the three best candidates, a third of
# the way (Pyserini's dense Rocchio reproductions use k 3-5 and weights of this order)
DEFAULT_K = 3
DEFAULT_WEIGHT = 0.3
# queries whose first and second rounds over the corpus run as one matrix product
_SEARCH_BLOCK = 256


def _best(scores: np.ndarray, n: int) -> np.ndarray:
    """Each row's ``n`` highest columns, best first (all of them when the row is shorter)."""
    n = min(n, scores.shape[1])
    if n == 0:
        return np.zeros((len(scores), 0), dtype=np.int64)
    part = np.argpartition(-scores, n - 1, axis=1)[:, :n]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def rocchio(query: np.ndarray, candidates: np.ndarray, *, k: int, weight: float) -> np.ndarray:
    """The fed-back unit query embedding: ``query`` (unit length) moved by ``weight`` towards
    the mean of the ``k`` candidate rows with the highest dot product with it (ties: the
    earlier row; fewer than ``k`` rows: all of them)."""
    query = np.asarray(query, dtype=np.float64)
    candidates = np.asarray(candidates, dtype=np.float64)
    if weight == 0 or not len(candidates):
        return query
    top = np.argsort(-(candidates @ query), kind="stable")[:k]
    return _unit((1 - weight) * query + weight * candidates[top].mean(axis=0))


def feedback_scores(
    query_vectors: np.ndarray,
    candidate_vectors: np.ndarray,
    groups: Sequence[np.ndarray],
    *,
    k: int,
    weight: float,
) -> np.ndarray:
    """Scores after one feedback round, of pairs whose query and candidate embeddings are
    the rows of ``query_vectors`` and ``candidate_vectors``; ``groups`` holds each query's
    pair indices (:func:`~adapter_zoo.compose.scoring.query_groups`), its query row repeated.

    What ``adapt`` calls for each grid point from the base's embeddings of the decision
    lists, computed once.
    """
    scores = np.einsum("ij,ij->i", query_vectors, candidate_vectors).astype(np.float64)
    for indices in groups:
        rows = candidate_vectors[indices]
        moved = rocchio(query_vectors[indices[0]], rows, k=k, weight=weight)
        scores[indices] = rows @ moved
    return scores


class DenseFeedback(Composite):
    """A bi-encoder whose queries are fed back once (see the module): ``prf:<model>@k=K,w=W``.

    Args:
        encoder: a bi-encoder (anything with ``encode(texts)`` giving unit rows).
        k: candidates whose mean the query moves towards (at least 1).
        weight: how far it moves, from 0 (not at all) to 1 (to the mean).
        name: the encoder's model name, for ``repr``.

    Example:
        >>> import adapter_zoo
        >>> prf = adapter_zoo.load("prf:sbert:minilm-l6@k=3,w=0.3")  # doctest: +SKIP
        >>> prf.rank("Which glass for a stout?", ["A nonic pint.", "Any bicycle."])  # doctest: +SKIP
    """

    def __init__(self, encoder, *, k: int = DEFAULT_K, weight: float = DEFAULT_WEIGHT,
                 name: str | None = None, card: dict | None = None):  # fmt: skip
        if not callable(getattr(encoder, "encode", None)):
            raise ZooError(
                f"pseudo-relevance feedback needs a bi-encoder (its embeddings); "
                f"{name or type(encoder).__name__} has none"
            )
        if int(k) < 1:
            raise ZooError(f"pseudo-relevance feedback: k {k} is not a positive integer")
        if not 0 <= float(weight) <= 1:
            raise ZooError(f"pseudo-relevance feedback: weight {weight} is not in [0, 1]")
        self.members = [encoder]
        self.k, self.weight = int(k), float(weight)
        self.member_name = name
        self.card = card

    @property
    def encoder(self):
        return self.members[0]

    def score(self, pairs, *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Fed-back cosines of ``pairs`` in input order; every distinct text embedded once."""
        pairs = text_pairs(pairs)
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        texts, left, right = distinct_texts(pairs)
        vectors = np.asarray(
            self.encoder.encode(texts, batch_size=batch_size, progress=progress),
            dtype=np.float64,
        )
        scores = feedback_scores(vectors[left], vectors[right], query_groups(pairs),
                                 k=self.k, weight=self.weight)  # fmt: skip
        return scores.astype(np.float32)

    def search(
        self, queries: Sequence[str], corpus, *, top_k: int = 10, batch_size: int = 64
    ) -> list[list[tuple[int, float]]]:
        """The ``top_k`` corpus entries nearest to each fed-back query, as (corpus index,
        cosine): the first round's ``k`` nearest entries move the query, the same corpus
        embeddings (``corpus``: texts, or their embeddings from ``encode``) rank it again.

        Example:
            >>> corpus = prf.encoder.encode(["How do I fix a flat?", "Best stout?"])  # doctest: +SKIP
            >>> prf.search(["puncture repair"], corpus, top_k=1)  # doctest: +SKIP
            [[(0, 0.6)]]
        """
        check_top_k(top_k, caller="search")
        queries = check_texts(queries, what="queries", caller="search")
        if not isinstance(corpus, np.ndarray):
            corpus = check_texts(corpus, what="corpus texts", caller="search")
            corpus = self.encoder.encode(corpus, batch_size=batch_size)
        corpus = np.asarray(corpus, dtype=np.float32)
        vectors = np.asarray(self.encoder.encode(queries, batch_size=batch_size), np.float32)
        found = []
        for start in range(0, len(vectors), _SEARCH_BLOCK):
            block = vectors[start : start + _SEARCH_BLOCK]
            moved = block
            if self.weight > 0 and len(corpus):
                top = _best(block @ corpus.T, self.k)
                moved = _unit((1 - self.weight) * block + self.weight * corpus[top].mean(axis=1))
            scores = moved @ corpus.T
            for row, order in zip(scores, _best(scores, top_k)):
                found.append([(int(i), float(row[i])) for i in order])
        return found

    def __repr__(self) -> str:
        return f"DenseFeedback({self.member_name or self.encoder!r}, k={self.k}, w={self.weight:g})"
