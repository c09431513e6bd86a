"""``sweep_benchmark``: one benchmark scored with N zoo adapters in one shared pass.

The records are :func:`benchmarks.results.make_record`'s (one per adapter, appended with the
same writer), with ``mode`` ``"sweep"``. The shared pass itself is
``adapter_zoo.sweep.sweep``; :func:`score_models` adds the models that cannot share it.

Example:
    >>> records = sweep_benchmark("wikiqa", ["beer", "cooking"])  # doctest: +SKIP
    >>> [r["metrics"]["map"] for r in records]  # doctest: +SKIP
    [0.61, 0.58]
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from adapter_zoo.errors import ZooError
from adapter_zoo.metrics import evaluate_rankings
from benchmarks.registry import get
from benchmarks.results import append_results, check_results_folder, make_record
from stackexchange.numbers import MAX_BATCH, MAX_TOKENS, check_number

logger = logging.getLogger(__name__)


def base_model_of(adapters: Sequence) -> str:
    """The one base model named by the adapters' zoo cards (all must agree)."""
    from adapter_zoo.sweep.sweep import resolve_adapter
    from adapter_zoo.zoo.store import CARD_FILE, read_card

    bases = {}
    for adapter in adapters:
        path = resolve_adapter(adapter)
        if (path / CARD_FILE).is_file():
            bases[str(adapter)] = read_card(path)["base_model"]
    if len(bases) < len(adapters):
        missing = [str(a) for a in adapters if str(a) not in bases]
        raise ZooError(f"sweep: {missing[0]} has no card naming its base model; pass --base")
    if len(set(bases.values())) > 1:
        raise ZooError(f"sweep: the adapters have different base models: {bases}")
    return next(iter(bases.values()))


def shares_pass(name) -> bool:
    """Whether ``name`` is a cross-encoder adapter entry (with its head), which the shared
    ``Parallel`` pass scores; bi-encoders, ``sbert:`` models and compositions are scored one
    by one (a bi-encoder embeds each text once anyway)."""
    from adapter_zoo.loading import resolve_entry
    from adapter_zoo.zoo.store import CARD_FILE, read_card

    if ":" in str(name):
        return False
    try:
        path = resolve_entry(str(name))
    except ZooError:
        return True  # let the sweep report the missing entry in its own words
    from adapter_zoo.kinds import kind_for_card

    # a bare adapter folder (no card) is a cross-encoder adapter
    card = read_card(path) if (path / CARD_FILE).is_file() else None
    cross = card is None or kind_for_card(card).encoder == "cross"
    return cross and (path / "head_config.json").is_file()


def score_models(
    models: Sequence,
    pairs,
    *,
    base_model=None,
    batch_size=64,
    max_length=None,
    progress=False,
    precision="auto",
    precisions: dict | None = None,
) -> tuple[dict, dict]:
    """Every model's scores on ``pairs``: cross-encoder adapters in one shared pass over their
    base (one per token limit), the others (bi-encoders, ``sbert:``, compositions) one by one.

    Args:
        models: zoo names, entry folders, ``sbert:<base>`` or composition specs.
        pairs: (query, candidate) pairs.
        base_model: the adapters' base (default: the one their cards name).
        batch_size: pairs per forward.
        max_length: token limit for every model; None: each entry's own (its card's
            ``max_length``), as ``adapter_zoo.load`` would score it.
        progress: a tqdm bar.
        precision: ``auto``, ``fp32`` or ``bf16`` (:mod:`adapter_zoo.precision`).
        precisions: when given, filled with ``{model: the precision it ran at}``.

    Returns:
        ``({model: scores}, {model: the token limit it was scored at, or None})``.
    """
    import adapter_zoo
    from adapter_zoo.lengths import CROSS_MAX_LENGTH
    from adapter_zoo.precision import precision_name, resolve_precision
    from adapter_zoo.registry import card_max_length
    from adapter_zoo.sweep.sweep import resolve_adapter, sweep
    from adapter_zoo.zoo.store import CARD_FILE, read_card

    shared = [m for m in models if shares_pass(m)]
    scores, lengths, by_length = {}, {}, {}
    for name in shared:
        path = resolve_adapter(name)
        # a bare adapter folder (no card) is a cross-encoder adapter at the default length
        length = card_max_length(read_card(path)) if (path / CARD_FILE).is_file() else None
        lengths[str(name)] = max_length or length or CROSS_MAX_LENGTH
        by_length.setdefault(lengths[str(name)], []).append(name)
    base = (base_model or base_model_of(shared)) if shared else None
    for length, group in by_length.items():
        scores.update(sweep(base, group, pairs, batch_size, max_length=length, progress=progress,
                            precision=precision))  # fmt: skip
    ran = {str(name): precision_name(resolve_precision(precision)) for name in shared}
    for name in models:
        if str(name) not in scores:
            model = adapter_zoo.load(str(name), max_length=max_length, precision=precision)
            scores[str(name)] = model.score(pairs, batch_size=batch_size)
            lengths[str(name)] = getattr(model, "max_length", None)
            ran[str(name)] = getattr(model, "precision", "fp32")
    if precisions is not None:
        precisions.update(ran)
    return scores, lengths


def sweep_benchmark(
    benchmark,
    adapters: Sequence,
    *,
    base_model: str | None = None,
    split: str = "test",
    data_dir=None,
    results=None,
    batch_size: int = 64,
    max_length: int | None = None,
    progress: bool = False,
    precision: str = "auto",
) -> list[dict]:
    """Score ``benchmark``'s ``split`` with every adapter at once; one record per adapter.

    Args:
        benchmark: a registry name or ``local:PATH``.
        adapters: zoo names or entry folders. Cross-encoder adapters (all over the same
            base model) share one pass; bi-encoder entries, ``sbert:<base>`` and
            compositions are scored one by one.
        base_model: the base; by default the one the adapters' cards name.
        split: the split to score.
        data_dir: folder holding the benchmark files.
        results: folder whose ``results.jsonl`` gets the records (None: not written).
        batch_size: pairs per forward (replicated once per adapter inside).
        max_length: token limit per pair for every model; None: each entry's own.
        progress: a tqdm bar.
        precision: ``auto``, ``fp32`` or ``bf16``: the dtype the models' weights score in
            (:mod:`adapter_zoo.precision`); each record's ``precision`` is what its model
            ran at.
    """
    # torch and numpy on first use: the CLI starts without them
    from adapter_zoo.precision import resolve_precision
    from adapter_zoo.sweep.sweep import refuse_repeats
    from benchmarks.baselines import split_per_query

    started = time.perf_counter()
    whole = dict(integer=True, error=ZooError)
    check_number("sweep: batch_size", batch_size, low=1, high=MAX_BATCH, **whole)
    if max_length is not None:
        check_number("sweep: max_length", max_length, low=1, high=MAX_TOKENS, **whole)
    refuse_repeats(adapters)
    resolve_precision(precision)  # an unknown precision or a refused bf16: before any work
    check_results_folder(results)
    shared = [a for a in adapters if shares_pass(a)]
    base_model = base_model or (base_model_of(shared) if shared else None)
    bench = get(benchmark)
    dataset = bench.load(split, data_dir)
    pairs = [(q, c) for q, cands in zip(dataset["query"], dataset["candidates"]) for c in cands]
    precisions: dict = {}
    scores, lengths = score_models(
        adapters, pairs, base_model=base_model, batch_size=batch_size, max_length=max_length,
        progress=progress, precision=precision, precisions=precisions,
    )  # fmt: skip
    logger.info("sweep scores in %s", ", ".join(f"{m}: {p}" for m, p in precisions.items()))
    wall = time.perf_counter() - started
    records = []
    for adapter in adapters:
        flat = scores[str(adapter)]
        per_query = split_per_query(flat, dataset)
        summary = evaluate_rankings(per_query, dataset["labels"], no_positive=bench.no_positive)
        in_pass = str(adapter) in map(str, shared)
        record = make_record(
            bench,
            split=split,
            model=str(base_model) if in_pass else str(adapter),
            adapters=[str(adapter)] if in_pass else [],
            mode="sweep",
            summary=summary,
            seed=0,
            seconds=wall,
            sweep_size=len(adapters),
            max_length=lengths[str(adapter)],
            precision=precisions[str(adapter)],
        )
        records.append(record)
    if results is not None:  # only once every model is scored: a failure writes nothing
        append_results(results, records)
    return records
