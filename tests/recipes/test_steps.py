"""The job graph the Ray executor runs: dependencies, resources, and the CLI's executor flags."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from adapter_zoo.cli import main
from recipes import RecipeError, load_recipe, recipe_dir
from recipes.ray_executor import _check_fits
from recipes.runner import _plan
from recipes.steps import build_jobs

BUILTINS = {"shipped": "/s", "tiny_base": "/t"}


def jobs_of(name: str, *, smoke: bool):
    recipe = load_recipe(recipe_dir() / f"{name}.toml")
    return build_jobs(_plan(recipe, smoke, Path("/w"), BUILTINS), smoke=smoke)


def test_each_evaluation_waits_only_for_what_it_reads():
    jobs = jobs_of("multicqa_adapters", smoke=True)
    labels = [job.label for job in jobs]
    after = {job.label: {labels[i] for i in job.after} for job in jobs}
    beer, bicycles = "beer.stackexchange.com", "bicycles.meta.stackexchange.com"
    heldout = "local:/w/bench/heldout"
    assert labels == [
        "step 1", "step 2", f"step 3 [{beer}]", f"step 3 [{bicycles}]", f"step 4 [{heldout}]",
        f"step 5 [{beer}, {heldout}]", f"step 5 [{bicycles}, {heldout}]", "step 6",
    ]  # fmt: skip
    assert after == {
        "step 1": set(),
        "step 2": {"step 1"},  # the held-out set is built from parsed/beer
        f"step 3 [{beer}]": {"step 1"},
        f"step 3 [{bicycles}]": {"step 1"},
        f"step 4 [{heldout}]": {"step 2"},  # BM25 needs no adapter
        f"step 5 [{beer}, {heldout}]": {"step 2", f"step 3 [{beer}]"},
        f"step 5 [{bicycles}, {heldout}]": {"step 2", f"step 3 [{bicycles}]"},
        "step 6": {f"step 4 [{heldout}]", f"step 5 [{beer}, {heldout}]",
                   f"step 5 [{bicycles}, {heldout}]"},
    }  # fmt: skip


def test_an_evaluation_of_several_models_waits_for_each_and_expects_a_record_each():
    train = ["train", "--mode", "adapter", "--data", "/w/parsed", "--forums", "beer",
             "--name", "beer"]  # fmt: skip
    compose = ["compose", "--name", "beer-fusion", "--fusion", "beer", "bm25"]
    evaluate = ["evaluate", "--model", "bm25", "beer", "beer-fusion", "--benchmark",
                "local:/w/bench", "--results", "/w/results"]  # fmt: skip
    lexical = ["evaluate", "--model", "bm25", "tfidf", "--benchmark", "local:/w/bench"]
    jobs = build_jobs([("train", train, {}), ("compose", compose, {}),
                       ("evaluate", evaluate, {}), ("lexical", lexical, {})], smoke=False)  # fmt: skip
    assert jobs[2].after == {0, 1}  # beer and beer-fusion are read
    assert jobs[2].resources["gpus"] == 1 and jobs[3].resources["gpus"] == 0
    (results,) = jobs[2].outputs
    assert not results.complete()  # no record of any of the three yet


def test_a_tanda_adaptation_waits_for_its_transfer_model():
    jobs = jobs_of("tanda_wikiqa", smoke=True)
    transfer, baseline, adapt = jobs[3], jobs[4], jobs[5]
    assert "--save-as" in transfer.argv and "--transfer" in adapt.argv
    assert transfer.index in adapt.after
    assert transfer.index not in baseline.after  # the baseline reads only the target set


def test_resources_default_by_command_and_smoke_runs_without_gpus():
    full = jobs_of("multicqa_adapters", smoke=False)
    by_command = {job.argv[0] + (" " + job.argv[2] if job.argv[0] == "evaluate" else ""): job
                  for job in full}  # fmt: skip
    assert by_command["parse"].resources == {"cpus": 1, "gpus": 0}
    assert by_command["train"].resources == {"cpus": 1, "gpus": 1}
    assert by_command["evaluate bm25"].resources == {"cpus": 1, "gpus": 0}
    assert by_command["leaderboard"].resources == {"cpus": 1, "gpus": 0}
    assert {job.resources["gpus"] for job in jobs_of("multicqa_adapters", smoke=True)} == {0}


def test_a_step_declares_its_resources(tmp_path):
    text = (recipe_dir() / "multicqa_adapters.toml").read_text()
    text = text.replace(
        'run = "evaluate --model {forum_name}',
        'resources = { gpus = 0.5, cpus = 2 }\nrun = "evaluate --model {forum_name}',
    ).replace('run = "parse {dump}', 'run = "parse {dump} --workers 6')
    path = tmp_path / "r.toml"
    path.write_text(text)
    jobs = build_jobs(_plan(load_recipe(path), False, Path("/w"), BUILTINS), smoke=False)
    assert jobs[0].resources == {"cpus": 6, "gpus": 0}  # parse reserves its --workers
    step5 = [job.resources for job in jobs if job.label.startswith("step 5 ")]
    trained = [job for job in jobs if job.argv[0] == "train"]
    assert len(step5) == 9 * len(trained) > 1000
    assert all(r == {"cpus": 2, "gpus": 0.5} for r in step5)
    path.write_text(text.replace("gpus = 0.5", "gpu = 1"))
    with pytest.raises(RecipeError) as error:
        load_recipe(path)
    assert str(error.value) == (
        f"{path}: step 5: unknown resource 'gpu'; did you mean gpus, cpus? choose one of cpus, gpus"
    )
    path.write_text(text.replace("gpus = 0.5", "gpus = -1"))
    with pytest.raises(
        RecipeError, match=r"step 5: resource gpus must be a finite number >= 0, not -1$"
    ):
        load_recipe(path)


def test_a_job_no_node_can_hold_is_refused():
    job = jobs_of("multicqa_adapters", smoke=False)[2]
    assert job.argv[0] == "train"
    with pytest.raises(RecipeError) as error:
        _check_fits([job], [{"CPU": 2.0}])
    assert str(error.value) == (
        f"{job.label} needs 1 CPU and 1 GPU but no node of the Ray cluster has that (nodes: "
        "2 CPU/0 GPU); set the step's resources or use --smoke on a machine without GPUs"
    )
    _check_fits([job], [{"CPU": 2.0}, {"CPU": 8.0, "GPU": 1.0}])


def test_address_needs_the_ray_executor(capsys):
    assert main(["run", "multicqa_adapters", "--dry-run", "--address", "auto"]) == 2
    assert capsys.readouterr().err.strip() == (
        "adapter-zoo run: error: --address needs --executor ray"
    )


def test_the_local_executor_never_imports_ray(tmp_path):
    code = (
        "import sys\n"
        "from recipes import load_recipe, recipe_dir, run_recipe\n"
        "recipe = load_recipe(recipe_dir() / 'multicqa_adapters.toml')\n"
        f"run_recipe(recipe, work={str(tmp_path)!r}, execute=lambda argv: 0, log=lambda _: None)\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_export_waits_for_the_entry_it_reads(tmp_path):
    from adapter_zoo.zoo import zoo_home

    jobs = build_jobs(
        [
            ("train", ["train", "--data", "/d", "--forums", "beer", "--name", "ft",
                       "--mode", "full"], {}),
            ("export", ["export", "ft", "--out", str(tmp_path / "ce")], {}),
            ("other", ["export", "other", "--out", str(tmp_path / "ce2")], {}),
        ],
        smoke=False,
    )  # fmt: skip
    assert [job.after for job in jobs] == [set(), {0}, set()]
    assert jobs[1].inputs == [zoo_home() / "ft"]
    assert [out.path for out in jobs[1].outputs] == [tmp_path / "ce"]
    assert not jobs[1].outputs_complete()
    (tmp_path / "ce").mkdir()
    (tmp_path / "ce" / "adapter_zoo_export.json").write_text("{}")
    assert jobs[1].outputs_complete()


def test_an_evaluation_reads_its_built_set_or_beir_folder():
    for scheme in ("local", "beir"):
        argv = ["evaluate", "--model", "bm25", "--benchmark", f"{scheme}:/w/set"]
        (job,) = build_jobs([("evaluate", argv, {})], smoke=False)
        assert job.inputs == [Path("/w/set")], scheme
