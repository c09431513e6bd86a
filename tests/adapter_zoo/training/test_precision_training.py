"""Training in bf16 (adapter_zoo.precision.training_precision and cast_frozen_for_training):
the frozen base multiplies in bf16, everything trained stays float32, the card says which ran.

The suite's CPU has no bf16 (tests/conftest.py); here ``cpu_with_bf16`` makes it an AMX
machine, where ``auto`` still trains in fp32 and an explicit ``bf16`` runs.
"""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

import adapter_zoo
from adapter_zoo.cli import main
from adapter_zoo.precision import (
    PrecisionError,
    cast_frozen_for_training,
    frozen_base_linears,
    training_precision,
)
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.zoo import zoo_home

BI = {"batch_size": 8, "max_length": 16, "max_steps": 4, "eval_steps": 2, "seed": 0,
      "lr": 3e-2, "reduction_factor": 2}  # fmt: skip
CROSS = {"epochs": 1, "batch_size": 8, "max_length": 32}
FULL_REFUSED = (
    "precision bf16: full fine-tuning trains the base's own weights, which stay float32 "
    "(bf16 casts only a frozen base); use --precision auto or fp32"
)


def run(parsed, base, mode, name, forums=("beer",), options=BI, **extra):
    return train(TrainingConfig(mode=mode, data=str(parsed), forums=forums, name=name,
                                base_model=str(base), **{**options, **extra}))  # fmt: skip


def tensor_dtypes(path) -> set:
    return {tensor.dtype for tensor in load_file(path).values()}


def test_the_precision_is_decided_once_from_the_hardware_and_the_mode(cpu_with_bf16):
    # measured on an AMX CPU: bf16 outside auto's 0.003 MAP (adapter_zoo.precision)
    assert training_precision("auto", trains_base=False) == "fp32"
    assert training_precision("bf16", trains_base=False) == "bf16"
    assert training_precision("fp32", trains_base=False) == "fp32"
    assert training_precision("auto", trains_base=True) == "fp32"
    with pytest.raises(PrecisionError) as error:
        training_precision("bf16", trains_base=True)
    assert str(error.value) == FULL_REFUSED


def test_a_cpu_without_bf16_trains_in_fp32_and_refuses_bf16(cpu_without_bf16):
    assert training_precision("auto", trains_base=False) == "fp32"
    with pytest.raises(PrecisionError) as error:
        training_precision("bf16", trains_base=False)
    assert str(error.value) == (
        "precision bf16: this CPU has neither AMX-BF16 nor AVX512-BF16; "
        "use --precision auto or fp32"
    )


def _tiny_adapter_model(path):
    import adapters
    from transformers import AutoModel

    torch.manual_seed(0)
    model = AutoModel.from_pretrained(str(path))
    adapters.init(model)
    model.add_adapter("forum", config="seq_bn")
    model.train_adapter("forum")
    return model


def test_the_frozen_base_runs_in_bf16_and_gradients_reach_the_float32_adapter(
    cpu_with_bf16, tiny_bert_path
):
    exact = _tiny_adapter_model(tiny_bert_path)
    mixed = _tiny_adapter_model(tiny_bert_path)
    mixed.load_state_dict(exact.state_dict())
    cast_frozen_for_training(mixed, "bf16")
    linears = frozen_base_linears(mixed)
    # 6 per layer of the tiny BERT's 2 (query, key, value, attention output, intermediate,
    # output) and the pooler's
    assert len(linears) == 13 and all(m.weight.dtype == torch.bfloat16 for m in linears)
    trained = {n: p for n, p in mixed.named_parameters() if p.requires_grad}
    assert trained and all(p.dtype == torch.float32 for p in trained.values())
    assert all(".adapters.forum." in name for name in trained)
    ids = torch.randint(5, 100, (4, 12))
    direction = torch.randn(4, 12, 32)  # a loss that depends on every hidden value
    grads = {}
    for model in (exact, mixed):
        model.eval()  # no dropout: both see the same network
        hidden = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
        assert hidden.dtype == torch.float32
        (hidden * direction).sum().backward()
        grads[model is mixed] = torch.cat(
            [p.grad.flatten() for n, p in model.named_parameters() if p.requires_grad]
        )
    assert torch.isfinite(grads[True]).all()
    cosine = torch.nn.functional.cosine_similarity(grads[True], grads[False], dim=0)
    assert cosine > 0.99


def test_a_fusion_trained_in_bf16_keeps_its_members_bit_identical(
    cpu_with_bf16, parsed_shipped, tiny_sentence_bert_path
):
    """Also the bi-encoder's path through bf16: the card says so, the trained weights are
    float32 and the entry scores."""
    base, short = tiny_sentence_bert_path, {"max_steps": 2, "dev_queries": 10}
    run(parsed_shipped, base, "adapter", "m-beer", precision="fp32", **short)
    run(parsed_shipped, base, "adapter", "m-bikes", ("bicycles.meta",), precision="fp32", **short)
    path = run(parsed_shipped, base, "fusion", "m-both", adapters=("m-beer", "m-bikes"),
               precision="bf16", **short)  # fmt: skip
    card = json.loads((path / "card.json").read_text())
    assert card["training"]["precision"] == "bf16" and 0 <= card["scores"]["dev_map"] <= 1
    assert tensor_dtypes(next((path / "fusion").glob("*.safetensors"))) == {torch.float32}
    scores = adapter_zoo.load("m-both", precision="fp32").score([("a stout", "a dark beer")])
    assert scores.dtype.name == "float32" and scores.shape == (1,)
    for member in ("m-beer", "m-bikes"):
        source = load_file(zoo_home() / member / "adapter.safetensors")
        written = load_file(path / member.replace("-", "_") / "adapter.safetensors")
        # the same tensors, each named for its module (the entry's name as a module key)
        assert len(source) == len(written)
        for (_, before), (_, after) in zip(sorted(source.items()), sorted(written.items())):
            assert after.dtype == torch.float32 and torch.equal(before, after)


def test_a_cross_adapter_trains_in_bf16_with_a_float32_head(
    cpu_with_bf16, parsed_fixture, tiny_bert_path
):
    path = run(parsed_fixture, tiny_bert_path, "adapter", "x-beer", options=CROSS, precision="bf16")
    card = json.loads((path / "card.json").read_text())
    assert (card["encoder"], card["training"]["precision"]) == ("cross", "bf16")
    assert {d for f in path.glob("*.safetensors") for d in tensor_dtypes(f)} == {torch.float32}


def test_train_refuses_bf16_for_full_fine_tuning_in_one_line(
    cpu_with_bf16, parsed_fixture, tiny_bert_path, capsys
):
    argv = ["train", "--mode", "full", "--data", str(parsed_fixture), "--forums", "beer",
            "--name", "beer-full", "--base", str(tiny_bert_path), "--precision", "bf16"]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err == f"adapter-zoo train: error: {FULL_REFUSED}\n"
    assert not (zoo_home() / "beer-full").exists()
    with pytest.raises(
        PrecisionError, match="^unknown precision 'half'; choose one of auto, fp32, bf16, int8$"
    ):
        TrainingConfig(mode="adapter", data="d", forums=("beer",), name="x", precision="half")
