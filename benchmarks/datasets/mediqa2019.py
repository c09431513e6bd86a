"""MEDIQA 2019 Task 3 (Ben Abacha, Shivade & Demner-Fushman, BioNLP 2019): re-rank the answers
NLM's consumer-health QA system CHiQA retrieved for a question.

Original files (``MEDIQA_Task3_QA/`` of the task's repository, ``_RAW``): XML, one
``<Question QID>`` with its ``<QuestionText>`` and ``<AnswerList>`` of ``<Answer AID
SystemRank ReferenceRank ReferenceScore>`` (``<AnswerURL>``, ``<AnswerText>``). Query: the
question text; candidates: the answer texts in the file's order (CHiQA's rank in the test
set). Splits: ``test`` (``TestSet-wLabels``: 150 questions, 2-11 answers, 1,107 in all),
``dev`` (``ValidationSet``: 25, 234), ``train`` (``TrainingSet1-LiveQAMed`` and
``TrainingSet2-Alexa``, the two sets the task gave for training: 208 questions, 1,701
answers). The training sets number their questions from 1 each, so a train query's id says
its file (``LiveQAMed-1``, ``Alexa-1``). TrainingSet1's questions are the TREC 2017 LiveQA
medical test questions: a model adapted on them is not zero-shot on LiveQA-Med.

Relevance: ``ReferenceScore`` >= 3. The task README (``Task3_README.txt``): "answers with
scores 1 and 2 are considered as incorrect (label 0), and answers with scores 3 and 4 are
considered as correct (label 1)" (4 Excellent, 3 Correct but incomplete, 2 Related, 1
Incorrect); the official ground-truth files (``Eval_Scripts/data``) carry exactly these
labels (tests/benchmarks/datasets/test_real_data.py checks all 1,107 test answers).

A question without a correct answer is left out (``no_positive="drop"``): the official
evaluator (``Eval_Scripts/mediqa2019_evaluator_allTasks_final.py``) looks up each question's
correct answers, so it cannot score such a question (a KeyError), and the sets it scored,
validation and test, hold none. The rule changes no dev or test number; it matters for
train only, whose 34 such questions (32 of TrainingSet1, 2 of TrainingSet2) no ranking can
get right.

Main metric MAP (to pool with the other sets). The task's own measures were accuracy (of
the correct/incorrect labels a system gives), Spearman's rho and its MRR and precision, all
of a system's labelled answers; none of them is a ranking metric of ours (its MRR is the
reciprocal rank of the first answer a system *labels* correct), so no published score is
recorded here.

BM25 scope ``corpus``: 2-11 answers a question are too few for a term's document frequency
to mean anything, so the statistics are taken over every answer of the split, as a search
engine over the answer collection would (test MAP 0.787 against 0.746 per question).

What ``adapt`` may learn from: :func:`adaptation_questions` (the train and validation
questions and answer texts, no label read).

Example:
    >>> import benchmarks
    >>> bench = benchmarks.get("mediqa2019")
    >>> bench.splits, bench.no_positive, bench.main_metric
    (('train', 'dev', 'test'), 'drop', 'map')
    >>> test = bench.load("test", "../shared/data/benchmarks/outside")  # doctest: +SKIP
    >>> len(test), sum(map(len, test["labels"]))  # doctest: +SKIP
    (150, 1107)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from benchmarks.datasets._io import parse_int, parse_xml
from benchmarks.errors import BenchmarkError
from benchmarks.registry import Benchmark, DatasetMetadata, SourceFile, register

METADATA = DatasetMetadata(
    name="MEDIQA 2019 Task 3",
    description=(
        "Consumer-health answer re-ranking: a question and the answers NLM's CHiQA retrieved "
        "for it, the correct ones labelled 1."
    ),
    reference="https://sites.google.com/view/mediqa2019",
    citation=(
        "Ben Abacha, Shivade & Demner-Fushman. Overview of the MEDIQA 2019 Shared Task on "
        "Textual Inference, Question Entailment and Question Answering. BioNLP 2019"
    ),
    bibtex=r"""@inproceedings{ben-abacha-etal-2019-overview,
    title = "Overview of the {MEDIQA} 2019 Shared Task on Textual Inference, Question Entailment and Question Answering",
    author = "Ben Abacha, Asma and Shivade, Chaitanya and Demner-Fushman, Dina",
    booktitle = "Proceedings of the 18th BioNLP Workshop and Shared Task",
    year = "2019",
    address = "Florence, Italy",
    url = "https://aclanthology.org/W19-5039",
    doi = "10.18653/v1/W19-5039",
    pages = "370--379",
}""",
    splits=("train", "dev", "test"),
    metrics=("map", "mrr", "p@1"),
)

_RAW = (
    "https://raw.githubusercontent.com/abachaa/MEDIQA2019/ae5d3826d6c841923b9db831159fef0f1b893593/"
)
_FOLDER = "MEDIQA_Task3_QA/MEDIQA2019-Task3-QA-"
TEST = f"{_FOLDER}TestSet-wLabels.xml"
DEV = f"{_FOLDER}ValidationSet.xml"
TRAIN1 = f"{_FOLDER}TrainingSet1-LiveQAMed.xml"
TRAIN2 = f"{_FOLDER}TrainingSet2-Alexa.xml"
_SHA = {
    TEST: "df9bca894d252279f200ee78e85d871b57a94b224d75467b7fa38a4a0952cc1d",
    DEV: "d27b9a2084e42d2d5dc5b4a4236bc3f967683da338e188001610d1857f26aa18",
    TRAIN1: "351d60adbaa6c33f2d26e9dbe511117dc43bcd6a4074095daecc34d179f2c0f2",
    TRAIN2: "00bacd5a61cefa22dee872c8a1efb09407638cbc56833688b89388b620b81944",
}
# the training sets both number their questions from 1: their ids carry the set's name
_ID_PREFIX = {TRAIN1: "LiveQAMed-", TRAIN2: "Alexa-"}
# The official rule (Task3_README.txt, "Task3-QA: Training Sets"): "answers with scores 1 and 2
# are considered as incorrect (label 0), and answers with scores 3 and 4 are considered as
# correct (label 1)"; 3 is "correct but incomplete", 4 "excellent"
RELEVANT_FROM = 3
SCORES = range(1, 5)


def _text(element, tag: str) -> str:
    return (element.findtext(tag) or "").strip()


def read_questions(path: Path, prefix: str = "", labels: bool = True) -> list[dict]:
    """The questions of one Task 3 XML file as query rows (``labels``: from ReferenceScore by
    the official rule; without, each row has ``answer_ids``/``answers`` and no label is read).

    Raises:
        BenchmarkError: malformed XML, an entity reference, a question listed twice, an empty
            question or answer text, a ReferenceScore that is not 1-4; the message names the
            file and the question (and answer).
    """
    root = parse_xml(path.read_bytes(), str(path))
    rows, seen = [], set()
    for question in root.iter("Question"):
        qid = question.get("QID") or ""
        where = f"{path}: Question {qid!r}"
        if not qid or qid in seen:
            raise BenchmarkError(f"{where}: {'listed twice' if qid else 'no QID'}")
        seen.add(qid)
        text = _text(question, "QuestionText")
        if not text:
            raise BenchmarkError(f"{where}: empty QuestionText")
        ids, answers, scores = [], [], []
        for answer in question.iter("Answer"):
            aid = answer.get("AID") or ""
            answer_text = _text(answer, "AnswerText")
            if not aid or not answer_text:
                raise BenchmarkError(f"{where} Answer {aid!r}: no AID or empty AnswerText")
            ids.append(prefix + aid)
            answers.append(answer_text)
            if labels:
                score = parse_int(answer.get("ReferenceScore"), f"{where} Answer {aid!r}",
                                  "ReferenceScore")  # fmt: skip
                if score not in SCORES:
                    raise BenchmarkError(f"{where} Answer {aid!r}: ReferenceScore {score} not 1-4")
                scores.append(score)
        if not ids:
            raise BenchmarkError(f"{where}: no Answer")
        row = {"query_id": prefix + qid, "query": text}
        if labels:
            rows.append({**row, "candidate_ids": ids, "candidates": answers,
                         "labels": [int(s >= RELEVANT_FROM) for s in scores]})  # fmt: skip
        else:
            rows.append({**row, "answer_ids": ids, "answers": answers})
    if not rows:
        raise BenchmarkError(f"{path}: no Question element")
    return rows


def adaptation_questions(root: Path) -> list[dict]:
    """The training and validation questions with their answer texts, no label read: what
    ``adapt`` may learn from (never the test file).

    Args:
        root: the ``mediqa2019`` folder.

    Returns:
        Dicts ``{"query_id", "query", "answer_ids", "answers"}``: 233 questions, 1,935 answers
        on the shipped files.

    Example:
        >>> rows = adaptation_questions(Path("../shared/data/benchmarks/outside/mediqa2019"))
        ... # doctest: +SKIP
        >>> len(rows), sum(len(r["answers"]) for r in rows)  # doctest: +SKIP
        (233, 1935)
    """
    return [
        row
        for name in (TRAIN1, TRAIN2, DEV)
        for row in read_questions(Path(root) / name, _ID_PREFIX.get(name, ""), labels=False)
    ]


@dataclasses.dataclass(frozen=True)
class MediqaQA(Benchmark):
    """MEDIQA 2019 Task 3: one query per question, its CHiQA answers as candidates."""

    task: str = "answer_selection"
    folder: str = "mediqa2019"
    metadata: DatasetMetadata = METADATA
    files: tuple[SourceFile, ...] = tuple(SourceFile(p, _RAW + p, sha) for p, sha in _SHA.items())
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: {"train": (TRAIN1, TRAIN2), "dev": (DEV,), "test": (TEST,)}
    )
    candidate_pool: str = "the answers NLM's CHiQA retrieved for the question (2-11)"
    no_positive: str = "drop"
    bm25_scope: str = "corpus"

    def read(self, split: str, root: Path) -> list[dict]:
        return [
            row
            for name in self.split_files[split]
            for row in read_questions(root / name, _ID_PREFIX.get(name, ""))
        ]


# Our reproducible test runs (CPU, torch 2.13, sentence-transformers 5.7, bm25s 0.3.16, MiniLM
# at its 256 tokens): adapter-zoo evaluate --model bm25 sbert:minilm-l6
# 'fusion:sbert:minilm-l6*0.9+bm25*0.1' --benchmark mediqa2019 --split test
# --data-dir ../shared/data/benchmarks/outside; test_real_data.py reproduces the BM25 row
register(
    MediqaQA(
        name="mediqa2019",
        expected={
            ("bm25", "test"): {
                "map": 0.786926,
                "mrr": 0.864944,
                "p@1": 0.766667,
                "ndcg@10": 0.871785,
            },
            ("sbert:minilm-l6", "test"): {
                "map": 0.835705,
                "mrr": 0.903889,
                "p@1": 0.833333,
                "ndcg@10": 0.904453,
            },
            ("fusion:sbert:minilm-l6*0.9+bm25*0.1", "test"): {
                "map": 0.843884,
                "mrr": 0.917222,
                "p@1": 0.86,
                "ndcg@10": 0.910694,
            },
        },
    )
)
