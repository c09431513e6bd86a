"""``adapt``'s default: learn from the target's own posts, decide on its own decision lists.

1. The target's threads are read without its evaluation split
   (:mod:`~adapter_zoo.adapt.threads`) and split into training, selection and decision
   threads (:mod:`~adapter_zoo.adapt.heldout`); the decision lists' negatives come half from
   BM25's nearest texts, half from the base's nearest embeddings
   (:mod:`~adapter_zoo.adapt.negatives`).
2. Candidates are trained on the training threads' self-supervised pairs (title → body,
   question → accepted answer, duplicate → canonical question; in-batch negatives plus one
   BM25 hard negative each), each run selecting its best step on the selection lists
   (:mod:`~adapter_zoo.adapt.candidate_training`): a new adapter (so ``adapt`` works with an
   empty zoo), the zoo's nearest multi-task adapter continued on the target (TANDA-style),
   and the nearest single-forum adapter continued.
3. Every candidate scores the decision lists (:mod:`~adapter_zoo.adapt.decision_scores`):
   the zero-shot base at its own length and at 512 tokens, the zoo's centroid strategies
   (nearest, fusion of the top k, multi-task, and the centroid rule), the trained adapters,
   a score fusion of the best of them with the base and BM25, and the base fused with BM25
   alone. The answer stage is tried on the same lists
   (:mod:`~adapter_zoo.adapt.fusion_choice`): the base's query feedback, replacing "off"
   only beyond the lists' noise, and both fusions' weights and normalisation, recorded
   while the fusions answer at the default weights.
4. :func:`~adapter_zoo.adapt.decide.decide` keeps the base fused with BM25 unless a
   candidate beats the base by more than the decision lists' noise, and a single model that
   wins answers through its fusion with the base and BM25; the entry is the chosen model,
   and its card records every candidate's score, the margin and the decision.

All of it fits a time budget (:mod:`~adapter_zoo.adapt.budget`, 10 minutes by default): the
base's scoring of the decision lists and one timed training step measure the machine, and
the other stages, sized by :mod:`~adapter_zoo.adapt.stage_sizes`, are planned from them (the
least valuable dropped first, the target's own run shortened last); each training run stops
at its share's end. What a study varies in the training is passed as
:class:`~adapter_zoo.adapt.candidate_training.LearnSettings`.

The objectives' pairs of the training documents add to the threads' pairs
(:mod:`~adapter_zoo.adapt.objective_pairs`). A target of texts without question-answer
structure learns from them alone and decides on their pseudo-queries (first-sentence → rest
pairs where its texts give no objective example); the card says what was possible.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from adapter_zoo.adapt import budget, fusion_choice, stage_sizes
from adapter_zoo.adapt import plan as planning
from adapter_zoo.adapt.candidate_training import (
    EVALUATIONS,
    LearnSettings,
    timed_step,
    train_candidates,
    training_folder,
)
from adapter_zoo.adapt.decision_scores import (
    BASE,
    BASE_LONG,
    LONG_LENGTH,
    DecisionScorer,
    fusion_spec,
    score_zoo,
    zoo_strategies,
)
from adapter_zoo.adapt.negatives import CachedEmbedder
from adapter_zoo.adapt.stage_sizes import Sizes, fit_decision, kept_lists, token_counter
from adapter_zoo.adapt.zoo_members import alias_entry
from adapter_zoo.compose.entry import compose_entry
from adapter_zoo.errors import ZooError
from adapter_zoo.fusion_defaults import BASE_FUSED, BASE_FUSION_WEIGHTS, FUSED, FUSION_WEIGHTS
from adapter_zoo.lengths import BI_MAX_LENGTH
from adapter_zoo.loading import load
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.precision import INT8, current_precision, precision_name, resolve_precision
from adapter_zoo.training.checkpoint import checkpoint_dir
from adapter_zoo.zoo.store import check_zoo_writable, entry_folder, read_card, save_entry

logger = logging.getLogger(__name__)


def learn_and_decide(
    target,
    *,
    name: str,
    zoo=None,
    top_k: int = 3,
    overwrite: bool = False,
    base_model: str = DEFAULT_BASE,
    seed: int = 0,
    max_steps: int | None = None,
    budget_minutes: float | None = budget.DEFAULT_MINUTES,
    keep_candidates: bool = False,
    request: dict | None = None,
    settings: LearnSettings | None = None,
) -> Path:
    """Train candidates on ``target``'s own pairs, decide among them and the zoo's
    strategies on its decision lists, and save the chosen model as entry ``name``.

    Args:
        target: see :func:`~adapter_zoo.adapt.threads.read_threads`.
        name: the zoo entry to write.
        zoo: entry names the zoo strategies and continued adapters may use (default: every
            local adapter entry with a domain centroid; an empty zoo is fine).
        top_k: members of the fusion strategy.
        overwrite: replace an existing entry ``name``.
        base_model: the base of the trained adapters and the zero-shot candidate.
        seed: training and list-building seed.
        max_steps: steps of each training run (default: from the target's size).
        budget_minutes: the run's time budget (:mod:`~adapter_zoo.adapt.budget`: stages
            planned from this machine's measured speed to fit; None: no budget).
        keep_candidates: keep the trained candidates' entries (``<name>--<candidate>``,
            listed in the card's ``kept``), for a study that scores each of them on a test
            set the decision never saw (``benchmarks/studies/outside_study.py``).
        request: what the run was asked (``adapt``'s arguments), recorded in the card.
        settings: how the candidates train
            (:class:`~adapter_zoo.adapt.candidate_training.LearnSettings`; None: ``adapt``'s
            own), what a study varies.

    Returns:
        The entry's folder; its card's ``adapt`` records the target, the splits, the
        budget's plan, every candidate's decision-list scores and the decision.

    Example:
        >>> learn_and_decide("parsed/augur.stackexchange.com", name="augur")  # doctest: +SKIP
    """
    # looked up per call: tests monkeypatch zoo_centroids, held_out_lists and read_threads
    from adapter_zoo.adapt.heldout import DECISION, SELECTION, assign, held_out_lists
    from adapter_zoo.adapt.threads import read_threads
    from adapter_zoo.adapt.zoo_members import zoo_centroids

    settings = settings or LearnSettings()
    budget.check_budget(budget_minutes)
    clock = budget.Clock(budget_minutes)
    final = entry_folder(name)
    if final.exists() and not overwrite:
        raise ZooError(f"zoo entry {name!r} already exists at {final}; pass overwrite")
    check_zoo_writable(checkpoint_dir(name).parent)  # before any model loads or trains
    # 1. the target's threads, split; the decision lists that fit the budget
    target_data = read_threads(target)
    parts = assign(target_data.threads)
    zero_shot = f"sbert:{base_model}"
    decision, embedder, count_tokens, decision_cut = _decision_lists(
        target_data, parts, base_model, zero_shot, clock, seed
    )
    centroids, cards = zoo_centroids(zoo)
    centroids.pop(final.name, None)

    # said once the target has proved readable, as the scoring starts
    asked = current_precision()
    ran = INT8 if asked == INT8 else precision_name(resolve_precision(asked))
    logger.info("adapt %s: the decision lists are scored in %s%s", name, ran, clock.says())
    scorer = DecisionScorer(decision)
    scorer.add(BASE, zero_shot, embedder=embedder)
    zoo_plans = zoo_strategies(target_data, centroids, cards, top_k, zero_shot)
    with tempfile.TemporaryDirectory(prefix="adapter-zoo-adapt-") as tmp:
        # the budget's plan, from the base's scoring and one timed training step
        selection = held_out_lists(target_data, parts, SELECTION).positive_first()
        forum, training = training_folder(target_data, parts, selection, Path(tmp))
        sizes = Sizes(count_tokens, decision, selection, target_data, settings)
        stages = stage_sizes.stages(sizes, training, cards, zoo_plans, max_steps, base_model,
                                    settings)  # fmt: skip
        embedded = sum(count_tokens(list(embedder.rows), BI_MAX_LENGTH))
        rate = budget.Rate.measure(scorer.seconds[BASE], embedded or sizes.decision_tokens)
        if budget_minutes is not None and "own" in stages.runs:
            rate = timed_step(rate, forum, training, target_data.name, name, base_model, seed,
                              stages, settings)  # fmt: skip
        plan = budget.plan(stages, rate, clock.left(), default_evaluations=EVALUATIONS)
        if decision_cut:
            plan.cuts.insert(0, decision_cut)
        if plan.cuts:
            logger.info("adapt %s: the budget's plan: %s", name, "; ".join(plan.cuts))
        # 2. and 3. the zoo's strategies and the trained candidates score the decision lists
        if plan.long_base:
            scorer.add(BASE_LONG, zero_shot, max_length=LONG_LENGTH)
        score_zoo(scorer, zoo_plans, extra=plan.zoo_extra)
        trained = train_candidates(forum, training, target_data.name, name, zoo_plans, base_model,
                                   seed, plan, clock, settings)  # fmt: skip
        for candidate, entry in trained.items():
            logger.info("adapt %s: scoring %s on the decision lists%s", name, candidate,
                        clock.says())  # fmt: skip
            scorer.add(candidate, entry)
    # 3. and 4. the answer stage chosen on the same lists, then the decision
    answer, decided = _answer_and_decide(scorer, zero_shot, seed)
    record = {
        "strategy": "learned",
        "precision": ran,
        "requested": planning.AUTO,
        "target": target_data.about,
        "splits": {part: parts.count(part) for part in ("train", "dev", DECISION)},
        "decision_lists": decision.counts(),
        "training": training,
        "budget": {
            "minutes": budget_minutes,
            "seconds_per_token": rate.seconds_per_token,
            "seconds_per_step": rate.seconds_per_step,
            "plan": plan.to_card(),
            "spent_s": round(clock.spent(), 1),
        },
        "zoo": {k: v for k, v in zoo_plans.items() if k not in ("plans", "starts")},
        "candidates": {
            c: {
                **decided.candidates[c],
                "model": scorer.models[c],
                "by_kind": scorer.map_by_kind(c),
            }
            for c in scorer.aps
        },  # fmt: skip
        "decision": decided.to_card(),
        "answer_stage": answer,
        "reason": decided.reason,
        "seconds": round(clock.spent(), 1),
        "never_read": "the target's evaluation split (parsed forums' test questions)",
    }
    if target_data.texts_only:
        record["texts_only"] = _texts_only_note(target_data, training)
    logger.info("adapt %s: %s", name, record["reason"])
    if keep_candidates:
        record["kept"] = dict(trained)
    card = {"adapt": record, **({"request": request} if request else {})}
    path = _save(name, decided.chosen, scorer, trained, card, overwrite, zero_shot)
    if not keep_candidates:
        for entry in trained.values():
            _remove_candidate(entry)
    return path


def _decision_lists(target_data, parts, base_model, zero_shot, clock, seed):
    """The decision lists one scoring of which fits the budget, half their negatives the
    base's nearest texts (the base embeds their texts once, and the decision's scoring of the
    base reads the same rows); the base's embedder, its token counter
    (:func:`~adapter_zoo.adapt.stage_sizes.token_counter`) and the budget's cut of the lists
    (None: all of them)."""
    # looked up per call: tests monkeypatch held_out_lists
    from adapter_zoo.adapt.heldout import DECISION, held_out_lists

    decision = held_out_lists(target_data, parts, DECISION, seed=seed)
    if not len(decision):
        raise ZooError(
            f"adapt: the target's {len(target_data.threads)} texts give no held-out list to "
            "decide on (each needs a text of two sentences, or a question with an answer); "
            "use --strategy zero-shot or a centroid strategy"
        )
    count_tokens = token_counter(base_model)
    fitted, decision_cut = fit_decision(decision, count_tokens, clock.left(), seed)
    embedder = CachedEmbedder(lambda: load(zero_shot, precision=current_precision()))
    kept = None if decision_cut is None else kept_lists(decision, fitted)
    decision = held_out_lists(target_data, parts, DECISION, seed=seed, embed=embedder,
                              subset=kept)  # fmt: skip
    return decision, embedder, count_tokens, decision_cut


def _answer_and_decide(scorer, zero_shot, seed):
    """The answer stage on the decision lists (:mod:`~adapter_zoo.adapt.fusion_choice`): the
    base fused with BM25, the base with query feedback where the lists choose it, and the
    best single model fused with the base and BM25, each a candidate at the default weights
    (the fusions' grids recorded in the card), then :func:`~adapter_zoo.adapt.decide.decide`."""
    # looked up per call: tests monkeypatch adapt.decide.decide
    from adapter_zoo.adapt.decide import decide

    scorer.fuse(BASE_FUSED, (BASE,), BASE_FUSION_WEIGHTS)
    answer = fusion_choice.tune_base(scorer, zero_shot, base=BASE, seed=seed)
    single = [c for c in scorer.single_models()
              if c not in (BASE, BASE_LONG) and scorer.models[c] != zero_shot]  # fmt: skip
    if single:
        best = max(single, key=lambda c: scorer.aps[c].mean())
        answer["fusion"] = fusion_choice.tune_fusion(scorer, best, base=BASE, seed=seed)
        scorer.fuse(FUSED, (best, BASE), FUSION_WEIGHTS)
    decision = decide(scorer.aps, base=BASE, seed=seed, floor=BASE_FUSED, hedge=FUSED,
                      hedged=frozenset(single))  # fmt: skip
    return answer, decision


def _texts_only_note(target_data, training) -> str:
    """The card's note on a target of texts only: what trained and what decided."""
    pairs = sum((training.get("pairs") or {}).values())
    used = ", ".join(training.get("objectives") or {}) or "none"
    signal = (f"the objectives' pairs ({used}; {pairs} for training), their pseudo-queries' "
              "lists decide (keywords', BM25's own query form, only where no other objective "
              "gives lists)" if training.get("objectives") else
              f"first sentence -> rest pseudo-pairs ({pairs} for training), first-sentence "
              "lists decide")  # fmt: skip
    return (
        f"the target is {len(target_data.threads)} texts without question-answer structure: "
        f"{signal}; no answer or duplicate lists were possible"
    )


def _save(name, chosen, scorer, trained, card, overwrite, zero_shot) -> Path:
    """Entry ``name``: the ``chosen`` candidate as an alias, a copy of a trained candidate
    or a composite, with ``card``."""
    if chosen in (BASE, BASE_LONG):
        length = LONG_LENGTH if chosen == BASE_LONG else None
        return alias_entry(name, zero_shot, card=card, overwrite=overwrite, max_length=length)
    if chosen in trained:
        return _copy_entry(trained[chosen], name, card, overwrite)
    if chosen in (BASE_FUSED, fusion_choice.FEEDBACK):
        return compose_entry(name, scorer.models[chosen], card=card, overwrite=overwrite)
    if chosen == FUSED:
        members, weights = scorer.fused_members[FUSED]
        best = members[0]
        if best in trained:  # the trained member is kept as an entry the fusion names
            adapter = f"{name}-adapter"
            # one an earlier run of this adapt left (killed before the fusion was written)
            # is replaced too: nothing but this adapt writes it
            ours = _member_of(adapter) == name
            _copy_entry(trained[best], adapter, {"adapt_member_of": name},
                        overwrite=overwrite or ours)  # fmt: skip
            best_model = adapter
        else:
            best_model = scorer.models[best]
        spec = fusion_spec((best_model, zero_shot), weights)
        return compose_entry(name, spec, card=card, overwrite=overwrite)
    if chosen.startswith("zoo:"):
        spec = scorer.models[chosen]
        if spec.startswith("fusion:"):
            return compose_entry(name, spec, card=card, overwrite=overwrite)
        return alias_entry(name, spec, card=card, overwrite=overwrite)
    raise ZooError(f"adapt: unknown candidate {chosen!r}")


def _copy_entry(source: str, name: str, extra: dict, overwrite: bool) -> Path:
    """Entry ``name`` holding ``source``'s files, its card with ``extra`` added."""

    folder = entry_folder(source)
    card = read_card(folder)
    files = list(card["files"])
    fields = {k: v for k, v in card.items() if k not in ("name", "files", "created", "version")}

    def writer(target: Path) -> None:
        for relative in files:
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / relative, target / relative)

    return save_entry(writer, name, {**fields, **extra}, overwrite=overwrite)


def _member_of(entry: str) -> str | None:
    """The adapt entry whose fusion member ``entry`` was copied as, if it was."""
    try:
        return read_card(entry_folder(entry)).get("adapt_member_of")
    except (ZooError, OSError):
        return None


def _remove_candidate(entry: str) -> None:
    """Remove a candidate entry this run trained (only those: ``<name>--<candidate>``)."""

    shutil.rmtree(entry_folder(entry), ignore_errors=True)
