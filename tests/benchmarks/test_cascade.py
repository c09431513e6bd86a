"""``adapter-zoo cascade-train`` / ``cascade-eval`` end to end on the tiny BERT and data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from adapter_zoo.cascade import CascadeConfig, CascadeRanker, run_cascade
from adapter_zoo.cascade.data import pairs_from_parsed
from adapter_zoo.cli import main
from benchmarks.cascade import pairs_from_benchmark


def test_training_pairs_from_forum_and_benchmark(parsed_forums, tiny_benchmark):
    pairs = pairs_from_parsed(parsed_forums, negatives=2, seed=0)
    # 4 train questions per forum, each with 1 positive and 2 negatives
    assert len(pairs) == 2 * 4 * 3
    assert sum(label for _, _, label in pairs) == 8
    beer = pairs_from_parsed(parsed_forums / "beer.example", negatives=2, seed=0)
    positives = {(q, c) for q, c, y in beer if y == 1.0}
    assert ("Which glass should I use for a stout?", "A nonic pint or a tulip glass.") in positives
    assert all(
        c != "A nonic pint or a tulip glass."
        for q, c, y in beer
        if y == 0.0 and q == "Which glass should I use for a stout?"
    )
    # a forum-built benchmark has no train split: its source forum's train split is used
    assert sorted(pairs_from_benchmark("local:" + str(tiny_benchmark), negatives=2)) == sorted(beer)


def test_benchmark_without_train_split_or_source(tmp_path, make_local_benchmark):
    folder = tmp_path / "bench"
    folder.mkdir()
    make_local_benchmark(folder, None)
    with pytest.raises(ValueError, match="has no train split .* names no parsed forum"):
        pairs_from_benchmark("local:" + str(folder))


def test_cascade_train_then_eval(tiny_bert_path, tiny_benchmark, tmp_path, capsys):
    bench = "local:" + str(tiny_benchmark)
    argv = [
        "cascade-train",
        "--benchmark",
        bench,
        "--name",
        "cascade",
        "--base",
        str(tiny_bert_path),
        "--exits",
        "1",
        "2",
        "--max-steps",
        "3",
        "--batch-size",
        "4",
    ]
    assert main(argv) == 0
    entry = capsys.readouterr().out.strip().splitlines()[-1]
    ranker = CascadeRanker.load("cascade")
    assert str(ranker.card["name"]) == "cascade" and entry.endswith("cascade")
    assert ranker.card["mode"] == "cascade" and ranker.card["training"]["steps"] == 3
    assert ranker.card["pairs"] == {"train": 16} and ranker.exits == (1, 2)
    # the name is taken: a clear one-line error, exit 2
    assert main(argv) == 2
    assert "already exists" in capsys.readouterr().err
    assert main([*argv, "--overwrite"]) == 0
    capsys.readouterr()

    results = tmp_path / "results"
    argv = [
        "cascade-eval",
        "--model",
        "cascade",
        "--benchmark",
        bench,
        "--alpha",
        "0",
        "0.5",
        "--results",
        str(results),
    ]
    assert main(argv) == 0
    records = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
    assert [r["alpha"] for r in records] == [0.0, 0.5]
    assert records[0]["relative_compute"] == 1.0 and 0 < records[1]["relative_compute"] < 1
    assert all(r["mode"] == "cascade" and r["model"] == "cascade" for r in records)
    # the recorded metrics are those of the cascade scores themselves
    from adapter_zoo.metrics import evaluate_rankings

    ranker = CascadeRanker.load("cascade")
    lists = [(q, c) for q, c in zip(*_columns(tiny_benchmark))]
    output = run_cascade(ranker, lists, alpha=0.5)
    expected = evaluate_rankings(output.scores, _labels(tiny_benchmark))
    assert records[1]["metrics"]["map"] == pytest.approx(expected["map"], abs=1e-6)
    assert records[1]["flops"] == output.flops
    assert np.isclose(records[1]["relative_compute"], output.flops / records[0]["flops"])


def _columns(folder):
    import datasets

    rows = datasets.load_from_disk(str(folder / "test"))
    return rows["query"], [list(c) for c in rows["candidates"]]


def _labels(folder):
    import datasets

    return datasets.load_from_disk(str(folder / "test"))["labels"]


def test_cascade_train_adapter_on_parse_output(tiny_bert_path, parsed_forums, tmp_path):
    from adapter_zoo.zoo import zoo_home

    out = zoo_home() / "entry"
    argv = [
        "cascade-train",
        "--data",
        str(parsed_forums),
        "--name",
        "entry",
        "--base",
        str(tiny_bert_path),
        "--adapter",
        "--max-steps",
        "2",
        "--batch-size",
        "4",
    ]
    assert main(argv) == 0
    card = json.loads((out / "card.json").read_text())
    assert card["forums"] == ["beer.example", "bikes.example"]
    assert card["cascade"]["adapter"] == "seq_bn" and card["cascade"]["exits"] == [2]
    assert "adapter/adapter_config.json" in card["files"] and not (out / "encoder").exists()
    assert card["pairs"] == {"train": 32} and card["training"]["mode"] == "adapter"


def test_cascade_train_refuses_an_output_that_is_or_contains_what_it_reads(
    tiny_bert_path, parsed_forums, tiny_benchmark, capsys, monkeypatch
):
    """An entry name whose folder in the zoo home is (or holds) what training reads is refused
    before any work, even with --overwrite; a path as the name is no entry name at all."""

    def tree():
        roots = (parsed_forums, tiny_benchmark, tiny_bert_path)
        return sorted((p, p.is_file() and p.read_bytes()) for r in roots for p in r.rglob("*"))

    before = tree()
    forum = parsed_forums / "beer.example"
    bench = f"local:{tiny_benchmark}"
    for source, out, read in [
        (["--data", str(forum)], forum, forum),
        (["--data", str(forum)], parsed_forums, forum),
        (["--benchmark", bench], tiny_benchmark, tiny_benchmark),
        (["--benchmark", bench], tiny_bert_path.parent, tiny_bert_path),  # the base model
    ]:
        monkeypatch.setenv("ADAPTER_ZOO_HOME", str(out.parent))
        argv = ["cascade-train", *source, "--name", out.name, "--base", str(tiny_bert_path),
                "--max-steps", "1", "--overwrite"]  # fmt: skip
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            f"adapter-zoo cascade-train: error: {read}: input inside or equal to the output "
            f"{out}; choose another output\n"
        )
        argv[argv.index("--name") + 1] = str(out)
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            f"adapter-zoo cascade-train: error: invalid zoo entry name {str(out)!r}: use "
            "letters, digits, '-', '_' or '.'\n"
        )
    assert tree() == before


def test_evaluate_sweep_and_cascade_records_name_a_built_set_alike(
    tiny_bert_path, tiny_benchmark, tmp_path, monkeypatch
):
    """One record builder: whichever command scored a built set, and however its path was
    spelt, the records name it ``local:<absolute folder>`` and time themselves in
    ``wall_time_s``, so the leaderboard shows one column."""
    from adapter_zoo.ranker.model import add_ranking_head, build_model
    from benchmarks import evaluate
    from benchmarks.cascade import evaluate_cascade
    from benchmarks.sweep import sweep_benchmark

    model, _ = build_model(str(tiny_bert_path))
    model.add_adapter("a", config="seq_bn")
    add_ranking_head(model, "a")
    model.save_adapter(str(tmp_path / "adapter"), "a", with_head=True)
    adapters = [str(tmp_path / "adapter")]
    CascadeRanker.from_base(str(tiny_bert_path), CascadeConfig(exits=(1, 2))).save("cascade")
    monkeypatch.chdir(tiny_benchmark.parent)
    relative = "local:" + tiny_benchmark.name
    records = [
        evaluate("bm25", relative),
        *sweep_benchmark(relative, adapters, base_model=str(tiny_bert_path)),
        *evaluate_cascade("cascade", "local:" + str(tiny_benchmark), alphas=(0.3,)),
    ]
    common = set(evaluate("bm25", "local:" + str(tiny_benchmark)))
    for record in records:
        assert record["benchmark"] == f"local:{tiny_benchmark.resolve()}"
        assert common - {"max_length"} <= set(record) and record["wall_time_s"] >= 0


def test_a_set_built_by_build_benchmark_leads_back_to_its_forum(
    parsed_forums, tiny_benchmark, tmp_path
):
    """build-benchmark's descriptor names its source as {"forum", "path"}: the benchmark
    knows its forum (the in-domain setting) and training falls back to that forum's pairs."""
    import shutil

    import benchmarks

    copy = tmp_path / "bench"
    shutil.copytree(tiny_benchmark, copy)
    forum = parsed_forums / "beer.example"
    spec = json.loads((copy / "benchmark.json").read_text())
    spec["source"] = {"forum": forum.name, "path": str(forum)}
    (copy / "benchmark.json").write_text(json.dumps(spec))
    bench = benchmarks.get(f"local:{copy}")
    assert (bench.forum, bench.source_forum) == (forum.name, str(forum))
    expected = pairs_from_parsed(forum, negatives=2, seed=0)
    assert sorted(pairs_from_benchmark(f"local:{copy}", negatives=2)) == sorted(expected)
