"""benchmarks/speed/ci_time.py reads a ``.ci/run`` log: stage times, counts, slowest tests."""

from __future__ import annotations

from benchmarks.speed.ci_time import decision, parse_log

LOG = """\
.ci/install: project took 70 s
.ci/run: stage install took 66 s
.ci/run: stage lint took 2 s
.ci/run: stage docs took 3 s
============================= slowest 25 durations =============================
77.50s call     tests/adapter_zoo/training/test_beer_integration.py::test_beer_adapter_beats_bm25
9.15s setup    tests/recipes/test_ray.py::test_ray_outputs_equal_the_local_run
3.10s call     tests/somewhere/test_new.py::test_not_decided[a-b]
=========== 3 failed, 1318 passed, 161 warnings in 405.97s (0:06:45) ===========
.ci/run: 7 min 58 s in all (install 66 s, lint 2 s, docs 3 s)
"""


def test_a_ci_log_gives_its_stages_counts_and_slowest_tests():
    record = parse_log(LOG)
    assert record["stages"] == {"install": 66, "lint": 2, "docs": 3}
    assert (record["passed"], record["failed"], record["pytest_seconds"]) == (1318, 3, 405.97)
    slowest = record["slowest"]
    assert [(t["seconds"], t["when"]) for t in slowest] == [(77.5, "call"), (9.15, "setup"),
                                                            (3.1, "call")]  # fmt: skip
    assert slowest[2]["test"] == "tests/somewhere/test_new.py::test_not_decided[a-b]"
    assert slowest[0]["decision"].startswith("kept: CI's one real cross-encoder training")
    assert slowest[2]["decision"] is None  # shown as undecided in the docs' table


def test_the_longest_matching_prefix_decides():
    assert decision("tests/adapter_zoo/adapt/test_learn.py::test_x").startswith("kept: adapt")
    assert decision("tests/adapter_zoo/onnx/test_adapt_int8.py::test_y").startswith(
        "kept: adapt deciding on int8"
    )
