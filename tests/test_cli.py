"""The ``adapter-zoo`` entry point: which errors become one line, and what ``--help`` names."""

from __future__ import annotations

import json
import re

import pytest

import adapter_zoo
import benchmarks
import recipes.cli
from adapter_zoo.cli import main
from benchmarks import BenchmarkError
from recipes import RecipeError, recipe_dir
from stackexchange import AdapterZooError, DumpError


def _recipes_command_raises(monkeypatch, error: BaseException) -> None:
    """Make ``adapter-zoo recipes`` raise ``error``."""

    def fail(args):
        raise error

    monkeypatch.setattr(recipes.cli, "_list", fail)


def test_the_project_errors_share_one_root():
    for error in (DumpError, adapter_zoo.ZooError, RecipeError, BenchmarkError):
        assert issubclass(error, AdapterZooError)
    assert issubclass(AdapterZooError, ValueError)


def test_an_unknown_recipe_is_one_line_and_exit_2(capsys):
    assert main(["run", "no-such-recipe", "--dry-run"]) == 2
    err = capsys.readouterr().err
    known = ", ".join(sorted(path.stem for path in recipe_dir().glob("*.toml")))
    assert err == (
        f"adapter-zoo run: error: unknown recipe 'no-such-recipe'; known recipes: {known}\n"
    )


@pytest.mark.parametrize(
    "error",
    [
        DumpError("beer.7z: corrupt 7z archive\nsecond line"),
        BenchmarkError("wikiqa: test.tsv line 3: label 'x' is not 0 or 1"),
        FileNotFoundError(2, "No such file or directory", "missing.json"),
    ],
)
def test_project_errors_and_os_errors_exit_2_with_one_line(monkeypatch, capsys, error):
    _recipes_command_raises(monkeypatch, error)
    assert main(["recipes"]) == 2
    first = str(error).splitlines()[0]
    assert capsys.readouterr().err == f"adapter-zoo recipes: error: {first}\n"


@pytest.mark.parametrize(
    "error",
    [TypeError("unsupported operand"), json.JSONDecodeError("Expecting value", "x", 0)],
)
def test_a_bug_keeps_its_traceback(monkeypatch, capsys, error):
    # A library's ValueError (here json's) is no project error: it is not turned into a line.
    _recipes_command_raises(monkeypatch, error)
    with pytest.raises(type(error)) as raised:
        main(["recipes"])
    assert raised.value is error
    assert capsys.readouterr().err == ""


def test_run_help_names_a_recipe_that_exists(capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "--help"])
    assert done.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    example = re.search(r"a recipe name \((\w+)", help_text).group(1)
    assert (recipe_dir() / f"{example}.toml").is_file()


def test_list_entries_is_public_and_list_is_its_alias():
    assert adapter_zoo.list_entries is adapter_zoo.list
    assert adapter_zoo.list_entries.__name__ == "list_entries"


def test_the_two_sweeps_have_distinct_names():
    from adapter_zoo.sweep import sweep

    # benchmarks.sweep is the module of sweep_benchmark, no second function called sweep
    assert not callable(getattr(benchmarks, "sweep", None))
    assert benchmarks.evaluate_each.__name__ == "evaluate_each"
    assert sweep.__module__ == "adapter_zoo.sweep.sweep"


def test_version_prints_the_installed_version_and_exits_0(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"adapter-zoo {version('adapter-zoo')}\n"
    assert version("adapter-zoo") == adapter_zoo.__version__


@pytest.mark.parametrize("command", ["recipes", "forums", "list"])
def test_a_reader_that_went_away_ends_the_command_quietly(command, tmp_path):
    """``adapter-zoo recipes | head -0``: the pipe is closed before the command writes, so
    every write fails with EPIPE; the command ends with exit 0 and nothing on stderr."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "ADAPTER_ZOO_HOME": str(tmp_path)}
    if command == "list":  # so that list has something to print
        from adapter_zoo.zoo import save_entry

        os.environ["ADAPTER_ZOO_HOME"], saved = str(tmp_path), os.environ["ADAPTER_ZOO_HOME"]
        try:
            save_entry(lambda f: (f / "w.bin").write_bytes(b"0"), "beer", {"kind": "adapter",
                       "base_model": "minilm-l6", "forums": ["beer"]})  # fmt: skip
        finally:
            os.environ["ADAPTER_ZOO_HOME"] = saved
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "adapter_zoo", command], stdout=write_end,
            stderr=subprocess.PIPE, env=env, cwd=root, timeout=120, text=True,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")
