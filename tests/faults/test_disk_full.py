"""Writes failing part-way: a full disk at the atomic writer, a file-size limit
(``RLIMIT_FSIZE``) in the forked run, a read-only folder. Each is one line naming the path,
exit 2, nothing half written under a final name, and the rerun once the space (or the
right) is back completes."""

from __future__ import annotations

import ctypes
import errno
import os
import resource
from pathlib import Path

import pytest

from adapter_zoo.cli import main
from adapter_zoo.zoo.store import verify_entry

pytestmark = pytest.mark.usefixtures("warm_embedder")


def _no_space(*args):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("command", ["parse", "build-benchmark", "evaluate", "compose"])
def test_a_full_disk_at_the_atomic_writer_is_one_line_and_the_rerun_completes(
    command, tmp_path, parsed_shipped, monkeypatch, capsys, faults_kit
):
    from stackexchange.catalog import shipped_data

    zoo = Path(os.environ["ADAPTER_ZOO_HOME"])
    bench = tmp_path / "bench"
    forum = parsed_shipped / "bicycles.meta.stackexchange.com"
    if command == "evaluate":
        assert main(["build-benchmark", str(forum), "--out", str(bench)]) == 0
    argv, written, problems = {
        "parse": (["parse", str(shipped_data() / "augur.stackexchange.com.7z"), "--out",
                   str(tmp_path / "p")], tmp_path / "p" / "augur.stackexchange.com",
                  lambda: faults_kit.checks.forum_problems(tmp_path / "p")),
        "build-benchmark": (["build-benchmark", str(forum), "--out", str(bench)], bench,
                            lambda: faults_kit.checks.benchmark_problems(bench)),
        "evaluate": (["evaluate", "--model", "bm25", "--benchmark", f"local:{bench}",
                      "--results", str(tmp_path / "r")], tmp_path / "r" / "results.jsonl",
                     lambda: faults_kit.checks.results_problems(tmp_path / "r")),
        "compose": (["compose", "--name", "c", "--fusion", "bm25", "tfidf"], zoo / "c",
                    lambda: faults_kit.checks.zoo_problems(zoo)),
    }[command]  # fmt: skip
    capsys.readouterr()
    with monkeypatch.context() as full:
        full.setattr(os, "fsync", _no_space)  # every atomic write syncs before its rename
        assert main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"adapter-zoo {command}: error: [Errno 28] No space left on device: '{written}'"
    )
    assert not written.exists() and problems() == []
    assert [p.name for p in written.parent.iterdir() if ".tmp-" in p.name] == []
    assert main(argv) == 0  # space freed
    assert written.exists() and problems() == []


def _file_size_limit(limit: int):
    def prepare() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return prepare


def test_a_file_size_limit_while_training_is_one_line_and_the_rerun_resumes(
    parsed_augur, tiny_sentence_bert_path, tmp_path, faults_kit
):
    zoo = Path(os.environ["ADAPTER_ZOO_HOME"])
    argv = ["train", "--mode", "adapter", "--encoder", "bi", "--data", str(parsed_augur),
            "--forums", "augur", "--name", "k", "--base", str(tiny_sentence_bert_path),
            "--pairs", "title_answer", "--batch-size", "32", "--max-length", "16",
            "--max-steps", "4", "--eval-steps", "2"]  # fmt: skip
    # the adapter's weights take some 2 kB: a checkpoint's write fails part-way
    code, _ = faults_kit.fork_cli(argv, tmp_path / "limited.log", prepare=_file_size_limit(1500))
    assert code == 2
    assert (tmp_path / "limited.log").read_text().splitlines()[-1] == (
        f"adapter-zoo train: error: [Errno 27] File too large: '{zoo / '.checkpoints' / 'k'}'"
    )
    assert faults_kit.checks.zoo_problems(zoo) == [] and not (zoo / "k").exists()
    code, _ = faults_kit.fork_cli(argv, tmp_path / "rerun.log")
    assert code == 0, (tmp_path / "rerun.log").read_text()[-2000:]
    verify_entry(zoo / "k")


def test_a_file_size_limit_while_parsing_is_one_line_and_the_rerun_completes(tmp_path, faults_kit):
    from stackexchange.catalog import shipped_data

    out = tmp_path / "parsed"
    argv = ["parse", str(shipped_data() / "augur.stackexchange.com.7z"), "--out", str(out),
            "--workers", "1"]  # fmt: skip
    code, _ = faults_kit.fork_cli(argv, tmp_path / "limited.log", prepare=_file_size_limit(20_000))
    assert code == 2
    assert (tmp_path / "limited.log").read_text().splitlines()[-1] == (
        f"adapter-zoo parse: error: [Errno 27] File too large: '{out / 'augur.stackexchange.com'}'"
    )
    assert list(out.iterdir()) == []  # its temporaries gone with it
    assert faults_kit.fork_cli(argv, tmp_path / "rerun.log")[0] == 0
    assert faults_kit.checks.forum_problems(out) == [] and len(list(out.iterdir())) == 1


CAP_DAC_OVERRIDE = 1  # linux/capability.h
CAPABILITY_VERSION_3 = 0x20080522


def _without_dac_override() -> None:
    """As root every folder is writable: the run drops the one capability that lets root
    pass the mode bits (``CAP_DAC_OVERRIDE``), so a folder without write bits refuses it as
    it refuses a user. It keeps its uid: it still reaches the checkout and the venv wherever
    they lie (another user cannot enter a root-only ``/root`` or ``mktemp -d`` folder)."""
    if os.getuid() != 0:
        return  # a user meets the mode bits already
    libc = ctypes.CDLL(None, use_errno=True)
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)  # this process
    sets = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable; twice 32 bits
    if libc.capget(header, sets) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    for index in range(3):
        sets[index] &= ~(1 << CAP_DAC_OVERRIDE)
    if libc.capset(header, sets) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def test_a_read_only_zoo_is_one_line_and_the_rerun_once_writable_completes(
    tmp_path, monkeypatch, faults_kit
):
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(zoo))
    argv = ["compose", "--name", "c", "--fusion", "bm25", "tfidf"]
    zoo.chmod(0o555)
    code, _ = faults_kit.fork_cli(argv, tmp_path / "read-only.log", prepare=_without_dac_override)
    zoo.chmod(0o755)
    assert code == 2
    assert (tmp_path / "read-only.log").read_text().splitlines()[-1] == (
        f"adapter-zoo compose: error: {zoo}: cannot write zoo entries there (Permission "
        f"denied); make it writable, or set ADAPTER_ZOO_HOME to a folder you can write (the zoo "
        f"home is {zoo})"
    )
    assert list(zoo.iterdir()) == []
    assert faults_kit.fork_cli(argv, tmp_path / "rerun.log")[0] == 0
    verify_entry(zoo / "c")
