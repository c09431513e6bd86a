"""``adapter-zoo leaderboard`` on hostile input, by family: encodings, broken
records, names, sizes, paths, concurrency. Each case is one line on stderr naming the file,
the line and what was wrong, exit 2, and nothing written; a page is written whole or not at
all, never over a folder the command did not write."""

from __future__ import annotations

import json

import pytest

from adapter_zoo.cli import main
from benchmarks.leaderboard import MARKER

GOOD = {"benchmark": "wikiqa", "split": "test", "model": "bm25", "mode": "zero-shot",
        "metrics": {"map": 0.5, "mrr": 0.6}, "main_metric": "map"}  # fmt: skip
LINE = json.dumps(GOOD).encode()


def _record(**fields) -> bytes:
    return json.dumps({**GOOD, **fields}).encode()


def _board(capsys, *argv) -> tuple[int | str, str]:
    try:
        code = main(["leaderboard", *argv])
    except SystemExit as done:  # argparse
        code = f"usage {done.code}"
    return code, capsys.readouterr().err


# (results.jsonl bytes, the message after "FILE:")
RECORDS = {
    "empty": (b"", " no records (run adapter-zoo evaluate --results ...)"),
    "blank-lines": (b"\n  \n\n", " no records (run adapter-zoo evaluate --results ...)"),
    "latin-1": (LINE.replace(b"bm25", b"bm\xe925"),
                "1: not UTF-8 text (invalid continuation byte at byte 53 of the line)"),
    "nul-bytes": (LINE + b"\n\x00\x00", "2: not a JSON record (Expecting value)"),
    "truncated": (LINE[:-5], "1: not a JSON record (Unterminated string starting at)"),
    "two-on-a-line": (LINE + LINE, "1: not a JSON record (Extra data)"),
    "deep-nesting": (b"[" * 100_000 + b"]" * 100_000, "1: not a JSON record (nested too deeply)"),
    "lone-surrogate": (_record(model="\udcff"), "1: not a JSON record (holds \\udcff, a lone "
                                                "surrogate escape that is no text)"),
    "long-number": (b'{"a": ' + b"1" * 5000 + b"}", "1: not a JSON record (Exceeds the limit "
                    "(4300 digits) for integer string conversion: value has 5000 digits)"),
    "null": (b"null", "1: expected a JSON object (a record), got null"),
    "list": (b"[1]", "1: expected a JSON object (a record), got a list [1]"),
    "nan": (_record(metrics={"map": float("nan")}), "1: metrics.map: expected a finite number, "
                                                     "got nan"),
    "huge-integer": (_record(metrics={"map": 10**400}), "1: metrics.map: expected a finite number, "
                                                         "got an integer of 401 digits"),
    "boolean": (_record(metrics={"map": True}), "1: metrics.map: expected a number, got a "
                                                 "boolean true"),
    "fusion-weights-text": (_record(fusion_weights={"0": "x"}),
                            '1: fusion_weights.0: expected an object, got a string "x"'),
    "long-name": (_record(model="m" * 2_000_000), "1: model: expected a name of at most 1024 "
                                                   "characters, got 2000000"),
    "control-character": (_record(model="a\0b"), "1: model: expected a name without control "
                                                 'characters, got "a\\u0000b"'),
    "blank-name": (_record(mode=" "), "1: mode: expected a name, got an empty string"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(RECORDS))
def test_a_broken_results_file_is_one_line_naming_file_and_line(tmp_path, capsys, snapshot, case):
    data, message = RECORDS[case]
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "results.jsonl").write_bytes(data)
    before = snapshot(tmp_path)
    code, err = _board(capsys, str(tmp_path / "results"), "--out", str(tmp_path / "board"))
    assert (code, err.count("\n")) == (2, 1)
    assert err == (
        f"adapter-zoo leaderboard: error: {tmp_path / 'results' / 'results.jsonl'}:{message}\n"
    )
    assert snapshot(tmp_path) == before


def test_a_byte_order_mark_is_read_past(tmp_path, capsys):
    (tmp_path / "results.jsonl").write_bytes(b"\xef\xbb\xbf" + LINE + b"\n")
    assert main(["leaderboard", str(tmp_path / "results.jsonl"), "--out", str(tmp_path / "b")]) == 0
    assert "| bm25 |" in (tmp_path / "b" / "leaderboard.md").read_text()


@pytest.fixture
def results(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "results.jsonl").write_bytes(LINE + b"\n")
    (tmp_path / "file").write_text("x")
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "leaderboard.md").write_text("my own notes")
    (tmp_path / "a.jsonl").mkdir()
    return tmp_path / "results"


NOT_OURS = "already exists and is not a leaderboard written by adapter-zoo; move it away or " \
           "pass --overwrite"  # fmt: skip
PATHS = {
    "results-missing": ("{t}/nope", "{t}/board",
                        "{t}/nope/results.jsonl: no results file (run adapter-zoo evaluate "
                        "--results ...)"),
    "results-a-folder": ("{t}/a.jsonl", "{t}/board",
                         "{t}/a.jsonl: not a file; give a results folder or its results.jsonl"),
    "out-a-file": ("{t}/results", "{t}/file", f"{{t}}/file: {NOT_OURS}"),
    # an --out below a file is argparse's to refuse: tests/test_output_folders.py
    "out-a-user-folder": ("{t}/results", "{t}/theirs", f"{{t}}/theirs: {NOT_OURS}"),
    "out-the-results": ("{t}/results", "{t}/results",
                        "{t}/results: input inside or equal to the output {t}/results; choose "
                        "another output"),
    "out-around-the-results": ("{t}/results/results.jsonl", "{t}",
                               "{t}/results/results.jsonl: input inside or equal to the output "
                               "{t}; choose another output"),
    "out-too-long": ("{t}/results", "{t}/" + "z" * 250,
                     "{t}/" + "z" * 250 + ": the name '" + "z" * 40 + "...' is too long for the "
                     "file system (289 bytes with the temporaries written beside it; at most "
                     "255); choose a shorter name"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(PATHS))
def test_a_path_that_cannot_be_read_or_written_is_one_line(
    results, tmp_path, capsys, snapshot, case
):
    given, out, message = (text.replace("{t}", str(tmp_path)) for text in PATHS[case])
    before = snapshot(tmp_path)
    code, err = _board(capsys, given, "--out", out)
    assert code == 2
    assert err == f"adapter-zoo leaderboard: error: {message}\n"
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("argument", ["results", "--out"])
@pytest.mark.parametrize(("path", "message"), [
    ("", "'': an empty path names no file or folder"),
    ("a\0b", "'a\\x00b': a path cannot hold a NUL byte"),
], ids=["empty", "nul"])  # fmt: skip
def test_a_path_no_file_can_have_is_an_argparse_error(results, capsys, argument, path, message):
    argv = [path, "--out", "board"] if argument == "results" else [str(results), "--out", path]
    code, err = _board(capsys, *argv)
    assert code == "usage 2"
    assert err.splitlines()[-1] == f"adapter-zoo leaderboard: error: argument {argument}: {message}"


def test_a_rerun_replaces_its_own_page_and_stale_figures_go(results, tmp_path, capsys):
    board = tmp_path / "board"
    fused = _record(model="runs/fused", fusion_weights={"0": {"a": 0.6, "b": 0.4}})
    (results / "results.jsonl").write_bytes(LINE + b"\n" + fused + b"\n")
    assert main(["leaderboard", str(results), "--out", str(board)]) == 0
    assert (board / "fusion_fused.png").is_file() and (board / MARKER).is_file()
    (results / "results.jsonl").write_bytes(LINE + b"\n")
    assert main(["leaderboard", str(results), "--out", str(board)]) == 0
    assert not (board / "fusion_fused.png").exists()  # the page is whole: no stale figure
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["a.jsonl", "board", "file", "results", "theirs"]
    )
    assert main(["leaderboard", str(results), "--out", str(tmp_path / "theirs"),
                 "--overwrite"]) == 0  # fmt: skip
    assert not (tmp_path / "theirs" / "leaderboard.md").read_text().startswith("my own")


def test_a_fusion_figure_of_any_model_name_stays_in_the_folder(results, tmp_path):
    records = [_record(model=name, fusion_weights={"0": {"a": 0.5, "b": 0.5}})
               for name in ("../../fused", "x/fused", "y" * 300, "..")]  # fmt: skip
    (results / "results.jsonl").write_bytes(b"\n".join(records))
    assert main(["leaderboard", str(results), "--out", str(tmp_path / "board")]) == 0
    figures = sorted(p.name for p in (tmp_path / "board").glob("fusion_*.png"))
    assert len(figures) == 4 and all(len(name) < 80 for name in figures)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["a.jsonl", "board", "file", "results", "theirs"]
    )


def test_a_second_run_into_one_folder_is_refused_while_the_first_writes(
    results, tmp_path, capsys, held_output_lock
):
    board = tmp_path / "board"
    held_output_lock(board)
    code, err = _board(capsys, str(results), "--out", str(board))
    assert code == 2
    assert err.startswith(
        f"adapter-zoo leaderboard: error: {board}: another adapter-zoo run is writing into it"
    )
    assert not board.exists()
