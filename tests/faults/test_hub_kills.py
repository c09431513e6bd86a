"""push and pull against a local olah, each killed at two seeded moments and run again; two
pulls of one entry into one cache at once.

olah accepts no uploads: ``push`` writes to its git repositories through the campaign's
STAND-IN FOR THE HUB'S WRITE ENDPOINTS (``crash_hooks.install_git_upload``, in the forked
process); everything read, the pull included, goes through olah.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from adapter_zoo.zoo.store import save_entry
from benchmarks.reliability.crash_hooks import GIT_UPLOAD_ENV

PULLED = "served/entry"


@pytest.fixture(scope="module")
def olah(tmp_path_factory):
    """An olah on loopback serving ``<root>/mirrors`` (``benchmarks/olah.py``)."""
    from benchmarks.olah import start_olah

    root = tmp_path_factory.mktemp("olah")
    (root / "mirrors" / "models").mkdir(parents=True)
    server, url = start_olah(root, moving=True)
    yield root / "mirrors", url
    server.terminate()
    server.wait(timeout=30)


@pytest.fixture
def online(olah, tmp_path, monkeypatch):
    """This test's process (and the runs it forks) online against the olah, its own cache."""
    from huggingface_hub import constants
    from huggingface_hub.utils import reset_sessions

    mirrors, url = olah
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv(GIT_UPLOAD_ENV, str(mirrors))
    reset_sessions()  # a session made offline keeps refusing
    return mirrors


@pytest.fixture
def entry(tmp_path, monkeypatch) -> Path:
    """A zoo entry of a few files (what push sends is files and a card, whatever the kind)."""
    zoo = tmp_path / "zoo"
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(zoo))

    def write(folder: Path) -> None:
        (folder / "weights.bin").write_bytes(os.urandom(3000))
        (folder / "sub").mkdir()
        (folder / "sub" / "config.json").write_text('{"layers": 2}')

    card = {"mode": "composite", "encoder": "composite", "composition": "alias",
            "base_model": "composite", "members": ["bm25"], "forums": [], "spec": "bm25"}  # fmt: skip
    return save_entry(write, "e", card)


def test_push(survives, online, entry, faults_kit):
    out = online / "models" / "pushed"
    out.mkdir(parents=True)
    repo = out / "e"
    survives(["push", "e", "pushed/e"], out, "push", lambda out: faults_kit.checks.hub_problems(repo),
             outputs=lambda: faults_kit.checks.hub_fingerprint(repo))  # fmt: skip
    assert faults_kit.checks.hub_fingerprint(repo)  # it holds the entry


def test_pull(survives, online, entry, faults_kit, tmp_path):
    code, _ = faults_kit.fork_cli(["push", "e", PULLED], tmp_path / "push.log")
    assert code == 0, (tmp_path / "push.log").read_text()
    shutil.rmtree(entry)  # pulled, not read from the local zoo
    expected = faults_kit.checks.hub_fingerprint(online / "models" / PULLED)
    cache = tmp_path / "hf"
    cache.mkdir()
    survives(["pull", PULLED], cache, "pull",
             lambda out: faults_kit.checks.snapshot_problems(out, expected))  # fmt: skip
    snapshot = next(cache.glob("models--served--entry/snapshots/*"))
    pulled = {p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file()}
    assert pulled == set(faults_kit.checks.hub_files(online / "models" / PULLED)) - {
        ".gitattributes"
    }


def test_two_pulls_of_one_entry_at_once_both_end_with_it_whole(online, entry, faults_kit, tmp_path):
    code, _ = faults_kit.fork_cli(["push", "e", PULLED], tmp_path / "push.log")
    assert code == 0, (tmp_path / "push.log").read_text()
    shutil.rmtree(entry)
    expected = faults_kit.checks.hub_fingerprint(online / "models" / PULLED)
    # one Hugging Face cache, two processes downloading the same files into it
    runs = [faults_kit.Forked(["pull", PULLED], tmp_path / f"pull-{i}.log") for i in (1, 2)]
    for i, run in enumerate(runs, 1):
        assert run.wait()[0] == 0, (tmp_path / f"pull-{i}.log").read_text()[-2000:]
    cache = tmp_path / "hf"
    assert faults_kit.checks.snapshot_problems(cache, expected) == []
    snapshot = next(cache.glob("models--served--entry/snapshots/*"))
    pulled = {p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file()}
    assert pulled == set(faults_kit.checks.hub_files(online / "models" / PULLED)) - {
        ".gitattributes"
    }
