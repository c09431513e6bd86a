"""Fine-tuning on a benchmark's train split through ``adapter_zoo.training.train``.

``adapter_zoo.training`` reads a parse output folder, so ``to_parse_folder`` writes the
benchmark's train (and dev) split in that layout: ``OUT/<benchmark>/stats.json`` and a
``title_body`` DatasetDict (train/dev/test) of the positive (query, candidate) pairs.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks.errors import BenchmarkError
from stackexchange.io import atomic_directory, atomic_write_json

PAIR_COLUMNS = ("forum", "query", "positive", "query_id", "positive_id", "tags", "score")
MODES = ("full", "adapter", "tanda")


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
    splits = {}
    for split in ("train", "dev"):
        if split in benchmark.splits:
            splits[split] = _positive_pairs(benchmark.load(split, data_dir), forum)
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
        counts = {s: len(c["query"]) for s, c in splits.items()}
        atomic_write_json(
            tmp / "stats.json",
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


def _transfer_weights(transfer: str) -> str:
    """The model folder of a full/tanda zoo entry, or ``transfer`` itself (a base model)."""
    from adapter_zoo.loading import resolve_entry
    from adapter_zoo.zoo.store import verify_entry

    try:
        entry = resolve_entry(transfer)
    except (ValueError, OSError):
        return transfer  # not a zoo entry: a base model name, Hub id or model folder
    card = verify_entry(entry)
    if card.get("layout", "adapter") != "full":
        raise BenchmarkError(
            f"--transfer {transfer!r}: zoo entry of kind {card.get('kind')!r}; "
            "TANDA adapts a fully fine-tuned (full or tanda) entry"
        )
    return str(entry / "model")


def finetune(
    model: str,
    benchmark,
    mode: str,
    *,
    work_dir: str | os.PathLike,
    data_dir=None,
    seed: int = 0,
    max_steps: int | None = None,
    transfer: str | None = None,
    name: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Train on the benchmark's train split (dev for model selection); return the zoo entry.

    ``full`` fine-tunes the whole base model ``model``, ``adapter`` trains one adapter and head
    on it. ``tanda`` is TANDA's adapt step: full fine-tuning of the transfer model
    (``transfer``, default ``model``; a full/tanda zoo entry or a model folder) with TANDA's
    low learning rate and early stopping after 2 epochs without a better dev MAP. The
    transfer model's encoder is kept; its ranking head is re-initialised (seeded), because
    ``adapter_zoo.training`` starts every run with a fresh head. The zoo entry is ``name``,
    by default ``<benchmark>-<mode>-<base>-s<seed>``; an existing entry of that name is
    refused before any work unless ``overwrite``.

    Example:
        >>> finetune("minilm-l6", benchmarks.get("wikiqa"), "adapter", work_dir="tmp")
        ... # doctest: +SKIP
        PosixPath('.../adapter-zoo/wikiqa-adapter-minilm-l6-s0')
    """
    if mode not in MODES:
        raise BenchmarkError(f"--finetune must be one of {', '.join(MODES)}, not {mode!r}")
    missing = [s for s in ("train", "dev") if s not in benchmark.splits]
    if "train" in missing:
        raise BenchmarkError(
            f"{benchmark.name}: --finetune needs a train split (has {', '.join(benchmark.splits)})"
        )
    from adapter_zoo.training import DEFAULT_LR, TrainingConfig, train
    from adapter_zoo.zoo.store import entry_path

    forum = _forum_name(benchmark)
    name = name or f"{forum}-{mode}-{Path(str(transfer or model)).name}-s{seed}"
    if entry_path(name).exists() and not overwrite:
        raise BenchmarkError(
            f"zoo entry {name!r} already exists at {entry_path(name)}; pass --overwrite to "
            "replace it, or --save-as another name"
        )
    data = to_parse_folder(benchmark, Path(work_dir) / "data", data_dir).parent
    base = _transfer_weights(str(transfer or model)) if mode == "tanda" else str(model)
    config = TrainingConfig(
        mode="adapter" if mode == "adapter" else "full",
        encoder="cross",  # a benchmark's train split has no forum questions to select on
        data=str(data),
        forums=(forum,),
        name=name,
        base_model=base,
        lr=DEFAULT_LR["tanda"] if mode == "tanda" else None,
        patience=2 if mode == "tanda" else None,
        seed=seed,
        max_steps=max_steps,
        overwrite=overwrite,
    )
    return Path(train(config))
