"""Ranking lists built from a parsed forum's questions: LAS-style answer selection and
AskUbuntu-style question similarity (see ``benchmarks.builder`` for the benchmark folders).

One construction serves the benchmarks' held-out test sets and training's dev selection, so a
model is chosen on lists made exactly like the ones it is judged on.

Example:
    >>> import numpy as np
    >>> rows = [
    ...     {"id": i, "title": t, "body": "", "accepted_answer_id": 10 + i,
    ...      "accepted_answer": a, "split": s}
    ...     for i, (t, a, s) in enumerate([
    ...         ("stout or porter", "a stout is stronger", "test"),
    ...         ("porter history", "porters came first", "train"),
    ...         ("hop varieties", "cascade and saaz", "train"),
    ...     ])
    ... ]
    >>> lists = answer_selection_lists(rows, 2, np.random.default_rng(0))
    >>> [sorted(r["candidates"]) for r in lists["test"]]
    [['a stout is stronger', 'porters came first']]
"""

from __future__ import annotations

import numpy as np

from stackexchange.text import question_text

SPLITS = ("train", "dev", "test")
# The descriptor of a benchmark folder built from these lists (benchmarks.builder); here, below
# both, because adapt (adapter_zoo) reads such folders as targets too.
BENCHMARK_FILE = "benchmark.json"


def question_text_of(row) -> str:
    return question_text(row["title"], row["body"])


class BM25Neighbours:
    """BM25 index (bm25s) over a corpus; ``top(query, k)`` = indices, best first."""

    def __init__(self, corpus: list[str]):
        import bm25s

        self._bm25s = bm25s
        self.size = len(corpus)
        self.retriever = bm25s.BM25()
        # an empty document still needs a token for bm25s to index the corpus
        self.retriever.index([t or [""] for t in self._tokens(corpus)], show_progress=False)

    def _tokens(self, texts):
        return self._bm25s.tokenize(
            list(texts), stopwords="en", return_ids=False, show_progress=False
        )

    def scores(self, queries: list[str]) -> list[np.ndarray]:
        """Per query, the BM25 score of every corpus text (zeros when no query term is indexed)."""
        out = []
        for query in self._tokens(queries):
            known = [t for t in query if t in self.retriever.vocab_dict]
            out.append(
                np.asarray(self.retriever.get_scores(known)) if known else np.zeros(self.size)
            )
        return out

    def top(self, queries: list[str], k: int) -> list[list[int]]:
        # stable sort on -score: equal scores keep corpus order, so the build is deterministic
        return [
            [int(i) for i in np.argsort(-scores, kind="stable")[:k]]
            for scores in self.scores(queries)
        ]


def bm25_candidate_scores(queries, candidate_lists) -> list[np.ndarray]:
    """BM25 of each query over its own candidates only (term statistics from that list).

    The one query-scope BM25 (bm25s: Lucene variant, k1=1.5, b=0.75, English stopwords) of the
    ``bm25`` baseline and of ``adapter_zoo.compose.BM25Scorer``.

    Example:
        >>> [s.argmax() for s in bm25_candidate_scores(["stout"], [["a bike", "a stout"]])]
        [np.int64(1)]
    """
    return [
        np.asarray(BM25Neighbours(list(candidates)).scores([query])[0], dtype=np.float64)
        for query, candidates in zip(queries, candidate_lists, strict=True)
    ]


def _row(query_id, query, pool_ids, pool_texts, positives) -> dict:
    return {
        "query_id": str(query_id),
        "query": query,
        "candidate_ids": [str(i) for i in pool_ids],
        "candidates": list(pool_texts),
        "labels": [int(i in positives) for i in pool_ids],
    }


def answer_selection_lists(questions, size: int, rng) -> dict[str, list[dict]]:
    answered = [r for r in questions if r["accepted_answer"]]
    texts = [question_text_of(r) for r in answered]
    index = BM25Neighbours(texts)
    rows: dict[str, list[dict]] = {}
    for split in SPLITS:
        queries = [i for i, r in enumerate(answered) if r["split"] == split]
        rows[split] = []
        for i, near in zip(queries, index.top([texts[i] for i in queries], size)):
            pool = [i, *[j for j in near if j != i][: size - 1]]
            rng.shuffle(pool)
            rows[split].append(_row(
                answered[i]["id"], texts[i],
                [answered[j]["accepted_answer_id"] for j in pool],
                [answered[j]["accepted_answer"] for j in pool],
                {answered[i]["accepted_answer_id"]},
            ))  # fmt: skip
    return rows


def question_similarity_lists(questions, duplicates, size: int, rng) -> dict[str, list[dict]]:
    ids = [str(r["id"]) for r in questions]
    texts = [question_text_of(r) for r in questions]
    position = {qid: n for n, qid in enumerate(ids)}
    canonical: dict[str, set[str]] = {}
    for row in duplicates:
        query, target = str(row["query_id"]), str(row["positive_id"])
        if query in position and target in position and query != target:
            canonical.setdefault(query, set()).add(target)
    index = BM25Neighbours(texts)
    rows: dict[str, list[dict]] = {}
    for split in SPLITS:
        queries = sorted(
            (q for q in canonical if questions[position[q]]["split"] == split), key=position.get
        )
        rows[split] = []
        near_lists = index.top([texts[position[q]] for q in queries], size + len(canonical))
        for query_id, near in zip(queries, near_lists):
            positives = sorted(position[c] for c in canonical[query_id])
            others = [j for j in near if j != position[query_id] and j not in positives]
            pool = [*positives, *others][: max(size, len(positives))]
            rng.shuffle(pool)
            rows[split].append(
                _row(
                    query_id,
                    texts[position[query_id]],
                    [ids[j] for j in pool],
                    [texts[j] for j in pool],
                    canonical[query_id],
                )
            )
    return rows
