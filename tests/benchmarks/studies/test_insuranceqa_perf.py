"""The InsuranceQA perf benchmark's record (benchmarks/studies/insuranceqa.py) on the hand-made
fixture, with the tiny BERT as the bi-encoder: rows, counts and the encode-once count."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.studies.insuranceqa import main

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_the_record_counts_each_distinct_text_once_and_sets_the_published_rows(
    tiny_bert_path, tmp_path
):
    bi = f"sbert:{tiny_bert_path}"
    fused = f"fusion:{bi}*0.9+bm25*0.1"
    out = tmp_path / "insuranceqa.json"
    argv = ["--data-dir", str(FIXTURES), "--models", "bm25", bi, fused, "--out", str(out)]
    assert main([*argv, "--limit", "5", "--note", "a test"]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    # test-1 (4 candidates) and test-3 (3): 2 questions and answers 1-4, 6 distinct texts
    assert (record["queries"], record["pairs"], record["distinct_texts"]) == (2, 7, 6)
    assert record["limit"] == 5 and record["note"] == "a test"
    rows = record["rows"]
    assert list(rows) == ["bm25", bi, fused]
    # the bi-encoder embeds each distinct text once; the fusion reuses its scores
    assert [rows[m]["texts_encoded"] for m in rows] == [0, 6, 0]
    assert all(rows[m]["queries"] == 2 and 0 <= rows[m]["p@1"] <= 1 for m in rows)
    assert rows[bi]["peak_rss_mib"] > 0 and rows[bi]["max_length"] > 0
    assert record["published"][0] == {
        "model": "IR baseline",
        "p@1": 0.249,
        "source": "Rücklé et al. MultiCQA, EMNLP 2020, Table 4 (accuracy = P@1 over the 500 "
        "candidates)",
    }
    assert record["targets"] == {"bi_encoder_minutes": 15} and record["met"]
    assert set(record["load_average"]) == {"before", "after"}


def test_a_limit_keeps_the_first_queries(tmp_path):
    out = tmp_path / "insuranceqa.json"
    main(["--data-dir", str(FIXTURES), "--models", "bm25", "--limit", "1", "--out", str(out)])
    record = json.loads(out.read_text(encoding="utf-8"))
    assert (record["queries"], record["pairs"]) == (1, 4)  # test-1 alone
    assert record["met"] == {"bi_encoder_minutes": False}  # no bi-encoder scored


def test_a_second_run_keeps_the_recorded_rows_and_scores_only_new_models(tmp_path):
    out = tmp_path / "insuranceqa.json"
    argv = ["--data-dir", str(FIXTURES), "--out", str(out)]
    main([*argv, "--models", "bm25", "--note", "first"])
    first = json.loads(out.read_text(encoding="utf-8"))["rows"]["bm25"]
    main([*argv, "--models", "bm25", "tfidf"])
    record = json.loads(out.read_text(encoding="utf-8"))
    assert list(record["rows"]) == ["bm25", "tfidf"]
    assert record["rows"]["bm25"] == first  # not scored again: its date stays
    assert record["note"] == "first"  # kept, until a run's note replaces it
    main([*argv, "--models", "bm25", "--note", "second"])
    assert json.loads(out.read_text(encoding="utf-8"))["note"] == "second"
    record = json.loads(out.read_text(encoding="utf-8"))
    record["load_average"] = {"before": [9.0, 9.0, 9.0], "after": [9.0, 9.0, 9.0]}
    record["machine"] = {**record["machine"], "cpu": "the timed run's chip"}
    out.write_text(json.dumps(record), encoding="utf-8")
    main([*argv, "--models", "bm25"])  # nothing scored: the timed run's load and chip stay
    kept = json.loads(out.read_text(encoding="utf-8"))
    assert (kept["load_average"], kept["machine"]) == (record["load_average"], record["machine"])
    main([*argv, "--models", "bm25", "--limit", "1"])  # another limit: a record of its own
    record = json.loads(out.read_text(encoding="utf-8"))
    assert list(record["rows"]) == ["bm25"] and "note" not in record


def test_the_recorded_run_is_the_registry_s_expected_scores_and_encoded_each_text_once():
    import benchmarks
    from benchmarks.studies.insuranceqa import MODELS, RESULTS

    record = json.loads((RESULTS / "insuranceqa.json").read_text(encoding="utf-8"))
    assert (record["limit"], record["queries"], record["pairs"]) == (None, 1625, 812500)
    expected = benchmarks.get("insuranceqa").expected
    for model in MODELS:
        row = record["rows"][model]
        assert row["queries"] == 1625
        assert expected[(model, "test")] == {m: row[m] for m in ("map", "mrr", "p@1", "ndcg@10")}
    # every distinct question and answer of the split embedded once, the fusion none again
    texts = [record["rows"][model]["texts_encoded"] for model in MODELS]
    assert texts == [0, record["distinct_texts"], 0]


def test_an_alias_or_fusion_entry_takes_its_spec_s_row_and_its_adapt_run_is_recorded(
    tiny_bert_path, tmp_path
):
    from adapter_zoo.adapt.adapt import alias_entry

    bi = f"sbert:{tiny_bert_path}"
    adapt = {"budget": {"minutes": 20.0}, "seconds": 939.9, "decision": {"chosen": "base"},
             "training": {"runs": {"own": {"steps_run": 47}}}, "reason": "base is kept",
             "zoo": {"entries": 2, "similarities": {"beer": 0.2, "ai": 0.1}}}  # fmt: skip
    # adapt by similarity (--strategy route) trains nothing: no budget, its pick and why
    routed = {"strategy": "nearest", "requested": "route", "members": [bi],
              "weights": [1.0], "similarities": {bi: 0.4}, "reason": "nearest forum"}  # fmt: skip
    for name, record in (("kept-base", adapt), ("routed", routed)):
        card = alias_entry(name, bi) / "card.json"
        # the part of an adapt card the record reads (adapt's own cards: tests/adapter_zoo/adapt)
        card.write_text(json.dumps({**json.loads(card.read_text()), "adapt": record}))
    out = tmp_path / "insuranceqa.json"
    argv = ["--data-dir", str(FIXTURES), "--out", str(out), "--limit", "5"]
    # adapt's entry of the base fused with BM25 is a fusion entry: its spec's row
    from adapter_zoo.compose.entry import compose_entry

    fused = f"fusion:{bi}*0.9+bm25*0.1"
    compose_entry("fused-base", fused)
    main([*argv, "--models", bi, fused, "kept-base", "fused-base", "routed"])
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert rows["fused-base"]["same_as"] == fused and rows["fused-base"]["texts_encoded"] == 0
    assert rows["fused-base"]["p@1"] == rows[fused]["p@1"]
    assert rows["kept-base"]["same_as"] == bi
    assert rows["kept-base"]["texts_encoded"] == 0
    assert rows["kept-base"]["map"] == rows[bi]["map"]
    assert rows["kept-base"]["adapt"] == {"budget_minutes": 20.0, "seconds": 939.9,
                                          "training": adapt["training"], "chosen": "base",
                                          "reason": "base is kept",
                                          "zoo_entries": ["ai", "beer"]}  # fmt: skip
    assert rows["routed"]["same_as"] == bi
    assert rows["routed"]["adapt"] == {"strategy": "nearest", "requested": "route",
                                       "members": [bi], "reason": "nearest forum"}  # fmt: skip


def test_int8_rows_stand_beside_fp32_and_rescore_replaces_a_row(tiny_sentence_bert_path, tmp_path):
    bi = f"sbert:{tiny_sentence_bert_path}"
    out = tmp_path / "insuranceqa.json"
    argv = ["--data-dir", str(FIXTURES), "--out", str(out), "--limit", "5", "--models", bi]
    main(argv)
    first = json.loads(out.read_text(encoding="utf-8"))["rows"][bi]
    main([*argv, "--precision", "int8"])
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert list(rows) == [bi, f"{bi} [int8]"]
    assert rows[f"{bi} [int8]"]["precision"] == "int8" and rows[bi] == first
    record = json.loads(out.read_text(encoding="utf-8"))
    record["rows"][bi]["seconds"] = -1.0  # marks the recorded row: --rescore replaces it
    out.write_text(json.dumps(record), encoding="utf-8")
    main([*argv, "--rescore"])
    again = json.loads(out.read_text(encoding="utf-8"))["rows"][bi]
    assert again["seconds"] >= 0 and again["map"] == first["map"]
    assert again["texts_encoded"] == 6
