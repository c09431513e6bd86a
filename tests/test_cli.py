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
        f"adapter-zoo run: error: unknown recipe 'no-such-recipe'; choose one of {known}\n"
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


def test_a_star_import_leaves_the_builtin_list_alone():
    names: dict = {}
    exec("from adapter_zoo import *", names)
    assert "list" not in names and names["list_entries"] is adapter_zoo.list_entries
    assert "list" not in adapter_zoo.__all__


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
            save_entry(lambda f: (f / "w.bin").write_bytes(b"0"), "beer", {"mode": "adapter",
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


# Arguments that name a folder or file (by their destination, or help that says folder, DIR,
# PATH or file) but may also be a model or benchmark name: those are no plain path.
_NAMES_OR_PATHS = {"model", "benchmark", "name", "name_or_path", "target"}


def _path_arguments() -> list[tuple[str, str]]:
    import argparse

    from adapter_zoo.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for command, sub in commands.choices.items():
        for action in sub._actions:
            text = f"{action.help or ''} {action.metavar or ''}"
            named = re.search(r"folder|\bDIR\b|\bPATH\b|\bfile", text)
            takes_value = action.nargs != 0 and action.dest not in _NAMES_OR_PATHS
            if takes_value and (named or action.dest in ("data_dir", "out", "results")):
                found.append((command, action.option_strings[-1] if action.option_strings
                              else action.dest, action.type))  # fmt: skip
    return found


def test_every_path_argument_is_checked_as_a_path_before_the_command_runs():
    """A path option without ``path_option`` took ``''``, a NUL byte or bytes that are not
    UTF-8 (a traceback from the XML parser or the lock once the work had begun)."""
    from stackexchange.paths import folder_option, output_folder_option, path_option

    arguments = _path_arguments()
    assert len(arguments) >= 20
    checked = (path_option, folder_option, output_folder_option)  # the last two call the first
    assert [(c, a) for c, a, kind in arguments if kind not in checked] == []


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["parse", "S", "--out", "{bad}"], "--out"),
        (["parse", "{bad}", "--out", "O"], "SOURCE"),
        (["build-benchmark", "F", "--out", "{bad}"], "--out"),
        (["train", "--mode", "adapter", "--data", "{bad}", "--forums", "b", "--name", "n"],
         "--data"),
        (["evaluate", "--model", "bm25", "--benchmark", "b", "--results", "{bad}"], "--results"),
        (["compose", "--name", "c", "--fusion", "bm25", "--data", "{bad}", "--forum", "b"],
         "--data"),
        (["quickstart", "--out", "{bad}"], "--out"),
        (["run", "r", "--work", "{bad}"], "--work"),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else None,
)  # fmt: skip
def test_a_path_that_is_not_utf8_is_one_line_before_any_work(argv, option, tmp_path, capsys):
    bad = str(tmp_path / "caf\udce9")  # what the bytes b"caf\xe9" on a command line become
    with pytest.raises(SystemExit) as done:
        main([part.format(bad=bad) for part in argv])
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"adapter-zoo {argv[0]}: error: argument {option}: {bad!r}: not UTF-8 text; rename it "
        "or give a path that is"
    )
    assert list(tmp_path.iterdir()) == []
