"""TREC-QA (Wang et al. 2007; TRAIN-ALL and the clean dev/test of Rao et al. 2016).

Two layouts are read, whichever is present in the benchmark folder:

* the per-split folders of castorini/data ``TrecQA/<split>/{a.toks,b.toks,sim.txt,id.txt}``
  (question, candidate sentence, 0/1 label and question id, one pair per line);
* ``<split>.jsonl``: one pair per line, ``{"question", "answer" (or "sentence"/"candidate"),
  "label", "qid" (or "question_id"/"key"; the question text when absent)}``.

Splits: ``train`` = train-all, ``dev`` = clean-dev (65 questions), ``test`` = clean-test
(68 questions), plus ``raw-dev``/``raw-test``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from benchmarks.datasets._io import group_pairs, keep, lines, parse_int
from benchmarks.errors import BenchmarkError
from benchmarks.registry import Benchmark, DatasetMetadata, Reference, SourceFile, register
from stackexchange.jsontext import JSONTextError, loads_text

METADATA = DatasetMetadata(
    name="TREC-QA",
    description=(
        "Answer sentence selection: a TREC 8-13 factoid question and the candidate sentences "
        "retrieved for it, those that answer it labelled 1."
    ),
    reference="https://github.com/castorini/data/tree/master/TrecQA",
    citation="Wang, Smith & Mitamura. What is the Jeopardy Model? EMNLP 2007",
    bibtex=r"""@inproceedings{wang-etal-2007-jeopardy,
    title = "What is the {J}eopardy Model? A Quasi-Synchronous Grammar for {QA}",
    author = "Wang, Mengqiu and Smith, Noah A. and Mitamura, Teruko",
    booktitle = "Proceedings of the 2007 Joint Conference on Empirical Methods in Natural Language Processing and Computational Natural Language Learning ({EMNLP}-{C}o{NLL})",
    year = "2007",
    address = "Prague, Czech Republic",
    url = "https://aclanthology.org/D07-1003",
    pages = "22--32",
}""",
    splits=("train", "dev", "test", "raw-dev", "raw-test"),
    metrics=("map", "mrr", "p@1"),
)

_FOLDERS = {
    "train": "train-all",
    "dev": "clean-dev",
    "test": "clean-test",
    "raw-dev": "raw-dev",
    "raw-test": "raw-test",
}
_TOKS = ("a.toks", "b.toks", "sim.txt", "id.txt")


def _lines(path: Path) -> list[str]:
    return [line.rstrip("\r\n") for _, line in lines(path) if line.strip()]


def read_toks_folder(folder: Path) -> list[tuple]:
    """Pairs from an ``a.toks``/``b.toks``/``sim.txt``/``id.txt`` folder (lines must align)."""
    questions, answers, labels, ids = (_lines(folder / name) for name in _TOKS)
    if not len(questions) == len(answers) == len(labels) == len(ids):
        counts = dict(zip(_TOKS, map(len, (questions, answers, labels, ids))))
        raise BenchmarkError(f"{folder}: files have different line counts {counts}")
    return [
        (qid, q, f"{qid}-{i}", a, parse_int(label, f"{folder / 'sim.txt'}:{i + 1}", "label"))
        for i, (q, a, label, qid) in enumerate(zip(questions, answers, labels, ids))
    ]


def read_jsonl(path: Path) -> list[tuple]:
    """Pairs from a jsonl file with one question–answer pair per line."""
    pairs = []
    for number, line in lines(path):
        if not line.strip():
            continue
        try:
            record = loads_text(line)  # deep nesting and lone surrogates too, not only syntax
            question = record["question"]
            answer = next(record[k] for k in ("answer", "sentence", "candidate") if k in record)
            label = record["label"]
        except (JSONTextError, ValueError, KeyError, TypeError, StopIteration) as error:
            raise BenchmarkError(f"{path}:{number}: bad TREC-QA record ({error!r})") from None
        if isinstance(label, str | float | bool):
            raise BenchmarkError(f"{path}:{number}: label {label!r} is not 0 or 1")
        qid = str(next((record[k] for k in ("qid", "question_id", "key") if k in record), question))
        pairs.append((qid, question, f"{qid}-{number}", answer, label))
    return pairs


@dataclasses.dataclass(frozen=True)
class TrecQA(Benchmark):
    """TREC-QA in either layout; see the module docstring."""

    name: str = "trecqa"
    task: str = "answer_selection"
    folder: str = "trecqa"
    metadata: DatasetMetadata = METADATA
    # either layout may be present, so no split requires a file up front; ``read`` says
    # which are missing
    files: tuple[SourceFile, ...] = tuple(
        SourceFile(f"{folder}/{name}") for folder in _FOLDERS.values() for name in _TOKS
    ) + tuple(SourceFile(f"{folder}.jsonl") for folder in _FOLDERS.values())
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: {split: () for split in _FOLDERS}
    )
    candidate_pool: str = "the TREC candidate sentences of each question"
    no_positive: str = "drop"

    def read(self, split: str, root: Path) -> list[dict]:
        folder = root / _FOLDERS[split]
        if (folder / "a.toks").exists():
            pairs = read_toks_folder(folder)
        elif (root / f"{_FOLDERS[split]}.jsonl").exists():
            pairs = read_jsonl(root / f"{_FOLDERS[split]}.jsonl")
        elif (root / f"{split}.jsonl").exists():
            pairs = read_jsonl(root / f"{split}.jsonl")
        else:
            raise BenchmarkError(
                f"{self.name}: missing {folder}/{{{','.join(_TOKS)}}} or "
                f"{root / (_FOLDERS[split] + '.jsonl')}; put the TrecQA files from "
                f"{self.homepage} there or pass --data-dir"
            )
        rows = group_pairs(pairs, folder if (folder / "a.toks").exists() else root)
        return keep(rows, "no-all-negative" if split == "train" else "raw")


_TANDA = "Garg, Vu & Moschitti. TANDA. AAAI 2020, Table 4"
register(
    TrecQA(
        published=(
            Reference("tanda-bert-base", {"map": 0.912, "mrr": 0.951}, _TANDA),
            Reference("tanda-roberta-large", {"map": 0.943, "mrr": 0.974}, _TANDA),
        )
    )
)
