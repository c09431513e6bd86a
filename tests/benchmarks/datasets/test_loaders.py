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
        "arguana-01",
        "arguana-02",
        "arguana-05",
        "mediqa2019",
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
    assert benchmarks.get("arguana-01").splits == ("test",)
    assert benchmarks.get("mediqa2019").splits == ("train", "dev", "test")


def test_unknown_benchmark_and_split(fixtures):
    with pytest.raises(
        BenchmarkError, match="^unknown benchmark 'nope'; choose one of arguana-01, arguana-02"
    ):
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


def test_insuranceqa_raw_pools_answer_texts_and_train_questions(fixtures):
    test = rows("insuranceqa", "test", fixtures)
    assert [r["query_id"] for r in test] == ["test-1", "test-3"]  # test-2's pool misses label 2
    assert test[0]["query"] == "What does life insurance cover ?"
    assert test[0]["candidate_ids"] == ["3", "1", "2", "4"]
    # English texts, stripped; label 2's value is the text of a Python dict literal
    assert test[0]["candidates"] == [
        "No.",
        "It pays a death benefit.",
        "Car insurance is required.",
        "Life insurance is a benefit.",
    ]
    assert test[0]["labels"] == [0, 1, 0, 1]
    assert [r["query_id"] for r in rows("insuranceqa", "dev", fixtures)] == ["dev-1"]
    # train: the questions neither pool holds (lines 1 and 4), their ground truth alone
    train = rows("insuranceqa", "train", fixtures)
    assert [(r["query_id"], r["candidate_ids"], r["labels"]) for r in train] == [
        ("train-1", ["2"], [1]),
        ("train-4", ["1", "5"], [1, 1]),
    ]
    assert train[1]["query"] == "what does a death benefit cover ?"
    assert train[1]["candidates"][1] == "A death benefit is paid."


def _insuranceqa_copy(fixtures, tmp_path):
    import shutil

    return shutil.copytree(fixtures / "insuranceqa-v2", tmp_path / "insuranceqa-v2")


def test_insuranceqa_reads_v2_label2answer_without_the_answer_json(fixtures, tmp_path):
    root = _insuranceqa_copy(fixtures, tmp_path)
    (root / "insuranceqa_data" / "answers.json.gz").unlink()
    test = rows("insuranceqa", "test", tmp_path)
    assert test[0]["candidates"][:2] == ["no", "it pays a death benefit"]  # the token file's


def test_insuranceqa_missing_answers_is_one_line_naming_the_file_and_its_source(fixtures, tmp_path):
    from benchmarks.datasets.insuranceqa import SDIST

    root = _insuranceqa_copy(fixtures, tmp_path)
    (root / "insuranceqa_data" / "answers.json.gz").unlink()
    (root / "V2" / "InsuranceQA.label2answer.token.encoded.gz").unlink()
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get("insuranceqa").load("test", data_dir=tmp_path)
    assert str(error.value) == (
        f"insuranceqa: missing insuranceqa_data/answers.json.gz in {root} (offline); put the "
        f"original files there (from insuranceqa_data-1.0/insuranceqa_data/answers.json.gz in "
        f"{SDIST}) or pass --data-dir"
    )


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("{'zh': 'x', 'en': 'open", "not a Python dict literal (unterminated string literal "
                                    "(detected at line 1) (<unknown>, line 1))"),
        # a call is no literal: the text is parsed, never run
        ("__import__('os').system('false')", "not a Python dict literal (malformed node or "
                                             "string on line 1: <ast.Call object"),
        ({"zh": "x"}, "no English text under 'en'"),
        ("{'en': '  '}", "no English text under 'en'"),
    ],
    ids=["unterminated", "call", "no-en", "blank-en"],
)  # fmt: skip
def test_insuranceqa_a_malformed_answer_names_the_file_and_label(fixtures, tmp_path, value,
                                                                 reason):  # fmt: skip
    import gzip
    import json

    root = _insuranceqa_copy(fixtures, tmp_path)
    path = root / "insuranceqa_data" / "answers.json.gz"
    answers = json.loads(gzip.decompress(path.read_bytes()))
    answers["3"] = value
    path.write_bytes(gzip.compress(json.dumps(answers).encode()))
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get("insuranceqa").load("test", data_dir=tmp_path)
    assert str(error.value).startswith(f"{path}: answer 3: {reason}")


def test_insuranceqa_a_label_without_answer_names_the_pool_file_and_line(fixtures, tmp_path):
    import gzip

    root = _insuranceqa_copy(fixtures, tmp_path)
    pool = root / "V2" / "InsuranceQA.question.anslabel.raw.500.pool.solr.test.encoded.gz"
    lines = gzip.decompress(pool.read_bytes()).decode().splitlines()
    lines[2] = lines[2].replace("\t4 2 3", "\t4 2 9")
    pool.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get("insuranceqa").load("test", data_dir=tmp_path)
    assert str(error.value) == f"{pool}:3: answer label 9 not in insuranceqa_data/answers.json.gz"


def test_a_file_inside_a_package_archive_is_taken_out_and_checked(tmp_path, monkeypatch):
    import hashlib
    import io
    import tarfile
    import urllib.request

    from benchmarks.fetch import download

    member, data = "pkg-1.0/pkg/answers.json.gz", b"the member's bytes"
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))

    class Response(io.BytesIO):
        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: Response(
        archive.getvalue()))  # fmt: skip
    sha = hashlib.sha256(data).hexdigest()
    target = tmp_path / "answers.json.gz"
    assert download("https://pypi/pkg-1.0.tar.gz", target, sha, member) == target
    assert target.read_bytes() == data
    with pytest.raises(BenchmarkError, match=r"^https://pypi/pkg-1.0.tar.gz: the archive holds "
                                             r"no file pkg-1.0/other$"):  # fmt: skip
        download("https://pypi/pkg-1.0.tar.gz", tmp_path / "other", sha, "pkg-1.0/other")
    with pytest.raises(BenchmarkError, match=r"pkg-1.0.tar.gz \(pkg-1.0/pkg/answers.json.gz\): "
                                             r"sha256 .* does not match the recorded 00"):  # fmt: skip
        download("https://pypi/pkg-1.0.tar.gz", tmp_path / "again", "00", member)
    assert not (tmp_path / "again").exists()


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


def test_semeval2017_reads_the_derived_bodies_only_text(fixtures, tmp_path):
    bench = benchmarks.get("semeval2017")
    assert bench.label == "semeval2017 bodies only (derived test text)"
    assert benchmarks.get("semeval2016").label == "semeval2016"
    assert (bench.no_positive, benchmarks.get("semeval2016").no_positive) == ("zero", "zero")
    test = rows("semeval2017", "test", fixtures)
    assert [r["query_id"] for r in test] == ["Q900", "Q901"]
    # bodies only; the comments after the related question's body are not read
    assert test[0]["query"] == "Where can I renew my driving licence in Doha?"
    # candidates in the gold file's IR rank order, not the text file's line order
    assert test[0]["candidate_ids"] == ["Q900_R2", "Q900_R5", "Q900_R7"]
    assert test[0]["candidates"][2] == "Which office renews a driving licence?"
    assert [r["labels"] for r in test] == [[0, 1, 1], [0, 0]]  # Q901: no relevant question
    # a malformed line and a labelled pair without text are named by file (and line)
    folder = tmp_path / "semeval-task3" / "test2017"
    folder.mkdir(parents=True)
    source = fixtures / "semeval-task3" / "test2017"
    gold = "SemEval2017-Task3-CQA-QL-test.xml.subtaskB.relevancy"
    (folder / gold).write_text((source / gold).read_text())
    text = (source / "testing_data.derived.txt").read_text().splitlines()
    (folder / "testing_data.derived.txt").write_text("\n".join(text[:2] + ["Q900+++$$$+++x"]))
    with pytest.raises(BenchmarkError, match=r"testing_data.derived.txt:3: expected at least 4"):
        bench.load("test", data_dir=tmp_path)
    (folder / "testing_data.derived.txt").write_text("\n".join(text[1:]))
    with pytest.raises(BenchmarkError, match=r"1 labelled pairs have no text .* Q900 Q900_R7"):
        bench.load("test", data_dir=tmp_path)


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


def _local(tmp_path, rows, **descriptor):
    """A ``local:`` benchmark folder with one test split holding ``rows`` (any types)."""
    import json

    import datasets

    folder = tmp_path / "bench"
    spec = {"name": "tiny", "task": "answer_selection", "main_metric": "map", "splits": ["test"]}
    folder.mkdir()
    (folder / "benchmark.json").write_text(json.dumps({**spec, **descriptor}))
    columns = {c: [row[c] for row in rows] for c in COLUMNS} if rows else None
    dataset = (
        datasets.Dataset.from_dict(columns)
        if rows
        else datasets.Dataset.from_dict({c: [] for c in COLUMNS})
    )
    dataset.save_to_disk(str(folder / "test"))
    return folder


def _row(query_id="q1", candidates=("a", "b", "c"), labels=(1, 0, 0)):
    return {
        "query_id": query_id,
        "query": f"query {query_id}",
        "candidate_ids": [f"{query_id}-{i}" for i in range(len(candidates))],
        "candidates": list(candidates),
        "labels": list(labels),
    }


def test_local_benchmark_with_fewer_labels_than_candidates_names_the_record(tmp_path):
    folder = _local(tmp_path, [_row("q1"), _row("q2", candidates="abcdefghij", labels=(1, 0, 0))])
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get(f"local:{folder}").load("test")
    assert str(error.value) == (
        f"tiny/test ({folder / 'test'}): record 2 (query 'q2'): 10 candidate_ids, "
        "10 candidates and 3 labels (the lists must have equal length)"
    )


@pytest.mark.parametrize(
    ("labels", "candidates", "detail"),
    [
        (["1", "0"], ["a", "b"], "candidate 0 (q1-0): label '1' is not 0 or 1"),
        ([1.0, float("nan")], ["a", "b"], "candidate 0 (q1-0): label 1.0 is not 0 or 1"),
        ([1, 2], ["a", "b"], "candidate 1 (q1-1): label 2 is not 0 or 1"),
        ([1, 0], ["a", None], "candidate 1 ('q1-1') is None, not a string"),
    ],
    ids=["string-labels", "nan-label", "label-2", "none-candidate"],
)
def test_local_benchmark_bad_label_or_candidate_names_the_record(
    tmp_path, labels, candidates, detail
):
    folder = _local(tmp_path, [_row("q1", candidates=candidates, labels=labels)])
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get(f"local:{folder}").load("test")
    assert str(error.value) == f"tiny/test ({folder / 'test'}): record 1 (query 'q1'): {detail}"


def test_local_benchmark_empty_split_is_an_error(tmp_path):
    folder = _local(tmp_path, [])
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get(f"local:{folder}").load("test")
    assert str(error.value) == f"tiny/test ({folder / 'test'}): empty split (no queries)"


def test_local_benchmark_with_all_labels_zero_records_no_result(tmp_path):
    folder = _local(tmp_path, [_row("q1", labels=(0, 0, 0)), _row("q2", labels=(0, 0, 0))])
    with pytest.raises(BenchmarkError) as error:
        benchmarks.evaluate("bm25", f"local:{folder}", results=tmp_path / "results")
    assert str(error.value) == (
        f"tiny/test ({folder / 'test'}): no query of 2 has a relevant candidate (every label is 0)"
    )
    assert not (tmp_path / "results" / "results.jsonl").exists()


@pytest.mark.parametrize(
    ("field", "value", "known"),
    [
        ("main_metric", "accuracy", "map, mrr, p@1, ndcg@10"),
        ("bm25_scope", "document", "query, corpus"),
        ("no_positive", "skip", "drop, zero"),
    ],
)
def test_local_benchmark_unknown_option_in_descriptor(tmp_path, field, value, known):
    folder = _local(tmp_path, [_row()], **{field: value})
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get(f"local:{folder}")
    assert str(error.value) == (
        f"{folder / 'benchmark.json'}: benchmark 'tiny': unknown {field} {value!r}; "
        f"choose one of {known}"
    )


def test_evaluate_cli_exits_2_with_one_line_for_a_bad_local_record(tmp_path, capsys):
    from adapter_zoo.cli import main

    folder = _local(tmp_path, [_row("q1", candidates="abcdefghij", labels=(1, 0, 0))])
    capsys.readouterr()  # the progress bars of the fixture
    code = main(["evaluate", "--model", "bm25", "--benchmark", f"local:{folder}"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        f"adapter-zoo evaluate: error: tiny/test ({folder / 'test'}): record 1 (query 'q1'): "
        "10 candidate_ids, 10 candidates and 3 labels (the lists must have equal length)\n"
    )


def test_truncated_local_split_names_the_folder(tmp_path):
    folder = _local(tmp_path, [_row(f"q{i}") for i in range(2000)])
    (shard,) = (folder / "test").glob("*.arrow")
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get(f"local:{folder}").load("test")
    message = str(error.value)
    assert message.startswith(f"{folder / 'test'}: unreadable dataset, truncated or corrupt (")
    assert "Expected to be able to read" in message


def test_truncated_tsv_gz_names_the_file_and_line(fixtures, tmp_path):
    import shutil

    shutil.copytree(fixtures / "wikiqa", tmp_path / "wikiqa")
    path = tmp_path / "wikiqa" / "WikiQA-test.tsv.gz"
    path.write_bytes(path.read_bytes()[:-12])  # the gzip trailer and the end of the stream
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get("wikiqa").load("test", data_dir=tmp_path)
    assert str(error.value).startswith(f"{path}: unreadable after line ")
    assert "truncated or corrupt file (Compressed file ended before" in str(error.value)
    path.write_bytes(b"not gzip at all\n")
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get("wikiqa").load("test", data_dir=tmp_path)
    assert str(error.value) == (
        f"{path}: unreadable after line 0: truncated or corrupt file (Not a gzipped file (b'no'))"
    )


def test_non_integer_label_in_original_files_names_file_and_line(fixtures, tmp_path):
    import shutil

    shutil.copytree(fixtures / "trecqa", tmp_path / "trecqa")
    sim = tmp_path / "trecqa" / "clean-test" / "sim.txt"
    lines = sim.read_text().splitlines()
    lines[1] = "yes"
    sim.write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get("trecqa").load("test", data_dir=tmp_path)
    assert str(error.value) == f"{sim}:2: label 'yes' is not an integer"


def test_missing_wikiqa_download_failure_names_file_url_and_data_dir(tmp_path, monkeypatch):
    import urllib.error
    import urllib.request

    from benchmarks.datasets.wikiqa import FILES

    for flag in ("ADAPTER_ZOO_OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(flag, raising=False)
    calls = []

    def no_network(url, timeout=None):
        calls.append(url)
        raise urllib.error.URLError(OSError(-2, "Name or service not known"))

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    with pytest.raises(BenchmarkError) as error:
        benchmarks.get("wikiqa").load("test", data_dir=tmp_path)
    url = FILES[2].url
    assert calls == [url]
    assert str(error.value) == (
        f"{tmp_path / 'wikiqa' / 'WikiQA-test.tsv.gz'}: missing, and downloading it from {url} "
        "failed ([Errno -2] Name or service not known); put the file there or pass --data-dir"
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b"null", "the descriptor must be a JSON object, not null"),
        (b"[1]", "the descriptor must be a JSON object, not a list"),
        (b"[" * 100_000, "not valid JSON (nested too deeply)"),
        (b'{"name": "caf\xe9"}', "not valid JSON ('utf-8' codec can't decode byte 0xe9 in "
                                 "position 13: invalid continuation byte)"),
        (b'{"name": "\\udcff"}', "not valid JSON (holds \\udcff, a lone surrogate escape that "
                                 "is no text)"),
    ],
    ids=["null", "list", "deep", "latin-1", "surrogate"],
)  # fmt: skip
def test_a_broken_local_descriptor_is_one_line_naming_it(tmp_path, capsys, text, reason):
    """A list was an AttributeError traceback and deep nesting a RecursionError."""
    from adapter_zoo.cli import main

    descriptor = tmp_path / "bench" / "benchmark.json"
    descriptor.parent.mkdir()
    descriptor.write_bytes(text)
    argv = ["evaluate", "--model", "bm25", "--benchmark", f"local:{descriptor.parent}"]
    assert main([*argv, "--results", str(tmp_path / "results")]) == 2
    assert capsys.readouterr().err == f"adapter-zoo evaluate: error: {descriptor}: {reason}\n"
    assert not (tmp_path / "results").exists()


def test_insuranceqa_adaptation_texts_are_answers_and_train_questions_unpaired(fixtures):
    from benchmarks.datasets.insuranceqa import adaptation_texts

    texts = adaptation_texts(fixtures / "insuranceqa-v2")
    # every answer by label, then the train questions; no valid or test question
    assert texts == ["It pays a death benefit.", "Car insurance is required.", "No.",
                     "Life insurance is a benefit.", "A death benefit is paid.",
                     "is car insurance required ?", "what does a death benefit cover ?"]  # fmt: skip
