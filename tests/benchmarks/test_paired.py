"""Per-query APs of several models on one split (benchmarks.paired), scored once each, and
their paired gain."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.paired import query_average_precisions, rounded_gain


def test_each_counted_query_gets_each_models_ap_once(tiny_benchmark, make_local_benchmark,
                                                      tmp_path, monkeypatch):  # fmt: skip
    import sys

    from benchmarks.evaluate import ScoredModels, evaluate

    calls = []

    def counted(model, benchmark, **kwargs):
        calls.append(model)
        return evaluate(model, benchmark, **kwargs)

    monkeypatch.setattr(sys.modules["benchmarks.evaluate"], "evaluate", counted)
    scored, done = ScoredModels(), set()
    aps = query_average_precisions(["bm25"], f"local:{tiny_benchmark}", scored=scored, done=done)
    record = evaluate("bm25", f"local:{tiny_benchmark}")
    assert aps["bm25"].mean() == pytest.approx(record["metrics"]["map"], abs=1e-6)
    again = query_average_precisions(["bm25"], f"local:{tiny_benchmark}", scored=scored, done=done)
    assert calls == ["bm25"] and np.array_equal(again["bm25"], aps["bm25"])
    # a query without a relevant candidate is left out where the set drops it
    import datasets

    queries = [("stout", ["a stout is dark", "lagers are pale"]), ("ipa", ["hops", "malt"])]
    folder = make_local_benchmark(tmp_path / "b", None, queries=queries)
    rows = datasets.load_from_disk(str(folder / "test")).to_dict()
    rows["labels"] = [[1, 0], [0, 0]]
    datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "c" / "test"))
    (tmp_path / "c" / "benchmark.json").write_text((folder / "benchmark.json").read_text())
    assert len(query_average_precisions(["bm25"], f"local:{tmp_path / 'c'}")["bm25"]) == 1


def test_a_gain_is_the_mean_difference_with_its_interval():
    gain = rounded_gain(np.array([1.0, 0.5, 1.0, 0.5]), np.array([0.5, 0.5, 0.5, 0.5]))
    assert gain["delta"] == 0.25
    low, high = gain["interval"]
    assert 0.0 <= low < 0.25 < high <= 0.5
