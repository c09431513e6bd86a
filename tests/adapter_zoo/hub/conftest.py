"""Hub tests against a real Hub-protocol server on loopback: olah serving local git repos.

olah (its own venv, ``.venv-olah``: it needs a newer huggingface_hub than ``adapters``
allows) serves the bare git repositories under ``<mirrors>/models/<org>/<name>`` through the
Hub's HTTP API ("mirrors-path" in its config, ``offline = true`` so it never calls upstream).

olah accepts no uploads, and no installable server does. ``upload_standin`` therefore
replaces the four HfApi calls that write (create_repo, create_branch, create_commit,
create_tag) with the same operations on those git repositories: STAND-IN FOR THE HUB'S
WRITE ENDPOINTS, tests only. Everything read back goes through olah.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import types
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
OLAH = ROOT / ".venv-olah" / "bin" / "olah-cli"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "zoo-test",
    "GIT_AUTHOR_EMAIL": "zoo@test",
    "GIT_COMMITTER_NAME": "zoo-test",
    "GIT_COMMITTER_EMAIL": "zoo@test",
}


def git(repo: Path, *args: str, data: bytes | None = None, env: dict | None = None) -> str:
    result = subprocess.run(
        ["git", "--git-dir", str(repo), *args],
        input=data,
        capture_output=True,
        check=True,
        env={**os.environ, **GIT_ENV, **(env or {})},
    )
    return result.stdout.decode().strip()


def git_commit(
    repo: Path,
    files: dict[str, bytes],
    message: str,
    *,
    branch: str = "main",
    delete: tuple[str, ...] = (),
) -> str:
    """Commit ``files`` (path -> bytes) on top of ``branch`` of the bare ``repo``; return sha.

    Built with a private index file and moved in with one compare-and-swap ``update-ref``:
    until that last step the repository's refs do not change.
    """
    index = {"GIT_INDEX_FILE": str(repo / f"index-{os.getpid()}-{time.monotonic_ns()}")}
    try:
        parent = git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}")
    except subprocess.CalledProcessError:
        parent = ""
    try:
        git(repo, "read-tree", *([parent] if parent else ["--empty"]), env=index)
        for path, data in files.items():
            blob = git(repo, "hash-object", "-w", "--stdin", data=data)
            git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=index)
        for path in delete:  # mode 0 removes the path (--force-remove wants a work tree)
            git(
                repo,
                "update-index",
                "--index-info",
                data=f"0 {'0' * 40}\t{path}\n".encode(),
                env=index,
            )
        tree = git(repo, "write-tree", env=index)
    finally:
        Path(index["GIT_INDEX_FILE"]).unlink(missing_ok=True)
    commit = git(repo, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)
    git(repo, "update-ref", f"refs/heads/{branch}", commit, parent or "0" * 40)
    return commit


def git_files(repo: Path, revision: str) -> dict[str, bytes]:
    """Every file of ``revision`` in the bare ``repo`` (path -> bytes)."""
    names = git(repo, "ls-tree", "-r", "--name-only", revision).splitlines()
    return {
        name: subprocess.run(
            ["git", "--git-dir", str(repo), "show", f"{revision}:{name}"],
            capture_output=True,
            check=True,
        ).stdout
        for name in names
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Olah(types.SimpleNamespace):
    """A running olah: ``url``, ``mirrors`` (its repositories) and repository helpers."""

    def repo(self, repo_id: str) -> Path:
        return self.mirrors / "models" / repo_id

    def create(self, repo_id: str) -> Path:
        """A new bare repository with the Hub's initial commit (a ``.gitattributes``); one of
        that name left by an earlier test (the server lives for the session) is replaced."""
        path = self.repo(repo_id)
        shutil.rmtree(path, ignore_errors=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
        git_commit(
            path,
            {".gitattributes": b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n"},
            "initial commit",
        )
        return path


@pytest.fixture(scope="session")
def olah(tmp_path_factory):
    """olah on a free loopback port, serving the git repositories under ``olah.mirrors``."""
    if not OLAH.exists():
        message = f"olah is not installed at {OLAH} (run .ci/install)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    root = tmp_path_factory.mktemp("olah")
    mirrors = root / "mirrors"
    (mirrors / "models").mkdir(parents=True)
    # Parallel test processes each start their own olah: a port another process took between
    # _free_port and olah's bind makes olah exit, and it is started again on a new port.
    for attempt in range(3):
        port = _free_port()
        (root / "config.toml").write_text(f"""
[basic]
host = "127.0.0.1"
port = {port}
repos-path = "{root / "cache"}"
mirrors-path = ["{mirrors}"]
# Never ask huggingface.co: everything comes from the local repositories.
hf-scheme = "http"
hf-netloc = "127.0.0.1:9"
hf-lfs-netloc = "127.0.0.1:9"
# Branches move during the tests: resolve them on every request.
metadata-cache-ttl = 0
[accessibility]
offline = true
""")
        log = open(root / "olah.log", "wb")  # noqa: SIM115 (closed at teardown)
        server = subprocess.Popen(
            [str(OLAH), "-c", "config.toml"], cwd=root, stdout=log, stderr=subprocess.STDOUT
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "/api/models/none/none/revision/main", timeout=2)
            except urllib.error.HTTPError:
                break  # it answers (404): up
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        if server.poll() is None and time.monotonic() <= deadline:
            break
        server.kill()
        server.wait()
        log.close()
        if attempt == 2:
            raise RuntimeError(f"olah did not start:\n{(root / 'olah.log').read_text()}")
    yield Olah(url=url, mirrors=mirrors, log=root / "olah.log")
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


def reset_sessions() -> None:
    """Drop huggingface_hub's cached HTTP sessions: one made while ``HF_HUB_OFFLINE`` was set
    keeps refusing every request after the flag is cleared."""
    from huggingface_hub.utils import reset_sessions as reset

    reset()


@pytest.fixture
def hub(olah, tmp_path, monkeypatch):
    """Point the zoo (and huggingface_hub) at olah, online, with an empty Hugging Face cache.

    tests/conftest.py switched the Hub off before huggingface_hub was imported, so its
    import-time constants are patched too; the zoo itself reads HF_ENDPOINT per call.
    """
    from huggingface_hub import constants

    monkeypatch.setenv("HF_ENDPOINT", olah.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("ADAPTER_ZOO_INDEX", f"zoo/index-{tmp_path.name}")
    # a session made while offline (an earlier test's) carries huggingface_hub's offline adapter
    reset_sessions()
    return olah


@pytest.fixture
def go_offline(monkeypatch):
    """Switch the Hub off again (``HF_HUB_OFFLINE=1``) for the rest of the test."""
    from huggingface_hub import constants

    def switch():
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
        reset_sessions()

    return switch


@pytest.fixture
def upload_standin(hub, monkeypatch):
    """STAND-IN for the Hub's write endpoints (olah has none): HfApi's create_repo,
    create_branch, create_commit and create_tag act on olah's git repositories directly.

    ``standin.sent`` records every commit's operations; set ``standin.fail_at`` to a path to
    make create_commit raise when it reaches that file (a connection lost mid-push).
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants
    from huggingface_hub.hf_api import CommitInfo

    standin = types.SimpleNamespace(sent=[], created={}, fail_at=None)

    def create_repo(self, repo_id, *, private=None, exist_ok=False, **_):
        if hub.repo(repo_id).exists():
            if not exist_ok:
                raise RuntimeError(f"stand-in: {repo_id} exists")
        else:
            hub.create(repo_id)
            standin.created[repo_id] = {"private": private}
        return f"{hub.url}/{repo_id}"

    def create_branch(self, repo_id, *, branch, revision=None, exist_ok=False, **_):
        repo = hub.repo(repo_id)
        if git(repo, "for-each-ref", f"refs/heads/{branch}"):
            if not exist_ok:
                raise RuntimeError(f"stand-in: branch {branch} exists")
            return
        git(repo, "update-ref", f"refs/heads/{branch}", revision or "refs/heads/main")

    def create_commit(self, repo_id, operations, *, commit_message, revision=None, **_):
        files, deleted = {}, []
        for op in operations:
            if isinstance(op, CommitOperationDelete):
                deleted.append(op.path_in_repo)
                continue
            assert isinstance(op, CommitOperationAdd)
            if op.path_in_repo == standin.fail_at:
                raise ConnectionError(f"stand-in: connection lost while sending {op.path_in_repo}")
            with op.as_file() as handle:
                files[op.path_in_repo] = handle.read()
        standin.sent.append(
            {
                "repo": repo_id,
                "revision": revision,
                "message": commit_message,
                "files": files,
                "deleted": deleted,
            }
        )
        sha = git_commit(
            hub.repo(repo_id),
            files,
            commit_message,
            branch=revision or "main",
            delete=tuple(deleted),
        )
        # CommitInfo parses its URL against huggingface_hub's import-time endpoint.
        return CommitInfo(
            commit_url=f"{constants.ENDPOINT}/{repo_id}/commit/{sha}",
            commit_message=commit_message,
            commit_description="",
            oid=sha,
        )

    def create_tag(self, repo_id, *, tag, revision=None, **_):
        git(hub.repo(repo_id), "tag", tag, revision or "refs/heads/main")

    for name, function in [
        ("create_repo", create_repo),
        ("create_branch", create_branch),
        ("create_commit", create_commit),
        ("create_tag", create_tag),
    ]:
        monkeypatch.setattr(HfApi, name, function)
    return standin


def make_adapter_entry(tiny_bert_path: Path, name: str, seed: int, forums: list[str]) -> Path:
    """A zoo entry: tiny BERT + a SeqBn adapter and ranking head with seeded random weights."""
    import torch
    from adapters import SeqBnConfig

    from adapter_zoo.ranker.model import add_ranking_head, build_model
    from adapter_zoo.zoo.layouts import write_adapter
    from adapter_zoo.zoo.store import save_entry

    model, _ = build_model(str(tiny_bert_path))
    model.add_adapter(name, config=SeqBnConfig(reduction_factor=4))
    add_ranking_head(model, name)
    torch.manual_seed(seed)
    with torch.no_grad():
        for key, parameter in model.named_parameters():
            if f".adapters.{name}." in key or key.startswith("heads."):
                parameter.copy_(torch.randn_like(parameter) * 0.2)
    card = {
        "mode": "adapter",
        "layout": "adapter",
        "base_model": str(tiny_bert_path),
        "forums": forums,
        "head": name,
        "seed": seed,
        "scores": {"dev_mrr@10": 0.5 + seed / 100, "dev_p@1": 0.25},
    }
    return save_entry(lambda folder: write_adapter(model, name, folder), name, card)


@pytest.fixture(scope="session")
def entries(tiny_bert_path, tmp_path_factory):
    """Two saved zoo entries (``beer``, ``travel``) in a zoo folder of their own."""
    home = tmp_path_factory.mktemp("source-zoo")
    old = os.environ.get("ADAPTER_ZOO_HOME")
    os.environ["ADAPTER_ZOO_HOME"] = str(home)
    try:
        made = {
            "beer": make_adapter_entry(tiny_bert_path, "beer", 1, ["beer.stackexchange.com"]),
            "travel": make_adapter_entry(tiny_bert_path, "travel", 2, ["travel.stackexchange.com"]),
        }
    finally:
        if old is None:
            del os.environ["ADAPTER_ZOO_HOME"]
        else:
            os.environ["ADAPTER_ZOO_HOME"] = old
    return made


def entry_files(folder: Path) -> dict[str, bytes]:
    """Every file of a zoo entry folder (relative path -> bytes)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="session")
def kit():
    """Helpers for the test modules (conftest is not importable under --import-mode=importlib)."""
    return types.SimpleNamespace(
        git=git,
        git_commit=git_commit,
        git_files=git_files,
        entry_files=entry_files,
        make_adapter_entry=make_adapter_entry,
    )


@pytest.fixture
def dead_hub(tmp_path, monkeypatch):
    """Online, but nothing listens at the Hub endpoint (port 9 on loopback); empty cache."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("ADAPTER_ZOO_INDEX", "zoo/index")
    reset_sessions()
    return "http://127.0.0.1:9"
