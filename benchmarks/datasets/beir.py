"""A folder in BEIR's layout as a retrieval benchmark: ``benchmarks.get("beir:PATH")``.

BEIR (Thakur et al., NeurIPS 2021 Datasets and Benchmarks) ships every set as one folder:

* ``corpus.jsonl``: one document a line, ``{"_id", "title", "text"}`` (``title`` may be
  missing or empty); a document is searched as its title and text joined by a space, as
  BEIR's own evaluation and Pyserini's "flat" indexes do.
* ``queries.jsonl``: one query a line, ``{"_id", "text"}``.
* ``qrels/<split>.tsv``: a header ``query-id corpus-id score``, then one judgement a line,
  tab-separated; the score is a whole number, 0 not relevant, above 0 relevant (graded:
  nDCG's gain). Each ``qrels`` file is a split (``test``, ``dev``, ``train``).

The task is retrieval over the whole corpus (:mod:`benchmarks.retrieval`): the judged queries
of a split are its queries, and a query scores what a model retrieves from every document.
A hit whose id is the query's own is left out of its run, as BEIR's evaluation does
(``ignore_identical_ids``) and Pyserini's ``--remove-query``: sets such as ArguAna hold each
query in the corpus too. A judged query without a relevant document counts 0
(``no_positive="zero"``), as BEIR and ``trec_eval -c`` average. Main metric nDCG@10.

A document id of the corpus or a query id may be written as a JSON number; it is read as its
decimal text, as the qrels file writes it.

Example:
    >>> import pathlib, tempfile
    >>> import benchmarks
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "my-set"
    >>> documents = [{"_id": "d1", "title": "Stout", "text": "A dark beer of roasted malt."},
    ...              {"_id": "d2", "text": "A bicycle with one gear."}]
    >>> write_folder(folder, documents, {"q1": "which beer is dark"}, {"q1": {"d1": 1}})
    >>> bench = benchmarks.get(f"beir:{folder}")
    >>> bench.task, bench.main_metric, bench.splits
    ('retrieval', 'ndcg@10', ('test',))
    >>> bench.retrieval_data("test").corpus_texts
    ('Stout A dark beer of roasted malt.', 'A bicycle with one gear.')
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from benchmarks.datasets._io import lines, parse_int, read_tsv
from benchmarks.errors import BenchmarkError
from benchmarks.registry import Benchmark, DatasetMetadata, register_prefix
from stackexchange.errors import unknown_name
from stackexchange.io import atomic_directory
from stackexchange.jsontext import JSONTextError, loads_text

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_FOLDER = "qrels"
QRELS_HEADER = ("query-id", "corpus-id", "score")
HOMEPAGE = "https://github.com/beir-cellar/beir"
CITATION = (
    "Thakur, Reimers, Rücklé, Srivastava & Gurevych. BEIR: A Heterogeneous Benchmark for "
    "Zero-shot Evaluation of Information Retrieval Models. NeurIPS 2021 Datasets and Benchmarks"
)
BIBTEX = r"""@inproceedings{thakur-etal-2021-beir,
    title = "{BEIR}: A Heterogeneous Benchmark for Zero-shot Evaluation of Information Retrieval Models",
    author = "Thakur, Nandan and Reimers, Nils and R{\"u}ckl{\'e}, Andreas and Srivastava, Abhishek and Gurevych, Iryna",
    booktitle = "Thirty-fifth Conference on Neural Information Processing Systems Datasets and Benchmarks Track (Round 2)",
    year = "2021",
    url = "https://openreview.net/forum?id=wCu6T5xFjeJ",
}"""


@dataclasses.dataclass(frozen=True)
class RetrievalData:
    """One split of a retrieval benchmark.

    Attributes:
        corpus_ids: every document's id, in file order.
        corpus_texts: each document's searched text (title and text).
        queries: the split's judged queries, ``{query id: text}``, in the qrels' order.
        qrels: ``{query id: {document id: relevance}}``.
    """

    corpus_ids: tuple[str, ...]
    corpus_texts: tuple[str, ...]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _records(path: Path):
    """Yield ``(line number, JSON object)`` of each non-empty line of a JSONL file."""
    for number, line in lines(path):
        if not line.strip():
            continue
        try:
            record = loads_text(line)
        except JSONTextError as error:
            raise BenchmarkError(f"{path}:{number}: not a JSON record ({error})") from None
        if not isinstance(record, dict):
            raise BenchmarkError(f"{path}:{number}: expected a JSON object, got {record!r:.40}")
        yield number, record


def _identifier(record: dict, where: str) -> str:
    value = record.get("_id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        shown = "missing" if value is None else f"{value!r:.40} is not a non-empty string"
        raise BenchmarkError(f"{where}: _id {shown}")
    return value


def _text(record: dict, field: str, where: str, *, required: bool = True) -> str:
    value = record.get(field)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        shown = "missing" if value is None else f"{value!r:.40} is not a string"
        raise BenchmarkError(f"{where}: {field} {shown}")
    return value


def read_corpus(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The documents of a ``corpus.jsonl``: their ids and searched texts (title and text).

    Raises:
        BenchmarkError: a line that is not a JSON object, a record without an ``_id`` or a
            ``text`` string, a ``title`` that is not a string, an id listed twice, an empty
            corpus; the message names the file and the line.
    """
    ids, texts, seen = [], [], {}
    for number, record in _records(path):
        where = f"{path}:{number}"
        document = _identifier(record, where)
        text = _text(record, "text", where)
        title = _text(record, "title", where, required=False)
        if document in seen:
            raise BenchmarkError(f"{where}: _id {document!r} listed twice (first at line "
                                 f"{seen[document]})")  # fmt: skip
        seen[document] = number
        ids.append(document)
        texts.append(f"{title} {text}".strip())
    if not ids:
        raise BenchmarkError(f"{path}: no documents")
    return tuple(ids), tuple(texts)


def read_queries(path: Path) -> dict[str, str]:
    """``{query id: text}`` of a ``queries.jsonl``.

    Raises:
        BenchmarkError: a line that is not a JSON object, a record without an ``_id`` or a
            non-empty ``text``, an id listed twice; the message names the file and the line.
    """
    queries: dict[str, str] = {}
    lines_of: dict[str, int] = {}
    for number, record in _records(path):
        where = f"{path}:{number}"
        query = _identifier(record, where)
        text = _text(record, "text", where)
        if not text.strip():
            raise BenchmarkError(f"{where}: query {query!r} has an empty text")
        if query in queries:
            raise BenchmarkError(f"{where}: _id {query!r} listed twice (first at line "
                                 f"{lines_of[query]})")  # fmt: skip
        queries[query], lines_of[query] = text, number
    return queries


def read_qrels(path: Path, queries, documents) -> dict[str, dict[str, int]]:
    """``{query id: {document id: relevance}}`` of a ``qrels/<split>.tsv``, its header line
    (``query-id corpus-id score``) skipped.

    Args:
        path: the qrels file.
        queries: the query ids ``queries.jsonl`` holds.
        documents: the document ids ``corpus.jsonl`` holds.

    Raises:
        BenchmarkError: a line without three fields, a query or document id the other files
            do not hold, a score that is not a whole number or is negative, a pair judged
            twice, no judgement at all; the message names the file and the line.
    """
    qrels: dict[str, dict[str, int]] = {}
    for number, fields in read_tsv(path, min_fields=3, numbered=True):
        where = f"{path}:{number}"
        if number == 1 and tuple(f.strip() for f in fields[:3]) == QRELS_HEADER:
            continue
        if len(fields) != 3:
            raise BenchmarkError(f"{where}: expected 3 tab-separated fields (query-id, "
                                 f"corpus-id, score), got {len(fields)}")  # fmt: skip
        query, document, score = (f.strip() for f in fields)
        if query not in queries:
            raise BenchmarkError(f"{where}: query-id {query!r} is not in {QUERIES_FILE}")
        if document not in documents:
            raise BenchmarkError(f"{where}: corpus-id {document!r} is not in {CORPUS_FILE}")
        relevance = parse_int(score, where, "score")
        if relevance < 0:
            raise BenchmarkError(f"{where}: score {score!r} is negative (0 is not relevant)")
        judged = qrels.setdefault(query, {})
        if document in judged:
            raise BenchmarkError(f"{where}: query {query!r}, document {document!r} judged twice")
        judged[document] = relevance
    if not qrels:
        raise BenchmarkError(f"{path}: no judgements")
    return qrels


def write_folder(
    out: str | os.PathLike,
    corpus: Iterable[Mapping],
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    split: str = "test",
) -> None:
    """Write a BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``,
    as :class:`BeirBenchmark` reads them; the whole folder or nothing (a new folder).

    Args:
        out: the folder to write; it must not exist.
        corpus: documents, ``{"_id", "text"}`` and optionally ``"title"``.
        queries: ``{query id: text}``.
        qrels: ``{query id: {document id: relevance}}``.
        split: the qrels file's name.
    """
    with atomic_directory(out) as folder:
        (folder / CORPUS_FILE).write_text(
            "".join(json.dumps(dict(d), ensure_ascii=False) + "\n" for d in corpus),
            encoding="utf-8",
        )
        (folder / QUERIES_FILE).write_text(
            "".join(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n"
                    for q, t in queries.items()),
            encoding="utf-8",
        )  # fmt: skip
        (folder / QRELS_FOLDER).mkdir()
        rows = "".join(f"{q}\t{d}\t{score}\n" for q, judged in qrels.items()
                       for d, score in judged.items())  # fmt: skip
        (folder / QRELS_FOLDER / f"{split}.tsv").write_text(
            "\t".join(QRELS_HEADER) + "\n" + rows, encoding="utf-8"
        )


@dataclasses.dataclass(frozen=True)
class BeirBenchmark(Benchmark):
    """A BEIR folder (``path``, absolute); its splits are its ``qrels`` files. ``load``
    refuses it: it is scored by retrieval over its corpus (:meth:`retrieval_data`)."""

    task: str = "retrieval"
    candidate_pool: str = "every document of the corpus"
    main_metric: str = "ndcg@10"
    no_positive: str = "zero"
    bm25_scope: str = "corpus"
    path: str = ""

    @classmethod
    def from_path(cls, path) -> BeirBenchmark:
        """The BEIR folder at ``path``.

        Raises:
            BenchmarkError: no such folder, or one without ``corpus.jsonl``,
                ``queries.jsonl`` or a ``qrels/*.tsv`` file.
        """
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise BenchmarkError(f"{folder}: no such folder (a BEIR folder holds {CORPUS_FILE}, "
                                 f"{QUERIES_FILE} and {QRELS_FOLDER}/test.tsv)")  # fmt: skip
        for name in (CORPUS_FILE, QUERIES_FILE):
            if not (folder / name).is_file():
                raise BenchmarkError(f"{folder / name}: missing (a BEIR folder holds "
                                     f"{CORPUS_FILE}, {QUERIES_FILE} and {QRELS_FOLDER}/)")  # fmt: skip
        splits = sorted(p.stem for p in (folder / QRELS_FOLDER).glob("*.tsv") if p.is_file())
        if not splits:
            raise BenchmarkError(
                f"{folder / QRELS_FOLDER}: no qrels file (expected {QRELS_FOLDER}/test.tsv)"
            )
        metadata = DatasetMetadata(
            name=folder.resolve().name,
            description="queries against a whole corpus, a folder in BEIR's layout",
            reference=HOMEPAGE,
            citation=CITATION,
            bibtex=BIBTEX,
            splits=tuple(splits),
            metrics=("ndcg@10", "map", "mrr"),
        )
        return cls(
            name=folder.resolve().name,
            folder=folder.name,
            metadata=metadata,
            split_files={split: () for split in splits},
            path=str(folder.resolve()),
        )

    @property
    def key(self) -> str:
        return f"beir:{self.path}"

    def load(self, split: str = "test", data_dir=None):
        raise BenchmarkError(
            f"{self.key}: a retrieval benchmark (queries against its whole corpus), not "
            "candidate lists; score it with evaluate (adapter-zoo evaluate --benchmark "
            f"{self.key})"
        )

    def retrieval_data(self, split: str = "test") -> RetrievalData:
        """The corpus, the judged queries and the judgements of ``split``.

        Raises:
            BenchmarkError: an unknown split, or a bad record (see :func:`read_corpus`,
                :func:`read_queries`, :func:`read_qrels`).
        """
        if split not in self.split_files:
            raise unknown_name("split", split, self.splits, BenchmarkError, where=self.key)
        root = Path(self.path)
        ids, texts = read_corpus(root / CORPUS_FILE)
        queries = read_queries(root / QUERIES_FILE)
        qrels = read_qrels(root / QRELS_FOLDER / f"{split}.tsv", queries, set(ids))
        return RetrievalData(ids, texts, {q: queries[q] for q in qrels}, qrels)


register_prefix("beir:", BeirBenchmark.from_path)
