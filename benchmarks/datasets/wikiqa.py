"""WikiQA (Yang, Yih & Meek, EMNLP 2015): answer sentence selection over Wikipedia summaries.

Read from the original ``WikiQA-{train,dev,test}.tsv`` (here gzipped, as distributed by a
public mirror): QuestionID, Question, DocumentID, DocumentTitle, SentenceID, Sentence, Label.
Three variants: ``wikiqa-raw`` (every question), ``wikiqa-noallneg`` (questions with at least
one correct sentence) and ``wikiqa`` — the standard of TANDA and the Cascade Transformer:
train no-all-negative, dev/test clean (at least one correct and one wrong sentence; test 237
questions, 2,341 pairs, the same set as ``WikiQA-test-filtered.ref``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from benchmarks.datasets._io import group_pairs, keep, read_tsv
from benchmarks.registry import Benchmark, DatasetMetadata, Reference, SourceFile, register

METADATA = DatasetMetadata(
    name="WikiQA",
    description=(
        "Answer sentence selection: a Bing query and the sentences of the Wikipedia summary "
        "paragraph it led to, those that answer it labelled 1."
    ),
    reference="https://www.microsoft.com/en-us/download/details.aspx?id=52419",
    citation="Yang, Yih & Meek. WikiQA: A Challenge Dataset for Open-Domain QA. EMNLP 2015",
    bibtex=r"""@inproceedings{yang-etal-2015-wikiqa,
    title = "{W}iki{QA}: A Challenge Dataset for Open-Domain Question Answering",
    author = "Yang, Yi and Yih, Wen-tau and Meek, Christopher",
    booktitle = "Proceedings of the 2015 Conference on Empirical Methods in Natural Language Processing",
    year = "2015",
    address = "Lisbon, Portugal",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/D15-1237",
    doi = "10.18653/v1/D15-1237",
    pages = "2013--2018",
}""",
    splits=("train", "dev", "test"),
    metrics=("map", "mrr", "p@1"),
)

_MIRROR = (
    "https://raw.githubusercontent.com/rohantilva/Google-Like-Question-Answering-System/"
    "33b4bc236eebccb53dcfb396bfcccf3f88cf48dd/data/WikiQA/"
)
FILES = (
    SourceFile(
        "WikiQA-train.tsv.gz",
        _MIRROR + "WikiQA-train.tsv.gz",
        "a176cfb7e9f9a6c838ba5556e1b9214cbfaee0dfd18d6d5de0f627a69d597e5a",
    ),
    SourceFile(
        "WikiQA-dev.tsv.gz",
        _MIRROR + "WikiQA-dev.tsv.gz",
        "588f6976ccb1ba9ad27359573dd55bbd95d31c65effa47b396bce1382477fb6e",
    ),
    SourceFile(
        "WikiQA-test.tsv.gz",
        _MIRROR + "WikiQA-test.tsv.gz",
        "c8085521a6ce28a2405f10c394d53e0b2a0cb59ed5178a7f145228fd2d94c4bc",
    ),
)
_SPLIT_FILES = {split: (f"WikiQA-{split}.tsv.gz",) for split in ("train", "dev", "test")}


@dataclasses.dataclass(frozen=True)
class WikiQA(Benchmark):
    """WikiQA with a per-split query filter (``raw``, ``no-all-negative`` or ``clean``)."""

    task: str = "answer_selection"
    folder: str = "wikiqa"
    metadata: DatasetMetadata = METADATA
    files: tuple[SourceFile, ...] = FILES
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: dict(_SPLIT_FILES)
    )
    candidate_pool: str = "the sentences of the question's Wikipedia summary paragraph"
    no_positive: str = "drop"
    filters: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def read(self, split: str, root: Path) -> list[dict]:
        path = root / f"WikiQA-{split}.tsv.gz"
        pairs = ((f[0], f[1], f[4], f[5], f[6]) for f in read_tsv(path, min_fields=7, header=True))
        return keep(group_pairs(pairs, path), self.filters[split])


_TANDA = "Garg, Vu & Moschitti. TANDA. AAAI 2020, Table 3"
_CASCADE = "Soldaini & Moschitti. The Cascade Transformer. ACL 2020, Table 2"

register(
    WikiQA(
        name="wikiqa",
        filters={"train": "no-all-negative", "dev": "clean", "test": "clean"},
        published=(
            Reference("tanda-bert-base", {"map": 0.893, "mrr": 0.903}, _TANDA),
            Reference("tanda-roberta-large", {"map": 0.920, "mrr": 0.933}, _TANDA),
            Reference("bert-base (fine-tuned)", {"map": 0.813, "mrr": 0.828}, _TANDA),
        ),
        # Our reproducible runs (CPU, torch 2.13, sentence-transformers 5.7, bm25s 0.3.16):
        #   adapter-zoo evaluate --model bm25 --benchmark wikiqa --split test \
        #       --data-dir ../shared/data/benchmarks       (and --model sbert:minilm-l6)
        expected={
            ("bm25", "test"): {"map": 0.583887, "mrr": 0.592343, "p@1": 0.400571},
            ("sbert:minilm-l6", "test"): {"map": 0.714910, "mrr": 0.729215, "p@1": 0.582278},
        },
    )
)
register(
    WikiQA(
        name="wikiqa-noallneg",
        filters={"train": "no-all-negative", "dev": "no-all-negative", "test": "no-all-negative"},
    )
)
register(WikiQA(name="wikiqa-raw", filters={"train": "raw", "dev": "raw", "test": "raw"}))
