"""An entry that loads is an entry that acts: a cross-encoder entry's probe pair, recomputed
on load (adapter and fusion layouts; a full model has none)."""

from __future__ import annotations

import json

import pytest
from safetensors.numpy import load_file, save_file

import adapter_zoo
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.probe import NOISE, PROBE_ANSWER, PROBE_QUESTION, pair_probe_cosine
from adapter_zoo.training import TrainingConfig, train
from stackexchange.io import sha256_file

# A high rate, so that 4 steps move the tiny random model's adapters off their identity start.
FAST = {"batch_size": 8, "max_length": 16, "max_steps": 4, "eval_steps": 2, "seed": 0,
        "lr": 3e-2, "reduction_factor": 2, "dev_queries": 16}  # fmt: skip
PAIRS = [("why is my stout flat", "dead yeast"), ("what are hops", "flowers of the hop plant")]


def _train(parsed, base, name, mode="adapter", forums=("beer",), **extra):
    config = TrainingConfig(mode=mode, data=str(parsed), forums=forums, name=name,
                            base_model=str(base), **{**FAST, **extra})  # fmt: skip
    path = train(config)
    return path, json.loads((path / "card.json").read_text())


@pytest.fixture
def entry(parsed_fixture, tiny_bert_path):
    """A trained cross-encoder adapter entry (its folder) and its card."""
    return _train(parsed_fixture, tiny_bert_path, "acts")


def _rewrite_card(path, **fields):
    card = json.loads((path / "card.json").read_text())
    card.update(fields)
    card = {k: v for k, v in card.items() if v is not None}
    (path / "card.json").write_text(json.dumps(card))


def _zero_up_projections(path, weights_file):
    """The adapter's up-projections zeroed (an identity adapter: the base's outputs), the
    card's hash made to match, so every file verifies and only the probe can tell."""
    weights = path / weights_file
    tensors = load_file(str(weights))
    ups = [k for k in tensors if "adapter_up" in k]
    assert ups
    save_file({k: v * 0 if k in ups else v for k, v in tensors.items()}, str(weights))
    card = json.loads((path / "card.json").read_text())
    _rewrite_card(path, files={**card["files"], weights_file: sha256_file(weights)})


def test_a_saved_entry_records_how_far_it_moves_the_probe_and_reloads_bit_for_bit(entry):
    path, card = entry
    probe = card["probe"]
    assert (probe["question"], probe["answer"]) == (PROBE_QUESTION, PROBE_ANSWER)
    assert probe["cosine_to_base"] < 1 - 10 * NOISE  # training moved it off the base
    loaded = adapter_zoo.load("acts")
    got = pair_probe_cosine(loaded.model, loaded.tokenizer)
    assert round(got, 7) == probe["cosine_to_base"]  # the same weights, the same cosine
    assert adapter_zoo.load("acts").score(PAIRS).tolist() == loaded.score(PAIRS).tolist()


def test_an_entry_whose_adapter_does_nothing_is_refused_in_one_line(entry):
    path, card = entry
    _zero_up_projections(path, "adapter.safetensors")
    with pytest.raises(ZooError) as refused:
        adapter_zoo.load("acts")
    message = str(refused.value)
    assert message == (
        f"{path}: zoo entry 'acts' does not act as saved (its probe pair's cosine to the base "
        f"is 1.000000, its card says {card['probe']['cosine_to_base']:.6f}): its weights "
        "are not active; refused"
    )


def test_an_entry_whose_adapter_loads_but_is_not_activated_is_refused(entry, monkeypatch):
    """The peers' failure: the adapter's weights are in the model, never switched on."""
    from adapters.model_mixin import ModelAdaptersMixin

    real = ModelAdaptersMixin.set_active_adapters

    def never_on(self, adapter_setup, *args, **kwargs):
        if adapter_setup is not None:  # switching off (adapters_off) still works
            return None
        return real(self, adapter_setup, *args, **kwargs)

    monkeypatch.setattr(ModelAdaptersMixin, "set_active_adapters", never_on)
    with pytest.raises(ZooError, match=r"^\S+: zoo entry 'acts' does not act as saved \(its "
                                       r"probe pair's cosine to the base is 1\.000000, "):  # fmt: skip
        adapter_zoo.load("acts")


def test_a_card_written_before_the_probe_still_loads_and_a_broken_probe_is_one_line(entry):
    path, card = entry
    scores = adapter_zoo.load("acts").score(PAIRS)
    _rewrite_card(path, probe=None)
    assert "probe" not in json.loads((path / "card.json").read_text())
    assert adapter_zoo.load("acts").score(PAIRS).tolist() == scores.tolist()
    broken = {"text": PROBE_QUESTION, "cosine_to_base": card["probe"]["cosine_to_base"]}
    _rewrite_card(path, probe=broken)  # a bi-encoder's probe on a cross-encoder's card
    with pytest.raises(ZooError) as refused:
        adapter_zoo.load("acts")
    assert str(refused.value) == (
        f"{path / 'card.json'}: field 'probe' must be an object of a 'question' and an "
        "'answer' of 1 to 1000 characters each and a 'cosine_to_base' in [-1, 1], not "
        f"{json.dumps(broken)}"
    )


def test_a_fusion_entry_records_its_probe_and_is_refused_when_its_adapters_do_nothing(
    parsed_fixture, tiny_bert_path
):
    for forum in ("beer", "bicycles"):
        _train(parsed_fixture, tiny_bert_path, forum, forums=(forum,))
    path, card = _train(parsed_fixture, tiny_bert_path, "fused", mode="fusion",
                        adapters=("beer", "bicycles"))  # fmt: skip
    want = card["probe"]["cosine_to_base"]
    assert want < 1 - 10 * NOISE
    loaded = adapter_zoo.load("fused")
    assert round(pair_probe_cosine(loaded.model, loaded.tokenizer), 7) == want
    for adapter in card["adapters"]:
        _zero_up_projections(path, f"{adapter}/adapter.safetensors")
    with pytest.raises(ZooError) as refused:
        adapter_zoo.load("fused")
    assert str(refused.value) == (
        f"{path}: zoo entry 'fused' does not act as saved (its probe pair's cosine to the "
        f"base is 1.000000, its card says {want:.6f}): its weights are not active; refused"
    )


def test_a_full_entry_has_no_probe_and_loads(parsed_fixture, tiny_bert_path):
    """A whole fine-tuned model has no adapters to switch off: nothing to probe."""
    path, card = _train(parsed_fixture, tiny_bert_path, "whole", mode="full")
    assert "probe" not in card
    assert len(adapter_zoo.load("whole").score(PAIRS)) == 2
