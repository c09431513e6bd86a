"""``adapter-zoo export`` on hostile input, by family: names, paths, broken
records, concurrency. Each case is one line on stderr and exit 2 (argparse's usage and
error for a path no file can have), nothing written, and the model never loads: the entry
and the output are checked first."""

from __future__ import annotations

import errno
import tempfile

import pytest

import adapter_zoo.loading
from adapter_zoo.cli import main
from adapter_zoo.zoo.store import CARD_FILE, save_entry, zoo_home

FULL = {"mode": "full", "encoder": "cross", "base_model": "bert-base-uncased", "forums": ["b"]}
HUB = "hub: zoo index adapter-zoo/index/index.json: not in the Hugging Face cache"


@pytest.fixture
def entry(monkeypatch):
    """A full cross-encoder entry (exportable by its card); loading any model fails the test."""

    def forbidden(*_args, **_kwargs):
        raise AssertionError("the model loaded before the checks")

    monkeypatch.setattr(adapter_zoo.loading, "load", forbidden)
    return save_entry(lambda folder: (folder / "w.bin").write_bytes(b"0"), "ce", FULL)


def _export(capsys, *argv) -> tuple[int | str, str]:
    try:
        code = main(["export", *argv])
    except SystemExit as done:  # argparse
        code = f"usage {done.code}"
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (".", "invalid zoo entry name '.': a name is a plain folder name in the zoo"),
        ("..", "invalid zoo entry name '..': a name is a plain folder name in the zoo"),
        ("../ce", "unknown adapter '../ce'; did you mean ce?"),
        ("x" * 300, f"unknown adapter '{'x' * 300}'; no similar local name"),
        ("a\nb", "unknown adapter 'a\\nb'; no similar local name"),
        ("bm25", "cannot export 'bm25' as a CrossEncoder: it is a composition member"),
        ("sbert:minilm-l6", "cannot export 'sbert:minilm-l6' as a CrossEncoder: it is a bi-enc"),
    ],
    ids=["dot", "dotdot", "climbing", "too-long", "newline", "bm25", "sbert"],
)
def test_a_name_that_is_no_exportable_entry_is_one_line(
    entry, tmp_path, capsys, snapshot, name, message
):
    before = snapshot(tmp_path, zoo_home())
    code, err = _export(capsys, name, "--out", str(tmp_path / "out"))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"adapter-zoo export: error: {message}")
    assert snapshot(tmp_path, zoo_home()) == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"null", "the card must be a JSON object, not null"),
        (b"[]", "the card must be a JSON object, not []"),
        (b"{x", "not valid JSON (Expecting property name enclosed in double quotes"),
        (b"", "not valid JSON (Expecting value: line 1 column 1 (char 0))"),
        (b"\x00\x00", "not valid JSON (Expecting value: line 1 column 1 (char 0))"),
        (b'{"name": "\xe9"}', "not valid JSON ('utf-8' codec can't decode byte 0xe9"),
        (b'{"name": "b", "mode": null, "base_model": "x", "files": {}}',
         "field 'mode' must be a non-empty string, not null"),
        (b'{"name": "b", "mode": "full", "base_model": "x", "files": []}',
         "'files' must map relative paths to sha256 hashes"),
    ],
    ids=["null", "list", "garbage", "empty", "nul-bytes", "latin-1", "kind-null", "files-list"],
)  # fmt: skip
def test_a_broken_card_is_one_line_naming_its_file(entry, tmp_path, capsys, content, message):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / CARD_FILE).write_bytes(content)
    code, err = _export(capsys, str(folder), "--out", str(tmp_path / "out"))
    assert (code, err.count("\n")) == (2, 1)
    assert err.startswith(f"adapter-zoo export: error: {folder / CARD_FILE}: {message}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken"]


def _paths(tmp_path, entry):
    """(out, expected message) per hostile output path; ``{t}`` is tmp_path."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "notes.txt").write_text("keep")
    (tmp_path / "to-theirs").symlink_to(tmp_path / "theirs")
    not_ours = "already exists and is not a CrossEncoder export written by adapter-zoo; move " \
               "it away or pass --overwrite"  # fmt: skip
    long = "y" * 250
    return {
        "a-file": (tmp_path / "file", f"{tmp_path / 'file'}: {not_ours}"),
        "a-user-folder": (tmp_path / "theirs", f"{tmp_path / 'theirs'}: {not_ours}"),
        "a-link-to-a-user-folder": (tmp_path / "to-theirs", f"{tmp_path / 'to-theirs'}: {not_ours}"),
        "the-entry": (entry, f"{entry}: input inside or equal to the output {entry}; choose "
                             "another output"),
        "inside-the-entry": (entry / "sub", f"{entry / 'sub'}: output inside the input {entry}; "
                                            "choose another output"),
        "around-the-entry": (zoo_home(), f"{entry}: input inside or equal to the output "
                                         f"{zoo_home()}; choose another output"),
        "too-long": (tmp_path / long, f"{tmp_path / long}: the name '{'y' * 40}...' is too long "
                                      "for the file system"),
    }  # fmt: skip


# an --out below a file is argparse's to refuse: tests/test_output_folders.py
PATH_CASES = ["a-file", "a-user-folder", "a-link-to-a-user-folder", "the-entry",
              "inside-the-entry", "around-the-entry", "too-long"]  # fmt: skip


@pytest.mark.parametrize("case", PATH_CASES)
def test_an_output_that_cannot_be_written_is_refused_before_the_model_loads(
    entry, tmp_path, capsys, snapshot, case
):
    out, message = _paths(tmp_path, entry)[case]
    before = snapshot(tmp_path, zoo_home())
    code, err = _export(capsys, "ce", "--out", str(out))
    assert (code, err.count("\n")) == (2, 1)
    assert err.startswith(f"adapter-zoo export: error: {message}")
    assert snapshot(tmp_path, zoo_home()) == before


def test_a_read_only_output_parent_is_refused_before_the_model_loads(
    entry, tmp_path, capsys, monkeypatch
):
    def read_only(*_args, dir=None, **_kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(dir))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    code, err = _export(capsys, "ce", "--out", str(tmp_path / "out"))
    assert code == 2
    assert err == (
        f"adapter-zoo export: error: {tmp_path}: cannot write a CrossEncoder export there "
        "(Read-only file system); make it writable or choose another output\n"
    )


@pytest.mark.parametrize(
    ("out", "message"),
    [("", "'': an empty path names no file or folder"),
     ("a\0b", "'a\\x00b': a path cannot hold a NUL byte")],
    ids=["empty", "nul"],
)  # fmt: skip
def test_a_path_no_file_can_have_is_an_argparse_error(entry, capsys, out, message):
    code, err = _export(capsys, "ce", "--out", out)
    assert code == "usage 2"
    assert err.splitlines()[-1] == f"adapter-zoo export: error: argument --out: {message}"


def test_a_second_export_into_one_folder_is_refused_while_the_first_writes(
    entry, tmp_path, capsys, held_output_lock, monkeypatch
):
    import adapter_zoo.export

    out = tmp_path / "out"
    held_output_lock(out)
    # past the checks, the (rigged) model loads; the lock is asked for before any writing
    monkeypatch.setattr(adapter_zoo.loading, "load", lambda *a, **k: _Ranker())
    monkeypatch.setattr(adapter_zoo.export, "model_refusal", lambda *a: None)
    code, err = _export(capsys, "ce", "--out", str(out))
    assert code == 2
    assert err.startswith(
        f"adapter-zoo export: error: {out}: another adapter-zoo run is writing into it (lock "
    )
    assert err.endswith("wait until it ends or choose another output\n")
    assert list(tmp_path.iterdir()) == []


class _Ranker:
    """Stands in for a loaded entry; writing it is never reached."""

    class model:  # noqa: N801
        active_head = "head"
