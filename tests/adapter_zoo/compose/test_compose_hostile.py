"""``adapter-zoo compose`` on hostile input: a zoo home that cannot be written is
one line and exit 2 before any member loads or scores the dev lists."""

from __future__ import annotations

import pytest

import adapter_zoo.compose.entry as entry
from adapter_zoo.cli import main

ADVICE = "make it writable, or set ADAPTER_ZOO_HOME to a folder you can write"


@pytest.fixture
def no_members(monkeypatch):
    """Loading a member (without --data) or scoring the dev lists fails the test if reached."""

    def forbidden(*_args, **_kwargs):
        raise AssertionError("a member loaded before the zoo home was checked")

    monkeypatch.setattr(entry, "build", forbidden)
    monkeypatch.setattr(entry, "dev_lists_of", forbidden)


@pytest.mark.parametrize("where", ["home-is-a-file", "home-below-a-file"])
@pytest.mark.parametrize("on_dev", [False, True], ids=["members", "on-dev"])
def test_a_zoo_home_that_cannot_be_written_is_refused_before_the_members_load(
    no_members, tmp_path, monkeypatch, capsys, snapshot, where, on_dev
):
    (tmp_path / "file").write_text("x")
    home = tmp_path / "file" if where == "home-is-a-file" else tmp_path / "file" / "zoo"
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(home))
    dev = ["--data", str(tmp_path), "--forum", "beer"] if on_dev else []
    before = snapshot(tmp_path)
    assert main(["compose", "--name", "c", "--fusion", "bm25", "tfidf", *dev]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo compose: error: {home}: cannot write zoo entries there "
        f"({tmp_path / 'file'} is not a folder); {ADVICE} (the zoo home is {home})\n"
    )
    assert snapshot(tmp_path) == before
