"""Cascade ranker logic on the tiny random BERT (2 layers, exits 1 and 2)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch

from adapter_zoo.cascade import (
    CascadeConfig,
    CascadeRanker,
    keep_schedule,
    layer_flops,
    run_cascade,
    sample_exits,
    train_cascade,
)
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.probe import NOISE, pair_probe_cosine


@pytest.fixture(scope="module")
def tiny_cascade(tiny_bert_path):
    return CascadeRanker.from_base(str(tiny_bert_path), CascadeConfig(exits=(1, 2)), device="cpu")


def _perturb_adapter(ranker):
    # A fresh adapter may start near the identity; make it matter for the comparisons.
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, param in ranker.encoder.named_parameters():
            if "adapters" in name:
                param.add_(torch.randn(param.shape, generator=generator) * 0.5)


def test_keep_schedule_counts():
    assert keep_schedule(10, 0.3, 3) == [10, 7, 5]
    assert keep_schedule(100, 0.5, 5) == [100, 50, 25, 12, 6]  # 12.5 and 6 dropped: halves up
    assert keep_schedule(100, 0.4, 3) == [100, 60, 36]
    assert keep_schedule(3, 0.9, 4) == [3, 1, 1, 1]
    assert keep_schedule(7, 0.4, 3) == [7, 4, 2]  # 2.8 then 1.6 dropped, to nearest
    assert keep_schedule(2, 0.3, 2) == [2, 1]  # 0.6 rounds to one dropped
    assert keep_schedule(90, 0.35, 2) == [90, 58]  # 32 dropped: 90 * 0.35 = 31.499999999999996
    assert keep_schedule(7, 0.0, 2) == [7, 7]
    assert keep_schedule(0, 0.3, 2) == [0, 0]


def test_config_defaults_and_errors():
    assert CascadeConfig().resolved(6).exits == (2, 4, 6)
    assert CascadeConfig().resolved(12).exits == (4, 6, 8, 10, 12)
    with pytest.raises(
        ZooError, match=r"^cascade config: alpha must be a finite number in \[0, 1\), not 1.0$"
    ):
        CascadeConfig(alpha=1.0)
    with pytest.raises(ZooError, match="increasing"):
        CascadeConfig(exits=(2, 1))
    with pytest.raises(ZooError, match="beyond the encoder's 2 layers"):
        CascadeConfig(exits=(2, 4)).resolved(2)


@pytest.mark.parametrize("adapter", [None, "seq_bn"])
def test_layer_by_layer_equals_model_forward(tiny_bert_path, adapter):
    ranker = CascadeRanker.from_base(
        str(tiny_bert_path), CascadeConfig(exits=(1, 2), adapter=adapter), device="cpu"
    )
    batch = ranker.tokenize(["what is a stout", "hops?"], ["a dark beer with roast", "bitter"])
    assert batch["attention_mask"].min() == 0  # padding is exercised
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    with torch.inference_mode():
        hidden = ranker.embed(batch["input_ids"], batch["token_type_ids"])
        manual = ranker.run_layers(hidden, batch["attention_mask"], 0, 2)
        reference = ranker.encoder(**inputs).last_hidden_state
        if adapter:
            _perturb_adapter(ranker)
            manual_adapted = ranker.run_layers(hidden, batch["attention_mask"], 0, 2)
            reference_adapted = ranker.encoder(**inputs).last_hidden_state
    real = batch["attention_mask"].bool()
    torch.testing.assert_close(manual[real], reference[real], atol=1e-5, rtol=0)
    if adapter:  # the adapter is really applied in the manual loop
        torch.testing.assert_close(manual_adapted[real], reference_adapted[real], atol=1e-5, rtol=0)
        assert (manual_adapted - manual).abs().max() > 1e-2


@pytest.mark.parametrize("head", ["cls", "pair_cosine"])
def test_alpha_zero_equals_monolithic(tiny_cascade, tiny_sentence_bert_path, queries, head):
    if head == "pair_cosine":
        tiny_cascade = CascadeRanker.from_base(
            str(tiny_sentence_bert_path), CascadeConfig(exits=(1, 2)), device="cpu"
        )
    assert tiny_cascade.config.head == head  # picked by the base: MiniLM-like gets pair_cosine
    pairs = [(q, c) for q, cands in queries for c in cands]
    monolithic = tiny_cascade.score(pairs)
    output = run_cascade(tiny_cascade, queries, alpha=0.0, batch_size=3)
    final_logits = np.concatenate([logits[-1] for logits in output.exit_logits])
    np.testing.assert_allclose(final_logits, monolithic, atol=1e-5, rtol=0)
    for scores, logits in zip(output.scores, output.exit_logits):
        assert not np.isnan(logits).any()  # every candidate reached every exit
        mono_order = np.argsort(-logits[-1], kind="stable")
        assert list(np.argsort(-scores, kind="stable")) == list(mono_order)


def test_drops_follow_schedule_and_survivors_rank_first(tiny_cascade, queries):
    output = run_cascade(tiny_cascade, queries, alpha=0.5, batch_size=2)
    for (_, cands), logits, scores, depth in zip(
        queries, output.exit_logits, output.scores, output.depth
    ):
        reached = (~np.isnan(logits)).sum(axis=1).tolist()
        assert reached == keep_schedule(len(cands), 0.5, 2)
        # the survivors are the best of exit 1
        survivors = np.flatnonzero(~np.isnan(logits[1]))
        threshold = np.sort(logits[0])[::-1][len(survivors) - 1]
        assert (logits[0][survivors] >= threshold).all()
        assert (depth[survivors] == 1).all()
        dropped = np.setdiff1d(np.arange(len(cands)), survivors)
        if len(dropped):
            assert scores[survivors].min() > scores[dropped].max()
    # flops: dropped pairs skip layer 2, so the cascade is cheaper than alpha=0
    full = run_cascade(tiny_cascade, queries, alpha=0.0)
    assert output.flops < full.flops
    assert output.pairs == full.pairs == sum(len(c) for _, c in queries)


@pytest.mark.parametrize("base", ["tiny_bert_path", "tiny_sentence_bert_path"])
@pytest.mark.parametrize("adapter", [None, "seq_bn"])
def test_reused_partial_encodings_equal_a_full_pass_on_survivors(base, request, queries, adapter):
    ranker = CascadeRanker.from_base(
        str(request.getfixturevalue(base)),
        CascadeConfig(exits=(1, 2), adapter=adapter),
        device="cpu",
    )
    if adapter:
        _perturb_adapter(ranker)
    output = run_cascade(ranker, queries, alpha=0.5, batch_size=2)
    survivors = [np.flatnonzero(~np.isnan(logits[-1])) for logits in output.exit_logits]
    pairs = [(q, cands[i]) for (q, cands), alive in zip(queries, survivors) for i in alive]
    assert len(pairs) == sum(keep_schedule(len(c), 0.5, 2)[-1] for _, c in queries)
    fresh = ranker.score(pairs, batch_size=3)  # layers 1-2 from scratch, other batching
    reused = np.concatenate(
        [logits[-1][alive] for logits, alive in zip(output.exit_logits, survivors)]
    )
    np.testing.assert_allclose(reused, fresh, atol=1e-5, rtol=0)
    assert np.abs(fresh).max() > 1e-3  # not trivially zero


def test_flops_count_matches_formula(tiny_cascade):
    output = run_cascade(tiny_cascade, [("q", ["a"])], alpha=0.0)
    length = len(tiny_cascade.tokenize(["q"], ["a"], padding=False)["input_ids"][0])
    per_layer = layer_flops(length, 32, 37)
    heads = 2 * 2 * (32 * 256 + 256)
    assert output.flops == 2 * per_layer + heads


def test_exit_sampling_is_uniform_and_seeded():
    counts = np.zeros(3)
    for seed in range(20):
        draws = sample_exits(300, 3, seed)
        counts += np.bincount(draws, minlength=3)
    # 6000 draws: each exit within 5 standard deviations of 2000
    assert np.all(np.abs(counts - 2000) < 5 * math.sqrt(6000 * (1 / 3) * (2 / 3)))
    assert sample_exits(50, 3, 7) == sample_exits(50, 3, 7)
    assert sample_exits(50, 3, 7) != sample_exits(50, 3, 8)


@pytest.mark.parametrize("adapter", [None, "seq_bn"])
def test_training_changes_only_trainable_parts(tiny_bert_path, adapter):
    ranker = CascadeRanker.from_base(
        str(tiny_bert_path), CascadeConfig(exits=(1, 2), adapter=adapter), device="cpu"
    )
    before = {k: v.clone() for k, v in ranker.state_dict().items()}
    pairs = [("what is a stout", "a dark beer", 1), ("what is a stout", "a bicycle", 0)] * 8
    log = train_cascade(ranker, pairs, epochs=2, batch_size=4, max_steps=6, lr=1e-3, progress=False)
    assert log["steps"] == 6 and sum(log["exit_steps"].values()) == 6
    changed = {k for k, v in ranker.state_dict().items() if not torch.equal(v, before[k])}
    assert any(k.startswith("heads.") for k in changed)
    base_changed = {k for k in changed if k.startswith("encoder.") and "adapters" not in k}
    if adapter:
        assert not base_changed  # the encoder stays frozen
        assert any("adapters" in k for k in changed)
    else:
        assert base_changed
    with pytest.raises(ZooError, match="no training pairs"):
        train_cascade(ranker, [], max_steps=1, progress=False)


@pytest.mark.parametrize("base", ["tiny_bert_path", "tiny_sentence_bert_path"])
@pytest.mark.parametrize("adapter", [None, "seq_bn"])
def test_save_load_bit_identical(base, request, tmp_path, queries, adapter):
    ranker = CascadeRanker.from_base(
        str(request.getfixturevalue(base)),
        CascadeConfig(exits=(1, 2), adapter=adapter),
        device="cpu",
    )
    if adapter:
        _perturb_adapter(ranker)
    path = ranker.save(tmp_path / "entry", card={"seed": 0})
    card = json.loads((path / "card.json").read_text())
    assert card["mode"] == "cascade" and card["cascade"]["exits"] == [1, 2]
    assert "exits.safetensors" in card["files"]
    loaded = CascadeRanker.load(path, device="cpu")
    original, reloaded = ranker.state_dict(), loaded.state_dict()
    assert original.keys() == reloaded.keys()
    for key in original:
        assert torch.equal(original[key], reloaded[key]), key
    a = run_cascade(ranker, queries, alpha=0.3)
    b = run_cascade(loaded, queries, alpha=0.3)
    for x, y in zip(a.scores, b.scores):
        assert np.array_equal(x, y)
    # an adapter cascade's probe pair: recorded at save, the same on the reloaded encoder
    assert ("probe" in card) == bool(adapter)
    if adapter:
        got = pair_probe_cosine(loaded.encoder, loaded.tokenizer)
        assert round(got, 7) == card["probe"]["cosine_to_base"] < 1 - 10 * NOISE


def test_an_adapter_cascade_whose_adapter_does_nothing_is_refused(tiny_bert_path, tmp_path):
    """Its adapter's up-projections zeroed and the card's hash made to match: only the probe
    tells that the loaded cascade is its base's encoder."""
    from safetensors.numpy import load_file, save_file

    from stackexchange.io import sha256_file

    ranker = CascadeRanker.from_base(
        str(tiny_bert_path), CascadeConfig(exits=(1, 2), adapter="seq_bn"), device="cpu"
    )
    _perturb_adapter(ranker)
    path = ranker.save(tmp_path / "entry")
    weights = path / "adapter" / "adapter.safetensors"
    tensors = load_file(str(weights))
    save_file({k: v * 0 if "adapter_up" in k else v for k, v in tensors.items()}, str(weights))
    card = json.loads((path / "card.json").read_text())
    card["files"]["adapter/adapter.safetensors"] = sha256_file(weights)
    (path / "card.json").write_text(json.dumps(card))
    with pytest.raises(ZooError) as refused:
        CascadeRanker.load(path)
    assert str(refused.value) == (
        f"{path}: zoo entry 'entry' does not act as saved (its probe pair's cosine to the base "
        f"is 1.000000, its card says {card['probe']['cosine_to_base']:.6f}): its weights are "
        "not active; refused"
    )
    del card["probe"]  # a card written before the probe: loads as before
    (path / "card.json").write_text(json.dumps(card))
    assert CascadeRanker.load(path).config.adapter == "seq_bn"


def test_corrupted_entry_is_rejected(tiny_cascade, tmp_path):
    path = tiny_cascade.save(tmp_path / "entry")
    with open(path / "exits.safetensors", "r+b") as handle:
        handle.seek(-4, 2)
        handle.write(b"\x00\x01\x02\x03")
    with pytest.raises(ZooError) as error:
        CascadeRanker.load(path)
    assert str(error.value) == (
        f"{path / 'exits.safetensors'}: corrupted (sha256 differs from the card of zoo entry "
        "'entry')"
    )


@pytest.mark.parametrize("outside", ["ABSOLUTE", "../outside.txt"])
def test_card_files_must_be_relative_paths_inside_the_entry(tiny_cascade, tmp_path, outside):
    from stackexchange.io import sha256_file

    path = tiny_cascade.save(tmp_path / "entry")
    (tmp_path / "outside.txt").write_text("not part of the entry")
    name = str(tmp_path / "outside.txt") if outside == "ABSOLUTE" else outside
    card = json.loads((path / "card.json").read_text())
    card["files"][name] = sha256_file(tmp_path / "outside.txt")  # the hash matches
    (path / "card.json").write_text(json.dumps(card))
    with pytest.raises(ZooError) as error:
        CascadeRanker.load(path)
    assert str(error.value) == (
        f"{path / 'card.json'}: file {name!r} is not a relative path inside the entry"
    )


def test_an_adapter_cascade_is_refused_on_a_deeper_base_of_the_same_width(tiny_bert_path, tmp_path):
    import shutil

    ranker = CascadeRanker.from_base(
        str(tiny_bert_path), CascadeConfig(exits=(1, 2), adapter="seq_bn"), device="cpu"
    )
    path = ranker.save(tmp_path / "entry")
    deep = shutil.copytree(tiny_bert_path, tmp_path / "tiny-bert-4-layers")
    config = json.loads((deep / "config.json").read_text())
    (deep / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 4}))
    card = json.loads((path / "card.json").read_text())
    made = {"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2}
    assert card["base_config"] == made
    has = "the base has model_type bert, hidden_size 32, num_hidden_layers 4)"
    for base_config, source in [(made, "its card"), ({**made, "num_hidden_layers": 4},
                                                     "its adapter files")]:  # fmt: skip
        edited = {**card, "base_model": str(deep), "base_config": base_config}
        (path / "card.json").write_text(json.dumps(edited))
        with pytest.raises(ZooError) as error:
            CascadeRanker.load(path)
        assert str(error.value) == (
            f"{path / 'adapter'}: zoo entry 'entry' does not fit base model '{deep}' (made for "
            f"model_type bert, hidden_size 32, num_hidden_layers 2, per {source}; {has}"
        )


@pytest.mark.parametrize("name", [".", ".."])
def test_dot_and_dot_dot_are_no_cascade_names(tiny_cascade, name):
    for call in (lambda: CascadeRanker.load(name), lambda: tiny_cascade.save(name)):
        with pytest.raises(ZooError, match=rf"^invalid zoo entry name '{re.escape(name)}': "):
            call()


def test_saved_by_short_name_in_zoo_home(tiny_cascade, tmp_path, monkeypatch):
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "zoo"))
    path = tiny_cascade.save("my-cascade")
    assert path == tmp_path / "zoo" / "my-cascade"
    assert CascadeRanker.load("my-cascade").config == tiny_cascade.config


def test_cascade_rank_refuses_non_string_candidates_and_too_long_pairs(tiny_bert_path):
    ranker = CascadeRanker.from_base(str(tiny_bert_path), CascadeConfig(exits=(1, 2)))
    with pytest.raises(ZooError) as error:
        ranker.rank("q", "abc")
    assert str(error.value) == "rank: candidates must be a list of strings, not one str"
    with pytest.raises(ZooError) as error:
        ranker.rank_many([("q", ["a", None])])
    assert str(error.value) == "cascade: candidate 1 is NoneType, not a string"
    with pytest.raises(ZooError) as error:
        ranker.score([("q", 3)])
    assert str(error.value) == "score: pair 0: candidate is int, not a string"
    with pytest.raises(ZooError) as error:
        CascadeRanker.from_base(str(tiny_bert_path), CascadeConfig(exits=(1, 2), max_length=9999))
    assert str(error.value) == f"max_length 9999 is above the 512 positions of {tiny_bert_path}"
