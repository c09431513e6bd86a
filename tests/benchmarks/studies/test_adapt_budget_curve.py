"""adapt's budget curve (benchmarks/studies/adapt_budget_curve.py): the recorded points and
their tables and figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.report.descriptions.transfer import ADAPT_CURVE, README_CURVE
from benchmarks.report.render import render
from benchmarks.studies.adapt_budget_curve import plot

RECORDED = Path(__file__).resolve().parents[3] / "benchmarks/results/adapt_budget_curve.json"


def test_each_recorded_point_is_against_the_fused_base_of_its_own_test_queries():
    record = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert record["machine"]["cpu"]  # the chip is named
    for runs in record["learners"].values():
        batch = runs.get("variant", {}).get("batch_size", 32)
        for points in runs["sets"].values():
            for p in points.values():
                gain = p["map"]["adapt"] - p["map"]["fused"]
                assert abs(p["vs_fused"]["adapt"]["delta"] - gain) < 1e-9
                # adapt's entry is its chosen candidate: the same test scores
                assert p["map"]["adapt"] == p["map"][p["chosen"]]
                run = p["own_run"]
                assert run is None or run["pairs_seen"] == batch * run["steps_run"]


def test_the_tables_and_the_figure_are_made_from_the_record(tmp_path):
    record = json.loads(RECORDED.read_text(encoding="utf-8"))
    points = sum(len(ps) for r in record["learners"].values() for ps in r["sets"].values())
    assert len(render(ADAPT_CURVE).splitlines()) == 2 + points
    rows = sum(len(r["sets"]) for r in record["learners"].values() if "variant" not in r)
    assert len(render(README_CURVE).splitlines()) == 2 + rows
    plot(record, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("variant", "training", "batch"),
    [
        ("full", {"mode": "full"}, 32),
        ("cached", {"mode": "adapter", "loss": "CachedMultipleNegativesRankingLoss"}, 128),
    ],
)
def test_a_variant_trains_the_own_run_its_way_and_is_recorded_under_its_own_label(
    tmp_path, monkeypatch, variant, training, batch
):
    from benchmarks.studies import adapt_budget_curve

    seen = []

    def fake_point(work, benchmark, minutes, learner, settings):
        seen.append((learner, settings.own_training, settings.batch))
        return {"minutes": minutes, "map": {"adapt": 0.5, "fused": 0.5}, "chosen": "base"}

    monkeypatch.setattr(adapt_budget_curve, "point", fake_point)
    monkeypatch.setattr(adapt_budget_curve, "plot", lambda record, path: None)
    out = tmp_path / "curve.json"
    adapt_budget_curve.main(["--work", str(tmp_path), "--sets", "arguana-02", "--budgets", "5",
                             "--variant", variant, "--out", str(out)])  # fmt: skip
    label = f"{adapt_budget_curve.CURRENT}, {adapt_budget_curve.VARIANT_NAMES[variant]}"
    assert seen == [(label, training, batch)]
    learners = json.loads(out.read_text())["learners"]
    assert list(learners) == [label]
    assert learners[label]["variant"] == adapt_budget_curve.VARIANTS[variant]
    assert learners[label]["learner"].endswith(adapt_budget_curve.VARIANT_NAMES[variant])


def test_a_variant_reaches_adapt_as_its_settings_not_as_patched_globals(tmp_path, monkeypatch):
    """The study's point hands the variant's LearnSettings to learn_and_decide; adapt's own
    constants stay as they are."""
    from adapter_zoo.adapt import candidate_training, learn
    from benchmarks.studies import adapt_budget_curve, outside_study

    settings = adapt_budget_curve.variant_settings("cached")
    assert settings.batch == 128 and settings.own_training == {
        "mode": "adapter", "loss": "CachedMultipleNegativesRankingLoss"}  # fmt: skip
    assert adapt_budget_curve.variant_settings(None) is None  # adapt's own way
    asked = []

    class Asked(Exception):
        pass

    def learn_and_decide(target, **options):
        asked.append((target, options))
        raise Asked  # what adapt was asked is the point, not its run

    monkeypatch.setattr(learn, "learn_and_decide", learn_and_decide)
    target = tmp_path / "targets" / "arguana.jsonl"
    target.parent.mkdir()
    target.write_text('{"question": "q", "answer": "a"}\n')  # written once: not rebuilt
    with pytest.raises(Asked):
        outside_study.adapted(tmp_path, "arguana", [], "auto", 5.0, "curve", settings=settings)
    ((path, options),) = asked
    assert path == target and options["settings"] is settings
    assert options["budget_minutes"] == 5.0 and options["keep_candidates"]
    assert candidate_training.BATCH == 32 == candidate_training.LearnSettings().batch
