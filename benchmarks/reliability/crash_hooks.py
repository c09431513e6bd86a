"""The process side of the crash campaign: ``adapter-zoo`` run in this process, killed by
itself right after its k-th change to the file system.

``python -m benchmarks.reliability.crash_hooks ARGS...`` runs ``adapter-zoo ARGS...`` (the CLI's
``main``, in this process) with every file-system change the Python code makes counted:
``os.replace``/``rename``/``mkdir``/``rmdir``/``unlink``/``remove``/``symlink``/``link``,
and each ``open`` for writing, each ``write`` on such a file and its ``close``. With
``CRASH_KILL_AT_OP=k`` the process sends itself SIGKILL right after the k-th (so the moment
falls between two writes, or inside a file half written, or between a folder's two
renames); with 0 it only counts, and the count goes to ``CRASH_OPS_FILE`` at exit, so the
campaign knows how many moments an uninterrupted run has (``CRASH_PAUSE_AT_OP`` pauses the
run there instead, for the tests of two runs at once). Writes made by compiled code
(safetensors, torch, arrow's own writers) are not counted: the campaign's kills at a random
time cover those.

``CRASH_GIT_UPLOAD=<mirrors>`` makes ``push`` write to the git repositories a local olah
serves (olah accepts no uploads): STAND-IN FOR THE HUB'S WRITE ENDPOINTS (``create_repo``
and ``create_commit``), as ``tests/adapter_zoo/hub/conftest.py``'s ``upload_standin``;
everything read goes through olah.
"""

from __future__ import annotations

import builtins
import io
import os
import signal
import sys
import threading
import time

KILL_AT_ENV = "CRASH_KILL_AT_OP"
OPS_FILE_ENV = "CRASH_OPS_FILE"
GIT_UPLOAD_ENV = "CRASH_GIT_UPLOAD"
PAUSE_AT_ENV = "CRASH_PAUSE_AT_OP"  # pause after that change until <pause file>.go exists
PAUSE_FILE_ENV = "CRASH_PAUSE_FILE"
_OS_CHANGES = ("replace", "rename", "mkdir", "rmdir", "unlink", "remove", "symlink", "link")
_WRITING = set("wax+")


class _Counter:
    """The file-system changes made so far, the one to die after (0: never) and the one to
    pause after (0: never)."""

    def __init__(self, kill_at: int, pause_at: int = 0, pause_file: str = ""):
        self.done = 0
        self.kill_at, self.pause_at, self.pause_file = kill_at, pause_at, pause_file
        self.lock = threading.Lock()

    def tick(self) -> None:
        with self.lock:
            self.done += 1
            done = self.done
        if self.kill_at and done >= self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if done == self.pause_at:
            self.pause()

    def pause(self) -> None:
        """Say so (``<pause file>.paused``) and wait for ``<pause file>.go``: a test lets
        another run go while this one is half way, whatever the machine's speed."""
        with io.FileIO(self.pause_file + ".paused", "w"):  # not counted
            pass
        while not os.path.exists(self.pause_file + ".go"):
            time.sleep(0.02)


class _CountedFile:
    """A file opened for writing whose writes and close are counted (anything else is the
    file's own)."""

    def __init__(self, handle, counter: _Counter):
        self._handle, self._counter = handle, counter

    def write(self, data):
        written = self._handle.write(data)
        self._counter.tick()
        return written

    def close(self):
        self._handle.close()
        self._counter.tick()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        return iter(self._handle)

    def __getattr__(self, name):
        return getattr(self._handle, name)


def install(kill_at: int, pause_at: int = 0, pause_file: str = "") -> _Counter:
    """Count (and, with ``kill_at`` > 0, die after the ``kill_at``-th of; with ``pause_at``
    > 0, pause after that one, see :meth:`_Counter.pause`) this process's file-system changes
    from now on."""
    counter = _Counter(kill_at, pause_at, pause_file)
    for name in _OS_CHANGES:
        original = getattr(os, name)

        def changed(*args, _original=original, **kwargs):
            result = _original(*args, **kwargs)
            counter.tick()
            return result

        setattr(os, name, changed)
    opener = builtins.open

    def counted_open(file, mode="r", *args, **kwargs):
        handle = opener(file, mode, *args, **kwargs)
        if not _WRITING & set(str(mode)) or isinstance(file, int):
            return handle
        counter.tick()
        return _CountedFile(handle, counter)

    builtins.open = io.open = counted_open
    return counter


def install_git_upload(mirrors: str) -> None:
    """STAND-IN for the Hub's write endpoints: ``HfApi.create_repo`` and ``create_commit``
    act on the bare git repositories under ``mirrors/models`` (one compare-and-swap
    ``update-ref`` moves a branch, as the Hub's commit does)."""
    import subprocess
    import tempfile
    from pathlib import Path

    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants
    from huggingface_hub.hf_api import CommitInfo

    people = {"GIT_AUTHOR_NAME": "crash", "GIT_AUTHOR_EMAIL": "crash@campaign",
              "GIT_COMMITTER_NAME": "crash", "GIT_COMMITTER_EMAIL": "crash@campaign"}  # fmt: skip

    def git(repo, *args, data=None, env=None) -> str:
        done = subprocess.run(["git", "--git-dir", str(repo), *args], input=data, check=True,
                              capture_output=True, env={**os.environ, **people, **(env or {})})  # fmt: skip
        return done.stdout.decode().strip()

    def create_repo(self, repo_id, *, exist_ok=False, **_):
        repo = Path(mirrors) / "models" / repo_id
        if not repo.exists():  # the Hub's new repository, with one .gitattributes commit,
            # made beside and renamed into place: the Hub creates a repository at once
            new = repo.with_name(f".{repo.name}.new-{os.getpid()}")
            new.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(new)], check=True)
            attributes = CommitOperationAdd(".gitattributes", b"*.safetensors filter=lfs -text\n")
            commit(new, [attributes], "initial commit")
            os.replace(new, repo)
        return repo_id

    def commit(repo: Path, operations, message: str, revision=None) -> str:
        branch = f"refs/heads/{revision or 'main'}"
        parent = subprocess.run(["git", "--git-dir", str(repo), "rev-parse", "-q", "--verify",
                                 branch], capture_output=True, text=True).stdout.strip()  # fmt: skip
        with tempfile.TemporaryDirectory() as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            git(repo, "read-tree", *([parent] if parent else ["--empty"]), env=index)
            for op in operations:
                if isinstance(op, CommitOperationDelete):  # mode 0 removes it from the index
                    git(repo, "update-index", "--index-info", env=index,
                        data=f"0 {'0' * 40}\t{op.path_in_repo}\n".encode())  # fmt: skip
                    continue
                assert isinstance(op, CommitOperationAdd)
                with op.as_file() as handle:
                    blob = git(repo, "hash-object", "-w", "--stdin", data=handle.read())
                git(repo, "update-index", "--add", "--cacheinfo",
                    f"100644,{blob},{op.path_in_repo}", env=index)  # fmt: skip
            tree = git(repo, "write-tree", env=index)
        parents = ["-p", parent] if parent else []
        sha = git(repo, "commit-tree", tree, *parents, "-m", message)
        git(repo, "update-ref", branch, sha, parent or "0" * 40)
        return sha

    def create_commit(self, repo_id, operations, *, commit_message, revision=None, **_):
        sha = commit(Path(mirrors) / "models" / repo_id, operations, commit_message, revision)
        # CommitInfo parses its URL against huggingface_hub's import-time endpoint
        return CommitInfo(commit_url=f"{constants.ENDPOINT}/{repo_id}/commit/{sha}",
                          commit_message=commit_message, commit_description="", oid=sha)  # fmt: skip

    HfApi.create_repo = create_repo
    HfApi.create_commit = create_commit


def main(argv: list[str]) -> int:
    """``adapter-zoo argv`` with the counter (and the killer) installed."""
    counter = install(int(os.environ.get(KILL_AT_ENV, "0")),
                      int(os.environ.get(PAUSE_AT_ENV, "0")), os.environ.get(PAUSE_FILE_ENV, ""))  # fmt: skip
    if os.environ.get(GIT_UPLOAD_ENV):
        install_git_upload(os.environ[GIT_UPLOAD_ENV])
    from adapter_zoo.cli import main as cli

    try:
        return cli(argv)
    finally:
        if os.environ.get(OPS_FILE_ENV):
            with io.FileIO(os.environ[OPS_FILE_ENV], "w") as handle:  # not counted
                handle.write(str(counter.done).encode())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
