"""pull() against olah: every revision kind, the cache, offline, and bad downloads."""

from __future__ import annotations

import time

import pytest

from adapter_zoo import ZooError
from adapter_zoo.hub import pull

REPO = "zoo-test/beer"


@pytest.fixture
def served(hub, entries, kit):
    """``beer`` on main (tagged v1), ``travel``'s files on branch ``dev``."""
    repo = hub.create(REPO)
    main = kit.git_commit(repo, kit.entry_files(entries["beer"]), "beer")
    kit.git(repo, "tag", "v1", main)
    kit.git(repo, "update-ref", "refs/heads/dev", main)
    dev = kit.git_commit(repo, kit.entry_files(entries["travel"]), "travel", branch="dev")
    return {"repo": repo, "main": main, "dev": dev}


def test_pull_default_branch_tag_commit_and_branch(served, entries, kit):
    folder = pull(REPO)
    assert folder.name == served["main"]  # huggingface_hub's snapshot folder of that commit
    assert kit.entry_files(folder) == kit.entry_files(entries["beer"])  # bit-identical
    assert pull(REPO, revision="v1") == folder
    assert pull(REPO, revision=served["main"]) == folder
    dev = pull(REPO, revision="dev")
    assert dev.name == served["dev"]
    assert kit.entry_files(dev) == kit.entry_files(entries["travel"])


def test_cached_copy_is_used_without_the_server(served, entries, kit, monkeypatch, go_offline):
    folder = pull(REPO, revision="v1")
    # The server gone (nothing listens on port 9): huggingface_hub falls back to the cache.
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert pull(REPO, revision="v1") == folder
    # Offline mode: no request at all, the cached snapshot, still verified.
    go_offline()
    assert pull(REPO, revision="v1") == folder
    assert kit.entry_files(pull(REPO, revision="v1")) == kit.entry_files(entries["beer"])


def test_offline_without_cache_says_what_is_missing(served, go_offline):
    from huggingface_hub import constants

    go_offline()
    with pytest.raises(ZooError) as error:
        pull(REPO, revision="dev")
    assert str(error.value) == (
        f"{REPO}@dev: not in the Hugging Face cache ({constants.HF_HUB_CACHE}) and the Hub "
        f"cannot be reached; unset HF_HUB_OFFLINE and run `adapter-zoo pull {REPO} "
        "--revision dev` once to download it"
    )


def test_unreachable_hub_without_cache(served, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(ZooError) as error:
        pull(REPO)
    assert str(error.value) == (
        f"{REPO}@main: not in the Hugging Face cache ({constants.HF_HUB_CACHE}) and the Hub "
        f"cannot be reached; connect to http://127.0.0.1:9 and run `adapter-zoo pull {REPO}` "
        "once to download it"
    )


def test_unknown_repository_and_revision(served, hub):
    with pytest.raises(ZooError) as error:
        pull("zoo-test/nothing-here")
    assert str(error.value) == (
        f"zoo-test/nothing-here: no such repository on {hub.url} "
        "(a private one needs `hf auth login`)"
    )
    with pytest.raises(ZooError) as error:
        pull(REPO, revision="v9")
    assert str(error.value) == (
        f"{REPO}@v9: no such revision on {hub.url} (branches: dev, main; tags: v1)"
    )
    with pytest.raises(ZooError, match=r"^invalid Hub repository id 'beer': expected 'org/name'$"):
        pull("beer")


def test_checksum_mismatch_is_an_error(hub, entries, kit):
    files = kit.entry_files(entries["beer"])
    weights = bytearray(files["adapter.safetensors"])
    weights[-1] ^= 0xFF  # one flipped bit in the last tensor: still loads, wrong numbers
    files["adapter.safetensors"] = bytes(weights)
    kit.git_commit(hub.create("zoo-test/flipped"), files, "corrupted")
    with pytest.raises(ZooError) as error:
        pull("zoo-test/flipped")
    folder = error.value.args[0].split(": ")[0]
    assert str(error.value).endswith(
        "adapter.safetensors: corrupted (sha256 differs from the card of zoo entry 'beer'); "
        "the download is incomplete or corrupted, delete it (`hf cache delete`) and pull again"
    )
    assert folder == "zoo-test/flipped@main"


def test_partial_download_never_loads(served, go_offline):
    import adapter_zoo

    folder = pull(REPO)
    (folder / "model_head.safetensors").unlink()  # as if the download stopped before it
    go_offline()
    with pytest.raises(ZooError) as error:
        pull(REPO)
    assert str(error.value) == (
        f"{REPO}@main: {folder / 'model_head.safetensors'}: missing from zoo entry 'beer'; "
        "the download is incomplete or corrupted, delete it (`hf cache delete`) and pull again"
    )
    with pytest.raises(ZooError, match="missing from zoo entry 'beer'"):
        adapter_zoo.load(REPO)


def test_repository_that_is_not_an_entry(hub, kit):
    kit.git_commit(hub.create("zoo-test/plain"), {"notes.txt": b"hello\n"}, "plain")
    with pytest.raises(ZooError) as error:
        pull("zoo-test/plain")
    assert str(error.value) == (
        "zoo-test/plain@main: not a zoo entry (no card.json) "
        "and not a MultiCQA adapter (no pytorch_adapter.bin)"
    )


@pytest.fixture
def hostile_hub(tmp_path, monkeypatch):
    """A Hub-protocol server whose file answers are 404s carrying a crafted commit header
    (``../../../../escaped``): huggingface_hub caches such a 404 as
    ``.no_exist/<commit>/<file>``, a path the header alone decides."""
    import http.server
    import json
    import threading

    from huggingface_hub import constants

    sha = "a" * 40

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _answer(self, status, body=b"", headers=()):
            self.send_response(status)
            for key, value in [*headers, ("Content-Length", str(len(body)))]:
                self.send_header(key, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self):
            if self.path.startswith("/api/models/evil/repo/revision/"):
                info = {"id": "evil/repo", "sha": sha, "siblings": [{"rfilename": "card.json"}]}
                self._answer(200, json.dumps(info).encode(), [("Content-Type", "application/json")])
            else:
                self._answer(404, headers=[("X-Error-Code", "RepoNotFound")])

        def do_HEAD(self):
            self._answer(
                404,
                headers=[
                    ("X-Error-Code", "EntryNotFound"),
                    ("X-Repo-Commit", "../../../../escaped"),
                ],
            )

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cache = tmp_path / "a" / "b" / "hf-cache"
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    yield tmp_path / "a"
    server.shutdown()
    server.server_close()


def test_a_hostile_hubs_commit_header_creates_nothing_outside_the_cache(hostile_hub):
    with pytest.raises(
        ZooError,
        match=r"the Hub answered with an invalid commit id "
        r"'\.\./\.\./\.\./\.\./escaped' \(not 40 hex digits\); refused$",
    ):
        pull("evil/repo")
    assert sorted(p.name for p in hostile_hub.iterdir()) == ["b"]  # no 'escaped' beside it
    assert not (hostile_hub / "escaped").exists()


@pytest.mark.parametrize("revision", ["../../../x", "/etc", "a/../../b", "a\\b", ""])
def test_a_revision_that_climbs_out_of_the_cache_is_refused(revision):
    with pytest.raises(ZooError, match=r"^invalid Hub revision .*: expected a branch, tag or"):
        pull("someone/entry", revision=revision)


def test_a_repository_id_with_dot_dot_is_refused():
    with pytest.raises(ZooError, match=r"^invalid Hub repository id 'org/\.\.'"):
        pull("org/..")


@pytest.fixture
def silent_hub(tmp_path, monkeypatch):
    """A loopback server that accepts every connection and never answers; it stops itself
    after 60 s at most (and at the end of the test)."""
    import socket
    import threading

    from huggingface_hub import constants

    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()
    held = []

    def serve():
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                held.append(server.accept()[0])  # read nothing, answer nothing
            except TimeoutError:
                continue
        for connection in held:
            connection.close()
        server.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("ADAPTER_ZOO_HUB_TIMEOUT", "1")
    yield url
    stop.set()
    thread.join(timeout=5)


def test_a_hub_that_accepts_and_never_answers_fails_in_one_line_within_the_timeout(silent_hub):
    from huggingface_hub import constants

    started = time.monotonic()
    with pytest.raises(ZooError) as error:
        pull(REPO)
    elapsed = time.monotonic() - started
    assert str(error.value) == (
        f"{REPO}@main: not in the Hugging Face cache ({constants.HF_HUB_CACHE}) and the Hub "
        f"cannot be reached; connect to {silent_hub} and run `adapter-zoo pull {REPO}` "
        "once to download it"
    )
    # a bound, not a timing: a 1 s read timeout, never the hang it replaces
    assert elapsed < 30, elapsed
