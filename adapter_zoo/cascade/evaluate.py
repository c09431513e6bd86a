"""Scoring a cascade zoo entry on a benchmark at several drop ratios, one record per ratio.

The records follow ``benchmarks.evaluate``'s (same keys, appended with the same writer) and
add the cascade's own: ``alpha``, ``relative_compute`` (analytic FLOPs over those of alpha=0,
i.e. of the monolithic model), ``flops``, ``pairs_per_s``, ``exits`` and ``exit_metrics``.

``benchmarks`` comes after ``adapter_zoo`` in the data flow, so it is imported only inside
these functions (as the CLI does), never by the cascade model itself.

Example:
    >>> records = evaluate_cascade("cascade", "wikiqa", alphas=(0.0, 0.3))  # doctest: +SKIP
    >>> records[1]["relative_compute"]  # doctest: +SKIP
    0.77
"""

from __future__ import annotations

import datetime
import time

import numpy as np


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
    from benchmarks.evaluate import package_versions
    from benchmarks.metrics import METRICS, evaluate_rankings
    from benchmarks.registry import get
    from benchmarks.results import append_result

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
        record = {
            "benchmark": bench.name,
            "split": split,
            "model": name,
            "adapters": [],
            "mode": "cascade",
            "metrics": {m: round(summary[m], 6) for m in METRICS},
            "main_metric": bench.main_metric,
            "queries": summary["queries"],
            "queries_without_positive": summary["queries_without_positive"],
            "no_positive": bench.no_positive,
            "seed": (ranker.card or {}).get("seed"),
            "alpha": alpha,
            "relative_compute": round(output.flops / reference, 6) if reference else None,
            "flops": output.flops,
            "pairs": output.pairs,
            "pairs_per_s": round(output.pairs_per_second, 3),
            "exits": list(ranker.exits),
            "exit_p@1": [round(v, 6) for v in exit_metrics],
            "versions": package_versions(),
            "wall_time_s": round(seconds, 3),
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        }
        if results is not None:
            append_result(results, record)
        records.append(record)
    return records
