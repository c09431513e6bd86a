"""An entry that loads is an entry that acts: the card's probe text, recomputed on load."""

from __future__ import annotations

import json

import pytest
from safetensors.numpy import load_file, save_file

import adapter_zoo
from adapter_zoo.biencoder.probe import PROBE_TEXT, probe_cosine
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.probe import NOISE
from adapter_zoo.training import TrainingConfig, train
from stackexchange.io import sha256_file

FAST = {"batch_size": 8, "max_length": 16, "max_steps": 4, "eval_steps": 2, "seed": 0,
        "lr": 3e-2, "reduction_factor": 2, "dev_queries": 16}  # fmt: skip


@pytest.fixture
def entry(parsed_shipped, tiny_sentence_bert_path):
    """A trained bi-encoder adapter entry (its folder) and its card."""
    config = TrainingConfig(mode="adapter", data=str(parsed_shipped), forums=("beer",),
                            name="acts", base_model=str(tiny_sentence_bert_path), **FAST)  # fmt: skip
    path = train(config)
    return path, json.loads((path / "card.json").read_text())


def _rewrite_card(path, **fields):
    card = json.loads((path / "card.json").read_text())
    card.update(fields)
    card = {k: v for k, v in card.items() if v is not None}
    (path / "card.json").write_text(json.dumps(card))


def test_a_saved_entry_records_how_far_it_moves_the_probe_and_loads(entry):
    path, card = entry
    probe = card["probe"]
    assert probe["text"] == PROBE_TEXT
    assert probe["cosine_to_base"] < 1 - 10 * NOISE  # training moved it off the base
    loaded = adapter_zoo.load("acts")
    assert probe_cosine(loaded.model) == pytest.approx(probe["cosine_to_base"], abs=NOISE)


def test_an_entry_whose_adapter_does_nothing_is_refused_in_one_line(entry):
    """Its adapter's up-projections zeroed (an identity adapter: the base's embeddings), the
    card's hash made to match, so every file verifies and only the probe can tell."""
    path, card = entry
    weights = path / "adapter.safetensors"
    tensors = load_file(str(weights))
    ups = [k for k in tensors if "adapter_up" in k]
    assert ups
    save_file({k: v * 0 if k in ups else v for k, v in tensors.items()}, str(weights))
    _rewrite_card(path, files={**card["files"], "adapter.safetensors": sha256_file(weights)})
    with pytest.raises(ZooError) as refused:
        adapter_zoo.load("acts")
    message = str(refused.value)
    assert message.startswith(
        f"{path}: zoo entry 'acts' does not act as saved (its probe text's cosine to the base "
        f"is 1.000000, its card says {card['probe']['cosine_to_base']:.6f}): its weights "
        "are not active; refused"
    )
    assert "\n" not in message


def test_an_entry_whose_adapter_loads_but_is_not_activated_is_refused(entry, monkeypatch):
    """The peers' failure: the adapter's weights are in the model, never switched on."""
    from adapters.model_mixin import ModelAdaptersMixin

    real = ModelAdaptersMixin.set_active_adapters

    def never_on(self, adapter_setup, *args, **kwargs):
        if adapter_setup is not None:  # switching off (adapters_off) still works
            return None
        return real(self, adapter_setup, *args, **kwargs)

    monkeypatch.setattr(ModelAdaptersMixin, "set_active_adapters", never_on)
    with pytest.raises(ZooError, match=r"^.*zoo entry 'acts' does not act as saved \("):
        adapter_zoo.load("acts")


def test_a_card_written_before_the_probe_still_loads_and_a_broken_probe_is_one_line(entry):
    path, card = entry
    _rewrite_card(path, probe=None)
    assert "probe" not in json.loads((path / "card.json").read_text())
    assert adapter_zoo.load("acts").encode(["a stout"]).shape[0] == 1
    broken = {"text": PROBE_TEXT, "cosine_to_base": "high"}
    _rewrite_card(path, probe=broken)
    with pytest.raises(ZooError) as refused:
        adapter_zoo.load("acts")
    assert str(refused.value) == (
        f"{path / 'card.json'}: field 'probe' must be an object of a 'text' of 1 to 1000 "
        f"characters and a 'cosine_to_base' in [-1, 1], not {json.dumps(broken)}"
    )


def test_a_cosine_rounded_past_1_is_recorded_as_1(monkeypatch):
    """An adapter still at its identity start: float rounding may put its cosine above 1,
    which the card's check would refuse."""
    from adapter_zoo.biencoder import probe

    monkeypatch.setattr(probe, "probe_cosine", lambda model, text=PROBE_TEXT: 1.0000001)
    assert probe.probe_record(None) == {"text": PROBE_TEXT, "cosine_to_base": 1.0}
