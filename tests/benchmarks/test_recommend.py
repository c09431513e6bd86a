"""The adapter recommender on tiny forums: domain similarity with MiniLM, and the probe."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from adapter_zoo.ranker.model import add_ranking_head, build_model
from adapter_zoo.sweep import independent_scores
from adapter_zoo.zoo import save_entry
from benchmarks.recommend import load_embedder, recommend, top_k_hit

BIKE_QUERIES = [
    ("my bike chain keeps slipping", ["adjust the derailleur", "drink a stout", "bake bread"]),
    ("which tyres for winter cycling", ["studded tyres", "a pale ale", "none"]),
]


@pytest.fixture(scope="module")
def embedder():
    return load_embedder()


@pytest.fixture
def zoo_adapters(tiny_bert_path, parsed_forums):
    """Two zoo adapter entries, trained (here: random) on the beer and the bikes forum, saved
    as training saves them (safetensors)."""
    names = []
    for seed, host in enumerate(["bikes.example", "beer.example"]):
        torch.manual_seed(seed)
        model, _ = build_model(str(tiny_bert_path))
        short = host.split(".")[0]
        model.add_adapter(short, config="seq_bn")
        add_ranking_head(model, short)
        with torch.no_grad():
            for name, param in model.named_parameters():
                if "adapters" in name:
                    param.add_(torch.randn_like(param) * 0.3)
        card = {
            "mode": "adapter",
            "base_model": str(tiny_bert_path),
            "forums": [host],
            "training": {"data": str(parsed_forums)},
        }
        save_entry(
            lambda d, m=model, n=short: m.save_adapter(
                str(d), n, with_head=True, use_safetensors=True
            ),
            short,
            card,
        )
        names.append(host.split(".")[0])
    return names


def test_domain_similarity_ranks_the_matching_forum_first(
    zoo_adapters, tiny_benchmark, tmp_path, make_local_benchmark, embedder
):
    beer = recommend("local:" + str(tiny_benchmark), zoo_adapters, embedder=embedder)
    assert [r["adapter"] for r in beer] == ["beer", "bikes"]
    assert beer[0]["similarity"] > beer[1]["similarity"] and beer[0]["probe"] is None
    bikes_folder = tmp_path / "bikes-bench"
    bikes_folder.mkdir()
    make_local_benchmark(bikes_folder, None, BIKE_QUERIES)
    bikes = recommend(str(bikes_folder), zoo_adapters, embedder=embedder)
    assert [r["adapter"] for r in bikes] == ["bikes", "beer"]
    assert top_k_hit(bikes, "bikes", k=1) and not top_k_hit(bikes, "beer", k=1)
    assert top_k_hit(bikes, "beer", k=3)


def test_parse_output_target(zoo_adapters, parsed_forums, embedder):
    ranking = recommend(parsed_forums / "bikes.example", zoo_adapters, embedder=embedder)
    assert ranking[0]["adapter"] == "bikes" and ranking[0]["similarity"] > 0.5


def test_dev_sample_probe_scores_are_the_adapters_metric(
    zoo_adapters, tiny_benchmark, tiny_bert_path, embedder
):
    from adapter_zoo.metrics import evaluate_rankings

    ranking = recommend(
        "local:" + str(tiny_benchmark), zoo_adapters, dev_sample=10, embedder=embedder
    )
    import datasets

    rows = datasets.load_from_disk(str(tiny_benchmark / "test"))  # all 4 queries are sampled
    pairs = [(q, c) for q, cands in zip(rows["query"], rows["candidates"]) for c in cands]
    from adapter_zoo.zoo import zoo_home

    paths = [str(zoo_home() / name) for name in zoo_adapters]
    separate = independent_scores(str(tiny_bert_path), paths, pairs)
    bounds = np.cumsum([0] + [len(c) for c in rows["candidates"]])
    for name, path in zip(zoo_adapters, paths):
        per_query = [separate[path][a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        expected = evaluate_rankings(per_query, rows["labels"])["p@1"]
        row = next(r for r in ranking if r["adapter"] == name)
        assert row["probe"] == pytest.approx(expected, abs=1e-9)
    probes = [r["probe"] for r in ranking]
    assert probes == sorted(probes, reverse=True)


def test_adapter_without_forum_data_is_an_error(tiny_bert_path, tiny_benchmark, embedder):
    model, _ = build_model(str(tiny_bert_path))
    model.add_adapter("x", config="seq_bn")
    add_ranking_head(model, "x")
    save_entry(
        lambda d: model.save_adapter(str(d), "x", with_head=True),
        "nodata",
        {"mode": "adapter", "base_model": str(tiny_bert_path), "forums": []},
    )
    with pytest.raises(ValueError, match="names no training forums/data; pass forums_dir"):
        recommend("local:" + str(tiny_benchmark), ["nodata"], embedder=embedder)


def test_hit_rate_against_the_full_sweep(
    zoo_adapters, tiny_benchmark, tmp_path, make_local_benchmark, embedder
):
    from benchmarks.recommend import hit_rate

    bikes_folder = tmp_path / "bikes-bench"
    bikes_folder.mkdir()
    make_local_benchmark(bikes_folder, None, BIKE_QUERIES)
    targets = ["local:" + str(tiny_benchmark), "local:" + str(bikes_folder)]
    one = hit_rate(targets, zoo_adapters, k=1, embedder=embedder)
    assert [r["recommended"] for r in one["targets"]] == [["beer"], ["bikes"]]
    for row in one["targets"]:
        assert set(row["sweep"]) == set(zoo_adapters)
        assert row["sweep"][row["best"]] == max(row["sweep"].values())
        assert row["hit"] == (row["best"] == row["recommended"][0])
    assert one["hit_rate"] == sum(r["hit"] for r in one["targets"]) / 2
    assert hit_rate(targets, zoo_adapters, k=2, embedder=embedder)["hit_rate"] == 1.0


def test_hit_rate_with_a_probe_on_the_dev_split(
    zoo_adapters, tmp_path, make_local_benchmark, embedder
):
    from benchmarks.recommend import hit_rate, probe_scores

    folder = tmp_path / "bikes-bench"
    folder.mkdir()
    make_local_benchmark(folder, None, BIKE_QUERIES)
    make_local_benchmark(folder, None, BIKE_QUERIES[::-1] + BIKE_QUERIES, split="dev")
    target = "local:" + str(folder)
    result = hit_rate([target], zoo_adapters, dev_sample=3, dev_split="dev", embedder=embedder)
    row = result["targets"][0]
    assert row["probe_split"] == "dev" and set(row["seconds"]) == {"sweep", "similarity", "probe"}
    probe = probe_scores(target, zoo_adapters, 3, split="dev")
    expected = sorted(zoo_adapters, key=lambda name: -probe[name])
    if probe[expected[0]] == probe[expected[-1]]:  # a tie: similarity decides, as in recommend
        expected = row["similarity_top3"]
    assert row["probe_top3"] == expected == row["recommended"]
    ranking = recommend(
        target, zoo_adapters, dev_sample=3, dev_split="dev", embedder=embedder, zero_shot=None
    )
    assert [r["adapter"] for r in ranking] == row["probe_top3"]
    assert [r["probe"] for r in ranking] == [probe[r["adapter"]] for r in ranking]
    with pytest.raises(ValueError, match="split"):
        recommend(target, zoo_adapters, dev_sample=3, dev_split="train", embedder=embedder)


def test_the_zero_shot_base_is_a_probed_candidate(
    zoo_adapters, tmp_path, make_local_benchmark, embedder, tiny_sentence_bert_path
):
    folder = tmp_path / "bikes-bench"
    folder.mkdir()
    make_local_benchmark(folder, None, BIKE_QUERIES)
    target = "local:" + str(folder)
    base = f"sbert:{tiny_sentence_bert_path}"
    ranking = recommend(target, zoo_adapters, dev_sample=3, embedder=embedder, zero_shot=base)
    row = next(r for r in ranking if r["adapter"] == base)
    assert row["similarity"] is None  # no training forum to compare
    from benchmarks.recommend import probe_scores

    assert row["probe"] == probe_scores(target, [base], 3)[base]
    assert sorted(r["adapter"] for r in ranking) == sorted([*zoo_adapters, base])
    assert [r["rank"] for r in ranking] == [1, 2, 3]
