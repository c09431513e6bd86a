"""Every family loads its hand-made original-format fixture into the common representation."""

from __future__ import annotations

import dataclasses

import pytest

import benchmarks
from benchmarks import BenchmarkError
from benchmarks.registry import COLUMNS


def rows(name, split, data_dir):
    return benchmarks.get(name).load(split, data_dir=data_dir).to_list()


def test_registry_names_and_fields():
    names = benchmarks.names()
    expected = {
        "wikiqa",
        "wikiqa-raw",
        "wikiqa-noallneg",
        "trecqa",
        "asnq",
        "insuranceqa",
        "wikipassageqa",
        "semeval2016",
        "semeval2017",
        "askubuntu",
        *(f"las-{f}" for f in ("travel", "cooking", "academia", "apple", "aviation")),
    }
    assert expected <= set(names)
    for name in names:
        bench = benchmarks.get(name)
        assert dataclasses.is_dataclass(bench) and bench.name == name
        assert bench.task in ("answer_selection", "question_similarity")
        assert bench.main_metric in ("map", "mrr", "p@1", "ndcg@10")
        assert bench.no_positive in ("drop", "zero")
        assert "test" in bench.splits or name == "asnq"
        with pytest.raises(dataclasses.FrozenInstanceError):
            bench.name = "x"
    assert benchmarks.get("insuranceqa").main_metric == "p@1"
    assert benchmarks.get("semeval2017").no_positive == "zero"


def test_unknown_benchmark_and_split(fixtures):
    with pytest.raises(BenchmarkError, match="unknown benchmark 'nope'; known: askubuntu"):
        benchmarks.get("nope")
    with pytest.raises(BenchmarkError, match=r"wikiqa: unknown split 'val'"):
        benchmarks.get("wikiqa").load("val", data_dir=fixtures)


def test_wikiqa_variants(fixtures):
    raw = rows("wikiqa-raw", "test", fixtures)
    assert [r["query_id"] for r in raw] == ["Q0", "Q4", "Q5"]
    assert raw[1] == {
        "query_id": "Q4",
        "query": "how are cholera and typhus transmitted",
        "candidate_ids": ["D4-0", "D4-1", "D4-2"],
        "candidates": [
            "Epidemic typhus is transmitted by body lice .",
            "The name comes from the Greek typhos .",
            "It is spread by lice in crowded conditions .",
        ],
        "labels": [1, 0, 1],
    }
    assert [r["query_id"] for r in rows("wikiqa-noallneg", "test", fixtures)] == ["Q4", "Q5"]
    assert [r["query_id"] for r in rows("wikiqa", "test", fixtures)] == ["Q4"]  # clean
    # standard train is no-all-negative: Q2 (all positive) stays, Q3 (all negative) goes
    assert [r["query_id"] for r in rows("wikiqa", "train", fixtures)] == ["Q1", "Q2"]


@pytest.mark.parametrize("folder", ["trecqa", "trecqa-jsonl"])
def test_trecqa_both_layouts(fixtures, folder):
    test = rows("trecqa", "test", fixtures / folder)
    assert [r["query_id"] for r in test] == ["1400", "1401"]
    assert test[0]["labels"] == [1, 0, 0]
    assert test[1]["candidates"][0] == "john a. macdonald was canada 's first prime minister"
    assert len(rows("trecqa", "train", fixtures / folder)) == 2


def test_trecqa_misaligned_files(fixtures, tmp_path):
    import shutil

    shutil.copytree(fixtures / "trecqa", tmp_path / "trecqa")
    (tmp_path / "trecqa" / "clean-test" / "sim.txt").write_text("1\n0\n")
    with pytest.raises(BenchmarkError, match=r"clean-test: files have different line counts"):
        benchmarks.get("trecqa").load("test", data_dir=tmp_path)


def test_asnq_label_4_positive_and_cascade_split(fixtures):
    dev = rows("asnq", "dev", fixtures)
    assert [r["query"] for r in dev] == [
        "when did the titanic sink",
        "how tall is mount everest",
        "who discovered penicillin",
    ]
    assert [r["labels"] for r in dev] == [[1, 0], [1, 0], [0, 0]]
    assert [r["query"] for r in rows("asnq", "cascade-test", fixtures)] == [
        "how tall is mount everest"
    ]
    assert len(rows("asnq", "cascade-dev", fixtures)) == 2
    assert rows("asnq", "train", fixtures)[0]["labels"] == [1, 0, 0]  # label 3 is negative


def test_insuranceqa_decodes_tokens_and_drops_pools_without_truth(fixtures):
    test = rows("insuranceqa", "test", fixtures)
    assert [r["query_id"] for r in test] == ["test-1", "test-3"]  # test-2's pool misses label 2
    assert test[0]["query"] == "what does life insurance cover ?"
    assert test[0]["candidate_ids"] == ["3", "1", "2", "4"]
    assert test[0]["candidates"][:2] == ["no", "it pays a death benefit"]
    assert test[0]["labels"] == [0, 1, 0, 1]


def test_wikipassageqa_candidates_are_document_passages(fixtures):
    test = rows("wikipassageqa", "test", fixtures)
    assert test[0]["candidate_ids"] == ["672_0", "672_1", "672_2"]
    assert test[0]["labels"] == [1, 0, 1]
    assert test[1]["labels"] == [1, 0]


def test_las_cooking(fixtures):
    test = rows("las-cooking", "test", fixtures)
    assert [r["query_id"] for r in test] == ["q3", "q1"]  # q2's pool lacks a2
    assert test[0]["query"] == "how do i sharpen a knife ?"
    assert test[0]["candidates"] == ["put them in water", "use yeast", "use a stone", "boil water"]
    assert test[0]["labels"] == [0, 0, 1, 0]
    assert test[1]["labels"] == [1, 0, 0, 1]
    train = rows("las-cooking", "train", fixtures)
    assert train[0]["labels"] == [1]
    with pytest.raises(BenchmarkError, match=r"las-travel: missing vocab.tsv.gz"):
        benchmarks.get("las-travel").load("test", data_dir=fixtures)


def test_semeval_xml_and_relevancy(fixtures):
    dev = rows("semeval2016", "dev", fixtures)
    assert [r["query_id"] for r in dev] == ["Q268", "Q269"]
    assert dev[0]["query"] == "Good Bank Which is a good bank as per your experience in Doha"
    assert dev[0]["candidate_ids"] == ["Q268_R4", "Q268_R6", "Q268_R9"]
    assert dev[0]["candidates"][0] == "Best Bank Any advice & tips?"
    assert [r["labels"] for r in dev] == [[1, 0, 1], [0, 0]]
    # the test input has no labels: they come from the gold relevancy file
    assert rows("semeval2016", "test", fixtures)[0]["labels"] == [0, 0, 1]
    train = rows("semeval2016", "train", fixtures)
    assert [r["labels"] for r in train] == [[1, 0], [1, 0]]
    with pytest.raises(BenchmarkError, match="semeval2017: missing test2017/SemEval2017-task3"):
        benchmarks.get("semeval2017").load("test", data_dir=fixtures)


def test_askubuntu(fixtures):
    test = rows("askubuntu", "test", fixtures)
    assert [r["query_id"] for r in test] == ["9", "14", "13"]
    assert test[0]["query"] == (
        "how do i enable automatic updates ? update manager is constantly offering me updates ."
    )
    assert test[0]["labels"] == [0, 1, 0, 0]
    assert test[2]["labels"] == [0, 0, 0, 0]  # kept here; the metric policy drops it
    assert rows("askubuntu", "train", fixtures)[0]["labels"] == [1, 0, 0, 0]


def test_columns_and_types(fixtures):
    dataset = benchmarks.get("wikiqa").load("test", data_dir=fixtures)
    assert tuple(dataset.column_names) == COLUMNS
    assert str(dataset.features["labels"].feature.dtype) == "int32"


def test_missing_files_offline_names_them(tmp_path):
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get("wikiqa").load("test", data_dir=tmp_path)
    message = str(error.value)
    assert f"wikiqa: missing WikiQA-test.tsv.gz in {tmp_path / 'wikiqa'} (offline)" in message
    assert "pass --data-dir" in message


def test_default_data_dir_from_environment(monkeypatch, fixtures):
    monkeypatch.setenv("ADAPTER_ZOO_DATA", str(fixtures))
    assert len(benchmarks.get("wikiqa-raw").load("test")) == 3
