"""adapt's budget curve (benchmarks/perf/adapt_budget_curve.py): the recorded points and
their tables and figure."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.perf.adapt_budget_curve import plot
from benchmarks.perf.tables import adapt_curve_table, readme_curve_table

RECORDED = Path(__file__).resolve().parents[2] / "benchmarks/perf/results/adapt_budget_curve.json"


def test_each_recorded_point_is_against_the_fused_base_of_its_own_test_queries():
    record = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert record["machine"]["cpu"]  # the chip is named
    for runs in record["learners"].values():
        for points in runs["sets"].values():
            for p in points.values():
                gain = p["map"]["adapt"] - p["map"]["fused"]
                assert abs(p["vs_fused"]["adapt"]["delta"] - gain) < 1e-9
                # adapt's entry is its chosen candidate: the same test scores
                assert p["map"]["adapt"] == p["map"][p["chosen"]]
                run = p["own_run"]
                assert run is None or run["pairs_seen"] == 32 * run["steps_run"]


def test_the_tables_and_the_figure_are_made_from_the_record(tmp_path):
    record = json.loads(RECORDED.read_text(encoding="utf-8"))
    points = sum(len(ps) for r in record["learners"].values() for ps in r["sets"].values())
    assert len(adapt_curve_table().splitlines()) == 2 + points
    rows = sum(len(r["sets"]) for r in record["learners"].values())
    assert len(readme_curve_table().splitlines()) == 2 + rows
    plot(record, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
