"""build_from_forum on a tiny parsed forum (exact pools) and on the real beer forum."""

from __future__ import annotations

import json

import pytest

import benchmarks
from benchmarks import BenchmarkError


def test_answer_selection_pools_and_splits(tiny_forum, tiny_forum_rows, tmp_path):
    questions, _ = tiny_forum_rows
    answer = {qid: text for qid, _, _, text, _ in questions}
    path = benchmarks.build_from_forum(tiny_forum, tmp_path / "las", task="answer_selection")
    bench = benchmarks.get("local:" + str(path))
    assert (bench.task, bench.main_metric, bench.splits) == (
        "answer_selection", "p@1", ("train", "dev", "test"))  # fmt: skip
    answered = {qid for qid, text in answer.items() if text}
    by_split = {s: [r for r in bench.load(s).to_list()] for s in bench.splits}
    expected = {s: [str(q) for q, *_, split in questions if split == s and q in answered]
                for s in ("train", "dev", "test")}  # fmt: skip
    assert {s: [r["query_id"] for r in rows] for s, rows in by_split.items()} == expected
    for row in by_split["test"] + by_split["train"]:
        # 8 answered questions < 100: every pool holds every accepted answer exactly once
        assert sorted(row["candidate_ids"]) == sorted(str(100 + q) for q in answered)
        assert row["labels"] == [int(c == str(100 + int(row["query_id"])))
                                 for c in row["candidate_ids"]]  # fmt: skip
        assert row["candidates"] == [answer[int(c) - 100] for c in row["candidate_ids"]]
    manifest = json.loads((path / "benchmark.json").read_text())
    assert manifest["counts"]["test"] == {"queries": 2, "pairs": 16, "positives": 2,
                                          "candidates_min": 8, "candidates_max": 8}  # fmt: skip
    assert "fewer than 100 candidates (smallest 8)" in manifest["candidates_note"]
    assert manifest["source"]["forum"] == "tiny.stackexchange.com"


def test_pool_is_the_positive_plus_bm25_neighbours(tiny_forum, tmp_path):
    path = benchmarks.build_from_forum(tiny_forum, tmp_path / "las3", candidates=3)
    test = {r["query_id"]: r for r in benchmarks.get(f"local:{path}").load("test").to_list()}
    # question 7 (cellaring imperial stout): its nearest answered questions by BM25 are 1
    # (long, imperial, stout) and 9 (a short text with "stout" twice), not 4 (longer)
    assert sorted(test["7"]["candidate_ids"]) == ["101", "107", "109"]
    assert all(len(r["labels"]) == 3 and sum(r["labels"]) == 1 for r in test.values())


def test_question_similarity(tiny_forum, tiny_forum_rows, tmp_path):
    questions, duplicates = tiny_forum_rows
    path = benchmarks.build_from_forum(tiny_forum, tmp_path / "qs", task="question_similarity")
    bench = benchmarks.get(f"local:{path}")
    assert (bench.main_metric, bench.splits) == ("map", ("train", "test"))  # no dev duplicate
    (test,) = bench.load("test").to_list()
    assert test["query_id"] == "10" and test["query"].startswith("How long does imperial stout")
    others = sorted(str(q) for q, *_ in questions if q != 10)
    assert sorted(test["candidate_ids"]) == others  # 10 other questions < 20
    canonical = dict(duplicates)[10]
    assert test["labels"] == [int(c == str(canonical)) for c in test["candidate_ids"]]


def test_seeded_shuffle_is_deterministic_and_atomic(tiny_forum, tmp_path):
    first = benchmarks.get(
        f"local:{benchmarks.build_from_forum(tiny_forum, tmp_path / 'a', seed=1)}"
    ).load("test")
    again = benchmarks.get(
        f"local:{benchmarks.build_from_forum(tiny_forum, tmp_path / 'a', seed=1)}"
    ).load("test")
    other = benchmarks.get(
        f"local:{benchmarks.build_from_forum(tiny_forum, tmp_path / 'b', seed=2)}"
    ).load("test")
    assert first.to_list() == again.to_list()
    assert first["candidate_ids"] != other["candidate_ids"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no temporary left


def test_bad_forum_and_task(tmp_path, tiny_forum):
    (tmp_path / "not-a-forum").mkdir()
    with pytest.raises(BenchmarkError, match=r"no questions/ folder; is it a parsed forum"):
        benchmarks.build_from_forum(tmp_path / "not-a-forum", tmp_path / "out")
    with pytest.raises(BenchmarkError, match="unknown task 'qa'"):
        benchmarks.build_from_forum(tiny_forum, tmp_path / "out", task="qa")
    for bad in (1, 10**18):  # 10**18 was cut to each list, but written in benchmark.json
        with pytest.raises(
            BenchmarkError, match=rf"^candidates must be a whole number in \[2, 10000\], not {bad}$"
        ):
            benchmarks.build_from_forum(tiny_forum, tmp_path / "out", candidates=bad)
    assert not (tmp_path / "out").exists()
    with pytest.raises(BenchmarkError, match=r"benchmark.json: no benchmark descriptor"):
        benchmarks.get(f"local:{tmp_path}")


def test_real_beer_forum(tmp_path, beer_archive):
    import datasets

    import stackexchange

    forum = stackexchange.parse_forum(beer_archive, tmp_path / "parsed")
    path = benchmarks.build_from_forum(forum, tmp_path / "beer-las", task="answer_selection")
    manifest = json.loads((path / "benchmark.json").read_text())
    questions = datasets.load_from_disk(str(forum / "questions"))
    for split in ("train", "dev", "test"):
        answered = sum(1 for s, a in zip(questions["split"], questions["accepted_answer"])
                       if s == split and a)  # fmt: skip
        counts = manifest["counts"][split]
        assert counts["queries"] == answered > 0
        assert counts["candidates_min"] == counts["candidates_max"] == 100
        assert counts["positives"] == answered
    assert len(questions) == 1029
    test = benchmarks.get(f"local:{path}").load("test")
    assert all(len(set(ids)) == 100 for ids in test["candidate_ids"])
    qs = benchmarks.build_from_forum(forum, tmp_path / "beer-qs", task="question_similarity")
    counts = json.loads((qs / "benchmark.json").read_text())["counts"]
    duplicates = sum(
        json.loads((forum / "stats.json").read_text())["splits"]["duplicates"].values()
    )
    assert sum(c["queries"] for c in counts.values()) <= duplicates
    assert counts["test"]["queries"] >= 1 and counts["test"]["candidates_max"] == 20


def _files(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_build_benchmark_keeps_what_a_non_benchmark_out_folder_held(tiny_forum, tmp_path, capsys):
    from adapter_zoo.cli import main

    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    code = main(["build-benchmark", str(tiny_forum), "--out", str(out)])
    assert code == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo build-benchmark: error: {out}: already exists and is not a benchmark "
        "written by adapter-zoo; move it away or pass --overwrite\n"
    )
    assert _files(out) == {"thesis.tex": b"years of work"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]
    assert main(["build-benchmark", str(tiny_forum), "--out", str(out), "--overwrite"]) == 0
    assert (out / "benchmark.json").is_file() and not (out / "thesis.tex").exists()


def test_build_benchmark_refuses_an_out_that_is_or_contains_the_forum(tiny_forum, tmp_path, capsys):
    import shutil

    from adapter_zoo.cli import main

    forum = shutil.copytree(tiny_forum, tmp_path / "parsed" / "tiny.stackexchange.com")
    before = _files(tmp_path)
    for out in (forum, forum.parent, tmp_path):
        for extra in ([], ["--overwrite"]):
            assert main(["build-benchmark", str(forum), "--out", str(out), *extra]) == 2
            assert capsys.readouterr().err == (
                f"adapter-zoo build-benchmark: error: {forum}: input inside or equal to the "
                f"output {out}; choose another output\n"
            )
    assert _files(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parsed"]


def test_rebuilding_a_benchmark_keeps_files_the_user_added_unless_overwrite(
    tiny_forum, tmp_path, capsys
):
    from adapter_zoo.cli import main

    out = tmp_path / "bench"
    assert main(["build-benchmark", str(tiny_forum), "--out", str(out)]) == 0
    built = _files(out)
    assert main(["build-benchmark", str(tiny_forum), "--out", str(out)]) == 0  # ours: rebuilt
    assert _files(out) == built
    (out / "test" / "notes.md").write_text("my error analysis")
    capsys.readouterr()
    assert main(["build-benchmark", str(tiny_forum), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo build-benchmark: error: {out}: a benchmark built by adapter-zoo, but it "
        f"also holds {out / 'test' / 'notes.md'}, which the build did not write; a rebuild "
        "would replace it: move it away or pass --overwrite\n"
    )
    assert _files(out) == {**built, "test/notes.md": b"my error analysis"}
    assert main(["build-benchmark", str(tiny_forum), "--out", str(out), "--overwrite"]) == 0
    assert _files(out) == built


def test_a_second_build_into_the_same_folder_is_refused_while_one_runs(tiny_forum, tmp_path):
    from stackexchange.io import lock_file, output_lock

    out = tmp_path / "bench"
    # another build (any process) writing into out
    with output_lock(out), pytest.raises(BenchmarkError) as error:
        benchmarks.build_from_forum(tiny_forum, out, task="answer_selection", candidates=3)
    assert str(error.value) == (
        f"{out}: another adapter-zoo run is writing into it (lock {lock_file(out)}); "
        "wait until it ends or choose another output"
    )
    assert not out.exists()
    built = benchmarks.build_from_forum(tiny_forum, out, task="answer_selection", candidates=3)
    assert json.loads((built / "benchmark.json").read_text())["candidates"] == 3


def test_build_benchmark_refuses_an_out_inside_the_forum_it_reads(tiny_forum, tmp_path, capsys):
    """A benchmark written inside its forum folder went with it when the forum was parsed
    again (parse --overwrite replaces the folder whole); export refused the same already."""
    import shutil

    from adapter_zoo.cli import main

    forum = shutil.copytree(tiny_forum, tmp_path / "parsed" / "tiny.stackexchange.com")
    before = _files(tmp_path)
    out = forum / "bench"
    for extra in ([], ["--overwrite"]):
        assert main(["build-benchmark", str(forum), "--out", str(out), *extra]) == 2
        assert capsys.readouterr().err == (
            f"adapter-zoo build-benchmark: error: {out}: output inside the input {forum}; "
            "choose another output\n"
        )
    assert _files(tmp_path) == before
    assert not out.exists()
