"""Dev ranking lists made like the held-out benchmarks: the forum's own dev questions.

Each dev question with an accepted answer (title + body) is ranked against its answer and the
accepted answers of its most BM25-similar questions, exactly as ``build-benchmark`` builds the
LAS-style test sets (``stackexchange.lists``). Selecting on these lists picks the model that
is best on the kind of list it will be judged on; random negatives are too easy to tell a
good sentence encoder from a better one.

A folder made from a benchmark (``benchmarks.to_parse_folder``) has no forum questions; it
holds the benchmark's own dev lists instead (``dev_lists/``: query, candidates with the
positive first), which are read as they are.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from adapter_zoo.errors import ZooError

DEV_CANDIDATES = 20
DEV_LISTS = "dev_lists"  # a benchmark's dev split, written by benchmarks.to_parse_folder
_QUESTION_COLUMNS = {"id", "title", "body", "accepted_answer_id", "accepted_answer", "split"}


def forum_dev_lists(
    data: str | Path, hosts: list[str], *, candidates: int = DEV_CANDIDATES, seed: int = 0
) -> list[tuple[str, list[str]]]:
    """(query, [positive, negative, ...]) for every answered dev question of ``hosts``.

    Example:
        >>> lists = forum_dev_lists("parsed", ["beer.stackexchange.com"])  # doctest: +SKIP
        >>> len(lists[0][1])  # doctest: +SKIP
        20
    """
    import datasets

    from stackexchange.lists import answer_selection_lists

    lists = []
    for host in hosts:
        given = Path(data) / host / DEV_LISTS
        if given.is_dir():
            lists += [(r["query"], r["candidates"]) for r in datasets.load_from_disk(str(given))]
            continue
        folder = Path(data) / host / "questions"
        try:
            questions = datasets.load_from_disk(str(folder))
        except FileNotFoundError:
            raise ZooError(f"{folder}: missing (run adapter-zoo parse)") from None
        missing = sorted(_QUESTION_COLUMNS - set(questions.column_names))
        if missing:
            raise ZooError(f"{folder}: missing columns {missing}")
        rng = np.random.default_rng(seed)
        rows = answer_selection_lists(questions.to_list(), candidates, rng)["dev"]
        for row in rows:
            positive = row["labels"].index(1)
            others = [c for i, c in enumerate(row["candidates"]) if i != positive]
            lists.append((row["query"], [row["candidates"][positive], *others]))
    return lists
