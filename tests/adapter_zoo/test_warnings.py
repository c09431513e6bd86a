"""The project's warnings: one line of the command's own on the CLI, ``warnings`` in Python."""

from __future__ import annotations

import warnings

import pytest

from adapter_zoo import ZooWarning
from adapter_zoo.cli import main, one_line_warnings

BEER = "beer.stackexchange.com"


def test_a_commands_warning_is_one_line_of_its_own(parsed_shipped, tiny_sentence_bert_path,
                                                   capsys):  # fmt: skip
    # a rate too small to move the model: the entry does not beat its base on dev
    assert main(["train", "--mode", "adapter", "--data", str(parsed_shipped), "--forums", BEER,
                 "--name", "still", "--base", str(tiny_sentence_bert_path), "--max-steps", "2",
                 "--eval-steps", "2", "--batch-size", "8", "--max-length", "16",
                 "--lr", "1e-12"]) == 0  # fmt: skip
    lines = capsys.readouterr().err.splitlines()
    warned = [line for line in lines if "warning" in line.lower()]
    assert len(warned) == 1, lines
    assert warned[0].startswith("adapter-zoo train: warning: 'still' does not beat its base on "
                                "dev (MAP ")  # fmt: skip
    assert warned[0].endswith("); the entry keeps the best state seen")
    assert "UserWarning" not in "\n".join(lines) and ".py:" not in "\n".join(lines)


def test_python_callers_get_the_warning_and_other_warnings_keep_their_format(capsys):
    with pytest.warns(ZooWarning, match="^'w1' does not beat its base$"):
        warnings.warn("'w1' does not beat its base", ZooWarning, stacklevel=1)
    assert issubclass(ZooWarning, UserWarning)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with one_line_warnings("adapter-zoo demo"):
            warnings.warn("two\nlines", ZooWarning, stacklevel=1)
            warnings.warn("a library's", DeprecationWarning, stacklevel=1)
        warnings.warn("after the command", ZooWarning, stacklevel=1)
    assert capsys.readouterr().err == "adapter-zoo demo: warning: two lines\n"
    # the rest reach Python's own display (here the record), as without the command
    assert [(w.category, str(w.message)) for w in seen] == [
        (DeprecationWarning, "a library's"),
        (ZooWarning, "after the command"),
    ]
