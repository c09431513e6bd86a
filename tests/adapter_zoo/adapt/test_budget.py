"""adapt's time budget: the plan from the measured speed, what it cuts first, a
small budget planning fewer steps and saying so in the card, and training stopped at its
deadline."""

from __future__ import annotations

import json
import time

import pytest

from adapter_zoo.adapt import budget
from adapter_zoo.adapt.budget import Rate, Stages, plan
from adapter_zoo.adapt.candidate_training import BATCH, own_steps
from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.store import read_card

BICYCLES = "bicycles.meta.stackexchange.com"
# about all-MiniLM-L6-v2 on 2 CPU cores (quantumcomputing's adapt: 543 s)
RATE = Rate(seconds_per_token=2e-5)
STAGES = Stages(
    decision_tokens=300_000, decision_tokens_long=450_000, selection_tokens_per_list=3_000,
    selection_lists=200, step_tokens=32 * 3 * 110, runs={"own": 120, "from-nearest": 40,
    "from-multitask": 40}, zoo_core=1, zoo_extra=3,
)  # fmt: skip


def test_without_a_budget_or_with_room_nothing_is_cut():
    for seconds in (None, 1_000):
        p = plan(STAGES, RATE, seconds)
        assert p.steps == {"own": 120, "from-nearest": 40, "from-multitask": 40} and not p.cuts
        assert (p.evaluations, p.selection_lists, p.long_base, p.zoo_extra) == (4, 200, True, True)
    assert sum(plan(STAGES, RATE, None).estimate_s.values()) < 1_000 - budget.RESERVE_S


def test_a_short_budget_drops_the_least_valuable_first_then_shortens_the_own_run():
    spent = {s: sum(plan(STAGES, RATE, s).estimate_s.values()) for s in (300, 120)}
    assert all(spent[s] <= s - budget.RESERVE_S for s in spent)  # each plan fits
    five = plan(STAGES, RATE, 300)
    assert five.steps == {"own": 120} and five.cuts == ["no from-multitask run",
        "the zoo's fusion and multitask candidates not scored", "no from-nearest run"]  # fmt: skip
    two = plan(STAGES, RATE, 120)
    assert two.cuts[:4] == five.cuts + ["base@512 not scored"]
    fit = two.fitted["own"]
    assert budget.MIN_STEPS <= fit < 120
    # it keeps the steps asked: its deadline ends it, wherever the machine's speed puts it
    assert two.steps["own"] == 120
    assert two.selection_lists == budget.MIN_SELECTION_LISTS
    assert two.evaluations == budget.MIN_EVALUATIONS == 1
    assert two.cuts[4:] == ["50 of 200 selection lists", "1 evaluation a run",
                            f"own run {fit} of 120 steps, then to its deadline"]  # fmt: skip
    # its estimate is of the steps that fit; its deadline is the budget's end less its tail
    clock = budget.Clock(2)
    end = clock.started + 120 - budget.RESERVE_S - two.tail_s["own"]
    assert two.deadline("own", clock) == pytest.approx(end)
    assert not five.fitted


def test_a_timed_step_prices_the_steps_not_the_scoring_rate():
    """A step timed at a third of what the scoring rate prices it at: three times the steps
    fit, and a budget that the scoring rate said leaves no room trains."""
    priced = RATE.step_seconds(STAGES, "own")
    timed = Rate(RATE.seconds_per_token, seconds_per_step=priced / 3)
    assert timed.step_seconds(STAGES, "own") == pytest.approx(priced / 3)
    by_rate, by_step = plan(STAGES, RATE, 120), plan(STAGES, timed, 120)
    assert by_rate.fitted == {"own": 93} and by_rate.selection_lists == 50  # priced at 0.84 s
    assert by_rate.cuts[-3:] == ["50 of 200 selection lists", "1 evaluation a run",
                                 "own run 93 of 120 steps, then to its deadline"]  # fmt: skip
    # at 0.28 s a step all 120 fit, with 170 selection lists and the evaluations asked
    assert by_step.steps == {"own": 120} and not by_step.fitted
    assert (by_step.selection_lists, by_step.evaluations) == (170, 4)
    assert by_step.cuts[-1] == "170 of 200 selection lists"
    assert sum(by_step.estimate_s.values()) <= 120 - budget.RESERVE_S
    # a short budget the scoring rate prices out of training
    assert plan(STAGES, RATE, 48).cuts[-1] == (
        "no training: fewer than 10 steps fit in the budget (48 s left)"
    )
    fits = plan(STAGES, timed, 48)
    assert fits.steps == {"own": 120} and fits.fitted == {"own": 24}
    # a run whose lower layers run forward only costs less than the timed one, by step_cost
    frozen = Stages(**{**STAGES.__dict__, "frozen_share": {"own": 4 / 6}})
    assert timed.step_seconds(frozen, "own") == pytest.approx(priced / 3 / 2)


def test_a_budget_with_room_left_gives_the_own_run_the_rest_to_its_deadline():
    """A fast machine: the steps asked end long before the budget does, so the own run is
    planned to its deadline (at most step_cap steps); without a cap (steps the user gave)
    it stops at them."""
    fast = Rate(RATE.seconds_per_token, seconds_per_step=2.0)
    capped = Stages(**{**STAGES.__dict__, "runs": {"own": 40}, "step_cap": 400})
    asked = plan(Stages(**{**capped.__dict__, "step_cap": None}), fast, 600)
    assert asked.steps == {"own": 40} and not asked.fitted and not asked.cuts
    p = plan(capped, fast, 600)
    fit = p.fitted["own"]
    assert 40 < fit < 400 and p.steps == {"own": 400}
    assert p.cuts == [f"own run {fit} steps, not 40: to its deadline"]
    assert sum(p.estimate_s.values()) <= 600 - budget.RESERVE_S
    assert sum(p.estimate_s.values()) + fast.seconds_per_step > 600 - budget.RESERVE_S
    clock = budget.Clock(10)
    assert p.deadline("own", clock) == pytest.approx(
        clock.started + 600 - budget.RESERVE_S - p.tail_s["own"]
    )
    # the cap holds on a machine faster still
    assert plan(capped, Rate(RATE.seconds_per_token, seconds_per_step=1e-3), 600).fitted == {
        "own": 400
    }


def test_a_budget_too_small_to_train_trains_nothing_and_says_why():
    p = plan(STAGES, RATE, 30)
    assert p.steps == {}
    assert p.cuts[-1] == "no training: fewer than 10 steps fit in the budget (30 s left)"


def test_a_run_stops_training_early_enough_for_its_tail_and_the_runs_after_it():
    p = plan(STAGES, RATE, 1_000)
    clock = budget.Clock(1_000 / 60)
    tail = p.tail_s["own"]  # its last evaluation, the 512 check, the decision lists, saving
    assert 0 < tail < p.estimate_s["own"]
    later = p.estimate_s["from-nearest"] + p.estimate_s["from-multitask"]
    end = clock.started + 1_000 - budget.RESERVE_S - later - tail
    assert p.deadline("own", clock, slack=100) == pytest.approx(end)
    # with room to spare the estimate and its slack decide
    now = time.monotonic()
    assert now < p.deadline("own", clock, slack=1.0) - p.estimate_s["own"] + 1 < end
    assert p.deadline("own", budget.Clock(None)) is None


def test_a_short_budget_scores_a_seeded_sample_of_the_decision_lists_that_fits_its_share():
    """A text several lists share is read once, so it counts once."""
    from adapter_zoo.adapt.heldout import RankingLists
    from adapter_zoo.adapt.stage_sizes import fit_decision

    lists = RankingLists()
    for i in range(400):
        lists.add("body", f"q{i}", [f"a{i}", "shared"], [1, 0])

    def ten_tokens_each(texts, cap):
        return [10] * len(texts)

    # 250 lists of two texts of their own, and the shared one once
    seconds = (250 * 20 + 10 + 0.5) * budget.PRIOR_RATE.seconds_per_token / budget.DECISION_SHARE
    kept, cut = fit_decision(lists, ten_tokens_each, seconds, seed=0)
    assert (len(kept), cut) == (250, "250 of 400 decision lists")
    assert kept.queries == sorted(kept.queries, key=lambda q: int(q[1:]))  # in their order
    again, _ = fit_decision(lists, ten_tokens_each, seconds, seed=0)
    assert again.queries == kept.queries
    assert fit_decision(lists, ten_tokens_each, None, seed=0) == (lists, None)
    assert fit_decision(lists, ten_tokens_each, 10_000, seed=0) == (lists, None)  # all fit
    least, cut = fit_decision(lists, ten_tokens_each, 1.0, seed=0)
    assert len(least) == budget.MIN_DECISION_LISTS and cut == "100 of 400 decision lists"


def test_budget_range_is_checked_before_any_work():
    for minutes in (0, -1, float("nan"), budget.MAX_MINUTES + 1):
        with pytest.raises(
            ZooError, match=r"^budget must be a finite number in \[1, 10080\], not "
        ):
            budget.check_budget(minutes)
    assert budget.check_budget(None) is None and budget.check_budget(2.5) == 2.5


def test_cli_budget_is_one_line(capsys):
    from adapter_zoo.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["adapt", "--target", "x", "--name", "y", "--budget", "0.5"])
    assert exited.value.code == 2
    assert (
        "argument --budget: must be a finite number in [1, 10080], not '0.5'"
        in capsys.readouterr().err
    )


@pytest.mark.slow  # over 10 s: started first (CONTRIBUTING, CI's time budget)
def test_a_small_budget_plans_fewer_steps_and_says_so_in_the_card(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    """The tiny model is fast: the machine is made slow by its measured rate, so a 1-minute
    budget must cut what a fast machine would run."""
    from adapter_zoo.adapt.learn import learn_and_decide
    from adapter_zoo.zoo import domain

    monkeypatch.setattr(domain, "MAX_TEXTS", 100)
    slow = Rate.measure(seconds=1.0, tokens=25_000)  # 4e-5 s a token: MiniLM on a slow CPU
    measured = []

    def measure(seconds, tokens):
        measured.append((seconds, tokens))
        return slow

    monkeypatch.setattr(budget.Rate, "measure", staticmethod(measure))
    # and a step as slow (timed on the run's own model: probe.step_seconds, run for real)
    from adapter_zoo.training import probe

    timed = []

    def step_seconds(config):
        timed.append(probe_step(config))
        return 1.0

    probe_step = probe.step_seconds
    monkeypatch.setattr(probe, "step_seconds", step_seconds)
    # the plan sees the whole minute (what this machine spent before it is not the point)
    monkeypatch.setattr(budget.Clock, "left", lambda clock: clock.seconds)
    base = str(tiny_sentence_bert_path)
    path = learn_and_decide(parsed_shipped / BICYCLES, name="bikes-budget", zoo=[],
                            base_model=base, budget_minutes=1.0)  # fmt: skip
    record = read_card(path)["adapt"]
    card_plan = record["budget"]["plan"]
    assert record["budget"]["minutes"] == 1.0
    assert measured and measured[0][0] > 0 and measured[0][1] > 1000  # the base's scoring
    assert len(timed) == 1 and timed[0] > 0  # the tiny model's step, timed here (its price: 1 s)
    assert record["budget"]["seconds_per_step"] == 1.0
    slow = Rate(slow.seconds_per_token, seconds_per_step=1.0)
    # bicycles.meta's question pairs and the objectives' pairs beside them
    asked = own_steps(sum(record["training"]["pairs"].values()), BATCH)
    unlimited = plan(Stages(**{**_stages_of(card_plan), "runs": {"own": asked}}), slow, None)
    fit, own = card_plan["fitted"]["own"], card_plan["steps"]["own"]
    assert budget.MIN_STEPS <= fit < unlimited.steps["own"] == asked
    assert own == asked
    assert f"own run {fit} of {asked} steps, then to its deadline" in card_plan["cuts"]
    assert "base@512 not scored" in card_plan["cuts"] and "base@512" not in record["candidates"]
    run = record["training"]["runs"]["own"]
    assert run["steps"] == own and run["selection_lists"] == card_plan["selection_lists"]
    assert sum(card_plan["estimate_s"].values()) <= 60 - budget.RESERVE_S


def _stages_of(card_plan) -> dict:
    """Stages whose plan without a budget is bicycles.meta's default (sizes are not in the
    card; any will do for the step count)."""
    return {"decision_tokens": 1, "decision_tokens_long": 1, "selection_tokens_per_list": 1,
            "selection_lists": card_plan["selection_lists"], "step_tokens": 1}  # fmt: skip


def test_training_stops_at_its_deadline_and_keeps_the_step_it_reached(
    parsed_shipped, tiny_sentence_bert_path
):
    from adapter_zoo.training import TrainingConfig, stop_training_at, train

    config = TrainingConfig(
        mode="adapter", data=str(parsed_shipped), forums=("beer",), name="cut-short",
        base_model=str(tiny_sentence_bert_path), batch_size=8, max_length=16, max_steps=6,
        eval_steps=3, dev_queries=8, lr=3e-2, reduction_factor=2,
    )  # fmt: skip
    with stop_training_at(time.monotonic()):  # already past: the first step is the last
        path = train(config)
    card = json.loads((path / "card.json").read_text())
    assert card["training"]["steps"] == 1
    assert [(r["phase"], r["step"]) for r in card["training"]["log"]] == [
        ("base", 0), ("train", 1), ("length", card["training"]["best_step"])]  # fmt: skip


def test_a_run_with_frozen_lower_layers_plans_more_steps_in_the_same_budget():
    """The own adapter in the top 2 of 6 layers: a step costs the layers below forward only
    (step_cost 2 forward passes a token against 4), and the cached evaluations cost the
    upper layers only, so the same budget buys at least twice the steps."""
    stages = Stages(**{**STAGES.__dict__, "runs": {"own": 400}})
    frozen = Stages(**{**stages.__dict__, "frozen_share": {"own": 4 / 6}})
    assert budget.step_cost(4 / 6) == pytest.approx(2.0)
    plain, fast = plan(stages, RATE, 200), plan(frozen, RATE, 200)
    assert (plain.evaluations, plain.selection_lists) == (fast.evaluations, fast.selection_lists)
    assert fast.fitted["own"] >= 2 * plain.fitted["own"]
    assert fast.cuts[-1] == f"own run {fast.fitted['own']} of 400 steps, then to its deadline"
    for p in (plain, fast):  # each plan fits
        assert sum(p.estimate_s.values()) <= 200 - budget.RESERVE_S


def test_a_run_under_a_deadline_anneals_its_rate_by_the_time_spent_or_the_steps():
    import torch

    from adapter_zoo.training.trainer import budget_schedule

    sgd = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    now = [0.0]
    schedule = budget_schedule(sgd, warmup=4, steps=400, deadline=100.0, clock=lambda: now[0])
    rates = []
    for step in range(1, 11):
        now[0] = 10.0 * step  # a step every 10 s: the deadline comes at step 10 of 400
        sgd.step()
        schedule.step()
        rates.append(sgd.param_groups[0]["lr"])
    # the warmup would take 4 steps, 40 s: its share of the time (1 s) ends it first
    assert rates == pytest.approx([(100 - 10 * k) / 99 for k in range(1, 11)])  # the clock
    slow = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    ramp = budget_schedule(slow, warmup=4, steps=8, deadline=100.0, clock=lambda: 0.0)
    for _ in range(3):
        slow.step()
        ramp.step()
        rates.append(slow.param_groups[0]["lr"])
    assert rates[-3:] == [0.25, 0.5, 0.75]  # a fast machine: the warmup counts steps
    # a fast machine: the planned steps end first, annealed at the last of them
    fast = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    quick = budget_schedule(fast, warmup=0, steps=10, deadline=1e9, clock=lambda: 0.0)
    for _ in range(10):
        fast.step()
        quick.step()
    assert fast.param_groups[0]["lr"] == 0.0


def test_a_candidate_whose_start_cannot_be_kept_is_not_scored_at_its_start(
    parsed_shipped, tiny_sentence_bert_path
):
    """adapt's candidates (keep_start off) spend no selection scoring on the start: it would
    be the base's score again (19 s of the 181 s ArguAna's 5-minute run trained)."""
    from adapter_zoo.training import TrainingConfig, train

    config = TrainingConfig(
        mode="adapter", data=str(parsed_shipped), forums=("beer",), name="no-start",
        base_model=str(tiny_sentence_bert_path), batch_size=8, max_length=16, max_steps=4,
        eval_steps=4, dev_queries=8, lr=3e-2, reduction_factor=2,
        keep_start=False,
    )  # fmt: skip
    card = read_card(train(config))
    assert [(r["phase"], r["step"]) for r in card["training"]["log"]] == [
        ("train", 4), ("length", 4)]  # fmt: skip
    assert card["base_scores"] is None and card["training"]["best_step"] == 4


def test_a_timed_step_trains_the_runs_own_model_and_writes_nothing(
    parsed_shipped, tiny_sentence_bert_path
):
    from adapter_zoo.training import TrainingConfig
    from adapter_zoo.training.probe import step_seconds
    from adapter_zoo.zoo import zoo_home

    config = TrainingConfig(
        mode="adapter", data=str(parsed_shipped), forums=("beer",), name="timed",
        base_model=str(tiny_sentence_bert_path), batch_size=8, max_length=16,
        hard_negatives=True, reduction_factor=2,
    )  # fmt: skip
    assert 0 < step_seconds(config) < 10  # the tiny model's step
    assert not zoo_home().exists() or not any(zoo_home().iterdir())
    cross = TrainingConfig(mode="adapter", encoder="cross", data=str(parsed_shipped),
                           forums=("beer",), name="timed", base_model=str(tiny_sentence_bert_path))  # fmt: skip
    with pytest.raises(ZooError, match=r"^a timed step is a bi-encoder's; 'timed' is 'cross'$"):
        step_seconds(cross)


def test_a_timed_step_trains_with_the_runs_attention_dropout(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    # priced with the base's dropout, the step took the slower attention path that keeps
    # the attention matrices: more memory and a longer price than the run's own steps
    import adapter_zoo.training.probe as probe
    from adapter_zoo.training import TrainingConfig

    stepped = []

    def kept(config, hosts):
        model, setup = real(config, hosts)
        stepped.append(model)
        return model, setup

    real = probe.trainable_model
    monkeypatch.setattr(probe, "trainable_model", kept)
    config = TrainingConfig(
        mode="adapter", data=str(parsed_shipped), forums=("beer",), name="timed",
        base_model=str(tiny_sentence_bert_path), batch_size=4, max_length=16,
        reduction_factor=2, attention_dropout=0.0,
    )  # fmt: skip
    probe.step_seconds(config, steps=1)
    attention = [m for m in stepped[0].modules() if "SelfAttention" in type(m).__name__]
    assert attention and all(m.dropout_prob == 0.0 for m in attention)
