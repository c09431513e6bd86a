"""Every recipe runs end to end in smoke mode, and so does the quickstart.

Smoke mode swaps the paper's data and model for the shipped forums and a tiny random BERT,
so these runs exercise the real commands (parse, train, build-benchmark, evaluate,
leaderboard) in seconds.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from adapter_zoo.errors import ZooError
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

    from adapter_zoo.adapt.threads import EVALUATION_SPLIT
    from adapter_zoo.ranker.model import BASE_MODEL_ALIASES
    from adapter_zoo.zoo import zoo_home
    from adapter_zoo.zoo.store import save_entry
    from recipes.quickstart import ADAPTED, OTHER_FORUM, quickstart
    from stackexchange.store import read_dataset

    users = save_entry(
        lambda folder: (folder / "adapter.safetensors").write_bytes(b"a real adapter"),
        "beer", {"mode": "adapter", "base_model": "minilm-l6"},
    )  # fmt: skip
    before = {p.name: p.read_bytes() for p in users.iterdir()}
    home = os.environ["ADAPTER_ZOO_HOME"]
    aliases = dict(BASE_MODEL_ALIASES)
    out = quickstart(tmp_path / "qs", smoke=True)
    assert {p.name: p.read_bytes() for p in users.iterdir()} == before
    assert os.environ["ADAPTER_ZOO_HOME"] == home and zoo_home() == users.parent
    assert aliases == BASE_MODEL_ALIASES  # the smoke's base name is gone with the run
    printed = capsys.readouterr().out
    assert printed.rstrip().endswith(f"Everything is in {out}")  # the last line, stages timed
    # the steps in order, each announced, then timed as it ends
    stages = ["parse", "zoo", "adapt", "build sets", "evaluate"]
    marks = [printed.index(f"\n== {n}/5 ") for n in range(1, 6)]
    marks += [printed.index(f"   ({stage}: ") for stage in stages]
    assert marks[:5] == sorted(marks[:5])
    assert all(marks[n] < marks[5 + n] < (marks + [len(printed)])[n + 1] for n in range(4))
    record = json.loads((out / "quickstart.json").read_text())
    assert record["smoke"] is True and list(record["stage_seconds"]) == stages
    assert all(record["stage_seconds"][s] >= 0 for s in stages)

    cards = {p.name: json.loads((p / "card.json").read_text()) for p in (out / "zoo").iterdir()
             if (p / "card.json").is_file()}  # fmt: skip
    assert cards["beer"]["encoder"] == "bi" and cards["beer"]["name"] == "beer"
    adapted = cards[ADAPTED]["adapt"]
    kept = out / "cards" / ADAPTED / "card.json"  # the output folder holds the adapted card
    assert kept.read_bytes() == (out / "zoo" / ADAPTED / "card.json").read_bytes()
    assert sorted(p.name for p in (out / "cards").iterdir()) == [ADAPTED]
    # the zoo stage names the zoo adapt gets: the smoke's stand-in for the shipped entries
    assert "\n   1 entries: beer\n" in printed[marks[1] : marks[2]]
    assert not [name for name in cards if "--" in name]  # adapt's candidates are removed
    assert cards[ADAPTED]["request"]["zoo"] == ["beer"]
    # adapt read bicycles.meta without its test questions: every other question, no more
    questions = read_dataset(out / "parsed" / OTHER_FORUM / "questions", ValueError)
    splits = questions.data.table.column("split").to_pylist()
    assert adapted["target"]["threads"] == len(splits) - splits.count(EVALUATION_SPLIT) > 0
    # its card's decision and candidates are printed in the adapt step
    step = printed[marks[2] : marks[3]]
    assert f"   {ADAPTED}: {adapted['decision']['chosen']} -> " in step
    for candidate in adapted["candidates"]:
        assert f"     {candidate} " in step

    # the verdict: the unseen forum's set and its size, the adapted entry against the
    # zero-shot base and the fused one
    verdict = printed[printed.index("What the zoo gained") :]
    gains = record["verdict"]
    assert {host: list(row["gains"]) for host, row in gains.items()} == {OTHER_FORUM: [ADAPTED]}
    assert f"  {OTHER_FORUM} (adapted from its own posts), " in verdict
    for host, row in gains.items():
        assert f"  {host} (" in verdict and f"), {row['questions']} test questions:" in verdict
        assert row["questions"] > 0 and len(row["map"]) == 4  # BM25, base, base + BM25, adapted
        for model in row["gains"]:
            assert f"\n    {model}: " in verdict
            for test in row["gains"][model].values():
                low, high = test["interval"]
                assert low <= test["delta"] <= high
                assert f"{test['delta']:+.3f} [{low:+.3f}, {high:+.3f}] over " in verdict
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


def test_quickstart_never_replaces_a_zoo_entry_it_did_not_write(tmp_path, capsys):
    from adapter_zoo.cli import main
    from adapter_zoo.zoo.store import save_entry
    from recipes.quickstart import ADAPTED, ADAPTED_MEMBER, OTHER_FORUM, _refuse_entries_of_others

    out = tmp_path / "qs"
    others = {
        ADAPTED: {"request": {"target": str(tmp_path / "my-parse" / OTHER_FORUM)}},
        ADAPTED_MEMBER: {"adapt_member_of": "my-adapted"},
        "beer": {"training": {"data": str(tmp_path / "my-parse")}},  # the smoke's stand-in
    }
    for name, fields in others.items():
        users = save_entry(
            lambda folder: (folder / "adapter.safetensors").write_bytes(b"weeks of training"),
            name, {"mode": "adapter", "base_model": "minilm-l6", **fields},
        )  # fmt: skip
        before = {p.name: p.read_bytes() for p in users.iterdir()}
        if name == "beer":  # only the smoke writes beer (into its own zoo): a user's is kept
            with pytest.raises(ZooError, match="zoo entry 'beer' at .* was not written by"):
                _refuse_entries_of_others(out.resolve(), smoke=True)
            _refuse_entries_of_others(out.resolve())
            continue
        assert main(["quickstart", "--out", str(out), "--max-steps", "1"]) == 2
        assert capsys.readouterr().err == (
            f"adapter-zoo quickstart: error: zoo entry {name!r} at {users} was not written by "
            f"a quickstart writing to {out}; the quickstart replaces only its own entries: "
            "move it away or pass --overwrite\n"
        )
        assert {p.name: p.read_bytes() for p in users.iterdir()} == before
        assert not out.exists()  # refused before any work
        # an entry an earlier quickstart into the same folder wrote is its own to replace
        ours = {
            ADAPTED: {"request": {"target": str(out.resolve() / "parsed" / OTHER_FORUM)}},
            ADAPTED_MEMBER: {"adapt_member_of": ADAPTED},
        }[name]
        save_entry(lambda folder: None, name, {"mode": "adapter", "base_model": "minilm-l6",
                   **ours}, overwrite=True)  # fmt: skip
        _refuse_entries_of_others(out.resolve())


def test_the_quickstarts_zoo_is_the_shipped_entries_that_never_saw_the_unseen_forum(
    tmp_path, monkeypatch
):
    from adapter_zoo.zoo.store import save_entry
    from recipes.quickstart import OTHER_FORUM, shipped_zoo

    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "build"))
    for name, forums in (("beer", ["beer.stackexchange.com"]), ("ai", ["ai.stackexchange.com"]),
                         ("bicycles-meta", [OTHER_FORUM]),
                         ("zoo-multitask", ["beer.stackexchange.com", OTHER_FORUM])):  # fmt: skip
        mode = "multitask" if "multitask" in name else "adapter"
        card = {"mode": mode, "encoder": "bi", "base_model": "minilm-l6", "forums": forums}
        save_entry(lambda folder: None, name, card)
    shipped = tmp_path / "shipped"
    shutil.copytree(tmp_path / "build", shipped, ignore=shutil.ignore_patterns(".*"))
    monkeypatch.setenv("ADAPTER_ZOO_SHIPPED", str(shipped))
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "zoo"))
    save_entry(lambda folder: None, "mine", {"mode": "adapter", "encoder": "bi",
               "base_model": "minilm-l6", "forums": ["ai.stackexchange.com"]})  # fmt: skip
    assert shipped_zoo(OTHER_FORUM) == ["ai", "beer"]  # the user's own entries are not shipped
    shutil.rmtree(shipped)
    with pytest.raises(ZooError, match=f"quickstart: no shipped zoo entry to adapt {OTHER_FORUM}"):
        shipped_zoo(OTHER_FORUM)


def test_a_quickstart_whose_adapt_trained_nothing_says_how_to_give_it_more_time(capsys):
    from adapter_zoo.adapt.candidate_training import NO_ROOM_TO_TRAIN
    from recipes.quickstart import OTHER_FORUM, _say_what_more_time_buys

    starved = {"training": {"skipped": NO_ROOM_TO_TRAIN}}  # the adapted card's adapt record
    _say_what_more_time_buys(starved, 300.0)
    assert capsys.readouterr().out == (
        f"   The job's 5 minutes left adapt too little to train {OTHER_FORUM}'s own adapter: "
        "`adapter-zoo quickstart --budget 8` gives it 3 minutes more.\n"
    )
    trained = {"training": {"runs": {"own": {"steps_run": 40}}}}
    no_pairs = {"training": {"skipped": "fewer than 2 training pairs of any kind"}}
    for record, job_seconds in ((trained, 300.0), (no_pairs, 300.0), (starved, None)):
        _say_what_more_time_buys(record, job_seconds)
    assert capsys.readouterr().out == ""  # trained, more time would not help, or unbudgeted
