"""Build LAS-style and AskUbuntu-style benchmarks from a parsed forum.

* ``answer_selection`` (LAS, Rücklé et al.): query = title + body of a question with an
  accepted answer; candidates = its accepted answer plus the accepted answers of the most
  BM25-similar other answered questions of the whole forum, ``candidates`` in all (100, or
  every answered question when the forum has fewer; ``benchmark.json`` says so). Main metric P@1.
* ``question_similarity`` (AskUbuntu, Lei et al.): query = a question closed as a duplicate;
  candidates = its canonical question(s) plus the most BM25-similar other questions,
  ``candidates`` in all (20). Main metric MAP.

Splits follow the parsed forum's question split: the queries of ``test`` are the questions of
its held-out ``test`` split (never seen by adapter training); ``train`` and ``dev`` are built
the same way from the ``train``/``dev`` questions, so ``evaluate --finetune`` can train on
them. Candidate pools draw from the whole forum, as LAS does. Each candidate list is
shuffled with ``seed`` so no model can profit from the input order.

Layout (read back by ``benchmarks.get("local:" + path)``): ``benchmark.json`` (name, task,
main_metric, no_positive, source forum, candidates, per-split counts) and one
``datasets.Dataset`` folder per split.

Example:
    >>> path = build_from_forum("parsed/beer.stackexchange.com", "bench/beer-las")  # doctest: +SKIP
    >>> benchmarks.get("local:" + str(path)).load("test")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from benchmarks.errors import BenchmarkError
from stackexchange.io import atomic_directory, atomic_write_json
from stackexchange.text import question_text

DEFAULT_CANDIDATES = {"answer_selection": 100, "question_similarity": 20}
SPLITS = ("train", "dev", "test")
MAIN_METRIC = {"answer_selection": "p@1", "question_similarity": "map"}


def _question_text(row) -> str:
    return question_text(row["title"], row["body"])


class _Neighbours:
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

    def top(self, queries: list[str], k: int) -> list[list[int]]:
        out = []
        for query in self._tokens(queries):
            known = [t for t in query if t in self.retriever.vocab_dict]
            scores = self.retriever.get_scores(known) if known else np.zeros(self.size)
            # stable sort on -score: equal scores keep corpus order, so the build is deterministic
            out.append([int(i) for i in np.argsort(-np.asarray(scores), kind="stable")[:k]])
        return out


def _load_questions(folder: Path):
    from stackexchange.store import read_dataset

    path = folder / "questions"
    if not path.exists():
        raise BenchmarkError(
            f"{folder}: no questions/ folder; is it a parsed forum (adapter-zoo parse)?"
        )
    questions = read_dataset(path, BenchmarkError)
    needed = {"id", "title", "body", "accepted_answer_id", "accepted_answer", "split"}
    missing = sorted(needed - set(questions.column_names))
    if missing:
        raise BenchmarkError(f"{path}: missing columns {missing}")
    return questions.to_list()


def _load_duplicates(folder: Path) -> list[dict]:
    """Every split of ``duplicates/``, read split by split: datasets 5 writes an empty split
    without a shard and then cannot load the whole DatasetDict back."""
    from stackexchange.store import read_dataset

    path = folder / "duplicates"
    try:
        names = json.loads((path / "dataset_dict.json").read_text(encoding="utf-8"))["splits"]
    except (OSError, ValueError, KeyError):
        raise BenchmarkError(
            f"{path}: missing or not a saved DatasetDict (adapter-zoo parse)"
        ) from None
    rows = []
    for name in names:
        if any((path / name).glob("*.arrow")):
            rows += read_dataset(path / name, BenchmarkError).to_list()
    return rows


def _row(query_id, query, pool_ids, pool_texts, positives) -> dict:
    return {
        "query_id": str(query_id),
        "query": query,
        "candidate_ids": [str(i) for i in pool_ids],
        "candidates": list(pool_texts),
        "labels": [int(i in positives) for i in pool_ids],
    }


def _answer_selection(questions, size: int, rng) -> dict[str, list[dict]]:
    answered = [r for r in questions if r["accepted_answer"]]
    texts = [_question_text(r) for r in answered]
    index = _Neighbours(texts)
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


def _question_similarity(questions, duplicates, size: int, rng) -> dict[str, list[dict]]:
    ids = [str(r["id"]) for r in questions]
    texts = [_question_text(r) for r in questions]
    position = {qid: n for n, qid in enumerate(ids)}
    canonical: dict[str, set[str]] = {}
    for row in duplicates:
        query, target = str(row["query_id"]), str(row["positive_id"])
        if query in position and target in position and query != target:
            canonical.setdefault(query, set()).add(target)
    index = _Neighbours(texts)
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


def _split_stats(rows: list[dict]) -> dict:
    sizes = [len(r["labels"]) for r in rows]
    return {
        "queries": len(rows),
        "pairs": sum(sizes),
        "positives": sum(sum(r["labels"]) for r in rows),
        "candidates_min": min(sizes, default=0),
        "candidates_max": max(sizes, default=0),
    }


def build_from_forum(
    forum_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    task: str = "answer_selection",
    candidates: int | None = None,
    seed: int = 0,
) -> Path:
    """Build a benchmark from ``forum_dir`` (a parsed forum) into ``out_dir``, atomically.

    Args:
        forum_dir: ``DIR/<host>/`` written by ``adapter-zoo parse``.
        out_dir: the benchmark folder to create (replaced if present).
        task: ``answer_selection`` or ``question_similarity``.
        candidates: pool size (default 100 for answer selection, 20 for question similarity).
        seed: shuffles each candidate list.

    Returns:
        ``out_dir``; load it with ``benchmarks.get("local:" + str(out_dir))``.

    Raises:
        BenchmarkError: not a parsed forum, unknown task, or no held-out test query.

    Example:
        >>> build_from_forum("parsed/beer.stackexchange.com", "bench/beer")  # doctest: +SKIP
        PosixPath('bench/beer')
    """
    import datasets

    if task not in DEFAULT_CANDIDATES:
        raise BenchmarkError(f"unknown task {task!r}; one of {', '.join(DEFAULT_CANDIDATES)}")
    size = int(candidates or DEFAULT_CANDIDATES[task])
    if size < 2:
        raise BenchmarkError(f"candidates must be at least 2, got {size}")
    forum_dir = Path(forum_dir)
    questions = _load_questions(forum_dir)
    rng = np.random.default_rng(seed)
    if task == "answer_selection":
        rows = _answer_selection(questions, size, rng)
    else:
        rows = _question_similarity(questions, _load_duplicates(forum_dir), size, rng)
    if not rows["test"]:
        what = "answered" if task == "answer_selection" else "duplicate"
        raise BenchmarkError(
            f"{forum_dir}: no held-out test question ({what}) to build a {task} benchmark from"
        )
    stats = {split: _split_stats(rows[split]) for split in SPLITS}
    smallest = min(s["candidates_min"] for s in stats.values() if s["queries"])
    from benchmarks.registry import COLUMNS
    from benchmarks.registry import features as column_features

    short = "las" if task == "answer_selection" else "qs"
    with atomic_directory(out_dir, overwrite=True) as tmp:
        splits = [s for s in SPLITS if rows[s]]
        for split in splits:
            datasets.Dataset.from_dict(
                {c: [r[c] for r in rows[split]] for c in COLUMNS}, features=column_features()
            ).save_to_disk(str(tmp / split))
        atomic_write_json(tmp / "benchmark.json", {
            "name": f"{forum_dir.name}-{short}",
            "task": task,
            "main_metric": MAIN_METRIC[task],
            "no_positive": "drop",
            "candidates": size,
            "candidates_note": (
                f"{size} per query" if smallest >= size else
                f"the forum is small: some pools have fewer than {size} candidates "
                f"(smallest {smallest})"
            ),
            "candidate_pool": "the positive(s) plus BM25 neighbours from the whole forum",
            "splits": splits,
            "counts": stats,
            "queries": stats["test"]["queries"],
            "seed": seed,
            "source": {"forum": forum_dir.name, "path": str(forum_dir.resolve())},
        })  # fmt: skip
    return Path(out_dir)
