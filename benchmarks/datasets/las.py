"""The five LAS answer-selection sets (travel, cooking, academia, apple, aviation) of MultiCQA.

MultiCQA's tsv archive format (read by its ``insuranceqa/reader/tsv_reader.py``), one folder
per forum: ``vocab.tsv.gz`` (token id → word), ``questions.tsv.gz`` and ``answers.tsv.gz``
(id, space-separated token ids), ``{train,valid,test}.tsv.gz`` (question id, ground-truth
answer ids, pool of candidate answer ids; pools are 100 answers, the accepted answer among
answers of similar questions). Queries whose pool misses the ground truth are dropped, as in
MultiCQA. Main metric: P@1 (accuracy).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from benchmarks.datasets._io import read_tsv
from benchmarks.errors import BenchmarkError
from benchmarks.registry import Benchmark, DatasetMetadata, SourceFile, register

METADATA = DatasetMetadata(
    name="LAS",
    description=(
        "Answer selection on a StackExchange forum: a question and 100 answers, its accepted "
        "answer labelled 1 and answers of similar questions 0."
    ),
    reference="https://github.com/UKPLab/emnlp2020-multicqa",
    citation="Rücklé, Pfeiffer & Gurevych. MultiCQA. EMNLP 2020 (LAS sets)",
    bibtex=r"""@inproceedings{ruckle-etal-2020-multicqa,
    title = "{M}ulti{CQA}: Zero-Shot Transfer of Self-Supervised Text Matching Models on a Massive Scale",
    author = "R{\"u}ckl{\'e}, Andreas and Pfeiffer, Jonas and Gurevych, Iryna",
    booktitle = "Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    year = "2020",
    url = "https://aclanthology.org/2020.emnlp-main.194",
    doi = "10.18653/v1/2020.emnlp-main.194",
    pages = "2471--2486",
}""",
    splits=("train", "dev", "test"),
    metrics=("p@1", "map", "mrr"),
)

FORUMS = ("travel", "cooking", "academia", "apple", "aviation")
_SPLITS = {"train": "train", "dev": "valid", "test": "test"}
_ITEMS = ("vocab.tsv.gz", "questions.tsv.gz", "answers.tsv.gz")


def read_items(path: Path, vocab: dict[str, str]) -> dict[str, str]:
    """id → text, with token ids mapped through ``vocab``."""
    items = {}
    for fields in read_tsv(path, min_fields=1):
        tokens = fields[1].split() if len(fields) > 1 else []
        try:
            items[fields[0]] = " ".join(vocab[t] for t in tokens)
        except KeyError as error:
            raise BenchmarkError(
                f"{path}: item {fields[0]}: token id {error.args[0]} not in vocab"
            ) from None
    return items


@dataclasses.dataclass(frozen=True)
class LAS(Benchmark):
    """One LAS forum in MultiCQA's tsv archive format."""

    task: str = "answer_selection"
    metadata: DatasetMetadata = METADATA
    files: tuple[SourceFile, ...] = tuple(
        SourceFile(p) for p in (*_ITEMS, *(f"{s}.tsv.gz" for s in _SPLITS.values()))
    )
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: {s: (*_ITEMS, f"{name}.tsv.gz") for s, name in _SPLITS.items()}
    )
    candidate_pool: str = "100 answers: the accepted answer and answers of similar questions"
    no_positive: str = "drop"

    def read(self, split: str, root: Path) -> list[dict]:
        vocab = {f[0]: f[1] for f in read_tsv(root / "vocab.tsv.gz", min_fields=2)}
        questions = read_items(root / "questions.tsv.gz", vocab)
        answers = read_items(root / "answers.tsv.gz", vocab)
        path = root / f"{_SPLITS[split]}.tsv.gz"
        rows = []
        for number, fields in enumerate(read_tsv(path, min_fields=2), start=1):
            truth = set(fields[1].split())
            # train lines have no pool: the ground truth alone is the candidate list
            pool = fields[2].split() if len(fields) > 2 else sorted(truth)
            if not truth & set(pool):
                continue  # MultiCQA drops evaluation pools without the ground truth
            unknown = [i for i in [fields[0], *pool] if i not in questions and i not in answers]
            if fields[0] not in questions or any(a not in answers for a in pool):
                raise BenchmarkError(
                    f"{path}:{number}: unknown question or answer id {unknown[:1]}"
                )
            rows.append(
                {
                    "query_id": fields[0],
                    "query": questions[fields[0]],
                    "candidate_ids": pool,
                    "candidates": [answers[a] for a in pool],
                    "labels": [int(a in truth) for a in pool],
                }
            )
        return rows


for _forum in FORUMS:
    register(LAS(name=f"las-{_forum}", folder=f"las/{_forum}"))
