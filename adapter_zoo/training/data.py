"""Training data from a parse output folder: forums, pairs, negatives and minibatches."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from adapter_zoo.errors import ZooError

CATALOG_SETS = ("all", "balanced", "largest")


def available_forums(data: Path) -> list[str]:
    """Forum folders (complete ones hold ``stats.json``) in a parse output folder."""
    if not data.is_dir():
        raise ZooError(f"{data}: training data folder not found (run adapter-zoo parse first)")
    return sorted(p.name for p in data.iterdir() if (p / "stats.json").is_file())


def _catalog_set(name: str, data: Path, present: list[str]) -> list[str]:
    if name == "all":
        return present
    try:
        catalog = importlib.import_module("stackexchange.catalog")
        members = list(catalog.forum_set(name))
    except (ModuleNotFoundError, AttributeError):
        raise ZooError(
            f"forum set {name!r} needs stackexchange.catalog, which is missing"
        ) from None
    chosen = [host for host in members if host in present]
    if not chosen:
        raise ZooError(f"{data}: none of the {len(members)} forums of set {name!r} is parsed here")
    return chosen


def resolve_forums(data: str | Path, names: tuple[str, ...]) -> list[str]:
    """Forum folder names in ``data`` for forum names or catalog sets, in the given order.

    Example:
        >>> resolve_forums("parsed", ("beer",))  # doctest: +SKIP
        ['beer.stackexchange.com']
    """
    data = Path(data)
    present = available_forums(data)
    hosts: list[str] = []
    for name in names:
        if name in CATALOG_SETS:
            hosts += _catalog_set(name, data, present)
            continue
        candidates = [name, f"{name}.stackexchange.com", f"{name}.com"]
        match = next((c for c in candidates if c in present), None)
        if match is None:
            known = ", ".join(present) or "none"
            raise ZooError(f"{data}: no parsed forum {name!r} (parsed forums: {known})")
        hosts.append(match)
    return list(dict.fromkeys(hosts))


@dataclass
class PairTable:
    """Positive (query, candidate) pairs of one forum and one pair kind, one split."""

    forum: str
    kind: str
    queries: list[str]
    positives: list[str]

    def __len__(self) -> int:
        return len(self.queries)


def read_split(folder: Path, split: str):
    """One split of a saved DatasetDict; None when the split has no rows.

    Read split by split because datasets 5 saves an empty split without any shard and
    then cannot load the whole DatasetDict back.
    """
    import datasets

    try:
        names = json.loads((folder / "dataset_dict.json").read_text())["splits"]
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        raise ZooError(
            f"{folder}: missing or not a saved DatasetDict (run adapter-zoo parse)"
        ) from None
    if split not in names:
        raise ZooError(f"{folder}: no split {split!r} (has {', '.join(names)})")
    if not any((folder / split).glob("*.arrow")):
        return None
    return datasets.Dataset.load_from_disk(str(folder / split))


def load_pairs(data: str | Path, host: str, kinds: tuple[str, ...], split: str) -> list[PairTable]:
    """The ``split`` pairs of each kind of forum ``host`` (kinds without pairs are skipped)."""
    tables = []
    for kind in kinds:
        rows = read_split(Path(data) / host / kind, split)
        if rows is not None and len(rows):
            tables.append(PairTable(host, kind, list(rows["query"]), list(rows["positive"])))
    return tables


def sample_negatives(table: PairTable, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` random other candidates per row: indices into ``table.positives``, never the row."""
    n = len(table)
    if n < 2:
        raise ZooError(f"forum {table.forum}: {table.kind} needs at least 2 pairs for negatives")
    # Draw from n-1 slots and shift past the row itself, so a negative is never the positive.
    draws = rng.integers(0, n - 1, size=(n, k))
    return draws + (draws >= np.arange(n)[:, None])


def forum_examples(
    tables: list[PairTable], k: int, pairwise: bool, rng: np.random.Generator
) -> list[tuple]:
    """One forum's examples for an epoch, shuffled.

    Pointwise: (query, candidate, label); pairwise: (query, positive, negative).
    """
    examples: list[tuple] = []
    for table in tables:
        negatives = sample_negatives(table, k, rng)
        for i, (query, positive) in enumerate(zip(table.queries, table.positives)):
            if pairwise:
                examples += [(query, positive, table.positives[j]) for j in negatives[i]]
            else:
                examples.append((query, positive, 1.0))
                examples += [(query, table.positives[j], 0.0) for j in negatives[i]]
    order = rng.permutation(len(examples))
    return [examples[i] for i in order]


def round_robin(batches_per_forum: list[list]) -> list:
    """Interleave minibatches one forum at a time (MultiCQA); exhausted forums drop out.

    Example:
        >>> round_robin([["a1", "a2", "a3"], ["b1"], ["c1", "c2"]])
        ['a1', 'b1', 'c1', 'a2', 'c2', 'a3']
    """
    order = []
    longest = max((len(b) for b in batches_per_forum), default=0)
    for position in range(longest):
        order += [batches[position] for batches in batches_per_forum if position < len(batches)]
    return order


def epoch_batches(
    forum_tables: dict[str, list[PairTable]],
    *,
    batch_size: int,
    k: int,
    pairwise: bool,
    seed: int,
    epoch: int,
) -> list[list[tuple]]:
    """All minibatches of one epoch: each from one forum, forums in round-robin order."""
    rng = np.random.default_rng([seed, epoch])
    per_forum = []
    for host in forum_tables:
        examples = forum_examples(forum_tables[host], k, pairwise, rng)
        per_forum.append(
            [examples[i : i + batch_size] for i in range(0, len(examples), batch_size)]
        )
    return round_robin(per_forum)


def dev_lists(
    forum_tables: dict[str, list[PairTable]], *, queries: int, candidates: int, seed: int
) -> list[tuple[str, list[str]]]:
    """Fixed dev ranking lists: (query, [positive, negative, ...]) with sampled negatives."""
    rng = np.random.default_rng([seed, 10_000])
    lists = []
    for tables in forum_tables.values():
        if not tables:
            continue
        table = tables[0]  # the first pair kind (title-body by default) measures dev MAP
        if len(table) < 2:
            continue
        picked = rng.permutation(len(table))[:queries]
        size = min(candidates - 1, len(table) - 1)
        for i in picked:
            others = rng.choice(len(table) - 1, size=size, replace=False)
            others = others + (others >= i)
            lists.append(
                (table.queries[i], [table.positives[i]] + [table.positives[j] for j in others])
            )
    return lists
