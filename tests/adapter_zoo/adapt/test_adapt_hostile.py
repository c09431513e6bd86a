"""``adapter-zoo adapt`` on hostile targets, by family: encodings, broken
records, paths. Each is one line naming the file (and line) and exit 2, before any model
loads or anything is written to the zoo."""

from __future__ import annotations

import sys

import pytest

from adapter_zoo.cli import main
from adapter_zoo.zoo.store import zoo_home

# file name: (bytes, the message after "adapter-zoo adapt: error: FILE")
TARGETS = {
    "empty.txt": (b"", ": no text to describe the target domain (empty)"),
    "latin-1.txt": ("caf\xe9 question\n".encode("latin-1"),
                    ": not a UTF-8 text file (invalid continuation byte at byte 3)"),
    "latin-1.jsonl": (b'{"question": "caf\xe9", "answer": "a"}\n',
                      ": not a UTF-8 text file (invalid continuation byte at byte 17)"),
    "truncated.jsonl": (b'{"question": "x", "answer"',
                        ", line 1: not valid JSON (Expecting ':' delimiter)"),
    "deep.jsonl": (b"[" * 100_000 + b"]" * 100_000 + b"\n",
                   ", line 1: not valid JSON (nested too deeply)"),
    "surrogate.jsonl": (b'{"question": "\\udcff", "answer": "a"}\n',
                        ", line 1: not valid JSON (holds \\udcff, a lone surrogate escape that "
                        "is no text)"),
    "null.jsonl": (b"null\n", ", line 1: expected an object, got None"),
    "wrong-type.jsonl": (b'{"question": 5}\n', ", line 1: 'question' must be a string"),
    "broken.7z": (b"xx", ": corrupt or truncated 7z archive (Bad7zFile: not a 7z file)"),
}  # fmt: skip


@pytest.fixture
def no_model(monkeypatch):
    """Deciding (which loads models) fails the test if reached."""
    import adapter_zoo.adapt.heldout  # noqa: F401  (the package's adapt function shadows it)

    def forbidden(*_args, **_kwargs):
        raise AssertionError("a model loaded before the target was read")

    monkeypatch.setattr(sys.modules["adapter_zoo.adapt.heldout"], "held_out_lists", forbidden)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_broken_target_is_one_line_naming_it(no_model, tmp_path, capsys, snapshot, name):
    data, message = TARGETS[name]
    target = tmp_path / name
    target.write_bytes(data)
    before = snapshot(tmp_path)
    assert main(["adapt", "--target", str(target), "--name", "t"]) == 2
    assert capsys.readouterr().err == f"adapter-zoo adapt: error: {target}{message}\n"
    assert snapshot(tmp_path) == before
    assert not (zoo_home() / "t").exists()


@pytest.mark.parametrize(("target", "message"), [
    ("", "'': an empty path names no file or folder"),
    ("a\0b", "'a\\x00b': a path cannot hold a NUL byte"),
], ids=["empty", "nul"])  # fmt: skip
def test_a_target_no_file_can_have_is_an_argparse_error(no_model, capsys, target, message):
    with pytest.raises(SystemExit) as done:
        main(["adapt", "--target", target, "--name", "t"])
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"adapter-zoo adapt: error: argument --target: {message}"
    )
