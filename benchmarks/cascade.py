"""The Cascade Transformer on benchmarks: training on a benchmark's train split, and scoring
a cascade zoo entry at several drop ratios, one record per ratio.

The records are :func:`benchmarks.results.make_record`'s with the cascade's own keys added:
``alpha``, ``relative_compute`` (analytic FLOPs over those of alpha=0, i.e. of the
monolithic model), ``flops``, ``pairs_per_s``, ``exits`` and ``exit_p@1``.

Example:
    >>> records = evaluate_cascade("cascade", "wikiqa", alphas=(0.0, 0.3))  # doctest: +SKIP
    >>> records[1]["relative_compute"]  # doctest: +SKIP
    0.77
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from adapter_zoo.cascade.data import pairs_from_parsed
from adapter_zoo.errors import ZooError
from adapter_zoo.metrics import evaluate_rankings
from benchmarks.registry import get
from benchmarks.results import append_results, check_results_folder, make_record
from stackexchange.numbers import MAX_BATCH, check_number
from stackexchange.parse import STATS_FILE


def pairs_from_benchmark(name: str, *, data_dir=None, negatives: int = 3, seed: int = 0):
    """Pairs from benchmark ``name``'s train split, or its source forum's train split."""
    bench = get(name)
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
    """The parsed forum a built benchmark comes from, when it is still there."""
    source = getattr(bench, "source_forum", "")
    return Path(source) if source and (Path(source) / STATS_FILE).is_file() else None


def train_on_benchmark(
    name, benchmark: str, *, data_dir=None, negatives: int = 3, seed: int = 0, **options
):
    """Train a cascade zoo entry ``name`` on :func:`pairs_from_benchmark`'s pairs.

    ``options`` are ``adapter_zoo.cascade.train.train_entry``'s (``base``, ``exits``,
    ``alpha``, ``max_steps``, ...); the card records the benchmark as the training source.
    """
    from adapter_zoo.cascade.train import planned_config, train_entry
    from adapter_zoo.zoo.store import entry_folder

    entry_folder(name)  # a name that is no plain entry name is refused before any work
    planned = {k: options[k] for k in ("exits", "adapter", "alpha", "max_length") if k in options}
    planned_config(options.get("base", "minilm-l6"), **planned)  # before the benchmark loads
    pairs = pairs_from_benchmark(benchmark, data_dir=data_dir, negatives=negatives, seed=seed)
    return train_entry(
        name, pairs=pairs, source={"benchmark": str(benchmark)}, negatives=negatives, seed=seed,
        **options,
    )  # fmt: skip


def evaluate_cascade(
    model,
    benchmark,
    alphas=(0.0, 0.3),
    *,
    split: str = "test",
    data_dir=None,
    results=None,
    batch_size: int = 64,
    progress: bool = False,
) -> list[dict]:
    """Rank ``benchmark``'s ``split`` with the cascade ``model`` at each ``alpha``.

    Args:
        model: a cascade zoo name or entry folder, or a loaded ``CascadeRanker``.
        benchmark: a registry name or ``local:PATH``.
        alphas: drop ratios; alpha=0 is always run too (the compute reference).
        split: the benchmark split to score.
        data_dir: folder holding the benchmark files.
        results: folder whose ``results.jsonl`` gets one record per alpha (None: not written).
        batch_size: pairs per forward batch.
        progress: tqdm bars.

    Returns:
        The records, in the order of ``alphas``.
    """
    from adapter_zoo.cascade.data import ranking_lists
    from adapter_zoo.cascade.inference import run_cascade
    from adapter_zoo.cascade.model import CascadeRanker

    check_number(
        "cascade-eval: batch_size", batch_size, integer=True, low=1, high=MAX_BATCH,
        error=ZooError,
    )  # fmt: skip
    for alpha in alphas:
        check_number("cascade-eval: alpha", alpha, low=0, high=1, high_open=True, error=ZooError)
    check_results_folder(results)
    ranker = model if isinstance(model, CascadeRanker) else CascadeRanker.load(model)
    name = (ranker.card or {}).get("name") or str(model)
    bench = get(benchmark)
    dataset = bench.load(split, data_dir)
    lists, labels = ranking_lists(dataset), list(dataset["labels"])
    runs = {}
    for alpha in dict.fromkeys([0.0, *map(float, alphas)]):
        started = time.perf_counter()
        output = run_cascade(ranker, lists, alpha=alpha, batch_size=batch_size, progress=progress)
        runs[alpha] = (output, time.perf_counter() - started)
    reference = runs[0.0][0].flops
    records = []
    for alpha in map(float, alphas):
        output, seconds = runs[alpha]
        summary = evaluate_rankings(output.scores, labels, no_positive=bench.no_positive)
        exit_metrics = [
            # a dropped candidate has no logit at a later exit: it ranks last there
            evaluate_rankings(
                [np.nan_to_num(e[k], nan=-np.inf) for e in output.exit_logits],
                labels,
                no_positive=bench.no_positive,
            )["p@1"]
            for k in range(len(ranker.exits))
        ]
        record = make_record(
            bench,
            split=split,
            model=name,
            adapters=[],
            mode="cascade",
            summary=summary,
            seed=(ranker.card or {}).get("seed"),
            seconds=seconds,
            alpha=alpha,
            relative_compute=round(output.flops / reference, 6) if reference else None,
            flops=output.flops,
            pairs=output.pairs,
            pairs_per_s=round(output.pairs_per_second, 3),
            exits=list(ranker.exits),
            **{"exit_p@1": [round(v, 6) for v in exit_metrics]},
        )
        records.append(record)
    if results is not None:  # once every drop ratio is scored: all its records or none
        append_results(results, records)
    return records
