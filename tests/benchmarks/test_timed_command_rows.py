"""The performance table's rows of a command timed as a user runs it (quickstart_time): a run
marked shared only when other work loaded the machine before it started."""

from __future__ import annotations

from benchmarks.report.descriptions.perf_timed import quickstart_rows


def _record(before: float, after: float) -> dict:
    return {
        "command": "adapter-zoo quickstart", "wall_s": 294.0, "peak_rss_gb": 3.34,
        "target_s": 300, "meets_target": True, "target_gb": 4.0, "meets_memory_target": True,
        "memory_plans": {"beer": "recompute"}, "stage_seconds": {"parse": 1.3},
        "load_average_1m": {"before": before, "after": after},
        "machine": {"cpu": "AMD EPYC", "cpu_count": 2, "date": "2026-11-29T03:50:00"},
    }  # fmt: skip


def test_a_quiet_run_is_not_marked_shared_by_its_own_load_after_it():
    (row,) = quickstart_rows(_record(before=0.7, after=2.16))
    assert row[-1] == "2 CPU cores, AMD EPYC, 2026-11-29"


def test_a_run_started_on_a_loaded_machine_says_so():
    (row,) = quickstart_rows(_record(before=8.0, after=8.4))
    assert row[-1] == "2 CPU cores, AMD EPYC (shared: load 8.0), 2026-11-29"
