"""Rank zoo adapters for a target: domain similarity, optionally a scored probe on a dev sample.

* Domain similarity, as MultiCQA measured it (:mod:`adapter_zoo.zoo.domain`, the one
  copy ``adapter_zoo.adapt`` uses too): the cosine between the centroid (normalised mean of
  normalised all-MiniLM-L6-v2 embeddings) of the target's questions and each adapter's
  stored centroid of its training questions (``domain.safetensors``); an older entry without
  one is embedded from its training forums (its card's ``training.data`` and ``forums``, or
  ``forums_dir``).
* Probe: with ``dev_sample=N`` and a benchmark target, N labelled queries (seeded sample among
  those with a relevant candidate) are scored by every adapter in one shared sweep pass; the
  adapters are ranked by the benchmark's main metric on them, similarity breaking ties.

Example:
    >>> ranking = recommend("wikiqa", ["beer", "cooking", "travel"], dev_sample=20)  # doctest: +SKIP
    >>> ranking[0]["adapter"]  # doctest: +SKIP
    'travel'
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from adapter_zoo.adapt.domain import entry_centroid
from adapter_zoo.errors import ZooError
from adapter_zoo.metrics import evaluate_rankings
from adapter_zoo.names import ZERO_SHOT_MODEL
from adapter_zoo.zoo.domain import domain_centroid, forum_questions, load_embedder
from benchmarks.registry import get
from benchmarks.sweep import score_models, sweep_benchmark
from stackexchange.lists import BENCHMARK_FILE
from stackexchange.numbers import MAX_QUESTIONS, MAX_TOKENS, check_number


def target_questions(target, *, split: str = "test", data_dir=None) -> list[str]:
    """Unlabelled questions of a target: a parse output folder or a benchmark's queries."""
    from adapter_zoo.cascade.data import forum_dirs

    path = Path(str(target)).expanduser()
    if path.is_dir() and not (path / BENCHMARK_FILE).is_file():
        return [q for forum in forum_dirs(path) for q in forum_questions(forum, split=None)]
    name = "local:" + str(path) if path.is_dir() else str(target)
    return list(get(name).load(split, data_dir)["query"])


def probe_scores(
    target, adapters, n: int, *, split="test", data_dir=None, seed=0, base=None, max_length=None
):
    """Main-metric score of each adapter on ``n`` labelled queries of a benchmark target."""
    path = Path(str(target)).expanduser()
    bench = get("local:" + str(path) if path.is_dir() else str(target))
    rows = bench.load(split, data_dir)
    usable = [i for i, labels in enumerate(rows["labels"]) if any(y > 0 for y in labels)]
    if not usable:
        raise ZooError(f"recommend: {bench.name}/{split} has no query with a relevant candidate")
    chosen = sorted(random.Random(seed).sample(usable, min(n, len(usable))))
    sample = rows.select(chosen)
    pairs = [(q, c) for q, cands in zip(sample["query"], sample["candidates"]) for c in cands]
    scores, _ = score_models(adapters, pairs, base_model=base, max_length=max_length)
    bounds = np.cumsum([0] + [len(c) for c in sample["candidates"]])
    result = {}
    for adapter in adapters:
        flat = scores[str(adapter)]
        per_query = [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        summary = evaluate_rankings(per_query, sample["labels"], no_positive=bench.no_positive)
        result[str(adapter)] = float(summary[bench.main_metric])
    return result


def similarities(
    target,
    adapters: Sequence,
    *,
    split: str = "test",
    data_dir=None,
    forums_dir=None,
    max_questions: int = 500,
    seed: int = 0,
    embedder=None,
) -> dict[str, float]:
    """Domain similarity of each adapter's training questions to the target's questions.

    ``max_questions`` and ``seed`` sample the target's questions; an adapter's side is its
    stored centroid (500 titles, seed 0), embedded the same way for an older entry.
    """
    embedder = embedder or load_embedder()
    questions = target_questions(target, split=split, data_dir=data_dir)
    target_vector = domain_centroid(questions, embedder, max_texts=max_questions, seed=seed)
    result = {}
    for adapter in adapters:
        centroid = entry_centroid(adapter, forums_dir=forums_dir, embedder=embedder)
        result[str(adapter)] = float(np.asarray(centroid, np.float64) @ target_vector)
    return result


def rank(similarity: dict[str, float], probe: dict[str, float] | None = None) -> list[dict]:
    """``{adapter, similarity, probe, rank}`` rows, best first: by probe score if any, then
    by similarity (which also breaks probe ties). A model the probe scored that has no
    training forum (the zero-shot base) has similarity None and loses ties."""
    names = list(similarity) + [n for n in (probe or {}) if n not in similarity]
    rows = [
        {"adapter": name, "similarity": similarity.get(name),
         "probe": None if probe is None else probe[name]}
        for name in names
    ]  # fmt: skip

    def key(row):
        sim = row["similarity"]
        return (
            -(row["probe"] if row["probe"] is not None else 0.0),
            -(sim if sim is not None else -2.0),
        )

    rows.sort(key=key)
    for position, row in enumerate(rows, start=1):
        row["rank"] = position
    return rows


def recommend(
    target,
    adapters: Sequence,
    *,
    dev_sample: int = 0,
    split: str = "test",
    dev_split: str | None = None,
    data_dir=None,
    forums_dir=None,
    max_questions: int = 500,
    max_length: int | None = None,
    seed: int = 0,
    embedder=None,
    zero_shot: str | None = ZERO_SHOT_MODEL,
) -> list[dict]:
    """Adapters ranked best first for ``target``: ``{adapter, similarity, probe, rank}``.

    Args:
        target: a parse output folder, a benchmark name or ``local:PATH`` / its folder.
        adapters: zoo names or entry folders of adapter entries.
        dev_sample: probe-score this many labelled queries (benchmark targets); 0 = off.
        split: the target benchmark split whose questions are embedded.
        dev_split: the split the probe samples from (default: ``split``); use the target's
            ``dev`` split when the ranking is judged on ``test``.
        data_dir: folder holding benchmark files.
        forums_dir: where the adapters' training forums are parsed (default: their cards).
        max_questions: questions embedded per side (a seeded sample).
        max_length: token limit per probe pair; None: each entry's own (its card's).
        seed: sampling seed.
        embedder: a SentenceTransformer (default all-MiniLM-L6-v2).
        zero_shot: the model a user already has (default the zero-shot all-MiniLM-L6-v2
            bi-encoder): with a probe it is a candidate too, so the recommender can say that
            no adapter beats it. None leaves it out; without a probe it has no similarity.
    """
    if not adapters:
        raise ZooError("recommend: no adapters given")
    whole = dict(integer=True, error=ZooError)
    check_number("recommend: dev_sample", dev_sample, low=0, high=MAX_QUESTIONS, **whole)
    check_number("recommend: max_questions", max_questions, low=1, high=MAX_QUESTIONS, **whole)
    check_number("recommend: seed", seed, low=0, high=2**32 - 1, **whole)
    if max_length is not None:
        check_number("recommend: max_length", max_length, low=1, high=MAX_TOKENS, **whole)
    similarity = similarities(
        target, adapters, split=split, data_dir=data_dir, forums_dir=forums_dir,
        max_questions=max_questions, seed=seed, embedder=embedder,
    )  # fmt: skip
    probe = None
    if dev_sample:
        candidates = list(adapters) + ([zero_shot] if zero_shot else [])
        probe = probe_scores(
            target, candidates, dev_sample, split=dev_split or split, data_dir=data_dir,
            seed=seed, max_length=max_length,
        )  # fmt: skip
    return rank(similarity, probe)


def top_k_hit(ranking: list[dict], best_adapter: str, k: int = 3) -> bool:
    """Whether the full sweep's best adapter is among the recommender's top ``k``."""
    return str(best_adapter) in [row["adapter"] for row in ranking[:k]]


def hit_rate(
    targets: Sequence,
    adapters: Sequence,
    *,
    k: int = 3,
    dev_sample: int = 0,
    split: str = "test",
    dev_split: str | None = None,
    data_dir=None,
    forums_dir=None,
    base_model: str | None = None,
    max_length: int | None = None,
    embedder=None,
) -> dict:
    """How often the recommender's top ``k`` holds the adapter the full sweep finds best.

    Each target is a benchmark (name or ``local:PATH``); the full sweep scores its whole
    ``split`` with every adapter (``sweep_benchmark``) and the best one by the benchmark's
    main metric is compared with the recommender's rankings: by domain similarity alone and,
    with ``dev_sample``, by the probe on ``dev_split``. Each part's wall time is kept, as
    the recommender is only worth having if it is much cheaper than the sweep.

    Returns:
        ``{"k", "hit_rate", "targets": [{target, best, recommended, hit, sweep,
        similarity_top3, probe_top3, probe_split, seconds}]}``; ``recommended`` and ``hit``
        are the probe ranking's with ``dev_sample``, else the similarity ranking's.
    """
    import time

    embedder = embedder or load_embedder()
    rows = []
    for target in targets:
        started = time.perf_counter()
        records = sweep_benchmark(
            target, adapters, base_model=base_model, split=split, data_dir=data_dir,
            max_length=max_length,
        )  # fmt: skip
        seconds = {"sweep": time.perf_counter() - started}
        sweep = {r["adapters"][0]: r["metrics"][r["main_metric"]] for r in records}
        best = max(sweep, key=lambda name: sweep[name])  # first best on ties: input order
        started = time.perf_counter()
        similarity = similarities(
            target, adapters, split=split, data_dir=data_dir, forums_dir=forums_dir,
            embedder=embedder,
        )  # fmt: skip
        seconds["similarity"] = time.perf_counter() - started
        by_similarity = rank(similarity)
        by_probe = None
        if dev_sample:
            started = time.perf_counter()
            probe = probe_scores(
                target, adapters, dev_sample, split=dev_split or split, data_dir=data_dir,
                max_length=max_length,
            )  # fmt: skip
            seconds["probe"] = time.perf_counter() - started
            by_probe = rank(similarity, probe)
        ranking = by_probe or by_similarity
        rows.append(
            {
                "target": str(target),
                "best": best,
                "recommended": [r["adapter"] for r in ranking[:k]],
                "hit": top_k_hit(ranking, best, k),
                "sweep": sweep,
                "similarity_top3": [r["adapter"] for r in by_similarity[:3]],
                "probe_top3": [r["adapter"] for r in by_probe[:3]] if by_probe else None,
                "probe_split": (dev_split or split) if dev_sample else None,
                "seconds": seconds,
            }
        )
    rate = sum(r["hit"] for r in rows) / len(rows) if rows else float("nan")
    return {"k": k, "hit_rate": rate, "targets": rows}
