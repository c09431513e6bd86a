"""Every recipe runs end to end in smoke mode, and so does the quickstart.

Smoke mode swaps the paper's data and model for the shipped forums and a tiny random BERT,
so these runs exercise the real commands (parse, train, build-benchmark, evaluate,
leaderboard) in seconds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from recipes import load_recipe, recipe_dir, run_recipe
from recipes.runner import builtin_variables, plan

RECIPES = sorted(recipe_dir().glob("*.toml"))
PLAN_WORK = Path("/smoke-work")  # plans are compared, never run, in this folder


def smoke_commands(path: Path) -> list[list[str]]:
    """The recipe's smoke-mode command lines, the entries it names (each ``--name``) renamed
    ``<E0>``, ``<E1>``, ... in order of first appearance, wherever they appear."""
    commands = [argv for _, argv in plan(load_recipe(path), smoke=True, work=PLAN_WORK,
                                         builtins=builtin_variables(PLAN_WORK))]  # fmt: skip
    names: list[str] = []
    for argv in commands:
        names += [argv[i + 1] for i, word in enumerate(argv[:-1])
                  if word == "--name" and argv[i + 1] not in names]  # fmt: skip
    patterns = [(re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])"), f"<E{number}>")
                for number, name in enumerate(names)]  # fmt: skip
    patterns.sort(key=lambda pattern: -len(pattern[0].pattern))  # "mt-all-extended" first

    def renamed(word: str) -> str:
        for pattern, placeholder in patterns:
            word = pattern.sub(placeholder, word)
        return word

    return [[renamed(word) for word in argv] for argv in commands]


def twins() -> dict[str, str]:
    """Recipe → the recipe whose smoke run is the same commands but for its entries' names
    (MultiCQA's three MT sets, its two AF sets, TANDA's two benchmarks: in smoke mode the
    paper's forum sets and benchmarks become the same shipped forums). A run of the first
    of each group shows the rest would run the same."""
    first: dict[str, str] = {}
    out = {}
    for path in RECIPES:
        key = repr(smoke_commands(path))
        out[path.stem] = first.setdefault(key, path.stem)
    return {name: same for name, same in out.items() if name != same}


TWINS = twins()
# shipped_zoo's smoke run is tests/recipes/test_shipped_zoo.py's (the same checks and more):
# one run of it per suite; a twin's run is its first recipe's
SMOKED = [path for path in RECIPES if path.stem != "shipped_zoo" and path.stem not in TWINS]


def test_there_is_a_recipe_per_paper_experiment():
    names = {path.stem for path in RECIPES}
    assert {
        "multicqa_adapters", "multicqa_mt_all", "multicqa_mt_balanced", "multicqa_mt_largest",
        "multicqa_af_balanced", "multicqa_af_largest", "multicqa_indomain_bert",
        "tanda_wikiqa", "tanda_trecqa", "cascade_alpha_sweep",
    } <= names  # fmt: skip


def test_twin_recipes_differ_in_their_entries_names_alone():
    assert TWINS == {
        "multicqa_af_largest": "multicqa_af_balanced",
        "multicqa_mt_balanced": "multicqa_mt_all",
        "multicqa_mt_largest": "multicqa_mt_all",
        "tanda_wikiqa": "tanda_trecqa",
    }
    # ... and are different recipes: their full runs name other forum sets or benchmarks
    for twin, same in TWINS.items():
        assert load_recipe(recipe_dir() / f"{twin}.toml").variables != (
            load_recipe(recipe_dir() / f"{same}.toml").variables
        )
    # the renaming is of entries alone: a recipe's other words are compared as they are
    assert "--name <E0>" in " ".join(smoke_commands(recipe_dir() / "multicqa_mt_all.toml")[2])
    assert "bm25" in repr(smoke_commands(recipe_dir() / "multicqa_mt_all.toml"))


@pytest.mark.slow
@pytest.mark.parametrize("path", SMOKED, ids=[p.stem for p in SMOKED])
def test_recipe_runs_in_smoke_mode(path, tmp_path):
    recipe = load_recipe(path)
    assert recipe.published["source"]
    work = run_recipe(recipe, smoke=True, work=tmp_path / "work", log=lambda _: None)
    leaderboard = work / "leaderboard"
    assert (leaderboard / "leaderboard.md").read_text().strip()
    records = [
        json.loads(line)
        for line in (work / "results" / "results.jsonl").read_text().splitlines()
        if line.strip()
    ]
    assert records and all(0.0 <= r["metrics"]["map"] <= 1.0 for r in records)


@pytest.mark.slow
def test_quickstart_smoke_writes_every_output_and_trains_in_its_own_zoo(tmp_path, capsys):
    import os

    from adapter_zoo.zoo import zoo_home
    from adapter_zoo.zoo.store import save_entry
    from recipes.quickstart import quickstart

    users = save_entry(
        lambda folder: (folder / "adapter.safetensors").write_bytes(b"a real adapter"),
        "beer", {"mode": "adapter", "base_model": "minilm-l6"},
    )  # fmt: skip
    before = {p.name: p.read_bytes() for p in users.iterdir()}
    home = os.environ["ADAPTER_ZOO_HOME"]
    out = quickstart(tmp_path / "qs", smoke=True)
    assert {p.name: p.read_bytes() for p in users.iterdir()} == before
    assert os.environ["ADAPTER_ZOO_HOME"] == home and zoo_home() == users.parent
    assert json.loads((out / "zoo" / "beer" / "card.json").read_text())["name"] == "beer"
    printed = capsys.readouterr().out
    assert printed.rstrip().endswith(f"Everything is in {out}")  # the last line, stages timed
    assert "beer.stackexchange.com (its own forum):" in printed
    assert "bicycles.meta.stackexchange.com (an unseen forum (zero-shot)):" in printed
    for model in ("beer", "beer-cross", "beer-fusion"):
        assert f"\n    {model} 0." in printed  # a MAP for each zoo model, on both sets
    cards = {p.name: json.loads((p / "card.json").read_text()) for p in (out / "zoo").iterdir()
             if (p / "card.json").is_file()}  # fmt: skip
    assert {n: c.get("encoder") for n, c in cards.items()} == {
        "beer": "bi", "beer-cross": "cross", "beer-fusion": "composite"}  # fmt: skip
    record = json.loads((out / "quickstart.json").read_text())
    assert record["smoke"] is True
    stages = ["parse", "train bi-encoder", "train cross-encoder", "build sets", "compose",
              "evaluate"]  # fmt: skip
    assert list(record["stage_seconds"]) == stages
    assert all(record["stage_seconds"][s] >= 0 for s in stages)
    for stage in stages:  # each stage's time is printed as it ends
        assert f"   ({stage}: " in printed
    assert (out / "leaderboard" / "leaderboard.md").exists()
    assert (out / "leaderboard" / "leaderboard.html").exists()
    assert sorted(p.name for p in (out / "parsed").iterdir()) == [
        "beer.stackexchange.com", "bicycles.meta.stackexchange.com"]  # fmt: skip


def test_quickstart_refuses_an_output_folder_it_did_not_write(tmp_path, capsys):
    from adapter_zoo.cli import main

    out = tmp_path / "experiments"
    (out / "results").mkdir(parents=True)
    (out / "results" / "results.jsonl").write_text('{"model": "months of evaluations"}\n')
    before = sorted((p.relative_to(out), p.is_file() and p.read_bytes()) for p in out.rglob("*"))
    for argv in (["--smoke"], []):
        assert main(["quickstart", "--out", str(out), *argv]) == 2
        assert capsys.readouterr().err == (
            f"adapter-zoo quickstart: error: {out}: already exists and is not a quickstart "
            "output written by adapter-zoo; move it away or pass --overwrite\n"
        )
    after = sorted((p.relative_to(out), p.is_file() and p.read_bytes()) for p in out.rglob("*"))
    assert after == before


def test_quickstart_never_replaces_a_zoo_entry_it_did_not_train(tmp_path, capsys):
    from adapter_zoo.cli import main
    from adapter_zoo.zoo.store import save_entry
    from recipes.quickstart import _refuse_entries_of_others

    users = save_entry(
        lambda folder: (folder / "adapter.safetensors").write_bytes(b"weeks of training"),
        "beer-cross", {"mode": "adapter", "base_model": "minilm-l6",
                       "training": {"data": str(tmp_path / "my-parse")}},
    )  # fmt: skip
    before = {p.name: p.read_bytes() for p in users.iterdir()}
    out = tmp_path / "qs"
    assert main(["quickstart", "--out", str(out), "--max-steps", "1"]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo quickstart: error: zoo entry 'beer-cross' at {users} was not trained by "
        f"a quickstart writing to {out}; the quickstart replaces only its own entries: move it "
        "away or pass --overwrite\n"
    )
    assert {p.name: p.read_bytes() for p in users.iterdir()} == before
    assert not out.exists()  # refused before any work
    # an entry an earlier quickstart into the same folder trained is its own to replace
    save_entry(lambda folder: None, "beer-cross", {"mode": "adapter", "base_model": "minilm-l6",
               "training": {"data": str(out.resolve() / "parsed")}}, overwrite=True)  # fmt: skip
    _refuse_entries_of_others(out.resolve())
