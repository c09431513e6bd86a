"""Each writing command killed at two seeded moments (a change to the file system), checked
for anything half written, then run again: the rerun ends with the uninterrupted run's
outputs (datasets row for row, weights byte for byte, JSON without its time fields)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stackexchange.catalog import shipped_data

pytestmark = pytest.mark.usefixtures("warm_embedder")


def _zoo(tmp_path, monkeypatch) -> Path:
    zoo = tmp_path / "zoo"
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(zoo))
    return zoo


def test_parse(survives, tmp_path, faults_kit):
    out = tmp_path / "parsed"
    out.mkdir()
    archive = shipped_data() / "augur.stackexchange.com.7z"
    argv = ["parse", str(archive), "--out", str(out), "--workers", "1"]
    survives(argv, out, "parse", faults_kit.checks.forum_problems)


TRAINING = {  # four steps, checkpoints between them (cross: one per epoch)
    "bi": ["--max-steps", "4", "--eval-steps", "2"],
    "cross": ["--epochs", "2"],
}


@pytest.mark.parametrize("encoder", ["bi", "cross"])
def test_train(encoder, survives, tmp_path, monkeypatch, parsed_augur, tiny_bert_path,
               tiny_sentence_bert_path, faults_kit):  # fmt: skip
    zoo = _zoo(tmp_path, monkeypatch)
    zoo.mkdir()
    base = tiny_sentence_bert_path if encoder == "bi" else tiny_bert_path
    argv = ["train", "--mode", "adapter", "--encoder", encoder, "--data", str(parsed_augur),
            "--forums", "augur", "--name", "k", "--base", str(base), "--pairs",
            "title_answer", "--batch-size", "32", "--max-length", "16", *TRAINING[encoder]]  # fmt: skip
    survives(argv, zoo, f"train-{encoder}", faults_kit.checks.zoo_problems)


def test_build_benchmark_and_evaluate(survives, tmp_path, parsed_shipped, faults_kit):
    bench = tmp_path / "out" / "bench"
    argv = ["build-benchmark", str(parsed_shipped / "bicycles.meta.stackexchange.com"),
            "--out", str(bench), "--candidates", "10"]  # fmt: skip
    (tmp_path / "out").mkdir()
    survives(argv, tmp_path / "out", "build-benchmark",
              lambda out: faults_kit.checks.benchmark_problems(out / "bench"))  # fmt: skip
    results = tmp_path / "results"
    results.mkdir()
    argv = ["evaluate", "--model", "bm25", "tfidf", "--benchmark", f"local:{bench}",
            "--results", str(results)]  # fmt: skip
    survives(argv, results, "evaluate", lambda out: faults_kit.checks.results_problems(out))
    assert os.path.exists(results / "results.jsonl")
