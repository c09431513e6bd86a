"""compose, adapt and a recipe's run, each killed at two seeded moments and run again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("warm_embedder")

RECIPE = """
name = "faults"
paper = "none: the fault tests' recipe"
description = "parse a shipped forum, build its benchmark, evaluate two baselines, tabulate"
hardware = "2 CPU cores, seconds"
[published]
source = "none"
scores = {}
[[step]]
run = "parse {shipped}/augur.stackexchange.com.7z --out {work}/parsed --workers 1"
[[step]]
run = "build-benchmark {work}/parsed/augur.stackexchange.com --out {work}/bench --candidates 10"
[[step]]
run = "evaluate --model bm25 tfidf --benchmark local:{work}/bench --results {work}/results"
[[step]]
run = "leaderboard {work}/results --out {work}/board"
"""


@pytest.fixture(scope="module")
def augur_zoo(tmp_path_factory, parsed_augur, tiny_sentence_bert_path) -> Path:
    """Two bi-encoder adapters of augur with their domain centroids: one trained, the other
    its copy under another name (a soup of two needs two; training one is enough)."""
    from adapter_zoo.training import TrainingConfig, train
    from adapter_zoo.zoo.store import read_card, save_entry

    zoo = tmp_path_factory.mktemp("augur-zoo")
    old = os.environ.get("ADAPTER_ZOO_HOME")
    os.environ["ADAPTER_ZOO_HOME"] = str(zoo)  # module-scoped: monkeypatch is the test's
    try:
        first = train(TrainingConfig(mode="adapter", encoder="bi", data=str(parsed_augur),
                                     forums=("augur",), name="au", max_steps=1, eval_steps=1,
                                     batch_size=8, max_length=16, dev_queries=8,
                                     base_model=str(tiny_sentence_bert_path)))  # fmt: skip
        card = read_card(first)
        fields = {k: v for k, v in card.items() if k not in ("name", "files", "created")}

        def copy(folder: Path) -> None:
            for relative in card["files"]:
                shutil.copy2(first / relative, folder / relative)

        save_entry(copy, "au-2", fields)
    finally:
        if old is None:
            os.environ.pop("ADAPTER_ZOO_HOME")
        else:
            os.environ["ADAPTER_ZOO_HOME"] = old
    return zoo


def _zoo_copy(augur_zoo, tmp_path, monkeypatch) -> Path:
    zoo = tmp_path / "zoo"
    shutil.copytree(augur_zoo, zoo, ignore=shutil.ignore_patterns(".*"))
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(zoo))
    return zoo


def test_compose(survives, augur_zoo, parsed_augur, tmp_path, monkeypatch, faults_kit):
    zoo = _zoo_copy(augur_zoo, tmp_path, monkeypatch)
    argv = ["compose", "--name", "cz", "--fusion", "au", "bm25", "--data", str(parsed_augur),
            "--forum", "augur"]  # fmt: skip
    survives(argv, zoo, "compose", faults_kit.checks.zoo_problems, keep=("au", "au-2"))


def test_adapt(survives, augur_zoo, tmp_path, monkeypatch, faults_kit):
    zoo = _zoo_copy(augur_zoo, tmp_path, monkeypatch)
    target = tmp_path / "target.txt"
    target.write_text(
        "How do I report an outcome?\nWhat is REP used for?\nWhy did my trade fail?\n"
    )
    argv = ["adapt", "--target", str(target), "--name", "ad", "--strategy", "soup", "--top-k",
            "2", "--zoo", "au", "au-2"]  # fmt: skip
    survives(argv, zoo, "adapt", faults_kit.checks.zoo_problems, keep=("au", "au-2"))


def test_run_recipe_smoke_resumes(survives, tmp_path, faults_kit):
    recipe = tmp_path / "faults.toml"
    recipe.write_text(RECIPE)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["run", str(recipe), "--smoke", "--work", str(out / "work")]

    def problems(out: Path) -> list[str]:
        work, checks = out / "work", faults_kit.checks
        return (checks.forum_problems(work / "parsed") + checks.benchmark_problems(work / "bench")
                + checks.results_problems(work / "results") + checks.zoo_problems(work / "zoo"))  # fmt: skip

    survives(argv, out, "run", problems)
