"""SemEval 2016/2017 Task 3 subtask B (QatarLiving): rerank 10 related questions.

Original files: the task XML (``OrgQuestion`` → ``Thread`` → ``RelQuestion`` with
``RELQ_RELEVANCE2ORGQ`` PerfectMatch/Relevant/Irrelevant) and the gold ``.subtaskB.relevancy``
files (``ORGQ_ID RELQ_ID rank score true|false``). Labels come from the relevancy file where
one is given (the test inputs carry no labels), else from the XML. Query and candidate text:
subject + body. Candidates keep the IR engine's order (RELQ_RANKING_ORDER). The official
scorer averages AP over all queries, so queries without a relevant question count 0.
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from benchmarks.datasets._io import group_pairs, parse_int, read_tsv
from benchmarks.errors import BenchmarkError
from benchmarks.registry import Benchmark, Reference, SourceFile, register

TRAIN1 = "v3.2/train/SemEval2016-Task3-CQA-QL-train-part1.xml"
TRAIN2 = "v3.2/train/SemEval2016-Task3-CQA-QL-train-part2.xml"
DEV = "v3.2/dev/SemEval2016-Task3-CQA-QL-dev.xml"
DEV_GOLD = "scorer_v2.2/SemEval2016-Task3-CQA-QL-dev.xml.subtaskB.relevancy"
TEST16 = "test2016/SemEval2016-Task3-CQA-QL-test.xml"
TEST16_GOLD = "_gold2016/SemEval2016-Task3-CQA-QL-test.xml.subtaskB.relevancy"
TEST17 = "test2017/SemEval2017-task3-English-test-input.xml"
TEST17_GOLD = "test2017/SemEval2017-Task3-CQA-QL-test.xml.subtaskB.relevancy"
RELEVANT = {"PerfectMatch", "Relevant"}
_SHA = {
    TRAIN2: "f23adef31cc3558dddc12bdb18e2b512672f3a1aa4360e2bc9a0465c5eb6689d",
    DEV: "2ce404e1830df58e28cc3a2271990d3d3b113b33735d294f2ddd583cd7bd051e",
    DEV_GOLD: "39c4ec16db8ab02cd8b8f3ebca778e85f740244e4979d9676590f69347c1ccd7",
    TEST16_GOLD: "77e48afab8dc30c63c156cfc73bb38fa6d2114c3627a17650a6d250021c81450",
}


def read_relevancy(path: Path) -> dict[tuple[str, str], tuple[int, bool]]:
    """``(ORGQ_ID, RELQ_ID)`` → ``(IR rank, relevant)`` from a subtask-B relevancy file."""
    gold = {}
    for number, fields in enumerate(read_tsv(path, min_fields=5), start=1):
        if fields[4] not in ("true", "false"):
            raise BenchmarkError(f"{path}:{number}: label {fields[4]!r} is not true/false")
        rank = parse_int(fields[2], f"{path}:{number}", "rank")
        gold[(fields[0], fields[1])] = (rank, fields[4] == "true")
    return gold


def _text(element, tag: str) -> str:
    child = element.find(tag)
    return (child.text or "").strip() if child is not None else ""


def read_xml(path: Path) -> list[tuple]:
    """``(orgq_id, query, relq_id, candidate, relevant, rank)`` for every thread in the XML."""
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        raise BenchmarkError(f"{path}: not well-formed XML ({error})") from None
    pairs = []
    for org in root.iter("OrgQuestion"):
        query = f"{_text(org, 'OrgQSubject')} {_text(org, 'OrgQBody')}".strip()
        for rel in org.iter("RelQuestion"):
            label = rel.get("RELQ_RELEVANCE2ORGQ")
            candidate = f"{_text(rel, 'RelQSubject')} {_text(rel, 'RelQBody')}".strip()
            where = f"{path}: RelQuestion {rel.get('RELQ_ID')}"
            rank = parse_int(rel.get("RELQ_RANKING_ORDER", "0"), where, "RELQ_RANKING_ORDER")
            pairs.append(
                (org.get("ORGQ_ID"), query, rel.get("RELQ_ID"), candidate, label in RELEVANT, rank)
            )
    return pairs


@dataclasses.dataclass(frozen=True)
class SemEvalB(Benchmark):
    """SemEval task 3 subtask B; ``split_files`` lists the XML files then the gold file."""

    task: str = "question_similarity"
    folder: str = "semeval-task3"
    homepage: str = "https://alt.qcri.org/semeval2016/task3/"
    citation: str = "Nakov et al. SemEval-2016/2017 Task 3: Community Question Answering"
    files: tuple[SourceFile, ...] = tuple(
        SourceFile(p, "", _SHA.get(p, ""))
        for p in (TRAIN1, TRAIN2, DEV, DEV_GOLD, TEST16, TEST16_GOLD, TEST17, TEST17_GOLD)
    )
    candidate_pool: str = "the 10 related questions retrieved by the task's search engine"
    main_metric: str = "map"
    no_positive: str = "zero"

    def read(self, split: str, root: Path) -> list[dict]:
        paths = self.split_files[split]
        gold_path = next((p for p in paths if p.endswith(".relevancy")), None)
        gold = read_relevancy(root / gold_path) if gold_path else None
        pairs = []
        for xml_path in (p for p in paths if p.endswith(".xml")):
            for org_id, query, rel_id, candidate, relevant, rank in read_xml(root / xml_path):
                if gold is not None:
                    if (org_id, rel_id) not in gold:
                        raise BenchmarkError(f"{gold_path}: no label for {org_id} {rel_id}")
                    rank, relevant = gold[(org_id, rel_id)]
                pairs.append((rank, (org_id, query, rel_id, candidate, int(relevant))))
        rows = group_pairs(
            [pair for _, pair in sorted(pairs, key=lambda p: (p[1][0], p[0]))], root / paths[0]
        )
        return rows


_PAPER16 = "Nakov et al. SemEval-2016 Task 3: CQA. SemEval 2016 (subtask B results, IR baseline)"
register(
    SemEvalB(
        name="semeval2016",
        split_files={
            "train": (TRAIN1, TRAIN2),
            "dev": (DEV, DEV_GOLD),
            "test": (TEST16, TEST16_GOLD),
        },
        published=(
            Reference(
                "ir-baseline", {"map": 0.7135}, "SemEval-2016 Task 3 scorer v2.2 README", "dev"
            ),
            Reference("ir-baseline", {"map": 0.7475}, _PAPER16, "test"),
        ),
    )
)
register(
    SemEvalB(
        name="semeval2017",
        split_files={
            "train": (TRAIN1, TRAIN2),
            "dev": (DEV, DEV_GOLD),
            "test": (TEST17, TEST17_GOLD),
        },
    )
)
