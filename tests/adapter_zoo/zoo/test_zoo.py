"""The zoo on disk: bit-identical save/load for every layout, verification, names, errors."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.cli import main
from adapter_zoo.loading import list_entries, load
from adapter_zoo.training import TrainingConfig
from adapter_zoo.training.models import setup_model, write_entry_weights
from adapter_zoo.zoo import CARD_FILE, save_entry, verify_entry, zoo_home
from adapter_zoo.zoo.domain import write_centroid

PAIRS = [
    ("why is my stout flat", "dead yeast"),
    ("what are hops", "flowers"),
    ("which glass for lager", "a tall pilsner glass, rinsed cold"),
]


def make_entry(parsed, base, mode, name, *, also=None, **extra):
    """Build a mode's model, randomise its trainable weights, store it (``also(folder)``
    writes more files into the entry); return the model."""
    config = TrainingConfig(
        mode=mode, data=str(parsed), forums=("beer",), name=name, base_model=str(base), **extra
    )
    torch.manual_seed(hash(name) % 1000)
    model, tokenizer, setup = setup_model(config)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.requires_grad:
                parameter.add_(torch.randn_like(parameter) * 0.1)
    card = {
        "mode": mode,
        "layout": config.layout,
        "base_model": str(base),
        "forums": ["beer"],
        "head": setup["head"],
        "max_length": 64,
        **{k: v for k, v in setup.items() if k == "adapters"},
    }

    def writer(folder):
        write_entry_weights(model, tokenizer, config, setup, folder)
        if also is not None:
            also(folder)

    save_entry(writer, name, card)
    return model, tokenizer


def assert_same_as_saved(model, tokenizer, name):
    ranker = load(name, device="cpu")
    loaded = ranker.model.state_dict()
    original = model.state_dict()
    active = {k for k in original if ".heads." in k or "adapter" in k}
    for key in active:
        assert torch.equal(original[key], loaded[key]), key
    model.eval()
    batch = tokenizer(
        [q for q, _ in PAIRS],
        [c for _, c in PAIRS],
        padding=True,
        truncation=True,
        max_length=64,
        return_tensors="pt",
    )
    with torch.inference_mode():
        expected = model(**batch).logits[:, 0].numpy()
        got = ranker.model(**batch).logits[:, 0].numpy()
    np.testing.assert_array_equal(expected, got)
    return ranker


def test_adapter_entry_reloads_bit_identical(parsed_fixture, tiny_bert_path):
    model, tokenizer = make_entry(parsed_fixture, tiny_bert_path, "adapter", "beer")
    ranker = assert_same_as_saved(model, tokenizer, "beer")
    entry = zoo_home() / "beer"
    names = {
        "adapter_config.json",
        "adapter.safetensors",
        "head_config.json",
        "model_head.safetensors",
    }
    assert names <= set(os.listdir(entry))
    card = json.loads((entry / "card.json").read_text())
    assert set(card["files"]) == names
    assert ranker.card["name"] == "beer" and ranker.card["version"] == 1
    assert "adapter_zoo.load('beer')" in (entry / "README.md").read_text()
    # by short name through the package API, from $ADAPTER_ZOO_HOME
    assert adapter_zoo.load("beer").card["base_model"] == str(tiny_bert_path)
    assert [c["name"] for c in adapter_zoo.list()] == ["beer"]


def test_full_entry_reloads_bit_identical(parsed_fixture, tiny_bert_path):
    model, tokenizer = make_entry(parsed_fixture, tiny_bert_path, "full", "beer-full")
    assert_same_as_saved(model, tokenizer, "beer-full")
    state = load("beer-full").model.state_dict()
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key]), key


def test_fusion_entry_reloads_bit_identical(parsed_fixture, tiny_bert_path):
    make_entry(parsed_fixture, tiny_bert_path, "adapter", "beer")
    make_entry(parsed_fixture, tiny_bert_path, "adapter", "cooking")
    model, tokenizer = make_entry(
        parsed_fixture, tiny_bert_path, "fusion", "mix", adapters=("beer", "cooking")
    )
    ranker = assert_same_as_saved(model, tokenizer, "mix")
    assert {"beer", "cooking", "fusion"} <= set(os.listdir(zoo_home() / "mix"))
    assert str(ranker.model.active_adapters) == "Fuse[beer, cooking]"


def test_corrupted_weights_file_is_named(parsed_fixture, tiny_bert_path):
    make_entry(parsed_fixture, tiny_bert_path, "adapter", "beer")
    weights = zoo_home() / "beer" / "adapter.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(ZooError) as error:
        load("beer")
    assert str(error.value) == (
        f"{weights}: corrupted (sha256 differs from the card of zoo entry 'beer')"
    )


def test_unknown_name_suggests_close_names(parsed_fixture, tiny_bert_path):
    make_entry(parsed_fixture, tiny_bert_path, "adapter", "beer")
    with pytest.raises(ZooError) as error:
        load("beeer")
    assert str(error.value).startswith(
        f"unknown adapter 'beeer'; did you mean beer?; local zoo at {zoo_home()}"
    )


def test_base_model_mismatch_names_both(parsed_fixture, tiny_bert_path):
    make_entry(parsed_fixture, tiny_bert_path, "adapter", "beer")
    with pytest.raises(ZooError) as error:
        load("beer", base_model="bert-base")
    assert str(error.value) == (
        f"{zoo_home() / 'beer'}: zoo entry 'beer' was made for base model "
        f"'{tiny_bert_path}', not 'bert-base'"
    )
    # weights for another encoder (hidden 32 here, 384 in MiniLM): the card is rewritten
    # to claim MiniLM, so loading builds MiniLM and the adapter's shapes do not fit.
    card_file = zoo_home() / "beer" / "card.json"
    card = json.loads(card_file.read_text())
    card_file.write_text(json.dumps({**card, "base_model": "minilm-l6"}))
    with pytest.raises(ZooError, match=r"zoo entry 'beer' does not fit base model 'minilm-l6'"):
        load("beer")


def test_adapter_entry_is_refused_on_a_deeper_base_of_the_same_width(
    parsed_fixture, tiny_bert_path, tmp_path
):
    import shutil

    from adapter_zoo.sweep import sweep

    deep = shutil.copytree(tiny_bert_path, tmp_path / "tiny-bert-4-layers")
    config = json.loads((deep / "config.json").read_text())
    (deep / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 4}))
    make_entry(parsed_fixture, tiny_bert_path, "adapter", "beer")
    entry = zoo_home() / "beer"
    card = json.loads((entry / "card.json").read_text())
    (entry / "card.json").write_text(json.dumps({**card, "base_model": str(deep)}))
    expected = (
        f"{entry}: zoo entry 'beer' does not fit base model '{deep}' (made for model_type "
        "bert, hidden_size 32, num_hidden_layers 2, per its adapter files; the base has "
        "model_type bert, hidden_size 32, num_hidden_layers 4)"
    )
    with pytest.raises(ZooError) as error:
        load("beer")
    assert str(error.value) == expected
    with pytest.raises(ZooError) as error:
        sweep(str(deep), ["beer"], PAIRS)
    assert str(error.value) == expected
    # the card's own record of its base (written at save time) is checked too
    recorded = {"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 3}
    (entry / "card.json").write_text(json.dumps({**card, "base_config": recorded}))
    with pytest.raises(
        ZooError,
        match=r"\(made for model_type bert, hidden_size 32, "
        r"num_hidden_layers 3, per its card; the base has .*layers 2\)$",
    ):
        load("beer")


def test_an_entry_needing_custom_code_is_refused_and_its_code_never_runs(tmp_path, monkeypatch):
    import builtins

    marker = tmp_path / "code-ran"

    def writer(folder):
        (folder / "model").mkdir()
        auto_map = {"AutoConfig": "custom.CustomConfig", "AutoModel": "custom.CustomModel"}
        config = {"model_type": "zoo-custom", "auto_map": auto_map}
        (folder / "model" / "config.json").write_text(json.dumps(config))
        (folder / "model" / "custom.py").write_text(
            f"open({str(marker)!r}, 'w').close()\n"
            "from transformers import PretrainedConfig\n"
            "class CustomConfig(PretrainedConfig):\n"
            "    model_type = 'zoo-custom'\n"
        )

    entry = save_entry(
        writer, "custom", {"mode": "full", "layout": "full", "base_model": "bert-base"}
    )
    # transformers asks on stdin whether to run a model's own code: someone answers yes
    monkeypatch.setattr(builtins, "input", lambda *_: "y")
    with pytest.raises(ZooError) as error:
        load("custom", device="cpu")
    assert str(error.value) == (
        f"{entry / 'model' / 'config.json'}: its 'auto_map' names code to import; a zoo entry "
        "runs no code of its own, refused"
    )
    assert not marker.exists()


def test_card_files_must_be_relative_paths_inside_the_entry(tmp_path):
    from adapter_zoo.zoo.store import sha256_file

    secret = tmp_path / "secret.txt"
    secret.write_text("private")
    path = save_entry(
        lambda folder: (folder / "w.bin").write_bytes(b"abc"),
        "ok", {"mode": "adapter", "base_model": "minilm-l6"},
    )  # fmt: skip
    card = json.loads((path / "card.json").read_text())
    outside = os.path.relpath(secret, path)  # ../../secret.txt
    for name in (str(secret), outside, "./w.bin", "a/../w.bin", "a\\w.bin"):
        files = {**card["files"], name: sha256_file(secret)}
        (path / "card.json").write_text(json.dumps({**card, "files": files}))
        with pytest.raises(ZooError) as error:
            verify_entry(path)
        assert str(error.value) == (
            f"{path / 'card.json'}: file {name!r} is not a relative path inside the entry"
        )


def test_names_resolve_inside_the_zoo_home_only(monkeypatch, tmp_path):
    import shutil

    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "home" / "zoo"))
    entry = save_entry(
        lambda folder: (folder / "w.bin").write_bytes(b"abc"),
        "ok", {"mode": "adapter", "base_model": "minilm-l6"},
    )  # fmt: skip
    for item in entry.iterdir():  # an entry in the zoo home's parent
        shutil.copy(item, tmp_path / "home" / item.name)
    monkeypatch.chdir(tmp_path)
    for name in ("..", "."):
        with pytest.raises(ZooError) as error:
            load(name)
        assert str(error.value) == (
            f"invalid zoo entry name {name!r}: a name is a plain folder name in the zoo "
            f"({zoo_home()}); give an entry folder by its path (./NAME or an absolute path)"
        )
    from adapter_zoo.loading import resolve_entry

    assert resolve_entry("ok") == entry
    assert resolve_entry(str(tmp_path / "home")) == tmp_path / "home"  # an explicit path


def test_save_entry_is_atomic_and_verify_catches_extra_files(tmp_path):
    def failing_writer(folder):
        (folder / "half.bin").write_bytes(b"x")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        save_entry(failing_writer, "broken", {"mode": "adapter", "base_model": "minilm-l6"})
    assert not zoo_home().exists() or os.listdir(zoo_home()) == []
    path = save_entry(
        lambda folder: (folder / "w.bin").write_bytes(b"abc"),
        "ok",
        {"mode": "adapter", "base_model": "minilm-l6"},
    )
    assert verify_entry(path)["files"] == {
        "w.bin": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    }
    (path / "stray.bin").write_bytes(b"!")
    with pytest.raises(ZooError) as error:
        verify_entry(path)
    assert str(error.value) == f"{path / 'stray.bin'}: not listed in the card of 'ok'"
    with pytest.raises(ZooError, match="already exists"):
        save_entry(lambda folder: None, "ok", {"mode": "adapter", "base_model": "minilm-l6"})
    assert [c["name"] for c in list_entries()] == ["ok"]


@pytest.fixture
def umask():
    """Set the process umask for one test, and put the old one back."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


@pytest.mark.parametrize(("mask", "file_mode", "folder_mode"), [(0o022, 0o644, 0o755),
                                                                (0o077, 0o600, 0o700)])  # fmt: skip
def test_every_file_of_an_entry_is_as_readable_as_the_umask_allows(
    parsed_fixture, tiny_bert_path, umask, mask, file_mode, folder_mode
):
    # safetensors writes through a temporary of its own (mode 0600): the adapter and the
    # domain centroid must still come out like the card, as the user's umask says
    umask(mask)
    make_entry(parsed_fixture, tiny_bert_path, "adapter", "beer",
               also=lambda folder: write_centroid(folder, np.ones(4)))  # fmt: skip
    entry = zoo_home() / "beer"
    modes = {p.relative_to(entry).as_posix(): p.stat().st_mode & 0o777 for p in entry.rglob("*")}
    assert {"adapter.safetensors", "domain.safetensors", CARD_FILE, "README.md"} <= set(modes)
    assert modes == dict.fromkeys(modes, file_mode)
    assert entry.stat().st_mode & 0o777 == folder_mode


def _entry_with_card(entry: str, **fields):
    """A verified entry whose card then gets ``fields`` (None: the field is removed)."""
    path = save_entry(
        lambda folder: (folder / "w.bin").write_bytes(b"abc"),
        entry,
        {"mode": "adapter", "base_model": "minilm-l6", "forums": ["beer"]},
    )
    card_file = path / CARD_FILE
    card = json.loads(card_file.read_text())
    for key, value in fields.items():
        if value is None:
            card.pop(key)
        else:
            card[key] = value
    card_file.write_text(json.dumps(card))
    return path, card_file


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"max_length": -1}, "field 'max_length' must be a whole number in [1, 1000000], not -1"),
        (
            {"max_length": "300"},
            "field 'max_length' must be a whole number in [1, 1000000], not \"300\"",
        ),
        ({"base_model": 5}, "field 'base_model' must be a non-empty string, not 5"),
        ({"base_model": ""}, "field 'base_model' must be a non-empty string, not \"\""),
        ({"name": None}, "the card has no 'name' field"),
        ({"name": ["x"]}, "field 'name' must be a non-empty string, not [\"x\"]"),
        (
            {"mode": "trojan"},
            "field 'mode' names no registered model kind ('trojan'; entry cards say one of "
            "adapter, cascade, composite, full, fusion, multitask, soup, tanda)",
        ),
        ({"encoder": "tri"}, "field 'encoder' must be one of bi, cross, composite, not \"tri\""),
        ({"forums": "beer"}, "field 'forums' must be a list of non-empty strings, not \"beer\""),
        ({"forums": [1]}, "field 'forums' must be a list of non-empty strings, not [1]"),
        ({"training": []}, "field 'training' must be an object, not []"),
        ({"files": {"w.bin": 5}}, "field 'files.w.bin' must be a sha256 hex digest, not 5"),
    ],  # fmt: skip
)
def test_a_card_field_of_the_wrong_type_or_value_is_one_line_naming_card_and_field(
    fields, reason, capsys
):
    path, card_file = _entry_with_card("bad", **fields)
    with pytest.raises(ZooError) as error:
        load("bad")
    assert str(error.value) == f"{card_file}: {reason}"
    assert main(["compose", "--name", "c", "--fusion", str(path), "bm25"]) == 2
    assert capsys.readouterr().err == f"adapter-zoo compose: error: {card_file}: {reason}\n"
    assert not (zoo_home() / "c").exists()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("null", "the card must be a JSON object, not null"),
        ("[1, 2]", "the card must be a JSON object, not [1, 2]"),
        ('"card"', 'the card must be a JSON object, not "card"'),
    ],
)
def test_a_card_that_is_not_an_object_is_one_line(text, reason):
    path, card_file = _entry_with_card("bad")
    card_file.write_text(text)
    with pytest.raises(ZooError) as error:
        verify_entry(path)
    assert str(error.value) == f"{card_file}: {reason}"


def test_one_broken_entry_never_stops_list(capsys):
    _entry_with_card("a-good")
    _, null_card = _entry_with_card("b-null")
    null_card.write_text("null")
    _, bad_card = _entry_with_card("c-bad", base_model=5, forums=[1, 2])
    _entry_with_card("d-good")
    listed = list_entries()
    assert [c["name"] for c in listed] == ["a-good", "b-null", "c-bad", "d-good"]
    assert [c.get("broken") for c in listed] == [
        None,
        f"{null_card}: the card must be a JSON object, not null",
        f"{bad_card}: field 'base_model' must be a non-empty string, not 5",
        None,
    ]
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["a-good", "adapter", "minilm-l6", "local", "beer"]
    assert lines[2] == f"{'b-null':<24} {'BROKEN':<10} {listed[1]['broken']}"
    assert lines[3] == f"{'c-bad':<24} {'BROKEN':<10} {listed[2]['broken']}"
    assert lines[4].split() == ["d-good", "adapter", "minilm-l6", "local", "beer"]
    assert main(["list", "--json"]) == 0
    assert [c.get("broken") for c in json.loads(capsys.readouterr().out)] == [
        c.get("broken") for c in listed
    ]
