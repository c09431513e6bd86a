"""ArguAna Counterargs (Wachsmuth, Syed & Stein, ACL 2018): a debate point's best counter.

The Webis corpus folder ``arguana-counterargs-corpus/`` as a public repository committed it
(``_REPO``, commit ``e48ef4ec``), original paths kept:

* ``03-pairs-best-counter-task/test/0N-<candidates>.tsv.zip``: one (point, candidate) pair a
  line, no header: point path, candidate path, ``true``/``false``, the pair's type, ... Each
  file is one task, its candidate set growing from file to file; one benchmark each, named
  by the file: ``arguana-01`` (``01-debate-opposing-counters``: the point's own counter and
  the counters to the other points of its side in its debate; 1-7 candidates, mean 3.89),
  ``arguana-02`` (``02-debate-counters``: every counter of the debate; 4-10, mean 7.65),
  ``arguana-05`` (``05-theme-counters``: every counter of the debate's theme; 30-271, mean
  136.5).
* ``02-extracted-arguments-test.tar.gz``: the texts the pairs point at, the folder
  ``02-extracted-arguments/test/`` (theme/debate/pro|con/``proNNa-point.txt`` and
  ``proNNb-counter.txt``) as ``git archive`` packs it; read from the archive, never
  extracted. The pair files' paths are relative to ``02-extracted-arguments/``.

Only a test split exists (1,401 points of 214 debates). The relevant candidate is the
``true`` row, exactly one a point: so a point's AP is its reciprocal rank, and MAP equals
MRR. MAP is the main metric for pooling with the other sets; the paper reports accuracy@1
(our P@1). The ``true`` row comes first in the files: tied scores count as the expectation
over their orders (``adapter_zoo.metrics``), so that order gives no model an advantage.

BM25 scope ``corpus``: a point has 1-7 candidates in ``arguana-01``, too few for a term's
document frequency to mean anything, so the statistics are taken over every candidate of
the split (the test debates' counters), as a search engine over the corpus would.

What ``adapt`` may learn from: :func:`training_pairs`, each point of the training and
validation debates with its own counter, those whose texts are test texts left out.

Example:
    >>> import benchmarks
    >>> bench = benchmarks.get("arguana-02")
    >>> bench.label, bench.splits, bench.no_positive
    ('arguana-02 (02-debate-counters)', ('test',), 'drop')
    >>> test = bench.load("test", "../shared/data/benchmarks/outside")  # doctest: +SKIP
    >>> len(test), sum(map(len, test["labels"]))  # doctest: +SKIP
    (1401, 10713)
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from pathlib import Path

from benchmarks.datasets._io import decode, read_tsv, tar_members
from benchmarks.datasets.beir import write_folder
from benchmarks.errors import BenchmarkError
from benchmarks.registry import METRICS, Benchmark, DatasetMetadata, Reference, SourceFile, register
from stackexchange.errors import one_line

METADATA = DatasetMetadata(
    name="ArguAna Counterargs",
    description=(
        "Best-counterargument retrieval: a debate point and candidate arguments from "
        "idebate.org, its own counter labelled 1."
    ),
    reference="https://aclanthology.org/P18-1023/",
    citation=(
        "Wachsmuth, Syed & Stein. Retrieval of the Best Counterargument without Prior Topic "
        "Knowledge. ACL 2018"
    ),
    bibtex=r"""@inproceedings{wachsmuth-etal-2018-retrieval,
    title = "Retrieval of the Best Counterargument without Prior Topic Knowledge",
    author = "Wachsmuth, Henning and Syed, Shahbaz and Stein, Benno",
    booktitle = "Proceedings of the 56th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)",
    year = "2018",
    address = "Melbourne, Australia",
    url = "https://aclanthology.org/P18-1023",
    doi = "10.18653/v1/P18-1023",
    pages = "241--251",
}""",
    splits=("test",),
    metrics=("map", "mrr", "p@1"),
)

_REPO = "https://github.com/cchang-vassar/Semantic-Relations-in-Vector-Embeddings"
_COMMIT = "e48ef4ec3b94bd9ae84e588fe35b30a4cfaa291c"
_RAW = (
    "https://raw.githubusercontent.com/cchang-vassar/Semantic-Relations-in-Vector-Embeddings/"
    f"{_COMMIT}/"
)
CORPUS = "arguana-counterargs-corpus"
PAIRS = f"{CORPUS}/03-pairs-best-counter-task/test"
TEST_TEXTS = f"{CORPUS}/02-extracted-arguments-test.tar.gz"
TRAINING_TEXTS = f"{CORPUS}/02-extracted-arguments-training-validation.tar.gz"
# the pair files' paths start below this folder of the archives
_ARGUMENTS = "02-extracted-arguments/"
CANDIDATE_FILES = {
    "01": "01-debate-opposing-counters",
    "02": "02-debate-counters",
    "05": "05-theme-counters",
}
_SHA = {
    "01": "1e17c56e7985a71fd22f911ad40c981620167557845754017c19f4ce2f08c17b",
    "02": "eba85e7cac1c6287066c029c540c295d69cf48942ad0f8967b58142200319042",
    "05": "d8ce8c769cde4f462ed863ad1de743225ff0db974e4fd69c7e9dd0e9899ae491",
    TEST_TEXTS: "5be100fedefed47bee7d91ee9e2696f598ca15a3a2a6be90d9ef790691f0f00d",
    TRAINING_TEXTS: "eb14ac326760181ed55f3300102b24a272a96c0eb31ef7aadc6ac0dcb40b0b7a",
}
# the two tarballs are ``git archive`` packs of folders at the commit: no URL serves their bytes
TEXT_FILES = (
    SourceFile(TEST_TEXTS, "", _SHA[TEST_TEXTS]),
    SourceFile(TRAINING_TEXTS, "", _SHA[TRAINING_TEXTS]),
)
_LABELS = {"true": 1, "false": 0}
_POINT = re.compile(r"/(pro|con)(\d+)a-point\.txt$")
_ARGUMENT = re.compile(r"/(pro|con)\d+(a-point|b-counter)\.txt$")


def _relative(name: str) -> str:
    """An archive member's path as the pair files write it (below ``02-extracted-arguments``)."""
    return name.split(_ARGUMENTS, 1)[-1]


def read_texts(tarball: Path, wanted=None) -> dict[str, str]:
    """Texts of an extracted-arguments archive by path (as the pair files write them),
    stripped: those in ``wanted`` (a set of paths), else every point and counter.

    Raises:
        BenchmarkError: a corrupt archive, or a text that is not UTF-8 (naming the member).
    """

    def keep(name: str) -> bool:
        path = _relative(name)
        return path in wanted if wanted is not None else bool(_ARGUMENT.search(path))

    return {
        _relative(name): decode(data, one_line(f"{tarball}: {name}")).strip()
        for name, data in tar_members(tarball, keep)
    }


def read_pairs(path: Path, tarball: Path) -> list[dict]:
    """Query rows of one pair file: each point with its candidates in file order, the
    ``true`` one labelled 1, texts from ``tarball``.

    Raises:
        BenchmarkError: a label that is not true/false, a pair listed twice, a point without
            exactly one ``true`` candidate, or a path whose text is missing from the archive or
            empty; the message names the file and the line or point.
    """
    rows: dict[str, dict] = {}
    where: dict[str, str] = {}  # path -> the first line that names it
    for number, fields in read_tsv(path, min_fields=3, numbered=True):
        point, candidate, label = fields[0], fields[1], fields[2]
        if label not in _LABELS:
            raise BenchmarkError(f"{path}:{number}: label {label!r} is not true/false")
        row = rows.setdefault(point, {"query_id": point, "candidate_ids": [], "labels": []})
        if candidate in row["candidate_ids"]:
            raise BenchmarkError(f"{path}:{number}: pair {point} -> {candidate} listed twice")
        row["candidate_ids"].append(candidate)
        row["labels"].append(_LABELS[label])
        where.setdefault(point, f"{path}:{number}")
        where.setdefault(candidate, f"{path}:{number}")
    for point, row in rows.items():
        if sum(row["labels"]) != 1:
            raise BenchmarkError(
                f"{path}: point {point} has {sum(row['labels'])} 'true' candidates (exactly 1 "
                "is its own counter)"
            )
    texts = read_texts(tarball, set(where))
    for name, line in where.items():
        if not texts.get(name):
            state = "is empty" if name in texts else f"is not in {tarball}"
            raise BenchmarkError(f"{line}: the text of {name} {state}")
    for row in rows.values():
        row["query"] = texts[row["query_id"]]
        row["candidates"] = [texts[c] for c in row["candidate_ids"]]
    return [{k: row[k] for k in ("query_id", "query", "candidate_ids", "candidates", "labels")}
            for row in rows.values()]  # fmt: skip


def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


def training_pairs(root: Path) -> list[dict]:
    """Each point of the training and validation debates with its own counter, the pairs the
    corpus's tasks are built from: texts to adapt from, none of them a test text.

    The training and validation archive is not disjoint from the test debates: 122 of its
    debate folders are test debates filed under another theme or name, with the same texts
    (890 of its 5,352 point-counter pairs). A pair whose point or counter is, up to case and
    white space, any text of the test archive is left out.

    Args:
        root: the ``arguana`` folder (``TRAINING_TEXTS`` and ``TEST_TEXTS`` below it).

    Returns:
        Dicts ``{"id", "question", "answer", "split", "debate"}`` (the point's path, its text,
        its counter's text, ``training`` or ``validation``, the debate's folder), in the
        archive's order; a point without a counter file is left out.

    Example:
        >>> pairs = training_pairs(Path("../shared/data/benchmarks/outside/arguana"))
        ... # doctest: +SKIP
        >>> len(pairs), pairs[0]["split"]  # doctest: +SKIP
        (4462, 'training')
    """
    texts = read_texts(Path(root) / TRAINING_TEXTS)
    test = {_normal(text) for text in read_texts(Path(root) / TEST_TEXTS).values()}
    pairs = []
    for path, point in texts.items():
        counter = _POINT.sub(r"/\1\2b-counter.txt", path)
        if counter == path or not point or not texts.get(counter):
            continue
        if _normal(point) in test or _normal(texts[counter]) in test:
            continue
        split, _theme, debate = path.split("/")[:3]
        pairs.append({"id": path, "question": point, "answer": texts[counter], "split": split,
                      "debate": debate})  # fmt: skip
    return pairs


def write_beir_folder(root: Path, out: str | os.PathLike) -> dict[str, int]:
    """The test debates' best-counterargument task as retrieval over every argument, in
    BEIR's layout (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``), as BEIR's
    ArguAna poses it: each test point searches all points and counters of the corpus (test,
    training and validation debates) for its own counter.

    One text is one document: the archives repeat texts (a debate filed under two themes, an
    argument copied into another debate), so arguments equal up to case and white space are
    one document, under the first path (test debates first, then in path order), and a point
    searches for its counter's document; points of the same text are one query. A point is
    in the corpus too (as in BEIR): ``beir:`` leaves a query's own document out of its run.
    An id is the argument's path without ``.txt``; a text has no title.

    Args:
        root: the ``arguana`` folder (``TEST_TEXTS`` and ``TRAINING_TEXTS`` below it).
        out: the folder to write (a new one; written whole or not at all).

    Returns:
        ``{"documents", "queries", "judgements"}``.

    Example:
        >>> write_beir_folder(Path("../shared/data/benchmarks/outside/arguana"), "arguana-beir")
        ... # doctest: +SKIP
        {'documents': 8567, 'queries': 1398, 'judgements': 1398}
    """
    root = Path(root)
    test = read_texts(root / TEST_TEXTS)
    texts = {**test, **read_texts(root / TRAINING_TEXTS)}
    document_of: dict[str, str] = {}  # normalised text -> the document's id
    corpus = []
    for path in [*sorted(test), *sorted(set(texts) - set(test))]:
        key = _normal(texts[path])
        if key and key not in document_of:
            document_of[key] = path.removesuffix(".txt")
            corpus.append({"_id": document_of[key], "title": "", "text": texts[path]})
    queries: dict[str, str] = {}
    qrels: dict[str, set[str]] = {}
    for path in sorted(test):
        counter = _POINT.sub(r"/\1\2b-counter.txt", path)
        if counter == path or not _normal(test[path]) or not _normal(test.get(counter, "")):
            continue
        query = document_of[_normal(test[path])]
        relevant = document_of[_normal(test[counter])]
        if relevant != query:
            queries.setdefault(query, test[path])
            qrels.setdefault(query, set()).add(relevant)
    judgements = {q: dict.fromkeys(sorted(qrels[q]), 1) for q in queries}
    write_folder(out, corpus, queries, judgements)
    return {"documents": len(corpus), "queries": len(queries),
            "judgements": sum(map(len, judgements.values()))}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class ArguAna(Benchmark):
    """One candidate file of the best-counterargument task (``candidates``: its number)."""

    task: str = "answer_selection"
    folder: str = "arguana"
    metadata: DatasetMetadata = METADATA
    candidate_pool: str = ""
    no_positive: str = "drop"  # never used: every point has its own counter
    bm25_scope: str = "corpus"
    candidates: str = "01"
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)

    def read(self, split: str, root: Path) -> list[dict]:
        pairs, texts = self.split_files[split]
        return read_pairs(root / pairs, root / texts)


def arguana(candidates: str, pool: str, **fields) -> ArguAna:
    """The benchmark of candidate file ``candidates`` (``"01"``, ``"02"``, ``"05"``)."""
    stem = CANDIDATE_FILES[candidates]
    pairs = f"{PAIRS}/{stem}.tsv.zip"
    return ArguAna(
        name=f"arguana-{candidates}",
        title=f"arguana-{candidates} ({stem})",
        candidates=candidates,
        candidate_pool=pool,
        files=(SourceFile(pairs, _RAW + pairs, _SHA[candidates]), *TEXT_FILES),
        split_files={"test": (pairs, TEST_TEXTS)},
        **fields,
    )


_PAPER = (
    "Wachsmuth, Syed & Stein, ACL 2018, abstract: '60% accuracy' for '7.6 candidates with "
    "opposing stance on average' (file 02's mean: 7.65; the table not checked here)"
)
# Our reproducible test runs (CPU, torch 2.13, sentence-transformers 5.7, bm25s 0.3.16, MiniLM
# at its 256 tokens): adapter-zoo evaluate --model bm25 sbert:minilm-l6
# 'fusion:sbert:minilm-l6*0.9+bm25*0.1' --benchmark arguana-01 --split test
# --data-dir ../shared/data/benchmarks/outside; test (MAP, MRR, P@1, nDCG@10) by candidate file
# (MAP = MRR: one relevant candidate a point). tests/benchmarks/datasets/test_real_data.py
# reproduces the BM25 row of arguana-01
FUSED = "fusion:sbert:minilm-l6*0.9+bm25*0.1"
MEASURED = {
    "01": {
        "bm25": (0.818891, 0.818891, 0.683084, 0.865091),
        "sbert:minilm-l6": (0.835118, 0.835118, 0.712348, 0.877119),
        FUSED: (0.837057, 0.837057, 0.715203, 0.878589),
    },
    "02": {
        "bm25": (0.674549, 0.674549, 0.503212, 0.754323),
        "sbert:minilm-l6": (0.702653, 0.702653, 0.537473, 0.775761),
        FUSED: (0.710975, 0.710975, 0.546752, 0.782165),
    },
    "05": {
        "bm25": (0.64777, 0.64777, 0.483226, 0.722182),
        "sbert:minilm-l6": (0.683618, 0.683618, 0.519629, 0.752186),
        FUSED: (0.705534, 0.705534, 0.551035, 0.771815),
    },
}
# BM25 on BEIR's own ArguAna folder (8,674 documents, 1,406 queries), for the folder
# write_beir_folder builds: Pyserini's flat index (title and text in one field; Lucene BM25,
# k1=0.9, b=0.4, Porter stems; the query's own document removed) and the BEIR paper's
# (Elasticsearch, multi-field)
BEIR_PUBLISHED = (
    Reference(
        "bm25 (Pyserini, flat index)",
        {"ndcg@10": 0.3970, "recall@100": 0.9324},
        "Pyserini BEIR regressions, bm25-flat (castorini.github.io/pyserini/2cr/beir.html; "
        "pyserini/resources/beir.yaml)",
    ),
    Reference(
        "bm25 (BEIR paper, Elasticsearch)",
        {"ndcg@10": 0.315},
        "Thakur et al., BEIR, NeurIPS 2021 Datasets and Benchmarks, Table 2",
    ),
)
POOLS = {
    "01": "the point's own counter and the counters to the other points of its side in its "
    "debate (1-7, mean 3.89)",
    "02": "every counter of the point's debate (4-10, mean 7.65)",
    "05": "every counter of the point's theme (30-271, mean 136.5)",
}
PUBLISHED = {
    # accuracy@1 with one relevant candidate is our P@1
    "02": (Reference("Wachsmuth et al. best model (accuracy@1)", {"p@1": 0.60}, _PAPER),),
}
for _number, _pool in POOLS.items():
    register(
        arguana(
            _number,
            _pool,
            published=PUBLISHED.get(_number, ()),
            expected={
                (model, "test"): dict(zip(METRICS, values, strict=True))
                for model, values in MEASURED[_number].items()
            },
        )
    )
