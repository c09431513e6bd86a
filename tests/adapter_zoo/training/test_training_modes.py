"""Training: every mode on parsed fixture data, the train CLI, AdapterDrop, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from training_helpers import DROP_PAIRS, cli_train_argv, config, loss_on

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.cli import main
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.zoo import zoo_home


def expected_counts(kit, host="beer.stackexchange.com", kind="title_body"):
    rows = kit.fixture_rows(host, 48)[kind]
    return {
        s: sum(kit.split_of(r["query_id"]) == s for r in rows) for s in ("train", "dev", "test")
    }


def test_adapter_mode_trains_and_loads_by_name(parsed_fixture, tiny_bert_path, forum_kit):
    path = train(config(parsed_fixture, tiny_bert_path, "adapter", "beer", epochs=2))
    card = json.loads((path / "card.json").read_text())
    counts = expected_counts(forum_kit)
    assert card["mode"] == "adapter" and card["forums"] == ["beer.stackexchange.com"]
    assert card["training"]["precision"] == "fp32"  # auto, on the suite's CPU without bf16
    assert card["pairs"]["beer.stackexchange.com"] == {
        "train": {"title_body": counts["train"]},
        "dev": {"title_body": counts["dev"]},
    }
    steps_per_epoch = -(-counts["train"] * 2 // 8)
    assert card["training"]["steps"] == 2 * steps_per_epoch
    log = [json.loads(line) for line in (path / "training_log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == [1, 2] and all(0 <= r["dev_map"] <= 1 for r in log)
    assert card["scores"]["dev_map"] == max(r["dev_map"] for r in log)
    assert not (zoo_home() / ".checkpoints" / "beer").exists()
    ranked = adapter_zoo.load("beer").rank("question 1 about the lager", ["x", "y"])
    assert len(ranked) == 2


def test_every_mode_trains_on_parsed_data(parsed_fixture, tiny_bert_path):
    data = parsed_fixture
    train(config(data, tiny_bert_path, "adapter", "beer"))
    train(config(data, tiny_bert_path, "adapter", "cooking", forums=("cooking",)))
    full = train(config(data, tiny_bert_path, "full", "beer-full"))
    multi = train(
        config(
            data,
            tiny_bert_path,
            "multitask",
            "multi",
            forums=("all",),
            extended=True,
            loss="pairwise",
        )
    )
    fusion = train(
        config(
            data,
            tiny_bert_path,
            "fusion",
            "mix",
            forums=("beer", "cooking"),
            adapters=("beer", "cooking"),
        )
    )
    tanda = train(
        config(
            data,
            tiny_bert_path,
            "tanda",
            "tanda",
            transfer_data=str(data),
            transfer_forums=("cooking", "bicycles"),
            epochs=3,
            patience=1,
        )
    )
    cards = {
        p.name: json.loads((p / "card.json").read_text()) for p in (full, multi, fusion, tanda)
    }
    assert cards["beer-full"]["layout"] == "full"
    hosts = ["beer.stackexchange.com", "bicycles.stackexchange.com", "cooking.stackexchange.com"]
    assert cards["multi"]["forums"] == hosts
    assert set(cards["multi"]["pairs"]["beer.stackexchange.com"]["train"]) == {
        "title_body",
        "title_answer",
        "duplicates",
    }
    weights = cards["mix"]["fusion_weights"]
    assert sorted(weights) == ["0", "1"]
    for layer in weights.values():
        assert sorted(layer) == ["beer", "cooking"]
        assert sum(layer.values()) == pytest.approx(1.0, abs=1e-4)
    phases = [r["phase"] for r in cards["tanda"]["training"]["log"]]
    assert phases[0] == "transfer" and set(phases[1:]) == {"adapt"}
    assert cards["tanda"]["training"]["learning_rate"] == 2e-6
    assert [c["name"] for c in adapter_zoo.list()] == [
        "beer",
        "beer-full",
        "cooking",
        "mix",
        "multi",
        "tanda",
    ]
    for name in ("beer-full", "multi", "mix", "tanda"):
        assert adapter_zoo.load(name).score([("a", "b")]).shape == (1,)


def test_max_steps_bounds_training(parsed_fixture, tiny_bert_path):
    path = train(config(parsed_fixture, tiny_bert_path, "full", "short", epochs=5, max_steps=3))
    card = json.loads((path / "card.json").read_text())
    assert card["training"]["steps"] == 3 and len(card["training"]["log"]) == 1


def test_bad_training_input(parsed_fixture, tiny_bert_path, tmp_path, forum_kit):
    data = tmp_path / "parsed"
    # every question of this forum hashes into dev/test: its train split is empty
    rows = [
        r
        for r in forum_kit.fixture_rows("beer.stackexchange.com", 48)["title_body"]
        if forum_kit.split_of(r["query_id"]) != "train"
    ]
    forum_kit.write_forum(data, "beer.stackexchange.com", {"title_body": rows})
    with pytest.raises(ZooError) as error:
        train(config(data, tiny_bert_path, "adapter", "beer"))
    assert str(error.value) == (
        f"{data / 'beer.stackexchange.com'}: empty training set (no "
        "title_body pairs in split 'train')"
    )
    assert not (zoo_home() / "beer").exists()

    with pytest.raises(ZooError) as error:
        train(config(data, tiny_bert_path, "adapter", "x", forums=("bier",)))
    assert str(error.value) == (
        f"{data}: no parsed forum 'bier' (parsed forums: beer.stackexchange.com)"
    )
    with pytest.raises(ZooError) as error:
        train(config(parsed_fixture, tiny_bert_path, "adapter", "two", forums=("beer", "cooking")))
    assert str(error.value) == (
        "mode 'adapter' trains one forum's adapter, got 2 forums "
        "(beer.stackexchange.com, cooking.stackexchange.com); use "
        "--mode multitask"
    )
    with pytest.raises(ZooError) as error:
        TrainingConfig(mode="lora", data="d", forums=("beer",), name="x")
    assert str(error.value) == (
        "unknown training mode 'lora'; choose one of adapter, full, multitask, fusion, tanda"
    )
    with pytest.raises(ZooError) as error:
        config(parsed_fixture, tiny_bert_path, "fusion", "x", adapters=("beer",))
    assert str(error.value) == "mode 'fusion' needs at least two zoo adapters (--adapters A B ...)"


def test_fusion_rejects_adapter_of_another_base_model(parsed_fixture, tiny_bert_path):
    train(config(parsed_fixture, tiny_bert_path, "adapter", "beer"))
    train(config(parsed_fixture, tiny_bert_path, "adapter", "cooking", forums=("cooking",)))
    with pytest.raises(ZooError) as error:
        train(config(parsed_fixture, "minilm-l6", "fusion", "mix", adapters=("beer", "cooking"),
                     encoder="cross"))  # fmt: skip
    assert str(error.value) == (
        f"{zoo_home() / 'beer'}: adapter 'beer' was trained for base "
        f"model '{tiny_bert_path}', not 'minilm-l6'"
    )
    assert not (zoo_home() / "mix").exists()


def test_cli_train_and_list(parsed_fixture, tiny_bert_path, capsys):
    argv = cli_train_argv(parsed_fixture, tiny_bert_path) + ["--seed", "3"]
    assert main(argv) == 0
    assert json.loads((zoo_home() / "beer" / "card.json").read_text())["seed"] == 3
    written = (zoo_home() / "beer" / "card.json").read_bytes()
    # the same arguments again (after a kill once its entry was in place): nothing to do
    assert main(argv) == 0
    assert "already holds this training run (the same arguments); nothing to do" in (
        capsys.readouterr().err
    )
    assert (zoo_home() / "beer" / "card.json").read_bytes() == written
    assert main([*argv[:-1], "4"]) == 2  # another run to the name
    assert "adapter-zoo train: error: zoo entry 'beer' already exists" in capsys.readouterr().err
    assert main(argv + ["--overwrite"]) == 0
    capsys.readouterr()
    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:2] == ["beer", "adapter"]


@pytest.mark.slow  # over 10 s: started first (CONTRIBUTING, CI's time budget)
def test_two_processes_under_torch_distributed_split_the_batches(
    parsed_fixture, tiny_bert_path, forum_kit
):
    """What ``accelerate launch`` starts on N GPUs, here on 2 CPU processes (gloo)."""
    import os
    import subprocess
    import sys

    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",  # its rendezvous on a free port, not 29500 (parallel test runs)
        "--nproc_per_node",
        "2",
        "-m",
        "adapter_zoo",
        *cli_train_argv(parsed_fixture, tiny_bert_path),
    ]
    env = {**os.environ, "ACCELERATE_USE_CPU": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    card = json.loads((zoo_home() / "beer" / "card.json").read_text())
    batches = -(-expected_counts(forum_kit)["train"] * 2 // 8)
    assert card["training"]["processes"] == 2
    assert card["training"]["steps"] == batches // 2  # each process takes half the batches
    assert done.stdout.count("wrote zoo entry") == 1


# AdapterDrop (train --drop-lower K): no adapter in the lowest K layers.


def _adapter_layers(path: Path) -> set[int]:
    import re

    from safetensors import safe_open

    with safe_open(str(path / "adapter.safetensors"), framework="pt") as tensors:
        keys = list(tensors.keys())  # noqa: SIM118 (no dict)
    return {int(re.search(r"\.layer\.(\d+)\.", k).group(1)) for k in keys}


def _capture_written_model(monkeypatch) -> dict:
    """The model ``train`` writes, kept for comparing with what loads back."""
    from adapter_zoo.training import models

    captured = {}
    write = models.write_entry_weights

    def capture(model, tokenizer, config, setup, folder):
        captured.update(model=model, tokenizer=tokenizer)
        write(model, tokenizer, config, setup, folder)

    monkeypatch.setattr(models, "write_entry_weights", capture)
    return captured


def test_drop_lower_adapter_leaves_out_the_lowest_layers_and_reloads_bit_identically(
    parsed_fixture, tiny_bert_path, monkeypatch
):
    from adapter_zoo.ranker import Ranker

    captured = _capture_written_model(monkeypatch)
    path = train(config(parsed_fixture, tiny_bert_path, "adapter", "beer-drop", drop_lower=1))
    card = json.loads((path / "card.json").read_text())
    assert card["training"]["drop_lower"] == 1
    adapter_config = json.loads((path / "adapter_config.json").read_text())
    assert adapter_config["config"]["leave_out"] == [0]
    assert _adapter_layers(path) == {1}  # weights for layer 1 only
    trained = Ranker(captured["model"], captured["tokenizer"], base_model=str(tiny_bert_path),
                     max_length=32, device="cpu")  # fmt: skip
    loaded = adapter_zoo.load("beer-drop", device="cpu")
    assert [len(layer.output.adapters) for layer in loaded.model.base_model.encoder.layer] == [0, 1]
    np.testing.assert_array_equal(loaded.score(DROP_PAIRS), trained.score(DROP_PAIRS))
    # without --drop-lower nothing changes: adapters in every layer
    plain = train(config(parsed_fixture, tiny_bert_path, "adapter", "beer"))
    assert _adapter_layers(plain) == {0, 1}
    assert json.loads((plain / "card.json").read_text())["training"]["drop_lower"] == 0


def test_drop_lower_full_fine_tuning_freezes_the_embeddings_and_lowest_layers(
    parsed_fixture, tiny_bert_path
):
    from adapter_zoo.ranker.model import build_model

    path = train(config(parsed_fixture, tiny_bert_path, "full", "full-drop", drop_lower=1))
    assert json.loads((path / "card.json").read_text())["training"]["drop_lower"] == 1
    base = build_model(str(tiny_bert_path))[0].base_model.state_dict()
    tuned = adapter_zoo.load("full-drop").model.base_model.state_dict()
    frozen = [k for k in base if k.startswith(("embeddings.", "encoder.layer.0."))]
    trained = [k for k in base if k.startswith("encoder.layer.1.")]
    assert frozen and trained
    assert all(torch_equal(base[k], tuned[k]) for k in frozen)
    assert not all(torch_equal(base[k], tuned[k]) for k in trained)


def torch_equal(a, b) -> bool:
    import torch

    return torch.equal(a, b)


@pytest.mark.parametrize("mode", ["adapter", "full"])
def test_layers_below_the_first_adapter_get_no_backward_pass(parsed_fixture, tiny_bert_path, mode):
    """Autograd records no graph where nothing requires grad: with --drop-lower 1, layer 0
    and layer 1's attention and feed-forward block (its adapter comes after them) are
    computed without one, so ``backward`` never runs through them."""
    import torch

    from adapter_zoo.training.models import setup_model

    batch = [("stout?", "dark beer", 1.0), ("hops?", "a", 0.0)]
    for drop_lower in (0, 1):
        cfg = config(parsed_fixture, tiny_bert_path, mode, "beer", drop_lower=drop_lower)
        torch.manual_seed(0)
        model, tokenizer, _ = setup_model(cfg)
        model.train()
        layers = model.base_model.encoder.layer
        graph = {}

        def record(graph, name):
            def hook(module, args, output):
                output = output[0] if isinstance(output, tuple) else output
                graph[name] = output.grad_fn is not None

            return hook

        layers[0].register_forward_hook(record(graph, "layer 0"))
        layers[1].intermediate.register_forward_hook(record(graph, "layer 1 feed-forward"))
        loss_on(cfg, model, tokenizer, batch).backward()
        if drop_lower == 0:
            # adapters in layer 0 (or every weight trains): the graph starts there
            assert graph["layer 0"] and (mode == "adapter" or graph["layer 1 feed-forward"])
        else:
            assert not graph["layer 0"]
            assert graph["layer 1 feed-forward"] == (mode == "full")
            assert all(p.grad is None for p in layers[0].parameters())
            assert all(p.grad is None for p in model.base_model.embeddings.parameters())
        trained = [p for p in layers[1].parameters() if p.requires_grad]
        assert trained and all(p.grad is not None for p in trained)


def test_fusion_takes_drop_lower_from_its_adapters(parsed_fixture, tiny_bert_path, capsys):
    data, base = parsed_fixture, tiny_bert_path
    train(config(data, base, "adapter", "beer", drop_lower=1))
    train(config(data, base, "adapter", "cooking", forums=("cooking",), drop_lower=1))
    train(config(data, base, "adapter", "bikes", forums=("bicycles",)))
    train(config(data, base, "adapter", "cooking0", forums=("cooking",)))
    path = train(config(data, base, "fusion", "mix", forums=("beer", "cooking"),
                        adapters=("beer", "cooking")))  # fmt: skip
    card = json.loads((path / "card.json").read_text())
    assert card["training"]["drop_lower"] == 1
    assert sorted(card["fusion_weights"]) == ["1"]  # fusion runs where the adapters are
    assert adapter_zoo.load("mix").score(DROP_PAIRS).shape == (3,)
    with pytest.raises(ZooError) as error:
        train(config(data, base, "fusion", "mixed", forums=("beer", "bicycles"),
                     adapters=("beer", "bikes")))  # fmt: skip
    assert str(error.value) == (
        "fusion: the fused adapters leave out different layers (beer [0], bikes []); "
        "fuse adapters trained with the same --drop-lower"
    )
    argv = ["train", "--mode", "fusion", "--data", str(data), "--forums", "beer", "bicycles",
            "--adapters", "bikes", "cooking0", "--name", "x", "--base", str(base),
            "--drop-lower", "1"]  # fmt: skip
    capsys.readouterr()
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "adapter-zoo train: error: --drop-lower 1 disagrees with the fused adapters, which "
        "leave out layers []; fusion takes its layers from them (omit --drop-lower)\n"
    )
    assert not (zoo_home() / "mixed").exists() and not (zoo_home() / "x").exists()


def test_drop_lower_must_leave_a_layer(parsed_fixture, tiny_bert_path, capsys):
    with pytest.raises(ZooError) as error:
        config(parsed_fixture, tiny_bert_path, "adapter", "beer", drop_lower=-1)
    assert str(error.value) == "drop_lower must be a whole number in [0, 1000], not -1"
    argv = [*cli_train_argv(parsed_fixture, tiny_bert_path), "--drop-lower", "2"]
    capsys.readouterr()
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo train: error: --drop-lower 2: base model '{tiny_bert_path}' has 2 "
        "layers; choose 0 to 1\n"
    )
    assert not (zoo_home() / "beer").exists()
    argv[argv.index("--mode") + 1] = "full"
    assert main(argv) == 2
    assert "has 2 layers; choose 0 to 1" in capsys.readouterr().err


def test_training_logs_its_progress_and_the_command_line_shows_it(
    parsed_fixture, tiny_bert_path, capsys, caplog
):
    """Library code logs (a caller decides what to show); ``adapter-zoo train`` shows the
    records on stderr, one line each, and prints only its result on stdout."""
    import logging

    with caplog.at_level(logging.INFO, logger="adapter_zoo"):
        train(config(parsed_fixture, tiny_bert_path, "adapter", "logged"))
    assert capsys.readouterr().out == ""
    # the dev records (one JSON object a line) beside the progress lines ("step N: {...}")
    messages = [r.getMessage() for r in caplog.records if r.name.endswith(".trainer")]
    records = [json.loads(m) for m in messages if m.startswith("{")]
    assert records and all("dev_map" in r or "loss" in r for r in records)
    assert "scoring 2 dev lists (4 pairs)" in [r.getMessage() for r in caplog.records]
    assert main(cli_train_argv(parsed_fixture, tiny_bert_path)) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("adapter-zoo train: wrote zoo entry 'beer'")
    progress = [
        line for line in captured.err.splitlines() if line.startswith("adapter-zoo train: {")
    ]
    assert progress and all("step" in json.loads(line.split(": ", 1)[1]) for line in progress)


def test_init_from_continues_a_cross_encoder_adapter_and_its_head(parsed_fixture, tiny_bert_path):
    train(config(parsed_fixture, tiny_bert_path, "adapter", "start", lr=1e-2))

    def argv(name: str, *extra: str) -> list[str]:
        return ["train", "--mode", "adapter", "--data", str(parsed_fixture), "--forums", "beer",
                "--name", name, "--base", str(tiny_bert_path), "--epochs", "1", "--batch-size",
                "8", "--max-length", "32", "--lr", "0", *extra]  # fmt: skip

    assert main(argv("again", "--init-from", "start")) == 0
    card = json.loads((zoo_home() / "again" / "card.json").read_text())
    assert card["init_from"] == {"entry": "start"} and card["training"]["init_from"] == "start"
    # at rate 0 the continued entry is its start, adapter and ranking head bit for bit
    pairs = [("question 1 about the lager", "x"), ("a stout", "porter or stout")]
    again = adapter_zoo.load("again").score(pairs)
    assert np.array_equal(again, adapter_zoo.load("start").score(pairs))
    # a new adapter's head is random: the same run without --init-from scores otherwise
    assert main(argv("fresh")) == 0
    assert not np.array_equal(adapter_zoo.load("fresh").score(pairs), again)


@pytest.mark.parametrize("mode", ["adapter", "full"])
def test_max_length_above_the_bases_positions_is_one_line_before_anything_is_written(
    parsed_fixture, tiny_bert_path, tiny_sentence_bert_path, mode, capsys
):
    for base, encoder in ((tiny_bert_path, "cross"), (tiny_sentence_bert_path, "bi")):
        argv = [*cli_train_argv(parsed_fixture, base), "--encoder", encoder, "--mode", mode]
        argv[argv.index("--max-length") + 1] = "100000"
        capsys.readouterr()
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            f"adapter-zoo train: error: max_length 100000 is above the 512 positions of {base}\n"
        )
        assert not (zoo_home() / "beer").exists()
        assert not (zoo_home() / ".checkpoints").exists()
