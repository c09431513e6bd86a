"""What each of ``adapt``'s stages reads, for the budget's plan
(:func:`~adapter_zoo.adapt.budget.plan`): the tokens the base reads, counted with its own
tokenizer, the decision lists one scoring of which fits the budget's share, and the
stages the run asks for (:func:`stages`)."""

from __future__ import annotations

import numpy as np

from adapter_zoo.adapt import budget
from adapter_zoo.adapt.candidate_training import (
    CONTINUE_STEPS,
    EXAMPLE_TEXTS,
    MAX_STEPS,
    OWN_DROP_LOWER,
    SELECTION_LISTS,
    TRAIN_LENGTH,
    LearnSettings,
    own_steps,
)
from adapter_zoo.adapt.decision_scores import LONG_LENGTH
from adapter_zoo.adapt.heldout import CANDIDATES
from adapter_zoo.lengths import BI_MAX_LENGTH
from adapter_zoo.ranker.model import resolve_base_model
from adapter_zoo.registry import kind_for_card
from adapter_zoo.training.models import base_layer_count

SIZE_SAMPLE = 2000  # texts whose tokens are counted for the budget's sizes


def token_counter(base_model):
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


def fit_decision(decision, count_tokens, seconds_left, seed):
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


def kept_lists(lists, kept) -> list[int]:
    """The indices in ``lists`` of ``kept``, an ordered subset of them."""
    out, j = [], 0
    for i, entry in enumerate(zip(lists.kinds, lists.queries, lists.candidates)):
        if j < len(kept) and entry == (kept.kinds[j], kept.queries[j], kept.candidates[j]):
            out.append(i)
            j += 1
    return out


class Sizes:
    """Tokens the base reads in each stage, counted with its own tokenizer (a sample of the
    training texts; every distinct text of the decision and selection lists)."""

    def __init__(self, tokens, decision, selection, target_data, settings: LearnSettings):
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
        self.step_tokens = settings.batch * EXAMPLE_TEXTS * mean


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


def stages(sizes, training, cards, zoo_plans, max_steps, base_model,
           settings: LearnSettings) -> budget.Stages:  # fmt: skip
    """The stages a run asks for, sized for the budget's plan (``zoo_plans`` gains the
    training runs' ``starts``)."""
    plans = zoo_plans.get("plans", {})
    runs = {}
    if "pair_kinds" in training and "skipped" not in training:
        starts = _starts(zoo_plans, cards)
        zoo_plans["starts"] = starts
        own = max_steps or own_steps(sum(training["pairs"].values()), settings.batch)
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
