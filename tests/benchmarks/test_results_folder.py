"""A ``--results`` folder that cannot be written is one line and exit 2 before any model
loads, not an ``[Errno 17] File exists`` line saying nothing of what to do once every model
has scored."""

from __future__ import annotations

import pytest

ADVICE = "choose a --results folder you can write"
# On the command line --results is a folder_option: argparse refuses it before the command
# runs (tests/test_output_folders.py); from Python, check_results_folder does.


def _evaluate(results):
    from benchmarks.evaluate import evaluate

    evaluate("nope", "wikiqa", results=results)


def _evaluate_each(results):
    from benchmarks.evaluate import evaluate_each

    evaluate_each("bm25", "wikiqa", ["nope", "other"], results=results)


def _sweep(results):
    from benchmarks.sweep import sweep_benchmark

    sweep_benchmark("wikiqa", ["nope"], results=results)


def _cascade(results):
    from benchmarks.cascade import evaluate_cascade

    evaluate_cascade("nope", "wikiqa", results=results)


# "nope" is no model: a call that loaded before checking results would name it instead
CALLS = {"evaluate": _evaluate, "evaluate_each": _evaluate_each, "sweep": _sweep,
         "cascade": _cascade}  # fmt: skip


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("where", ["a-file", "below-a-file"])
def test_a_results_folder_that_cannot_be_written_is_refused_first(tmp_path, snapshot, call, where):
    from benchmarks.errors import BenchmarkError

    blocker = tmp_path / "file"
    blocker.write_text("x")
    results = blocker if where == "a-file" else blocker / "results"
    before = snapshot(tmp_path)
    with pytest.raises(BenchmarkError) as refused:
        CALLS[call](results)
    assert str(refused.value) == (
        f"{results}: cannot write results there ({blocker} is not a folder); {ADVICE}"
    )
    assert snapshot(tmp_path) == before
