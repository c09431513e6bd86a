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

import os
from pathlib import Path

import numpy as np

from benchmarks.errors import BenchmarkError
from stackexchange.errors import unknown_name
from stackexchange.io import (
    atomic_directory,
    atomic_write_json,
    output_lock,
    refuse_input_inside_output,
)
from stackexchange.jsontext import read_json_object
from stackexchange.lists import (
    BENCHMARK_FILE,
    SPLITS,
    answer_selection_lists,
    question_similarity_lists,
)
from stackexchange.numbers import MAX_LIST, check_number
from stackexchange.paths import check_output_folder, refuse_output_inside_input

DEFAULT_CANDIDATES = {"answer_selection": 100, "question_similarity": 20}
MAIN_METRIC = {"answer_selection": "p@1", "question_similarity": "map"}


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
    from stackexchange.store import read_dataset, read_split_names

    path = folder / "duplicates"
    names = read_split_names(path, BenchmarkError)
    rows = []
    for name in names:
        if any((path / name).glob("*.arrow")):
            rows += read_dataset(path / name, BenchmarkError).to_list()
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


def is_built_benchmark(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is a benchmark :func:`build_from_forum` wrote (its benchmark.json)."""
    try:
        manifest = read_json_object(Path(folder) / BENCHMARK_FILE, BenchmarkError)
    except (OSError, BenchmarkError):  # broken or missing: a folder the build did not write
        return False
    source = manifest.get("source")
    return (
        manifest.get("task") in DEFAULT_CANDIDATES
        and isinstance(source, dict)
        and {"forum", "path"} <= set(source)
    )


def files_not_built(folder: str | os.PathLike) -> list[str]:
    """Files and folders in a built benchmark ``folder`` that :func:`build_from_forum` did
    not write (a user's own, added since): those its ``benchmark.json`` does not list.

    Benchmarks built before the list was recorded count their splits' folders as theirs.

    Example:
        >>> files_not_built("bench/beer")  # doctest: +SKIP
        ['notes.md']
    """
    folder = Path(folder)
    manifest = read_json_object(folder / BENCHMARK_FILE, BenchmarkError, "the descriptor")
    listed = manifest.get("files")
    if isinstance(listed, list):
        known = {str(f) for f in listed}
        parents = {p for f in known for p in _parents(f)}
        return [
            relative
            for relative in _relatives(folder)
            if relative not in known and relative not in parents
        ]
    splits = {str(s) for s in manifest.get("splits") or []}
    return [
        relative
        for relative in _relatives(folder)
        if relative != BENCHMARK_FILE and relative.split("/")[0] not in splits
    ]


def _relatives(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def _parents(relative: str) -> list[str]:
    parts = relative.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def build_from_forum(
    forum_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    task: str = "answer_selection",
    candidates: int | None = None,
    seed: int = 0,
    overwrite: bool = False,
) -> Path:
    """Build a benchmark from ``forum_dir`` (a parsed forum) into ``out_dir``, atomically.

    Args:
        forum_dir: ``DIR/<host>/`` written by ``adapter-zoo parse``.
        out_dir: the benchmark folder to create; one this function wrote is replaced, any
            other non-empty ``out_dir`` only with ``overwrite``.
        task: ``answer_selection`` or ``question_similarity``.
        candidates: pool size (default 100 for answer selection, 20 for question similarity).
        seed: shuffles each candidate list.
        overwrite: replace ``out_dir`` even when it is not a benchmark built here.

    Returns:
        ``out_dir``; load it with ``benchmarks.get("local:" + str(out_dir))``.

    Raises:
        BenchmarkError: not a parsed forum, unknown task, no held-out test query, the forum
            inside (or equal to) ``out_dir`` or ``out_dir`` inside the forum, ``out_dir``
            below a file or not writable, or ``out_dir`` holding something else.

    Example:
        >>> build_from_forum("parsed/beer.stackexchange.com", "bench/beer")  # doctest: +SKIP
        PosixPath('bench/beer')
    """
    import datasets

    if task not in DEFAULT_CANDIDATES:
        raise unknown_name("task", task, DEFAULT_CANDIDATES, BenchmarkError)
    size = DEFAULT_CANDIDATES[task] if candidates is None else candidates
    check_number("candidates", size, integer=True, low=2, high=MAX_LIST, error=BenchmarkError)
    check_number("seed", seed, integer=True, low=0, high=2**32 - 1, error=BenchmarkError)
    forum_dir = Path(forum_dir)
    refuse_input_inside_output([forum_dir], out_dir, BenchmarkError)
    # a benchmark inside the forum folder would go with it when the forum is parsed again
    # (parse --overwrite replaces the folder whole)
    refuse_output_inside_input([forum_dir], out_dir, BenchmarkError)
    # one build at a time into out_dir: a second is refused instead of replacing the first's
    with output_lock(out_dir, error=BenchmarkError):
        check_output_folder(
            out_dir, ours=is_built_benchmark, overwrite=overwrite, what="a benchmark",
            error=BenchmarkError,
        )  # fmt: skip
        if not overwrite and is_built_benchmark(out_dir) and files_not_built(out_dir):
            raise BenchmarkError(
                f"{out_dir}: a benchmark built by adapter-zoo, but it also holds "
                f"{Path(out_dir) / files_not_built(out_dir)[0]}, which the build did not write; "
                "a rebuild would replace it: move it away or pass --overwrite"
            )
        questions = _load_questions(forum_dir)
        rng = np.random.default_rng(seed)
        if task == "answer_selection":
            rows = answer_selection_lists(questions, size, rng)
        else:
            rows = question_similarity_lists(questions, _load_duplicates(forum_dir), size, rng)
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
            files = [f for f in _relatives(tmp) if (tmp / f).is_file()] + [BENCHMARK_FILE]
            atomic_write_json(tmp / BENCHMARK_FILE, {
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
                # what a rebuild may replace: a file added since is the user's
                "files": sorted(files),
            })  # fmt: skip
    return Path(out_dir)
