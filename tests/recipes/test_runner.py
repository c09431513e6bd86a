"""The recipe runner: variable expansion, foreach, and the errors a recipe author sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from recipes import RecipeError, load_recipe, run_recipe
from recipes.runner import expand, forum_short_name, plan

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


def test_forum_short_names():
    assert forum_short_name("beer.stackexchange.com") == "beer"
    assert forum_short_name("bicycles.meta.stackexchange.com") == "bicycles-meta"
    assert forum_short_name("askubuntu.com") == "askubuntu"
    assert forum_short_name("mathoverflow.net") == "mathoverflow"


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
