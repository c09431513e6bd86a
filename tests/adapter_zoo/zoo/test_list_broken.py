"""``list`` beside broken entries of every kind: the good entries are shown, each
broken one is listed as BROKEN with its one-line reason. A card that is a pipe used to hang
``list`` for ever (reading it waits for a writer); a card that is a dangling link hid its
entry; an entry missing a file its card lists was shown as whole."""

from __future__ import annotations

import json
import os
import signal

import pytest

from adapter_zoo.cli import main
from adapter_zoo.zoo.store import CARD_FILE, local_cards, save_entry


def _entry(name: str):
    return save_entry(lambda folder: (folder / "w.bin").write_bytes(b"abc"), name,
                      {"mode": "adapter", "base_model": "minilm-l6", "forums": ["beer"]})  # fmt: skip


@pytest.fixture
def deadline():
    """Fail (instead of hanging the suite) when what runs in the test waits for ever."""

    def expire(*_):
        raise TimeoutError("list did not end: it waits on a card")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_list_shows_the_good_entries_beside_broken_ones_of_every_kind(capsys, deadline):
    _entry("a-good")
    pipe = _entry("b-pipe") / CARD_FILE
    pipe.unlink()
    os.mkfifo(pipe)
    dangling = _entry("c-dangling") / CARD_FILE
    dangling.unlink()
    dangling.symlink_to(dangling.parent / "gone.json")
    folder = _entry("d-folder") / CARD_FILE
    folder.unlink()
    folder.mkdir()
    missing = _entry("e-missing") / "w.bin"
    missing.unlink()
    null = _entry("f-null") / CARD_FILE
    null.write_text("null")
    _entry("g-good")
    listed = local_cards()
    assert [c["name"] for c in listed] == ["a-good", "b-pipe", "c-dangling", "d-folder",
                                           "e-missing", "f-null", "g-good"]  # fmt: skip
    assert [c.get("broken") for c in listed] == [
        None,
        f"{pipe}: not a regular file; {pipe.parent} is not a zoo entry",
        f"{dangling}: not a regular file; {dangling.parent} is not a zoo entry",
        f"{folder}: not a regular file; {folder.parent} is not a zoo entry",
        f"{missing}: missing from zoo entry 'e-missing'",
        f"{null}: the card must be a JSON object, not null",
        None,
    ]
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["a-good", "adapter", "minilm-l6", "local", "beer"]
    assert lines[2:7] == [f"{c['name']:<24} {'BROKEN':<10} {c['broken']}" for c in listed[1:6]]
    assert lines[7].split() == ["g-good", "adapter", "minilm-l6", "local", "beer"]
    assert main(["list", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [c.get("broken") for c in shown] == [c.get("broken") for c in listed]
