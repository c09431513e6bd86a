"""Training: every mode on parsed fixture data, round-robin order, exact resume, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.cli import main
from adapter_zoo.ranker.ranker import encode_pairs
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.data import (
    PairTable,
    embedding_neighbours,
    epoch_batches,
    example_columns,
    round_robin,
    sample_negatives,
)
from adapter_zoo.training.selection import DevListsEvaluator
from adapter_zoo.zoo import zoo_home

FAST = {"epochs": 1, "batch_size": 8, "max_length": 32}


def config(parsed, base, mode, name, forums=("beer",), **extra):
    return TrainingConfig(
        mode=mode,
        data=str(parsed),
        forums=forums,
        name=name,
        base_model=str(base),
        **{**FAST, **extra},
    )


def cli_train_argv(parsed, base) -> list[str]:
    """``adapter-zoo train`` of the beer adapter on the fixture, with FAST's settings."""
    return ["train", "--mode", "adapter", "--data", str(parsed), "--forums", "beer",
            "--name", "beer", "--base", str(base), "--epochs", "1", "--batch-size", "8",
            "--max-length", "32"]  # fmt: skip


def expected_counts(kit, host="beer.stackexchange.com", kind="title_body"):
    rows = kit.fixture_rows(host, 48)[kind]
    return {
        s: sum(kit.split_of(r["query_id"]) == s for r in rows) for s in ("train", "dev", "test")
    }


def loss_on(cfg, model, tokenizer, examples):
    """The registered loss ``cfg.loss`` of ``model`` (inside a CrossEncoder) on ``examples``."""
    import torch

    from adapter_zoo.losses import build_loss
    from adapter_zoo.ranker.cross_encoder import as_cross_encoder

    cross = as_cross_encoder(model, tokenizer, cfg.max_length)
    loss = build_loss(cfg.loss, "cross", cross, margin=cfg.margin)
    columns = example_columns(examples, cfg.loss, cfg.negatives)
    labels = torch.tensor(columns.pop("label")) if "label" in columns else None
    return loss(list(columns.values()), labels)


def crash_at_step(monkeypatch, step: int) -> None:
    """Kill training (a power cut) when dev evaluation is reached at ``step``: the checkpoints
    before it are on disk, the one of ``step`` is not."""
    evaluate = DevListsEvaluator.__call__

    def crash(self, model, output_path=None, epoch=-1, steps=-1):
        if steps == step:
            raise KeyboardInterrupt(f"power cut at step {step}")
        return evaluate(self, model, output_path, epoch, steps)

    monkeypatch.setattr(DevListsEvaluator, "__call__", crash)


def test_round_robin_order():
    assert round_robin([["a1", "a2", "a3"], ["b1"], ["c1", "c2"]]) == [
        "a1",
        "b1",
        "c1",
        "a2",
        "c2",
        "a3",
    ]
    tables = {
        "a": [
            PairTable("a", "title_body", [f"a{i}" for i in range(10)], [f"A{i}" for i in range(10)])
        ],
        "b": [
            PairTable("b", "title_body", [f"b{i}" for i in range(4)], [f"B{i}" for i in range(4)])
        ],
        "c": [
            PairTable("c", "title_body", [f"c{i}" for i in range(6)], [f"C{i}" for i in range(6)])
        ],
    }
    batches = epoch_batches(tables, batch_size=4, k=1, loss="bce", seed=0, epoch=0)
    # 20, 8 and 12 examples (positive + 1 negative each) -> 5, 2 and 3 batches of one forum each
    assert [{q[0] for q, _, _ in batch} for batch in batches] == [
        {"a"},
        {"b"},
        {"c"},
        {"a"},
        {"b"},
        {"c"},
        {"a"},
        {"c"},
        {"a"},
        {"a"},
    ]
    assert sum(len(b) for b in batches) == 40
    again = epoch_batches(tables, batch_size=4, k=1, loss="bce", seed=0, epoch=0)
    next_epoch = epoch_batches(tables, batch_size=4, k=1, loss="bce", seed=0, epoch=1)
    assert again == batches and next_epoch != batches


def test_negatives_never_the_positive_and_resampled_each_epoch():
    table = PairTable("a", "title_body", [str(i) for i in range(5)], [str(i) for i in range(5)])
    first = sample_negatives(table, 3, np.random.default_rng([0, 0]))
    assert first.shape == (5, 3)
    assert all(i not in row for i, row in enumerate(first)) and first.max() < 5
    assert not np.array_equal(first, sample_negatives(table, 3, np.random.default_rng([0, 1])))


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


def test_losses_are_bce_and_hinge_on_the_head_logit(parsed_fixture, tiny_bert_path):
    import torch
    import torch.nn.functional as F

    from adapter_zoo.training.models import setup_model

    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer")
    torch.manual_seed(0)
    model, tokenizer, _ = setup_model(cfg)
    model.eval()  # no dropout: the same logits twice
    queries, positives, negatives = ["stout?", "hops?"], ["dark beer", "flowers"], ["a", "b c"]
    batch = tokenizer(queries * 2, positives + negatives, padding=True, return_tensors="pt")
    logits = model(**batch).logits[:, 0]
    labels = torch.tensor([1.0, 1.0, 0.0, 0.0])
    pointwise = list(zip(queries * 2, positives + negatives, labels.tolist()))
    expected_bce = F.binary_cross_entropy_with_logits(logits, labels)
    assert torch.allclose(loss_on(cfg, model, tokenizer, pointwise), expected_bce)
    pairwise_cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", loss="pairwise")
    hinge = torch.relu(1.0 - logits[:2] + logits[2:]).mean()
    got = loss_on(pairwise_cfg, model, tokenizer, list(zip(queries, positives, negatives)))
    assert torch.allclose(got, hinge + expected_bce)


def test_bm25_neighbours_are_the_most_similar_other_queries():
    from adapter_zoo.training.data import bm25_neighbours

    queries = [
        "stout porter roasted malt",
        "porter stout history",
        "hop varieties for ipa",
        "ipa hop bitterness",
        "cellar temperature",
    ]
    neighbours = bm25_neighbours(queries, pool=2)
    assert neighbours.shape == (5, 2)
    assert all(i not in row for i, row in enumerate(neighbours))
    assert [row[0] for row in neighbours[:4]] == [1, 0, 3, 2]
    assert bm25_neighbours(queries, pool=20).shape == (5, 4)  # at most the other queries


def test_hard_negatives_come_from_the_neighbours():
    from adapter_zoo.training.data import with_neighbours

    topics = ["stout", "hops", "cellar", "yeast"]
    queries = [f"{topics[i % 4]} brewing question {i}" for i in range(12)]
    (table,) = with_neighbours([PairTable("a", "title_body", queries, [str(i) for i in range(12)])])
    negatives = sample_negatives(table, 3, np.random.default_rng([0, 0]))
    for i, row in enumerate(negatives):
        assert len(set(row)) == 3 and set(row) <= set(table.neighbours[i]) and i not in row
    # the most similar query shares the topic word: the pool is ordered by BM25
    assert all(j % 4 == i % 4 for i, j in enumerate(table.neighbours[:, 0]))


def _embed_by_topic(texts):
    """Toy embeddings: a text's topic word as a one-hot row (what a base would rank near)."""
    topics = ["stout", "hops", "cellar", "yeast"]
    rows = np.array([[float(t in text) for t in topics] + [0.1] for text in texts], np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_mined_negatives_are_the_nearest_positives_but_never_a_near_copy_of_the_answer():
    from adapter_zoo.training.data import FALSE_NEGATIVE_MARGIN

    queries = ["stout q0", "stout q1", "hops q2", "hops q3", "cellar q4", "yeast q5"]
    positives = ["stout a0", "stout a1", "hops a2", "stout a0", "cellar a4", "yeast a5"]
    neighbours = embedding_neighbours(queries, positives, _embed_by_topic, pool=2)
    assert neighbours.shape == (6, 2)
    # q0: positive 1 is as close as its own answer (another stout answer: a false negative)
    # and positive 3 is its own answer's text; the rest rank level, in their order
    assert list(neighbours[0]) == [2, 4]
    # q3's own answer is about stout: hops a2 ranks above the bar of 95% of that similarity
    # and is left out as a likely answer too
    vectors = _embed_by_topic(queries + positives)
    own = vectors[3] @ vectors[6 + 3]
    assert vectors[3] @ vectors[6 + 2] >= FALSE_NEGATIVE_MARGIN * own and 2 not in neighbours[3]
    assert all(i not in row for i, row in enumerate(neighbours))
    # a table of one pair has nothing to mine
    assert embedding_neighbours(["q"], ["a"], _embed_by_topic).shape == (1, 0)


def test_the_base_miner_is_the_frozen_base_and_fills_the_tables(
    tiny_sentence_bert_path, monkeypatch
):
    from adapter_zoo.biencoder.encoder import BiEncoder
    from adapter_zoo.training.bi import negative_miner
    from adapter_zoo.training.data import with_neighbours

    def config(**options):
        return TrainingConfig(mode="adapter", data="x", forums=("beer",), name="m",
                              encoder="bi", base_model=str(tiny_sentence_bert_path),
                              **options)  # fmt: skip

    assert negative_miner(config(hard_negatives=True)) is None  # BM25's
    embed = negative_miner(config(hard_negatives=True, negative_miner="base"))
    texts = ["a stout", "a lager", "hop bitterness", "cellar temperature"]
    vectors = embed(texts)
    assert vectors.shape[0] == 4 and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    table = PairTable("a", "title_body", texts, texts[::-1])
    (table,) = with_neighbours([table], embed)
    assert (table.neighbours == embedding_neighbours(texts, texts[::-1], embed)).all()
    # a text comes back (another pair kind of the same forum): its row, not a second pass
    calls = []
    encode = BiEncoder.encode
    monkeypatch.setattr(
        BiEncoder, "encode", lambda self, t, **kw: calls.append(t) or encode(self, t, **kw)
    )
    again = embed(["a stout", "new text"])
    assert calls == [["new text"]] and np.array_equal(again[0], vectors[0])
    with pytest.raises(ZooError, match="unknown negative miner 'dense'; choose one of bm25, base"):
        config(hard_negatives=True, negative_miner="dense")
    with pytest.raises(
        ZooError,
        match="negative miner 'base' mines a bi-encoder's hard negatives: it needs encoder "
        "'bi' and hard_negatives",
    ):
        config(negative_miner="base")


def test_a_run_trains_on_the_negatives_the_base_mined(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    from adapter_zoo.training import bi

    built, pair_dataset = [], bi.pair_dataset
    monkeypatch.setattr(bi, "pair_dataset", lambda tables, **kw: built.append(tables)
                        or pair_dataset(tables, **kw))  # fmt: skip
    run = TrainingConfig(mode="adapter", data=str(parsed_shipped), forums=("beer",),
                         name="beer-mined", encoder="bi", base_model=str(tiny_sentence_bert_path),
                         hard_negatives=True, negative_miner="base", max_steps=2, eval_steps=2,
                         **FAST)  # fmt: skip
    card = json.loads((train(run) / "card.json").read_text())
    assert card["training"]["negative_miner"] == "base" and card["training"]["steps"] == 2
    embed = bi.negative_miner(run)
    for table in built[0]:
        assert (
            table.neighbours == embedding_neighbours(table.queries, table.positives, embed)
        ).all()


def test_listwise_batches_count_pairs_and_the_loss_is_softmax_cross_entropy(
    parsed_fixture, tiny_bert_path
):
    import torch
    import torch.nn.functional as F

    from adapter_zoo.training.models import setup_model

    tables = {
        "a": [
            PairTable("a", "title_body", [f"q{i}" for i in range(10)], [str(i) for i in range(10)])
        ]
    }
    batches = epoch_batches(tables, batch_size=8, k=3, loss="listwise", seed=0, epoch=0)
    assert [len(b) for b in batches] == [2, 2, 2, 2, 2]  # 8 pairs = 2 lists of 1 + 3
    assert all(len(negatives) == 3 and positive not in negatives for _, positive, negatives in
               batches[0])  # fmt: skip

    cfg = config(parsed_fixture, tiny_bert_path, "adapter", "beer", loss="listwise", negatives=2)
    torch.manual_seed(0)
    model, tokenizer, _ = setup_model(cfg)
    model.eval()
    batch = [("stout?", "dark beer", ("a", "b c")), ("hops?", "flowers", ("d", "e"))]
    pairs = [(q, c) for q, p, negs in batch for c in (p, *negs)]
    encoded = encode_pairs(tokenizer, *zip(*pairs), 32)
    logits = model(**encoded).logits[:, 0].view(2, 3)
    expected = F.cross_entropy(logits, torch.zeros(2, dtype=torch.long))
    assert torch.allclose(loss_on(cfg, model, tokenizer, batch), expected)


def test_question_answer_pairs_pose_title_and_body(parsed_beer):
    import datasets

    from adapter_zoo.training.data import load_pairs

    host = "beer.stackexchange.com"
    (qa,) = load_pairs(parsed_beer, host, ("question_answer",), "train")
    (ta,) = load_pairs(parsed_beer, host, ("title_answer",), "train")
    assert len(qa) == len(ta) > 400 and qa.positives == ta.positives
    questions = datasets.load_from_disk(str(parsed_beer / host / "questions")).to_list()
    by_title = {q["title"]: q for q in questions}
    for title, query in list(zip(ta.queries, qa.queries))[:50]:
        question = by_title[title]
        assert query == f"{question['title']} {question['body']}".strip()


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


# AdapterDrop (train --drop-lower K): no adapter in the lowest K layers.
DROP_PAIRS = [("why is my stout flat", "dead yeast"), ("what are hops", "flowers"), ("a", "b c")]


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


@pytest.mark.parametrize("mode", ["adapter", "full"])
def test_bounded_activation_memory_keeps_loss_and_gradients(parsed_fixture, tiny_bert_path, mode):
    """Training recomputes activations in backward (``bound_activation_memory``): dropout
    replays the same masks, so a step's loss and every gradient are those of the plain step."""
    import torch

    from adapter_zoo.training.models import bound_activation_memory, setup_model

    batch = [("stout?", "dark beer", 1.0), ("hops?", "a bitter flower", 0.0)] * 4
    cfg = config(parsed_fixture, tiny_bert_path, mode, "beer")
    steps = []
    for bounded in (False, True):
        torch.manual_seed(0)
        model, tokenizer, _ = setup_model(cfg)
        assert model.base_model.config.attention_probs_dropout_prob > 0  # masks to replay
        if bounded:
            bound_activation_memory(model)
        model.train()
        torch.manual_seed(1)
        loss = loss_on(cfg, model, tokenizer, batch)
        loss.backward()
        grads = {n: p.grad for n, p in model.named_parameters() if p.requires_grad}
        steps.append((loss.item(), grads, model.base_model.is_gradient_checkpointing))
    (plain, plain_grads, off), (bounded, bounded_grads, on) = steps
    assert not off and on
    assert bounded == pytest.approx(plain, abs=1e-6)
    assert plain_grads.keys() == bounded_grads.keys() and plain_grads
    assert any(g is not None for g in plain_grads.values())
    for name, grad in plain_grads.items():
        other = bounded_grads[name]
        # weights off the path to the loss (BERT's unused pooler) get no gradient in either
        assert (grad is None) == (other is None), name
        assert grad is None or torch.allclose(grad, other, atol=1e-6), name


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
