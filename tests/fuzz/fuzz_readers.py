"""Every reader of a file a user or a stranger hands the project, as the CLI calls it, with
the seeds of its corpus cut from the real files and the rule each input must keep.

One table (:data:`READERS`) serves both fuzzers: ``tests/fuzz/`` (Hypothesis, a few hundred
inputs per reader in CI) and ``benchmarks/reliability/fuzz_campaign.py`` (Atheris, coverage-guided,
outside CI), so both feed the same bytes to the same calls and judge them by one rule
(:func:`run_input`): the reader returns, or raises the project's own error naming the file;
never another exception, never a hang, never memory beyond :data:`MEMORY_BOUND`, never a
write outside its output folder.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gzip
import io
import json
import os
import re
import resource
import shutil
import signal
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import py7zr
from safetensors.numpy import save as safetensors_bytes

import benchmarks
from adapter_zoo.adapt.targets import read_target
from adapter_zoo.adapt.threads import read_threads
from adapter_zoo.documents import read_documents
from adapter_zoo.errors import ZooError
from adapter_zoo.onnx.cache import MANIFEST, verify_folder
from adapter_zoo.zoo.layouts import ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, adapter_files_base
from adapter_zoo.zoo.store import CARD_FILE, verify_entry
from benchmarks.errors import BenchmarkError
from benchmarks.results import read_results
from recipes.recipe import RecipeError, load_recipe
from stackexchange.errors import DumpError
from stackexchange.io import LOCK_DIR
from stackexchange.parse import parse_forum

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
FIXTURES = ROOT / "tests" / "benchmarks" / "fixtures"
# the bounds: a hang is an input over TIME_BOUND s, memory its peak growth
TIME_BOUND = 10.0
MEMORY_BOUND = 1 << 30
HOST = "fuzz.stackexchange.com"
GZIP_MAGIC = b"\x1f\x8b"


class Hang(Exception):
    """An input that ran past :data:`TIME_BOUND` (raised by the timer inside the reader)."""


@dataclasses.dataclass(frozen=True)
class Reader:
    """One reader under fuzzing.

    Attributes:
        name: the reader's short name (tests' ids, the campaign's keys).
        what: what it reads, for the docs' table.
        seeds: the corpus's first inputs, cut from real files (paths under SHARED it needs
            are in ``shared``).
        write: puts an input's bytes where the reader looks (in ``folder``); returns the
            path whose name the error must give.
        call: the reader, as the CLI calls it, on that path with an empty output folder.
        errors: the project's own error types it may raise.
        shared: the real files its seeds come from (relative to SHARED).
        tokens: the format's words, spliced in by the mutators.
    """

    name: str
    what: str
    seeds: Callable[[], list[bytes]]
    write: Callable[[Path, bytes], Path]
    call: Callable[[Path, Path], object]
    errors: tuple[type[Exception], ...]
    shared: tuple[str, ...] = ()
    tokens: tuple[bytes, ...] = ()


# ---------------------------------------------------------------- seeds, cut from real files


def _head_rows(path: Path, rows: int, close: bytes) -> bytes:
    """The start of a StackExchange XML file up to its ``rows``-th row, closed again."""
    data = path.read_bytes()[: 1 << 20]
    ends = [m.end() for m in re.finditer(rb"/>\r?\n", data)][:rows]
    return data[: ends[-1]] + close


@functools.cache
def _posts_seeds() -> list[bytes]:
    forum = SHARED / "stackexchange" / "ai.stackexchange.com"
    other = SHARED / "stackexchange" / "bicycles.meta.stackexchange.com"
    return [_head_rows(forum / "Posts.xml", 12, b"</posts>\n"),
            _head_rows(other / "Posts.xml", 6, b"</posts>\n")]  # fmt: skip


@functools.cache
def _links_seeds() -> list[bytes]:
    forum = SHARED / "stackexchange" / "ai.stackexchange.com"
    return [_head_rows(forum / "PostLinks.xml", 8, b"</postlinks>\n")]


@functools.cache
def _archive_seeds() -> list[bytes]:
    out = io.BytesIO()
    with py7zr.SevenZipFile(out, "w") as archive:
        archive.writestr(_posts_seeds()[0], "Posts.xml")
        archive.writestr(_links_seeds()[0], "PostLinks.xml")
    return [out.getvalue()]


def _threads() -> list[tuple[str, str]]:
    """(question, answer) pairs of a real forum, the adapt targets' seeds."""
    posts = _posts_seeds()[0].decode("utf-8-sig")
    rows = re.findall(r'Id="(\d+)" PostTypeId="(\d)"[^>]*?Body="([^"]*)"', posts)
    titles = re.findall(r'Title="([^"]*)"', posts)
    bodies = [body[:200] for _, kind, body in rows if kind == "2"]
    return list(zip(titles, bodies))[:5]


@functools.cache
def _jsonl_seeds() -> list[bytes]:
    pairs = _threads()
    lines = [json.dumps({"question": q, "answer": a}) for q, a in pairs]
    lines.append(json.dumps({"title": pairs[0][0], "body": pairs[0][1]}))
    return ["\n".join(lines).encode()]


@functools.cache
def _tsv_seeds() -> list[bytes]:
    return ["\n".join(f"{q}\t{a}" for q, a in _threads()).encode()]


@functools.cache
def _text_seeds() -> list[bytes]:
    return ["\n".join(q for q, _ in _threads()).encode()]


@functools.cache
def _corpus_seeds() -> list[bytes]:
    """BEIR's ``corpus.jsonl`` form, from a real forum's questions and answers."""
    lines = [json.dumps({"_id": str(n), "title": q, "text": f"{a}\n\n{q}"})
             for n, (q, a) in enumerate(_threads())]  # fmt: skip
    return ["\n".join(lines).encode()]


@functools.cache
def _html_seeds() -> list[bytes]:
    """A page from a real post's HTML body (its entities undone, as the dump stores it)."""
    import html

    posts = _posts_seeds()[0].decode("utf-8-sig")
    bodies = re.findall(r'PostTypeId="1"[^>]*?Body="([^"]*)"', posts)[:2]
    page = "<html><head><title>{}</title></head><body>{}</body></html>"
    return [page.format(*_threads()[0][:1], html.unescape(b)).encode() for b in bodies]


SEMEVAL_XML = "semeval-task3/test2016/SemEval2016-Task3-CQA-QL-test.xml"
SEMEVAL_GOLD = "semeval-task3/_gold2016/SemEval2016-Task3-CQA-QL-test.xml.subtaskB.relevancy"


@functools.cache
def _semeval_seeds() -> list[bytes]:
    data = (SHARED / "benchmarks" / SEMEVAL_XML).read_bytes()
    ends = [m.end() for m in re.finditer(rb"</OrgQuestion>", data)]
    # the DTD, then the first question's ten threads (the gold file labels all ten), the
    # root closed again
    return [data[: ends[9]] + b"\n</xml>\n"]


MEDIQA_XML = "MEDIQA_Task3_QA/MEDIQA2019-Task3-QA-TestSet-wLabels.xml"


@functools.cache
def _mediqa_seeds() -> list[bytes]:
    data = (SHARED / "benchmarks" / "outside" / "mediqa2019" / MEDIQA_XML).read_bytes()
    ends = [m.end() for m in re.finditer(rb"</Question>", data)]
    return [data[: ends[0]] + b"\n</MEDIQA2019-Task3-QA-TestSet>\n"]


ARGUANA = "outside/arguana/arguana-counterargs-corpus/"
ARGUANA_PAIRS = "03-pairs-best-counter-task/test/01-debate-opposing-counters.tsv"


def _arguana_pairs() -> str:
    """The first point's lines of the real pair file."""
    path = SHARED / "benchmarks" / ARGUANA / ARGUANA_PAIRS
    lines = path.read_text(encoding="utf-8").splitlines()
    first = lines[0].split("\t")[0]
    return "\n".join(line for line in lines[:40] if line.split("\t")[0] == first) + "\n"


@functools.cache
def _arguana_seeds() -> list[bytes]:
    """An uncompressed tar of the texts the first point's lines name (the reader's archive)."""
    wanted = {f for line in _arguana_pairs().splitlines() for f in line.split("\t")[:2]}
    out = io.BytesIO()
    source = SHARED / "benchmarks" / ARGUANA / "02-extracted-arguments-test.tar.gz"
    with tarfile.open(source) as real, tarfile.open(fileobj=out, mode="w") as tar:
        for member in real:
            if member.isfile() and member.name.split("02-extracted-arguments/", 1)[-1] in wanted:
                tar.addfile(member, real.extractfile(member))
    return [out.getvalue()]


BEIR = "beir"  # the hand-made BEIR folder of tests/benchmarks/fixtures


@functools.cache
def _beir_corpus_seeds() -> list[bytes]:
    """A ``corpus.jsonl`` of real ArguAna texts (the first point's candidates) under the
    fixture's document ids, so that the fixture's queries and judgements read with it."""
    with tarfile.open(fileobj=io.BytesIO(_arguana_seeds()[0])) as tar:
        texts = [tar.extractfile(m).read().decode("utf-8").strip() for m in tar if m.isfile()]
    ids = [json.loads(line)["_id"] for line in (FIXTURES / BEIR / "corpus.jsonl").open()]
    records = [{"_id": i, "title": text.split("\n", 1)[0], "text": text}
               for i, text in zip(ids, (texts * len(ids))[: len(ids)])]  # fmt: skip
    return ["".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()]


def _beir_seeds() -> list[bytes]:
    return [(FIXTURES / BEIR / "qrels" / "test.tsv").read_bytes()]


def _write_beir(relative: str) -> Callable[[Path, bytes], Path]:
    """Put the input at ``relative`` in a copy of the fixture folder."""

    def write(folder: Path, data: bytes) -> Path:
        target = folder / BEIR
        shutil.copytree(FIXTURES / BEIR, target)
        (target / relative).write_bytes(data)
        return target / relative

    return write


def _beir(path: Path, out: Path) -> object:
    folder = path.parent.parent if path.parent.name == "qrels" else path.parent
    return benchmarks.get(f"beir:{folder}").retrieval_data("test")


INSURANCE_POOL = "insuranceqa-v2/V2/InsuranceQA.question.anslabel.raw.500.pool.solr.test.encoded.gz"


@functools.cache
def _insurance_seeds() -> list[bytes]:
    with gzip.open(SHARED / "benchmarks" / INSURANCE_POOL, "rt", encoding="utf-8") as pool:
        lines = [next(pool).split("\t") for _ in range(2)]
    # pools cut to 20 labels, the true ones kept: the answers file then stays small
    return ["".join(f"{f[0]}\t{f[1]}\t{f[2]}\t{' '.join(f[2].split() + f[3].split()[:20])}\n"
                    for f in lines).encode()]  # fmt: skip


@functools.cache
def _wikiqa_seeds() -> list[bytes]:
    path = SHARED / "benchmarks" / "wikiqa" / "WikiQA-test.tsv.gz"
    with gzip.open(path, "rb") as handle:
        return [b"".join(next(handle) for _ in range(30))]


def _card() -> dict:
    """An adapter entry's card as the store writes one (its files hashed)."""
    return {"name": "fuzz", "mode": "adapter", "base_model": "nreimers/MiniLM-L6-H384-uncased",
            "encoder": "cross", "layout": "adapter", "max_length": 256, "forums": [HOST],
            "base_config": {"model_type": "bert", "hidden_size": 384, "num_hidden_layers": 6},
            "training": {"steps": 10}, "scores": {"dev": {"map": 0.5}}, "files": {}}  # fmt: skip


@functools.cache
def _card_seeds() -> list[bytes]:
    return [json.dumps(_card(), indent=2).encode()]


@functools.cache
def _adapter_config_seeds() -> list[bytes]:
    config = {"config": {"architecture": None, "reduction_factor": 16, "leave_out": []},
              "hidden_size": 384, "model_type": "bert", "name": "fuzz", "version": "1.3.0"}  # fmt: skip
    return [json.dumps(config, indent=2).encode()]


@functools.cache
def _safetensors_seeds() -> list[bytes]:
    layer = "bert.encoder.layer.{}.output.adapters.fuzz.adapter_down.0.weight"
    return [safetensors_bytes({layer.format(i): np.zeros((2, 2), np.float32) for i in range(2)})]


@functools.cache
def _manifest_seeds() -> list[bytes]:
    record = {"key": "k" * 64, "files": {"model.onnx": "0" * 64}, "format": 1}
    return [json.dumps(record).encode()]


@functools.cache
def _results_seeds() -> list[bytes]:
    return [(FIXTURES / "leaderboard" / "results.jsonl").read_bytes()]


@functools.cache
def _recipe_seeds() -> list[bytes]:
    return [(ROOT / "recipes" / "toml" / name).read_bytes()
            for name in ("tanda_wikiqa.toml", "shipped_zoo.toml")]  # fmt: skip


# ---------------------------------------------------------------- where each input goes


def _file(relative: str, packed: Callable[[bytes], bytes] = bytes) -> Callable[[Path, bytes], Path]:
    def write(folder: Path, data: bytes) -> Path:
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(packed(data))
        return path

    return write


def _gz(data: bytes) -> bytes:
    """``data`` gzipped, unless it is gzip already (the campaign's raw inputs, the bombs)."""
    return data if data.startswith(GZIP_MAGIC) else gzip.compress(data, mtime=0)


def _forum_files(folder: Path, posts: bytes, links: bytes | None) -> Path:
    forum = folder / HOST
    forum.mkdir(parents=True, exist_ok=True)
    (forum / "Posts.xml").write_bytes(posts)
    if links is not None:
        (forum / "PostLinks.xml").write_bytes(links)
    return forum


def _write_posts(folder: Path, data: bytes) -> Path:
    return _forum_files(folder, data, None) / "Posts.xml"


def _write_links(folder: Path, data: bytes) -> Path:
    return _forum_files(folder, _posts_seeds()[0], data) / "PostLinks.xml"


@functools.cache
def _shared_bytes(relative: str) -> bytes:
    return (SHARED / relative).read_bytes()


def _copy_fixture(folder: Path, relative: str) -> None:
    target = folder / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(_shared_bytes(f"benchmarks/{relative}"))


def _write_semeval(folder: Path, data: bytes) -> Path:
    _copy_fixture(folder, SEMEVAL_GOLD)
    return _file(SEMEVAL_XML)(folder, data)


def _write_arguana(folder: Path, data: bytes) -> Path:
    pairs = folder / ARGUANA / (ARGUANA_PAIRS + ".zip")
    pairs.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(pairs, "w") as archive:
        archive.writestr(ARGUANA_PAIRS.rsplit("/", 1)[1], _arguana_pairs())
    return _file(ARGUANA + "02-extracted-arguments-test.tar.gz", _gz)(folder, data)


@functools.cache
def _insurance_files() -> tuple[bytes, bytes]:
    """The real vocabulary's lines the seed pools' questions use, and an answers file for
    the labels they name (the real answers file is not in ../shared: two real words each)."""
    words = _shared_bytes("benchmarks/insuranceqa-v2/V2/vocabulary").splitlines(keepends=True)
    fields = [line.split(b"\t") for line in _insurance_seeds()[0].splitlines()]
    used = {token for f in fields for token in f[1].split()}
    vocabulary = [line for line in words if line.split(b"\t")[0] in used] + words[:2]
    first, second = (line.split(b"\t")[0] for line in words[:2])
    labels = sorted({label for f in fields for label in f[3].split()})
    return b"".join(vocabulary), b"".join(b"%s\t%s %s\n" % (x, first, second) for x in labels)


def _write_insurance(folder: Path, data: bytes) -> Path:
    vocabulary, answers = _insurance_files()
    _file("insuranceqa-v2/V2/vocabulary")(folder, vocabulary)
    _file("insuranceqa-v2/V2/InsuranceQA.label2answer.token.encoded.gz", _gz)(folder, answers)
    return _file(INSURANCE_POOL, _gz)(folder, data)


def _entry_file(name: str) -> Callable[[Path, bytes], Path]:
    def write(folder: Path, data: bytes) -> Path:
        entry = folder / "fuzz"
        entry.mkdir(parents=True, exist_ok=True)
        (entry / name).write_bytes(data)
        return entry / name

    return write


# ---------------------------------------------------------------- the calls, as the CLI's


def _parse(path: Path, out: Path) -> object:
    source = path if path.suffix == ".7z" else path.parent
    return parse_forum(source, out, workers=1)


def _benchmark(name: str, split: str, folder: str) -> Callable[[Path, Path], object]:
    def call(path: Path, out: Path) -> object:
        # the data dir is the folder above the benchmark's own (SHARED/benchmarks's layout)
        root = str(path).split(f"/{folder}/", 1)[0]
        return benchmarks.get(name).load(split, data_dir=root)

    return call


def _verify(path: Path, out: Path) -> object:
    return verify_entry(path.parent)


def _files_base(path: Path, out: Path) -> object:
    return adapter_files_base(path.parent)


def _manifest(path: Path, out: Path) -> object:
    return verify_folder(path.parent, "k" * 64)


_XML_TOKENS = (b"<!DOCTYPE x [<!ENTITY a \"aaaa\">]>", b"&a;", b"&#0;", b"&#xD800;", b"]]>",
               b"<![CDATA[", b"<!--", b"\xef\xbb\xbf", b"\x00", b"\xff\xfe", b'"', b"<row ",
               b" />", b"</", b"<?xml version=\"1.0\" encoding=\"UTF-16\"?>", b"&lt;", b"\r")  # fmt: skip
_JSON_TOKENS = (b"[" * 64, b"{\"a\":", b"null", b"NaN", b"-Infinity", b"1e999", b"\\ud800",
                b"\"", b"\xef\xbb\xbf", b"\x00", b"\xff", b"9" * 5000, b"true", b"{}", b"[]")  # fmt: skip
_TSV_TOKENS = (b"\t", b"\n", b"\r", b"\"", b"\x00", b"\xff", b"\xef\xbb\xbf", b"\t\t\t", b"1.5",
               b"-1", b"idx_0", b"true", b"false", b"nan")  # fmt: skip
_TOML_TOKENS = (b"[[step]]\n", b"run = ", b"[published]\n", b"= [" * 32, b"\"\"\"", b"'",
                b"\\u0000", b"inf", b"1979-05-27T07:32:00Z", b"{a.b=1}", b"\xff")  # fmt: skip

FORUM = ("stackexchange/ai.stackexchange.com", "stackexchange/bicycles.meta.stackexchange.com")
READERS: tuple[Reader, ...] = (
    Reader("posts-xml", "StackExchange `Posts.xml` (`parse`)", _posts_seeds, _write_posts,
           _parse, (DumpError,), FORUM, _XML_TOKENS),
    Reader("postlinks-xml", "StackExchange `PostLinks.xml` (`parse`)", _links_seeds,
           _write_links, _parse, (DumpError,), FORUM,
           _XML_TOKENS + (b'LinkTypeId="3"', b'PostId="-1"', b'RelatedPostId="99999999999999999999"')),
    Reader("archive-7z", "a site's `.7z` archive (`parse`)", _archive_seeds,
           _file(HOST + ".7z"), _parse, (DumpError,), FORUM,
           (b"7z\xbc\xaf\x27\x1c", b"\x00" * 8, b"\xff" * 8)),
    Reader("adapt-jsonl", "`adapt` target, JSONL", _jsonl_seeds, _file("target.jsonl"),
           lambda p, o: read_threads(p), (ZooError,), FORUM,
           _JSON_TOKENS),
    Reader("adapt-tsv", "`adapt` target, TSV", _tsv_seeds, _file("target.tsv"),
           lambda p, o: read_threads(p), (ZooError,), FORUM,
           _TSV_TOKENS),
    Reader("adapt-text", "`adapt` target, plain text", _text_seeds, _file("target.txt"),
           lambda p, o: read_target(p), (ZooError,), FORUM,
           _TSV_TOKENS),
    Reader("documents-jsonl", "documents, a `corpus.jsonl` (BEIR's form)", _corpus_seeds,
           _file("corpus.jsonl"), lambda p, o: read_documents(p), (ZooError,), FORUM,
           _JSON_TOKENS + (b'"_id":', b'"text":', b"\\n\\n")),
    Reader("documents-html", "documents, a folder of `.html` files", _html_seeds,
           _file("pages/page.html"), lambda p, o: read_documents(p.parent), (ZooError,), FORUM,
           _XML_TOKENS + (b"<title>", b"<p>", b"<script>", b"<head>", b"<li>")),
    Reader("semeval-xml", "SemEval 2016 task 3 XML (`evaluate`)", _semeval_seeds,
           _write_semeval, _benchmark("semeval2016", "test", "semeval-task3"),
           (BenchmarkError,), (f"benchmarks/{SEMEVAL_XML}", f"benchmarks/{SEMEVAL_GOLD}"), _XML_TOKENS),
    Reader("mediqa-xml", "MEDIQA 2019 task 3 XML (`evaluate`)", _mediqa_seeds,
           _file("mediqa2019/" + MEDIQA_XML), _benchmark("mediqa2019", "test", "mediqa2019"),
           (BenchmarkError,), ("benchmarks/outside/mediqa2019/" + MEDIQA_XML,), _XML_TOKENS),
    Reader("arguana-tar", "ArguAna's texts `.tar.gz` (`evaluate`)", _arguana_seeds,
           _write_arguana, _benchmark("arguana-01", "test", "arguana"), (BenchmarkError,),
           ("benchmarks/" + ARGUANA,), (b"ustar", b"\x00" * 512, b"0000777", b"../", b"con01b-counter.txt")),
    Reader("insuranceqa-gz", "InsuranceQA v2 `.gz` pool (`evaluate`)", _insurance_seeds,
           _write_insurance, _benchmark("insuranceqa", "test", "insuranceqa-v2"),
           (BenchmarkError,), ("benchmarks/" + INSURANCE_POOL, "benchmarks/insuranceqa-v2/V2/vocabulary"), _TSV_TOKENS),
    Reader("wikiqa-tsv", "WikiQA `.tsv.gz` (`evaluate`)", _wikiqa_seeds,
           _file("wikiqa/WikiQA-test.tsv.gz", _gz), _benchmark("wikiqa-raw", "test", "wikiqa"),
           (BenchmarkError,), ("benchmarks/wikiqa/WikiQA-test.tsv.gz",), _TSV_TOKENS),
    Reader("beir-corpus", "a BEIR folder's `corpus.jsonl` (`evaluate`)", _beir_corpus_seeds,
           _write_beir("corpus.jsonl"), _beir, (BenchmarkError,), ("benchmarks/" + ARGUANA,),
           _JSON_TOKENS + (b'"_id":', b'"text":', b'"title":')),
    Reader("beir-qrels", "a BEIR folder's `qrels/test.tsv` (`evaluate`)", _beir_seeds,
           _write_beir("qrels/test.tsv"), _beir, (BenchmarkError,), (),
           _TSV_TOKENS + (b"query-id\tcorpus-id\tscore\n", b"-1", b"1.5", b"q9", b"d99")),
    Reader("zoo-card", "a zoo entry's `card.json` (`load`, `list`)", _card_seeds,
           _entry_file(CARD_FILE), _verify, (ZooError,), (), _JSON_TOKENS),
    Reader("adapter-config", "an adapter's `adapter_config.json`", _adapter_config_seeds,
           _entry_file(ADAPTER_CONFIG_FILE), _files_base, (ZooError,), (), _JSON_TOKENS),
    Reader("safetensors", "an adapter's `.safetensors` header", _safetensors_seeds,
           _entry_file(ADAPTER_WEIGHTS_FILE), _files_base, (ZooError,), (),
           (b"\xff" * 8, b"\x00" * 8, b"{\"__metadata__\":", b"\"dtype\":\"F64\"", b"[" * 64)),
    Reader("onnx-manifest", "the ONNX export cache's manifest", _manifest_seeds,
           _entry_file(MANIFEST), _manifest, (), (), _JSON_TOKENS + (b"../", b"/etc/hostname")),
    Reader("results-jsonl", "`results.jsonl` (`leaderboard`)", _results_seeds,
           _file("results/results.jsonl"), lambda p, o: read_results(p.parent),
           (BenchmarkError,), (), _JSON_TOKENS),
    Reader("recipe-toml", "a recipe's TOML (`run`)", _recipe_seeds, _file("recipe.toml"),
           lambda p, o: load_recipe(p), (RecipeError,), (), _TOML_TOKENS),
)  # fmt: skip
BY_NAME = {reader.name: reader for reader in READERS}


# ---------------------------------------------------------------- the rule


@contextlib.contextmanager
def time_bound(seconds: float = TIME_BOUND):
    """Raise :class:`Hang` inside the block once it has run ``seconds`` (main thread only)."""

    def expire(signum, frame):
        raise Hang(f"over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        # None: a handler installed outside Python (libFuzzer's), which Python cannot restore
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)


# Files Python opens while a reader runs (the "open" audit event: open(), os.open(); a C
# library's own fopen, libxml2's and the Rust safetensors', is not seen)
_opened: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    # absolute paths only: a relative one is an os.open beside a folder's descriptor
    if event != "open" or _opened is None or not isinstance(args[0], str | bytes | os.PathLike):
        return
    if os.path.isabs(path := os.fsdecode(args[0])):
        _opened.append(path)


sys.addaudithook(_audit)
# what a reader may open beside its own folder: Python's and the packages' code (imports on
# first use), the checkout's package data, the kernel's files, the time zones (pyarrow's
# dates), the output locks
READ_ANYWHERE = (sys.prefix, sys.base_prefix, str(ROOT), "/proc/", "/sys/", "/dev/",
                 "/usr/share/zoneinfo/", os.path.join(tempfile.gettempdir(), LOCK_DIR))  # fmt: skip


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}  # fmt: skip


def peak_rss() -> int:
    """This process's peak resident memory so far, in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_input(reader: Reader, data: bytes, work: Path, *, must_read: bool = False) -> str | None:
    """Feed ``data`` to ``reader`` in the empty folder ``work``; None when the rule held,
    else what broke it (one line: a finding).

    The rule: the reader returns, or raises one of ``reader.errors`` whose message names the
    input file (or its folder), and leaves nothing in its output folder then (nothing a later
    command could take as whole); no other exception, no run over :data:`TIME_BOUND`, no
    growth of the peak memory over :data:`MEMORY_BOUND`, nothing changed in the input folder
    and nothing left in the temporary folder; no file opened outside ``work`` but
    :data:`READ_ANYWHERE`. ``must_read``: an error is a finding too (a seed must read).
    """
    global _opened
    inputs, out, scratch = work / "in", work / "out", work / "tmp"
    for folder in (inputs, out, scratch):
        folder.mkdir()
    path = reader.write(inputs, data)
    before, memory = _tree(inputs), peak_rss()
    old_tmp, tempfile.tempdir = tempfile.tempdir, str(scratch)
    finding, failed, _opened = None, False, []
    try:
        with time_bound():
            reader.call(path, out)
    except reader.errors as error:
        failed = True
        message = str(error)
        if must_read:
            finding = f"the seed does not read: {message[:300]}"
        if "\n" in message.strip() or not any(n in message for n in (path.name, path.parent.name)):
            finding = (
                f"{type(error).__name__} not naming {path.name} in one line: {message[:300]!r}"
            )
    except Hang as error:
        finding = f"hang: {error}"
    except RecursionError:
        finding = "RecursionError"
    except Exception as error:  # the finding itself: anything but the project's own error
        finding = f"{type(error).__name__}: {str(error)[:300]}"
    finally:
        tempfile.tempdir = old_tmp
        opened, _opened = _opened, None
    outside = [f for f in opened if not f.startswith((str(work), *READ_ANYWHERE))]
    if finding is None and outside:
        finding = f"opened {outside[0]} outside its input"
    grown = peak_rss() - memory
    if finding is None and grown > MEMORY_BOUND:
        finding = f"memory: peak grew {grown >> 20} MiB"
    if finding is None and failed and any(out.iterdir()):
        finding = f"left {sorted(p.name for p in out.iterdir())[:3]} in its output after its error"
    if finding is None and _tree(inputs) != before:
        finding = "wrote into its input folder"
    # the lock folder stays by design: stackexchange.io.output_lock keeps its locks there
    left = sorted(p.name for p in scratch.iterdir() if not p.name.startswith(LOCK_DIR))
    if finding is None and left:
        finding = f"left {left[:3]} in the temporary folder"
    return finding
