"""Two runs at once: to one zoo entry (one wins, the other is refused in one line before it
trains), to two entries of one zoo (both succeed), appending to one results folder (every
record whole). A run is paused half way (``crash_hooks``' pause after a change to the file
system) while the other goes, so the overlap is certain on any machine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from adapter_zoo.cli import main
from adapter_zoo.zoo.store import read_card, verify_entry
from stackexchange.catalog import shipped_data
from stackexchange.io import lock_file

pytestmark = pytest.mark.usefixtures("warm_embedder")


def _train(data: Path, base: Path, name: str, seed: int = 0) -> list[str]:
    return ["train", "--mode", "adapter", "--encoder", "bi", "--data", str(data), "--forums",
            "augur", "--name", name, "--base", str(base), "--pairs", "title_answer",
            "--batch-size", "32", "--max-length", "16", "--max-steps", "4", "--eval-steps", "2",
            "--seed", str(seed)]  # fmt: skip


def _refused(command: str, folder: Path) -> str:
    return (
        f"adapter-zoo {command}: error: {folder}: another adapter-zoo run is writing into it "
        f"(lock {lock_file(folder)}); wait until it ends or choose another --name"
    )


def test_two_trains_to_one_name_at_once_one_wins(parsed_augur, tiny_sentence_bert_path, tmp_path,
                                                faults_kit):  # fmt: skip
    zoo = Path(os.environ["ADAPTER_ZOO_HOME"])
    first = faults_kit.Forked(_train(parsed_augur, tiny_sentence_bert_path, "k"),
                              tmp_path / "first.log", pause_at=3)  # fmt: skip
    first.paused()  # training, its checkpoints begun
    code, _ = faults_kit.fork_cli(_train(parsed_augur, tiny_sentence_bert_path, "k", seed=1),
                                  tmp_path / "second.log")  # fmt: skip
    assert code == 2
    assert (tmp_path / "second.log").read_text().splitlines() == [_refused("train", zoo / "k")]
    first.go()
    assert first.wait()[0] == 0, (tmp_path / "first.log").read_text()[-2000:]
    assert read_card(zoo / "k")["seed"] == 0  # the first's, whole
    verify_entry(zoo / "k")


def test_two_trains_to_other_names_in_one_zoo_both_succeed(parsed_augur, tiny_sentence_bert_path,
                                                          tmp_path, faults_kit):  # fmt: skip
    zoo = Path(os.environ["ADAPTER_ZOO_HOME"])
    first = faults_kit.Forked(_train(parsed_augur, tiny_sentence_bert_path, "one"),
                              tmp_path / "one.log", pause_at=3)  # fmt: skip
    first.paused()
    code, _ = faults_kit.fork_cli(_train(parsed_augur, tiny_sentence_bert_path, "two"),
                                  tmp_path / "two.log")  # fmt: skip
    assert code == 0, (tmp_path / "two.log").read_text()[-2000:]
    first.go()
    assert first.wait()[0] == 0, (tmp_path / "one.log").read_text()[-2000:]
    assert [verify_entry(zoo / name)["name"] for name in ("one", "two")] == ["one", "two"]
    assert not (zoo / ".checkpoints").exists()  # each run removed its own run folder


@pytest.mark.parametrize("command", ["train", "adapt", "build", "compose", "cascade-train",
                                     "evaluate"])  # fmt: skip
def test_a_run_to_an_entry_another_run_writes_is_refused_before_any_work(
    command, parsed_augur, parsed_shipped, tiny_bert_path, tmp_path, capsys, snapshot,
    held_output_lock,
):  # fmt: skip
    zoo = Path(os.environ["ADAPTER_ZOO_HOME"])
    bench = tmp_path / "bench"
    if command == "evaluate":  # it reads the benchmark's train split, then trains
        forum = parsed_shipped / "bicycles.meta.stackexchange.com"
        assert main(["build-benchmark", str(forum), "--out", str(bench)]) == 0
    target = tmp_path / "target.txt"
    target.write_text("How do I report an outcome?\n")
    argv = {
        "train": _train(parsed_augur, tiny_bert_path, "x"),
        "adapt": ["adapt", "--target", str(target), "--name", "x", "--strategy", "zero-shot"],
        "build": ["build", "augur", "--dump", str(shipped_data() / "augur.stackexchange.com.7z"),
                  "--name", "x", "--base", str(tiny_bert_path)],
        "compose": ["compose", "--name", "x", "--fusion", "bm25", "tfidf"],
        "cascade-train": ["cascade-train", "--data", str(parsed_augur), "--name", "x", "--base",
                          str(tiny_bert_path)],
        "evaluate": ["evaluate", "--model", str(tiny_bert_path), "--benchmark", f"local:{bench}",
                     "--finetune", "adapter", "--save-as", "x"],
    }[command]  # fmt: skip
    held_output_lock(zoo / "x")  # the first run, writing entry x
    before = snapshot(zoo, parsed_augur)
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1] == _refused(command, zoo / "x")
    assert snapshot(zoo, parsed_augur) == before


def test_two_evaluates_append_to_one_results_folder(tmp_path, parsed_shipped, faults_kit):
    bench = tmp_path / "bench"
    assert main(["build-benchmark", str(parsed_shipped / "bicycles.meta.stackexchange.com"),
                 "--out", str(bench), "--candidates", "10"]) == 0  # fmt: skip
    results = tmp_path / "results"

    def evaluate(model: str) -> list[str]:
        return ["evaluate", "--model", model, "--benchmark", f"local:{bench}", "--results",
                str(results)]  # fmt: skip

    code, changes = faults_kit.fork_cli(evaluate("bm25"), tmp_path / "alone.log")
    assert code == 0
    (results / "results.jsonl").unlink()
    # the append's last 8 changes: its record file written (3), the file (3), renamed, the
    # record removed; paused after the first, the run holds the results lock
    first = faults_kit.Forked(evaluate("bm25"), tmp_path / "first.log", pause_at=changes - 7)
    first.paused()
    with pytest.raises(Timeout):
        FileLock(str(results / ".results.lock"), timeout=0).acquire()
    second = faults_kit.Forked(evaluate("tfidf"), tmp_path / "second.log")
    first.go()
    assert (first.wait()[0], second.wait()[0]) == (0, 0)
    from benchmarks.results import read_results

    assert sorted(r["model"] for r in read_results(results)) == ["bm25", "tfidf"]
    assert faults_kit.checks.results_problems(results) == []
