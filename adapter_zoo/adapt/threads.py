"""What ``adapt`` may learn from: a target's threads (question, body, accepted answer) and
its duplicate links, read without its evaluation split.

A parsed forum's ``test`` questions (the ones ``build-benchmark`` holds out as the forum's
test set) are dropped while the Arrow table is read, before any text of them reaches Python;
so are duplicate links of the ``test`` split. Targets:

* a parsed forum, a parse output folder (all its forums), or a raw dump (``.7z`` or a folder
  with ``Posts.xml``, parsed into a temporary folder): threads and duplicate links;
* a JSONL file (``.jsonl``): one object a line with ``question`` (or ``title`` and ``body``)
  and optionally ``answer``; a TSV file (``.tsv``): ``question<TAB>answer`` a line, or
  ``question`` alone. A FAQ or a help-desk export;
* a text file (one question or candidate text a line), a list of strings, or a benchmark
  folder (its queries, never its labels): texts only. Each text long enough to have a first
  sentence and a rest becomes a thread whose title is that sentence and whose body the rest;
* documents (:func:`adapter_zoo.documents.read_documents`): a folder of ``.txt``, ``.md``
  or ``.html`` files, or a JSONL corpus of ``{"title", "text"}`` records (BEIR's
  ``corpus.jsonl``): texts only, a thread per document as above.

Every target is also documents (:meth:`Target.documents`: a thread's question and answer,
or a text, with its paragraphs and sentences), what the objectives
(:mod:`adapter_zoo.objectives`) build pairs from.

Example:
    >>> target = read_threads(["How do I reset it? Hold the button for ten seconds."])
    >>> target.threads[0].title, target.threads[0].body
    ('How do I reset it?', 'Hold the button for ten seconds.')
"""

from __future__ import annotations

import csv
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from adapter_zoo.adapt.target_files import benchmark_texts, text_file_texts
from adapter_zoo.documents import Corpus, read_documents
from adapter_zoo.documents.corpus import make_corpus
from adapter_zoo.documents.forums import (
    EVALUATION_SPLIT,  # noqa: F401  (callers name it here)
    forum_dirs,
    forum_questions,
)
from adapter_zoo.documents.readers import (
    FOLDER_SUFFIXES,
    json_objects,
    text_document,
    thread_document,
)
from adapter_zoo.errors import ZooError
from adapter_zoo.training.data import read_split
from stackexchange import parse_forum
from stackexchange.jsontext import JSONTextError, loads_text
from stackexchange.lists import BENCHMARK_FILE
from stackexchange.parse import STATS_FILE

# A pseudo-pair's parts must carry meaning (stackexchange.assemble's floors for pairs).
MIN_TITLE_CHARS = 10
MIN_BODY_CHARS = 20
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


@dataclass(frozen=True)
class Thread:
    """One question of the target: ``title`` (or its first sentence), ``body`` (or the rest),
    ``answer`` (the accepted answer, or a FAQ's answer; None without one)."""

    id: int
    title: str
    body: str
    answer: str | None = None


@dataclass
class Target:
    """The threads and duplicate links ``adapt`` learns from, and what they came from.

    Attributes:
        threads: every thread of the target outside its evaluation split.
        duplicates: (duplicate thread id, canonical thread id) links between threads.
        about: the card's description of the target (its source: texts, parsed forums, dump, jsonl or tsv; counts; never a local path).
        name: a folder name for the target (a forum's host, or ``target``).
        texts_only: the target had texts, no question-answer structure.
        corpus: the target as documents, when it was read as documents (else built from
            the threads by :meth:`documents`).
        corpus_threads: the id of each document's thread (the thread's held-out part is
            the document's).
    """

    threads: list[Thread]
    duplicates: list[tuple[int, int]] = field(default_factory=list)
    about: dict = field(default_factory=dict)
    name: str = "target"
    texts_only: bool = False
    corpus: Corpus | None = None
    corpus_threads: tuple[int, ...] = ()

    def documents(self) -> tuple[Corpus, tuple[int, ...]]:
        """The target as documents, and each document's thread id: a text's paragraphs, or a
        thread's question title, question and answer paragraphs (its evaluation split never
        read, as for the threads)."""
        if self.corpus is None:
            made = [(text_document(str(t.id), f"{t.title} {t.body}") if self.texts_only
                     else thread_document(str(t.id), t.title, t.body, t.answer), t.id)
                    for t in self.threads]  # fmt: skip
            kept = [(d, i) for d, i in made if d.paragraphs]
            source = {"source": self.about.get("source", "texts")}
            self.corpus = make_corpus([d for d, _ in kept], source)
            self.corpus_threads = tuple(i for _, i in kept)
        return self.corpus, self.corpus_threads

    @property
    def answered(self) -> list[Thread]:
        return [t for t in self.threads if t.answer]

    def texts(self) -> list[str]:
        """The question texts (titles, or whole texts), for the domain centroid."""
        return [t.title for t in self.threads]


def split_text(text: str) -> tuple[str, str]:
    """``(first sentence, rest)`` of ``text``; ``(text, "")`` when it has one sentence.

    Example:
        >>> split_text("Is IPA bitter? Mostly, yes. It depends on the hops.")
        ('Is IPA bitter?', 'Mostly, yes. It depends on the hops.')
    """
    parts = _SENTENCE_END.split(text.strip(), maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else (text.strip(), "")


def read_threads(target) -> Target:
    """The :class:`Target` of ``target`` (see the module's list of targets).

    Raises:
        ZooError: no such target, an unreadable or empty one, a malformed record (naming
            the file and line).
    """
    if isinstance(target, list | tuple):
        return _from_texts([str(t) for t in target], {"source": "texts"}, "the given list")
    path = Path(str(target)).expanduser()
    if not path.exists():
        raise ZooError(f"{path}: no such target (a parsed forum, a dump, a benchmark or a file)")
    if path.is_file() and path.suffix == ".jsonl":
        return _documents(path) if _is_corpus(path) else _jsonl(path)
    if path.is_file() and path.suffix == ".tsv":
        return _tsv(path)
    if path.suffix == ".7z" or (path / "Posts.xml").is_file():
        return _dump(path)
    if path.is_file() or (path / BENCHMARK_FILE).is_file():
        texts, about = text_file_texts(path) if path.is_file() else benchmark_texts(path)
        return _from_texts(texts, about, path)

    if not _has_forums(path) and any(
        p.suffix.lower() in FOLDER_SUFFIXES for p in path.rglob("*") if p.is_file()
    ):
        return _documents(path)
    forums = forum_dirs(path)
    return _checked(_forums(forums), path)


def _has_forums(path: Path) -> bool:
    return (path / STATS_FILE).is_file() or any(path.glob(f"*/{STATS_FILE}"))


def _is_corpus(path: Path) -> bool:
    """A JSONL of documents (``text`` records, BEIR's corpus), not of questions: told by its
    first record."""
    for line in _lines(path):
        if line.strip():
            try:
                record = loads_text(line)
            except JSONTextError:
                return False  # _jsonl words the error
            return (isinstance(record, dict) and "text" in record
                    and not any(k in record for k in ("question", "body", "answer")))  # fmt: skip
    return False


def _documents(path: Path) -> Target:
    """A documents target: a thread per document (its first sentence and the rest)."""
    corpus = read_documents(path)
    threads = []
    for number, document in enumerate(corpus.documents):
        sentences = [s for paragraph in document.paragraphs for s in paragraph]
        rest = " ".join(sentences[1:])
        threads.append(Thread(number, sentences[0], rest if len(rest) >= MIN_BODY_CHARS else ""))
    about = {k: v for k, v in corpus.about.items() if k in ("source", "file", "files")}
    target = Target(threads, about={**about, "texts": len(threads)}, texts_only=True,
                    corpus=corpus, corpus_threads=tuple(range(len(threads))))  # fmt: skip
    return _checked(target, path)


def _checked(target: Target, where) -> Target:
    if not target.threads:
        raise ZooError(f"{where}: no text to learn the target domain from (empty)")
    target.about.update(
        threads=len(target.threads),
        answered=len(target.answered),
        duplicate_links=len(target.duplicates),
    )
    return target


def _from_texts(texts: list[str], about: dict, where) -> Target:
    threads = []
    for number, text in enumerate(t.strip() for t in texts):
        if not text:
            continue
        title, body = split_text(text)
        threads.append(Thread(number, title, body if len(body) >= MIN_BODY_CHARS else ""))
    target = Target(threads, about={**about, "texts": len(threads)}, texts_only=True)
    return _checked(target, where)


def _forums(forums: list[Path]) -> Target:
    """Threads of parsed forums, their test split dropped at the Arrow level."""
    threads, duplicates = [], []
    for forum in forums:
        for columns in forum_questions(forum, ["id", "title", "body", "accepted_answer"]):
            for i, title, body, answer in zip(*columns.values()):
                threads.append(Thread(int(i), title or "", body or "", answer or None))
        duplicates += _duplicate_links(forum)
    known = {t.id for t in threads}
    duplicates = [(a, b) for a, b in duplicates if a in known and b in known]
    about = {"source": "parsed forums", "forums": [f.name for f in forums]}
    name = forums[0].name if len(forums) == 1 else "target"
    return Target(threads, duplicates, about, name)


def _duplicate_links(forum: Path) -> list[tuple[int, int]]:
    links = []
    if not (forum / "duplicates").is_dir():
        return links
    for split in ("train", "dev"):  # never EVALUATION_SPLIT
        rows = read_split(forum / "duplicates", split)
        if rows is not None:
            links += [(int(a), int(b)) for a, b in zip(rows["query_id"], rows["positive_id"])]
    return links


def _dump(path: Path) -> Target:
    with tempfile.TemporaryDirectory(prefix="adapter-zoo-adapt-") as tmp:
        forum = parse_forum(path, tmp)
        target = _forums([forum])
    target.about["source"] = "dump"
    return _checked(target, path)


def _pair_thread(number: int, question: str, answer: str | None) -> Thread:
    title, body = split_text(question)
    return Thread(number, title, body, answer or None)


def _jsonl(path: Path) -> Target:
    threads = []
    for number, record in json_objects(path, _lines(path)):
        fields = {k: record.get(k) for k in ("question", "title", "body", "answer")}
        bad = [k for k, v in fields.items() if v is not None and not isinstance(v, str)]
        if bad:
            raise ZooError(f"{path}, line {number}: {bad[0]!r} must be a string")
        if fields["title"]:
            thread = Thread(number, fields["title"].strip(), (fields["body"] or "").strip(),
                            (fields["answer"] or "").strip() or None)  # fmt: skip
        elif fields["question"]:
            thread = _pair_thread(number, fields["question"], (fields["answer"] or "").strip())
        else:
            raise ZooError(f"{path}, line {number}: no 'question' (or 'title') field")
        threads.append(thread)
    return _checked(Target(threads, about={"source": "jsonl", "file": path.name}), path)


def _tsv(path: Path) -> Target:
    threads = []
    reader = csv.reader(_lines(path), delimiter="\t", quoting=csv.QUOTE_NONE)
    for number, row in enumerate(reader, start=1):
        if not row or not row[0].strip():
            continue
        if len(row) > 2:
            raise ZooError(
                f"{path}, line {number}: {len(row)} tab-separated fields; expected "
                "question<TAB>answer or a question alone"
            )
        threads.append(_pair_thread(number, row[0].strip(), row[1].strip() if len(row) > 1 else ""))
    return _checked(Target(threads, about={"source": "tsv", "file": path.name}), path)


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise ZooError(
            f"{path}: not a UTF-8 text file ({error.reason} at byte {error.start})"
        ) from None
