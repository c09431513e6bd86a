"""Labelled (query, candidate, label) pairs for cascade training and ranking lists for eval.

Training reads a parse output (``adapter-zoo parse``: the forums' title-answer train splits
with random other answers as negatives, as the zoo's own training does); pairs from a
benchmark's ``train`` split come from ``benchmarks.cascade.pairs_from_benchmark``.

Example:
    >>> pairs = pairs_from_parsed("parsed/", negatives=3, seed=0)  # doctest: +SKIP
    >>> pairs[0]  # doctest: +SKIP
    ('Which glass for a stout?', 'A nonic pint ...', 1.0)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from adapter_zoo.documents.forums import forum_dirs
from adapter_zoo.errors import ZooError
from adapter_zoo.training.data import forum_examples, load_pairs

if TYPE_CHECKING:
    import datasets

TRAIN_KINDS = ("title_answer",)


def pairs_from_parsed(
    parsed: str | os.PathLike, *, negatives: int = 3, seed: int = 0, split: str = "train"
) -> list[tuple[str, str, int]]:
    """Pointwise pairs from the title-answer ``split`` of every forum under ``parsed``."""

    rng = np.random.default_rng(seed)
    examples = []
    for forum in forum_dirs(Path(parsed)):
        tables = load_pairs(forum.parent, forum.name, TRAIN_KINDS, split)
        if tables:
            examples += forum_examples(tables, negatives, "bce", rng)
    if not examples:
        raise ZooError(f"{parsed}: no title-answer pairs in the {split!r} split")
    return examples


def ranking_lists(dataset: datasets.Dataset) -> list[tuple[str, list[str]]]:
    """``(query, candidates)`` per row of a benchmark split."""
    return [(q, list(c)) for q, c in zip(dataset["query"], dataset["candidates"])]
