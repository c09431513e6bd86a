"""Fine-tuning on a benchmark's train split through ``adapter_zoo.training.train``.

``adapter_zoo.training`` reads a parse output folder, so ``to_parse_folder`` writes the
benchmark's train (and dev) split in that layout: ``OUT/<benchmark>/stats.json``, a
``title_body`` DatasetDict (train/dev/test) of the positive (query, candidate) pairs, and
``dev_lists`` (the dev split's own ranking lists, which bi-encoder training selects on).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from adapter_zoo.training.selection import DEV_CANDIDATES, DEV_LISTS
from benchmarks.errors import BenchmarkError
from stackexchange.errors import unknown_name
from stackexchange.io import atomic_directory, atomic_write_json
from stackexchange.parse import STATS_FILE

PAIR_COLUMNS = ("forum", "query", "positive", "query_id", "positive_id", "tags", "score")
MODES = ("full", "adapter", "tanda")
# Under the zoo (hidden, so never listed): a fine-tuning's copy of its benchmark's pairs,
# named by the entry, so the same command again trains from the same folder.
WORK_FOLDER = ".finetune"
# What identifies a fine-tuning run in its card before its data folder exists.
SAME_RUN_KEYS = ("mode", "encoder", "data", "forums", "name", "base_model", "pair_kinds",
                 "init_from", "lr", "patience", "seed", "max_steps")  # fmt: skip


def _positive_pairs(dataset, forum: str) -> dict[str, list]:
    columns = {c: [] for c in PAIR_COLUMNS}
    for row in dataset:
        for cid, text, label in zip(row["candidate_ids"], row["candidates"], row["labels"]):
            if label > 0:
                for key, value in zip(
                    PAIR_COLUMNS, (forum, row["query"], text, row["query_id"], cid, [], label)
                ):
                    columns[key].append(value)
    return columns


def _dev_lists(dataset) -> dict[str, list]:
    """The dev split's lists with the positive first, one list per positive (a dev list
    holds a single positive: ``adapter_zoo.training.selection.dev_metrics``), against the
    first ``DEV_CANDIDATES - 1`` negatives in the benchmark's own order; lists with no
    negative rank nothing and are left out.

    Selection scores every list at each of a run's evaluations: InsuranceQA's 500-answer
    valid pools would read some 26,000 answers each time (about 9 minutes on 2 cores, seven
    times a run); a pool is in its retriever's order, so its first negatives are the hardest.
    """
    columns = {"query": [], "candidates": []}
    for row in dataset:
        negatives = [c for c, label in zip(row["candidates"], row["labels"]) if label <= 0]
        negatives = negatives[: DEV_CANDIDATES - 1]
        for text, label in zip(row["candidates"], row["labels"]):
            if label > 0 and negatives:
                columns["query"].append(row["query"])
                columns["candidates"].append([text, *negatives])
    return columns


def _forum_name(benchmark) -> str:
    """A folder-safe forum name for the benchmark (a local benchmark's name is its label)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in benchmark.name)


def to_parse_folder(benchmark, out_dir, data_dir=None) -> Path:
    """Write ``benchmark``'s train/dev positives as a parsed forum ``out_dir/<name>/``.

    Example:
        >>> to_parse_folder(benchmarks.get("wikiqa"), "ft-data")  # doctest: +SKIP
        PosixPath('ft-data/wikiqa')
    """
    import datasets

    forum = _forum_name(benchmark)
    splits, dev_lists = {}, {"query": [], "candidates": []}
    for split in ("train", "dev"):
        if split in benchmark.splits:
            dataset = benchmark.load(split, data_dir)
            splits[split] = _positive_pairs(dataset, forum)
            if split == "dev":
                dev_lists = _dev_lists(dataset)
    if not splits.get("train", {}).get("query"):
        raise BenchmarkError(
            f"{benchmark.name}: no train split with positive pairs to fine-tune on"
        )
    splits.setdefault("dev", {c: [] for c in PAIR_COLUMNS})
    splits["test"] = {c: [] for c in PAIR_COLUMNS}
    features = datasets.Features(
        {
            "forum": datasets.Value("string"),
            "query": datasets.Value("string"),
            "positive": datasets.Value("string"),
            "query_id": datasets.Value("string"),
            "positive_id": datasets.Value("string"),
            "tags": datasets.Sequence(datasets.Value("string")),
            "score": datasets.Value("int64"),
        }
    )
    target = Path(out_dir) / forum
    with atomic_directory(target, overwrite=True) as tmp:
        datasets.DatasetDict(
            {s: datasets.Dataset.from_dict(c, features=features) for s, c in splits.items()}
        ).save_to_disk(str(tmp / "title_body"))
        if dev_lists["query"]:
            datasets.Dataset.from_dict(dev_lists).save_to_disk(str(tmp / DEV_LISTS))
        counts = {s: len(c["query"]) for s, c in splits.items()}
        atomic_write_json(
            tmp / STATS_FILE,
            {
                "forum": forum,
                "questions": counts["train"] + counts["dev"],
                "answers": 0,
                "pairs": {"title_body": counts["train"] + counts["dev"]},
                "dropped": {},
                "source": {"benchmark": benchmark.name},
                "splits": counts,
            },
        )
    return target


def _transfer_start(transfer: str) -> tuple[str, dict | None]:
    """What TANDA's adapt step starts from: (base model, None) for a full/tanda zoo entry
    (its model folder) or a base model, (the entry's base, its card) for an adapter entry,
    which the adapt step continues."""
    from adapter_zoo.loading import resolve_entry
    from adapter_zoo.zoo.store import verify_entry

    try:
        entry = resolve_entry(transfer)
    except (ValueError, OSError):
        return transfer, None  # not a zoo entry: a base model name, Hub id or model folder
    from adapter_zoo.kinds import kind_for_card

    card = verify_entry(entry)
    layout = getattr(kind_for_card(card), "layout", None)  # entry kinds store weights
    if layout == "adapter":
        return str(card["base_model"]), card
    if layout != "full":
        raise BenchmarkError(
            f"--transfer {transfer!r}: a {card.get('mode')!r} zoo entry; "
            "TANDA adapts a fully fine-tuned (full or tanda) entry or continues an adapter entry"
        )
    return str(entry / "model"), None


def finetune(
    model: str,
    benchmark,
    mode: str,
    *,
    work_dir: str | os.PathLike | None = None,
    data_dir=None,
    seed: int = 0,
    max_steps: int | None = None,
    transfer: str | None = None,
    name: str | None = None,
    encoder: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Train on the benchmark's train split (dev for model selection); return the zoo entry.

    ``full`` fine-tunes the whole base model ``model``, ``adapter`` trains one adapter (and a
    cross-encoder's head) on it. ``tanda`` is TANDA's adapt step on the transfer model
    ``transfer`` (default ``model``):

    - a full/tanda zoo entry or a model folder is fully fine-tuned with TANDA's low learning
      rate and early stopping after 2 epochs without a better dev MAP; a cross-encoder's
      ranking head is re-initialised (seeded), as every full run starts with a fresh head;
    - an adapter zoo entry (e.g. a forum adapter) is continued: its adapter trains on the
      benchmark at the adapter rate, starting from the entry's state (``init_from``).

    ``encoder`` is ``bi`` or ``cross`` (None: ``train``'s default for the base, bi for a
    sentence encoder such as minilm-l6; a continued adapter keeps its entry's). The zoo entry
    is ``name``, by default ``<benchmark>-<mode>-<base>-s<seed>``; an existing entry of that
    name is refused before any work unless ``overwrite``, or unless the same command made it
    (killed after its entry was in place): then it is returned as it is. The benchmark's
    pairs are written to ``work_dir`` (default: a hidden folder of the zoo named by the
    entry, removed once the entry is written, so the same command trains from the same
    folder).

    Example:
        >>> finetune("minilm-l6", benchmarks.get("wikiqa"), "adapter")
        ... # doctest: +SKIP
        PosixPath('.../adapter-zoo/wikiqa-adapter-minilm-l6-s0')
    """
    if mode not in MODES:
        raise unknown_name("fine-tuning mode", mode, MODES, BenchmarkError)
    missing = [s for s in ("train", "dev") if s not in benchmark.splits]
    if "train" in missing:
        raise BenchmarkError(
            f"{benchmark.name}: --finetune needs a train split (has {', '.join(benchmark.splits)})"
        )
    from adapter_zoo.training import TrainingConfig, default_lr, train
    from adapter_zoo.zoo.store import entry_lock, entry_path

    forum = _forum_name(benchmark)
    if name is None:
        name = f"{forum}-{mode}-{Path(str(transfer or model)).name}-s{seed}"
    final = entry_path(name)
    base, start = str(model), None
    if mode == "tanda":
        base, start = _transfer_start(str(transfer or model))
    if start is not None:
        from adapter_zoo.kinds import kind_for_card

        given = kind_for_card(start).encoder
        if encoder not in (None, given):
            raise BenchmarkError(
                f"--transfer {transfer or model!r} is a {given}-encoder adapter; "
                f"--encoder {encoder} cannot continue it"
            )
        encoder = given
    # the same folder for the same command: a rerun after a kill is the same training run
    work = Path(work_dir) if work_dir is not None else final.parent / WORK_FOLDER / name
    full_tanda = mode == "tanda" and start is None
    config = TrainingConfig(
        mode="full" if mode == "full" or full_tanda else "adapter",
        encoder=encoder,
        data=str(work / "data"),
        forums=(forum,),
        name=name,
        base_model=base,
        pair_kinds=("title_body",),  # to_parse_folder's one pair folder
        init_from=str(transfer or model) if start is not None else None,
        lr=default_lr("cross", "tanda") if full_tanda else None,  # the paper's adapt rate
        patience=2 if full_tanda else None,
        seed=seed,
        max_steps=max_steps,
        overwrite=overwrite,
    )
    # held from here: a second run to the name is refused before it writes the data folder
    with entry_lock(final):
        if final.exists() and not overwrite and not _made_by(final, config):
            raise BenchmarkError(
                f"zoo entry {name!r} already exists at {final}; pass --overwrite to "
                "replace it, or --save-as another name"
            )
        to_parse_folder(benchmark, work / "data", data_dir)
        entry = Path(train(config))  # an entry this command made is found done, not retrained
        if work_dir is None:
            shutil.rmtree(work)  # this command's own copy of the benchmark's pairs
    return entry


def _made_by(entry: Path, config) -> bool:
    """Whether ``entry`` is what ``config`` trains as far as its card says before the data
    is written (``train`` then compares the whole run): the same command, killed after its
    entry was in place, wrote it."""
    from adapter_zoo.zoo.store import read_card

    try:
        recorded = read_card(entry).get("training") or {}
    except (OSError, ValueError):
        return False
    wanted = json.loads(json.dumps(config.to_dict()))
    return all(recorded.get(key) == wanted[key] for key in SAME_RUN_KEYS)
