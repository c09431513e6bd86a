"""A ``--results`` folder that cannot be written is one line and exit 2 before any model
loads (issue 34): it was an ``[Errno 17] File exists`` line saying nothing of what to do, and
only once every model had scored."""

from __future__ import annotations

import pytest

from adapter_zoo.cli import main

ADVICE = "choose a --results folder you can write"
# "nope" is no model: a command that loaded before checking --results would name it instead
COMMANDS = {
    "evaluate": ["evaluate", "--model", "nope", "--benchmark", "wikiqa"],
    "evaluate --adapters": ["evaluate", "--model", "bm25", "--adapter", "nope", "other",
                            "--benchmark", "wikiqa"],
    "sweep": ["sweep", "--benchmark", "wikiqa", "--adapters", "nope"],
    "cascade-eval": ["cascade-eval", "--model", "nope", "--benchmark", "wikiqa"],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("where", ["a-file", "below-a-file"])
def test_a_results_folder_that_cannot_be_written_is_refused_first(
    tmp_path, capsys, snapshot, command, where
):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    results = blocker if where == "a-file" else blocker / "results"
    before = snapshot(tmp_path)
    argv = COMMANDS[command]
    assert main([*argv, "--results", str(results)]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo {argv[0]}: error: {results}: cannot write results there ({blocker} is "
        f"not a folder); {ADVICE}\n"
    )
    assert snapshot(tmp_path) == before
