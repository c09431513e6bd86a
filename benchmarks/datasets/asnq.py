"""ASNQ (Garg et al., TANDA, AAAI 2020): answer sentence selection from Natural Questions.

Original ``train.tsv``/``dev.tsv``: question, sentence, label 1–4; only label 4 (the sentence
is in the long answer and contains the short answer) is positive. Splits: ``train``, ``dev``
(the whole ASNQ dev, as TANDA), and the Cascade Transformer split of ASNQ dev into
``cascade-dev``/``cascade-test`` by its question lists ``cascade-unique.{dev,test}``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from benchmarks.datasets._io import group_pairs, keep, lines, read_tsv
from benchmarks.registry import Benchmark, DatasetMetadata, SourceFile, register

METADATA = DatasetMetadata(
    name="ASNQ",
    description=(
        "Answer sentence selection: a Natural Questions question and the sentences of its "
        "Wikipedia page, those in its long answer holding the short answer labelled 1."
    ),
    reference="https://github.com/alexa/wqa_tanda",
    citation="Garg, Vu & Moschitti. TANDA. AAAI 2020",
    bibtex=r"""@inproceedings{garg-etal-2020-tanda,
    title = "{TANDA}: Transfer and Adapt Pre-Trained Transformer Models for Answer Sentence Selection",
    author = "Garg, Siddhant and Vu, Thuy and Moschitti, Alessandro",
    booktitle = "Proceedings of the AAAI Conference on Artificial Intelligence",
    volume = "34",
    number = "05",
    pages = "7780--7788",
    year = "2020",
    doi = "10.1609/aaai.v34i05.6282",
}""",
    splits=("train", "dev", "cascade-dev", "cascade-test"),
    metrics=("map", "mrr", "p@1"),
)

_CASCADE = (
    "https://raw.githubusercontent.com/alexa/wqa-cascade-transformers/"
    "64e70d4a7ebaefc6ee2d7b91cac08abfb4e3b9f8/data/"
)
POSITIVE_LABEL = 4


@dataclasses.dataclass(frozen=True)
class ASNQ(Benchmark):
    """ASNQ; see the module docstring."""

    name: str = "asnq"
    task: str = "answer_selection"
    folder: str = "asnq"
    metadata: DatasetMetadata = METADATA
    files: tuple[SourceFile, ...] = (
        # asnq.tar (3.5 GB) holds train.tsv and dev.tsv; no checksum was recorded for it.
        SourceFile(
            "train.tsv", "https://wqa-public.s3.amazonaws.com/tanda-aaai-2020/data/asnq.tar"
        ),
        SourceFile("dev.tsv", "https://wqa-public.s3.amazonaws.com/tanda-aaai-2020/data/asnq.tar"),
        SourceFile(
            "cascade-unique.dev",
            _CASCADE + "cascade-unique.dev",
            "33a799713007907c3f758708426e5ad94eb2f5194896e4369eda33f2903c219f",
        ),
        SourceFile(
            "cascade-unique.test",
            _CASCADE + "cascade-unique.test",
            "cfb74811b4e294287401435f6b2232d4d7958b529408f71862254256a5055b01",
        ),
    )
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: {
            "train": ("train.tsv",),
            "dev": ("dev.tsv",),
            "cascade-dev": ("dev.tsv", "cascade-unique.dev"),
            "cascade-test": ("dev.tsv", "cascade-unique.test"),
        }
    )
    candidate_pool: str = "the sentences of the question's Wikipedia page"
    no_positive: str = "drop"

    def read(self, split: str, root: Path) -> list[dict]:
        source = root / self.split_files[split][0]
        wanted = None
        if split.startswith("cascade-"):
            wanted = {
                line.strip() for _, line in lines(root / self.split_files[split][1]) if line.strip()
            }
        pairs = (
            (f[0], f[0], f"{f[0]}#{i}", f[1], int(f[2] == str(POSITIVE_LABEL)))
            for i, f in enumerate(read_tsv(source, min_fields=3))
            if wanted is None or f[0] in wanted
        )
        return keep(group_pairs(pairs, source), "raw")


register(ASNQ())
