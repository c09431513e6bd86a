"""Per-query average precisions of several models on one split, and a paired gain between
two of them: what the studies that set an entry beside its baselines compare.

Example:
    >>> aps = query_average_precisions(["bm25", "sbert:minilm-l6"], "local:bench/beer")  # doctest: +SKIP
    >>> rounded_gain(aps["sbert:minilm-l6"], aps["bm25"])  # doctest: +SKIP
    {'delta': 0.1203, 'interval': [0.0712, 0.1689]}
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def query_average_precisions(
    models: Iterable[str], benchmark: str, *, scored=None, done: set | None = None,
    split: str = "test",
) -> dict[str, np.ndarray]:  # fmt: skip
    """Each model's average precision on every query of ``benchmark``'s ``split`` that its
    mean counts (:meth:`~benchmarks.registry.Benchmark.counted`), in order. Models are scored
    once each, in the order given, into ``scored`` (a
    :class:`~benchmarks.evaluate.ScoredModels`: a fusion after its members reuses their
    scores); a model in ``done`` was scored there before and is not scored again (it is
    added once scored)."""
    # torch and the models on first use: the studies' --help starts without them
    from adapter_zoo.adapt.decide import list_average_precisions
    from benchmarks.evaluate import ScoredModels, evaluate
    from benchmarks.registry import get

    models = list(dict.fromkeys(models))
    scored = ScoredModels() if scored is None else scored
    done = set() if done is None else done
    for model in models:
        if model not in done:
            evaluate(model, benchmark, split=split, scored=scored)
            done.add(model)
    bench = get(benchmark)
    labels = list(bench.load(split)["labels"])
    kept = bench.counted(labels)
    return {m: list_average_precisions(scored.scores(m), labels)[kept] for m in models}


def rounded_gain(ours: np.ndarray, theirs: np.ndarray) -> dict:
    """``ours - theirs`` over the same queries, with its paired-bootstrap interval, to 4
    places: a table's cell.

    Example:
        >>> rounded_gain(np.array([1.0, 0.5, 1.0]), np.array([0.5, 0.5, 1.0]))["delta"]
        0.1667
    """
    from adapter_zoo.adapt.decide import paired_bootstrap

    test = paired_bootstrap(ours, theirs)
    return {"delta": round(test["delta"], 4), "interval": [round(v, 4) for v in test["interval"]]}
