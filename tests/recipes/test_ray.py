"""``--executor ray`` on a local 2-CPU Ray: same outputs as the local executor, resumes, retries.

One Ray instance serves the whole module (it takes seconds to start). A Ray task reserves one
CPU and Ray runs it with one thread, so the local reference run is held to one torch thread
too: the same arithmetic in the same order gives bit-identical weights.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import ray  # the test extra installs it (.ci/install): a missing ray fails, never skips

from recipes import RecipeError, load_recipe, run_recipe

# one xdist process runs this module (--dist loadgroup): one Ray instance for the module
pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow]

FORUMS = ["beer.stackexchange.com", "bicycles.meta.stackexchange.com"]
RECIPE = """
name = "ray-smoke"
paper = "none: a test of the Ray executor"
description = "both shipped forums: parse, a held-out set, an adapter per forum, evaluate"
hardware = "2 CPU cores"
[published]
source = "none"
[vars]
forums = ["beer.stackexchange.com", "bicycles.meta.stackexchange.com"]
models = ["bm25", "beer", "bicycles-meta"]
[smoke.vars]
base = "{tiny_base}"
[[step]]
run = "parse {shipped} --out {work}/parsed --forums {forums} --workers 1"
[[step]]
run = "build-benchmark {work}/parsed/beer.stackexchange.com --out {work}/bench/heldout --candidates 10"
[[step]]
foreach = "forum in {forums}"
run = "train --mode adapter --data {work}/parsed --forums {forum} --name {forum_name} --base {base} --max-steps 2 --batch-size 8 --max-length 64"
[[step]]
foreach = "model in {models}"
run = "evaluate --model {model} --benchmark local:{work}/bench/heldout --max-length 64 --results {work}/results"
[[step]]
run = "leaderboard {work}/results --out {work}/leaderboard"
"""
VOLATILE = {"created", "wall_time_s"}


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    path = tmp_path_factory.mktemp("recipe") / "ray_smoke.toml"
    path.write_text(RECIPE)
    return load_recipe(path)


def results(work: Path) -> list[dict]:
    """The records, by model, without timings, the work folder's path masked."""
    text = (work / "results" / "results.jsonl").read_text().replace(str(work), "WORK")
    lines = text.splitlines()
    records = [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in lines]
    return sorted(records, key=lambda r: r["model"])


def entry_files(work: Path, name: str) -> dict[str, bytes]:
    """The weights and adapter/head configs of a zoo entry (the work folder's path masked)."""
    folder = work / "zoo" / name
    return {
        p.name: p.read_bytes().replace(str(work).encode(), b"WORK")
        for p in sorted(folder.iterdir())
        if p.name.endswith((".safetensors", "_config.json"))
    }


def leaderboard(work: Path) -> str:
    return (work / "leaderboard" / "leaderboard.md").read_text().replace(str(work), "WORK")


def test_ray_outputs_equal_the_local_run_and_a_partial_run_resumes(
    local_ray, recipe, tmp_path, capsys
):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        local = run_recipe(recipe, smoke=True, work=tmp_path / "local", log=lambda _: None)
    finally:
        torch.set_num_threads(threads)
    lines: list[str] = []
    distributed = run_recipe(
        recipe, smoke=True, work=tmp_path / "ray", executor="ray", log=lines.append
    )

    for name in ("beer", "bicycles-meta"):
        files = entry_files(distributed, name)
        assert sorted(files) == [
            "adapter.safetensors", "adapter_config.json", "domain.safetensors",
            "head_config.json", "model_head.safetensors"]  # fmt: skip
        assert files == entry_files(local, name)
    assert len(results(distributed)) == 3
    assert results(distributed) == results(local)
    assert leaderboard(distributed) == leaderboard(local)
    assert lines[-1] == "  8 done, 0 skipped, 0 failed, 0 not run"
    assert sorted(p.name for p in (distributed / "logs").iterdir())[:3] == [
        "step-01.log", "step-02.log", "step-03-beer.stackexchange.com.log"]  # fmt: skip

    # A partial run: the bicycles-meta adapter is gone. Only the steps that make or read it
    # run again; everything else, the beer adapter included, is left as it is.
    beer_card = (distributed / "zoo" / "beer" / "card.json").stat().st_mtime_ns
    bm25_logs = (distributed / "logs" / "step-04-bm25.log").read_text()
    removed = distributed / "zoo" / "bicycles-meta"
    for file in removed.iterdir():
        file.unlink()
    removed.rmdir()
    lines.clear()
    run_recipe(recipe, smoke=True, work=distributed, executor="ray", log=lines.append)
    ran = sorted(line.split("  ")[1].strip() for line in lines if " done " in line)
    assert ran == [
        "step 3 [bicycles.meta.stackexchange.com]",
        "step 4 [bicycles-meta]",
        "step 5",
    ]
    assert lines[-1] == "  3 done, 5 skipped, 0 failed, 0 not run"
    assert (distributed / "zoo" / "beer" / "card.json").stat().st_mtime_ns == beer_card
    assert (distributed / "logs" / "step-04-bm25.log").read_text() == bm25_logs
    assert entry_files(distributed, "bicycles-meta") == entry_files(local, "bicycles-meta")
    # the re-run appended one record; the leaderboard keeps the latest, the same scores
    assert len(results(distributed)) == 4
    assert leaderboard(distributed) == leaderboard(local)


FAILING = (
    RECIPE.split("[[step]]")[0]
    + """
[[step]]
run = "parse {shipped} --out {work}/parsed --forums {forums} --workers 1"
[[step]]
run = "build-benchmark {work}/parsed/no.such.forum --out {work}/bench/broken"
[[step]]
run = "evaluate --model bm25 --benchmark local:{work}/bench/broken --results {work}/results"
[[step]]
run = "build-benchmark {work}/parsed/beer.stackexchange.com --out {work}/bench/heldout --candidates 10"
"""
)


def test_a_failing_step_is_retried_reported_with_its_log_and_the_rest_go_on(local_ray, tmp_path):
    path = tmp_path / "failing.toml"
    path.write_text(FAILING)
    lines: list[str] = []
    with pytest.raises(RecipeError) as error:
        run_recipe(
            load_recipe(path), smoke=True, work=tmp_path / "w", executor="ray", log=lines.append
        )
    log = tmp_path / "w" / "logs" / "step-02.log"
    assert str(error.value) == (
        f"{path}: 1 step(s) failed after 2 attempts (1 waiting for them not run); "
        f"step 2 (exit status 2): see {log}"
    )
    text = log.read_text()
    assert text.count("== attempt") == 2 and text.count("== exit status 2") == 2
    assert "adapter-zoo build-benchmark: error: " in text and "no.such.forum" in text
    assert lines[-1] == "  2 done, 0 skipped, 1 failed, 1 not run"
    assert not (tmp_path / "w" / "results").exists()  # the evaluation of the broken set
    assert (tmp_path / "w" / "bench" / "heldout" / "benchmark.json").is_file()  # went on
