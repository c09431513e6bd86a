"""ArguAna, MEDIQA 2019 Task 3 and MedQuAD from hand-made fixtures in their original formats.

The ArguAna and MedQuAD fixtures are plain files (``fixtures/arguana``, ``fixtures/medquad``)
that the tests pack as the originals come: pair files zipped, texts in gzipped tar archives
under the corpus folder's paths. The MEDIQA fixture is the original XML as it is.
"""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

import benchmarks
from benchmarks import BenchmarkError
from benchmarks.datasets._io import write_adapt_target
from benchmarks.datasets.arguana import CORPUS, PAIRS, TEST_TEXTS, TRAINING_TEXTS, training_pairs
from benchmarks.datasets.mediqa2019 import TEST, adaptation_questions
from benchmarks.datasets.medquad import read_medquad

FIXTURES = Path(__file__).parents[1] / "fixtures"
DEBATE = "test/culture/arts-house-would-fund-the-arts"


def rows(name, split, data_dir):
    return benchmarks.get(name).load(split, data_dir=data_dir).to_list()


def pack_arguana(target: Path) -> Path:
    """The ArguAna fixture in the corpus's layout under ``target/arguana``; returns that."""
    source, root = FIXTURES / "arguana", target / "arguana"
    (root / PAIRS).mkdir(parents=True)
    for tsv in source.glob("*.tsv"):
        with zipfile.ZipFile(root / PAIRS / f"{tsv.name}.zip", "w") as archive:
            archive.write(tsv, tsv.name)
    for name, splits in ((TEST_TEXTS, ["test"]), (TRAINING_TEXTS, ["training", "validation"])):
        with tarfile.open(root / name, "w:gz") as archive:
            for split in splits:
                folder = f"{CORPUS}/02-extracted-arguments/{split}"
                archive.add(source / "02-extracted-arguments" / split, folder)
                junk = tarfile.TarInfo(f"{folder}/.DS_Store")  # as the real archive has them
                junk.size = 4
                archive.addfile(junk, io.BytesIO(b"\x00\x00\x00\x01"))
    return root


def write_pairs(root: Path, stem: str, lines: list[str]) -> Path:
    path = root / PAIRS / f"{stem}.tsv.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{stem}.tsv", "".join(f"{line}\n" for line in lines))
    return path


def test_arguana_points_and_their_counters(tmp_path):
    pack_arguana(tmp_path)
    test = rows("arguana-01", "test", tmp_path)
    assert [r["query_id"] for r in test] == [
        f"{DEBATE}/pro/pro01a-point.txt",
        f"{DEBATE}/pro/pro02a-point.txt",
        f"{DEBATE}/con/con01a-point.txt",
    ]
    assert [r["labels"] for r in test] == [[1, 0], [1, 0], [1]]
    assert test[0]["query"] == (
        "Public money keeps small theatres open\n\n"
        "Without subsidies most regional theatres would close within a decade."
    )
    assert test[0]["candidate_ids"][1] == f"{DEBATE}/pro/pro02b-counter.txt"
    assert test[0]["candidates"][1].startswith("The poor gain little from museums\n\nFree entry")
    # 02: every counter of the debate, the opposite side's included
    assert [r["labels"] for r in rows("arguana-02", "test", tmp_path)] == [[1, 0, 0], [1, 0]]
    bench = benchmarks.get("arguana-02")
    assert (bench.label, bench.splits, bench.bm25_scope) == (
        "arguana-02 (02-debate-counters)",
        ("test",),
        "corpus",
    )


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (f"{DEBATE}/pro/pro02a-point.txt\t{DEBATE}/pro/pro03b-counter.txt\tfalse",
         f"01-debate-opposing-counters.tsv.zip:2: the text of {DEBATE}/pro/pro03b-counter.txt "
         "is not in .*02-extracted-arguments-test.tar.gz"),
        (f"{DEBATE}/pro/pro02a-point.txt\t{DEBATE}/pro/pro01b-counter.txt\ttrue",
         f"01-debate-opposing-counters.tsv.zip: point {DEBATE}/pro/pro02a-point.txt has 2 "
         "'true' candidates"),
        (f"{DEBATE}/pro/pro02a-point.txt\t{DEBATE}/pro/pro01b-counter.txt\tmaybe",
         "01-debate-opposing-counters.tsv.zip:2: label 'maybe' is not true/false"),
    ],
    ids=["missing-text", "two-true", "bad-label"],
)  # fmt: skip
def test_arguana_bad_pair_names_the_file_and_record(tmp_path, line, error):
    root = pack_arguana(tmp_path)
    first = f"{DEBATE}/pro/pro02a-point.txt\t{DEBATE}/pro/pro02b-counter.txt\ttrue"
    write_pairs(root, "01-debate-opposing-counters", [first, line])
    with pytest.raises(BenchmarkError, match=error):
        benchmarks.get("arguana-01").load("test", data_dir=tmp_path)


def test_arguana_training_pairs_leave_out_test_texts(tmp_path):
    pairs = training_pairs(pack_arguana(tmp_path))
    # pro02a has no counter; the validation debate's pro01 point is a test point (up to white
    # space): both are left out, and so is .DS_Store
    assert [(p["split"], p["debate"], p["id"].rsplit("/", 1)[1]) for p in pairs] == [
        ("training", "health-house-would-ban-smoking", "pro01a-point.txt"),
        ("validation", "arts-house-would-fund-arts", "con01a-point.txt"),
    ]
    assert pairs[0]["answer"].startswith("Bans do not stop exposure")


def test_the_adapt_target_written_is_what_adapt_reads(tmp_path):
    # adapt's own reader, the one --target uses; only this test needs it
    from adapter_zoo.adapt.threads import read_threads

    pairs = training_pairs(pack_arguana(tmp_path))
    path = tmp_path / "arguana.jsonl"
    assert write_adapt_target([*pairs, {"question": "A point nobody countered."}], path) == 3
    target = read_threads(path)
    assert [t.answer for t in target.threads] == [p["answer"] for p in pairs] + [None]
    assert target.threads[0].title.startswith("Smoking harms bystanders\n\nSecond-hand")
    with pytest.raises(BenchmarkError, match=r"target.jsonl: record 2 has no question text"):
        write_adapt_target([pairs[0], {"answer": "no question"}], tmp_path / "target.jsonl")
    assert not (tmp_path / "target.jsonl").exists()


def test_mediqa_relevance_is_reference_score_3_or_4(fixtures):
    test = rows("mediqa2019", "test", fixtures)
    assert [r["query_id"] for r in test] == ["1", "7"]
    # ReferenceScore 2, 4, 3, 1 and 4, 2
    assert [r["labels"] for r in test] == [[0, 1, 1, 0], [1, 0]]
    assert test[0]["candidate_ids"][2] == "1_Answer3"
    assert test[0]["candidates"][2].endswith("the body's cells need vitamin E.")
    # both training sets number from 1: the ids say the set; the LiveQA-Med question has no
    # correct answer (kept here, left out of the mean: no_positive "drop")
    train = rows("mediqa2019", "train", fixtures)
    assert [(r["query_id"], r["labels"]) for r in train] == [
        ("LiveQAMed-1", [0, 0]),
        ("Alexa-1", [0, 1]),
    ]
    assert train[1]["candidate_ids"] == ["Alexa-1_Answer1", "Alexa-1_Answer2"]
    assert [r["query"] for r in rows("mediqa2019", "dev", fixtures)] == [
        "about uveitis. IS THE UVEITIS, AN AUTOIMMUNE DISEASE?"
    ]
    assert benchmarks.get("mediqa2019").no_positive == "drop"


def test_mediqa_adaptation_texts_read_no_test_question_and_no_label(fixtures):
    questions = adaptation_questions(fixtures / "mediqa2019")
    assert [q["query_id"] for q in questions] == ["LiveQAMed-1", "Alexa-1", "2"]
    assert set(questions[0]) == {"query_id", "query", "answer_ids", "answers"}
    assert questions[1]["answers"][1].startswith("Flu: influenza")


_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'
_EXTERNAL = '<!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/hostname">]>'


@pytest.mark.parametrize(
    ("edits", "error"),
    [
        ({'ReferenceScore="3"': 'ReferenceScore="three"'},
         "Question '1' Answer '1_Answer3': ReferenceScore 'three' is not an integer"),
        ({'ReferenceScore="3"': 'ReferenceScore="5"'},
         "Question '1' Answer '1_Answer3': ReferenceScore 5 not 1-4"),
        ({'QID="7"': 'QID="1"'}, "Question '1': listed twice"),
        # an external entity is neither fetched nor read: the file is refused
        ({_DECLARATION: _DECLARATION + _EXTERNAL, "body&apos;s": "body&apos;s &e;"},
         ":16: entity reference &e;"),
        ({"body&apos;s": "body&apos;s &e;"}, ": not well-formed XML .*Entity 'e' not defined"),
    ],
    ids=["score-text", "score-5", "qid-twice", "external-entity", "undefined-entity"],
)  # fmt: skip
def test_mediqa_bad_record_names_the_file_and_record(fixtures, tmp_path, edits, error):
    shutil.copytree(fixtures / "mediqa2019", tmp_path / "mediqa2019")
    path = tmp_path / "mediqa2019" / TEST
    text = path.read_text(encoding="utf-8")
    for old, new in edits.items():
        text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BenchmarkError, match=f"^{path}:? ?.*{error}"):
        benchmarks.get("mediqa2019").load("test", data_dir=tmp_path)


def _medquad_archive(tmp_path, broken: bool = False) -> Path:
    path = tmp_path / "MedQuAD-xml-corpus.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for folder in sorted((FIXTURES / "medquad").iterdir(), key=lambda p: p.name):
            archive.add(folder, folder.name)
        if broken:
            bad, data = tarfile.TarInfo("9_CDC_QA/0000002.xml"), b"<Document><QAP"
            bad.size = len(data)
            archive.addfile(bad, io.BytesIO(data))
    return path


def test_medquad_pairs_with_answer_text_and_their_source(tmp_path):
    archive = _medquad_archive(tmp_path)
    pairs = read_medquad(archive)
    assert [(p["id"], p["qtype"], p["source"]) for p in pairs] == [
        ("0000001_1-1", "information", "1_CancerGov_QA"),
        ("0000001_1-2", "treatment", "1_CancerGov_QA"),
    ]
    assert pairs[1]["answer"] == "Chemotherapy & radiation therapy are used to treat adult ALL."
    everything = read_medquad(archive, answered_only=False)
    assert [(p["source"], p["answer"]) for p in everything][0] == ("10_MPlus_ADAM_QA", "")
    assert len(everything) == 3
    with pytest.raises(BenchmarkError, match=r"MedQuAD-xml-corpus.tar.gz: 9_CDC_QA/0000002.xml: "
                                             r"not well-formed XML"):  # fmt: skip
        read_medquad(_medquad_archive(tmp_path, broken=True))
