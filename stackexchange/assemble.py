"""Turn the pass's tables into the parsed-forum layout, batch by batch.

Files are read one record batch at a time through ordinary reads (no memory map: mapped
pages would count in the process's RSS); accepted answers and the questions of duplicate
links are joined through a temporary SQLite file (stdlib, on disk, bounded page cache), and
the datasets are written straight to their folders (``stackexchange.store``).
"""

from __future__ import annotations

import collections
import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from stackexchange.posts import QUESTION_SCHEMA
from stackexchange.splits import SPLITS
from stackexchange.store import DatasetWriter, write_dataset_dict_json

MIN_QUERY_CHARS = 10  # shorter titles ("Help!") carry no retrievable meaning
MIN_POSITIVE_CHARS = 20  # shorter bodies/answers are usually links or "see above"
KINDS = ("title_body", "title_answer", "duplicates")
ANSWER_COLUMNS = ("question_id", "answer_id", "body", "score")
FETCH_ROWS = 1_000
PAIR_SCHEMA = pa.schema(
    [
        ("forum", pa.string()),
        ("query", pa.string()),
        ("positive", pa.string()),
        ("query_id", pa.int64()),
        ("positive_id", pa.int64()),
        ("tags", pa.list_(pa.string())),
        ("score", pa.int64()),
    ]
)
SPLIT_PAIR_SCHEMA = PAIR_SCHEMA.append(pa.field("split", pa.string()))
# The parsed question rows, with the accepted answer's text joined in before "split".
QUESTIONS_SCHEMA = QUESTION_SCHEMA.insert(
    QUESTION_SCHEMA.get_field_index("split"), pa.field("accepted_answer", pa.string())
)


TAG_SEPARATOR = "\x1f"  # tags in SQLite: never part of a tag name
SQL_TABLES = """
CREATE TABLE accepted (question_id INTEGER PRIMARY KEY, answer_id INTEGER, body TEXT,
                       score INTEGER);
CREATE TABLE linked (id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT, score INTEGER,
                     split TEXT);
CREATE TEMP TABLE links (duplicate INTEGER, canonical INTEGER);
"""


def open_database(path: Path) -> sqlite3.Connection:
    """The temporary join store: no journal, no fsync (it is thrown away on failure).

    16 KiB pages rather than 4 KiB: rows hold whole post bodies, which then seldom spill
    into overflow pages (inserts and lookups measured about a quarter faster).
    """
    connection = sqlite3.connect(str(path))
    pragmas = "PRAGMA page_size=16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
    connection.executescript(pragmas + SQL_TABLES)
    return connection


def read_batches(path: Path):
    """Yield the record batches of an Arrow IPC file one at a time (plain reads)."""
    reader = pa.ipc.open_file(pa.OSFile(str(path)))
    for index in range(reader.num_record_batches):
        yield reader.get_batch(index)


def _long_enough(array: pa.Array, minimum: int) -> pa.Array:
    return pc.fill_null(pc.greater_equal(pc.utf8_length(array), minimum), False)


class _KindWriter:
    """Pairs of one kind, with their split, into an Arrow IPC file; counts what is dropped."""

    def __init__(self, path: Path, host: str, dropped: collections.Counter, reason: str):
        self.path, self.host, self.rows = path, host, 0
        self.dropped, self.reason = dropped, reason
        self.writer = pa.ipc.new_file(str(path), SPLIT_PAIR_SCHEMA)

    def write(self, query, positive, query_id, positive_id, tags, score, split) -> None:
        columns = [query, positive, query_id, positive_id, tags, score, split]
        columns = [c if isinstance(c, pa.Array) else pa.array(c) for c in columns]
        n = len(columns[0])
        forum = pa.array([self.host] * n, pa.string())
        batch = pa.record_batch([forum, *columns], schema=SPLIT_PAIR_SCHEMA)
        keep = pc.and_(
            _long_enough(batch["query"], MIN_QUERY_CHARS),
            _long_enough(batch["positive"], MIN_POSITIVE_CHARS),
        )
        kept = pc.sum(keep).as_py() or 0
        if n - kept:
            self.dropped[self.reason] += n - kept
        if kept:
            self.writer.write_batch(batch.filter(keep))
            self.rows += kept

    def close(self) -> None:
        self.writer.close()


def _tags(joined: list[str]) -> list[list[str]]:
    return [t.split(TAG_SEPARATOR) if t else [] for t in joined]


def build_pairs(
    question_files: list[Path],
    answer_files: list[Path],
    links: list[tuple[int, int]],
    host: str,
    work: Path,
    out: Path,
    dropped: collections.Counter,
) -> tuple[dict[str, Path], dict[str, int], dict[str, int]]:
    """Write ``out/questions`` and every pair kind (with a split column) to ``work``.

    Returns:
        (kind → pairs file, kind → pairs before capping, split → questions).
    """
    database = open_database(work / "join.sqlite")
    try:
        for path in answer_files:
            for batch in read_batches(path):
                rows = zip(*(batch[n].to_pylist() for n in ANSWER_COLUMNS))
                database.executemany("INSERT OR REPLACE INTO accepted VALUES (?,?,?,?)", rows)
        database.executemany("INSERT INTO links VALUES (?, ?)", links)
        linked = {i for link in links for i in link}
        return _write_all(question_files, database, linked, links, host, work, out, dropped)
    finally:
        database.close()


def _write_all(question_files, database, linked, links, host, work, out, dropped):
    writers = {
        kind: _KindWriter(work / f"{kind}.arrow", host, dropped, f"{kind}_too_short")
        for kind in KINDS
    }
    question_splits = collections.Counter()
    with DatasetWriter(out / "questions", QUESTIONS_SCHEMA) as questions:
        for path in question_files:
            for batch in read_batches(path):
                _questions_batch(
                    batch, database, linked, questions, writers, question_splits, dropped
                )
    _write_duplicates(database, links, writers["duplicates"], dropped)
    for writer in writers.values():
        writer.close()
    return (
        {kind: writer.path for kind, writer in writers.items()},
        {kind: writer.rows for kind, writer in writers.items()},
        {split: question_splits[split] for split in SPLITS},
    )


def _questions_batch(batch, database, linked, questions, writers, question_splits, dropped):
    """One batch of questions → the questions dataset, title_body and title_answer pairs."""
    ids = batch["id"].to_pylist()
    accepted_ids = batch["accepted_answer_id"].to_pylist()
    found = _accepted_answers(database, [i for i, a in zip(ids, accepted_ids) if a is not None])
    # an answer counts only if it is the one the question accepted
    texts = [
        found[i][1] if i in found and found[i][0] == a else None for i, a in zip(ids, accepted_ids)
    ]
    answers = pa.array(texts, pa.string())
    missing = pc.and_(pc.is_valid(batch["accepted_answer_id"]), pc.is_null(answers))
    dropped["accepted_answer_missing"] += pc.sum(missing).as_py() or 0
    columns = [batch[n] for n in ("id", "title", "body", "tags", "score")]
    columns += [batch["accepted_answer_id"], answers, batch["split"]]
    questions.write(pa.record_batch(columns, schema=QUESTIONS_SCHEMA))
    question_splits.update(batch["split"].to_pylist())
    writers["title_body"].write(
        batch["title"], batch["body"], batch["id"], batch["id"], batch["tags"],
        batch["score"], batch["split"],
    )  # fmt: skip
    answered = pc.is_valid(answers)
    if pc.any(answered).as_py():
        chosen = batch.filter(answered)
        chosen_ids = chosen["id"].to_pylist()
        writers["title_answer"].write(
            chosen["title"], answers.filter(answered), chosen["id"],
            chosen["accepted_answer_id"], chosen["tags"],
            pa.array([found[i][2] for i in chosen_ids], pa.int64()), chosen["split"],
        )  # fmt: skip
    if linked:
        _store_linked(batch, ids, linked, database)


def _store_linked(batch: pa.RecordBatch, ids: list[int], linked: set[int], database) -> None:
    """Keep the questions of duplicate links in SQLite (they are few: select them in Arrow
    before turning anything into Python objects)."""
    chosen = [row for row, question_id in enumerate(ids) if question_id in linked]
    if not chosen:
        return
    batch = batch.take(pa.array(chosen, pa.int64()))
    names = ("id", "title", "body", "tags", "score", "split")
    rows = [
        (i, t, b, TAG_SEPARATOR.join(g), s, p)
        for i, t, b, g, s, p in zip(*(batch[n].to_pylist() for n in names))
    ]
    database.executemany("INSERT OR REPLACE INTO linked VALUES (?,?,?,?,?,?)", rows)


def _accepted_answers(database: sqlite3.Connection, question_ids: list[int]) -> dict[int, tuple]:
    """Question id → (answer id, text, score), for the questions of one batch (key lookups)."""
    if not question_ids:
        return {}
    marks = ",".join("?" * len(question_ids))
    query = (
        f"SELECT question_id, answer_id, body, score FROM accepted WHERE question_id IN ({marks})"
    )
    return {row[0]: row[1:] for row in database.execute(query, question_ids)}


def _write_duplicates(database, links, writer: _KindWriter, dropped) -> None:
    if not links:
        return
    cursor = database.execute(
        "SELECT d.title || char(10) || d.body, c.title || char(10) || c.body, d.id, c.id,"
        " d.tags, d.score, c.split FROM links l JOIN linked d ON d.id = l.duplicate"
        " JOIN linked c ON c.id = l.canonical ORDER BY l.rowid"
    )
    resolved = 0
    while rows := cursor.fetchmany(FETCH_ROWS):
        query, positive, dup, canon, tags, score, split = (list(c) for c in zip(*rows))
        writer.write(query, positive, dup, canon, _tags(tags), score, split)
        resolved += len(rows)
    dropped["duplicate_dangling"] += len(links) - resolved


def split_and_cap(pairs_file: Path, max_positives: int, seed: int, out: Path) -> dict[str, int]:
    """Write ``out`` as a DatasetDict of train/dev/test, at most ``max_positives`` pairs in all.

    When a kind has more pairs than the cap, a seeded uniform sample is kept, so the splits
    keep their 80/10/10 proportions.
    """
    total = sum(batch.num_rows for batch in read_batches(pairs_file))
    keep = None
    if total > max_positives:
        keep = np.zeros(total, dtype=bool)
        keep[np.random.default_rng(seed).choice(total, size=max_positives, replace=False)] = True
    writers = {split: DatasetWriter(out / split, PAIR_SCHEMA) for split in SPLITS}
    start = 0
    for batch in read_batches(pairs_file):
        split = batch["split"]
        pairs = batch.drop_columns(["split"])
        chosen = None if keep is None else pa.array(keep[start : start + batch.num_rows])
        start += batch.num_rows
        for name, writer in writers.items():
            mask = pc.equal(split, name)
            writer.write(pairs.filter(mask if chosen is None else pc.and_(mask, chosen)))
    for writer in writers.values():
        writer.close()
    write_dataset_dict_json(out, SPLITS)
    return {split: writer.rows for split, writer in writers.items()}
