"""``adapter-zoo build`` on hostile input, by family: names, paths, sizes. What
could fail after the download, the parse or the training (a zoo home that cannot be
written, a dump that is not there, a base whose config.json cannot be read) is one line and
exit 2 before any of them runs."""

from __future__ import annotations

import pytest

import adapter_zoo.build
from adapter_zoo.cli import main
from adapter_zoo.zoo.store import zoo_home
from stackexchange.catalog import shipped_data

BEER = shipped_data() / "beer.stackexchange.com.7z"
ZOO_ADVICE = "make it writable, or set ADAPTER_ZOO_HOME to a folder you can write"


@pytest.fixture
def no_work(monkeypatch):
    """The download, the parse and the training fail the test if reached."""

    def forbidden(*_args, **_kwargs):
        raise AssertionError("the dump was fetched or parsed before the checks")

    monkeypatch.setattr(adapter_zoo.build, "_download", forbidden)
    monkeypatch.setattr(adapter_zoo.build, "_parse_and_train", forbidden)


def _build(capsys, *argv) -> tuple[int | str, str]:
    try:
        code = main(["build", *argv])
    except SystemExit as done:  # argparse
        code = f"usage {done.code}"
    return code, capsys.readouterr().err


def _cases(tmp_path, base):
    (tmp_path / "file").write_text("x")
    missing = tmp_path / "missing.7z"
    return {
        "unknown-forum": (["no-such-forum"], "cannot build 'no-such-forum': unknown forum "
                                             "'no-such-forum'"),
        "climbing-name": (["beer", "--name", "../x"], "invalid zoo entry name '../x': use "
                                                      "letters, digits, '-', '_' or '.'"),
        "hidden-name": (["beer", "--name", ".x"], "invalid zoo entry name '.x': use letters, "
                                                  "digits, '-', '_' or '.'"),
        "missing-dump": (["beer", "--dump", str(missing)],
                         f"{missing}: no such archive, folder or file; give the forum's .7z "
                         "dump"),
        "missing-base": (["beer", "--dump", str(BEER), "--base", str(tmp_path / "nobase")],
                         f"base model {str(tmp_path / 'nobase')!r}: cannot read its config.json"),
        "a-file-as-base": (["beer", "--dump", str(BEER), "--base", str(tmp_path / "file")],
                           f"base model {str(tmp_path / 'file')!r}: cannot read its "
                           "config.json"),
    }  # fmt: skip


CASES = ["unknown-forum", "climbing-name", "hidden-name", "missing-dump",
         "missing-base", "a-file-as-base"]  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_before_any_download_or_parse(
    no_work, tiny_sentence_bert_path, tmp_path, capsys, snapshot, case
):
    argv, message = _cases(tmp_path, tiny_sentence_bert_path)[case]
    if "--base" not in argv:
        argv = [*argv, "--base", str(tiny_sentence_bert_path)]
    before = snapshot(tmp_path)
    code, err = _build(capsys, *argv)
    assert (code, err.count("\n")) == (2, 1)
    assert err.startswith(f"adapter-zoo build: error: {message}")
    assert snapshot(tmp_path) == before
    assert not zoo_home().exists() or list(zoo_home().iterdir()) == []


@pytest.mark.parametrize("where", ["home-is-a-file", "home-below-a-file", "checkpoints-a-file"])
def test_a_zoo_home_that_cannot_be_written_is_refused_before_the_download(
    no_work, tiny_sentence_bert_path, tmp_path, monkeypatch, capsys, where
):
    (tmp_path / "file").write_text("x")
    home = {"home-is-a-file": tmp_path / "file", "home-below-a-file": tmp_path / "file" / "zoo",
            "checkpoints-a-file": tmp_path / "zoo"}[where]  # fmt: skip
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(home))
    blocked = {"home-is-a-file": home, "home-below-a-file": home,
               "checkpoints-a-file": home / ".checkpoints"}[where]  # fmt: skip
    if where == "checkpoints-a-file":
        home.mkdir()
        blocked.write_text("a file where the checkpoints go")
    reason = tmp_path / "file" if where != "checkpoints-a-file" else blocked
    code, err = _build(capsys, "beer", "--base", str(tiny_sentence_bert_path))
    assert code == 2
    assert err == (
        f"adapter-zoo build: error: {blocked}: cannot write zoo entries there ({reason} is not "
        f"a folder); {ZOO_ADVICE} (the zoo home is {home})\n"
    )


@pytest.mark.parametrize(("dump", "message"), [
    ("", "'': an empty path names no file or folder"),
    ("a\0b", "'a\\x00b': a path cannot hold a NUL byte"),
], ids=["empty", "nul"])  # fmt: skip
def test_a_dump_path_no_file_can_have_is_an_argparse_error(no_work, capsys, dump, message):
    code, err = _build(capsys, "beer", "--dump", dump)
    assert code == "usage 2"
    assert err.splitlines()[-1] == f"adapter-zoo build: error: argument --dump: {message}"


@pytest.mark.parametrize("steps", [0, -1, 10**9 + 1, 10**20, True, 2.5])
def test_a_step_count_out_of_range_is_refused_for_a_python_caller(no_work, steps):
    from adapter_zoo.errors import ZooError

    with pytest.raises(ZooError) as error:
        adapter_zoo.build.build_entry("beer", dump=BEER, steps=steps)
    assert str(error.value) == (
        f"build steps must be a whole number in [1, 1000000000], not {steps!r}"
    )
    assert not zoo_home().exists() or list(zoo_home().iterdir()) == []
