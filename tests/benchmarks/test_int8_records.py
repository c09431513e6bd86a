"""evaluate --precision int8: scored through the int8 ONNX export, and the record says so."""

from __future__ import annotations

import json

import benchmarks
from adapter_zoo.cli import main


def test_evaluate_in_int8_records_it(tiny_sentence_bert_path, tiny_benchmark, tmp_path, capsys):
    bench = "local:" + str(tiny_benchmark)
    model = f"sbert:{tiny_sentence_bert_path}"
    fp32 = benchmarks.evaluate(model, bench, precision="fp32")
    int8 = benchmarks.evaluate(model, bench, precision="int8")
    assert (fp32["precision"], int8["precision"]) == ("fp32", "int8")
    assert abs(int8["metrics"]["map"] - fp32["metrics"]["map"]) < 0.2
    results = tmp_path / "results"
    argv = ["evaluate", "--model", model, "--benchmark", bench, "--precision", "int8",
            "--results", str(results)]  # fmt: skip
    assert main(argv) == 0
    record = json.loads((results / "results.jsonl").read_text().splitlines()[0])
    assert record["precision"] == "int8"


def test_a_composition_scores_its_members_in_int8(tiny_sentence_bert_path, tiny_benchmark):
    bench = "local:" + str(tiny_benchmark)
    model = f"fusion:sbert:{tiny_sentence_bert_path}+bm25*0.5"
    assert benchmarks.evaluate(model, bench, precision="int8")["precision"] == "int8"
