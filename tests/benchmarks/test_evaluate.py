"""The harness: models, records, the results file, the CLI, fine-tuning and the leaderboard."""

from __future__ import annotations

import json

import numpy as np
import pytest

import adapter_zoo
import benchmarks
from adapter_zoo.biencoder.encoder import BiEncoder
from adapter_zoo.cli import main
from adapter_zoo.errors import ZooError
from adapter_zoo.metrics import evaluate_rankings
from benchmarks import BenchmarkError
from benchmarks.baselines import bm25_scores, tfidf_scores


def test_bm25_record_matches_the_metrics_and_is_appended(fixtures, tmp_path):
    record = benchmarks.evaluate("bm25", "wikiqa-raw", data_dir=fixtures, results=tmp_path)
    dataset = benchmarks.get("wikiqa-raw").load("test", data_dir=fixtures)
    expected = evaluate_rankings(bm25_scores(dataset), dataset["labels"])
    assert record["metrics"] == {m: round(expected[m], 6) for m in ("map", "mrr", "p@1", "ndcg@10")}
    assert (record["benchmark"], record["split"], record["model"], record["mode"]) == (
        "wikiqa-raw", "test", "bm25", "zero-shot")  # fmt: skip
    assert record["queries"] == 2 and record["queries_without_positive"] == 1  # Q0 dropped
    assert record["versions"]["bm25s"] == "0.3.16" and record["wall_time_s"] >= 0
    benchmarks.evaluate("tfidf", "wikiqa-raw", data_dir=fixtures, results=tmp_path, seed=3)
    records = benchmarks.read_results(tmp_path)
    assert [r["model"] for r in records] == ["bm25", "tfidf"] and records[0] == record
    assert records[1]["seed"] == 3


def test_bm25_ranks_the_lexical_match_first():
    rows = {"query": ["how to age stout"],
            "candidates": [["bikes have gears", "age a stout in the cellar", "stout"]]}  # fmt: skip
    assert int(np.argmax(bm25_scores(rows)[0])) == 1
    assert int(np.argmax(tfidf_scores(rows)[0])) in (1, 2)
    corpus = bm25_scores(rows, "corpus")[0]
    assert corpus.shape == (3,) and int(np.argmax(corpus)) == 1


def test_read_results_reports_the_bad_line(tmp_path):
    good = ('{"benchmark": "wikiqa", "split": "test", "model": "bm25", "mode": "zero-shot", '
            '"metrics": {"map": 0.5}}')  # fmt: skip
    (tmp_path / "results.jsonl").write_text(f"{good}\nnot json\n")
    with pytest.raises(BenchmarkError, match=r"results.jsonl:2: not a JSON record"):
        benchmarks.read_results(tmp_path)
    with pytest.raises(BenchmarkError, match="no results file"):
        benchmarks.read_results(tmp_path / "empty")


def test_base_and_sbert_models(fixtures, tiny_bert_path):
    base = benchmarks.evaluate(f"base:{tiny_bert_path}", "wikiqa-raw", data_dir=fixtures)
    again = benchmarks.evaluate(f"base:{tiny_bert_path}", "wikiqa-raw", data_dir=fixtures)
    assert base["metrics"] == again["metrics"]  # the fresh head is seeded
    assert base["model"] == f"base:{tiny_bert_path}"
    sbert = benchmarks.evaluate(f"sbert:{tiny_bert_path}", "wikiqa-raw", data_dir=fixtures)
    assert sbert["queries"] == 2 and 0 < sbert["metrics"]["map"] <= 1


def test_composition_specs_and_entries_are_models(fixtures, tmp_path):
    from adapter_zoo.compose import compose_entry

    bm25 = benchmarks.evaluate("bm25", "wikiqa-raw", data_dir=fixtures)
    # every candidate reranked by BM25 over the same list: BM25's own ranking
    spec = "rerank:bm25>bm25@1000"
    rerank = benchmarks.evaluate(spec, "wikiqa-raw", data_dir=fixtures, results=tmp_path)
    assert rerank["model"] == spec and rerank["metrics"] == bm25["metrics"]
    assert benchmarks.read_results(tmp_path)[0]["model"] == spec
    compose_entry("bm25-rr", spec)
    entry = benchmarks.evaluate("bm25-rr", "wikiqa-raw", data_dir=fixtures)
    assert entry["model"] == "bm25-rr" and entry["metrics"] == bm25["metrics"]
    # z-scores of two identical rankings, summed: the same ranking again
    fused = benchmarks.evaluate("fusion:bm25+bm25-rr*0.5", "wikiqa-raw", data_dir=fixtures)
    assert fused["model"] == "fusion:bm25+bm25-rr*0.5" and fused["metrics"] == bm25["metrics"]
    with pytest.raises(BenchmarkError) as error:
        benchmarks.evaluate("fusion:bm25", "wikiqa-raw", data_dir=fixtures)
    assert str(error.value) == (
        "model 'fusion:bm25': not bm25, tfidf, sbert:<base>, base:<base>, a loadable zoo entry "
        "or fusion:/rerank:/prf: spec (model spec 'fusion:bm25': fusion needs at least two members "
        "(A+B))"
    )


def test_a_feedback_spec_is_a_model(fixtures, tiny_sentence_bert_path):
    base = f"sbert:{tiny_sentence_bert_path}"
    records = benchmarks.evaluate_models([base, f"prf:{base}@k=2,w=0.5", f"prf:{base}@w=0"],
                                         "wikiqa-raw", data_dir=fixtures)  # fmt: skip
    assert [r["model"] for r in records] == [base, f"prf:{base}@k=2,w=0.5", f"prf:{base}@w=0"]
    # no feedback: the encoder's own ranking
    assert records[2]["metrics"] == records[0]["metrics"]
    assert all(0 < r["metrics"]["map"] <= 1 for r in records)


def test_several_models_score_each_once_and_a_fusion_reuses_its_members(
    fixtures, tiny_sentence_bert_path, tmp_path, monkeypatch
):
    sbert = f"sbert:{tiny_sentence_bert_path}"
    fusion = f"fusion:{sbert}+bm25*0.5"
    alone = [
        benchmarks.evaluate(m, "wikiqa-raw", data_dir=fixtures) for m in (sbert, "bm25", fusion)
    ]
    encoded = []
    real_score = BiEncoder.score

    def counted_score(self, pairs, **kwargs):
        encoded.append(len(pairs))
        return real_score(self, pairs, **kwargs)

    monkeypatch.setattr(BiEncoder, "score", counted_score)
    together = benchmarks.evaluate_models(
        [sbert, "bm25", fusion], "wikiqa-raw", data_dir=fixtures, results=tmp_path
    )
    # the same records (bit-identical metrics), the bi-encoder run once: the fusion took its scores
    assert [r["metrics"] for r in together] == [r["metrics"] for r in alone]
    assert [r["model"] for r in together] == [sbert, "bm25", fusion] and len(encoded) == 1
    assert [r["model"] for r in benchmarks.read_results(tmp_path)] == [sbert, "bm25", fusion]


class _Encoder:
    """A member that scores every pair by its candidate's length, at a token limit."""

    precision = "fp32"

    def __init__(self, max_length):
        self.max_length = max_length

    def score(self, pairs, *, batch_size=64, progress=False):
        return np.array([float(len(c)) for _, c in pairs])


def test_a_fusion_member_at_another_setting_keeps_scoring_itself(fixtures):
    from adapter_zoo.compose import BM25Scorer, ScoreFusion
    from benchmarks.evaluate import ScoredModels

    dataset = benchmarks.get("wikiqa-raw").load("test", data_dir=fixtures)
    pairs = [(q, c) for q, cs in zip(dataset["query"], dataset["candidates"]) for c in cs]
    scored = ScoredModels()
    scored.remember("enc", _Encoder(8), dataset, [np.ones(len(c)) for c in dataset["candidates"]])
    member = _Encoder(256)
    fusion = ScoreFusion([member, BM25Scorer()], [1.0, 0.5], ["enc", "bm25"])
    assert scored.lend_to(fusion) == [] and fusion.members[0] is member
    member.max_length = 8  # the same setting: the recorded scores, for those pairs only
    assert scored.lend_to(fusion) == ["enc"]
    assert fusion.members[0].score(pairs).tolist() == [1.0] * len(pairs)
    assert fusion.members[0].score(pairs[:2]).tolist() == member.score(pairs[:2]).tolist()


def test_several_models_refuse_one_model_options_and_repeats(fixtures, tmp_path, capsys):
    with pytest.raises(BenchmarkError) as error:
        benchmarks.evaluate_models(["bm25", "tfidf"], "wikiqa-raw", finetune="full")
    assert str(error.value) == "--finetune takes one --model; got 2"
    with pytest.raises(ZooError, match="'bm25' is named twice"):
        benchmarks.evaluate_models(["bm25", "tfidf", "bm25"], "wikiqa-raw", data_dir=fixtures)
    argv = ["evaluate", "--model", "bm25", "tfidf", "--benchmark", "wikiqa-raw",
            "--data-dir", str(fixtures), "--results", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in printed] == ["bm25", "tfidf"]
    assert [r["model"] for r in benchmarks.read_results(tmp_path)] == ["bm25", "tfidf"]
    assert main([*argv, "--adapter", "x"]) == 2
    assert "--adapter takes one --model; got 2" in capsys.readouterr().err


def test_unknown_model_and_bad_combinations(fixtures):
    with pytest.raises(BenchmarkError, match=r"model 'no-such-model': not bm25, tfidf"):
        benchmarks.evaluate("no-such-model", "wikiqa-raw", data_dir=fixtures)
    with pytest.raises(BenchmarkError, match="is a baseline; adapters need a base model"):
        benchmarks.evaluate("bm25", "wikiqa-raw", data_dir=fixtures, adapters=["x"])
    with pytest.raises(BenchmarkError, match="--finetune needs a base model"):
        benchmarks.evaluate("bm25", "wikiqa-raw", data_dir=fixtures, finetune="full")
    with pytest.raises(BenchmarkError, match="--transfer is only used with --finetune tanda"):
        benchmarks.evaluate("minilm-l6", "wikiqa-raw", data_dir=fixtures, transfer="x")


def test_cli_evaluate_build_and_errors(fixtures, tiny_forum, tmp_path, capsys):
    bench = tmp_path / "bench"
    assert main(["build-benchmark", str(tiny_forum), "--out", str(bench)]) == 0
    assert "train 5, dev 1, test 2" in capsys.readouterr().out
    results = tmp_path / "results"
    argv = ["evaluate", "--model", "bm25", "--benchmark", f"local:{bench}", "--results",
            str(results)]  # fmt: skip
    assert main(argv) == 0
    (record,) = benchmarks.read_results(results)
    assert record["benchmark"] == f"local:{bench}"
    assert record["benchmark_name"] == "tiny.stackexchange.com-las"
    assert record["main_metric"] == "p@1" and record["queries"] == 2
    assert main(["evaluate", "--model", "bm25", "--benchmark", "nope"]) == 2
    assert "adapter-zoo evaluate: error: unknown benchmark 'nope'" in capsys.readouterr().err


@pytest.mark.integration
def test_finetune_adapter_then_leaderboard(tiny_forum, tiny_bert_path, tmp_path):
    bench = benchmarks.build_from_forum(tiny_forum, tmp_path / "bench")
    results = tmp_path / "results"
    name = f"local:{bench}"
    tuned = benchmarks.evaluate(str(tiny_bert_path), name, finetune="adapter", max_steps=2,
                                results=results)  # fmt: skip
    assert tuned["mode"] == "finetune-adapter" and tuned["queries"] == 2
    entry = benchmarks.get(name).name + f"-adapter-{tiny_bert_path.name}-s0"
    folder = adapter_zoo.zoo_home() / entry
    created = json.loads((folder / "card.json").read_text())["created"]
    assert not (adapter_zoo.zoo_home() / ".finetune").exists() or not any(
        (adapter_zoo.zoo_home() / ".finetune").iterdir()
    )  # its copy of the benchmark's pairs is gone
    # the same command again (as after a kill once its entry was in place) finds it made
    again = benchmarks.evaluate(str(tiny_bert_path), name, finetune="adapter", max_steps=2)
    assert again["metrics"] == tuned["metrics"]
    assert json.loads((folder / "card.json").read_text())["created"] == created
    zoo = benchmarks.evaluate(entry, name, results=results)  # the trained entry stays in the zoo
    assert zoo["metrics"] == tuned["metrics"]
    # the same adapter on top of its base model, through --adapter (evaluate_each: one run per adapter)
    swept = benchmarks.evaluate_each(str(tiny_bert_path), name, [entry])
    assert [r["adapters"] for r in swept] == [[entry]]
    assert all(r["metrics"] == tuned["metrics"] for r in swept)
    with pytest.raises(ValueError, match="was made for base model"):
        benchmarks.evaluate("minilm-l6", name, adapters=[entry])
    benchmarks.evaluate("bm25", name, results=results)
    assert main(["leaderboard", str(results), "--out", str(tmp_path / "board")]) == 0
    board = tmp_path / "board"
    markdown = (board / "leaderboard.md").read_text()
    header = markdown.splitlines()[2]
    assert "tiny.stackexchange.com-las (test, p@1)" in header and "Σ map" in header
    rows = {line.split(" | ")[0].strip("| "): line for line in markdown.splitlines()[4:]
            if line.startswith("|")}  # fmt: skip
    assert set(rows) == {"bm25", entry, f"{tiny_bert_path.name} (finetune-adapter)"}
    assert f"{100 * tuned['metrics']['p@1']:.1f}" in rows[entry]
    html = (board / "leaderboard.html").read_text()
    assert html.count("<tr") == 4 and html.count('<img src="data:image/png;base64,') == 2
    assert (board / "zero_shot.png").read_bytes()[:4] == b"\x89PNG"
    assert (board / "models.png").read_bytes()[:4] == b"\x89PNG"


def test_finetune_save_as_refuses_an_existing_entry_without_overwrite(
    tiny_forum, tiny_bert_path, tmp_path, capsys
):
    from adapter_zoo.zoo.store import read_card, save_entry

    bench = benchmarks.build_from_forum(tiny_forum, tmp_path / "bench")
    mine = save_entry(
        lambda folder: (folder / "adapter.safetensors").write_bytes(b"weeks of training"),
        "mine", {"mode": "adapter", "base_model": "bert-base"},
    )  # fmt: skip
    before = {p.name: p.read_bytes() for p in mine.iterdir()}
    capsys.readouterr()  # the build's progress bars
    argv = ["evaluate", "--model", str(tiny_bert_path), "--benchmark", f"local:{bench}",
            "--finetune", "adapter", "--save-as", "mine", "--max-steps", "1"]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo evaluate: error: zoo entry 'mine' already exists at {mine}; pass "
        "--overwrite to replace it, or --save-as another name\n"
    )
    assert {p.name: p.read_bytes() for p in mine.iterdir()} == before
    assert main([*argv, "--overwrite"]) == 0
    assert read_card(mine)["base_model"] == str(tiny_bert_path)


def test_leaderboard_published_rows_and_fusion_plot(tmp_path):
    from benchmarks.results import append_result

    base = {"split": "test", "adapters": [], "mode": "zero-shot", "main_metric": "map",
            "metrics": {"map": 0.5, "mrr": 0.6, "p@1": 0.4, "ndcg@10": 0.55}}  # fmt: skip
    append_result(tmp_path, {**base, "benchmark": "wikiqa", "model": "bm25"})
    weights = {"0": {"beer": 0.7, "travel": 0.3}, "1": {"beer": 0.2, "travel": 0.8}}
    append_result(tmp_path, {**base, "benchmark": "wikiqa", "model": "fused",
                             "fusion_weights": weights})  # fmt: skip
    append_result(tmp_path, {**base, "benchmark": "trecqa", "model": "fused"})
    # the results file: a board inside the results folder it reads is refused
    written = benchmarks.write_leaderboard(tmp_path / "results.jsonl", tmp_path / "board")
    assert sorted(p.name for p in written) == ["fusion_fused.png", "leaderboard.html",
                                               "leaderboard.md", "models.png",
                                               "zero_shot.png"]  # fmt: skip
    lines = (tmp_path / "board" / "leaderboard.md").read_text().splitlines()
    fused = next(line for line in lines if line.startswith("| fused"))
    # best of each column in bold (a tie: both); bm25's Σ over one set does not compete
    assert (
        fused
        == "| fused | **50.0** | **50.0** | **50.0** | **60.0** | **40.0** | **55.0** | ours |"
    )
    bm25 = next(line for line in lines if line.startswith("| bm25"))
    assert "50.0 (1/2)" in bm25  # Σ over one of two benchmarks says so
    published = [line for line in lines if line.endswith("| published |")]
    assert any(line.startswith("| tanda-bert-base [Garg") and "| 89.3 |" in line
               for line in published)  # fmt: skip


def test_leaderboard_semeval_columns_beside_the_challenge_references(tmp_path):
    """Both SemEval years: 2017 titled bodies only in the table, each year's published
    references (IR baseline, the challenge's best system, MultiCQA) as published rows."""
    from benchmarks.leaderboard import build_table, to_markdown
    from benchmarks.results import append_result

    for benchmark, value in (("semeval2016", 0.751), ("semeval2017", 0.4963)):
        append_result(tmp_path, {"benchmark": benchmark, "split": "test", "adapters": [],
                                 "mode": "zero-shot", "model": "sbert:minilm-l6",
                                 "metrics": {"map": value}})  # fmt: skip
    table = build_table(benchmarks.read_results(tmp_path))
    assert table.columns == ["semeval2016 (test, map)",
                             "semeval2017 bodies only (derived test text) (test, map)",
                             "Σ map"]  # fmt: skip
    rows = {row.label.split(" [")[0] + (" 2017" if "2017" in row.label else ""): row
            for row in table.rows}  # fmt: skip
    cells = {label: [c.text for c in row.cells] for label, row in rows.items()}
    assert cells["sbert:minilm-l6"] == ["75.1", "49.6", "62.4"]
    assert cells["best system of the challenge"] == ["76.7", "–", "–"]
    assert cells["best system of the challenge (SimBow) 2017"] == ["–", "47.2", "–"]
    assert cells["ir-baseline"][0] == "74.8" and cells["ir-baseline 2017"][1] == "41.9"
    assert cells["multicqa best zero-shot (RoBERTa-large, 140 forums) 2017"][1] == "51.1"
    assert {rows[k].role for k in cells if k != "sbert:minilm-l6"} == {"published"}
    assert "semeval2017 bodies only (derived test text) (test, map)" in to_markdown(table)


@pytest.mark.integration
def test_finetune_full_then_tanda_from_the_transfer_entry(tiny_forum, tiny_bert_path, tmp_path):
    import adapter_zoo

    bench = f"local:{benchmarks.build_from_forum(tiny_forum, tmp_path / 'bench')}"
    full = benchmarks.evaluate(str(tiny_bert_path), bench, finetune="full", max_steps=1)
    transfer = benchmarks.get(bench).name + f"-full-{tiny_bert_path.name}-s0"
    assert full["mode"] == "finetune-full"
    assert adapter_zoo.load(transfer).card["mode"] == "full"
    tanda = benchmarks.evaluate(str(tiny_bert_path), bench, finetune="tanda", transfer=transfer,
                                max_steps=1)  # fmt: skip
    assert (tanda["mode"], tanda["transfer"]) == ("finetune-tanda", transfer)
    card = adapter_zoo.load(benchmarks.get(bench).name + f"-tanda-{transfer}-s0").card
    assert card["base_model"].endswith(f"{transfer}/model")  # adapted from the transfer weights
    assert card["training"]["lr"] == 2e-6


def test_results_writer_refuses_nan_and_keeps_the_file(tmp_path):
    from benchmarks.results import append_result

    good = {"benchmark": "wikiqa", "model": "bm25", "metrics": {"map": 0.5}}
    append_result(tmp_path, good)
    before = (tmp_path / "results.jsonl").read_bytes()
    bad = {"benchmark": "wikiqa", "model": "m", "metrics": {"map": float("nan"), "mrr": 0.1},
           "fusion_weights": [0.5, float("inf")]}  # fmt: skip
    with pytest.raises(BenchmarkError) as error:
        append_result(tmp_path, bad)
    assert str(error.value) == (
        f"{tmp_path / 'results.jsonl'}: not written: the record of 'm' on 'wikiqa' has "
        "non-finite values (metrics.map, fusion_weights.1)"
    )
    assert (tmp_path / "results.jsonl").read_bytes() == before


def test_a_model_on_a_set_built_from_its_own_forum_is_in_domain(
    tiny_forum, tiny_bert_path, tmp_path
):
    """The setting label: in-domain for a zoo model trained on the forum a built set comes
    from (its test questions are held out of that training), zero-shot elsewhere."""
    from adapter_zoo.ranker.model import add_ranking_head, build_model
    from adapter_zoo.zoo import save_entry

    model, _ = build_model(str(tiny_bert_path))
    model.add_adapter("a", config="seq_bn")
    add_ranking_head(model, "a")
    for name, forum in (("home", tiny_forum.name), ("away", "beer.stackexchange.com")):
        card = {"mode": "adapter", "base_model": str(tiny_bert_path), "forums": [forum]}
        save_entry(lambda out: model.save_adapter(str(out), "a", with_head=True), name, card)
    bench = f"local:{benchmarks.build_from_forum(tiny_forum, tmp_path / 'bench')}"
    assert benchmarks.evaluate("home", bench)["mode"] == "in-domain"
    assert benchmarks.evaluate("away", bench)["mode"] == "zero-shot"
    assert benchmarks.evaluate("bm25", bench)["mode"] == "zero-shot"


def test_leaderboard_kinds_map_columns_and_best_first(tmp_path):
    from benchmarks.leaderboard import build_table
    from benchmarks.results import append_result, read_results

    base = {"split": "test", "adapters": [], "main_metric": "p@1", "benchmark": "local:/b",
            "benchmark_name": "beer-las"}  # fmt: skip
    for model, mode, p1, map_ in (
        ("bm25", "zero-shot", 0.3, 0.4),
        ("sbert:minilm-l6", "zero-shot", 0.5, 0.6),
        ("beer", "in-domain", 0.7, 0.8),
        ("travel", "zero-shot", 0.2, 0.3),
    ):
        metrics = {"map": map_, "mrr": map_, "p@1": p1, "ndcg@10": map_}
        append_result(tmp_path, {**base, "model": model, "mode": mode, "metrics": metrics})
    table = build_table(read_results(tmp_path))
    assert table.header[:3] == ["model", "beer-las (test, p@1)", "beer-las (test, map)"]
    # one row per model: the in-domain setting marks the cells, not a second row
    assert [(row[0], row[1], row[2], row[-1]) for row in table.text_rows()] == [
        ("beer", "70.0†", "80.0†", "ours"),
        ("sbert:minilm-l6", "50.0", "60.0", "peer"),
        ("bm25", "30.0", "40.0", "baseline"),
        ("travel", "20.0", "30.0", "ours"),
    ]


@pytest.mark.parametrize("adapters", [1, 30])
def test_figure_2_is_readable_at_any_number_of_adapters(adapters):
    """The zero-shot figure's metric axis starts at 0 and holds every score and line, each
    adapter is a named bar, and the legend sits below the panel, not over the data."""
    from benchmarks.leaderboard import zero_shot_figure

    metrics = {"map": 0.0, "mrr": 0.0, "p@1": 0.0, "ndcg@10": 0.0}
    records = [
        {"benchmark": "wikiqa", "split": "test", "model": f"forum-{i}", "adapters": [],
         "mode": "zero-shot", "main_metric": "map", "metrics": {**metrics, "map": 0.6 + i / 100}}
        for i in range(adapters)
    ]  # fmt: skip
    records.append({**records[0], "model": "bm25", "metrics": {**metrics, "map": 0.7}})
    figure = zero_shot_figure(records)
    [axis] = figure.axes
    low, high = axis.get_ylim()
    assert low == 0 and high >= max(0.7, 0.6 + (adapters - 1) / 100)
    assert [t.get_text() for t in axis.get_xticklabels()] == [f"forum-{i}" for i in range(adapters)]
    figure.canvas.draw()
    [legend] = figure.legends
    assert legend.get_window_extent().y1 <= axis.get_window_extent().y0


def test_a_benchmark_folder_holds_its_dev_lists_positive_first(fixtures, tmp_path):
    import datasets

    from adapter_zoo.training.selection import forum_dev_lists

    folder = benchmarks.to_parse_folder(benchmarks.get("wikiqa-raw"), tmp_path, fixtures)
    lists = datasets.load_from_disk(str(folder / "dev_lists")).to_list()
    # Q8: one positive (D8-1) against its one negative (D8-0)
    expected = [{"query": "how big is bmc software in houston, tx",
                 "candidates": ["Employing over 6,000 , BMC is headquartered in Houston .",
                                "BMC Software, Inc. is an American company ."]}]  # fmt: skip
    assert lists == expected
    # training selects on them as they are (no forum questions to build lists from)
    assert forum_dev_lists(tmp_path, [folder.name]) == [
        (r["query"], r["candidates"]) for r in expected
    ]


def test_a_long_dev_pool_selects_on_its_first_negatives():
    from adapter_zoo.training.selection import DEV_CANDIDATES
    from benchmarks.finetune import _dev_lists

    # an InsuranceQA-like pool: 500 candidates in the retriever's order, answers at 3 and 40
    candidates = [f"answer {i}" for i in range(500)]
    labels = [int(i in (3, 40)) for i in range(500)]
    row = {"query": "is my roof covered?", "candidates": candidates, "labels": labels}
    lists = _dev_lists([row])
    negatives = [c for c, label in zip(candidates, labels) if not label][: DEV_CANDIDATES - 1]
    assert lists == {
        "query": [row["query"]] * 2,
        "candidates": [["answer 3", *negatives], ["answer 40", *negatives]],
    }
    assert negatives[-1] == "answer 19"  # 0-19 but the answer at 3


@pytest.mark.integration
def test_finetune_a_bi_encoder_then_tanda_continues_its_adapter(
    tiny_forum, tiny_sentence_bert_path, tmp_path
):
    import adapter_zoo

    bench = f"local:{benchmarks.build_from_forum(tiny_forum, tmp_path / 'bench')}"
    base = str(tiny_sentence_bert_path)
    benchmarks.evaluate(base, bench, finetune="adapter", max_steps=2, save_as="bench-bi")
    card = adapter_zoo.load("bench-bi").card
    dev = benchmarks.get(bench).load("dev")
    positives = sum(sum(label > 0 for label in labels) for labels in dev["labels"])
    # a sentence-encoder base trains a bi-encoder, selected on the benchmark's own dev lists
    assert (card["encoder"], card["mode"], card["training"]["dev_lists"]) == (
        "bi", "adapter", positives)  # fmt: skip
    tanda = benchmarks.evaluate(base, bench, finetune="tanda", transfer="bench-bi", max_steps=2)
    continued = adapter_zoo.load(tanda["entry"]).card
    assert (continued["mode"], continued["encoder"]) == ("adapter", "bi")
    assert continued["init_from"]["entry"] == "bench-bi" and tanda["transfer"] == "bench-bi"
    start = continued["training"]["log"][0]
    assert start["phase"] == "start" and start["dev_map"] == card["scores"]["dev_map"]
    with pytest.raises(BenchmarkError, match=r"--transfer 'bench-bi' is a bi-encoder adapter; "
                                             r"--encoder cross cannot continue it"):  # fmt: skip
        benchmarks.evaluate(base, bench, finetune="tanda", transfer="bench-bi", encoder="cross",
                            save_as="other")  # fmt: skip


@pytest.mark.integration
def test_cross_encoder_fine_tuning_selects_on_the_benchmark_dev_lists(
    tiny_forum, tiny_bert_path, tmp_path
):
    import adapter_zoo
    from adapter_zoo.training.selection import dev_metrics, forum_dev_lists

    bench = benchmarks.get(f"local:{benchmarks.build_from_forum(tiny_forum, tmp_path / 'b')}")
    record = benchmarks.evaluate(str(tiny_bert_path), bench, finetune="adapter", max_steps=2)
    card = adapter_zoo.load(record["entry"]).card
    assert card["encoder"] == "cross"
    folder = benchmarks.to_parse_folder(bench, tmp_path / "lists")
    lists = forum_dev_lists(folder.parent, [folder.name])
    assert len(lists) == sum(sum(label > 0 for label in row) for row in bench.load("dev")["labels"])
    assert (
        card["scores"]["dev_map"]
        == dev_metrics(adapter_zoo.load(record["entry"]), lists)["dev_map"]
    )


def test_max_length_reaches_the_zero_shot_bi_encoder(fixtures, tiny_sentence_bert_path):
    from adapter_zoo import BiEncoder

    model = f"sbert:{tiny_sentence_bert_path}"
    short = benchmarks.evaluate(model, "wikiqa-raw", data_dir=fixtures, max_length=4)
    assert short["max_length"] == 4 and short["model"] == model
    encoder = BiEncoder.from_base(str(tiny_sentence_bert_path), max_length=4)
    assert (
        short["metrics"] == benchmarks.evaluate(encoder, "wikiqa-raw", data_dir=fixtures)["metrics"]
    )
    assert benchmarks.evaluate(model, "wikiqa-raw", data_dir=fixtures)["max_length"] == 32
    at_8 = benchmarks.evaluate(encoder, "wikiqa-raw", data_dir=fixtures, max_length=8)
    assert encoder.max_length == 8 and at_8["max_length"] == 8


def test_max_length_on_a_model_object_without_a_token_limit_is_refused(fixtures):
    def constant(pairs):  # a scorer object with no token limit
        return np.zeros(len(pairs))

    with pytest.raises(BenchmarkError) as error:
        benchmarks.evaluate(constant, "wikiqa-raw", data_dir=fixtures, max_length=8)
    assert str(error.value) == (
        "max_length 8: a function has no token limit to set (pass max_length to "
        "adapter_zoo.load instead)"
    )
