"""A BEIR folder read as a benchmark: the hand-made fixture, and each kind of bad input as
one line naming the file and the line."""

from __future__ import annotations

import shutil

import pytest

import benchmarks
from adapter_zoo.cli import main
from benchmarks import BenchmarkError
from benchmarks.results import benchmark_key


@pytest.fixture
def beir_copy(fixtures, tmp_path):
    """A writable copy of the fixture folder."""
    folder = tmp_path / "my-set"
    shutil.copytree(fixtures / "beir", folder)
    return folder


def test_fixture_reads_as_a_retrieval_benchmark(fixtures):
    bench = benchmarks.get(f"beir:{fixtures / 'beir'}")
    assert (bench.task, bench.main_metric, bench.no_positive) == ("retrieval", "ndcg@10", "zero")
    assert bench.splits == ("dev", "test") and bench.name == "beir"
    assert bench.key == f"beir:{(fixtures / 'beir').resolve()}"
    data = bench.retrieval_data("test")
    assert data.corpus_ids == ("d1", "d2", "d3", "d4", "d5", "d6", "d7", "8")  # a numeric _id
    assert (
        data.corpus_texts[0]
        == "Stout A stout is a dark beer brewed with roasted malt or roasted barley."
    )
    assert data.corpus_texts[4].startswith("Oil a bicycle chain")  # an empty title
    assert data.corpus_texts[7].startswith("Cider is")  # no title at all
    # only the split's judged queries, graded, a query judged without a relevant document
    assert data.queries == {
        "q1": "what is a stout beer made of",
        "q2": "how do I fix a flat bicycle tyre",
        "q3": "why do my bike disc brakes squeal",
        "q4": "which wine goes with fish",
    }
    assert data.qrels == {
        "q1": {"d1": 2, "d2": 1},
        "q2": {"d4": 1},
        "q3": {"d6": 2, "d5": 0},
        "q4": {"d7": 0},
    }
    assert bench.retrieval_data("dev").qrels == {"q5": {"d3": 1}}
    with pytest.raises(BenchmarkError, match=r"unknown split 'train'; choose one of dev, test$"):
        bench.retrieval_data("train")


def test_any_spelling_of_the_path_is_one_benchmark(fixtures, monkeypatch):
    monkeypatch.chdir(fixtures)
    absolute = f"beir:{(fixtures / 'beir').resolve()}"
    assert benchmark_key("beir:beir") == benchmark_key("beir:./beir/") == absolute
    assert benchmark_key(benchmarks.get("beir:beir")) == absolute


def test_candidate_list_readers_are_refused_in_one_line(fixtures):
    bench = benchmarks.get(f"beir:{fixtures / 'beir'}")
    with pytest.raises(BenchmarkError) as error:
        bench.load("test")
    assert str(error.value) == (
        f"{bench.key}: a retrieval benchmark (queries against its whole corpus), not candidate "
        f"lists; score it with evaluate (adapter-zoo evaluate --benchmark {bench.key})"
    )


def test_missing_files(tmp_path, beir_copy):
    with pytest.raises(BenchmarkError, match=f"^{tmp_path / 'nowhere'}: no such folder"):
        benchmarks.get(f"beir:{tmp_path / 'nowhere'}")
    (beir_copy / "queries.jsonl").unlink()
    with pytest.raises(BenchmarkError, match=f"^{beir_copy / 'queries.jsonl'}: missing"):
        benchmarks.get(f"beir:{beir_copy}")
    (beir_copy / "queries.jsonl").write_text('{"_id": "q1", "text": "a stout"}\n')
    shutil.rmtree(beir_copy / "qrels")
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get(f"beir:{beir_copy}")
    assert str(error.value) == f"{beir_copy / 'qrels'}: no qrels file (expected qrels/test.tsv)"


CORPUS_LINE_1 = '{"_id": "d1", "title": "Stout", "text": "A stout."}\n'


@pytest.mark.parametrize(
    "name,text,message",
    [
        ("corpus.jsonl", CORPUS_LINE_1 + '{"title": "Porter", "text": "A porter."}\n',
         "corpus.jsonl:2: _id missing"),
        ("corpus.jsonl", CORPUS_LINE_1 + '{"_id": "d2", "title": "Porter"}\n',
         "corpus.jsonl:2: text missing"),
        ("corpus.jsonl", CORPUS_LINE_1 + '{"_id": "d2", "text": 7}\n',
         "corpus.jsonl:2: text 7 is not a string"),
        ("corpus.jsonl", CORPUS_LINE_1 + '{"_id": "", "text": "x"}\n',
         "corpus.jsonl:2: _id '' is not a non-empty string"),
        ("corpus.jsonl", CORPUS_LINE_1 + '{"_id": "d2", "title": ["x"], "text": "x"}\n',
         "corpus.jsonl:2: title ['x'] is not a string"),
        ("corpus.jsonl", CORPUS_LINE_1 + CORPUS_LINE_1,
         "corpus.jsonl:2: _id 'd1' listed twice (first at line 1)"),
        ("corpus.jsonl", CORPUS_LINE_1 + '{"_id": "d2", "text": \n',
         "corpus.jsonl:2: not a JSON record (Expecting value)"),
        ("corpus.jsonl", CORPUS_LINE_1 + '["d2", "text"]\n',
         "corpus.jsonl:2: expected a JSON object, got ['d2', 'text']"),
        ("corpus.jsonl", "\n", "corpus.jsonl: no documents"),
        ("queries.jsonl", '{"_id": "q1"}\n', "queries.jsonl:1: text missing"),
        ("queries.jsonl", '{"_id": "q1", "text": "  "}\n',
         "queries.jsonl:1: query 'q1' has an empty text"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq9\td1\t1\n",
         "qrels/test.tsv:3: query-id 'q9' is not in queries.jsonl"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td99\t1\n",
         "qrels/test.tsv:2: corpus-id 'd99' is not in corpus.jsonl"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\trelevant\n",
         "qrels/test.tsv:2: score 'relevant' is not an integer"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t0.5\n",
         "qrels/test.tsv:2: score '0.5' is not an integer"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t-1\n",
         "qrels/test.tsv:2: score '-1' is negative (0 is not relevant)"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\n",
         "qrels/test.tsv:2: expected at least 3 tab-separated fields, got 2"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\t0\n",
         "qrels/test.tsv:2: expected 3 tab-separated fields (query-id, corpus-id, score), got 4"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t2\n",
         "qrels/test.tsv:3: query 'q1', document 'd1' judged twice"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\n", "qrels/test.tsv: no judgements"),
    ],
)  # fmt: skip
def test_bad_records_name_the_file_and_line(beir_copy, name, text, message):
    (beir_copy / name).write_text(text)
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get(f"beir:{beir_copy}").retrieval_data("test")
    assert str(error.value).startswith(f"{beir_copy}/{message}")
    assert "\n" not in str(error.value)


def test_qrels_without_a_header_keep_their_first_line(beir_copy):
    (beir_copy / "qrels" / "test.tsv").write_text("q1\td1\t2\nq2\td4\t1\n")
    qrels = benchmarks.get(f"beir:{beir_copy}").retrieval_data("test").qrels
    assert qrels == {"q1": {"d1": 2}, "q2": {"d4": 1}}


def test_cli_bad_folder_is_one_line_and_writes_no_results(beir_copy, tmp_path, capsys):
    (beir_copy / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\tyes\n")
    results = tmp_path / "results"
    code = main(["evaluate", "--model", "bm25", "--benchmark", f"beir:{beir_copy}",
                 "--results", str(results)])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"adapter-zoo evaluate: error: {beir_copy}/qrels/test.tsv:2: score 'yes' is not an integer"
    ]
    assert not (results / "results.jsonl").exists()
