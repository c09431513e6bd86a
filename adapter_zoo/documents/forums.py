"""Parsed forums as ``adapt`` and the objectives read them: their questions outside the
evaluation split, dropped while the Arrow table is read, before any text of them reaches
Python.

Example:
    >>> [f.name for f in forum_dirs(Path("parsed/"))]  # doctest: +SKIP
    ['ai.stackexchange.com', 'beer.stackexchange.com']
    >>> next(forum_questions(Path("parsed/beer.stackexchange.com"), ["id"]))  # doctest: +SKIP
    {'id': [3, 4, ...]}
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from adapter_zoo.errors import ZooError
from stackexchange.parse import STATS_FILE

EVALUATION_SPLIT = "test"  # never read: the forum's held-out test questions


def forum_dirs(parsed: Path) -> list[Path]:
    """``parsed`` itself when it is one forum folder, else every forum folder inside it."""
    if (parsed / STATS_FILE).is_file():
        return [parsed]
    forums = sorted(p for p in parsed.glob("*") if (p / STATS_FILE).is_file())
    if not forums:
        raise ZooError(f"{parsed}: no parsed forum (no stats.json); run adapter-zoo parse first")
    return forums


def forum_questions(forum: Path, columns: list[str]) -> Iterator[dict[str, list]]:
    """``columns`` of the forum's questions outside :data:`EVALUATION_SPLIT` (one dict of
    column lists; a generator, so nothing is read before it is asked for)."""
    # pyarrow on first use: importing this module stays light
    import pyarrow.compute as pc

    # stackexchange.store loads pyarrow: importing this module stays light
    from stackexchange.store import read_dataset

    table = read_dataset(forum / "questions", ZooError).data.table
    table = table.filter(pc.not_equal(table["split"], EVALUATION_SPLIT))
    yield table.select(columns).to_pydict()
