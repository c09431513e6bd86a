"""``stackexchange.io``: an overwrite cut short by a crash loses neither folder."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from stackexchange.io import (
    RECORD_SUFFIX,
    atomic_directory,
    lock_file,
    output_lock,
    remove_stale_temporaries,
)


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


def _ended_pid() -> int:
    """The id of a process that has ended (a crashed run's)."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _left_by(tmp_path, name: str, pid: int) -> None:
    """A temporary folder ``name`` with the record a run of process ``pid`` writes."""
    (tmp_path / name).mkdir()
    record = {"kind": "adapter-zoo temporary", "pid": pid, "host": socket.gethostname()}
    (tmp_path / (name + RECORD_SUFFIX)).write_text(json.dumps(record))


def test_clean_up_removes_the_old_copy_once_the_new_folder_is_in_place(tmp_path):
    final = _old_folder(tmp_path)
    pid = _ended_pid()
    _left_by(tmp_path, ".forum.old-1234abcd", pid)
    _left_by(tmp_path, ".forum.tmp-1-1234abcd", pid)
    removed = remove_stale_temporaries(tmp_path)
    assert sorted(p.name for p in removed) == [".forum.old-1234abcd", ".forum.tmp-1-1234abcd"]
    assert sorted(os.listdir(tmp_path)) == ["forum"]
    assert (final / "data.txt").read_text() == "old"


def test_clean_up_never_touches_a_users_file_named_like_a_temporary(tmp_path):
    for name in (".notes.tmp-mine", ".forum.old-backup", ".x.tmp-1-abcd"):
        (tmp_path / name).write_text("mine")
    (tmp_path / ".d.tmp-2-ffff").mkdir()
    (tmp_path / ".d.tmp-2-ffff" / "kept.txt").write_text("mine")
    # a record that is not the project's (another tool's file of that name) changes nothing
    (tmp_path / (".x.tmp-1-abcd" + RECORD_SUFFIX)).write_text('{"pid": 1}')
    before = sorted(os.listdir(tmp_path))
    assert remove_stale_temporaries(tmp_path) == []
    with atomic_directory(tmp_path / "forum") as tmp:  # nor the start of a write
        (tmp / "a.txt").write_text("a")
    assert sorted(os.listdir(tmp_path)) == sorted(before + ["forum"])
    assert (tmp_path / ".forum.old-backup").read_text() == "mine"


def test_clean_up_leaves_a_temporary_of_a_run_still_writing(tmp_path):
    import subprocess
    import sys

    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        _left_by(tmp_path, ".forum.tmp-9-0000aaaa", running.pid)
        (tmp_path / ".forum.tmp-9-0000aaaa" / "half.txt").write_text("being written")
        assert remove_stale_temporaries(tmp_path) == []
        assert (tmp_path / ".forum.tmp-9-0000aaaa" / "half.txt").exists()
    finally:
        running.kill()
        running.wait()
    assert [p.name for p in remove_stale_temporaries(tmp_path)] == [".forum.tmp-9-0000aaaa"]
    assert os.listdir(tmp_path) == []


def test_a_second_run_into_a_locked_output_is_refused_until_the_first_ends(tmp_path):
    import subprocess
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from stackexchange.io import output_lock\n"
         f"with output_lock({str(tmp_path)!r}):\n"
         "    print('held', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FileExistsError) as error, output_lock(tmp_path):
            pass
        assert str(error.value) == (
            f"{tmp_path}: another adapter-zoo run is writing into it (lock "
            f"{lock_file(tmp_path)}); wait until it ends or choose another output"
        )
    finally:
        holder.kill()
        holder.wait()
    with output_lock(tmp_path):  # free again once the holder is gone
        pass


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_a_folder_written_through_temporaries_of_its_own_is_as_readable_as_the_umask_allows(
    tmp_path, mask
):
    import tempfile

    old = os.umask(mask)
    try:
        with atomic_directory(tmp_path / "out") as tmp:
            handle, name = tempfile.mkstemp(dir=tmp)  # mode 0600, as a library's temporary
            os.close(handle)
            os.replace(name, tmp / "weights.bin")
            inner = Path(tempfile.mkdtemp(dir=tmp))  # mode 0700
            (inner / "run.sh").write_text("#!/bin/sh\n")
            os.chmod(inner / "run.sh", 0o700)
    finally:
        os.umask(old)
    out = tmp_path / "out"
    inner = out / inner.name
    assert (out / "weights.bin").stat().st_mode & 0o777 == 0o666 & ~mask
    assert out.stat().st_mode & 0o777 == inner.stat().st_mode & 0o777 == 0o777 & ~mask
    assert (inner / "run.sh").stat().st_mode & 0o777 == 0o777 & ~mask  # execute bit kept
