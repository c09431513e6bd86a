"""MedQuAD (Ben Abacha & Demner-Fushman, BMC Bioinformatics 2019): question → answer pairs of
12 NIH websites, a health FAQ nobody labelled for a ranking task: what ``adapt`` may learn
the consumer-health domain from (MEDIQA 2019's answers come from the same NIH sources, so
near-duplicates of its candidate passages occur). Not a benchmark: nothing is registered.

Source: ``MedQuAD-xml-corpus.tar.gz``, the 12 top-level XML folders of
github.com/abachaa/MedQuAD at commit ``577bd37b`` packed by ``git archive`` (11,274 files,
original paths), read from the archive without extracting it. One XML document a file:
``<Document><Focus/>...<QAPairs><QAPair pid><Question qid qtype/><Answer/></QAPair>...``.
47,441 pairs; 16,407 have answer text (the MedlinePlus A.D.A.M., Drugs and Herbs folders
had their answers removed for copyright). Licence CC BY 4.0 (the repository's
``LICENSE.txt``): attribute MedQuAD and its paper when its texts are used.

Example:
    >>> from benchmarks.datasets._io import write_adapt_target
    >>> pairs = read_medquad("../shared/data/benchmarks/outside/medquad/"
    ...                      "MedQuAD-xml-corpus.tar.gz")  # doctest: +SKIP
    >>> len(pairs), pairs[0]["source"]  # doctest: +SKIP
    (16407, '1_CancerGov_QA')
    >>> write_adapt_target(pairs, "medquad.jsonl")  # doctest: +SKIP
    16407
"""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks.datasets._io import parse_xml, tar_members
from benchmarks.errors import BenchmarkError
from stackexchange.errors import one_line

ARCHIVE = "MedQuAD-xml-corpus.tar.gz"


def read_medquad(archive: str | os.PathLike, *, answered_only: bool = True) -> list[dict]:
    """The question → answer pairs of the MedQuAD archive, in its order.

    Args:
        archive: ``MedQuAD-xml-corpus.tar.gz``.
        answered_only: keep only pairs with answer text (else an answer may be ``""``).

    Returns:
        Dicts ``{"id", "question", "answer", "qtype", "source"}``: the question's ``qid``, its
        text, the answer text, the question type and the document's folder (its NIH source,
        e.g. ``3_GHR_QA``).

    Raises:
        BenchmarkError: a corrupt archive, a document that is not well-formed XML or holds an
            entity reference, a pair without a question text; the message names the archive,
            the member and the pair.
    """
    archive = Path(archive)
    pairs = []
    for name, data in tar_members(archive, lambda member: member.endswith(".xml")):
        where = one_line(f"{archive}: {name}")  # a member's name may break lines
        root = parse_xml(data, where)
        source = name.split("/", 1)[0]
        for pair in root.iter("QAPair"):
            question = pair.find("Question")
            text = (question.text or "").strip() if question is not None else ""
            if not text:
                raise BenchmarkError(f"{where}: QAPair {pair.get('pid')!r} has no question text")
            answer = (pair.findtext("Answer") or "").strip()
            if answer or not answered_only:
                pairs.append({"id": question.get("qid") or "", "question": text,
                              "answer": answer, "qtype": question.get("qtype") or "",
                              "source": source})  # fmt: skip
    return pairs
