"""``benchmarks.evaluate``: score one model on one benchmark split and record the result.

Example:
    >>> record = evaluate("bm25", "wikiqa", data_dir="../shared/data/benchmarks")  # doctest: +SKIP
    >>> record["metrics"]["map"]  # doctest: +SKIP
    0.5839

Models: see :func:`evaluate`. Every run is seeded, and the record carries the package versions
so a number can be traced to the code that produced it.
"""

from __future__ import annotations

import logging
import os
import random
import time
from pathlib import Path

import numpy as np

from adapter_zoo.compose.scoring import score_with
from adapter_zoo.kinds import is_baseline, kind_for_name
from adapter_zoo.metrics import evaluate_rankings, evaluate_run
from adapter_zoo.names import BASE, parse_model_name
from adapter_zoo.precision import PRECISIONS, resolve_precision
from benchmarks.baselines import benchmark_pairs, get_scorer, is_lexical
from benchmarks.errors import BenchmarkError
from benchmarks.registry import get
from benchmarks.results import (
    append_result,
    append_results,
    check_results_folder,
    make_record,
)
from benchmarks.retrieval import retrieval_run
from stackexchange.errors import unknown_name
from stackexchange.numbers import MAX_STEPS, MAX_TOKENS, check_number

logger = logging.getLogger(__name__)


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch

        torch.manual_seed(seed)
    except ImportError:
        pass


def _setting(bench, scorer_model) -> str:
    """``in-domain`` when the model was trained on the forum the benchmark was built from
    (its card's ``forums``; the test questions are held out of that forum's training), else
    ``zero-shot``."""
    forum = getattr(bench, "forum", "")
    forums = (getattr(scorer_model, "card", None) or {}).get("forums") or []
    return "in-domain" if forum and forum in forums else "zero-shot"


def _model_name(model) -> str:
    if isinstance(model, str | os.PathLike):
        return str(model)
    card = getattr(model, "card", None)
    return (card or {}).get("name") or str(getattr(model, "base_model", type(model).__name__))


def _load_ranker(
    model, adapters, build: bool = True, max_length: int | None = None, precision: str = "auto"
):
    """A ranker for any model name (through ``adapter_zoo.load``, which builds a catalog
    forum's entry unless ``build`` is False) at ``max_length`` (None: its own) and
    ``precision``, a base model plus one zoo adapter, or a Ranker (returned as is)."""
    if not isinstance(model, str | os.PathLike):
        if max_length is not None:  # a model object the caller built
            if not isinstance(getattr(model, "max_length", None), int):
                raise BenchmarkError(
                    f"max_length {max_length}: a {type(model).__name__} has no token limit to "
                    "set (pass max_length to adapter_zoo.load instead)"
                )
            model.max_length = max_length
        return model
    import adapter_zoo

    kind = kind_for_name(model)
    model = str(model)
    if adapters and kind is not None:
        raise BenchmarkError(
            f"model {model!r} is a {kind.name} model; pass the adapter's base model name as "
            "--model instead"
        )
    if adapters:
        # the adapter entry names the base model it was trained on; it must be ``model``
        return adapter_zoo.load(
            adapters[0], base_model=model, build=build, max_length=max_length, precision=precision
        )
    from adapter_zoo.zoo.untrusted import UnsafeEntryError

    try:
        return adapter_zoo.load(model, build=build, max_length=max_length, precision=precision)
    except UnsafeEntryError:
        raise  # a zoo entry, refused: its own message says why
    except (ValueError, OSError) as error:
        raise BenchmarkError(
            f"model {model!r}: not bm25, tfidf, sbert:<base>, base:<base>, a loadable zoo "
            f"entry or fusion:/rerank:/prf: spec ({error})"
        ) from None


class _Recorded:
    """A fusion member whose scores of one benchmark's pairs were recorded: those pairs get
    the recorded scores, any others go to the member itself; every other attribute is the
    member's (its card, precision, token limit)."""

    def __init__(self, member, pairs: list, scores: np.ndarray):
        self.member, self.pairs, self.scores = member, pairs, scores

    def score(self, pairs, *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        if len(pairs) == len(self.pairs) and list(map(tuple, pairs)) == self.pairs:
            return self.scores.copy()
        return score_with(self.member, pairs, batch_size=batch_size, progress=progress)

    def __getattr__(self, name):
        return getattr(self.member, name)


class ScoredModels:
    """The scores of the models :func:`evaluate_models` scored on one benchmark split, by
    model name, so that a score fusion of them scores none of them twice.

    A fusion's member (``names[i]`` of a :class:`~adapter_zoo.compose.ScoreFusion`) takes the
    recorded scores of the model of the same name when it runs at the same token limit and
    precision, and only for exactly the pairs they were computed on; the scores are those
    the fusion would compute itself (the same scorer, batches and order).
    """

    def __init__(self):
        self._by_name: dict[str, tuple] = {}
        self._runs: dict[str, tuple] = {}

    def remember_run(self, name: str, run: dict, setting) -> None:
        """Record model ``name``'s retrieval run of a ``beir:`` split, and the setting it ran
        at (``None`` for a lexical model, else ``(max_length, precision)`` as asked)."""
        self._runs[name] = (setting, run)

    def run_of(self, name: str, setting) -> dict | None:
        """Model ``name``'s recorded run at ``setting``, else None (a re-ranking's pool is
        made of BM25's and the base's runs: one scored before is not retrieved again)."""
        recorded = self._runs.get(name)
        return recorded[1] if recorded is not None and recorded[0] == setting else None

    def remember(self, name: str, model, dataset, per_query: list) -> None:
        """Record ``model``'s scores of ``dataset``'s pairs (one array per query)."""
        flat = np.concatenate(per_query) if per_query else np.zeros(0)
        setting = (getattr(model, "max_length", None), getattr(model, "precision", None))
        if is_lexical(model):
            # kept for scores(), lent to no fusion: a fusion's BM25 member scores each query's
            # candidates, the benchmark's may score over the corpus (its bm25_scope)
            setting = ("lexical",)
        self._by_name[name] = (
            setting,
            benchmark_pairs(dataset),
            np.asarray(flat, dtype=np.float64),
        )

    def scores(self, name: str) -> np.ndarray:
        """The recorded scores of model ``name``, flat over the split's pairs in order (a
        study's per-query APs: ``adapter_zoo.adapt.decide.list_average_precisions``)."""
        return self._by_name[name][2].copy()

    def lend_to(self, model) -> list[str]:
        """Give ``model``'s fusion members their recorded scores; return their names."""
        members, names = getattr(model, "members", None), getattr(model, "names", None)
        if not members or names is None or not hasattr(model, "weights"):
            return []  # only a score fusion scores each member on all the pairs
        lent = []
        for i, (member, name) in enumerate(zip(members, names)):
            recorded = self._by_name.get(name)
            setting = (getattr(member, "max_length", None), getattr(member, "precision", None))
            if recorded is not None and recorded[0] == setting:
                members[i] = _Recorded(member, recorded[1], recorded[2])
                lent.append(name)
        if lent:
            logger.info("%s: reusing the scores of %s", _model_name(model), ", ".join(lent))
        return lent


def evaluate_models(
    models, benchmark, *, scored: ScoredModels | None = None, **kwargs
) -> list[dict]:
    """Evaluate each of ``models`` on ``benchmark``: one :func:`evaluate` record each, in
    order, and each model scored once: a score fusion among them takes the scores of its
    members that come before it (``ScoredModels``). With ``results``, the records are
    appended once every model is scored (a failure writes none). With ``scored``, the
    models' scores are kept there (per-query APs for a paired bootstrap:
    ``ScoredModels.scores``).

    Example:
        >>> evaluate_models(["beer", "beer-cross", "beer-fusion"], "local:beer-answers")
        ... # doctest: +SKIP
    """
    from adapter_zoo.sweep.sweep import refuse_repeats

    models = [str(m) if isinstance(m, os.PathLike) else m for m in models]
    if not models:
        raise BenchmarkError("evaluate_models needs at least one model")
    refuse_repeats([m for m in models if isinstance(m, str)], caller="evaluate")
    options = {"finetune": "--finetune", "adapters": "--adapter", "transfer": "--transfer",
               "save_as": "--save-as"}  # fmt: skip
    for keyword, option in options.items():
        if kwargs.get(keyword) and len(models) > 1:
            raise BenchmarkError(f"{option} takes one --model; got {len(models)}")
    results = kwargs.pop("results", None)
    check_results_folder(results)
    scored = ScoredModels() if scored is None else scored
    records = [evaluate(model, benchmark, scored=scored, **kwargs) for model in models]
    if results is not None:
        append_results(results, records)
    return records


def evaluate(
    model,
    benchmark,
    split: str = "test",
    data_dir=None,
    results=None,
    adapters=None,
    finetune=None,
    transfer=None,
    seed: int = 0,
    max_steps: int | None = None,
    save_as: str | None = None,
    max_length: int | None = None,
    encoder: str | None = None,
    overwrite: bool = False,
    build: bool = True,
    precision: str = "auto",
    scored: ScoredModels | None = None,
) -> dict:
    """Evaluate ``model`` on ``benchmark``'s ``split``; return (and optionally record) the result.

    Args:
        model: ``bm25``, ``tfidf``, ``sbert:<base>`` (zero-shot bi-encoder cosine),
            ``base:<base>`` (the untrained base with a fresh seeded head), a zoo name or entry
            path (composite entries included), a ``fusion:``/``rerank:`` spec (see
            ``adapter_zoo.compose``; recorded under the spec as written), a Ranker or anything
            with ``score(pairs)``, or with ``finetune`` a raw base (``minilm-l6``, ``bert-base``, a
            local Hugging Face model folder).
        benchmark: a registry name, ``local:PATH``, ``beir:PATH`` (a BEIR folder: retrieval
            over its corpus, :mod:`benchmarks.retrieval`), or a Benchmark.
        split: the split to score.
        data_dir: folder holding the benchmark files (see ``Benchmark.load``).
        results: folder whose ``results.jsonl`` gets the record appended (None: not written).
        adapters: at most one zoo adapter, loaded on top of base model ``model`` (use
            :func:`sweep` for many).
        finetune: ``full``, ``adapter`` or ``tanda``: train on the benchmark's train split
            first (see :mod:`benchmarks.finetune`).
        transfer: with ``finetune="tanda"``: the transfer model (a full/tanda zoo entry or a
            model folder, adapted by full fine-tuning; or an adapter entry, continued);
            default ``model``.
        seed: seeds Python, NumPy and torch (and fine-tuning).
        max_steps: cap on fine-tuning optimizer steps.
        save_as: with ``finetune``: the zoo name of the fine-tuned model (default
            ``<benchmark>-<mode>-<base>-s<seed>``), e.g. to adapt it later with TANDA.
        max_length: token limit of a cross-encoder's (query, candidate) pairs; default the
            entry's own training length (:mod:`adapter_zoo.lengths`' default for an
            untrained base); a bi-encoder's (``sbert:`` included) per text. BM25 and TF-IDF
            ignore it.
        encoder: with ``finetune``: ``bi`` or ``cross`` (default: ``train``'s for the base;
            a continued adapter entry keeps its own).
        overwrite: with ``finetune``: replace an existing zoo entry of the fine-tuned
            model's name (else it is refused before training).
        build: a catalog forum's name that neither the zoo nor the Hub has is built from
            its dump (``adapter_zoo.load``); False refuses it (CLI ``--no-build``).
        precision: ``auto``, ``fp32`` or ``bf16``: the dtype a model's weights score in
            (``adapter_zoo.load``, :mod:`adapter_zoo.precision`); recorded as the record's
            ``precision`` (what the model ran at; not recorded for BM25 and TF-IDF). A
            fine-tuned model trains in fp32 and is scored at ``precision``.
        scored: the scores of the models scored before on the same split
            (:func:`evaluate_models`): a score fusion takes a member's from there instead of
            scoring it again, and ``model``'s own scores are added to it.

    Returns:
        The record (:func:`benchmarks.results.make_record`): benchmark, benchmark_name,
        split, model, adapters, mode (``finetune-<how>``; ``in-domain`` for a model trained on
        the forum a built benchmark comes from; else ``zero-shot``), metrics (``map``, ``mrr``, ``p@1``, ``ndcg@10``;
        a retrieval benchmark's ``ndcg@10``, ``map``, ``mrr@10``, ``recall@100``, and
        ``retrieval``, ``documents``, and ``pool`` where a model re-ranked one),
        main_metric, queries, queries_without_positive, no_positive, seed, versions,
        wall_time_s, created; plus precision for a model (``fp32``/``bf16``), max_length
        for a cross-encoder, transfer and entry when
        fine-tuned, fusion_weights when the model's card has them.

    Example:
        >>> evaluate("bm25", "wikiqa", data_dir="../shared/data/benchmarks")["queries"]
        ... # doctest: +SKIP
        237
    """
    started = time.perf_counter()
    whole = dict(integer=True, error=BenchmarkError)
    check_number("seed", seed, low=0, high=2**32 - 1, **whole)
    if max_steps is not None:
        check_number("max_steps", max_steps, low=1, high=MAX_STEPS, **whole)
    if max_length is not None:
        # the model's own limit is checked at load
        check_number("max_length", max_length, low=1, high=MAX_TOKENS, **whole)
    if precision not in PRECISIONS:
        raise unknown_name("precision", precision, PRECISIONS, BenchmarkError)
    check_results_folder(results)
    if not is_lexical(model):
        resolve_precision(precision)  # bf16 on hardware without it: one line, before any work
    _seed_everything(seed)
    bench = get(benchmark)
    adapters = list(adapters or [])
    if len(adapters) > 1:
        raise BenchmarkError(
            f"evaluate takes one adapter, got {len(adapters)}; use evaluate_each()"
        )
    if adapters and is_baseline(model):
        raise BenchmarkError(f"model {model!r} is a baseline; adapters need a base model")
    if transfer is not None and finetune != "tanda":
        raise BenchmarkError("--transfer is only used with --finetune tanda")
    if save_as is not None and not finetune:
        raise BenchmarkError("--save-as names a fine-tuned model; it needs --finetune")
    if overwrite and not finetune:
        raise BenchmarkError("--overwrite replaces a fine-tuned model; it needs --finetune")
    if encoder is not None and not finetune:
        raise BenchmarkError("--encoder chooses what --finetune trains; it needs --finetune")
    retrieval = bench.task == "retrieval"
    if retrieval and finetune:
        raise BenchmarkError(
            f"{bench.key}: --finetune trains on a benchmark's candidate lists; a retrieval "
            "benchmark has none"
        )
    # a retrieval benchmark: its corpus, queries and judgements (benchmarks.retrieval)
    data = bench.retrieval_data(split) if retrieval else None
    dataset = None if retrieval else bench.load(split, data_dir)
    mode = "zero-shot"
    if finetune:
        if is_baseline(model) or not isinstance(model, str | os.PathLike) or adapters:
            raise BenchmarkError(
                "--finetune needs a base model name or path (no baseline, no --adapter)"
            )
        from benchmarks.finetune import finetune as run_finetune

        parsed = parse_model_name(model)
        base = parsed.base if parsed.category == BASE else str(model)
        entry = run_finetune(
            base,
            bench,
            finetune,
            data_dir=data_dir,
            seed=seed,
            max_steps=max_steps,
            transfer=transfer,
            name=save_as,
            encoder=encoder,
            overwrite=overwrite,
        )
        scorer_model = _load_ranker(str(entry), [], max_length=max_length, precision=precision)
        mode = f"finetune-{finetune}"
    elif is_lexical(model):
        scorer_model = model  # scored over the benchmark's bm25_scope (benchmarks.baselines)
    else:
        scorer_model = _load_ranker(model, adapters, build, max_length, precision)
    ran_at = None if is_lexical(scorer_model) else getattr(scorer_model, "precision", "fp32")
    if ran_at is not None:
        logger.info("%s scores in %s", _model_name(model), ran_at)
    if not finetune:
        mode = _setting(bench, scorer_model)
    about = {}
    if retrieval:

        def load_base(name):
            return _load_ranker(name, [], build, None, precision)

        def recorded(name):
            setting = None if is_lexical(name) else (None, precision)
            return scored.run_of(name, setting) if scored is not None else None

        run, about = retrieval_run(scorer_model, data, load_base=load_base, recorded=recorded)
        if scored is not None:
            setting = None if is_lexical(model) else (max_length, precision)
            scored.remember_run(_model_name(model), run, setting)
        summary = evaluate_run(run, data.qrels, no_positive=bench.no_positive)
    else:
        if scored is not None:
            scored.lend_to(scorer_model)
        scores = get_scorer(scorer_model)(dataset, bench.bm25_scope)
        if scored is not None:
            scored.remember(_model_name(model), scorer_model, dataset, scores)
        summary = evaluate_rankings(scores, dataset["labels"], no_positive=bench.no_positive)
    record = make_record(
        bench,
        split=split,
        model=_model_name(model),
        adapters=adapters,
        mode=mode,
        summary=summary,
        seed=seed,
        seconds=time.perf_counter() - started,
        **about,
    )
    if ran_at is not None:
        record["precision"] = ran_at
    if getattr(scorer_model, "max_length", None) is not None:  # encoders: the limit they ran at
        record["max_length"] = scorer_model.max_length
    if transfer is not None:
        record["transfer"] = str(transfer)
    if finetune:
        record["entry"] = Path(entry).name
    card = getattr(scorer_model, "card", None) or {}
    if card.get("fusion_weights"):
        record["fusion_weights"] = card["fusion_weights"]
    if results is not None:
        append_result(results, record)
    return record


def evaluate_each(model, benchmark, adapters, **kwargs) -> list[dict]:
    """Evaluate each zoo adapter in ``adapters`` on top of ``model``; one record each.

    One ``evaluate`` run per adapter (unlike ``adapter_zoo.sweep.sweep``, which scores
    many adapters in one shared pass).
    """
    from adapter_zoo.sweep.sweep import refuse_repeats

    if not adapters:
        raise BenchmarkError("evaluate_each needs at least one adapter")
    refuse_repeats(adapters, caller="evaluate")
    results = kwargs.pop("results", None)
    check_results_folder(results)
    records = [evaluate(model, benchmark, adapters=[name], **kwargs) for name in adapters]
    if results is not None:  # only once every adapter is scored: a failure writes nothing
        append_results(results, records)
    return records
