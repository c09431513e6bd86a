"""The shipped zoo recipe: eight shipped forums, a transfer matrix, local and on Ray."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recipes import load_recipe, recipe_dir, run_recipe
from recipes.runner import _plan
from recipes.steps import build_jobs
from stackexchange.catalog import shipped_data

FORUMS = {
    "beer", "bicycles.meta", "ai", "quantumcomputing", "matheducators", "augur", "music.meta",
    "raspberrypi.meta",
}  # fmt: skip


def test_the_recipe_parses_the_eight_shipped_forums():
    recipe = load_recipe(recipe_dir() / "shipped_zoo.toml")
    hosts = recipe.variables["forums"]
    assert {h.removesuffix(".stackexchange.com") for h in hosts} == FORUMS
    for host in hosts:
        assert (shipped_data() / f"{host}.7z").is_file()


def test_on_ray_every_evaluation_waits_only_for_its_own_adapter():
    recipe = load_recipe(recipe_dir() / "shipped_zoo.toml")
    commands = _plan(recipe, False, Path("/w"), {"shipped": "/s", "tiny_base": "/t"})
    jobs = build_jobs(commands, smoke=False)
    labels = [job.label for job in jobs]
    after = {job.label: {labels[i] for i in job.after} for job in jobs}
    trains = [label for label, job in zip(labels, jobs) if job.argv[0] == "train"]
    assert len(trains) == 9  # eight forum adapters and the multi-task adapter
    assert all(after[label] == {"step 1"} for label in trains)  # they train in parallel
    beer_on_ai = "step 7 [beer.stackexchange.com, local:/w/bench/ai]"
    assert after[beer_on_ai] == {"step 2 [ai.stackexchange.com]", "step 3 [beer.stackexchange.com]"}


@pytest.mark.slow
def test_smoke_run_scores_every_model_on_every_set(tmp_path):
    recipe = load_recipe(recipe_dir() / "shipped_zoo.toml")
    assert recipe.published["source"]
    work = run_recipe(recipe, smoke=True, work=tmp_path / "work", log=lambda _: None)
    records = [
        json.loads(line)
        for line in (work / "results" / "results.jsonl").read_text().splitlines()
        if line.strip()
    ]
    sets = {f"local:{work}/bench/beer", f"local:{work}/bench/augur"}
    models = {"bm25", f"sbert:{work}/tiny-bert", "beer", "augur", "smoke-multitask"}
    assert {(r["model"], r["benchmark"]) for r in records} == {(m, s) for m in models for s in sets}
    settings = {(r["model"], r["benchmark"]): r["mode"] for r in records}
    assert settings[("beer", f"local:{work}/bench/beer")] == "in-domain"
    assert settings[("beer", f"local:{work}/bench/augur")] == "zero-shot"
    assert all(0.0 <= r["metrics"]["map"] <= 1.0 for r in records)
    assert (work / "leaderboard" / "leaderboard.md").read_text().strip()
    assert (work / "leaderboard" / "leaderboard.html").is_file()
