"""Every reader of a card goes through the store (``read_card``/``find_card``, the file named
``CARD_FILE``): a broken card is one line naming its file, or BROKEN in ``list``, never a
traceback."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from adapter_zoo.cli import main
from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.store import CARD_FILE, check_card, find_card, save_entry, zoo_home

ROOT = Path(__file__).resolve().parents[3]
CARD = {"mode": "adapter", "base_model": "minilm-l6"}


def _entry(name: str, card_text: str | None = None) -> Path:
    path = save_entry(lambda f: (f / "w.bin").write_bytes(b"0"), name, CARD)
    if card_text is not None:
        (path / CARD_FILE).write_text(card_text)
    return path


def test_no_module_names_the_card_file_but_the_store():
    """A card is found by ``CARD_FILE`` and read by the store's reader; a module spelling
    ``"card.json"`` itself (outside its docstrings) is reading it by hand."""
    found = []
    for package in ("adapter_zoo", "benchmarks", "recipes", "stackexchange"):
        for file in (ROOT / package).rglob("*.py"):
            if file.relative_to(ROOT).as_posix() == "adapter_zoo/zoo/store.py":
                continue
            tree = ast.parse(file.read_text())
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
                and node.body
                and isinstance(node.body[0], ast.Expr)
            }
            found += [
                f"{file.relative_to(ROOT)}:{node.lineno}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "card.json" in node.value
                and id(node) not in docstrings
            ]
    assert found == []


@pytest.mark.parametrize(
    "text",
    ["null", "[1]", '"a card"', "3", '{"name": ', "\xff", "[" * 100_000, '{"name": "\\udcff"}'],
    ids=["null", "list", "string", "number", "truncated", "latin-1", "deep", "surrogate"],
)
def test_list_shows_an_entry_whose_card_is_no_object_as_broken(text, capsys):
    _entry("good")
    bad = _entry("odd", text)
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    odd = next(line for line in lines if line.startswith("odd "))
    assert odd.split()[1] == "BROKEN" and str(bad / CARD_FILE) in odd
    assert next(line for line in lines if line.startswith("good ")).split()[1] == "adapter"
    assert main(["list", "--json"]) == 0
    cards = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    assert "broken" in cards["odd"] and "broken" not in cards["good"]


def _board_results(tmp_path: Path, model: str) -> Path:
    from benchmarks.results import append_result

    record = {"split": "test", "adapters": [], "mode": "zero-shot", "main_metric": "map",
              "metrics": {"map": 0.5, "mrr": 0.6, "p@1": 0.4, "ndcg@10": 0.55},
              "benchmark": "wikiqa", "model": model}  # fmt: skip
    append_result(tmp_path / "results", record)
    return tmp_path / "results"


@pytest.mark.parametrize(
    "text", ['{"name": ', "null", json.dumps({**CARD, "name": "x", "files": {},
                                              "fusion_weights": {"0": [1, 2]}})],
)  # fmt: skip
def test_leaderboard_over_an_entry_with_a_broken_card_is_one_line(text, tmp_path, capsys):
    entry = _entry("fused", text)
    for model in ("fused", str(entry)):
        results = _board_results(tmp_path / model.replace("/", "_"), model)
        assert main(["leaderboard", str(results), "--out", str(tmp_path / "board")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"adapter-zoo leaderboard: error: {entry / CARD_FILE}: ")
        assert err.count("\n") == 1


def test_leaderboard_reads_fusion_weights_from_a_good_card(tmp_path):
    import benchmarks

    weights = {"0": {"beer": 0.7, "travel": 0.3}}
    save_entry(lambda f: None, "fused", {**CARD, "fusion_weights": weights})
    written = benchmarks.write_leaderboard(_board_results(tmp_path, "fused"), tmp_path / "b")
    assert "fusion_fused.png" in [p.name for p in written]


def test_find_card_is_none_without_an_entry_and_checks_one_that_exists():
    assert find_card("bm25") is None and find_card("fusion:a+b") is None
    assert find_card(".") is None and find_card("no-such") is None
    assert find_card("ok") is None
    path = _entry("ok")
    assert find_card("ok")["name"] == "ok" and find_card(path)["name"] == "ok"
    (path / CARD_FILE).write_text("null")
    with pytest.raises(ZooError, match=rf"^{zoo_home() / 'ok' / CARD_FILE}: the card must be"):
        find_card("ok")


@pytest.mark.parametrize(
    "weights, field",
    [([0.5], "fusion_weights"), ({"0": 1.0}, "fusion_weights.0"),
     ({"0": {"a": "x"}}, "fusion_weights.0"), ({"0": {"a": True}}, "fusion_weights.0")],
)  # fmt: skip
def test_a_card_s_fusion_weights_are_layers_of_numbers(weights, field):
    card = {**CARD, "name": "x", "files": {}, "fusion_weights": weights}
    with pytest.raises(ZooError, match=rf"^c.json: field '{field}' must be an object of layers"):
        check_card(card, "c.json")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * 100_000, "nested too deeply"),
        ('{"name": "\\udcff"}', "holds \\udcff, a lone surrogate escape that is no text"),
    ],
    ids=["deep", "surrogate"],
)
def test_a_card_json_cannot_hold_is_one_line_naming_it_for_every_reader(text, reason, capsys):
    """Deep nesting was a RecursionError traceback from ``list`` and every reader; a lone
    surrogate escape a name no UTF-8 writer takes: both are what ``read_card`` refuses."""
    bad = _entry("odd", text)
    assert main(["compose", "--name", "c", "--fusion", "odd", "bm25"]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo compose: error: {bad / CARD_FILE}: not valid JSON ({reason})\n"
    )
    assert find_card("c") is None
