"""``adapt``'s time budget: what a run can afford, planned from this machine's measured speed.

Every stage of ``adapt``'s default strategy reads texts through the base model: scoring the
decision lists (once per candidate), a training step (a batch of anchors, positives and hard
negatives, forward and backward), scoring the selection lists (at every evaluation of a
training run). Scoring is priced by the seconds per token the base reads, taken from the
scoring of the decision lists by the zero-shot base, which every run does first; a training
step by a step of the run's own training timed on this machine
(:func:`adapter_zoo.training.probe.step_seconds`), since a step's backward pass, optimizer
and padding cost the scoring rate a factor that differs from machine to machine. From them
:func:`plan` estimates each remaining stage and fits them into what is left of the
budget, keeping what the leave-one-forum-out study found worth most
(``benchmarks/results/adapt_study.json``: the target's own adapter and the fusion of
the best candidate with the base won 7 of 8 forums; the continued zoo adapters won none):
it drops the least valuable stages first (:data:`DROP_ORDER`), then shortens the target's
own run (fewer selection lists, fewer evaluations, fewer steps), and when not even
:data:`MIN_STEPS` steps fit it trains nothing and says so; a budget with room left over
gives the target's own run more steps, to its deadline (``Stages.step_cap``). Each training
run also stops at the end of its share (a deadline,
:func:`adapter_zoo.training.stop_training_at`), so a wrong estimate costs a step or two,
never the budget. The plan and what ran go into the card.

Example:
    >>> rate = Rate(seconds_per_token=2e-5)  # about 2 CPU cores reading all-MiniLM-L6-v2
    >>> stages = Stages(decision_tokens=400_000, decision_tokens_long=600_000,
    ...                 selection_tokens_per_list=4_000, selection_lists=200,
    ...                 step_tokens=32 * 3 * 100, runs={"own": 120})
    >>> short = plan(stages, rate, seconds_left=120)  # the steps that fit, then its deadline
    >>> short.fitted["own"] < 120, short.selection_lists < 200
    (True, True)
    >>> plan(stages, rate, seconds_left=None).steps["own"]
    120
    >>> timed = Rate(seconds_per_token=2e-5, seconds_per_step=1.5)  # a step taken here
    >>> short.fitted["own"], plan(stages, timed, seconds_left=120).fitted["own"]
    (105, 54)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from adapter_zoo.errors import ZooError
from stackexchange.numbers import check_number

DEFAULT_MINUTES = 10.0
MAX_MINUTES = 7 * 24 * 60  # a week: a larger budget is a typo
# Fewer steps learn too little to beat the base (the studies' selected steps: docs/performance.md,
# the measurements behind the defaults).
MIN_STEPS = 10
# Under a short budget a run is scored at its last step only: its rate anneals to 0 by its
# deadline (training.budget_schedule), so its last step is its best or level with it, and
# each scoring costs steps (docs/performance.md, the measurements behind the defaults).
MIN_EVALUATIONS = 1
MIN_SELECTION_LISTS = 50
# Without a timed step (Rate.seconds_per_step), a training step is priced from the scoring
# rate: it reads its texts forward and backward, plus the optimizer and the batch's
# tokenizing, in forward passes' worth per token of the scoring that measures the rate; with
# one, this only weighs a run whose lower layers run forward only against the timed run.
# Set from adapt's own runs on 2 CPU cores (all-MiniLM-L6-v2, batch 32 of anchor, positive and
# hard negative at 128 tokens; docs/performance.md): a dearer price plans fewer than MIN_STEPS
# on a short budget where more fit, and it trains nothing.
TRAIN_COST = 4.0
# Loading a model, writing checkpoints and the entry: a fixed cost per training run.
RUN_OVERHEAD_S = 15.0
# Of it, what comes after a run's last step: writing the entry (the model was loaded at its
# start). The quickstart's own run took 5-7 s from its last scoring to its entry written.
TAIL_OVERHEAD_S = 5.0
# Kept free beyond the estimates of each run's tail (its last scorings, writing the entry),
# which the timed step and the scoring rate price: what it holds back is left unspent
# (benchmarks/results/quickstart_time.json, the budget spent).
RESERVE_S = 8.0
# One scoring of the decision lists may take this share of the budget, at most: every
# candidate scores them, and a target of long texts can spend most of a short budget on them
# before any training (docs/guides/adapt.md), leaving no room to train.
DECISION_SHARE = 0.15
# Fewer lists cannot tell a clear gain from noise (the gains the studies record are a few
# hundredths of MAP: docs/results.md).
MIN_DECISION_LISTS = 100
# What goes first when the budget is short, least valuable first.
DROP_ORDER = ("from-multitask", "zoo:extra", "from-nearest", "base@512")


@dataclass(frozen=True)
class Rate:
    """This machine's speed: seconds per token the base reads (forward), and the seconds of
    one step of the target's own training run as timed here (None: priced from the tokens'
    rate at :data:`TRAIN_COST`), whose lower layers that run forward only are
    ``step_frozen_share`` of the base's."""

    seconds_per_token: float
    seconds_per_step: float | None = None
    step_frozen_share: float = 0.0

    def step_seconds(self, stages: Stages, run: str) -> float:
        """One training step of ``run``: the timed step, scaled by ``run``'s share of
        frozen layers against the timed run's (:func:`step_cost`), else the step's tokens at
        the scoring rate.

        Example:
            >>> stages = Stages(1, 1, 1.0, 1, step_tokens=1000, runs={"own": 40})
            >>> Rate(1e-4).step_seconds(stages, "own"), Rate(1e-4, 1.5).step_seconds(stages, "own")
            (0.4, 1.5)
        """
        cost = step_cost(stages.frozen_share.get(run, 0.0))
        if self.seconds_per_step is None:
            return stages.step_tokens * cost * self.seconds_per_token
        return self.seconds_per_step * cost / step_cost(self.step_frozen_share)

    @classmethod
    def measure(cls, seconds: float, tokens: int) -> Rate:
        return cls(seconds / max(tokens, 1))


# The base's speed before the decision lists' own scoring measures it: all-MiniLM-L6-v2 on
# 2 CPU cores, near the slow end of what the outside-domain study's sets read (long texts at
# the 256-token cap: benchmarks/results/outside_study.json).
PRIOR_RATE = Rate(seconds_per_token=2.5e-4)


def decision_tokens_allowed(seconds_left: float | None) -> int | None:
    """The distinct tokens one scoring of the decision lists may read (None: no budget)."""
    if seconds_left is None:
        return None
    return int(DECISION_SHARE * seconds_left / PRIOR_RATE.seconds_per_token)


@dataclass(frozen=True)
class Stages:
    """The sizes of a run's stages, in tokens read.

    Attributes:
        decision_tokens: one scoring of the decision lists at the base's length.
        decision_tokens_long: the same at 512 tokens (the ``base@512`` candidate).
        selection_tokens_per_list: one selection list's distinct texts.
        selection_lists: the selection lists (before the plan caps them).
        step_tokens: one training step's texts.
        runs: each training run asked for (``own``, ``from-nearest``, ``from-multitask``)
            and its steps.
        zoo_core: decision-list scorings of the zoo's nearest adapter (0 or 1).
        zoo_extra: those of the zoo fusion's other members and its multi-task adapter.
        frozen_share: each run's share of the base's layers below its adapters (its
            ``drop_lower`` over the layers; 0 when not given): their forward pass is all a
            step does there, and a text read again takes it from the cache
            (:mod:`adapter_zoo.training.prefix_cache`).
        step_cap: the own run's steps when the budget has room for more than it asked
            (None: the steps asked, as when the user gave them): it then trains to its
            deadline instead of leaving the budget's rest unspent.
    """

    decision_tokens: int
    decision_tokens_long: int
    selection_tokens_per_list: float
    selection_lists: int
    step_tokens: float
    runs: dict[str, int]
    zoo_core: int = 0
    zoo_extra: int = 0
    frozen_share: dict[str, float] = field(default_factory=dict)
    step_cap: int | None = None


@dataclass
class Plan:
    """What a run will do: training runs and their steps, evaluations and selection lists,
    whether to score ``base@512`` and the zoo's extra fusion members, the estimate of each
    stage's seconds, and what was dropped or cut, with why."""

    steps: dict[str, int] = field(default_factory=dict)
    evaluations: int = 4
    selection_lists: int = 0
    long_base: bool = True
    zoo_extra: bool = True
    estimate_s: dict[str, float] = field(default_factory=dict)
    # Of each run's estimate, what comes after its last step: the last evaluation, the
    # 512-token check, the decision lists' scoring, writing the entry.
    tail_s: dict[str, float] = field(default_factory=dict)
    cuts: list[str] = field(default_factory=list)
    # The runs the budget cut, with the steps that fit at the planner's price: each keeps the
    # steps asked and trains until its deadline, its rate annealed by then
    # (training.budget_schedule). The price is an estimate, and a run planned for the steps
    # that fit ends early where a step costs less, leaving its budget unspent (docs/results.md,
    # the budget curve: where the minutes went).
    fitted: dict[str, int] = field(default_factory=dict)

    def deadline(self, run: str, clock: Clock, slack: float = 1.3) -> float | None:
        """When ``run``'s training must stop (a ``time.monotonic()`` value; None without a
        budget): its estimate with ``slack`` (a run the budget cut: no estimate, it uses
        what is left), and never so late that its own tail and the runs planned after it
        no longer fit (a run stopped at the budget's end less only the later runs still has
        its tail to do, and overruns the budget: docs/performance.md)."""
        if clock.seconds is None:
            return None
        runs = list(self.steps)
        later = runs[runs.index(run) + 1 :] if run in runs else []
        after = sum(self.estimate_s.get(r, 0.0) for r in later) + RESERVE_S
        end = clock.started + clock.seconds - after - self.tail_s.get(run, 0.0)
        if run in self.fitted:
            return end
        return min(time.monotonic() + slack * self.estimate_s.get(run, 0.0), end)

    def to_card(self) -> dict:
        return {
            "steps": dict(self.steps),
            "evaluations": self.evaluations,
            "selection_lists": self.selection_lists,
            "long_base": self.long_base,
            "zoo_extra": self.zoo_extra,
            "estimate_s": {k: round(v, 1) for k, v in self.estimate_s.items()},
            "cuts": list(self.cuts),
            "fitted": dict(self.fitted),
        }


def check_budget(minutes, error: type[Exception] = ZooError):
    """``minutes`` if a budget (None: none), else ``error`` naming the range."""
    if minutes is None:
        return None
    return check_number("budget", minutes, low=1, high=MAX_MINUTES, error=error)


class Clock:
    """The budget's clock: seconds left (None without a budget), started when created."""

    def __init__(self, minutes: float | None):
        self.seconds = None if minutes is None else 60.0 * minutes
        self.started = time.monotonic()

    def spent(self) -> float:
        return time.monotonic() - self.started

    def left(self) -> float | None:
        return None if self.seconds is None else self.seconds - self.spent()

    def says(self) -> str:
        """``(N s left of the budget)``, for progress lines; empty without a budget."""
        left = self.left()
        return "" if left is None else f" ({max(left, 0):.0f} s left of the budget)"


def step_cost(frozen_share: float) -> float:
    """A training step's cost per token read, in forward passes of the base: the layers
    below the adapters run forward only (:data:`TRAIN_COST` for the rest).

    Example:
        >>> step_cost(0.0), round(step_cost(4 / 6), 2)
        (4.0, 2.0)
    """
    return frozen_share + (1.0 - frozen_share) * TRAIN_COST


def _selection_scorings(evaluations: int, frozen_share: float) -> float:
    """A run's selection scorings in full forward passes: the first evaluation's (it fills
    the cache), each later one's (the layers above the cache) and the 512-token check
    (longer texts are new). The start is not scored: adapt's candidates never keep it
    (``TrainingConfig.keep_start``)."""
    return 1 + (evaluations - 1) * (1.0 - frozen_share) + 1


def _run_seconds(stages: Stages, rate: Rate, run: str, steps: int, evaluations: int,
                 lists: int) -> float:  # fmt: skip
    """One training run: its steps, its selection scorings and its decision-list scoring."""
    per_token = rate.seconds_per_token
    frozen = stages.frozen_share.get(run, 0.0)
    scorings = _selection_scorings(evaluations, frozen)
    selection = scorings * lists * stages.selection_tokens_per_list * per_token
    training = steps * rate.step_seconds(stages, run)
    return RUN_OVERHEAD_S + training + selection + stages.decision_tokens * per_token


def _tail_seconds(stages: Stages, rate: Rate, run: str, lists: int) -> float:
    """What a run does after its last step: that step's evaluation and the 512-token check,
    the decision lists' scoring, writing the entry."""
    per_token = rate.seconds_per_token
    scorings = (1.0 - stages.frozen_share.get(run, 0.0)) + 1
    selection = scorings * lists * stages.selection_tokens_per_list * per_token
    return TAIL_OVERHEAD_S + selection + stages.decision_tokens * per_token


def _estimate(stages: Stages, rate: Rate, p: Plan) -> dict[str, float]:
    per_token = rate.seconds_per_token
    out = {}
    if p.long_base:
        out["base@512"] = stages.decision_tokens_long * per_token
    zoo = stages.zoo_core + (stages.zoo_extra if p.zoo_extra else 0)
    if zoo:
        out["zoo"] = zoo * stages.decision_tokens * per_token
    for run, steps in p.steps.items():
        out[run] = _run_seconds(stages, rate, run, steps, p.evaluations, p.selection_lists)
    return out


def plan(
    stages: Stages, rate: Rate, seconds_left: float | None, *, default_evaluations: int = 4
) -> Plan:
    """The stages that fit in ``seconds_left`` (None: all of them, as asked).

    Drops :data:`DROP_ORDER` in turn, then shortens the target's own run (selection lists to
    :data:`MIN_SELECTION_LISTS`, evaluations to :data:`MIN_EVALUATIONS`, steps to
    :data:`MIN_STEPS`), and with still too little time trains nothing.
    """
    p = Plan(evaluations=default_evaluations, selection_lists=stages.selection_lists)
    p.steps = dict(stages.runs)
    p.zoo_extra = stages.zoo_extra > 0

    def total() -> float:
        return sum(_estimate(stages, rate, p).values())

    if seconds_left is not None:
        room = seconds_left - RESERVE_S
        for stage in DROP_ORDER:
            if total() <= room:
                break
            if stage in p.steps:
                del p.steps[stage]
                p.cuts.append(f"no {stage} run")
            elif stage == "zoo:extra" and p.zoo_extra:
                p.zoo_extra = False
                p.cuts.append("the zoo's fusion and multitask candidates not scored")
            elif stage == "base@512" and p.long_base:
                p.long_base = False
                p.cuts.append("base@512 not scored")
        if total() > room and p.selection_lists > MIN_SELECTION_LISTS:
            p.selection_lists = max(MIN_SELECTION_LISTS, _fit_lists(stages, rate, p, room))
            p.cuts.append(f"{p.selection_lists} of {stages.selection_lists} selection lists")
        if total() > room and p.evaluations > MIN_EVALUATIONS:
            p.evaluations = MIN_EVALUATIONS
            p.cuts.append(f"{p.evaluations} evaluation{'s' * (p.evaluations != 1)} a run")
        if total() > room:
            fit = _fit_steps(stages, rate, p, room)
            if fit >= MIN_STEPS and "own" in p.steps:
                p.cuts.append(f"own run {fit} of {p.steps['own']} steps, then to its deadline")
                p.fitted["own"] = fit
            else:
                p.steps.pop("own", None)
                p.cuts.append(
                    f"no training: fewer than {MIN_STEPS} steps fit in the budget "
                    f"({seconds_left:.0f} s left)"
                )
        elif "own" in p.steps and stages.step_cap and stages.step_cap > p.steps["own"]:
            # room to spare: the own run takes it, stopped by its deadline, annealed by then
            fit = min(_fit_steps(stages, rate, p, room), stages.step_cap)
            if fit > p.steps["own"]:
                p.cuts.append(f"own run {fit} steps, not {p.steps['own']}: to its deadline")
                p.steps["own"] = stages.step_cap
                p.fitted["own"] = fit
    # a run the budget cut is estimated at the steps that fit: its deadline ends it
    p.estimate_s = _estimate(stages, rate, _with(p, fitted=p.fitted))
    p.tail_s = {run: _tail_seconds(stages, rate, run, p.selection_lists) for run in p.steps}
    return p


def _fit_lists(stages: Stages, rate: Rate, p: Plan, room: float) -> int:
    """The selection lists that fit, the rest of the plan as it is."""
    with_none = sum(_estimate(stages, rate, _with(p, selection_lists=0)).values())
    per_list = sum(
        _selection_scorings(p.evaluations, stages.frozen_share.get(run, 0.0))
        * stages.selection_tokens_per_list * rate.seconds_per_token for run in p.steps
    )  # fmt: skip
    if per_list <= 0:
        return p.selection_lists
    return max(0, math.floor((room - with_none) / per_list))


def _fit_steps(stages: Stages, rate: Rate, p: Plan, room: float) -> int:
    """The own run's steps that fit, the rest of the plan as it is."""
    without = sum(_estimate(stages, rate, _with(p, own_steps=0)).values())
    per_step = rate.step_seconds(stages, "own")
    return max(0, math.floor((room - without) / per_step))


def _with(p: Plan, *, selection_lists=None, own_steps=None, fitted=None) -> Plan:
    steps = {**p.steps, **(fitted or {})}
    if own_steps is not None:
        steps["own"] = own_steps
    return Plan(steps=steps, evaluations=p.evaluations,
                selection_lists=p.selection_lists if selection_lists is None else selection_lists,
                long_base=p.long_base, zoo_extra=p.zoo_extra)  # fmt: skip
