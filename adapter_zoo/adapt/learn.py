"""``adapt``'s default: learn from the target's own posts, decide on its own held-out lists.

1. The target's threads are read without its evaluation split
   (:mod:`~adapter_zoo.adapt.threads`) and split into training, selection and decision
   threads (:mod:`~adapter_zoo.adapt.heldout`); the decision lists' negatives come half from
   BM25's nearest texts, half from the base's nearest embeddings
   (:mod:`~adapter_zoo.adapt.negatives`).
2. Candidates are trained on the training threads' self-supervised pairs (title → body,
   question → accepted answer, duplicate → canonical question; in-batch negatives plus one
   BM25 hard negative each), each run selecting its best step on the selection lists:
   a new adapter (so ``adapt`` works with an empty zoo), the zoo's nearest multi-task adapter
   continued on the target (TANDA-style), and the nearest single-forum adapter continued.
3. Every candidate scores the decision lists: the zero-shot base at its own length and at
   512 tokens, the zoo's centroid strategies (nearest, fusion of the top k, multi-task, and
   the centroid rule that ``auto`` used before), the trained adapters, a score fusion of
   the best of them with the base and BM25, and the base fused with BM25 alone.
   The answer stage is chosen on the same lists (:mod:`~adapter_zoo.adapt.fusion_choice`):
   BM25's share, the normalisation and the members' weights of both fusions, and the base's
   query feedback, each replacing its default only beyond the lists' noise.
4. :func:`~adapter_zoo.adapt.decide.decide` keeps the base fused with BM25 unless a
   candidate beats the base by more than the decision lists' noise, and a single model that
   wins answers through its fusion with the base and BM25; the entry is the chosen model,
   and its card records every candidate's score, the margin and the decision.

All of it fits a time budget (:mod:`~adapter_zoo.adapt.budget`, 10 minutes by default): the
base's scoring of the decision lists and one timed training step measure the machine, and
the other stages are planned from them (the least valuable dropped first, the target's own
run shortened last); each training run stops at its share's end.

The objectives' pairs of the training documents add to the threads' pairs
(:mod:`~adapter_zoo.adapt.objective_pairs`). A target of texts without question-answer
structure learns from them alone and decides on their pseudo-queries (first-sentence → rest
pairs where its texts give no objective example); the card says what was possible.
"""

from __future__ import annotations

import logging
import math
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from adapter_zoo.adapt import budget, fusion_choice
from adapter_zoo.adapt import plan as planning
from adapter_zoo.adapt.decide import list_average_precisions
from adapter_zoo.adapt.heldout import CANDIDATES, write_training_folder
from adapter_zoo.adapt.negatives import CachedEmbedder
from adapter_zoo.adapt.zoo_members import CANDIDATE_MARK, MULTITASK_KINDS, alias_entry
from adapter_zoo.compose.entry import compose_entry
from adapter_zoo.compose.fusion import fuse
from adapter_zoo.errors import ZooError
from adapter_zoo.fusion_defaults import BASE_FUSED, BASE_FUSION_WEIGHTS, FUSED, NORMALISATION
from adapter_zoo.lengths import BI_MAX_LENGTH
from adapter_zoo.loading import load
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.precision import INT8, current_precision, precision_name, resolve_precision
from adapter_zoo.ranker.model import resolve_base_model
from adapter_zoo.registry import kind_for_card
from adapter_zoo.training import TrainingConfig, stop_training_at, train
from adapter_zoo.training.checkpoint import checkpoint_dir
from adapter_zoo.training.models import base_layer_count
from adapter_zoo.zoo.store import check_zoo_writable, entry_folder, read_card, save_entry
from stackexchange.lists import bm25_candidate_scores
from stackexchange.parse import read_stats

logger = logging.getLogger(__name__)

BASE = "base"
BASE_LONG = "base@512"
LONG_LENGTH = 512
# The zoo's training budget (recipes/toml/shipped_zoo.toml: 40 steps of 32 pairs at 128
# tokens) as the floor; a larger target gets up to TRAIN_EPOCHS passes over its pairs.
MIN_STEPS = 40
# The budget decides the steps: the cap only keeps a small target from many epochs.
MAX_STEPS = 400
TRAIN_EPOCHS = 3
TRAIN_LENGTH = 128
CONTINUE_STEPS = 40
EVALUATIONS = 4
# The lowest layers the target's own adapter leaves out (AdapterDrop's drop_lower; the layers
# below then run forward only, once per distinct text: adapter_zoo.training.prefix_cache, and
# the planner prices a step by them: budget.step_cost). None: adapters in the upper layers
# only train more pairs a second but teach far less per pair than adapters in every layer
# (benchmarks/perf/results/train_throughput.json; docs/performance.md, "adapt's learner").
OWN_DROP_LOWER = 0
# What the own run trains beyond the shared fields: a new bottleneck adapter in every layer.
# The alternatives (LoRA, full fine-tuning, guided or distilled losses, mined negatives) are
# tried by patching this (benchmarks/perf/adapt_budget_curve.py --variant): none made adapt's
# entry better, and a fully trained entry is the whole model instead of an adapter
# (results/adapt_budget_curve.json; docs/results.md, "What each pair teaches").
OWN_TRAINING: dict = {"mode": "adapter"}
# Selection lists a run scores at each evaluation, at most (TrainingConfig.dev_queries'
# default): past a few hundred they add little to the choice of step and cost every
# evaluation (a large target's lists take minutes a scoring on 2 cores: docs/performance.md).
SELECTION_LISTS = 200
BATCH = 32
# Texts a training example reads: the anchor, its positive and one hard negative.
EXAMPLE_TEXTS = 3
SIZE_SAMPLE = 2000  # texts whose tokens are counted for the budget's sizes
# The score fusion candidate (FUSED: the best candidate, the base and BM25) and the zero-shot
# base fused with BM25 (BASE_FUSED): what a user has without training, the baseline adapt's
# studies measure against, and the answer when no candidate beats the base on the held-out
# lists. Their default weights are adapter_zoo.fusion_defaults'; the latter costs no model
# scoring.
# The card's training record when the plan fits no run (read by recipes.quickstart)
NO_ROOM_TO_TRAIN = "the time budget leaves no room for training (the card's budget)"


def _single_models(scorer) -> list[str]:
    """Candidates that are one model by name (a fusion can name them as members)."""
    return [c for c, model in scorer.models.items() if ":" not in model or
            model.startswith(("sbert:", "prf:"))]  # fmt: skip


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
) -> Path:
    """Train candidates on ``target``'s own pairs, decide among them and the zoo's
    strategies on its held-out lists, and save the chosen model as entry ``name``.

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
            set the decision never saw (``benchmarks/perf/outside_study.py``).
        request: what the run was asked (``adapt``'s arguments), recorded in the card.

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

    budget.check_budget(budget_minutes)
    clock = budget.Clock(budget_minutes)
    final = entry_folder(name)
    if final.exists() and not overwrite:
        raise ZooError(f"zoo entry {name!r} already exists at {final}; pass overwrite")
    check_zoo_writable(checkpoint_dir(name).parent)  # before any model loads or trains
    target_data = read_threads(target)
    parts = assign(target_data.threads)
    zero_shot = f"sbert:{base_model}"
    decision = held_out_lists(target_data, parts, DECISION, seed=seed)
    if not len(decision):
        raise ZooError(
            f"adapt: the target's {len(target_data.threads)} texts give no held-out list to "
            "decide on (each needs a text of two sentences, or a question with an answer); "
            "use --strategy zero-shot or a centroid strategy"
        )
    count_tokens = _token_counter(base_model)
    fitted, decision_cut = _fit_decision(decision, count_tokens, clock.left(), seed)
    # the lists the budget keeps, half their negatives the base's nearest texts: the base
    # embeds their texts once, and the decision's scoring of the base reads the same rows
    embedder = CachedEmbedder(lambda: load(zero_shot, precision=current_precision()))
    kept = None if decision_cut is None else _kept_lists(decision, fitted)
    decision = held_out_lists(target_data, parts, DECISION, seed=seed, embed=embedder,
                              subset=kept)  # fmt: skip
    centroids, cards = zoo_centroids(zoo)
    centroids.pop(final.name, None)

    # said once the target has proved readable, as the scoring starts
    asked = current_precision()
    ran = INT8 if asked == INT8 else precision_name(resolve_precision(asked))
    logger.info("adapt %s: the decision lists are scored in %s%s", name, ran, clock.says())
    scorer = _DecisionScorer(decision)
    scorer.add(BASE, zero_shot, embedder=embedder)
    zoo_plans = _zoo_plans(target_data, centroids, cards, top_k, zero_shot)
    with tempfile.TemporaryDirectory(prefix="adapter-zoo-adapt-") as tmp:
        selection = held_out_lists(target_data, parts, SELECTION).positive_first()
        forum, training = training_folder(target_data, parts, selection, Path(tmp))
        sizes = _Sizes(count_tokens, decision, selection, target_data)
        stages = _stages(sizes, training, cards, zoo_plans, max_steps, base_model)
        embedded = sum(count_tokens(list(embedder.rows), BI_MAX_LENGTH))
        rate = budget.Rate.measure(scorer.seconds[BASE], embedded or sizes.decision_tokens)
        if budget_minutes is not None and "own" in stages.runs:
            rate = _timed_step(rate, forum, training, target_data.name, name, base_model, seed,
                               stages)  # fmt: skip
        plan = budget.plan(stages, rate, clock.left(), default_evaluations=EVALUATIONS)
        if decision_cut:
            plan.cuts.insert(0, decision_cut)
        if plan.cuts:
            logger.info("adapt %s: the budget's plan: %s", name, "; ".join(plan.cuts))
        if plan.long_base:
            scorer.add(BASE_LONG, zero_shot, max_length=LONG_LENGTH)
        _score_zoo(scorer, zoo_plans, extra=plan.zoo_extra)
        trained = _train_candidates(forum, training, target_data.name, name, zoo_plans,
                                    base_model, seed, plan, clock)  # fmt: skip
        for candidate, entry in trained.items():
            logger.info("adapt %s: scoring %s on the decision lists%s", name, candidate,
                        clock.says())  # fmt: skip
            scorer.add(candidate, entry)
    # looked up per call: tests monkeypatch adapt.decide.decide
    from adapter_zoo.adapt.decide import decide

    scorer.fuse(BASE_FUSED, (BASE,), BASE_FUSION_WEIGHTS)
    answer = fusion_choice.tune_base(scorer, zero_shot, base=BASE, seed=seed)
    single = [c for c in _single_models(scorer)
              if c not in (BASE, BASE_LONG) and scorer.models[c] != zero_shot]  # fmt: skip
    if single:
        best = max(single, key=lambda c: scorer.aps[c].mean())
        weights, how, answer.card["fusion"] = fusion_choice.tune_fusion(scorer, best, base=BASE,
                                                                        seed=seed)  # fmt: skip
        scorer.fuse(FUSED, (best, BASE), weights, normalisation=how)
    decision_record = decide(scorer.aps, base=BASE, seed=seed, floor=answer.floor, hedge=FUSED,
                             hedged=frozenset(single))  # fmt: skip
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
                **decision_record.candidates[c],
                "model": scorer.models[c],
                "by_kind": scorer.map_by_kind(c),
            }
            for c in scorer.aps
        },  # fmt: skip
        "decision": decision_record.to_card(),
        "answer_stage": answer.card,
        "reason": decision_record.reason,
        "seconds": round(clock.spent(), 1),
        "never_read": "the target's evaluation split (parsed forums' test questions)",
    }
    if target_data.texts_only:
        record["texts_only"] = _texts_only_note(target_data, training)
    chosen = decision_record.chosen
    logger.info("adapt %s: %s", name, record["reason"])
    if keep_candidates:
        record["kept"] = dict(trained)
    card = {"adapt": record, **({"request": request} if request else {})}
    path = _save(name, chosen, scorer, trained, card, overwrite, zero_shot)
    if not keep_candidates:
        for entry in trained.values():
            _remove_candidate(entry)
    return path


class _DecisionScorer:
    """Each candidate's per-list AP on the decision lists, its member scores kept for
    fusions."""

    def __init__(self, lists):
        self.lists = lists
        self.pairs = lists.pairs()
        self.scores: dict[str, np.ndarray] = {}
        self.aps: dict[str, np.ndarray] = {}
        self.models: dict[str, str] = {}
        self.seconds: dict[str, float] = {}  # each scoring's wall time (the budget's rate)
        self.fused_members: dict[str, tuple] = {}  # fusion with BM25 -> (members, weights)
        self.bm25: np.ndarray | None = None  # BM25's scores of the lists' pairs, once
        self.vectors: tuple | None = None  # the base's (query, candidate) rows of each pair
        self.normalisations: dict[str, str] = {}  # fusion -> its normalisation

    def _record(self, candidate: str, scores, model: str) -> None:
        self.scores[candidate] = np.asarray(scores, dtype=np.float64)
        self.aps[candidate] = list_average_precisions(scores, self.lists.labels)
        self.models[candidate] = model
        logger.info("adapt: %s MAP %.4f on the decision lists", candidate,
                    self.aps[candidate].mean())  # fmt: skip

    def record(self, candidate: str, scores, model: str) -> None:
        """Record ``candidate``'s flat scores over the lists' pairs, computed elsewhere."""
        self._record(candidate, scores, model)

    def add(self, candidate: str, model: str, *, max_length: int | None = None,
            embedder=None) -> None:  # fmt: skip
        """Score ``candidate`` (the model ``model``) on the lists; with ``embedder`` (the
        base's :class:`~adapter_zoo.adapt.negatives.CachedEmbedder`), from its embeddings of
        each pair's texts, kept (``vectors``: the query feedback's grid reuses them), its
        cosines computed as a bi-encoder's ``score`` computes them, and its time the
        embedder's."""
        if model in self.models.values() and max_length is None:
            known = next(c for c, m in self.models.items() if m == model)
            self._record(candidate, self.scores[known], model)
            return
        if embedder is not None:
            scores = self._embedded(embedder)
            self.seconds[candidate] = embedder.seconds
            self._record(candidate, scores, model)
            return
        began = time.monotonic()
        ranker = load(model, max_length=max_length, precision=current_precision())
        scores = ranker.score(self.pairs, progress=True)
        self.seconds[candidate] = time.monotonic() - began
        label = model if max_length is None else f"{model}@{max_length}"
        self._record(candidate, scores, label)

    def _embedded(self, embed) -> np.ndarray:
        texts: dict[str, int] = {}
        for query, candidate in self.pairs:
            texts.setdefault(query, len(texts))
            texts.setdefault(candidate, len(texts))
        rows = np.asarray(embed(list(texts)), dtype=np.float32)
        self.vectors = (rows[[texts[q] for q, _ in self.pairs]],
                        rows[[texts[c] for _, c in self.pairs]])  # fmt: skip
        return np.einsum("ij,ij->i", *self.vectors)

    def member_scores(self, model: str) -> np.ndarray:
        known = next((c for c, m in self.models.items() if m == model), None)
        if known is None:
            self.add(model, model)
            known = model
        return self.scores[known]

    def fuse(self, candidate: str, members, weights, *, normalisation=NORMALISATION) -> None:
        """A fusion of candidates and ``bm25`` (z-scores unless ``normalisation`` says
        otherwise); ``members`` name candidates, BM25 is added last."""
        if self.bm25 is None:
            bm25 = bm25_candidate_scores(self.lists.queries, self.lists.candidates)
            self.bm25 = np.concatenate(bm25)
        parts = [self.scores[m] for m in members] + [self.bm25]
        spec = "fusion:" + "+".join(
            f"{self.models[m]}*{w:g}" for m, w in zip(members, weights)
        ) + f"+bm25*{weights[-1]:g}"  # fmt: skip
        if normalisation != NORMALISATION:
            spec += f"@{normalisation}"
        self.fuse_scores(candidate, parts, weights, spec, normalisation=normalisation)
        self.fused_members[candidate] = (tuple(members), tuple(weights))
        self.normalisations[candidate] = normalisation

    def fuse_scores(self, candidate: str, parts, weights, spec: str, *,
                    normalisation=NORMALISATION) -> None:  # fmt: skip
        """Record ``candidate``: the per-list fusion (:func:`adapter_zoo.compose.fusion.fuse`)
        of ``parts``, flat score arrays over the decision lists' pairs."""
        fused, start = [], 0
        for candidates in self.lists.candidates:
            stop = start + len(candidates)
            fused.append(fuse([p[start:stop] for p in parts], weights,
                              normalisation=normalisation))  # fmt: skip
            start = stop
        self._record(candidate, np.concatenate(fused), spec)

    def map_by_kind(self, candidate: str) -> dict[str, float]:
        kinds = np.asarray(self.lists.kinds)
        return {
            kind: round(float(self.aps[candidate][kinds == kind].mean()), 4)
            for kind in sorted(set(self.lists.kinds))
        }


def _zoo_plans(target_data, centroids, cards, top_k, zero_shot) -> dict:
    """The zoo's centroid strategies for the target (no scoring yet): what they choose, for
    the card, the scorings and the entries the training candidates continue."""
    # looked up per call: tests monkeypatch zoo.domain.domain_centroid
    from adapter_zoo.zoo.domain import domain_centroid

    if not centroids:
        return {"entries": 0}
    target_centroid = domain_centroid(target_data.texts())
    multitask = {n: c for n, c in centroids.items()
                 if kind_for_card(cards[n]).name in MULTITASK_KINDS}  # fmt: skip
    single = {n: c for n, c in centroids.items() if n not in multitask}
    info: dict = {"entries": len(centroids), "plans": {}}
    if single:
        nearest = planning.plan_adaptation(target_centroid, single, planning.NEAREST)
        info["similarities"] = {n: round(s, 4) for n, s in nearest.similarities.items()}
        info["plans"]["nearest"] = nearest
        info["plans"]["fusion"] = planning.plan_adaptation(
            target_centroid, single, planning.FUSION, top_k=top_k
        )
        rule = planning.plan_adaptation(target_centroid, single, planning.CENTROID, top_k=top_k,
                                        base=zero_shot)  # fmt: skip
        info["plans"]["rule"] = rule
        info["centroid_rule"] = rule.reason
    if multitask:
        best = planning.plan_adaptation(target_centroid, multitask, planning.NEAREST)
        info["plans"]["multitask"] = best
    return info


def _score_zoo(scorer, zoo_plans: dict, *, extra: bool) -> None:
    """Score the zoo's nearest adapter, and with ``extra`` its fusion, the centroid rule and
    its multi-task adapter, on the decision lists."""
    plans = zoo_plans.get("plans", {})
    if "nearest" in plans:
        scorer.add("zoo:nearest", plans["nearest"].members[0])
    if not extra:
        return
    if "fusion" in plans:
        fusion, rule = plans["fusion"], plans["rule"]
        _fuse_members(scorer, "zoo:fusion", fusion.members, fusion.weights)
        if rule.strategy == planning.FUSION:
            _fuse_members(scorer, "zoo:centroid-rule", rule.members, rule.weights)
        else:
            scorer.add("zoo:centroid-rule", rule.members[0])
    if "multitask" in plans:
        scorer.add("zoo:multitask", plans["multitask"].members[0])


def _fuse_members(scorer, candidate, members, weights) -> None:
    parts = [scorer.member_scores(m) for m in members]
    spec = "fusion:" + "+".join(f"{m}*{w:.4f}" for m, w in zip(members, weights))
    scorer.fuse_scores(candidate, parts, weights, spec)


def own_steps(pairs: int, batch_size: int) -> int:
    """The own run's steps before the budget fits them: up to TRAIN_EPOCHS passes."""
    per_epoch = math.ceil(pairs / batch_size)
    return int(min(MAX_STEPS, max(MIN_STEPS, TRAIN_EPOCHS * per_epoch)))


def _token_counter(base_model):
    """``count(texts, cap)``: each text's tokens with the base's own tokenizer, at most ``cap``
    (each text counted once per cap: the decision lists' texts are counted to cap them, then
    again, those kept, to size the plan)."""
    # transformers on first use: adapt's CLI starts without it
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve_base_model(base_model))
    counted: dict[tuple[str, int], int] = {}

    def count(texts, cap) -> list[int]:
        texts = list(texts)
        new = list(dict.fromkeys(t for t in texts if (t, cap) not in counted))
        if new:
            ids = tokenizer(new, add_special_tokens=True, truncation=True,
                            max_length=cap)["input_ids"]  # fmt: skip
            counted.update(((t, cap), len(row)) for t, row in zip(new, ids, strict=True))
        return [counted[t, cap] for t in texts]

    return count


def _fit_decision(decision, count_tokens, seconds_left, seed):
    """The decision lists one scoring of which fits the budget's share
    (:func:`budget.decision_tokens_allowed`), a seeded sample of at least
    :data:`budget.MIN_DECISION_LISTS`, and the cut that says so (None: all of them)."""
    allowed = budget.decision_tokens_allowed(seconds_left)
    if allowed is None or len(decision) <= budget.MIN_DECISION_LISTS:
        return decision, None
    texts = decision.texts()
    tokens = dict(zip(texts, count_tokens(texts, BI_MAX_LENGTH)))
    if sum(tokens.values()) <= allowed:
        return decision, None
    # a text shared by several lists (a debate's counters) is read once: count it once
    seen, used, kept = set(), 0, []
    for i in np.random.default_rng(seed).permutation(len(decision)):
        new = {t for t in (decision.queries[i], *decision.candidates[i]) if t not in seen}
        cost = sum(tokens[t] for t in new)
        if used + cost > allowed and len(kept) >= budget.MIN_DECISION_LISTS:
            break
        seen |= new
        used += cost
        kept.append(int(i))
    cut = f"{len(kept)} of {len(decision)} decision lists"
    return decision.subset(sorted(kept)), cut


def _kept_lists(lists, kept) -> list[int]:
    """The indices in ``lists`` of ``kept``, an ordered subset of them."""
    out, j = [], 0
    for i, entry in enumerate(zip(lists.kinds, lists.queries, lists.candidates)):
        if j < len(kept) and entry == (kept.kinds[j], kept.queries[j], kept.candidates[j]):
            out.append(i)
            j += 1
    return out


class _Sizes:
    """Tokens the base reads in each stage, counted with its own tokenizer (a sample of the
    training texts; every distinct text of the decision and selection lists)."""

    def __init__(self, tokens, decision, selection, target_data):
        distinct = decision.texts()
        self.decision_tokens = sum(tokens(distinct, BI_MAX_LENGTH))
        self.decision_tokens_long = sum(tokens(distinct, LONG_LENGTH))
        self.selection_lists = len(selection)
        sample = selection[: SIZE_SAMPLE // (1 + CANDIDATES)]
        if sample:
            texts = sorted({t for q, cands in sample for t in (q, *cands)})
            self.selection_tokens_per_list = sum(tokens(texts, BI_MAX_LENGTH)) / len(sample)
        else:
            self.selection_tokens_per_list = 0.0
        rng = np.random.default_rng(0)
        threads = target_data.threads
        picked = rng.permutation(len(threads))[: SIZE_SAMPLE // 2]
        texts = [t for i in picked for t in (threads[i].title, threads[i].answer or threads[i].body)
                 if t]  # fmt: skip
        mean = float(np.mean(tokens(texts, TRAIN_LENGTH))) if texts else TRAIN_LENGTH
        self.step_tokens = BATCH * EXAMPLE_TEXTS * mean


def _starts(zoo_plans, cards) -> dict:
    """Training run -> the zoo entry it continues (None: a new adapter)."""
    starts = {"own": None}
    plans = zoo_plans.get("plans", {})
    bi_adapter = ("bi-adapter", "bi-multitask")
    for run, plan_name in (("from-multitask", "multitask"), ("from-nearest", "nearest")):
        if plan_name in plans:
            entry = plans[plan_name].members[0]
            if kind_for_card(cards[entry]).name in bi_adapter:
                starts[run] = entry
    return starts


def _stages(sizes, training, cards, zoo_plans, max_steps, base_model) -> budget.Stages:
    """The stages a run asks for, sized for the budget's plan."""
    plans = zoo_plans.get("plans", {})
    runs = {}
    if "pair_kinds" in training and "skipped" not in training:
        starts = _starts(zoo_plans, cards)
        zoo_plans["starts"] = starts
        own = max_steps or own_steps(sum(training["pairs"].values()), BATCH)
        for run, start in starts.items():
            runs[run] = own if start is None else min(own, max_steps or CONTINUE_STEPS)
    extra = 0
    if "fusion" in plans:
        extra += max(0, len(plans["fusion"].members) - 1)
    if "multitask" in plans:
        extra += 1
    return budget.Stages(
        decision_tokens=sizes.decision_tokens, decision_tokens_long=sizes.decision_tokens_long,
        selection_tokens_per_list=sizes.selection_tokens_per_list,
        selection_lists=min(sizes.selection_lists, SELECTION_LISTS),
        step_tokens=sizes.step_tokens, runs=runs, zoo_core=int("nearest" in plans),
        zoo_extra=extra, frozen_share=_frozen_share(runs, base_model),
        step_cap=None if max_steps else MAX_STEPS,
    )  # fmt: skip


def _frozen_share(runs, base_model) -> dict[str, float]:
    """The own run's share of the base's layers below its adapter (:data:`OWN_DROP_LOWER`);
    a continued adapter keeps its entry's layers (the zoo's: all)."""
    layers = base_layer_count(base_model)
    if "own" not in runs or not layers:
        return {}
    return {"own": OWN_DROP_LOWER / layers}


def training_folder(target_data, parts, selection, tmp: Path):
    """The target's training folder (training and selection threads) and the card's
    training record: its pairs and pair kinds, or why nothing can be trained."""
    if not selection:
        skipped = "no selection thread with a ranking list: nothing to select a training run on"
        return None, {"skipped": skipped}
    forum = write_training_folder(target_data, parts, tmp, selection)
    stats = read_stats(forum)
    counts = stats["pairs"]
    train_pairs = {kind: counts[kind]["train"] for kind in counts}
    kinds = [k for k, folder in (("question_answer", "title_answer"), ("title_body", "title_body"),
                                 ("duplicates", "duplicates"), ("objectives", "objectives"))
             if train_pairs[folder] > 1]  # fmt: skip
    record: dict = {"pairs": train_pairs, "pair_kinds": kinds,
                    "structure": stats["structure"], "objectives": stats["objectives"]}  # fmt: skip
    if not kinds:
        record["skipped"] = "fewer than 2 training pairs of any kind: nothing to learn from"
    return forum, record


def _train_candidates(forum, record, target_name, name, zoo_plans, base_model, seed, plan,
                      clock) -> dict:  # fmt: skip
    """Train the planned candidates into the zoo as hidden-purpose entries
    ``<name>--<candidate>``; return candidate -> entry name, adding each run to ``record``
    (the card's training record)."""
    if "skipped" in record:
        return {}
    if not plan.steps:
        record["skipped"] = NO_ROOM_TO_TRAIN
        return {}
    starts = zoo_plans.get("starts", {"own": None})
    trained, runs = {}, {}
    for candidate, run_steps in plan.steps.items():
        start = starts[candidate]
        entry = f"{name}{CANDIDATE_MARK}{candidate}"
        config = _run_config(forum, record, target_name, entry, base_model, seed, start,
                             max_steps=run_steps, eval_steps=_eval_steps(plan, candidate),
                             dev_queries=max(1, plan.selection_lists))  # fmt: skip
        began = time.perf_counter()
        logger.info("adapt: training %s (%d steps%s)%s", entry, run_steps,
                    f", from {start}" if start else "", clock.says())  # fmt: skip
        with stop_training_at(plan.deadline(candidate, clock)):
            path = train(config)

        card = read_card(path)
        runs[candidate] = {
            "from": start,
            "steps": run_steps,
            "steps_run": card["training"]["steps"],
            "pairs_seen": card["training"]["steps"] * BATCH,
            "drop_lower": card["training"]["drop_lower"],
            "prefix_cache": card["training"]["memory"].get("prefix_cache"),
            "best_step": card["training"]["best_step"],
            "selection_map": card["scores"].get("dev_map"),
            "selection_lists": card["training"]["dev_lists"],
            "max_length": card.get("max_length"),
            "seconds": round(time.perf_counter() - began, 1),
        }
        trained[candidate] = entry
    record["runs"] = runs
    return trained


def _run_config(forum, record, target_name, entry, base_model, seed, start,
                **steps) -> TrainingConfig:  # fmt: skip
    """A candidate's training run (``start``: the entry it continues, None: a new adapter)."""
    how = OWN_TRAINING if start is None else {"mode": "adapter"}
    return TrainingConfig(
        **how, encoder="bi", data=str(forum.parent), forums=(target_name,),
        name=entry, base_model=base_model, pair_kinds=tuple(record["pair_kinds"]),
        hard_negatives=True, max_length=TRAIN_LENGTH, batch_size=BATCH, seed=seed,
        init_from=start, keep_start=False, precision=current_precision(), overwrite=True,
        drop_lower=OWN_DROP_LOWER if start is None else 0, **steps,
    )  # fmt: skip


def _timed_step(rate, forum, record, target_name, name, base_model, seed, stages):
    """``rate`` with the seconds of one step of the own run, timed here
    (:func:`adapter_zoo.training.probe.step_seconds`): the plan prices every run's steps by
    it, not by the scoring rate."""
    # heavy: training.probe loads torch and sentence-transformers when imported
    from adapter_zoo.training.probe import step_seconds

    config = _run_config(forum, record, target_name, f"{name}{CANDIDATE_MARK}own", base_model,
                         seed, None)  # fmt: skip
    seconds = step_seconds(config)
    logger.info("adapt %s: a training step takes %.2f s here", name, seconds)
    return budget.Rate(rate.seconds_per_token, seconds, stages.frozen_share.get("own", 0.0))


def _eval_steps(plan, run: str) -> int:
    """A run's steps between evaluations: its last step is always one, so with one evaluation
    that is all; a run the budget cut is spaced by the steps that fit (its deadline ends it
    before the steps asked)."""
    if plan.evaluations == 1:
        return plan.steps[run]
    return math.ceil(plan.fitted.get(run, plan.steps[run]) / plan.evaluations)


def _texts_only_note(target_data, training) -> str:
    pairs = sum((training.get("pairs") or {}).values())
    used = ", ".join(training.get("objectives") or {}) or "none"
    signal = (f"the objectives' pairs ({used}; {pairs} for training), their pseudo-queries' "
              "lists decide" if training.get("objectives") else
              f"first sentence -> rest pseudo-pairs ({pairs} for training), first-sentence "
              "lists decide")  # fmt: skip
    return (
        f"the target is {len(target_data.threads)} texts without question-answer structure: "
        f"{signal}; no answer or duplicate lists were possible"
    )


def _save(name, chosen, scorer, trained, card, overwrite, zero_shot) -> Path:
    if chosen in (BASE, BASE_LONG):
        length = LONG_LENGTH if chosen == BASE_LONG else None
        return alias_entry(name, zero_shot, card=card, overwrite=overwrite, max_length=length)
    if chosen in trained:
        return _copy_entry(trained[chosen], name, card, overwrite)
    if chosen in (BASE_FUSED, fusion_choice.BASE_FUSED_TUNED, fusion_choice.FEEDBACK):
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
        spec = f"fusion:{best_model}*{weights[0]:g}+{zero_shot}*{weights[1]:g}+bm25*{weights[2]:g}"
        if scorer.normalisations[FUSED] != NORMALISATION:
            spec += f"@{scorer.normalisations[FUSED]}"
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
