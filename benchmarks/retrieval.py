"""Retrieval over a whole corpus (a ``beir:PATH`` benchmark): each model's run, then its
metrics (``adapter_zoo.metrics.evaluate_run``: nDCG@10, MAP, MRR@10, Recall@100).

How each kind of model retrieves:

* ``bm25``: one bm25s index over the corpus (the project's BM25, ``stackexchange.lists``:
  Lucene variant, k1=1.5, b=0.75, English stopwords), every query searched in it; a document
  sharing no term with the query is not retrieved. ``tfidf``: the cosine of scikit-learn
  TF-IDF vectors fit on the corpus.
* a bi-encoder (anything with ``encode`` and ``search``: ``sbert:<base>``, a bi-encoder
  entry): the corpus embedded once, each query's nearest documents by cosine.
* anything else that scores pairs (a cross-encoder, a ``fusion:``/``rerank:`` spec, a
  composite): it re-ranks a pool, the union of BM25's and the zero-shot base's
  (``sbert:minilm-l6``) top :data:`POOL_DEPTH` of each query, since scoring every
  (query, document) pair of a corpus is out of reach for a cross-encoder, and a fusion's
  members are z-normalised over one query's candidates. Its MAP and Recall@100 count what
  the pool missed as not retrieved.

A run keeps each query's best :data:`RUN_DEPTH` documents (BEIR's and Pyserini's depth) and
leaves out the document whose id is the query's own (BEIR's ``ignore_identical_ids``).

Example:
    >>> import pathlib, tempfile
    >>> import benchmarks
    >>> from benchmarks.datasets.beir import write_folder
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "my-set"
    >>> documents = [{"_id": "d1", "text": "A stout is a dark beer."},
    ...              {"_id": "d2", "text": "Patch the tube of a flat tyre."}]
    >>> write_folder(folder, documents, {"q1": "fix a flat tyre"}, {"q1": {"d2": 1}})
    >>> data = benchmarks.get(f"beir:{folder}").retrieval_data("test")
    >>> lexical_run("bm25", data)["q1"]  # doctest: +ELLIPSIS
    {'d2': 0.52...}
"""

from __future__ import annotations

import logging

import numpy as np

from adapter_zoo.compose.scoring import score_with
from adapter_zoo.names import BM25, TFIDF, ZERO_SHOT_MODEL
from benchmarks.baselines import is_lexical
from benchmarks.errors import BenchmarkError
from stackexchange.lists import BM25Neighbours

logger = logging.getLogger(__name__)

RUN_DEPTH = 1000
POOL_DEPTH = 100
POOL_BASE = ZERO_SHOT_MODEL
# queries scored at once: this many full rows (one score per document) are held at a time
_QUERY_CHUNK = 32


def _top(scores: np.ndarray, depth: int, own: int | None, *, matched: bool = False):
    """Indices of the ``depth`` best scores, best first, without ``own`` (the query's own
    document) and, with ``matched``, without scores of 0 (no query term found)."""
    scores = np.asarray(scores, dtype=np.float64).copy()
    if own is not None:
        scores[own] = -np.inf
    if matched:
        scores[scores <= 0] = -np.inf
    k = min(depth, len(scores))
    best = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    best = best[np.isfinite(scores[best])]
    return best[np.argsort(-scores[best], kind="stable")]


def run_from_rows(rows, data, depth: int, *, matched: bool = False) -> dict:
    """A run from full score rows (one per query of ``data``, over the whole corpus)."""
    index = {document: i for i, document in enumerate(data.corpus_ids)}
    run = {}
    for query, scores in zip(data.queries, rows, strict=True):
        best = _top(scores, depth, index.get(query), matched=matched)
        run[query] = {data.corpus_ids[i]: float(scores[i]) for i in best}
    return run


def lexical_run(model: str, data, depth: int = RUN_DEPTH) -> dict:
    """``bm25``'s or ``tfidf``'s run over the whole corpus, ``{query: {document: score}}``."""
    queries = list(data.queries.values())
    if model == BM25:
        index = BM25Neighbours(list(data.corpus_texts))
        rows = (
            row
            for start in range(0, len(queries), _QUERY_CHUNK)
            for row in index.scores(queries[start : start + _QUERY_CHUNK])
        )
        return run_from_rows(rows, data, depth, matched=True)
    if model == TFIDF:
        # scikit-learn on first use: the CLI starts without it
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer()
        documents = vectorizer.fit_transform(data.corpus_texts)
        rows = (
            row
            for start in range(0, len(queries), _QUERY_CHUNK)
            for row in (vectorizer.transform(queries[start : start + _QUERY_CHUNK])
                        @ documents.T).toarray()
        )  # fmt: skip
        return run_from_rows(rows, data, depth, matched=True)
    raise BenchmarkError(f"no corpus retrieval for lexical model {model!r}")


def is_dense(model) -> bool:
    """Whether ``model`` embeds texts and searches embeddings (a bi-encoder)."""
    return callable(getattr(model, "encode", None)) and callable(getattr(model, "search", None))


def dense_run(encoder, data, depth: int = RUN_DEPTH, *, batch_size: int = 64) -> dict:
    """A bi-encoder's run: the corpus embedded once, each query's nearest documents."""
    logger.info("embedding %d documents", len(data.corpus_ids))
    embeddings = encoder.encode(list(data.corpus_texts), batch_size=batch_size, progress=True)
    # one more hit than kept: the query's own document may be among them
    top_k = min(depth + 1, len(data.corpus_ids))
    hits = encoder.search(list(data.queries.values()), embeddings, top_k=top_k,
                          batch_size=batch_size)  # fmt: skip
    run = {}
    for query, row in zip(data.queries, hits, strict=True):
        kept = [(data.corpus_ids[i], score) for i, score in row if data.corpus_ids[i] != query]
        run[query] = dict(kept[:depth])
    return run


def pool_run(model, data, pools: list[dict], *, batch_size: int = 64) -> dict:
    """``model``'s scores of each query's pool (the union of the ``pools`` runs' documents,
    in their order), as a run."""
    text_of = dict(zip(data.corpus_ids, data.corpus_texts, strict=True))
    candidates = {
        query: list(dict.fromkeys(d for run in pools for d in run.get(query, {})))
        for query in data.queries
    }
    pairs = [(data.queries[q], text_of[d]) for q, documents in candidates.items()
             for d in documents]  # fmt: skip
    logger.info("re-ranking %d (query, document) pairs", len(pairs))
    scores = iter(score_with(model, pairs, batch_size=batch_size, progress=True).tolist())
    return {q: {d: next(scores) for d in documents} for q, documents in candidates.items()}


def _head(run: dict, depth: int) -> dict:
    """Each query's best ``depth`` documents of ``run``."""
    return {q: dict(sorted(hits.items(), key=lambda h: -h[1])[:depth]) for q, hits in run.items()}


def retrieval_run(
    model, data, *, load_base, depth: int = RUN_DEPTH, recorded=None
) -> tuple[dict, dict]:
    """``model``'s run on ``data`` (see the module docstring) and what the record says of it.

    Args:
        model: ``bm25``/``tfidf``, a bi-encoder, or anything with ``score(pairs)``.
        data: a :class:`~benchmarks.datasets.beir.RetrievalData`.
        load_base: loads a model name (``evaluate``'s loader): the pool's zero-shot base.
        depth: documents kept per query.
        recorded: a model name's run on ``data`` retrieved before, or None (``evaluate``'s
            ``ScoredModels.run_of``): the pool takes BM25's and the base's from there.

    Returns:
        The run ``{query: {document: score}}``, and the record's keys: ``retrieval``
        (``corpus``, or ``rerank`` with ``pool``) and ``documents`` (the corpus's size).
    """
    about = {"documents": len(data.corpus_ids)}
    if is_lexical(model):
        return lexical_run(model, data, depth), {"retrieval": "corpus", **about}
    if is_dense(model):
        return dense_run(model, data, depth), {"retrieval": "corpus", **about}
    if not callable(getattr(model, "score", None)):
        raise BenchmarkError(f"{model!r} neither retrieves nor scores pairs")
    lexical = (recorded and recorded(BM25)) or lexical_run(BM25, data, POOL_DEPTH)
    dense = (recorded and recorded(POOL_BASE)) or dense_run(load_base(POOL_BASE), data, POOL_DEPTH)
    pools = [_head(lexical, POOL_DEPTH), _head(dense, POOL_DEPTH)]
    pool = f"the union of {BM25}'s and {POOL_BASE}'s top {POOL_DEPTH} per query"
    return pool_run(model, data, pools), {"retrieval": "rerank", "pool": pool, **about}
