"""Scoring a BEIR folder: each kind of model's run over the corpus, its metrics against
pytrec_eval, the records and the leaderboard."""

from __future__ import annotations

import json

import numpy as np
import pytest
import pytrec_eval

import adapter_zoo
import benchmarks
import benchmarks.retrieval as retrieval
from adapter_zoo.metrics import RETRIEVAL_METRICS
from benchmarks import BenchmarkError
from benchmarks.leaderboard.table import build_table
from benchmarks.results import read_results


@pytest.fixture
def beir(fixtures) -> str:
    return f"beir:{fixtures / 'beir'}"


def trec(run, qrels) -> dict:
    """pytrec_eval's means over the judged queries; MRR@10 as recip_rank of the top 10."""
    measures = {"ndcg@10": "ndcg_cut_10", "map": "map", "recall@100": "recall_100"}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures.values())).evaluate(run)
    top10 = {q: dict(sorted(h.items(), key=lambda x: -x[1])[:10]) for q, h in run.items()}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    means = {m: np.mean([per_query.get(q, {}).get(t, 0.0) for q in qrels])
             for m, t in measures.items()}  # fmt: skip
    means["mrr@10"] = np.mean([rr.get(q, {}).get("recip_rank", 0.0) for q in qrels])
    return means


def test_bm25_retrieves_over_the_corpus_and_scores_as_trec_eval(beir):
    record = benchmarks.evaluate("bm25", beir)
    data = benchmarks.get(beir).retrieval_data("test")
    run = retrieval.lexical_run("bm25", data)
    assert max(run["q1"], key=run["q1"].get) == "d1"
    assert max(run["q2"], key=run["q2"].get) == "d4"
    assert "8" not in run["q2"]  # no query term: not retrieved
    expected = trec(run, data.qrels)
    assert set(record["metrics"]) == set(RETRIEVAL_METRICS)
    for name in RETRIEVAL_METRICS:
        assert record["metrics"][name] == pytest.approx(expected[name], abs=1e-6), name
    assert record["benchmark"] == benchmarks.get(beir).key and record["benchmark_name"] == "beir"
    assert (record["main_metric"], record["no_positive"]) == ("ndcg@10", "zero")
    assert (record["queries"], record["queries_without_positive"]) == (4, 1)
    assert (record["retrieval"], record["documents"]) == ("corpus", 8)
    # q4 has no relevant document: it counts 0, so no metric reaches 3/4 of the mean
    assert record["metrics"]["recall@100"] == pytest.approx(0.75)


def test_a_query_in_the_corpus_does_not_retrieve_itself(tmp_path):
    folder = tmp_path / "args"
    (folder / "qrels").mkdir(parents=True)
    point = "School uniforms stop bullying over clothes"
    counter = "Bullies find other targets; uniforms do not stop bullying"
    other = "Homework should be banned in primary schools"
    corpus = [{"_id": "p1", "text": point}, {"_id": "c1", "text": counter},
              {"_id": "x", "text": other}]  # fmt: skip
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "p1", "text": point}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\np1\tc1\t1\n")
    data = benchmarks.get(f"beir:{folder}").retrieval_data("test")
    run = retrieval.lexical_run("bm25", data)
    assert set(run["p1"]) == {"c1"}  # its own text left out, "x" shares no term
    record = benchmarks.evaluate("bm25", f"beir:{folder}")
    assert record["metrics"] == {"ndcg@10": 1.0, "map": 1.0, "mrr@10": 1.0, "recall@100": 1.0}


def test_a_bi_encoder_embeds_the_corpus_once_and_searches_it(beir, tiny_sentence_bert_path):
    model = f"sbert:{tiny_sentence_bert_path}"
    record = benchmarks.evaluate(model, beir)
    assert record["retrieval"] == "corpus"
    data = benchmarks.get(beir).retrieval_data("test")
    encoder = adapter_zoo.load(model)
    run = retrieval.dense_run(encoder, data)
    documents = encoder.encode(list(data.corpus_texts))
    cosines = encoder.encode(list(data.queries.values())) @ documents.T
    for query, row in zip(data.queries, cosines):
        assert list(run[query]) == [data.corpus_ids[i] for i in np.argsort(-row, kind="stable")]
        assert list(run[query].values()) == pytest.approx(sorted(row, reverse=True), abs=1e-5)
    expected = trec(run, data.qrels)
    for name in RETRIEVAL_METRICS:
        assert record["metrics"][name] == pytest.approx(expected[name], abs=1e-6), name


def test_a_fusion_reranks_the_union_of_bm25s_and_the_bases_top(
    beir, tiny_sentence_bert_path, monkeypatch
):
    base = f"sbert:{tiny_sentence_bert_path}"
    monkeypatch.setattr(retrieval, "POOL_BASE", base)
    monkeypatch.setattr(retrieval, "POOL_DEPTH", 2)
    data = benchmarks.get(beir).retrieval_data("test")
    fusion = adapter_zoo.load(f"fusion:{base}+bm25*0.5")
    run, about = retrieval.retrieval_run(fusion, data, load_base=adapter_zoo.load)
    assert about == {"retrieval": "rerank", "documents": 8,
                     "pool": f"the union of bm25's and {base}'s top 2 per query"}  # fmt: skip
    lexical = retrieval.lexical_run("bm25", data, 2)
    dense = retrieval.dense_run(adapter_zoo.load(base), data, 2)
    text_of = dict(zip(data.corpus_ids, data.corpus_texts))
    for query, hits in run.items():
        assert list(hits) == list(dict.fromkeys([*lexical[query], *dense[query]]))
        pairs = [(data.queries[query], text_of[d]) for d in hits]
        assert list(hits.values()) == pytest.approx(fusion.score(pairs).tolist(), abs=1e-6)
    # through evaluate, beside the models it fuses, recorded with its pool; the pool takes
    # BM25's and the base's runs of the rows before it, retrieving neither again
    calls = []
    for name in ("lexical_run", "dense_run"):
        original = getattr(retrieval, name)
        monkeypatch.setattr(retrieval, name, lambda *a, _f=original, _n=name, **k:
                            calls.append(_n) or _f(*a, **k))  # fmt: skip
    records = benchmarks.evaluate_models(["bm25", base, f"fusion:{base}+bm25*0.5"], beir)
    assert [r["retrieval"] for r in records] == ["corpus", "corpus", "rerank"]
    assert records[2]["pool"] == about["pool"] and calls == ["lexical_run", "dense_run"]
    alone = benchmarks.evaluate(f"fusion:{base}+bm25*0.5", beir)
    assert alone["metrics"] == records[2]["metrics"]


def test_a_cross_encoder_reranks_the_pool(beir, tiny_bert_path, tiny_sentence_bert_path,
                                          monkeypatch):  # fmt: skip
    monkeypatch.setattr(retrieval, "POOL_BASE", f"sbert:{tiny_sentence_bert_path}")
    record = benchmarks.evaluate(f"base:{tiny_bert_path}", beir)
    assert record["retrieval"] == "rerank" and record["queries"] == 4
    assert set(record["metrics"]) == set(RETRIEVAL_METRICS)


def test_finetune_is_refused_before_any_work(beir, tiny_bert_path):
    with pytest.raises(BenchmarkError, match="a retrieval benchmark has none"):
        benchmarks.evaluate(str(tiny_bert_path), beir, finetune="adapter")


def test_records_go_to_the_leaderboard_as_any_benchmark(beir, tmp_path):
    results = tmp_path / "results"
    benchmarks.evaluate_models(["bm25", "tfidf"], beir, results=results)
    records = read_results(results)
    assert [r["model"] for r in records] == ["bm25", "tfidf"]
    table = build_table(records)
    assert table.columns[:2] == ["beir (test, ndcg@10)", "beir (test, map)"]
    cells = {row.label: [c.value for c in row.cells[:2]] for row in table.rows}
    assert cells["bm25"] == [records[0]["metrics"]["ndcg@10"], records[0]["metrics"]["map"]]
