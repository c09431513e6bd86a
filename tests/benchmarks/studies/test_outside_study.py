"""The outside-domain study's summary and agreement (benchmarks/studies/outside_study.py)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.studies.outside_study import (
    ROWS,
    SETS,
    agreement,
    answer_stage_models,
    candidate_models,
    feedback_agreement,
    summary,
)

RECORDED = Path(__file__).resolve().parents[3] / "benchmarks/results/outside_study.json"


def _set(aps: dict[str, list[float]], candidates: dict) -> dict:
    return {"queries": len(aps["base"]), "aps": aps, "candidates": candidates,
            "map": {k: sum(v) / len(v) for k, v in aps.items()}}  # fmt: skip


def test_the_summary_is_against_both_fused_bases_per_set_and_pooled():
    flat = {k: [0.5, 0.5] for k in ROWS}
    rows = {
        "a": _set({**flat, "adapt": [0.7, 0.7], "fused_tuned": [0.6, 0.6]}, {}),  # +0.2, +0.1
        "b": _set({**flat, "adapt": [0.4, 0.4]}, {}),  # -0.1 over both
    }
    got = summary(rows)["adapt"]
    assert round(got["mean_delta_vs_fused"], 6) == 0.05
    assert round(got["worst_set_vs_fused"], 6) == -0.1
    assert got["sets_at_least_fused"] == 1
    assert round(got["pooled_vs_fused"]["delta"], 6) == 0.05
    assert round(got["mean_delta_vs_fused_tuned"], 6) == 0.0
    assert round(got["worst_set_vs_fused_tuned"], 6) == -0.1
    assert round(got["pooled_vs_fused_tuned"]["delta"], 6) == 0.0
    assert round(summary(rows)["fused_tuned"]["mean_delta_vs_fused"], 6) == 0.05


def _stage(fusion: dict, chosen: dict, best: dict) -> dict:
    return {"base_fusion": {"chosen": fusion}, "feedback": {"chosen": chosen, "best": best}}


def test_the_tuned_rows_are_the_grids_choices_on_the_decision_lists():
    off, on = {"k": 0, "w": 0.0}, {"k": 5, "w": 0.1}
    minmax = {"base": 0.95, "bm25": 0.05, "normalisation": "minmax"}
    assert answer_stage_models(_stage(minmax, on, on)) == {
        "fused_tuned": "fusion:sbert:minilm-l6*0.95+bm25*0.05@minmax",
        "prf": "prf:sbert:minilm-l6@k=5,w=0.1",
        "feedback_chosen": True,
    }
    fixed = {"base": 0.9, "bm25": 0.1, "normalisation": "zscore"}
    # feedback left off: the test still scores it, at the grid's best point
    got = answer_stage_models(_stage(fixed, off, {"k": 1, "w": 0.3}))
    assert got["fused_tuned"] == "fusion:sbert:minilm-l6*0.9+bm25*0.1"  # the fixed row's
    assert got["prf"] == "prf:sbert:minilm-l6@k=1,w=0.3" and not got["feedback_chosen"]
    # the grid's best was off too: the default point
    assert answer_stage_models(_stage(fixed, off, off))["prf"] == "prf:sbert:minilm-l6@k=3,w=0.3"


def test_feedback_agrees_where_adapt_chose_it_with_a_gain_or_left_it_without_one():
    def row(base, prf, chosen):
        return {"map": {"base": base, "prf": prf}, "adapt": {"feedback_chosen": chosen}}

    rows = {"a": row(0.5, 0.52, True), "b": row(0.5, 0.48, False), "c": row(0.5, 0.48, True),
            "d": row(0.5, 0.51, False)}  # fmt: skip
    got = feedback_agreement(rows)
    assert [got[s]["agrees"] for s in "abcd"] == [True, True, False, False]
    assert got["c"] == {"test_gain": -0.02, "chosen": True, "agrees": False}


def test_agreement_counts_trained_candidates_only():
    def candidate(dev, lower, test):
        return {"pseudo_dev_vs_base": dev, "pseudo_dev_lower": lower,
                "test_vs_base": {"delta": test}}  # fmt: skip

    rows = {"a": {"candidates": {
        "base@512": candidate(0.0, 0.0, 0.0),
        "own": candidate(0.03, 0.01, 0.02),  # both agree
        "fusion": candidate(0.01, -0.01, 0.02),  # the sign agrees, the clear gain does not
        "other": candidate(-0.01, -0.02, 0.01),  # neither
    }}}  # fmt: skip
    assert agreement(rows) == {"candidates": 3, "sign_agrees": 2, "clear_gain_agrees": 1}


def test_the_recorded_study_is_its_own_sets_summary():
    record = json.loads(RECORDED.read_text(encoding="utf-8"))
    # every set of the study, scored or said why not
    left_out = record.get("sets_left_out", {})
    assert set(record["sets"]) | set(left_out) == set(SETS) and not set(record["sets"]) & set(
        left_out
    )
    assert record["feedback"] == feedback_agreement(record["sets"])
    assert record["summary"] == json.loads(json.dumps(summary(record["sets"])))
    assert record["agreement"] == agreement(record["sets"])
    for name, row in record["sets"].items():
        assert set(row["map"]) == set(ROWS), name
        assert row["queries"] == len(row["aps"]["adapt"]), name


def test_insuranceqa_is_a_set_whose_target_holds_texts_alone(monkeypatch, tmp_path):
    from benchmarks.studies import outside_study

    fixtures = Path(__file__).parents[1] / "fixtures"
    monkeypatch.setattr(outside_study, "BENCHMARKS", fixtures)
    assert outside_study.SETS["insuranceqa"][1] == "insuranceqa"
    path = outside_study.write_target(tmp_path, "insuranceqa")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    # texts without their pairing: no record has an answer
    assert records[0] == {"question": "It pays a death benefit."}
    assert all(set(r) == {"question"} for r in records) and len(records) == 7


def test_candidate_models_read_a_length_only_from_a_base_label():
    card = {"candidates": {
        "base@512": {"model": "sbert:minilm-l6@512"},
        "prf:base": {"model": "prf:sbert:minilm-l6@k=3,w=0.3"},
        "fusion:base+bm25@tuned": {"model": "fusion:sbert:minilm-l6*0.8+bm25*0.2@minmax"},
        "own": {"model": "target--own"},
    }}  # fmt: skip
    assert candidate_models(card) == {
        "base@512": ("sbert:minilm-l6", 512),
        "prf:base": ("prf:sbert:minilm-l6@k=3,w=0.3", None),
        "fusion:base+bm25@tuned": ("fusion:sbert:minilm-l6*0.8+bm25*0.2@minmax", None),
        "own": ("target--own", None),
    }
