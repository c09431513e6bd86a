"""The target's own held-out lists: which threads ``adapt`` trains on, which select a
training run's best step, and which decide between the candidates.

Threads are assigned by a seeded hash of their id (the same on every machine and run):
:data:`DECISION_SHARE` of them give the decision lists (at most
:data:`MAX_DECISION_THREADS`), :data:`SELECTION_SHARE` the lists a training run selects its
step on, and the rest are trained on. No candidate ever trains or selects on a decision
thread, so the decision compares the candidates on threads none of them has seen.

Every held-out thread gives a ranking list, each built as the forum's LAS-style test sets are
(``stackexchange.lists``), with the target's own texts as candidates:

* ``answer``: the question (title + body) → its accepted answer among the accepted answers of
  the most BM25-similar other questions;
* ``body``: the title → its body among the bodies of the most BM25-similar other threads;
* ``duplicate``: a question closed as a duplicate → its canonical question among the most
  BM25-similar other questions;
* a target of texts only decides and selects on its objectives' pseudo-queries instead
  (:mod:`~adapter_zoo.adapt.objective_pairs`; a kind per objective: ``ssp``, ``keywords``,
  ...): each example's A → its B among its own negatives and the most BM25-similar B of the
  part's other documents.

The training folder holds, beside the threads' pairs, the objectives' pairs of the training
documents (``objectives/``: A → B with the objective's hard negative in a ``negative``
column); for a target of texts only they are its whole training signal.

Given the base's embedder (``embed``: the decision lists ``adapt`` decides on), half of each
list's negatives are the zero-shot base's nearest texts instead
(:mod:`adapter_zoo.adapt.negatives`), so the lists lean towards neither BM25 nor a model of
the target's phrasing.

Example:
    >>> from adapter_zoo.adapt.threads import Thread
    >>> parts = assign([Thread(i, "t", "b") for i in range(1000)])
    >>> parts.count("decision"), parts.count("dev")  # about 25% and 12%, fixed by the ids
    (235, 123)
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from adapter_zoo.adapt.negatives import remix
from adapter_zoo.adapt.objective_pairs import (
    OBJECTIVE_PAIRS,
    PER_QUESTION_PAIR,
    objective_examples,
    structure,
)
from adapter_zoo.adapt.threads import MIN_BODY_CHARS, MIN_TITLE_CHARS, Target, Thread
from adapter_zoo.errors import ZooError
from adapter_zoo.objectives import objective_names
from adapter_zoo.training.selection import DEV_CANDIDATES, DEV_LISTS
from stackexchange.lists import (
    BM25Neighbours,
    answer_selection_lists,
    question_similarity_lists,
)
from stackexchange.parse import STATS_FILE
from stackexchange.text import question_text

DECISION = "decision"
SELECTION = "dev"  # the training run's dev split
TRAIN = "train"
DECISION_SHARE = 0.25
SELECTION_SHARE = 0.12
# Hundreds of lists decide; past that, threads are worth more as training data.
MAX_DECISION_THREADS = 400
CANDIDATES = DEV_CANDIDATES  # per list: a decision list is sized as a training run's dev list
# Pseudo-queries made of terms drawn from their own positive: BM25 finds those by
# construction, so lists of them rank BM25 and its fusions first whatever the target's real
# queries would (benchmarks/results/insuranceqa.json, its note: the lists by kind). They train; they
# judge only where a target's texts allow no other objective.
LEXICAL_QUERIES = ("keywords",)
LIST_KINDS = ("answer", "body", "duplicate", *objective_names())
OBJECTIVES_KIND = "objectives"  # the training folder's pair kind of the objectives' pairs
# The objectives' pairs' ids, past the threads' and their answers' (ANSWER_ID_OFFSET).
OBJECTIVE_ID_OFFSET = 1 << 41
_SALT = b"adapter-zoo adapt held-out"
# A thread's accepted answer needs an id of its own in the pair tables; offset from the
# thread's id so that the two never meet.
ANSWER_ID_OFFSET = 1 << 40


def bucket(thread_id: int) -> float:
    """A thread's place in [0, 1): a hash of its id, the same on every machine."""
    digest = hashlib.blake2b(str(thread_id).encode(), digest_size=8, key=_SALT).digest()
    return int.from_bytes(digest, "big") / 2**64


def assign(threads: list[Thread]) -> list[str]:
    """Each thread's part: :data:`DECISION`, :data:`SELECTION` or :data:`TRAIN`."""
    places = [bucket(t.id) for t in threads]
    cut = DECISION_SHARE
    decided = sorted(p for p in places if p < DECISION_SHARE)
    if len(decided) > MAX_DECISION_THREADS:
        cut = decided[MAX_DECISION_THREADS]
    low, high = DECISION_SHARE, DECISION_SHARE + SELECTION_SHARE
    return [DECISION if p < cut else SELECTION if low <= p < high else TRAIN for p in places]


@dataclass
class RankingLists:
    """Ranking lists with one or more positives each: ``kinds[i]`` (one of
    :data:`LIST_KINDS`), ``queries[i]``, ``candidates[i]``, ``labels[i]`` (1 = relevant)."""

    kinds: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    candidates: list[list[str]] = field(default_factory=list)
    labels: list[list[int]] = field(default_factory=list)
    # each candidate's source (positive, bm25, base) in lists with negatives of both sources
    sources: list[list[str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.queries)

    def add(self, kind: str, query: str, candidates: list[str], labels: list[int]) -> None:
        self.kinds.append(kind)
        self.queries.append(query)
        self.candidates.append(list(candidates))
        self.labels.append(list(labels))

    def pairs(self) -> list[tuple[str, str]]:
        return [(q, c) for q, cands in zip(self.queries, self.candidates) for c in cands]

    def counts(self) -> dict[str, int]:
        return {kind: self.kinds.count(kind) for kind in LIST_KINDS if kind in self.kinds}

    def texts(self) -> list[str]:
        """Every distinct text of the lists (queries and candidates), sorted: what one scoring
        reads."""
        return sorted({t for q, cands in zip(self.queries, self.candidates) for t in (q, *cands)})

    def subset(self, indices) -> RankingLists:
        """The lists at ``indices``, in their order."""
        out = RankingLists()
        for i in indices:
            out.add(self.kinds[i], self.queries[i], self.candidates[i], self.labels[i])
            if self.sources:
                out.sources.append(self.sources[i])
        return out

    def positive_first(self) -> list[tuple[str, list[str]]]:
        """(query, [positive, others...]) for lists with one positive: training's dev form."""
        out = []
        for query, candidates, labels in zip(self.queries, self.candidates, self.labels):
            if sum(labels) == 1:
                positive = labels.index(1)
                rest = [c for i, c in enumerate(candidates) if i != positive]
                out.append((query, [candidates[positive], *rest]))
        return out


def _question(thread: Thread) -> str:
    return question_text(thread.title, thread.body)


def _has_body_pair(thread: Thread) -> bool:
    return len(thread.title) >= MIN_TITLE_CHARS and len(thread.body) >= MIN_BODY_CHARS


class _InOrder:
    """A generator whose shuffle keeps the order: a builder's pool comes back positive
    first, then BM25's nearest, best first."""

    def shuffle(self, items) -> None:
        return None


def held_out_lists(
    target: Target, parts: list[str], part: str, *, seed: int = 0, embed=None, subset=None
) -> RankingLists:
    """The ranking lists of the threads assigned ``part``; candidates from every thread.

    Args:
        embed: the base's embedder (texts -> unit rows, each text encoded once:
            :class:`~adapter_zoo.adapt.negatives.CachedEmbedder`); with it, half of each
            list's negatives are the base's nearest texts (see the module), else all are
            BM25's.
        subset: with ``embed``, only the lists at these indices of the lists without it
            (the same lists in the same order; the base embeds only their texts).

    A target of texts only decides and selects on :func:`objective_lists`, where its texts
    give any.
    """
    if target.texts_only:
        if embed is None:
            found = objective_lists(target, parts, part, seed=seed)
        else:
            ordered = objective_lists(target, parts, part, seed=seed, rng=_InOrder())
            found = _mixed_lists(ordered, seed, embed, subset)
        if len(found):
            return found
    if part != DECISION:
        # the training folder holds these lists: no decision thread's text, not even as a
        # negative
        kept = [(t, p) for t, p in zip(target.threads, parts) if p != DECISION]
        ids = {t.id for t, _ in kept}
        target = dataclasses.replace(
            target, threads=[t for t, _ in kept],
            duplicates=[(a, b) for a, b in target.duplicates if a in ids and b in ids],
        )  # fmt: skip
        parts = [p for _, p in kept]
    if embed is not None:
        return _mixed_lists(_bm25_lists(target, parts, part, _InOrder()), seed, embed, subset)
    return _bm25_lists(target, parts, part, np.random.default_rng(seed))


def _mixed_lists(ordered: RankingLists, seed, embed, subset) -> RankingLists:
    """``ordered`` (each list positive first, then its negatives, BM25's best first) with
    half of each list's negatives the base's nearest texts."""
    if subset is not None:
        ordered = ordered.subset(subset)
    raw = [(q, [c for c, y in zip(cands, labels) if y], [c for c, y in zip(cands, labels) if not y])
           for q, cands, labels in zip(ordered.queries, ordered.candidates, ordered.labels)]  # fmt: skip
    remix(raw, embed, np.random.default_rng(seed))
    lists = RankingLists()
    for kind, (query, candidates, labels, sources) in zip(ordered.kinds, raw):
        lists.add(kind, query, candidates, labels)
        lists.sources.append(sources)
    return lists


def _bm25_lists(target, parts, part, rng) -> RankingLists:
    lists = RankingLists()
    threads = target.threads
    rows = [
        {"id": t.id, "title": t.title, "body": t.body, "accepted_answer": t.answer,
         "accepted_answer_id": t.id + ANSWER_ID_OFFSET,
         "split": "test" if p == part else "train"}
        for t, p in zip(threads, parts)
    ]  # fmt: skip
    if target.answered:
        for row in answer_selection_lists(rows, CANDIDATES, rng)["test"]:
            lists.add("answer", row["query"], row["candidates"], row["labels"])
    with_body = [i for i, t in enumerate(threads) if _has_body_pair(t)]
    asked = [i for i in with_body if parts[i] == part]
    if asked and len(with_body) > 1:
        bodies = BM25Neighbours([threads[i].body for i in with_body])
        near = bodies.top([threads[i].title for i in asked], CANDIDATES)
        position = {i: n for n, i in enumerate(with_body)}
        for i, found in zip(asked, near):
            own = position[i]
            pool = [own, *[j for j in found if j != own][: CANDIDATES - 1]]
            rng.shuffle(pool)
            lists.add("body", threads[i].title, [threads[with_body[j]].body for j in pool],
                      [int(j == own) for j in pool])  # fmt: skip
    if target.duplicates:
        links = [{"query_id": a, "positive_id": b} for a, b in target.duplicates]
        for row in question_similarity_lists(rows, links, CANDIDATES, rng)["test"]:
            lists.add("duplicate", row["query"], row["candidates"], row["labels"])
    return lists


def objective_lists(
    target: Target, parts: list[str], part: str, *, seed: int = 0, rng=None
) -> RankingLists:
    """Ranking lists from the objectives' examples of ``part``'s documents: about one a
    document, the usable objectives but :data:`LEXICAL_QUERIES` taking turns (those only
    where no other is usable); each A → its B among its negatives and the B of the part's
    other documents that BM25 finds nearest A (``rng`` shuffles each list; by default one
    seeded by ``seed``)."""
    lists = RankingLists()
    documents = sum(p == part for p in parts)
    usable = structure(target)["objectives"]
    names = [n for n in usable if n not in LEXICAL_QUERIES] or usable
    if not names or not documents:
        return lists
    share = max(1, -(-documents // len(names)))
    rng = np.random.default_rng(seed) if rng is None else rng
    found_by_name = objective_examples(target, parts, part, seed=seed, limit=share, names=names)
    for name, found in found_by_name.items():
        if len(found) < 2:
            continue
        positives = [e.positive for e in found]
        near = BM25Neighbours(positives).top([e.anchor for e in found], CANDIDATES)
        for example, nearest in zip(found, near):
            others = [positives[j] for j in nearest
                      if found[j].document_id != example.document_id]  # fmt: skip
            pool = list(dict.fromkeys([example.positive, *example.negatives, *others]))
            pool = pool[:CANDIDATES]
            if len(pool) < 2:
                continue
            rng.shuffle(pool)
            lists.add(name, example.anchor, pool, [int(c == example.positive) for c in pool])
    return lists


def _objective_rows(target: Target, parts: list[str], question_pairs: int, seed: int):
    """split -> the objectives' (objective, A, B, negative) rows of its documents (the
    training documents': runs select on the selection lists); a target with questions gets
    up to :data:`PER_QUESTION_PAIR` of them per one of its ``question_pairs``, shared by the
    objectives."""
    names = structure(target)["objectives"]
    if not names:
        return {}
    shared = int(question_pairs * PER_QUESTION_PAIR) // len(names)
    limit = OBJECTIVE_PAIRS if target.texts_only else max(1, shared)
    found = objective_examples(target, parts, TRAIN, seed=seed, limit=limit)
    # an example's hard negative (its own document's) where it has one; else none, and the
    # trainer mines one as for every pair (a BM25 neighbour's B: closer than a random
    # document's easy one)
    rows = [(name, e.anchor, e.positive, e.negatives[0] if e.hard else "")
            for name, examples in found.items() for e in examples]  # fmt: skip
    return {TRAIN: rows}


def _write_objectives(forum: Path, name: str, rows: dict) -> dict[str, int]:
    """The objectives' pair folder: the pair columns, the objective in ``tags``, and the
    example's hard negative (``""``: none, the trainer mines one) in ``negative``; split ->
    rows written."""
    # pyarrow on first use: importing this module stays light
    import pyarrow as pa

    # stackexchange.assemble, .store load pyarrow: importing this module stays light
    from stackexchange.assemble import PAIR_SCHEMA
    from stackexchange.store import DatasetWriter, write_dataset_dict_json

    schema = PAIR_SCHEMA.append(pa.field("negative", pa.string()))
    counts, number = {}, OBJECTIVE_ID_OFFSET
    for split in ("train", "dev", "test"):
        found = rows.get(split, [])
        ids = list(range(number, number + len(found)))
        number += len(found)
        columns = [[name] * len(found), [r[1] for r in found], [r[2] for r in found], ids, ids,
                   [[r[0]] for r in found], [0] * len(found), [r[3] for r in found]]  # fmt: skip
        with DatasetWriter(forum / OBJECTIVES_KIND / split, schema) as writer:
            writer.write(pa.record_batch([pa.array(c, f.type) for c, f in zip(columns, schema)],
                                         schema=schema))  # fmt: skip
        counts[split] = len(found)
    write_dataset_dict_json(forum / OBJECTIVES_KIND, ("train", "dev", "test"))
    return counts


def write_training_folder(
    target: Target, parts: list[str], out: Path, selection: list | None = None, seed: int = 0
) -> Path:
    """A parse output folder ``out/<name>/`` holding the target's training and selection
    threads only (``adapter-zoo train --data out`` reads it as a parsed forum): pair tables
    with ``train`` and ``dev`` splits, the questions table, and the selection lists as the
    run's dev lists (``dev_lists/``; ``selection``: those lists, already built, in
    :meth:`RankingLists.positive_first` form). Decision threads are not written at all.
    """
    # datasets, pyarrow on first use: importing this module stays light
    import datasets
    import pyarrow as pa

    # stackexchange.assemble, .store load pyarrow: importing this module stays light
    from stackexchange.assemble import PAIR_SCHEMA, QUESTIONS_SCHEMA
    from stackexchange.store import DatasetWriter, write_dataset_dict_json

    forum = Path(out) / target.name
    kept = [(t, p) for t, p in zip(target.threads, parts) if p != DECISION]
    by_id = {t.id: (t, p) for t, p in kept}
    pairs: dict[str, dict[str, list]] = {}

    def add(kind, split, query, positive, query_id, positive_id):
        table = pairs.setdefault(kind, {}).setdefault(split, [])
        table.append((target.name, query, positive, query_id, positive_id, [], 0))

    for thread, split in kept:
        if _has_body_pair(thread):
            add("title_body", split, thread.title, thread.body, thread.id, thread.id)
        if thread.answer and len(thread.title) >= MIN_TITLE_CHARS:
            add("title_answer", split, thread.title, thread.answer, thread.id,
                thread.id + ANSWER_ID_OFFSET)  # fmt: skip
    for duplicate, canonical in target.duplicates:
        if duplicate in by_id and canonical in by_id:
            (dup, split), (canon, _) = by_id[duplicate], by_id[canonical]
            add("duplicates", split, _question(dup), _question(canon), dup.id, canon.id)
    question_pairs = sum(len(kind.get(TRAIN, [])) for kind in pairs.values())
    objective_rows = _objective_rows(target, parts, question_pairs, seed)
    if target.texts_only and len(objective_rows.get(TRAIN, [])) > 1:
        pairs.pop("title_body", None)  # the objectives are a texts-only target's whole signal
    counts = {}
    for kind in ("title_body", "title_answer", "duplicates"):
        counts[kind] = {}
        for split in ("train", "dev", "test"):
            rows = pairs.get(kind, {}).get(split, [])
            columns = list(zip(*rows)) if rows else [[] for _ in PAIR_SCHEMA.names]
            with DatasetWriter(forum / kind / split, PAIR_SCHEMA) as writer:
                writer.write(pa.record_batch(list(columns), schema=PAIR_SCHEMA))
            counts[kind][split] = len(rows)
        write_dataset_dict_json(forum / kind, ("train", "dev", "test"))
    counts[OBJECTIVES_KIND] = _write_objectives(forum, target.name, objective_rows)
    question_rows = [
        (t.id, t.title, t.body, [], 0, t.id + ANSWER_ID_OFFSET if t.answer else None,
         t.answer, split)
        for t, split in kept
    ]  # fmt: skip
    columns = list(zip(*question_rows)) if question_rows else [[] for _ in QUESTIONS_SCHEMA]
    with DatasetWriter(forum / "questions", QUESTIONS_SCHEMA) as writer:
        writer.write(pa.record_batch(list(columns), schema=QUESTIONS_SCHEMA))
    if selection is None:
        selection = held_out_lists(target, parts, SELECTION).positive_first()
    if not selection:
        raise ZooError(
            f"adapt: the target has no thread to select a training run on ({len(kept)} threads)"
        )
    dev = datasets.Dataset.from_dict(
        {"query": [q for q, _ in selection], "candidates": [c for _, c in selection]}
    )
    dev.save_to_disk(str(forum / DEV_LISTS))
    trained = collections.Counter(row[0] for row in objective_rows.get(TRAIN, []))
    stats = {"forum": target.name, "questions": len(kept), "pairs": counts, "adapt": True,
             "structure": structure(target), "objectives": dict(sorted(trained.items()))}  # fmt: skip
    (forum / STATS_FILE).write_text(json.dumps(stats, indent=2), encoding="utf-8")
    return forum
