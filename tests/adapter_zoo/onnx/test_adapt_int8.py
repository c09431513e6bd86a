"""adapt with its decision lists scored in int8 (the scoring precision contextvar): the
candidates score through their ONNX exports, training stays PyTorch fp32."""

from __future__ import annotations

import pytest

import adapter_zoo
from adapter_zoo.onnx.cache import MANIFEST, cache_root
from adapter_zoo.precision import scoring_precision
from adapter_zoo.zoo.store import read_card

BICYCLES = "bicycles.meta.stackexchange.com"


@pytest.mark.slow  # over 10 s: started first (CONTRIBUTING, CI's time budget)
def test_adapt_decides_on_int8_scores(tiny_sentence_bert_path, parsed_shipped, monkeypatch, caplog):
    import logging

    from adapter_zoo.adapt.learn import learn_and_decide
    from adapter_zoo.zoo import domain

    monkeypatch.setattr(domain, "MAX_TEXTS", 100)
    with scoring_precision("int8"), caplog.at_level(logging.INFO, logger="adapter_zoo"):
        path = learn_and_decide(parsed_shipped / BICYCLES, name="bikes-int8", zoo=[],
                                base_model=str(tiny_sentence_bert_path), max_steps=2)  # fmt: skip
    record = read_card(path)["adapt"]
    assert "adapt bikes-int8: the decision lists are scored in int8" in caplog.text
    assert record["decision"]["chosen"] in record["candidates"]
    assert record["training"]["runs"]["own"]["steps"] == 2
    assert list(cache_root().glob(f"*/{MANIFEST}"))  # the candidates were exported
    base = record["candidates"]["base"]["model"]  # the zero-shot base, as adapt scored it
    assert adapter_zoo.load(base, precision="int8").precision == "int8"
