"""``stackexchange.io``: an overwrite cut short by a crash loses neither folder."""

from __future__ import annotations

import os

import pytest

from stackexchange.io import atomic_directory, remove_stale_temporaries


def _crash_between_the_renames(monkeypatch, final):
    """Overwrite ``final`` and die right after the old folder was moved aside."""
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        calls.append((src, dst))
        if len(calls) == 2:  # the new folder would now take the final name
            raise KeyboardInterrupt("killed")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt), atomic_directory(final, overwrite=True) as tmp:
        (tmp / "data.txt").write_text("new")
    monkeypatch.setattr(os, "replace", real_replace)


def _old_folder(tmp_path):
    final = tmp_path / "forum"
    final.mkdir()
    (final / "data.txt").write_text("old")
    return final


def test_clean_up_after_a_crash_mid_overwrite_restores_the_old_folder(tmp_path, monkeypatch):
    final = _old_folder(tmp_path)
    _crash_between_the_renames(monkeypatch, final)
    assert not final.exists()  # the crash left the old folder aside, the new one unplaced
    removed = remove_stale_temporaries(tmp_path)
    assert len(removed) == 1 and removed[0].name.startswith(".forum.tmp-")  # the new one
    assert sorted(os.listdir(tmp_path)) == ["forum"]
    assert (final / "data.txt").read_text() == "old"


def test_next_write_of_the_same_folder_restores_it_first(tmp_path, monkeypatch):
    final = _old_folder(tmp_path)
    _crash_between_the_renames(monkeypatch, final)
    with pytest.raises(FileExistsError, match="already exists"), atomic_directory(final):
        pass
    assert (final / "data.txt").read_text() == "old"


def test_clean_up_removes_the_old_copy_once_the_new_folder_is_in_place(tmp_path):
    final = _old_folder(tmp_path)
    (tmp_path / ".forum.old-1234abcd").mkdir()
    (tmp_path / ".forum.tmp-1-1234abcd").mkdir()
    removed = remove_stale_temporaries(tmp_path)
    assert sorted(p.name for p in removed) == [".forum.old-1234abcd", ".forum.tmp-1-1234abcd"]
    assert sorted(os.listdir(tmp_path)) == ["forum"]
    assert (final / "data.txt").read_text() == "old"
