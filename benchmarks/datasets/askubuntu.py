"""AskUbuntu question similarity (Lei et al. NAACL 2016).

Original files: ``text_tokenized.txt.gz`` (id, title words, body words), ``dev.txt``/``test.txt``
(query id, similar ids, 20 candidate ids, 20 BM25 scores) and ``train_random.txt`` (query id,
similar ids, random ids). Question text = title + body, as MultiCQA. Queries without any
similar question among the 20 are excluded, as Lei et al. did (dev 189, test 186 of 200).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from benchmarks.datasets._io import read_tsv
from benchmarks.errors import BenchmarkError
from benchmarks.registry import Benchmark, DatasetMetadata, Reference, SourceFile, register

METADATA = DatasetMetadata(
    name="AskUbuntu",
    description=(
        "Question similarity on AskUbuntu: a question and 20 forum questions Lucene BM25 "
        "retrieved for it, those users marked as similar labelled 1."
    ),
    reference="https://github.com/taolei87/askubuntu",
    citation="Lei et al. Semi-supervised Question Retrieval with Gated Convolutions. NAACL 2016",
    bibtex=r"""@inproceedings{lei-etal-2016-semi,
    title = "Semi-supervised Question Retrieval with Gated Convolutions",
    author = "Lei, Tao and Joshi, Hrishikesh and Barzilay, Regina and Jaakkola, Tommi and Tymoshenko, Kateryna and Moschitti, Alessandro and M{\`a}rquez, Llu{\'\i}s",
    booktitle = "Proceedings of the 2016 Conference of the North {A}merican Chapter of the Association for Computational Linguistics: Human Language Technologies",
    year = "2016",
    address = "San Diego, California",
    url = "https://aclanthology.org/N16-1153",
    doi = "10.18653/v1/N16-1153",
    pages = "1279--1289",
}""",
    splits=("train", "dev", "test"),
    metrics=("map", "mrr", "p@1"),
)

_REPO = (
    "https://raw.githubusercontent.com/taolei87/askubuntu/4d0a9169ef0bfa4c93ff1aa9f25bc426a7fa559e/"
)
CORPUS = "text_tokenized.txt.gz"
_SHA = {
    "dev.txt": "5c478af0db8998fd9517788c18f84bca96d0f79141cf80504544635f2c3437e0",
    "test.txt": "5d659c24836bd8ad0a486d353386f1ca3780191e2df6abd58accbfcbb726c4ad",
}
_LISTS = {"train": "train_random.txt", "dev": "dev.txt", "test": "test.txt"}


def read_lists(path: Path) -> list[tuple[str, list[str], list[str]]]:
    """``(query id, similar ids, candidate ids)`` per line of a dev/test/train list."""
    lines = []
    for number, fields in enumerate(read_tsv(path, min_fields=3), start=1):
        similar, candidates = fields[1].split(), fields[2].split()
        if path.name != _LISTS["train"] and not set(similar) <= set(candidates):
            raise BenchmarkError(f"{path}:{number}: similar ids are not all among the candidates")
        lines.append((fields[0], similar, candidates))
    return lines


def read_list_scores(path: Path) -> list[list[float]]:
    """The released Lucene BM25 score of each candidate (4th field of dev/test lines): ranking
    by them reproduces the paper's BM25 row, so the evaluation protocol can be checked."""
    scores = []
    for number, fields in enumerate(read_tsv(path, min_fields=4), start=1):
        try:
            values = [float(v) for v in fields[3].split()]
        except ValueError as error:
            raise BenchmarkError(f"{path}:{number}: BM25 scores: {error}") from None
        if len(values) != len(fields[2].split()):
            raise BenchmarkError(
                f"{path}:{number}: {len(values)} BM25 scores for "
                f"{len(fields[2].split())} candidates"
            )
        scores.append(values)
    return scores


_LEI = "Lei et al. NAACL 2016, Table 2 (BM25 row; reproduced from the released list scores)"


@dataclasses.dataclass(frozen=True)
class AskUbuntu(Benchmark):
    """AskUbuntu with the 20 BM25 candidates of Lei et al."""

    name: str = "askubuntu"
    task: str = "question_similarity"
    folder: str = "askubuntu"
    metadata: DatasetMetadata = METADATA
    files: tuple[SourceFile, ...] = tuple(
        SourceFile(p, _REPO + p, _SHA.get(p, "")) for p in (CORPUS, *_LISTS.values())
    )
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: {s: (CORPUS, name) for s, name in _LISTS.items()}
    )
    candidate_pool: str = "20 questions retrieved by Lucene BM25 (the released lists)"
    no_positive: str = "drop"

    def read(self, split: str, root: Path) -> list[dict]:
        texts = {}
        for fields in read_tsv(root / CORPUS, min_fields=1):
            texts[fields[0]] = " ".join(f for f in fields[1:3] if f).strip()
        rows = []
        for query_id, similar, candidates in read_lists(root / _LISTS[split]):
            if split == "train":
                candidates = [*similar, *[c for c in candidates if c not in similar]]
            unknown = [i for i in [query_id, *candidates] if i not in texts]
            if unknown:
                raise BenchmarkError(f"{_LISTS[split]}: question id {unknown[0]} not in {CORPUS}")
            rows.append(
                {
                    "query_id": query_id,
                    "query": texts[query_id],
                    "candidate_ids": candidates,
                    "candidates": [texts[c] for c in candidates],
                    "labels": [int(c in similar) for c in candidates],
                }
            )
        return rows


register(
    AskUbuntu(
        published=(
            Reference("bm25 (Lucene)", {"map": 0.520, "mrr": 0.660, "p@1": 0.519}, _LEI, "dev"),
            Reference("bm25 (Lucene)", {"map": 0.560, "mrr": 0.680, "p@1": 0.538}, _LEI, "test"),
        )
    )
)
