"""The card field ``kind`` became ``mode`` ("kind" is the registry's ModelKind): entries and
Hub index records written before the rename keep loading, through one rule
(``adapter_zoo.zoo.store.migrate_card_fields``); a card with both is one line naming it."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.cli import main
from adapter_zoo.errors import ZooError
from adapter_zoo.hub import list_remote, push
from adapter_zoo.kinds import kind_for_card
from adapter_zoo.zoo.store import CARD_FILE, read_card, save_entry, verify_entry

PAIRS = [("which glass for a stout", "a nonic pint"), ("why is my beer flat", "dead yeast")]


def as_before_the_rename(folder) -> dict:
    """Rewrite the entry's card as it was written before the rename: ``kind``, no ``mode``."""
    card = json.loads((folder / CARD_FILE).read_text())
    old = {("kind" if key == "mode" else key): value for key, value in card.items()}
    (folder / CARD_FILE).write_text(json.dumps(old, indent=2))
    return old


def test_an_entry_whose_card_says_kind_loads_lists_and_is_the_same_model_kind(
    kit, tiny_bert_path, capsys
):
    folder = kit.make_adapter_entry(tiny_bert_path, "beer", 1, ["beer.stackexchange.com"])
    card = read_card(folder)
    expected = adapter_zoo.load("beer", device="cpu").score(PAIRS)
    old = as_before_the_rename(folder)
    assert old["kind"] == "adapter" and "mode" not in old

    ranker = adapter_zoo.load("beer", device="cpu")
    np.testing.assert_array_equal(ranker.score(PAIRS), expected)
    assert ranker.card["mode"] == "adapter" and "kind" not in ranker.card
    migrated = verify_entry(folder)
    assert migrated == card and list(migrated) == list(card)  # same fields, same order
    assert kind_for_card(migrated).name == kind_for_card(card).name == "cross-adapter"

    assert main(["list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("beer "))
    assert line.split()[:3] == ["beer", "adapter", str(tiny_bert_path)]
    assert main(["list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["mode"] == "adapter" and "broken" not in listed and "kind" not in listed


def test_a_card_with_both_mode_and_kind_is_one_line_naming_it(capsys):
    folder = save_entry(lambda f: (f / "w.bin").write_bytes(b"0"), "both", {"mode": "adapter",
                        "base_model": "minilm-l6"})  # fmt: skip
    card = json.loads((folder / CARD_FILE).read_text())
    (folder / CARD_FILE).write_text(json.dumps({**card, "kind": "full"}))
    message = (
        f"{folder / CARD_FILE}: the card has both 'mode' and the old 'kind' field; keep only 'mode'"
    )
    with pytest.raises(ZooError) as error:
        read_card(folder)
    assert str(error.value) == message
    assert main(["list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("both "))
    assert line.split()[1] == "BROKEN" and line.endswith(message)


def test_a_card_with_neither_names_mode():
    folder = save_entry(lambda f: None, "none", {"mode": "adapter", "base_model": "minilm-l6"})
    card = json.loads((folder / CARD_FILE).read_text())
    del card["mode"]
    (folder / CARD_FILE).write_text(json.dumps(card))
    with pytest.raises(ZooError, match=r"card.json: the card has no 'mode' field$"):
        read_card(folder)


def _index(monkeypatch, tmp_path, entries: list[dict]) -> None:
    """An index.json as the Hub would serve it (through the Hugging Face cache)."""
    import huggingface_hub

    file = tmp_path / "index.json"
    file.write_text(json.dumps({"version": 1, "entries": entries}))
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda *args, **kwargs: str(file))


RECORD = {"name": "beer", "repo": "me/beer", "revision": "0" * 40, "base_model": "minilm-l6",
          "forums": [], "size": 1, "scores": {}}  # fmt: skip


def test_an_index_written_before_the_rename_lists_with_mode(monkeypatch, tmp_path):
    _index(monkeypatch, tmp_path, [{**RECORD, "kind": "adapter", "encoder": "bi"}])
    assert list_remote() == [{**RECORD, "mode": "adapter", "encoder": "bi"}]
    _index(monkeypatch, tmp_path, [{**RECORD, "mode": "adapter"}])
    assert list_remote() == [{**RECORD, "mode": "adapter"}]


def test_an_index_record_with_both_fields_is_one_line_naming_it(monkeypatch, tmp_path):
    _index(monkeypatch, tmp_path, [{**RECORD, "kind": "adapter", "mode": "full"}])
    with pytest.raises(ZooError, match=r"/index.json: zoo index entry 0: the card has both "):
        list_remote()


def test_push_of_an_entry_whose_card_says_kind_sends_mode(upload_standin, entries, tmp_path):
    folder = tmp_path / "beer-old"
    shutil.copytree(entries["beer"], folder)
    as_before_the_rename(folder)
    push(folder, "me/beer-old")
    pushed = json.loads(upload_standin.sent[0]["files"]["card.json"])
    assert pushed["mode"] == "adapter" and "kind" not in pushed
