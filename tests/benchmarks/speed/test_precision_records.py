"""--precision on the commands that score: the record says what the model ran at."""

from __future__ import annotations

import json

import pytest

import benchmarks
from adapter_zoo import precision


def test_the_evaluate_record_names_the_precision(tiny_bert_path, tiny_benchmark, monkeypatch):
    bench = "local:" + str(tiny_benchmark)
    model = f"base:{tiny_bert_path}"
    assert benchmarks.evaluate(model, bench)["precision"] == "fp32"  # auto, a CPU without bf16
    assert "precision" not in benchmarks.evaluate("bm25", bench)
    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: ("avx512_bf16",))
    assert benchmarks.evaluate(model, bench)["precision"] == "fp32"  # auto: fp32 on a CPU
    assert benchmarks.evaluate(model, bench, precision="bf16")["precision"] == "bf16"
    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: ("amx_bf16", "avx512_bf16"))
    assert benchmarks.evaluate(model, bench)["precision"] == "fp32"
    assert benchmarks.evaluate(model, bench, precision="bf16")["precision"] == "bf16"
    assert benchmarks.evaluate(model, bench, precision="fp32")["precision"] == "fp32"
    with pytest.raises(
        ValueError,
        match="^unknown precision 'fp16'; did you mean bf16, fp32\\? choose one of auto, fp32, bf16, int8$",
    ):
        benchmarks.evaluate(model, bench, precision="fp16")


def test_cli_bf16_is_refused_in_one_line_where_the_cpu_lacks_it(
    tiny_bert_path, tiny_benchmark, tmp_path, capsys
):
    from adapter_zoo.cli import main

    bench = "local:" + str(tiny_benchmark)
    model = f"base:{tiny_bert_path}"
    argv = ["evaluate", "--model", model, "--benchmark", bench, "--precision", "bf16"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "AVX512-BF16" in err and err.startswith("adapter-zoo")
    adapters = ["sweep", "--benchmark", bench, "--adapters", "a", "--precision", "bf16"]
    assert main(adapters) == 2
    assert "AVX512-BF16" in capsys.readouterr().err
    results = tmp_path / "results"
    argv = ["evaluate", "--model", model, "--benchmark", bench, "--precision", "fp32",
            "--results", str(results)]  # fmt: skip
    assert main(argv) == 0
    record = json.loads((results / "results.jsonl").read_text().splitlines()[0])
    assert record["precision"] == "fp32"


def test_the_precision_benchmark_counts_the_lists_whose_ap_moved():
    """benchmarks/speed/precision.py says how many lists a MAP delta comes from: on beer's 59
    lists one near-tie flipped at the top moves MAP by 0.008."""
    import numpy as np

    from benchmarks.speed.precision import lists_moved

    dataset = {"candidates": [["a", "b"], ["c", "d"], ["e", "f"]],
               "labels": [[1, 0], [0, 1], [0, 0]]}  # fmt: skip
    fp32 = np.array([0.9, 0.8, 0.1, 0.2, 0.5, 0.4], dtype=np.float32)
    bf16 = np.array([0.8, 0.9, 0.1, 0.2, 0.4, 0.5], dtype=np.float32)
    # the first list's answer drops to second place; the third has nothing relevant
    assert lists_moved(fp32, bf16, dataset) == {
        "lists": 2, "lists_moved": 1, "largest_ap_move": -0.5}  # fmt: skip
    assert lists_moved(fp32, fp32, dataset)["lists_moved"] == 0
