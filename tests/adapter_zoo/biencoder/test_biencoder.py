"""Bi-encoder zoo entries: every training mode on real parsed forums, selection on dev,
loading, search, resume, and the lines a plain sentence-transformers user runs.

The forums are the two archives shipped in the package (real StackExchange data); the model
is the tiny random sentence-BERT, so each run takes seconds.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.errors import ZooError
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.selection import dev_metrics, forum_dev_lists

BEER = "beer.stackexchange.com"
BICYCLES = "bicycles.meta.stackexchange.com"
# A high rate and a wide bottleneck, so that 4 steps move the tiny random model on dev
# whatever the order of its batches (at 1e-2 a batch order could leave it at its start);
# DEV_QUERIES of beer's 49 dev lists (the selection's cost is its lists, scored at every
# evaluation)
DEV_QUERIES = 16
FAST = {"batch_size": 8, "max_length": 16, "max_steps": 4, "eval_steps": 2, "seed": 0,
        "lr": 3e-2, "reduction_factor": 2, "dev_queries": DEV_QUERIES}  # fmt: skip


def bi_config(parsed, base, mode, name, forums=("beer",), **extra):
    return TrainingConfig(
        mode=mode, data=str(parsed), forums=forums, name=name, base_model=str(base),
        **{**FAST, **extra},
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained(parsed_shipped, tiny_sentence_bert_path, tmp_path_factory):
    """``trained(forums, **extra)``: the adapter ``bi_config`` makes (the tests' FAST run),
    trained once per process in a zoo of its own, for the tests that start from one; each
    gets its own copy (:func:`copy_entry`)."""
    home = tmp_path_factory.mktemp("shared-zoo")
    made: dict = {}

    def get(forums=("beer",), **extra):
        key = (forums, tuple(sorted(extra.items())))
        if key not in made:
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("ADAPTER_ZOO_HOME", str(home))
                config = bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter",
                                   f"shared-{len(made)}", forums, **extra)  # fmt: skip
                made[key] = train(config)
        return made[key]

    return get


def copy_entry(folder, name: str):
    """The entry at ``folder`` as ``name`` in this test's zoo (card.json is never among an
    entry's hashed files, so renaming its card keeps the entry whole)."""
    target = adapter_zoo.zoo_home() / name
    shutil.copytree(folder, target)
    card = json.loads((target / "card.json").read_text())
    (target / "card.json").write_text(json.dumps({**card, "name": name}))
    return target


def test_sentence_encoder_bases_default_to_bi_and_bert_to_cross(
    tiny_sentence_bert_path, tiny_bert_path
):
    bi = TrainingConfig(mode="adapter", data="x", forums=("beer",), name="b",
                        base_model=str(tiny_sentence_bert_path))  # fmt: skip
    cross = TrainingConfig(mode="adapter", data="x", forums=("beer",), name="c",
                           base_model=str(tiny_bert_path))  # fmt: skip
    assert (bi.encoder, bi.pair_kinds, bi.max_length) == (
        "bi", ("question_answer", "title_body"), 256,
    )  # fmt: skip
    assert (cross.encoder, cross.pair_kinds, cross.max_length) == ("cross", ("title_body",), 300)


def test_adapter_entry_is_selected_on_dev_and_reloads_bit_identically(
    parsed_shipped, tiny_sentence_bert_path
):
    path = train(bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter", "beer-bi"))
    card = json.loads((path / "card.json").read_text())
    assert (card["encoder"], card["mode"], card["layout"]) == ("bi", "adapter", "adapter")
    assert card["training"]["loss"] == "MultipleNegativesRankingLoss"
    # a tiny model's step fits half of any machine's memory: no GradCache, no recomputation
    memory = card["training"]["memory"]
    assert (memory["mode"], memory["loss"]) == ("plain", "MultipleNegativesRankingLoss")
    assert memory["estimate_gb"] <= memory["budget_gb"]
    assert card["pairs"][BEER]["train"]["question_answer"] > 400
    # the base is scored first (step 0) and the entry is never worse than it on dev
    steps = [(r["phase"], r["step"]) for r in card["training"]["log"]]
    # then the selected state at the longest length the base reads (512), kept if better
    assert steps == [("base", 0), ("train", 2), ("train", 4), ("length", 4)]
    assert card["scores"]["dev_map"] > card["base_scores"]["dev_map"]
    assert card["training"]["best_step"] == 4
    assert (path / "adapter_config.json").is_file() and (path / "adapter.safetensors").is_file()

    dev = forum_dev_lists(parsed_shipped, [BEER], queries=DEV_QUERIES)
    assert len(dev) == card["training"]["dev_lists"] and all(len(c) == 20 for _, c in dev)
    encoder = adapter_zoo.load("beer-bi")
    # trained on 16-token texts, the steps were compared at the base's own length (32)
    assert card["training"]["max_length"] == 16
    by_length = card["dev_map_by_length"]
    assert set(by_length) == {"32", "512"} and card["scores"]["dev_map"] == max(by_length.values())
    chosen = 512 if by_length["512"] > by_length["32"] else 32
    assert isinstance(encoder, adapter_zoo.BiEncoder) and encoder.max_length == chosen
    # the saved state is the selected one: its dev MAP is the card's, recomputed
    assert dev_metrics(encoder, dev)["dev_map"] == card["scores"]["dev_map"]
    pairs = [(q, c) for q, cands in dev[:3] for c in cands]
    assert np.array_equal(encoder.score(pairs), adapter_zoo.load("beer-bi").score(pairs))


def test_adapter_entry_loads_in_plain_sentence_transformers_and_adapters(
    trained, tiny_sentence_bert_path
):
    path = copy_entry(trained(), "beer-plain")
    import adapters
    from sentence_transformers import SentenceTransformer

    # the lines the model card shows
    model = SentenceTransformer(str(tiny_sentence_bert_path))
    adapters.init(model[0].auto_model)
    name = model[0].auto_model.load_adapter(str(path), use_safetensors=True)
    model[0].auto_model.set_active_adapters(name)
    model.max_seq_length = 32

    texts = ["Which glass for a stout?", "A tulip glass keeps the head.", "Fix a flat tyre"]
    plain = model.encode(texts, normalize_embeddings=True)
    ours = adapter_zoo.load("beer-plain").encode(texts)
    np.testing.assert_allclose(ours, plain, rtol=0, atol=1e-6)


@pytest.mark.parametrize("mode", ["full", "multitask", "tanda"])
def test_every_mode_trains_a_bi_encoder_on_real_forums(
    parsed_shipped, tiny_sentence_bert_path, mode
):
    extra = {}
    forums = ("beer",)
    if mode == "multitask":
        forums = ("beer", "bicycles.meta")
    if mode == "tanda":
        extra = {"transfer_data": str(parsed_shipped), "transfer_forums": ("bicycles.meta",)}
    config = bi_config(parsed_shipped, tiny_sentence_bert_path, mode, f"bi-{mode}", forums, **extra)
    path = train(config)
    card = json.loads((path / "card.json").read_text())
    assert (card["encoder"], card["mode"]) == ("bi", mode)
    assert card["scores"]["dev_map"] >= card["base_scores"]["dev_map"]
    hosts = [BEER, BICYCLES] if mode == "multitask" else [BEER]
    assert card["forums"] == hosts
    encoder = adapter_zoo.load(f"bi-{mode}")
    assert (
        dev_metrics(encoder, forum_dev_lists(parsed_shipped, hosts, queries=DEV_QUERIES))["dev_map"]
        == (card["scores"]["dev_map"])
    )
    if mode == "tanda":
        assert card["transfer"]["forums"] == ["bicycles.meta"]
        assert card["training"]["steps"] == 8  # 4 transfer + 4 adapt


def test_fusion_of_bi_encoder_adapters(parsed_shipped, tiny_sentence_bert_path, trained):
    base = tiny_sentence_bert_path
    copy_entry(trained(), "f-beer")
    copy_entry(trained(("bicycles.meta",)), "f-bikes")
    path = train(
        bi_config(parsed_shipped, base, "fusion", "f-both", adapters=("f-beer", "f-bikes"))
    )
    card = json.loads((path / "card.json").read_text())
    assert (card["layout"], card["adapter_entries"]) == ("fusion", ["f-beer", "f-bikes"])
    assert (path / "fusion" / "adapter_fusion_config.json").is_file()
    dev = forum_dev_lists(parsed_shipped, [BEER], queries=DEV_QUERIES)
    assert dev_metrics(adapter_zoo.load("f-both"), dev)["dev_map"] == card["scores"]["dev_map"]


def test_fusion_refuses_cross_encoder_adapters(parsed_shipped, tiny_sentence_bert_path, trained):
    base = tiny_sentence_bert_path
    copy_entry(trained(encoder="cross", eval_steps=None), "c-beer")
    copy_entry(trained(), "b-beer")
    with pytest.raises(ZooError, match=r"'c-beer' is a cross-encoder adapter; fuse bi-encoders"):
        train(bi_config(parsed_shipped, base, "fusion", "mixed", adapters=("c-beer", "b-beer")))


def test_fusion_refuses_an_adapter_made_for_another_depth(
    parsed_shipped, tiny_sentence_bert_path, tmp_path, trained
):
    import shutil

    deep = shutil.copytree(tiny_sentence_bert_path, tmp_path / "tiny-st-4-layers")
    config = json.loads((deep / "config.json").read_text())
    (deep / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 4}))
    for name, forums in [("shallow", ("beer",)), ("shallow-bikes", ("bicycles.meta",))]:
        entry = copy_entry(trained(forums), name)
        card = json.loads((entry / "card.json").read_text())
        (entry / "card.json").write_text(json.dumps({**card, "base_model": str(deep)}))
    entry = adapter_zoo.zoo_home() / "shallow"
    fusion = bi_config(
        parsed_shipped, deep, "fusion", "deep-fusion", adapters=("shallow", "shallow-bikes")
    )
    with pytest.raises(ZooError) as error:
        train(fusion)
    assert str(error.value) == (
        f"{entry}: zoo entry 'shallow' does not fit base model '{deep}' (made for model_type "
        "bert, hidden_size 32, num_hidden_layers 2, per its card; the base has model_type "
        "bert, hidden_size 32, num_hidden_layers 4)"
    )
    assert not (adapter_zoo.zoo_home() / "deep-fusion").exists()


def _crash_at_step_4(config, monkeypatch) -> None:
    """Train ``config`` until its dev evaluation at step 4 is interrupted (checkpoint-2 kept)."""
    from adapter_zoo.training.checkpoint import checkpoint_dir
    from adapter_zoo.training.selection import DevListsEvaluator

    evaluate = DevListsEvaluator.__call__

    def crash_at_4(self, model, output_path=None, epoch=-1, steps=-1):
        if steps == 4:
            raise KeyboardInterrupt("killed")
        return evaluate(self, model, output_path, epoch, steps)

    with monkeypatch.context() as patch:
        patch.setattr(DevListsEvaluator, "__call__", crash_at_4)
        with pytest.raises(KeyboardInterrupt):
            train(config)
    assert (checkpoint_dir(config.name) / "train" / "checkpoint-2").is_dir()


def test_resume_after_a_crash_continues_from_the_checkpoint(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    from adapter_zoo.training.checkpoint import checkpoint_dir

    config = bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter", "crash", max_steps=6)
    _crash_at_step_4(config, monkeypatch)
    resumed = json.loads((train(config) / "card.json").read_text())
    # the log holds the base and step 2 from before the crash, then steps 4 and 6, then the
    # selected state (step 4 here) at the longer length
    log = resumed["training"]["log"]
    assert [r["step"] for r in log[:-1]] == [0, 2, 4, 6] and log[-1]["phase"] == "length"
    assert not checkpoint_dir("crash").exists()

    uninterrupted = json.loads(
        (train(bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter", "whole", max_steps=6))
         / "card.json").read_text()
    )  # fmt: skip
    assert [r["dev_map"] for r in resumed["training"]["log"]] == [
        r["dev_map"] for r in uninterrupted["training"]["log"]
    ]


def test_a_resumed_run_still_keeps_its_start_when_no_step_beats_it(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    """The start is checkpoint-0, the best checkpoint through the crash and the resume."""
    config = bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter", "kept", max_steps=6,
                       lr=1e-12)  # fmt: skip
    _crash_at_step_4(config, monkeypatch)
    with pytest.warns(UserWarning, match=r"'kept' does not beat its base on dev"):
        card = json.loads((train(config) / "card.json").read_text())
    assert card["training"]["best_step"] == 0
    assert card["dev_map_by_length"]["32"] == card["base_scores"]["dev_map"]


def test_a_checkpoint_cut_short_while_written_is_removed_and_the_run_resumes_before_it(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    """The trainer writes trainer_state.json last: a checkpoint without a readable one was
    being written when the run died, so the rerun goes back to the checkpoint before it."""
    from adapter_zoo.training.checkpoint import checkpoint_dir

    config = bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter", "cut", max_steps=6)
    _crash_at_step_4(config, monkeypatch)
    state = checkpoint_dir("cut") / "train" / "checkpoint-2" / "trainer_state.json"
    state.write_bytes(state.read_bytes()[:40])
    log = json.loads((train(config) / "card.json").read_text())["training"]["log"]
    assert [r["step"] for r in log if r["phase"] != "length"] == [0, 2, 4, 6]
    assert not checkpoint_dir("cut").exists()


def test_a_damaged_or_planted_checkpoint_file_is_one_line_and_restart_starts_over(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch, planted_pickle
):
    import dataclasses

    import torch

    from adapter_zoo.training.checkpoint import checkpoint_dir

    config = bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter", "broken", max_steps=6)
    _crash_at_step_4(config, monkeypatch)
    checkpoint = checkpoint_dir("broken") / "train" / "checkpoint-2"
    # (a trainer_state.json that does not read is the end of the next test)
    for name in ("optimizer.pt", "trainable.safetensors"):
        damaged = checkpoint / name
        intact = damaged.read_bytes()
        damaged.write_bytes(intact[: len(intact) // 2])
        for _ in range(2):  # every rerun says the same, and names the way out
            with pytest.raises(ZooError) as error:
                train(config)
            message = str(error.value)
            assert message.startswith(f"{damaged}: corrupt or truncated checkpoint (")
            assert message.endswith("; run adapter-zoo train again with --restart to start over")
            assert "\n" not in message
        damaged.write_bytes(intact)

    planted, marker = planted_pickle
    rng_state = checkpoint / "rng_state.pth"
    torch.save({"python": planted}, rng_state)
    with pytest.raises(ZooError) as error:
        train(config)
    assert str(error.value).startswith(
        f"{rng_state}: not a checkpoint written by adapter-zoo, refused (Weights only load failed"
    )
    assert not marker.exists()

    restarted = train(dataclasses.replace(config, restart=True))
    steps = json.loads((restarted / "card.json").read_text())["training"]["log"]
    assert [r["step"] for r in steps if r["phase"] != "length"] == [0, 2, 4, 6]
    assert not marker.exists()
    assert not checkpoint_dir("broken").exists()


def test_train_warns_and_keeps_the_base_when_training_does_not_beat_it(
    parsed_shipped, tiny_sentence_bert_path
):
    config = bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter", "still", lr=1e-12)
    with pytest.warns(UserWarning, match=r"'still' does not beat its base on dev \(MAP 0\.2438"):
        path = train(config)
    card = json.loads((path / "card.json").read_text())
    assert card["training"]["best_step"] == 0
    # the base's state, at the base's length; the entry may still rank at the longer one
    assert card["dev_map_by_length"]["32"] == card["base_scores"]["dev_map"]


def test_bi_encoder_refuses_cross_encoder_losses(parsed_shipped, tiny_sentence_bert_path):
    with pytest.raises(ZooError) as error:
        bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter", "x", loss="listwise")
    assert str(error.value) == (
        "unknown bi-encoder loss 'listwise' (a cross-encoder loss); choose one of "
        "CachedGISTEmbedLoss, CachedMultipleNegativesRankingLoss, "
        "CachedMultipleNegativesSymmetricRankingLoss, FusedMarginMSELoss, GISTEmbedLoss, "
        "MegaBatchMarginLoss, MultipleNegativesRankingLoss, "
        "MultipleNegativesSymmetricRankingLoss"
    )


def test_search_matches_brute_force_ranking(tiny_sentence_bert_path):
    encoder = adapter_zoo.BiEncoder.from_base(str(tiny_sentence_bert_path), max_length=32)
    corpus = ["how to brew a stout", "fix a flat tyre", "porter history", "wine in a cellar"]
    embeddings = encoder.encode(corpus)
    hits = encoder.search(["dark beer brewing", "bicycle puncture"], embeddings, top_k=2)
    for query, row in zip(["dark beer brewing", "bicycle puncture"], hits):
        ranked = encoder.rank(query, corpus, top_k=2)
        assert [corpus[i] for i, _ in row] == [c for c, _ in ranked]
        np.testing.assert_allclose([s for _, s in row], [s for _, s in ranked], atol=1e-5)


def test_zero_shot_bi_encoder_loads_by_sbert_name(tiny_sentence_bert_path):
    encoder = adapter_zoo.load(f"sbert:{tiny_sentence_bert_path}")
    assert isinstance(encoder, adapter_zoo.BiEncoder) and encoder.card is None
    scores = encoder.score([("a", "a"), ("a", "b")])
    assert scores.dtype == np.float32 and scores[0] == pytest.approx(1.0, abs=1e-5)


def test_score_embeds_each_text_once_and_slices_give_the_pairs_cosines(
    tiny_sentence_bert_path, monkeypatch
):
    from adapter_zoo.biencoder import encoder as module

    encoder = adapter_zoo.BiEncoder.from_base(str(tiny_sentence_bert_path), max_length=32)
    pairs = [("stout", "porter"), ("stout", "lager"), ("tyre", "porter"), ("tyre", "stout"),
             ("stout", "porter")]  # fmt: skip
    embedded = []
    real = encoder.encode
    monkeypatch.setattr(encoder, "encode", lambda texts, **kw: (embedded.append(list(texts)),
                                                                real(texts, **kw))[1])  # fmt: skip
    monkeypatch.setattr(module, "_SCORE_CHUNK", 2)  # three slices of 2, 2 and 1 pairs
    scores = encoder.score(pairs)
    assert embedded == [["stout", "porter", "lager", "tyre"]]
    vectors = dict(zip(embedded[0], real(embedded[0])))
    expected = [float(vectors[q] @ vectors[c]) for q, c in pairs]
    np.testing.assert_allclose(scores, expected, rtol=1e-6)
    assert scores.dtype == np.float32 and scores[0] == scores[4]


def test_cli_train_bi_then_evaluate_local_benchmark(
    parsed_shipped, tiny_sentence_bert_path, tmp_path
):
    from adapter_zoo.cli import main
    from benchmarks import build_from_forum

    argv = ["train", "--encoder", "bi", "--mode", "adapter", "--data", str(parsed_shipped),
            "--forums", "beer", "--name", "cli-bi", "--base", str(tiny_sentence_bert_path),
            "--max-steps", "2", "--batch-size", "8", "--max-length", "32"]  # fmt: skip
    assert main(argv) == 0
    bench = build_from_forum(parsed_shipped / BEER, tmp_path / "las", candidates=10)
    results = tmp_path / "results"
    assert main(["evaluate", "--model", "cli-bi", "--benchmark", f"local:{bench}",
                 "--results", str(results)]) == 0  # fmt: skip
    record = json.loads((results / "results.jsonl").read_text().splitlines()[0])
    assert record["model"] == "cli-bi" and record["queries"] == 59
    assert 0 < record["metrics"]["map"] <= 1


def test_sweep_scores_bi_encoders_and_the_zero_shot_base_like_evaluate(
    parsed_shipped, tiny_sentence_bert_path, tmp_path, trained
):
    import benchmarks
    from benchmarks import build_from_forum
    from benchmarks.sweep import sweep_benchmark

    copy_entry(trained(), "sweep-bi")
    bench = f"local:{build_from_forum(parsed_shipped / BEER, tmp_path / 'las', candidates=10)}"
    models = ["sweep-bi", f"sbert:{tiny_sentence_bert_path}"]
    records = sweep_benchmark(bench, models)
    assert [r["model"] for r in records] == models
    for record, model in zip(records, models):
        # the sweep's batches and evaluate's: equal to a tolerance, not to the bit
        assert record["metrics"] == pytest.approx(
            benchmarks.evaluate(model, bench)["metrics"], abs=1e-6
        )


def test_drop_lower_bi_adapter_leaves_out_the_lowest_layers_and_reloads_bit_identically(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    from adapter_zoo.training import bi as bi_train

    captured = {}
    write = bi_train.write_bi_adapter

    def capture(model, adapter_name, folder):
        captured["model"] = model
        write(model, adapter_name, folder)

    monkeypatch.setattr(bi_train, "write_bi_adapter", capture)
    # one of the two layers trains: 8 steps for it to beat the start on dev (4 did or did
    # not, with the order of the batches)
    path = train(bi_config(parsed_shipped, tiny_sentence_bert_path, "adapter", "bi-drop",
                           drop_lower=1, max_steps=8))  # fmt: skip
    card = json.loads((path / "card.json").read_text())
    assert card["training"]["drop_lower"] == 1 and card["training"]["best_step"] > 0
    config = json.loads((path / "adapter_config.json").read_text())
    assert config["config"]["leave_out"] == [0]
    encoder = adapter_zoo.load("bi-drop")
    layers = encoder.model[0].auto_model.encoder.layer
    assert [len(layer.output.adapters) for layer in layers] == [0, 1]
    texts = ["Which glass for a stout?", "A tulip glass keeps the head.", "Fix a flat tyre"]
    trained = adapter_zoo.BiEncoder(captured["model"], base_model=str(tiny_sentence_bert_path),
                                    max_length=encoder.max_length)  # fmt: skip
    np.testing.assert_array_equal(encoder.encode(texts), trained.encode(texts))


def test_drop_lower_bi_full_freezes_and_bi_fusion_follows_its_adapters(
    parsed_shipped, tiny_sentence_bert_path
):
    import torch
    from sentence_transformers import SentenceTransformer

    base = tiny_sentence_bert_path
    path = train(bi_config(parsed_shipped, base, "full", "bi-full-drop", drop_lower=1))
    assert json.loads((path / "card.json").read_text())["training"]["drop_lower"] == 1
    before = SentenceTransformer(str(base), device="cpu")[0].auto_model.state_dict()
    after = adapter_zoo.load("bi-full-drop").model[0].auto_model.state_dict()
    frozen = [k for k in before if k.startswith(("embeddings.", "encoder.layer.0."))]
    trained = [k for k in before if k.startswith("encoder.layer.1.")]
    assert frozen and all(torch.equal(before[k], after[k]) for k in frozen)
    assert not all(torch.equal(before[k], after[k]) for k in trained)

    short = {"drop_lower": 1, "max_steps": 2}
    train(bi_config(parsed_shipped, base, "adapter", "d-beer", **short))
    train(bi_config(parsed_shipped, base, "adapter", "d-bikes", ("bicycles.meta",), **short))
    path = train(bi_config(parsed_shipped, base, "fusion", "d-both", adapters=("d-beer", "d-bikes"),
                           max_steps=2))  # fmt: skip
    assert json.loads((path / "card.json").read_text())["training"]["drop_lower"] == 1
    dev = forum_dev_lists(parsed_shipped, [BEER], queries=DEV_QUERIES)
    card = json.loads((path / "card.json").read_text())
    assert dev_metrics(adapter_zoo.load("d-both"), dev)["dev_map"] == card["scores"]["dev_map"]
    with pytest.raises(ZooError, match=r"--drop-lower 2: base model '.*' has 2 layers"):
        train(bi_config(parsed_shipped, base, "adapter", "too-deep", drop_lower=2))


def test_init_from_continues_a_forum_adapter_on_another_forum(
    parsed_shipped, tiny_sentence_bert_path
):
    from adapter_zoo.biencoder import BiEncoder
    from adapter_zoo.biencoder.encoder import build_sentence_model
    from adapter_zoo.training.models import adapter_leave_out

    base = tiny_sentence_bert_path
    train(bi_config(parsed_shipped, base, "adapter", "i-beer", drop_lower=1))
    path = train(bi_config(parsed_shipped, base, "adapter", "i-bikes", ("bicycles.meta",),
                           init_from="i-beer"))  # fmt: skip
    card = json.loads((path / "card.json").read_text())
    dev = forum_dev_lists(parsed_shipped, [BICYCLES], queries=DEV_QUERIES)
    # step 0 is the beer adapter itself, scored on the bicycles dev lists
    start = card["training"]["log"][0]
    assert (start["phase"], start["step"]) == ("start", 0)
    beer = adapter_zoo.load("i-beer")
    beer.max_length = 32  # the steps are compared at the base's length
    beer_on_bikes = dev_metrics(beer, dev)["dev_map"]
    assert start["dev_map"] == card["init_from"]["scores"]["dev_map"] == beer_on_bikes
    assert card["init_from"]["entry"] == "i-beer"
    # the base is still the zero-shot model with no adapter, which the card compares with
    zero_shot = BiEncoder(build_sentence_model(str(base), with_adapters=False), base_model=str(base),
                          max_length=32)  # fmt: skip
    assert card["base_scores"]["dev_map"] == dev_metrics(zero_shot, dev)["dev_map"]
    # the continued adapter keeps the start's layers (AdapterDrop) and scores like its card
    assert adapter_leave_out(path) == [0] and card["training"]["drop_lower"] == 1
    assert dev_metrics(adapter_zoo.load("i-bikes"), dev)["dev_map"] == card["scores"]["dev_map"]


def test_init_from_at_rate_zero_is_the_start_entry_bit_for_bit(
    parsed_shipped, tiny_sentence_bert_path, trained
):
    base = tiny_sentence_bert_path
    start = copy_entry(trained(), "z-beer")
    # trained past its identity start, so equal scores mean the state was carried over
    assert json.loads((start / "card.json").read_text())["training"]["best_step"] == 4
    train(bi_config(parsed_shipped, base, "adapter", "z-again", init_from="z-beer", lr=0.0))
    pairs = [
        (q, c)
        for q, cands in forum_dev_lists(parsed_shipped, [BEER], queries=DEV_QUERIES)[:3]
        for c in cands
    ]
    again = adapter_zoo.load("z-again").score(pairs)
    assert np.array_equal(again, adapter_zoo.load("z-beer").score(pairs))


def test_init_from_refuses_what_it_cannot_continue(
    parsed_shipped, tiny_sentence_bert_path, trained
):
    base = tiny_sentence_bert_path
    copy_entry(trained(encoder="cross", eval_steps=None), "r-cross")
    train(bi_config(parsed_shipped, base, "full", "r-full"))
    copy_entry(trained(), "r-beer")
    with pytest.raises(ZooError, match=r"--init-from 'r-cross' is a cross-encoder adapter; "
                                       r"this run trains a bi-encoder"):  # fmt: skip
        train(bi_config(parsed_shipped, base, "adapter", "r1", init_from="r-cross"))
    with pytest.raises(ZooError, match=r"--init-from 'r-full' is a full entry, not an adapter"):
        train(bi_config(parsed_shipped, base, "adapter", "r2", init_from="r-full"))
    with pytest.raises(ZooError, match=r"--drop-lower 1 disagrees with --init-from 'r-beer', "
                                       r"which leaves out layers \[\]"):  # fmt: skip
        train(bi_config(parsed_shipped, base, "adapter", "r3", init_from="r-beer", drop_lower=1))
    with pytest.raises(ZooError, match=r"--init-from continues an adapter entry .*not mode 'full'"):
        bi_config(parsed_shipped, base, "full", "r4", init_from="r-beer")
