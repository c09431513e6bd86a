"""Published MultiCQA adapters: old key names, pickled, headless -> today's adapters layout."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.zoo.multicqa import convert_state_dict, import_legacy, load_legacy

PAIRS = [
    ("why is my stout flat", "dead yeast"),
    ("what are hops", "flowers"),
    ("which glass for lager", "a tall pilsner glass, rinsed cold"),
]


@pytest.fixture(scope="module")
def reference(tiny_bert_path):
    """A model with two SeqBn adapters (reduction 2) and a one-layer head, random weights."""
    import adapters
    from adapters import SeqBnConfig
    from transformers import AutoTokenizer

    from adapter_zoo.ranker.model import own_tensors

    torch.manual_seed(7)
    # owned tensors, as every loader here gives: memory-mapped weights can take other CPU
    # kernels and differ in the last bit on some machines
    model = own_tensors(adapters.AutoAdapterModel.from_pretrained(tiny_bert_path))
    for name in ("beer", "cooking"):
        model.add_adapter(name, config=SeqBnConfig(reduction_factor=2))
        model.add_classification_head(name, num_labels=1, layers=1)
    with torch.no_grad():
        for key, parameter in model.named_parameters():
            if ".adapters." in key or key.startswith("heads."):
                parameter.copy_(torch.randn_like(parameter) * 0.3)
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert_path)
    return model, tokenizer


def logits(model, tokenizer, adapter):
    """The reference's logits of PAIRS, batched in the order Ranker.score uses (longest
    first): some CPU kernels round a row differently at another position in the batch."""
    from adapter_zoo.ranker.ranker import length_order

    model.set_active_adapters(adapter)
    model.active_head = adapter
    order = length_order(tokenizer, PAIRS, 300)
    batch = tokenizer(
        [PAIRS[i][0] for i in order], [PAIRS[i][1] for i in order], padding=True,
        return_tensors="pt",
    )  # fmt: skip
    result = np.zeros(len(PAIRS), dtype=np.float32)
    with torch.inference_mode():
        result[order] = model(**batch).logits[:, 0].numpy()
    return result


def old_names(model, adapter, family, with_head):
    """The state dict as MultiCQA wrote it: ``layer_adapters`` (its BERT fork) or
    ``layer_text_task_adapters`` (early adapter-transformers), plus ``lin_layer``."""
    state = {"bert.embeddings.word_embeddings.weight": torch.zeros(3, 3)}  # base weights: ignored
    for key, tensor in model.state_dict().items():
        marker = f".output.adapters.{adapter}."
        if marker in key:
            state[key.replace(".output.adapters.", f".output.{family}.")] = tensor.clone()
            if key.endswith("adapter_up.bias"):  # MultiCQA's unused per-adapter attention score
                prefix = key.replace(".output.adapters.", f".output.{family}.")[
                    : -len("adapter_up.bias")
                ]
                state[prefix + "adapter_attention.weight"] = torch.ones(1, tensor.shape[0] // 2)
    if with_head:
        state["lin_layer.weight"] = model.state_dict()[f"heads.{adapter}.1.weight"].clone()
        state["lin_layer.bias"] = model.state_dict()[f"heads.{adapter}.1.bias"].clone()
    return state


def test_convert_state_dict_maps_both_old_families(reference):
    model, _ = reference
    for family in ("layer_adapters", "layer_text_task_adapters"):
        found, head = convert_state_dict(old_names(model, "beer", family, with_head=True))
        ours = {k: v for k, v in model.state_dict().items() if ".adapters.beer." in k}
        assert set(found) == {"beer"} and set(found["beer"]) == set(ours)
        assert all(torch.equal(found["beer"][k], ours[k]) for k in ours)
        assert torch.equal(head["weight"], model.state_dict()["heads.beer.1.weight"])


def test_multicqa_checkpoint_with_head_scores_bit_identically(reference, tiny_bert_path, tmp_path):
    model, tokenizer = reference
    state = {
        **old_names(model, "beer", "layer_adapters", True),
        **old_names(model, "cooking", "layer_adapters", False),
    }
    torch.save({"state_dict": state}, tmp_path / "pytorch_model.bin")
    with pytest.raises(ZooError) as error:
        adapter_zoo.load(tmp_path, base_model=str(tiny_bert_path))
    assert str(error.value) == (
        f"{tmp_path / 'pytorch_model.bin'}: holds 2 adapters; choose one "
        "with adapter=... (beer, cooking)"
    )
    ranker = load_legacy(tmp_path, adapter="beer", base_model=str(tiny_bert_path), device="cpu")
    assert ranker.card["head_trained"] is True and ranker.card["source"] == "multicqa"
    expected = logits(model, tokenizer, "beer")
    # the reference's own batch and the Ranker's: two code paths, equal to a tolerance
    np.testing.assert_allclose(ranker.score(PAIRS), expected, rtol=0, atol=1e-6)
    # stored in today's layout, it loads by name with the same scores
    entry = import_legacy(
        tmp_path / "pytorch_model.bin",
        "beer-multicqa",
        adapter="beer",
        base_model=str(tiny_bert_path),
    )
    assert (entry / "adapter.safetensors").is_file() and (
        entry / "model_head.safetensors"
    ).is_file()
    np.testing.assert_allclose(
        adapter_zoo.load("beer-multicqa").score(PAIRS), expected, rtol=0, atol=1e-6
    )


def test_headless_adapterhub_file_loads_with_untrained_head(reference, tiny_bert_path, tmp_path):
    model, _ = reference
    torch.save(
        old_names(model, "cooking", "layer_text_task_adapters", False),
        tmp_path / "pytorch_adapter.bin",
    )
    ranker = adapter_zoo.load(tmp_path, base_model=str(tiny_bert_path), device="cpu")
    assert ranker.card["name"] == "cooking" and ranker.card["head_trained"] is False
    loaded = ranker.model.state_dict()
    for key, value in model.state_dict().items():
        if ".adapters.cooking." in key:
            assert torch.equal(loaded[key], value), key
    assert str(ranker.model.active_adapters) == "Stack[cooking]"


def test_adapter_for_another_base_model_is_refused(reference, tmp_path):
    model, _ = reference
    torch.save(old_names(model, "beer", "layer_adapters", False), tmp_path / "pytorch_adapter.bin")
    with pytest.raises(ZooError) as error:
        load_legacy(tmp_path, base_model="minilm-l6")
    assert str(error.value) == (
        f"{tmp_path / 'pytorch_adapter.bin'}: adapter 'beer' was made for "
        "hidden size 32, but base model 'minilm-l6' has 384"
    )
    (tmp_path / "pytorch_adapter.bin").write_bytes(b"not a pickle")
    with pytest.raises(ZooError, match="not a readable PyTorch weights file"):
        load_legacy(tmp_path, base_model="minilm-l6")
