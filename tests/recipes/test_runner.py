"""The recipe runner: variable expansion, foreach, and the errors a recipe author sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from recipes import RecipeError, load_recipe, run_recipe
from recipes.runner import expand, plan

RECIPE = """
name = "demo"
paper = "a paper, Table 1"
description = "demo"
hardware = "none"
[published]
source = "Table 1"
scores = {wikiqa = {map = 0.5}}
[vars]
forums = ["beer.stackexchange.com", "askubuntu.com"]
data = "{work}/parsed"
base = "bert-base"
[smoke.vars]
base = "{tiny_base}"
[[step]]
run = "parse {shipped}/beer.stackexchange.com.7z --out {data}"
[[step]]
foreach = "forum in {forums}"
run = "train --mode adapter --data {data} --forums {forum} --name {forum_name} --base {base}"
[[step]]
run = "train --mode multitask --data {data} --forums {forums} --name mt"
"""


def write(tmp_path: Path, text: str = RECIPE) -> Path:
    path = tmp_path / "demo.toml"
    path.write_text(text)
    return path


def test_plan_expands_lists_foreach_and_nested_variables(tmp_path):
    recipe = load_recipe(write(tmp_path))
    commands = plan(
        recipe, smoke=False, work=Path("/w"), builtins={"shipped": "/s", "tiny_base": "/t"}
    )
    assert [argv for _, argv in commands] == [
        ["parse", "/s/beer.stackexchange.com.7z", "--out", "/w/parsed"],
        ["train", "--mode", "adapter", "--data", "/w/parsed", "--forums", "beer.stackexchange.com",
         "--name", "beer", "--base", "bert-base"],
        ["train", "--mode", "adapter", "--data", "/w/parsed", "--forums", "askubuntu.com",
         "--name", "askubuntu", "--base", "bert-base"],
        ["train", "--mode", "multitask", "--data", "/w/parsed", "--forums",
         "beer.stackexchange.com", "askubuntu.com", "--name", "mt"],
    ]  # fmt: skip
    assert [label for label, _ in commands][1] == "step 2 [beer.stackexchange.com]"


def test_smoke_variables_override_the_full_run(tmp_path):
    recipe = load_recipe(write(tmp_path))
    commands = plan(
        recipe, smoke=True, work=Path("/w"), builtins={"shipped": "/s", "tiny_base": "/t"}
    )
    assert commands[1][1][-2:] == ["--base", "/t"]


def test_unknown_variable_names_file_and_step(tmp_path):
    path = write(tmp_path, RECIPE.replace("--name mt", "--name {nope}"))
    with pytest.raises(RecipeError) as error:
        plan(
            load_recipe(path),
            smoke=False,
            work=Path("/w"),
            builtins={"shipped": "/s", "tiny_base": "/t"},
        )
    assert str(error.value) == f"{path}: step 3: unknown variable {{nope}}"


def test_missing_keys_and_bad_steps_are_reported(tmp_path):
    path = write(tmp_path, RECIPE.replace('hardware = "none"\n', ""))
    with pytest.raises(RecipeError, match=r"demo.toml: missing required key\(s\) hardware$"):
        load_recipe(path)
    path = write(tmp_path, RECIPE.replace('run = "train --mode multitask', 'cmd = "x', 1))
    with pytest.raises(RecipeError, match=r"demo.toml: step 3: unknown key\(s\) \['cmd'\]$"):
        load_recipe(path)


def test_a_failing_step_stops_the_run_and_names_the_command(tmp_path):
    recipe = load_recipe(write(tmp_path))
    seen = []

    def execute(argv):
        seen.append(argv[0])
        return 2 if argv[0] == "train" else 0

    with pytest.raises(RecipeError) as error:
        run_recipe(recipe, work=tmp_path / "w", execute=execute, log=lambda _: None)
    assert seen == ["parse", "train"]
    assert "step 2 [beer.stackexchange.com] failed with exit code 2: adapter-zoo train" in str(
        error.value
    )


def test_expand_keeps_quoted_arguments_whole():
    assert expand('evaluate --note "two words" --x {a}', {"a": 1}, where="w") == [
        "evaluate", "--note", "two words", "--x", "1"]  # fmt: skip


def test_foreach_over_two_lists_runs_every_combination(tmp_path):
    text = (
        RECIPE
        + '[[step]]\nforeach = "forum in {forums}, m in {metrics}"\nrun = "x {forum_name} {m}"\n'
    )
    text = text.replace('base = "bert-base"\n', 'base = "bert-base"\nmetrics = ["map", "mrr"]\n', 1)
    commands = plan(
        load_recipe(write(tmp_path, text)),
        smoke=False,
        work=Path("/w"),
        builtins={"shipped": "/s", "tiny_base": "/t"},
    )
    assert [argv for _, argv in commands[-4:]] == [
        ["x", "beer", "map"], ["x", "beer", "mrr"], ["x", "askubuntu", "map"], ["x", "askubuntu", "mrr"]]  # fmt: skip


VERIFIED = """
name = "checked"
paper = "a paper, Table 2"
description = "a run whose record is checked against the paper"
hardware = "none"
[published]
source = "Table 2"
scores = {wikiqa = {map = 0.5, mrr = 0.6}}
expected = {wikiqa = {map = 0.495}}
record = {mode = "finetune-{how}"}
tolerance = 0.02
[vars]
how = "tanda"
[[step]]
run = "recipes"
"""


def test_verify_prints_ok_or_fail_per_metric_and_fails_the_run(tmp_path, capsys):
    """--verify: the record the recipe names (the latest matching one) against the published
    and the expected numbers, one line per metric; any FAIL makes the exit status 1."""
    from adapter_zoo.cli import main
    from benchmarks.results import append_result

    path = write(tmp_path, VERIFIED)
    work = tmp_path / "work"
    base = {"benchmark": "wikiqa", "split": "test", "model": "bert-base", "adapters": []}
    metrics = {"map": 0.1, "mrr": 0.1, "p@1": 0.1, "ndcg@10": 0.1}
    append_result(work / "results", {**base, "mode": "finetune-tanda", "metrics": metrics})
    append_result(work / "results", {**base, "mode": "finetune-tanda",
                                     "metrics": {**metrics, "map": 0.51, "mrr": 0.5}})  # fmt: skip
    append_result(work / "results", {**base, "mode": "finetune-full",
                                     "metrics": {**metrics, "map": 0.5, "mrr": 0.6}})  # fmt: skip
    assert main(["run", str(path), "--work", str(work), "--verify"]) == 1
    lines = capsys.readouterr().out.splitlines()[-3:]
    assert lines == [
        "wikiqa map published 0.5000 run 0.5100 (tolerance 0.02) OK",
        "wikiqa mrr published 0.6000 run 0.5000 (tolerance 0.02) FAIL",
        "wikiqa map expected 0.4950 run 0.5100 (tolerance 0.02) OK",
    ]
    # no record of the run matches: every metric is missing, and fails
    (work / "results" / "results.jsonl").unlink()
    append_result(work / "results", {**base, "mode": "zero-shot", "metrics": metrics})
    assert main(["run", str(path), "--work", str(work), "--verify"]) == 1
    assert (
        "wikiqa map published 0.5000 run missing (tolerance 0.02) FAIL" in capsys.readouterr().out
    )


def test_verify_of_the_shipped_zoo_compares_the_retrained_entries_with_the_shipped_cards(
    tmp_path, monkeypatch
):
    """--verify of shipped_zoo: each shipped entry's test MAP (its card) against the run's
    record of the entry of that name on that forum's set; a smoke run checks none."""
    import json

    from benchmarks.results import append_result
    from recipes import find_recipe
    from recipes.verify import format_rows, verify

    shipped = tmp_path / "shipped"
    monkeypatch.setenv("ADAPTER_ZOO_SHIPPED", str(shipped))
    for name, host, made_by in (("ai", "ai.stackexchange.com", "shipped_zoo"),
                                ("augur", "augur.stackexchange.com", "shipped_zoo"),
                                ("mine", "beer.stackexchange.com", "another")):  # fmt: skip
        (shipped / name).mkdir(parents=True)
        card = {"name": name, "mode": "adapter", "encoder": "bi", "base_model": "minilm-l6",
                "files": {}, "shipped": {"recipe": made_by},
                "test_scores": {host: {"map": 0.8}}}  # fmt: skip
        (shipped / name / "card.json").write_text(json.dumps(card))
    recipe = load_recipe(find_recipe("shipped_zoo"))
    work = tmp_path / "work"
    record = {"split": "test", "adapters": [], "mode": "zero-shot", "main_metric": "map"}
    for model, forum, value in (
        ("ai", "ai", 0.815),
        ("augur", "ai", 0.8),
        ("augur", "augur", 0.83),
    ):
        append_result(work / "results", {**record, "model": model, "metrics": {"map": value},
                      "benchmark": f"local:{work / 'bench' / forum}"})  # fmt: skip
    checks = verify(recipe, work)
    assert format_rows(checks).splitlines() == [
        "ai on ai.stackexchange.com map shipped 0.8000 run 0.8150 (tolerance 0.02) OK",
        "augur on augur.stackexchange.com map shipped 0.8000 run 0.8300 (tolerance 0.02) FAIL",
    ]
    (shipped / "ai" / "card.json").write_text(json.dumps({**json.loads(
        (shipped / "ai" / "card.json").read_text()), "test_scores": {"x.stackexchange.com": {
        "map": 0.8}}}))  # fmt: skip
    assert "ai on x.stackexchange.com map shipped 0.8000 run missing" in format_rows(
        verify(recipe, work)
    )
    assert verify(recipe, work, smoke=True) == []  # the smoke's tiny model is not shipped


def test_the_tanda_recipes_name_the_record_that_reproduces_the_paper(tmp_path):
    from benchmarks.results import append_result
    from recipes import find_recipe
    from recipes.verify import verify

    for name, benchmark in (("tanda_wikiqa", "wikiqa"), ("tanda_trecqa", "trecqa")):
        recipe = load_recipe(find_recipe(name))
        work = tmp_path / name
        scores = recipe.published["scores"][benchmark]
        record = {"benchmark": benchmark, "split": "test", "model": "bert-base", "adapters": [],
                  "mode": "finetune-tanda", "metrics": dict(scores)}  # fmt: skip
        append_result(work / "results", record)
        assert all(check.ok for check in verify(recipe, work))


def test_smoke_refuses_a_work_folder_it_did_not_create_and_keeps_its_files(tmp_path):
    recipe = load_recipe(write(tmp_path))
    work = tmp_path / "w"
    (work / "tiny-bert").mkdir(parents=True)
    (work / "tiny-bert" / "notes.txt").write_text("mine")  # a user's folder, no config.json
    ran = []
    with pytest.raises(RecipeError) as error:
        run_recipe(recipe, smoke=True, work=work, execute=ran.append, log=lambda _: None)
    assert str(error.value) == (
        f"{work}: already exists and was not made by an adapter-zoo --smoke run "
        "(no .adapter-zoo-smoke.json); --smoke writes only into folders it creates: choose "
        "another --work"
    )
    assert ran == [] and (work / "tiny-bert" / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in work.rglob("*")) == ["notes.txt", "tiny-bert"]


def test_smoke_reruns_in_its_own_folder_but_never_replaces_a_tiny_model_folder_of_the_user(
    tmp_path,
):
    recipe = load_recipe(write(tmp_path))
    work = tmp_path / "w"
    run_recipe(recipe, smoke=True, work=work, execute=lambda _: 0, log=lambda _: None)
    assert (work / "tiny-bert" / "config.json").is_file()
    run_recipe(recipe, smoke=True, work=work, execute=lambda _: 0, log=lambda _: None)  # rerun
    import shutil

    shutil.rmtree(work / "tiny-bert")
    (work / "tiny-bert").mkdir()
    (work / "tiny-bert" / "notes.txt").write_text("mine")
    with pytest.raises(RecipeError) as error:
        run_recipe(recipe, smoke=True, work=work, execute=lambda _: 0, log=lambda _: None)
    assert str(error.value) == (
        f"{work / 'tiny-bert'}: already exists and is not a tiny model built by adapter-zoo "
        "(no config.json); it is left as it is: move it away or choose another folder"
    )
    assert [p.name for p in (work / "tiny-bert").iterdir()] == ["notes.txt"]


@pytest.mark.parametrize(
    ("old", "new", "field", "wanted", "got"),
    [
        ('name = "demo"', "name = 5", "name", "a string", "int"),
        ('paper = "a paper, Table 1"', "paper = [1]", "paper", "a string", "list"),
        ('hardware = "none"', "hardware = true", "hardware", "a string", "bool"),
        ('source = "Table 1"', "source = 1.5", "published.source", "a string", "float"),
        ("scores = {wikiqa = {map = 0.5}}", "scores = 3", "published.scores", "a table", "int"),
        (
            "scores = {wikiqa = {map = 0.5}}",
            'scores = {wikiqa = "x"}',
            "published.scores.wikiqa",
            "a table",
            "str",
        ),
        (
            'base = "bert-base"',
            "base = {a = 1}",
            "vars.base",
            "a string, a number or a list",
            "dict",
        ),
        (
            'forums = ["beer.stackexchange.com", "askubuntu.com"]',
            "forums = [{a = 1}]",
            "vars.forums item",
            "a string or a number",
            "dict",
        ),
        ("[smoke.vars]", "[smoke.vars.x]", "smoke.vars.x", "a string, a number or a list", "dict"),
        (
            'run = "train --mode multitask --data {data} --forums {forums} --name mt"',
            "run = 7",
            "run",
            "a string",
            "int",
        ),
        ('foreach = "forum in {forums}"', "foreach = 1", "foreach", "a string", "int"),
    ],  # fmt: skip
)
def test_a_recipe_field_of_the_wrong_type_is_one_line_naming_file_and_field(
    tmp_path, old, new, field, wanted, got
):
    assert old in RECIPE
    path = write(tmp_path, RECIPE.replace(old, new, 1))
    with pytest.raises(RecipeError) as error:
        load_recipe(path)
    where = str(path)
    if field in ("run", "foreach"):
        where += ": step 3" if field == "run" else ": step 2"
    assert str(error.value) == f"{where}: {field} must be {wanted}, not {got}"


def test_a_recipe_step_table_of_the_wrong_type_and_nan_scores_are_refused(tmp_path):
    path = write(tmp_path, "step = 3\n" + RECIPE.split("[[step]]")[0])
    with pytest.raises(RecipeError) as error:
        load_recipe(path)
    assert str(error.value) == f"{path}: step must be an array of tables ([[step]]), not int"
    path = write(tmp_path, RECIPE.replace("map = 0.5", "map = nan"))
    with pytest.raises(RecipeError) as error:
        load_recipe(path)
    assert str(error.value) == (
        f"{path}: published.scores.wikiqa.map must be a finite number, not nan"
    )
    path = write(tmp_path, RECIPE.replace('source = "Table 1"', 'source = "T"\ntolerance = -1'))
    with pytest.raises(RecipeError) as error:
        load_recipe(path)
    assert str(error.value) == f"{path}: published.tolerance must be a finite number >= 0, not -1"


SELF_RUNNING = """
name = "{name}"
paper = "p"
description = "d"
hardware = "h"
[published]
source = "s"
[[step]]
run = "forums"
[[step]]
run = "run {target} --work {{work}}/inner"
"""


def test_a_recipe_that_runs_itself_is_refused_before_anything_runs(tmp_path, capsys):
    from adapter_zoo.cli import main

    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(SELF_RUNNING.format(name="a", target=b))
    b.write_text(SELF_RUNNING.format(name="b", target=a))
    seen = []
    for recipe, chain in ((a, "a -> b -> a"), (b, "b -> a -> b")):
        with pytest.raises(RecipeError) as error:
            run_recipe(load_recipe(recipe), work=tmp_path / "w", execute=seen.append)
        other = b if recipe == a else a
        assert str(error.value) == (
            f"{other}: step 2 runs recipe {str(recipe)!r}, which is already running ({chain}); "
            "a recipe may not run itself"
        )
    a.write_text(SELF_RUNNING.format(name="a", target=a))
    assert main(["run", str(a), "--work", str(tmp_path / "w")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"adapter-zoo run: error: {a}: step 2 runs recipe {str(a)!r}, which is already running "
        "(a -> a); a recipe may not run itself"
    )
    assert seen == [] and not (tmp_path / "w").exists()


@pytest.mark.parametrize("name", ["experiments", "experiments.toml"])
def test_a_recipe_that_is_a_folder_is_one_line_saying_what_a_recipe_is(
    tmp_path, monkeypatch, capsys, name
):
    """It was ``[Errno 21] Is a directory``, naming neither a recipe nor where they are."""
    from adapter_zoo.cli import main
    from recipes.runner import recipe_dir

    monkeypatch.chdir(tmp_path)
    (tmp_path / name).mkdir()
    assert main(["run", name]) == 2
    known = ", ".join(sorted(p.stem for p in recipe_dir().glob("*.toml")))
    assert capsys.readouterr().err == (
        f"adapter-zoo run: error: {name}: a folder, not a recipe; a recipe is a .toml file, "
        f"or the name of one shipped in {recipe_dir()}: {known}\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_a_folder_named_like_a_shipped_recipe_does_not_hide_it(tmp_path, monkeypatch):
    from recipes.runner import find_recipe, recipe_dir

    monkeypatch.chdir(tmp_path)
    (tmp_path / "shipped_zoo").mkdir()  # outputs/<recipe> is such a folder
    assert find_recipe("shipped_zoo") == recipe_dir() / "shipped_zoo.toml"


def test_a_recipe_file_that_is_not_utf8_is_one_line_naming_it(tmp_path, capsys):
    from adapter_zoo.cli import main

    recipe = tmp_path / "mine.toml"
    recipe.write_bytes(b'name = "caf\xe9"\n')
    assert main(["run", str(recipe)]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo run: error: {recipe}: not a valid TOML recipe: 'utf-8' codec can't decode "
        "byte 0xe9 in position 11: invalid continuation byte\n"
    )
