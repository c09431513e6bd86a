"""MTEB as an outside check: a zoo bi-encoder through MTEB's reranking evaluator on tasks
built from local data (both shipped forums' held-out LAS sets, WikiQA from ../shared), MTEB's
result JSON, and MTEB's MAP beside ours on the same lists, ties being the one difference.

The model is a bi-encoder adapter entry on the tiny random sentence-BERT (seconds per set).
"""

from __future__ import annotations

import json
from pathlib import Path

import mteb  # the mteb extra, part of [test]
import numpy as np
import pytest
import torch

from adapter_zoo.metrics import evaluate_rankings

# one xdist process runs this module (--dist loadgroup): forum_sets is a module fixture
pytestmark = pytest.mark.xdist_group("mteb")

FORUMS = ("beer.stackexchange.com", "bicycles.meta.stackexchange.com")


@pytest.fixture(scope="module")
def forum_sets(parsed_shipped, tmp_path_factory):
    """Both shipped forums' held-out LAS sets (50 candidates), built from their parse."""
    from benchmarks import build_from_forum

    work = tmp_path_factory.mktemp("mteb-forums")
    sets = {}
    for host in FORUMS:
        forum = parsed_shipped / host
        sets[host] = f"local:{build_from_forum(forum, work / host, candidates=50, seed=0)}"
    return sets


@pytest.fixture
def bi_entry(tiny_sentence_bert_path):
    """A bi-encoder adapter zoo entry with random (non-identity) SeqBn weights, loaded."""
    from adapters import SeqBnConfig

    import adapter_zoo
    from adapter_zoo.biencoder.encoder import build_sentence_model, transformer_of
    from adapter_zoo.biencoder.layouts import write_bi_adapter
    from adapter_zoo.zoo import save_entry
    from adapter_zoo.zoo.layouts import base_config

    torch.manual_seed(3)
    model = build_sentence_model(str(tiny_sentence_bert_path), device="cpu")
    transformer = transformer_of(model)
    transformer.add_adapter("tiny_bi", config=SeqBnConfig(reduction_factor=2))
    with torch.no_grad():
        for name, parameter in transformer.named_parameters():
            if "adapters" in name:
                parameter.add_(torch.randn_like(parameter) * 0.1)
    card = {"mode": "adapter", "encoder": "bi", "layout": "adapter", "forums": list(FORUMS),
            "base_model": str(tiny_sentence_bert_path), "max_length": 64,
            "base_config": base_config(transformer.config)}  # fmt: skip
    save_entry(lambda folder: write_bi_adapter(model, "tiny_bi", folder), "tiny-bi", card)
    return adapter_zoo.load("tiny-bi", device="cpu")


def trec_order_map(scores, labels) -> float:
    """MAP with trec_eval's order: score descending, ties by document id descending (the
    ids ``benchmarks.mteb_export`` gives: ``<query>-<position>``)."""
    total = used = 0
    for query, (row_scores, row_labels) in enumerate(zip(scores, labels, strict=True)):
        ids = [f"{query}-{position}" for position in range(len(row_labels))]
        order = sorted(range(len(ids)), key=lambda i: (row_scores[i], ids[i]), reverse=True)
        hits, precision = 0, 0.0
        for rank, i in enumerate(order, start=1):
            if row_labels[i] > 0:
                hits += 1
                precision += hits / rank
        if hits:
            total += precision / hits
            used += 1
    return total / used


def check_result_file(path: str, task_name: str, map_value: float) -> None:
    """MTEB's result JSON (its TaskResult schema, as ``mteb.load_results`` reads it)."""
    record = json.loads(Path(path).read_text())
    assert record["task_name"] == task_name
    assert record["mteb_version"] == mteb.__version__
    assert record["dataset_revision"] == "local"
    [scores] = record["scores"]["test"]
    assert (scores["hf_subset"], scores["languages"]) == ("default", ["eng-Latn"])
    assert scores["main_score"] == scores["map_at_1000"] == map_value
    # MTEB's own reader opens it
    loaded = mteb.TaskResult.from_disk(Path(path))
    assert loaded.get_score(getter=lambda s: s["map_at_1000"]) == pytest.approx(map_value)


def test_mteb_map_equals_ours_on_forum_and_wikiqa_lists(
    bi_entry, forum_sets, shared_file, tmp_path
):
    from benchmarks import evaluate, get
    from benchmarks.mteb_export import reranking_task, run_task

    sets = {**forum_sets, "wikiqa": "wikiqa"}
    data_dir = shared_file("benchmarks")
    exact = []
    for label, benchmark in sets.items():
        rows = list(get(benchmark).load("test", data_dir))
        pairs = [(row["query"], c) for row in rows for c in row["candidates"]]
        flat = bi_entry.score(pairs)
        bounds = np.cumsum([0] + [len(row["candidates"]) for row in rows])
        scores = [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        labels = [row["labels"] for row in rows]
        # WikiQA repeats some candidate texts within a list; equal texts score equally, and
        # MTEB orders ties otherwise than we do (test_ties_are_where_mteb_and_ours_differ):
        # only those lists may differ, each query's AP by at most 1
        tied = sum(len(set(s.tolist())) < len(s) for s in scores)
        tolerance = tied / len(scores)

        task = reranking_task(benchmark, "test", data_dir)
        theirs = run_task(bi_entry, task, results=tmp_path / "results")
        ours = evaluate(bi_entry, benchmark, data_dir=data_dir)
        assert ours["metrics"]["map"] == pytest.approx(
            evaluate_rankings(scores, labels)["map"], abs=1e-6
        )  # make_record rounds to 6 places
        if not tied:  # MTEB rounds to 5 decimals; without ties the MAPs are the same number
            exact.append(label)
            assert theirs["map"] == round(evaluate_rankings(scores, labels)["map"], 5), label
            assert theirs["map"] == round(trec_order_map(scores, labels), 5), label
        close = {"abs": 1e-5 + tolerance}
        assert theirs["map"] == pytest.approx(ours["metrics"]["map"], **close), label
        assert theirs["mrr"] == pytest.approx(ours["metrics"]["mrr"], **close), label
        assert theirs["ndcg@10"] == pytest.approx(ours["metrics"]["ndcg@10"], **close), label
        check_result_file(theirs["file"], task.metadata.name, theirs["map"])
        assert Path(theirs["file"]).parent.parent.name == "adapter-zoo__tiny-bi"
    assert set(forum_sets) <= set(exact)  # the forum sets have no ties: equal to 5 decimals
    assert {p.stem for p in (tmp_path / "results").rglob("*.json") if "Reranking" in p.stem} == {
        "AdapterZooBeerStackexchangeComLasReranking",
        "AdapterZooBicyclesMetaStackexchangeComLasReranking",
        "AdapterZooWikiqaReranking",
    }


def test_ties_are_where_mteb_and_ours_differ(bi_entry):
    """Duplicated candidate texts get equal scores: MTEB ranks tied candidates by document
    id (descending), we take the expectation over their orders."""
    from benchmarks.mteb_export import run_task, task_from_rows

    rows = [
        {"query": "which glass for a stout", "labels": [1, 0, 0],
         "candidates": ["a tulip glass", "a tulip glass", "true the wheel first"]},
        {"query": "why is my chain noisy", "labels": [1, 0, 0],
         "candidates": ["clean and oil it", "clean and oil it", "a pint glass"]},
    ]  # fmt: skip
    scores = [bi_entry.score([(r["query"], c) for c in r["candidates"]]) for r in rows]
    assert all(s[0] == s[1] for s in scores)  # the duplicates tie exactly
    labels = [r["labels"] for r in rows]
    theirs = run_task(bi_entry, task_from_rows(rows, "AdapterZooTiesReranking"))
    ours = evaluate_rankings(scores, labels)["map"]
    assert theirs["map"] == round(trec_order_map(scores, labels), 5)
    # in each tied pair id "<query>-1" goes first, so both positives ("0-0", "1-0") lose
    # their tie; ours counts each tie as a coin flip
    assert theirs["map"] != round(ours, 5)


def test_command_line_prints_mteb_beside_ours(bi_entry, forum_sets, tmp_path, capsys):
    from benchmarks.mteb_export import main

    bicycles = forum_sets["bicycles.meta.stackexchange.com"]
    assert main(["tiny-bi", bicycles, "--results", str(tmp_path)]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["mteb"]["map"] == round(line["ours"]["map"], 5)
    assert line["queries"] == 13  # bicycles.meta's held-out questions with an accepted answer
    assert Path(line["mteb"]["file"]).is_file()


def test_a_cross_encoder_is_refused(tiny_bert_path):
    from adapter_zoo import Ranker
    from benchmarks.errors import BenchmarkError
    from benchmarks.mteb_export import run_mteb

    ranker = Ranker.from_base(str(tiny_bert_path), device="cpu")
    with pytest.raises(BenchmarkError, match=r"^MTEB runs embedding models: .* is a cross-encoder"):
        run_mteb(ranker, "wikiqa")


def test_bad_command_line_input_is_one_line_and_exit_2(
    bi_entry, forum_sets, tiny_bert_path, tmp_path, capsys, monkeypatch
):
    """Names, paths and model kinds the export cannot use: one line naming what was wrong,
    exit 2, no traceback; an unwritable ``--results`` is refused before any model loads."""
    import benchmarks.mteb_export as export

    bicycles = forum_sets["bicycles.meta.stackexchange.com"]
    prefix = "python -m benchmarks.mteb_export: error: "
    cases = [
        (["tiny-bi", "no-such-benchmark", "--results", str(tmp_path / "r1")], "no-such-benchmark"),
        ([f"base:{tiny_bert_path}", bicycles, "--results", str(tmp_path / "r2")],
         "MTEB runs embedding models"),
    ]  # fmt: skip
    for argv, named in cases:
        assert export.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(prefix) and err.count("\n") == 1 and named in err, err

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(export, "run_mteb", lambda *a, **k: pytest.fail("model loaded first"))
    with pytest.raises(SystemExit) as exit_info:  # the argument's own check (folder_option)
        export.main(["tiny-bi", bicycles, "--results", str(blocker / "results")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == (f"{prefix}argument --results: {blocker / 'results'}: {blocker} is not a folder; "
                   "choose another folder")  # fmt: skip
    assert blocker.read_text() == "not a folder"
    for bad in ("", "a\0b"):
        with pytest.raises(SystemExit) as exit_info:
            export.main(["tiny-bi", bicycles, "--results", bad])
        assert exit_info.value.code == 2
        assert "argument --results" in capsys.readouterr().err


def test_the_export_reports_through_the_command_lines_one_error_path(tmp_path, capsys, monkeypatch):
    """An interrupt or a disk error while MTEB runs is one line, as in adapter-zoo's commands
    (stackexchange.errors.run_reported), not a second copy that forgets a case."""
    import benchmarks.mteb_export as export

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(export, "run_mteb", interrupted)
    assert export.main(["tiny-bi", "wikiqa", "--results", str(tmp_path / "r")]) == 130
    assert capsys.readouterr().err == "python -m benchmarks.mteb_export: interrupted\n"
