"""The learner's throughput benchmark: its comparison of paths and its report row,
on a record of the benchmark's shape."""

from __future__ import annotations

from benchmarks.report.descriptions import perf_rows
from benchmarks.speed.train_throughput import compare

SPEED = {
    "today": {"cold": 6.0, "warm": 6.0, "evaluation": 40.0},
    "upper-4": {"cold": 3.0, "warm": 2.0, "evaluation": 20.0},
}
LEARNING = {
    "today": {"curve": [{"pairs": 0, "selection_map": 0.5}, {"pairs": 640, "selection_map": 0.52}]},
    "upper-4": {"curve": [{"pairs": 0, "selection_map": 0.5},
                          {"pairs": 640, "selection_map": 0.515}]},
}  # fmt: skip


def test_a_path_is_compared_per_step_per_evaluation_and_per_block_of_steps():
    compared = compare(SPEED, LEARNING, block_steps=20)
    fast = compared["upper-4"]
    assert (fast["step_speedup_cold"], fast["step_speedup_warm"]) == (2.0, 3.0)
    assert fast["evaluation_speedup"] == 2.0
    # 20 steps and their evaluation: (20 x 6 + 40) / (20 x 3 + 20) s
    assert fast["speedup"] == 2.0 and fast["speedup_warm"] == 2.67
    assert fast["pairs_per_s"] == round(32 * 20 / 80, 2)
    assert fast["map_at_equal_pairs"][-1] == {"pairs": 640, "map": 0.515, "today": 0.52}
    assert compared["today"]["speedup"] == 1.0


def test_the_report_row_says_the_speedup_and_whether_a_pair_teaches_as_much():
    data = {
        "machine": {"cpu": "AMD EPYC", "cpu_count": 2, "date": "2026-11-29T03:00:00"},
        "target_speedup": 3.0,
        "map_tolerance": 0.005,
        "targets": {"arguana": {"compared": compare(SPEED, LEARNING, block_steps=20)}},
    }
    (cells,) = perf_rows.train_throughput_rows(data)
    assert cells[0] == "`train_throughput` arguana, upper-4 vs today"
    assert cells[1].endswith("selection MAP after 640 pairs")
    assert list(cells[2:7]) == ["8.00 (2.67×); MAP 0.515 vs 0.520", "today 4.00", "2.00×",
                          "≥ 3.0× at equal MAP per pair", "**no**"]  # fmt: skip
    assert cells[7] == "2 CPU cores, AMD EPYC, 2026-11-29"
