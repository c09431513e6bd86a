"""bf16 scoring keeps fp32's quality on real data: MiniLM on WikiQA test questions."""

from __future__ import annotations

import numpy as np
import pytest

QUESTIONS = 60  # a small real set: WikiQA's first test questions (about 600 pairs)


@pytest.mark.integration
@pytest.mark.slow  # over 10 s: started first (CONTRIBUTING, CI's time budget)
def test_bf16_scores_track_fp32_on_real_pairs(shared_file, monkeypatch):
    import adapter_zoo
    import benchmarks
    from adapter_zoo import precision
    from adapter_zoo.metrics import evaluate_rankings

    # bf16 runs (emulated, slower) on a CPU without it; here only the numbers matter
    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: ("avx512_bf16",))
    data = benchmarks.get("wikiqa").load("test", shared_file("benchmarks"))
    data = data.select(range(QUESTIONS))
    pairs = [(q, c) for q, cands in zip(data["query"], data["candidates"]) for c in cands]
    bounds = np.cumsum([0] + [len(c) for c in data["candidates"]])
    maps, scores = {}, {}
    for name in ("fp32", "bf16"):
        model = adapter_zoo.load("sbert:minilm-l6", device="cpu", precision=name)
        assert model.precision == name
        scores[name] = model.score(pairs)
        assert scores[name].dtype == np.float32
        per_query = [scores[name][a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        maps[name] = evaluate_rankings(per_query, data["labels"])["map"]
    assert np.corrcoef(scores["fp32"], scores["bf16"])[0, 1] >= 0.999
    assert abs(maps["bf16"] - maps["fp32"]) <= 0.003, maps
