"""An output folder with a file in its place, or below a file, is one line and exit 2 before
any work, for every command that writes a folder, not ``[Errno 17] File exists`` or
``[Errno 20] Not a directory`` from the first write, saying nothing of what to do (and for
run --work, after the recipe's plan is printed)."""

from __future__ import annotations

import pytest

from adapter_zoo.cli import main

# {out} is the output folder; names that are no model or forum: a command that loaded or
# parsed before checking its output would fail on them with another message
COMMANDS = {
    "parse": ["parse", "S.7z", "--out", "{out}"],
    "build-benchmark": ["build-benchmark", "F", "--out", "{out}"],
    "export": ["export", "nope", "--out", "{out}"],
    "leaderboard": ["leaderboard", "R", "--out", "{out}"],
    "quickstart": ["quickstart", "--smoke", "--out", "{out}"],
    "run": ["run", "nope", "--work", "{out}"],
    "evaluate": ["evaluate", "--model", "nope", "--benchmark", "b", "--results", "{out}"],
    "sweep": ["sweep", "--benchmark", "b", "--adapters", "nope", "--results", "{out}"],
    "cascade-eval": ["cascade-eval", "--model", "nope", "--benchmark", "b", "--results", "{out}"],
}
# The folders a command writes whole: a file in their place is check_replaceable's to
# refuse (or --overwrite's to replace), so only a file above them is refused here.
WHOLE = {"build-benchmark", "export", "leaderboard"}


def _cases():
    for command in sorted(COMMANDS):
        yield command, "below-a-file"
        if command not in WHOLE:
            yield command, "a-file"


@pytest.mark.parametrize(("command", "where"), list(_cases()))
def test_an_output_folder_blocked_by_a_file_is_one_line_before_any_work(
    command, where, tmp_path, capsys, snapshot
):
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    out = blocker if where == "a-file" else blocker / "out"
    before = snapshot(tmp_path)
    argv = [part.format(out=out) for part in COMMANDS[command]]
    option = argv[argv.index(str(out)) - 1]
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    reason = "exists and is not a folder" if where == "a-file" else f"{blocker} is not a folder"
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"adapter-zoo {command}: error: argument {option}: {out}: {reason}; choose another folder"
    )
    assert snapshot(tmp_path) == before


def test_every_output_folder_option_is_checked_as_a_folder():
    """An output option typed ``path_option`` only let a file in the folder's place through
    to the first write."""
    import argparse

    from adapter_zoo.cli import build_parser
    from stackexchange.paths import folder_option, output_folder_option

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    outputs = [
        (command, action.option_strings[-1], action.type)
        for command, sub in commands.choices.items()
        for action in sub._actions
        if set(action.option_strings) & {"--out", "--work", "--results"}
    ]
    assert len(outputs) >= 9
    assert [
        (c, o) for c, o, kind in outputs if kind not in (folder_option, output_folder_option)
    ] == []


def _blocked(tmp_path, where):
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    return blocker, blocker if where == "a-file" else blocker / "out"


@pytest.mark.parametrize("where", ["a-file", "below-a-file"])
def test_parse_from_python_refuses_an_out_blocked_by_a_file(tmp_path, snapshot, where):
    from stackexchange.catalog import shipped_data
    from stackexchange.dump import parse_dump
    from stackexchange.errors import DumpError

    blocker, out = _blocked(tmp_path, where)
    before = snapshot(tmp_path)
    with pytest.raises(DumpError) as refused:
        parse_dump(shipped_data() / "beer.stackexchange.com.7z", out)
    reason = "exists and is not a folder" if where == "a-file" else f"{blocker} is not a folder"
    assert str(refused.value) == f"{out}: {reason}; choose another folder"
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("where", ["a-file", "below-a-file"])
def test_run_and_quickstart_from_python_refuse_a_work_folder_blocked_by_a_file(
    tmp_path, snapshot, where
):
    from adapter_zoo.errors import ZooError
    from recipes.quickstart import quickstart
    from recipes.recipe import RecipeError, load_recipe
    from recipes.runner import find_recipe, run_recipe

    blocker, out = _blocked(tmp_path, where)
    before = snapshot(tmp_path)
    reason = "exists and is not a folder" if where == "a-file" else f"{blocker} is not a folder"
    with pytest.raises(RecipeError) as refused:
        run_recipe(load_recipe(find_recipe("shipped_zoo")), work=out, execute=lambda argv: 1)
    assert str(refused.value) == f"{out}: {reason}; choose another folder"
    with pytest.raises(ZooError) as refused:
        quickstart(out, smoke=True, overwrite=True)
    assert str(refused.value) == f"{out}: {reason}; choose another folder"
    assert snapshot(tmp_path) == before


def test_build_benchmark_and_leaderboard_from_python_refuse_an_out_below_a_file(tmp_path, snapshot):
    from benchmarks.builder import build_from_forum
    from benchmarks.errors import BenchmarkError
    from benchmarks.leaderboard import write_leaderboard

    blocker, out = _blocked(tmp_path, "below-a-file")
    before = snapshot(tmp_path)
    with pytest.raises(BenchmarkError) as refused:
        build_from_forum(tmp_path / "forum", out)
    assert str(refused.value) == f"{out}: {blocker} is not a folder; choose another folder"
    with pytest.raises(BenchmarkError) as refused:
        write_leaderboard(tmp_path / "results", out)
    assert str(refused.value) == f"{out}: {blocker} is not a folder; choose another folder"
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("source", ["dump", "forum-folder"])
def test_parse_refuses_an_out_inside_the_dump_it_reads(source, tmp_path, capsys, snapshot):
    """``parse DUMP --out DUMP/parsed`` wrote its forums into the dump folder it read (and a
    forum folder's parse into that forum's folder); build-benchmark already refused the
    same of its forum."""
    import shutil

    from stackexchange.catalog import shipped_data
    from stackexchange.dump import parse_dump
    from stackexchange.errors import DumpError
    from stackexchange.parse import parse_forum

    dump = tmp_path / "dump"
    dump.mkdir()
    if source == "dump":
        shutil.copy(shipped_data() / "beer.stackexchange.com.7z", dump)
    else:  # an extracted forum: refused before its Posts.xml is read
        dump = dump / "beer.stackexchange.com"
        dump.mkdir()
        (dump / "Posts.xml").write_text("<posts/>", encoding="utf-8")
    out = dump / "parsed"
    before = snapshot(tmp_path)
    message = f"{out}: output inside the input {dump}; choose another output"
    for extra in ([], ["--overwrite"]):
        assert main(["parse", str(dump), "--out", str(out), *extra]) == 2
        assert capsys.readouterr().err == f"adapter-zoo parse: error: {message}\n"
    with pytest.raises(DumpError) as refused:
        parse_dump(dump, out)
    assert str(refused.value) == message
    if source == "forum-folder":
        with pytest.raises(DumpError) as refused:
            parse_forum(dump, out)
        assert str(refused.value) == message
    assert snapshot(tmp_path) == before


def test_leaderboard_refuses_an_out_inside_the_results_it_reads(tmp_path, capsys, snapshot):
    """``leaderboard RESULTS --out RESULTS/board`` wrote the board into the results folder it
    read; an --out holding the results was refused already."""
    from benchmarks.errors import BenchmarkError
    from benchmarks.leaderboard import write_leaderboard

    results = tmp_path / "results"
    results.mkdir()
    (results / "results.jsonl").write_text('{"model": "bm25"}\n', encoding="utf-8")
    out = results / "board"
    before = snapshot(tmp_path)
    message = f"{out}: output inside the input {results}; choose another output"
    for extra in ([], ["--overwrite"]):
        assert main(["leaderboard", str(results), "--out", str(out), *extra]) == 2
        assert capsys.readouterr().err == f"adapter-zoo leaderboard: error: {message}\n"
    with pytest.raises(BenchmarkError) as refused:
        write_leaderboard(results, out)
    assert str(refused.value) == message
    assert snapshot(tmp_path) == before
