"""``adapt``'s trained candidates: the target's training folder and the runs trained on it.

Each run trains on the training threads' self-supervised pairs (title → body, question →
accepted answer, duplicate → canonical question, the objectives' pairs; in-batch negatives
plus one BM25 hard negative each) and selects its best step on the selection lists:

* ``own``: a new adapter (so ``adapt`` works with an empty zoo), trained as
  :class:`LearnSettings` says;
* ``from-multitask`` and ``from-nearest``: the zoo's nearest multi-task and single-forum
  adapters continued on the target (TANDA-style).

Each run stops at its share of the budget's end (:func:`~adapter_zoo.adapt.budget.plan`).

Example:
    >>> LearnSettings().batch, LearnSettings().own_training
    (32, {'mode': 'adapter'})
    >>> LearnSettings(batch=128).batch
    128
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from adapter_zoo.adapt import budget
from adapter_zoo.adapt.heldout import write_training_folder
from adapter_zoo.adapt.zoo_members import CANDIDATE_MARK
from adapter_zoo.precision import current_precision
from adapter_zoo.training import TrainingConfig, stop_training_at, train
from adapter_zoo.zoo.store import read_card
from stackexchange.parse import read_stats

logger = logging.getLogger(__name__)

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
# (benchmarks/results/train_throughput.json; docs/performance.md, "adapt's learner").
OWN_DROP_LOWER = 0
# Selection lists a run scores at each evaluation, at most (TrainingConfig.dev_queries'
# default): past a few hundred they add little to the choice of step and cost every
# evaluation (docs/performance.md, "adapt's learner").
SELECTION_LISTS = 200
# A run to a budget trades the base's attention dropout for more steps: without it a CPU
# takes attention's fused kernel, whose steps are faster and hold no attention matrix
# (TrainingConfig.attention_dropout; the measurement in benchmarks/speed/attention_dropout.py).
ATTENTION_DROPOUT = 0.0
BATCH = 32
# Texts a training example reads: the anchor, its positive and one hard negative.
EXAMPLE_TEXTS = 3
# The card's training record when the plan fits no run (read by recipes.quickstart)
NO_ROOM_TO_TRAIN = "the time budget leaves no room for training (the card's budget)"


@dataclass(frozen=True)
class LearnSettings:
    """How ``adapt`` trains its candidates: what a study varies, passed to
    :func:`~adapter_zoo.adapt.learn.learn_and_decide` (the defaults are ``adapt``'s own).

    Attributes:
        batch: pairs a training step reads, in every run (the budget prices a step by it).
        own_training: what the own run trains beyond the shared fields, as
            :class:`~adapter_zoo.training.TrainingConfig` fields: by default a new bottleneck
            adapter in every layer. The alternatives (LoRA, full fine-tuning, guided or
            distilled losses, mined negatives: ``benchmarks/studies/adapt_budget_curve.py
            --variant``) made no better entry, and a fully trained entry is the whole model
            instead of an adapter (docs/results.md, "What each pair teaches").
    """

    batch: int = BATCH
    own_training: dict = field(default_factory=lambda: {"mode": "adapter"})


def own_steps(pairs: int, batch_size: int) -> int:
    """The own run's steps before the budget fits them: up to TRAIN_EPOCHS passes."""
    per_epoch = math.ceil(pairs / batch_size)
    return int(min(MAX_STEPS, max(MIN_STEPS, TRAIN_EPOCHS * per_epoch)))


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


def train_candidates(forum, record, target_name, name, zoo_plans, base_model, seed, plan,
                     clock, settings: LearnSettings) -> dict:  # fmt: skip
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
        config = run_config(forum, record, target_name, entry, base_model, seed, start, settings,
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
            "pairs_seen": card["training"]["steps"] * settings.batch,
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


def run_config(forum, record, target_name, entry, base_model, seed, start,
               settings: LearnSettings, **steps) -> TrainingConfig:  # fmt: skip
    """A candidate's training run (``start``: the entry it continues, None: a new adapter)."""
    how = settings.own_training if start is None else {"mode": "adapter"}
    return TrainingConfig(
        **how, encoder="bi", data=str(forum.parent), forums=(target_name,),
        name=entry, base_model=base_model, pair_kinds=tuple(record["pair_kinds"]),
        hard_negatives=True, max_length=TRAIN_LENGTH, batch_size=settings.batch, seed=seed,
        init_from=start, keep_start=False, precision=current_precision(), overwrite=True,
        drop_lower=OWN_DROP_LOWER if start is None else 0,
        attention_dropout=ATTENTION_DROPOUT, **steps,
    )  # fmt: skip


def timed_step(rate, forum, record, target_name, name, base_model, seed, stages,
               settings: LearnSettings) -> budget.Rate:  # fmt: skip
    """``rate`` with the seconds of one step of the own run, timed here
    (:func:`adapter_zoo.training.probe.step_seconds`): the plan prices every run's steps by
    it, not by the scoring rate."""
    # heavy: training.probe loads torch and sentence-transformers when imported
    from adapter_zoo.training.probe import step_seconds

    config = run_config(forum, record, target_name, f"{name}{CANDIDATE_MARK}own", base_model,
                        seed, None, settings)  # fmt: skip
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
