"""WikiPassageQA (Cohen, Yang & Croft, SIGIR 2018): passage retrieval within one document.

Original files: ``document_passages.json`` ({document id: {passage id: text}}) and
``{train,dev,test}.tsv`` (header; QID, Question, DocumentID, DocumentName, RelevantPassages
comma-separated). A query's candidates are all passages of its document (MultiCQA's reader).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from benchmarks.datasets._io import read_tsv
from benchmarks.errors import BenchmarkError
from benchmarks.registry import Benchmark, DatasetMetadata, SourceFile, register
from stackexchange.jsontext import read_json_object

METADATA = DatasetMetadata(
    name="WikiPassageQA",
    description=(
        "Non-factoid answer passage retrieval within one document: a question and the "
        "passages of the Wikipedia article it was written about, those that answer it "
        "labelled 1."
    ),
    reference="https://ciir.cs.umass.edu/downloads/wikipassageqa/",
    citation="Cohen, Yang & Croft. WikiPassageQA. SIGIR 2018",
    bibtex=r"""@inproceedings{cohen-etal-2018-wikipassageqa,
    title = "{W}iki{P}assage{QA}: A Benchmark Collection for Research on Non-factoid Answer Passage Retrieval",
    author = "Cohen, Daniel and Yang, Liu and Croft, W. Bruce",
    booktitle = "The 41st International ACM SIGIR Conference on Research and Development in Information Retrieval",
    pages = "1165--1168",
    year = "2018",
    doi = "10.1145/3209978.3210118",
}""",
    splits=("train", "dev", "test"),
    metrics=("map", "mrr", "p@1"),
)

PASSAGES = "document_passages.json"


@dataclasses.dataclass(frozen=True)
class WikiPassageQA(Benchmark):
    """WikiPassageQA; candidates are the passages of the query's document."""

    name: str = "wikipassageqa"
    task: str = "answer_selection"
    folder: str = "wikipassageqa"
    metadata: DatasetMetadata = METADATA
    files: tuple[SourceFile, ...] = tuple(
        SourceFile(p) for p in (PASSAGES, "train.tsv", "dev.tsv", "test.tsv")
    )
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: {s: (PASSAGES, f"{s}.tsv") for s in ("train", "dev", "test")}
    )
    candidate_pool: str = "every passage of the question's Wikipedia document"
    no_positive: str = "drop"

    def read(self, split: str, root: Path) -> list[dict]:
        documents = read_json_object(root / PASSAGES, BenchmarkError, "the documents")
        rows = []
        for fields in read_tsv(root / f"{split}.tsv", min_fields=5, header=True):
            qid, question, doc_id, _, relevant = fields[:5]
            if doc_id not in documents:
                raise BenchmarkError(
                    f"{root / split}.tsv: question {qid}: document {doc_id} not in {PASSAGES}"
                )
            passages = documents[doc_id]
            if not isinstance(passages, dict):
                raise BenchmarkError(f"{root / PASSAGES}: document {doc_id} is not an object")
            positive = {p.strip() for p in relevant.split(",")}
            ids = list(passages)
            rows.append(
                {
                    "query_id": qid,
                    "query": question,
                    "candidate_ids": [f"{doc_id}_{p}" for p in ids],
                    "candidates": [passages[p] for p in ids],
                    "labels": [int(p in positive) for p in ids],
                }
            )
        return rows


register(WikiPassageQA())
