"""Training checkpoints: exact resume after a crash, bad checkpoints refused, best epoch kept."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from training_helpers import DROP_PAIRS, cli_train_argv, config

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.cli import main
from adapter_zoo.training import train
from adapter_zoo.training.selection import DevListsEvaluator
from adapter_zoo.zoo import zoo_home


def crash_at_step(monkeypatch, step: int) -> None:
    """Kill training (a power cut) when dev evaluation is reached at ``step``: the checkpoints
    before it are on disk, the one of ``step`` is not."""
    evaluate = DevListsEvaluator.__call__

    def crash(self, model, output_path=None, epoch=-1, steps=-1):
        if steps == step:
            raise KeyboardInterrupt(f"power cut at step {step}")
        return evaluate(self, model, output_path, epoch, steps)

    monkeypatch.setattr(DevListsEvaluator, "__call__", crash)


def _weights(path: Path) -> dict[str, bytes]:
    return {str(f.relative_to(path)): f.read_bytes() for f in path.rglob("*.safetensors")}


def test_resume_after_crash_is_bit_identical(parsed_fixture, tiny_bert_path, tmp_path, monkeypatch):
    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", epochs=2)
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "straight"))
    straight = train(cfg)
    per_epoch = json.loads((straight / "card.json").read_text())["training"]["log"][0]["step"]

    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "crashed"))
    with monkeypatch.context() as patch:
        crash_at_step(patch, 2 * per_epoch)
        with pytest.raises(KeyboardInterrupt):
            train(cfg)
    assert not (tmp_path / "crashed" / "beer").exists()  # no partial zoo entry
    checkpoint = (
        tmp_path / "crashed" / ".checkpoints" / "beer" / "train" / f"checkpoint-{per_epoch}"
    )
    assert (checkpoint / "trainable.safetensors").exists()
    resumed = train(cfg)

    assert _weights(resumed) == _weights(straight) and len(_weights(straight)) == 2
    logs = [
        [
            {k: v for k, v in json.loads(line).items() if k != "dev_seconds"}
            for line in (p / "training_log.jsonl").read_text().splitlines()
        ]
        for p in (straight, resumed)
    ]
    assert logs[0] == logs[1] and len(logs[0]) == 2


def _crashed_run(cfg, monkeypatch, step: int) -> Path:
    """The checkpoint a run of ``cfg`` killed at ``step`` left behind."""
    with monkeypatch.context() as patch:
        crash_at_step(patch, step)
        with pytest.raises(KeyboardInterrupt):
            train(cfg)
    (checkpoint,) = (zoo_home() / ".checkpoints" / cfg.name / "train").glob("checkpoint-*")
    return checkpoint


@pytest.mark.parametrize("planted_file", ["rng_state.pth", "optimizer.pt", "scheduler.pt"])
def test_a_planted_checkpoint_pickle_is_refused_without_running_code(
    parsed_fixture, tiny_bert_path, planted_pickle, monkeypatch, planted_file
):
    import torch

    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", epochs=2)
    checkpoint = _crashed_run(cfg, monkeypatch, _last_step(cfg))
    planted, marker = planted_pickle
    torch.save({"state": planted}, checkpoint / planted_file)
    with pytest.raises(ZooError) as error:
        train(cfg)
    assert str(error.value).startswith(
        f"{checkpoint / planted_file}: not a checkpoint written by adapter-zoo, refused"
    )
    assert not marker.exists()
    assert not (zoo_home() / "beer").exists()


def _last_step(cfg) -> int:
    """The step of the last dev evaluation of ``cfg`` (its first epoch's is checkpointed)."""
    return 2 * -(-_train_rows(cfg) * 2 // cfg.batch_size)


def _train_rows(cfg) -> int:
    from adapter_zoo.training.data import load_pairs

    (table,) = load_pairs(cfg.data, "beer.stackexchange.com", ("title_body",), "train")
    return len(table)


def test_resume_with_max_steps_ends_with_the_same_model(
    parsed_fixture, tiny_bert_path, tmp_path, monkeypatch
):
    # 3 epochs of 2 steps (the lr schedule spans all 5 steps), cut short at step 5
    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", epochs=3, max_steps=5,
                 batch_size=64)  # fmt: skip
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "straight"))
    straight = train(cfg)
    log = json.loads((straight / "card.json").read_text())["training"]["log"]
    assert [r["step"] for r in log] == [2, 4, 5]

    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "crashed"))
    assert _crashed_run(cfg, monkeypatch, 4).name == "checkpoint-2"
    resumed = train(cfg)

    assert _weights(resumed) == _weights(straight) and _weights(straight)
    strip = [{k: v for k, v in r.items() if k != "dev_seconds"} for r in log]
    again = json.loads((resumed / "card.json").read_text())["training"]["log"]
    assert [{k: v for k, v in r.items() if k != "dev_seconds"} for r in again] == strip


def test_corrupt_checkpoint_is_one_line_and_restart_starts_over(
    parsed_fixture, tiny_bert_path, tmp_path, monkeypatch, capsys
):
    argv = cli_train_argv(parsed_fixture, tiny_bert_path)
    argv[argv.index("--epochs") + 1] = "2"
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "crashed"))
    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", epochs=2)
    with monkeypatch.context() as patch:
        crash_at_step(patch, _last_step(cfg))
        assert main(argv) == 130  # interrupted after epoch 1's checkpoint
    (checkpoint,) = (zoo_home() / ".checkpoints" / "beer" / "train").glob("checkpoint-*")
    tensors = checkpoint / "optimizer.pt"
    tensors.write_bytes(tensors.read_bytes()[: tensors.stat().st_size // 2])
    capsys.readouterr()
    for _ in range(2):  # every rerun says the same, and names the way out
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"adapter-zoo train: error: {tensors}: corrupt or truncated ")
        assert err.endswith("; run adapter-zoo train again with --restart to start over\n")
        assert err.count("\n") == 1
    assert main([*argv, "--restart"]) == 0
    log = json.loads((zoo_home() / "beer" / "card.json").read_text())["training"]["log"]
    assert [r["epoch"] for r in log] == [1, 2] and _weights(zoo_home() / "beer")
    assert not tensors.exists() and not (zoo_home() / ".checkpoints").exists()


def test_patience_stops_when_dev_stops_improving(parsed_fixture, tiny_bert_path):
    """At rate 0 no epoch beats the first: with patience 1 the run stops after epoch 2 and
    keeps epoch 1 (transformers' EarlyStoppingCallback on the dev evaluator's dev_map)."""
    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", epochs=4, patience=1, lr=0.0)
    card = json.loads((train(cfg) / "card.json").read_text())
    log = card["training"]["log"]
    per_epoch = log[0]["step"]
    assert [r["epoch"] for r in log] == [1, 2]
    assert card["training"]["steps"] == 2 * per_epoch
    assert card["training"]["best_epoch"] == 1 and card["training"]["best_step"] == per_epoch
    assert card["scores"] == {"dev_map": log[0]["dev_map"], "dev_p@1": log[0]["dev_p@1"]}


def test_the_entry_is_the_best_epochs_state_not_the_last(
    parsed_fixture, tiny_bert_path, monkeypatch
):
    """The trainer loads the best checkpoint at the end: the written entry scores like the
    model did at the selected evaluation, not like the last state. (The fixture's two dev
    lists tie every epoch at MAP 0.75; a tie keeps the earlier state.)"""
    evaluate = DevListsEvaluator.__call__
    scored = {}

    def remember(self, model, output_path=None, epoch=-1, steps=-1):
        scored[steps] = self.scorer.score(DROP_PAIRS)
        return evaluate(self, model, output_path, epoch, steps)

    monkeypatch.setattr(DevListsEvaluator, "__call__", remember)
    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", epochs=3, lr=1e-2)
    card = json.loads((train(cfg) / "card.json").read_text())
    log = card["training"]["log"]
    assert [r["dev_map"] for r in log] == [0.75, 0.75, 0.75]
    assert card["training"]["best_step"] == log[0]["step"] and len(scored) == 3
    entry = adapter_zoo.load("beer").score(DROP_PAIRS)
    np.testing.assert_allclose(entry, scored[log[0]["step"]], atol=1e-6)
    assert not np.allclose(entry, scored[log[-1]["step"]], atol=1e-4)


def test_tanda_resumed_in_its_adapt_phase_skips_the_transfer_and_ends_the_same(
    parsed_fixture, tiny_bert_path, tmp_path, monkeypatch
):
    cfg = config(parsed_fixture, tiny_bert_path, "tanda", "tanda", epochs=2,
                 transfer_data=str(parsed_fixture), transfer_forums=("cooking",))  # fmt: skip
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "straight"))
    straight = train(cfg)
    log = json.loads((straight / "card.json").read_text())["training"]["log"]
    adapt = [r for r in log if r["phase"] == "adapt"]
    assert [r["phase"] for r in log[: len(log) - len(adapt)]] == ["transfer"] * (
        len(log) - len(adapt)
    ) and len(adapt) == 2

    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "crashed"))
    evaluate = DevListsEvaluator.__call__
    calls = []

    def crash_in_adapt(self, model, output_path=None, epoch=-1, steps=-1):
        calls.append(steps)
        if len(calls) == len(log):  # the adapt phase's last evaluation
            raise KeyboardInterrupt("power cut")
        return evaluate(self, model, output_path, epoch, steps)

    with monkeypatch.context() as patch:
        patch.setattr(DevListsEvaluator, "__call__", crash_in_adapt)
        with pytest.raises(KeyboardInterrupt):
            train(cfg)
    folder = zoo_home() / ".checkpoints" / "tanda"
    assert (folder / "transfer-done.json").is_file()
    calls.clear()
    with monkeypatch.context() as patch:
        patch.setattr(DevListsEvaluator, "__call__", crash_in_adapt)
        resumed = train(cfg)
    assert calls == [adapt[-1]["step"]]  # no transfer evaluation again, one adapt epoch left
    assert _weights(resumed) == _weights(straight) and _weights(straight)
    again = json.loads((resumed / "card.json").read_text())["training"]["log"]
    strip = [{k: v for k, v in r.items() if k != "dev_seconds"} for r in log]
    assert [{k: v for k, v in r.items() if k != "dev_seconds"} for r in again] == strip


def test_a_checkpoint_folder_of_another_format_or_run_is_emptied_not_resumed(
    parsed_fixture, tiny_bert_path
):
    """A checkpoint written by an older trainer (no ``format`` in its run file) has no step-0
    dev record to resume with: it is another run's, emptied, and training starts at step 0."""
    from adapter_zoo.training.checkpoint import (
        CHECKPOINT_FORMAT,
        RUN_FILE,
        checkpoint_dir,
        open_run_folder,
    )

    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer")
    folder = open_run_folder(cfg)
    run = json.loads((folder / RUN_FILE).read_text())
    assert folder == checkpoint_dir("beer") and run["format"] == CHECKPOINT_FORMAT
    (folder / "train").mkdir()
    assert open_run_folder(cfg) == folder and (folder / "train").is_dir()  # the same run resumes
    del run["format"]
    (folder / RUN_FILE).write_text(json.dumps(run))
    open_run_folder(cfg)
    assert not (folder / "train").exists()
    assert json.loads((folder / RUN_FILE).read_text())["format"] == CHECKPOINT_FORMAT
