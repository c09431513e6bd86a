"""Training memory as a budget: GradCache, chunks and recomputation only past it."""

from __future__ import annotations

import json

import pytest
from transformers import AutoConfig

from adapter_zoo.cli import main
from adapter_zoo.errors import ZooError
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.memory import GB, activation_bytes, parse_budget, plan_memory

BEER = "beer.stackexchange.com"


@pytest.fixture(scope="module")
def minilm_config(minilm_path):
    return AutoConfig.from_pretrained(minilm_path)


def test_the_estimate_covers_the_measured_steps_of_minilm(minilm_config):
    # benchmarks/speed/train_memory.py: a bi-encoder step of 64 texts at 256 tokens held
    # 6.8 GB, a cross-encoder step of 32 pairs at 300 tokens 5.1 GB; the estimate rounds up
    bi = activation_bytes(minilm_config, texts=64, length=256) / GB
    cross = activation_bytes(minilm_config, texts=32, length=300) / GB
    assert 6.8 <= bi <= 1.3 * 6.8
    assert 5.1 <= cross <= 1.3 * 5.1


def test_the_cheapest_plan_that_fits_the_budget(minilm_config):
    # the zoo's training step: 32 (anchor, positive, hard negative) at 128 tokens
    step = {"texts": 96, "length": 128}
    held = activation_bytes(minilm_config, **step)
    assert plan_memory(minilm_config, **step, budget=held).mode == "plain"
    assert plan_memory(minilm_config, **step, budget=held - 1).mode == "recompute"
    # the fewest layers rebuilt that fit: each one rebuilt frees its activations but its
    # input, and backward rebuilds one layer at a time (so one alone saves nothing)
    layer = activation_bytes(minilm_config, **step, layers=1)
    layer_input = 96 * 128 * 384 * 4
    for rebuilt in range(2, 7):
        need = (6 - rebuilt) * layer + rebuilt * layer_input + layer
        plan = plan_memory(minilm_config, **step, budget=need)
        assert (plan.mode, plan.layers) == ("recompute", rebuilt)
        assert plan.to_card()["recomputed_layers"] == rebuilt
        assert plan_memory(minilm_config, **step, budget=need + layer_input).layers == rebuilt
    assert plan_memory(minilm_config, **step, budget=held // 10).layers == 6
    assert plan_memory(minilm_config, **step, budget=held // 10).mode == "bounded"
    plan = plan_memory(minilm_config, **step, budget=8 * GB)
    assert (plan.recompute, plan.bounded) == (False, False)
    assert plan.to_card() == {"mode": "plain", "budget_gb": 8.0, "estimate_gb": 4.19}


def test_a_budget_is_a_positive_size(capsys, tmp_path):
    assert parse_budget("2GB") == parse_budget("2g") == 2 * GB
    assert parse_budget("1.5 GB") == int(1.5 * GB)
    for bad in ("0", "-1GB", "lots", "2TB", ""):
        with pytest.raises(ZooError, match="give a positive size such as 8GB or 512MB"):
            parse_budget(bad)
    argv = ["train", "--mode", "adapter", "--data", str(tmp_path), "--forums", "beer",
            "--name", "x", "--memory-budget", "lots"]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.endswith(
        "adapter-zoo train: error: argument --memory-budget: memory budget 'lots': give a "
        "positive size such as 8GB or 512MB\n"
    )


def _spy(monkeypatch, module, name) -> list[tuple]:
    """``module.name`` still runs, and each call's positional arguments are listed."""
    calls, real = [], getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


@pytest.mark.parametrize("budget", [None, 1])
def test_a_bi_encoder_runs_gradcache_and_recomputation_only_past_its_budget(
    budget, parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    import adapter_zoo.losses as losses
    import adapter_zoo.training.models as models

    recomputed = _spy(monkeypatch, models, "bound_activation_memory")
    built = _spy(monkeypatch, losses, "build_loss")
    config = TrainingConfig(
        mode="adapter", data=str(parsed_shipped), forums=("beer",), name=f"b{budget}",
        base_model=str(tiny_sentence_bert_path), batch_size=8, max_length=16, max_steps=2,
        seed=0, memory_budget=budget,
    )  # fmt: skip
    card = json.loads((train(config) / "card.json").read_text())
    memory = card["training"]["memory"]
    assert card["training"]["loss"] == "MultipleNegativesRankingLoss"
    assert "memory_budget" not in card["training"]  # the plan is recorded, not the budget
    if budget is None:
        assert (memory["mode"], memory["loss"]) == ("plain", "MultipleNegativesRankingLoss")
        assert recomputed == [] and [b[0] for b in built] == ["MultipleNegativesRankingLoss"]
    else:
        assert (memory["mode"], memory["loss"]) == ("bounded", "CachedMultipleNegativesRankingLoss")
        assert len(recomputed) == 1
        assert [b[0] for b in built] == ["CachedMultipleNegativesRankingLoss"]


def test_a_guided_loss_past_its_budget_runs_its_gradcache_twin_with_the_base_as_guide(
    parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    import adapter_zoo.losses as losses

    built = []
    real = losses.build_loss

    def spy(name, encoder, model, **options):
        built.append((name, sorted(options)))
        return real(name, encoder, model, **options)

    monkeypatch.setattr(losses, "build_loss", spy)
    config = TrainingConfig(
        mode="adapter", data=str(parsed_shipped), forums=("beer",), name="gist-bounded",
        base_model=str(tiny_sentence_bert_path), batch_size=8, max_length=16, max_steps=2,
        seed=0, memory_budget=1, loss="GISTEmbedLoss", hard_negatives=True,
    )  # fmt: skip
    card = json.loads((train(config) / "card.json").read_text())
    assert card["training"]["memory"]["loss"] == "CachedGISTEmbedLoss"
    assert built == [("CachedGISTEmbedLoss", ["guide"])]


@pytest.mark.parametrize("budget", [None, 1])
def test_a_cross_encoder_chunks_and_recomputes_only_past_its_budget(
    budget, parsed_shipped, tiny_bert_path, monkeypatch
):
    import adapter_zoo.losses.cross as cross_losses
    import adapter_zoo.training.models as models

    recomputed = _spy(monkeypatch, models, "bound_activation_memory")
    backward = _spy(monkeypatch, cross_losses, "backward_in_chunks")
    config = TrainingConfig(
        mode="adapter", data=str(parsed_shipped), forums=("beer",), name=f"c{budget}",
        base_model=str(tiny_bert_path), batch_size=8, max_length=32, max_steps=2, seed=0,
        memory_budget=budget, loss="listwise", negatives=3, hard_negatives=True,
    )  # fmt: skip
    card = json.loads((train(config) / "card.json").read_text())
    assert card["training"]["memory"]["mode"] == ("plain" if budget is None else "bounded")
    chunks = {args[3] for args in backward}  # backward_in_chunks(loss_of, batch, backward, size)
    if budget is None:
        assert recomputed == [] and chunks == {None}
    else:
        # 8 pairs a chunk: two listwise examples of a positive and 3 negatives
        assert len(recomputed) == 1 and chunks == {2}


def test_without_attention_dropout_the_fused_kernel_holds_no_attention_matrix(minilm_config):
    from adapter_zoo.training.memory import keeps_attention_matrices

    minilm_config._attn_implementation = "sdpa"
    assert keeps_attention_matrices(minilm_config, None)  # MiniLM's own 0.1
    assert not keeps_attention_matrices(minilm_config, 0.0)
    minilm_config._attn_implementation = "eager"  # the math path holds them whatever the dropout
    assert keeps_attention_matrices(minilm_config, 0.0)
    step = {"texts": 96, "length": 256}
    held = activation_bytes(minilm_config, **step)
    fused = activation_bytes(minilm_config, **step, attention_matrices=False)
    # 12 heads x 256^2 attention floats a text and layer, beside 384 x 256 x 21 hidden ones
    assert round(held / fused, 2) == round(1 + 12 * 256 * 4 / (384 * 21), 2)
    assert plan_memory(minilm_config, **step, budget=fused).mode == "recompute"
    assert plan_memory(minilm_config, **step, budget=fused, attention_matrices=False).mode == (
        "plain"
    )


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
def test_attention_dropout_set_for_training_reaches_both_attention_paths(
    implementation, tiny_bert_path
):
    import adapters
    import torch
    from transformers import AutoModel

    from adapter_zoo.training.models import set_attention_dropout

    model = AutoModel.from_pretrained(
        tiny_bert_path, attn_implementation=implementation, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.5,
    )  # fmt: skip
    adapters.init(model)  # the attention classes training runs: the adapters library's
    model.add_adapter("a")
    model.train_adapter("a")
    model.train()
    assert "WithAdapters" in type(model.encoder.layer[0].attention.self).__name__
    ids = torch.tensor([[101, 2054, 2003, 1037, 27077, 102]])

    def twice():
        torch.manual_seed(0)
        first = model(input_ids=ids).last_hidden_state
        return torch.equal(first, model(input_ids=ids).last_hidden_state)

    assert not twice()  # attention dropout draws a new mask each forward
    set_attention_dropout(model, None)  # None keeps the base's own
    assert not twice()
    set_attention_dropout(model, 0.0)
    assert twice()


def test_attention_dropout_is_checked_and_recorded_only_when_set():
    config = TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="b")
    assert "attention_dropout" not in config.to_dict()
    config = TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="b",
                            attention_dropout=0.0)  # fmt: skip
    assert config.to_dict()["attention_dropout"] == 0.0
    with pytest.raises(ZooError, match=r"^attention_dropout must be .*, not 1$"):
        TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="b",
                       attention_dropout=1)  # fmt: skip
