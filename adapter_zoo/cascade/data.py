"""Labelled (query, candidate, label) pairs for cascade training and ranking lists for eval.

Training reads either a parse output (``adapter-zoo parse``: the forums' title-answer train
splits with random other answers as negatives, as the zoo's own training does) or a
benchmark's ``train`` split. A benchmark built from a forum (``local:DIR``) has only a test
split; it names its parsed forum, so training falls back to that forum's train split, which
``stackexchange`` keeps disjoint from the test questions the benchmark was built from.

Example:
    >>> pairs = pairs_from_parsed("parsed/", negatives=3, seed=0)  # doctest: +SKIP
    >>> pairs[0]  # doctest: +SKIP
    ('Which glass for a stout?', 'A nonic pint ...', 1.0)
"""

from __future__ import annotations

import json
from pathlib import Path

from adapter_zoo.errors import ZooError

TRAIN_KINDS = ("title_answer",)


def forum_dirs(parsed: Path) -> list[Path]:
    """``parsed`` itself when it is one forum folder, else every forum folder inside it."""
    if (parsed / "stats.json").is_file():
        return [parsed]
    forums = sorted(p for p in parsed.glob("*") if (p / "stats.json").is_file())
    if not forums:
        raise ZooError(f"{parsed}: no parsed forum (no stats.json); run adapter-zoo parse first")
    return forums


def pairs_from_parsed(parsed, *, negatives: int = 3, seed: int = 0, split: str = "train"):
    """Pointwise pairs from the title-answer ``split`` of every forum under ``parsed``."""
    import numpy as np

    from adapter_zoo.training.data import forum_examples, load_pairs

    rng = np.random.default_rng(seed)
    examples = []
    for forum in forum_dirs(Path(parsed)):
        tables = load_pairs(forum.parent, forum.name, TRAIN_KINDS, split)
        if tables:
            examples += forum_examples(tables, negatives, "bce", rng)
    if not examples:
        raise ZooError(f"{parsed}: no title-answer pairs in the {split!r} split")
    return examples


def pairs_from_benchmark(name: str, *, data_dir=None, negatives: int = 3, seed: int = 0):
    """Pairs from benchmark ``name``'s train split, or its source forum's train split."""
    import benchmarks

    bench = benchmarks.get(name)
    if "train" in bench.splits:
        rows = bench.load("train", data_dir)
        return [
            (query, candidate, float(label > 0))
            for query, candidates, labels in zip(rows["query"], rows["candidates"], rows["labels"])
            for candidate, label in zip(candidates, labels)
        ]
    source = _source_forum(bench)
    if source is None:
        raise ZooError(
            f"benchmark {name!r} has no train split (splits: {', '.join(bench.splits)}) and "
            "names no parsed forum; train with --data PARSED_DIR"
        )
    return pairs_from_parsed(source, negatives=negatives, seed=seed)


def _source_forum(bench) -> Path | None:
    path = getattr(bench, "path", "")
    if not path:
        return None
    descriptor = Path(path) / "benchmark.json"
    try:
        source = json.loads(descriptor.read_text(encoding="utf-8")).get("source")
    except (OSError, json.JSONDecodeError):
        return None
    return Path(source) if source and (Path(source) / "stats.json").is_file() else None


def ranking_lists(dataset) -> list[tuple[str, list[str]]]:
    """``(query, candidates)`` per row of a benchmark split."""
    return [(q, list(c)) for q, c in zip(dataset["query"], dataset["candidates"])]
