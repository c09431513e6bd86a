"""Serving an unlabelled domain from the zoo: domain centroids stored at training,
the plan, and every strategy's entry (zero-shot, nearest, soup, fusion, route, multitask)
loaded and scored.

The zoo is two bi-encoder adapters trained for a few steps on the two archives shipped in the
package (real StackExchange data: beer and bicycles.meta); their base is the tiny random
sentence-BERT, so training takes seconds. Domain centroids are always all-MiniLM-L6-v2's, so
the similarities below are the real ones.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.adapt import plan as planning
from adapter_zoo.adapt.domain import entry_centroid
from adapter_zoo.adapt.plan import AdaptationPlan, plan_adaptation, similarity_weights
from adapter_zoo.adapt.route import route, route_entry
from adapter_zoo.adapt.soup import soup_entry
from adapter_zoo.adapt.targets import target_texts
from adapter_zoo.errors import ZooError
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.zoo.domain import domain_centroid, forum_questions, sample_texts, training_texts
from adapter_zoo.zoo.store import read_card, save_entry, verify_entry

# one xdist process runs this module (--dist loadgroup): trained entries are module fixtures
pytestmark = pytest.mark.xdist_group("adapt")

BEER = "beer.stackexchange.com"
BICYCLES = "bicycles.meta.stackexchange.com"
FAST = {"batch_size": 8, "max_length": 16, "max_steps": 2, "eval_steps": 2, "seed": 0,
        "lr": 1e-2, "reduction_factor": 2, "dev_queries": 16}  # fmt: skip
BEER_QUERY = "Which glass should I serve an imperial stout in?"
BIKES_QUERY = "Why was my question about the site's close reasons closed as off-topic?"
TEXTS = 100  # titles per stored centroid here
PAIRS = [
    (BEER_QUERY, "A snifter keeps the aroma of a strong stout."),
    (BEER_QUERY, "Any pint glass will do for a lager."),
    (BIKES_QUERY, "Questions must be about bicycles; meta is for the site itself."),
    (BIKES_QUERY, "Vote to reopen once it is edited."),
]


@pytest.fixture(scope="module")
def parsed(parsed_shipped):
    """Both archives shipped in the package (beer, bicycles.meta), parsed."""
    return parsed_shipped


@pytest.fixture(scope="module")
def trained(parsed, tmp_path_factory, tiny_sentence_bert_path):
    """``beer`` and ``bikes`` bi-encoder adapter entries in a zoo of their own (each test
    copies them into its own zoo: :func:`zoo`), centroids of 100 titles (not 500) to keep
    the test fast; and ``multi``, beer's adapter relabelled as a multi-task entry over both
    forums (adapt treats every multitask entry alike; test_biencoder trains real ones)."""
    from adapter_zoo.zoo import domain

    home = tmp_path_factory.mktemp("adapt-zoo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADAPTER_ZOO_HOME", str(home))
        patch.setattr(domain, "MAX_TEXTS", TEXTS)
        for name, forum in [("beer", "beer"), ("bikes", "bicycles.meta")]:
            train(TrainingConfig(mode="adapter", data=str(parsed), forums=(forum,), name=name,
                                 base_model=str(tiny_sentence_bert_path), **FAST))  # fmt: skip
        card = read_card(home / "beer")
        multi = {k: v for k, v in card.items() if k not in ("files", "name")}
        multi.update(mode="multitask", forums=[BEER, BICYCLES])
        save_entry(lambda folder: [shutil.copy(home / "beer" / f, folder / f)
                                   for f in card["files"]], "multi", multi)  # fmt: skip
    return home


@pytest.fixture
def zoo(trained):
    """The trained entries, copied into this test's own zoo."""
    home = adapter_zoo.zoo_home()
    for entry in ("beer", "bikes", "multi"):
        shutil.copytree(trained / entry, home / entry)
    return home


def test_training_stores_the_training_forums_centroid(zoo, parsed):
    from adapter_zoo.zoo import domain

    card = read_card(zoo / "beer")
    titles = sample_texts(training_texts(parsed, [BEER]), TEXTS)
    assert len(titles) == TEXTS < len(forum_questions(parsed / BEER))  # a seeded sample
    assert card["domain"] == {"embedder": "all-MiniLM-L6-v2", "texts": TEXTS,
                              "file": "domain.safetensors"}  # fmt: skip
    assert "domain.safetensors" in card["files"]
    stored = entry_centroid("beer")
    assert stored.dtype == np.float32 and stored.shape == (384,)
    assert abs(float(np.linalg.norm(stored)) - 1) < 1e-6
    # the stored centroid is the train titles' centroid, bit for bit
    assert np.array_equal(stored, domain_centroid(titles))
    assert domain.MAX_TEXTS == 500  # the default, patched for this module's entries only


def test_entry_centroid_of_an_older_entry_and_of_a_damaged_one(zoo, parsed, monkeypatch):
    from adapter_zoo.zoo import domain

    stored = entry_centroid("beer")
    # an entry written before centroids were stored: found through its training forums
    card = read_card(zoo / "beer")
    old = {k: v for k, v in card.items() if k not in ("domain", "files", "name")}

    def copy(folder):
        for file in card["files"]:
            if file != "domain.safetensors":
                shutil.copy(zoo / "beer" / file, folder / file)

    save_entry(copy, "old-beer", old)
    monkeypatch.setattr(domain, "MAX_TEXTS", TEXTS)
    assert np.array_equal(entry_centroid("old-beer"), stored)
    # ... and without its training data (a pulled card): one line saying what to do
    save_entry(copy, "pulled", {**old, "training": {}})
    with pytest.raises(ZooError, match=r"'pulled' has no domain centroid .* pass forums_dir$"):
        entry_centroid("pulled")
    # a damaged centroid file is refused
    (zoo / "beer" / "domain.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(ZooError, match=r"domain.safetensors: missing or corrupted"):
        entry_centroid("beer")


def test_plan_on_real_centroids_puts_beer_first_for_beer_questions(zoo, parsed):
    beer_titles = forum_questions(parsed / BEER, split="test")
    target = domain_centroid(beer_titles)
    entries = {name: entry_centroid(name) for name in ("bikes", "beer")}
    nearest = plan_adaptation(target, entries, "nearest")
    sims = nearest.similarities
    assert list(sims) == ["beer", "bikes"] and sims["beer"] > sims["bikes"] + 0.2
    assert sims["beer"] == pytest.approx(float(target.astype(float) @ entries["beer"]), abs=1e-6)
    assert (nearest.strategy, nearest.members, nearest.weights) == ("nearest", ("beer",), (1.0,))
    soup = plan_adaptation(target, entries, "soup", top_k=2)
    expected = np.exp(np.array([sims["beer"], sims["bikes"]]) / planning.SIMILARITY_TEMPERATURE)
    assert soup.members == ("beer", "bikes")
    np.testing.assert_allclose(soup.weights, expected / expected.sum(), rtol=1e-12)
    assert plan_adaptation(target, entries, "fusion", top_k=1).members == ("beer",)
    route_plan = plan_adaptation(target, entries, "route", top_k=None)
    assert route_plan.members == ("beer", "bikes")
    zero = plan_adaptation(target, entries, "zero-shot")
    assert (zero.members, zero.weights) == (("sbert:minilm-l6",), (1.0,))
    multi = plan_adaptation(target, entries, "multitask", multitask="multi")
    assert multi.members == ("multi",)
    auto = plan_adaptation(target, entries)  # the centroid rule
    assert auto.strategy == planning.AUTO_STRATEGY and auto.reason.startswith("centroid: ")
    assert isinstance(auto, AdaptationPlan) and "beer" in auto.reason
    with pytest.raises(ZooError, match="unknown strategy 'best'"):
        plan_adaptation(target, entries, "best")
    with pytest.raises(ZooError, match="needs the multi-task entry's name"):
        plan_adaptation(target, entries, "multitask")
    with pytest.raises(ZooError, match="no zoo entry with a domain centroid"):
        plan_adaptation(target, {}, "soup")


def test_similarity_weights_are_a_softmax_over_the_temperature():
    weights = similarity_weights([0.8, 0.75])
    assert sum(weights) == pytest.approx(1.0)
    assert weights[0] / weights[1] == pytest.approx(np.e)  # 0.05 apart at T = 0.05


def test_soup_is_the_weighted_average_of_the_members_weights(zoo):
    from safetensors.numpy import load_file

    path = soup_entry("soup", ["beer", "bikes"], [3.0, 1.0])
    card = verify_entry(path)
    assert (card["mode"], card["encoder"], card["layout"]) == ("soup", "bi", "adapter")
    assert card["members"] == ["beer", "bikes"] and card["weights"] == [0.75, 0.25]
    assert card["forums"] == [BEER, BICYCLES]
    soup = load_file(str(path / "adapter.safetensors"))
    members = [load_file(str(zoo / m / "adapter.safetensors")) for m in ("beer", "bikes")]
    names = [json.loads((zoo / m / "adapter_config.json").read_text())["name"]
             for m in ("beer", "bikes")]  # fmt: skip
    assert len(soup) == len(members[0]) > 0
    differs = 0
    for key, value in soup.items():
        # the same parameter under each member adapter's own name
        beer, bikes = (t[key.replace(".soup.", f".{n}.")] for t, n in zip(members, names))
        np.testing.assert_allclose(value, 0.75 * beer + 0.25 * bikes, rtol=0, atol=1e-7)
        differs += not np.array_equal(value, beer)
    assert differs >= len(soup) / 2  # the weights moved away from beer's (biases may stay 0)
    # it scores as an ordinary bi-encoder entry
    scores = adapter_zoo.load("soup").score(PAIRS)
    assert scores.shape == (4,) and np.all(np.isfinite(scores))


def test_a_soup_of_one_member_scores_bit_identically_to_it(zoo):
    soup_entry("beer-alone", ["beer"], [1.0])
    assert np.array_equal(
        adapter_zoo.load("beer-alone").score(PAIRS), adapter_zoo.load("beer").score(PAIRS)
    )
    assert adapter_zoo.load("beer-alone").max_length == adapter_zoo.load("beer").max_length


def test_soup_refuses_other_entries_and_mismatched_adapters(zoo):
    card = read_card(zoo / "bikes")

    def copy_with(config_change):
        def writer(folder):
            for file in card["files"]:
                shutil.copy(zoo / "bikes" / file, folder / file)
            config_file = folder / "adapter_config.json"
            config = json.loads(config_file.read_text())
            config["config"].update(config_change)
            config_file.write_text(json.dumps(config))

        return writer

    base = {k: v for k, v in card.items() if k not in ("files", "name")}
    save_entry(copy_with({"reduction_factor": 4}), "bikes-rf4", base)
    with pytest.raises(ZooError, match="'bikes-rf4' and 'beer' have different adapter configur"):
        soup_entry("bad", ["beer", "bikes-rf4"])
    # a cross-encoder's card, without the bi-encoder's probe text (a cross-encoder probes a pair)
    cross = {k: v for k, v in base.items() if k != "probe"}
    save_entry(copy_with({}), "cross-like", {**cross, "encoder": "cross"})
    with pytest.raises(ZooError, match="'cross-like' is a cross-adapter entry; a soup"):
        soup_entry("bad", ["beer", "cross-like"])
    save_entry(copy_with({}), "other-base", {**base, "base_model": "minilm-l6"})
    with pytest.raises(ZooError, match="'other-base' was made for base 'minilm-l6'"):
        soup_entry("bad", ["beer", "other-base"])
    with pytest.raises(ZooError, match="need one weight >= 0 per member"):
        soup_entry("bad", ["beer", "bikes"], [1.0])
    assert not (zoo / "bad").exists()


def test_route_sends_each_query_to_the_nearest_forum(zoo):
    assert route(np.array([[0.9, 0.1], [0.2, 0.8], [1, 1]]), np.eye(2)).tolist() == [0, 1, 0]
    path = route_entry("routed", ["beer", "bikes"])
    card = verify_entry(path)
    assert (card["mode"], card["composition"], card["members"]) == (
        "composite", "route", ["beer", "bikes"],
    )  # fmt: skip
    assert "route.safetensors" in card["files"]
    ranker = adapter_zoo.load("routed")
    # real text: a beer question goes to beer's adapter, a site-policy one to bicycles.meta's
    assert ranker.routes([BEER_QUERY, BIKES_QUERY]).tolist() == [0, 1]
    scores = ranker.score(PAIRS)
    # each query's pairs scored by its member alone (the same batch, so bit for bit)
    beer = adapter_zoo.load("beer").score(PAIRS[:2])
    bikes = adapter_zoo.load("bikes").score(PAIRS[2:])
    assert np.array_equal(scores, np.concatenate([beer, bikes]))
    assert ranker.rank(BEER_QUERY, [c for _, c in PAIRS[:2]])[0][1] == max(scores[:2])


def test_adapt_each_strategy_writes_an_entry_that_loads_and_scores(zoo, parsed, tmp_path):
    from adapter_zoo.compose.fusion import ScoreFusion

    texts = forum_questions(parsed / BEER, split="test")[:30]
    zero = adapter_zoo.adapt(texts, name="zero", strategy="zero-shot")
    assert read_card(zero)["adapt"]["members"] == ["sbert:minilm-l6"]
    assert np.array_equal(
        adapter_zoo.load("zero").score(PAIRS), adapter_zoo.load("sbert:minilm-l6").score(PAIRS)
    )
    assert adapter_zoo.load("zero").card["name"] == "zero"

    adapter_zoo.adapt(texts, name="near", strategy="nearest")
    assert np.array_equal(
        adapter_zoo.load("near").score(PAIRS), adapter_zoo.load("beer").score(PAIRS)
    )

    adapter_zoo.adapt(texts, name="mt", strategy="multitask")
    record = read_card(zoo / "mt")["adapt"]
    assert record["members"] == ["multi"] and set(record["similarities"]) == {
        "beer",
        "bikes",
        "multi",
    }
    assert np.array_equal(
        adapter_zoo.load("mt").score(PAIRS), adapter_zoo.load("multi").score(PAIRS)
    )

    fused = adapter_zoo.adapt(texts, name="fused", strategy="fusion", top_k=2)
    card = read_card(fused)
    assert (card["composition"], card["members"]) == ("fusion", ["beer", "bikes"])
    np.testing.assert_allclose(card["weights"], card["adapt"]["weights"], rtol=1e-11)
    reference = ScoreFusion([adapter_zoo.load("beer"), adapter_zoo.load("bikes")], card["weights"])
    assert np.array_equal(adapter_zoo.load("fused").score(PAIRS), reference.score(PAIRS))

    adapter_zoo.adapt(texts, name="soup", strategy="soup", top_k=2)
    soup = adapter_zoo.load("soup")
    assert soup.card["mode"] == "soup" and soup.card["members"] == ["beer", "bikes"]
    assert soup.card["weights"][0] > 0.99  # beer is far nearer to beer's questions

    adapter_zoo.adapt(texts, name="routed", strategy="route", zoo=["beer", "bikes"])
    assert adapter_zoo.load("routed").routes([BEER_QUERY]).tolist() == [0]


def test_adapt_on_a_text_file_and_on_a_parsed_forum(zoo, parsed, tmp_path):
    lines = forum_questions(parsed / BEER, split="test")[:40]
    file = tmp_path / "questions.txt"
    file.write_text("\n\n".join(lines) + "\n  \n", encoding="utf-8")
    assert target_texts(file) == lines
    path = adapter_zoo.adapt(file, name="from-file", zoo=["beer", "bikes"], strategy="centroid")
    record = read_card(path)["adapt"]
    assert record["target"] == {"source": "text file", "file": "questions.txt", "texts": 40}
    assert list(record["similarities"]) == ["beer", "bikes"]
    assert record["strategy"] == planning.AUTO_STRATEGY and record["requested"] == "centroid"
    assert "## Adaptation" in (path / "README.md").read_text()
    scores = adapter_zoo.load("from-file").score(PAIRS)
    assert scores.shape == (4,) and np.all(np.isfinite(scores))

    path = adapter_zoo.adapt(parsed / BICYCLES, name="from-forum", strategy="nearest")
    record = read_card(path)["adapt"]
    assert record["target"]["source"] == "parsed forums"
    # every question but the test split's (the forum's evaluation split is never read)
    outside_test = forum_questions(parsed / BICYCLES, split="train") + forum_questions(
        parsed / BICYCLES, split="dev"
    )
    assert record["target"]["texts"] == len(outside_test)
    assert record["members"] == ["bikes"] and str(parsed) not in json.dumps(record)


def test_auto_falls_back_to_zero_shot_below_the_threshold(zoo, parsed, monkeypatch):
    texts = forum_questions(parsed / BEER, split="test")[:30]
    monkeypatch.setattr(planning, "AUTO_MIN_SIMILARITY", 0.99)
    path = adapter_zoo.adapt(texts, name="fallback", strategy="centroid")
    record = read_card(path)["adapt"]
    assert (record["strategy"], record["members"]) == ("zero-shot", ["sbert:minilm-l6"])
    assert "< 0.99" in record["reason"] and "zero-shot" in record["reason"]


def test_auto_multitask_rule_without_a_multitask_entry_keeps_the_zero_shot_base(monkeypatch):
    target = np.array([1.0, 0.0])
    entries = {"beer": np.array([0.9, 0.1])}
    monkeypatch.setattr(planning, "AUTO_STRATEGY", "multitask")
    monkeypatch.setattr(planning, "AUTO_MIN_SIMILARITY", 0.0)
    plan = plan_adaptation(target, entries)
    assert (plan.strategy, plan.members) == ("zero-shot", ("sbert:minilm-l6",))
    assert plan.reason == (
        "centroid: the rule is multitask, and the zoo has no multi-task entry, so the zero-shot "
        "sbert:minilm-l6."
    )
    plan = plan_adaptation(target, entries, multitask="zoo-multitask")
    assert (plan.strategy, plan.members) == ("multitask", ("zoo-multitask",))


def test_adapt_bad_input_is_one_line(zoo, tmp_path, capsys):
    from adapter_zoo.cli import main

    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(ZooError, match=r"empty.txt: no text to describe the target domain"):
        adapter_zoo.adapt(empty, name="x")
    with pytest.raises(ZooError, match="unknown strategy 'best'"):
        adapter_zoo.adapt(["a stout?"], name="x", strategy="best")
    with pytest.raises(ZooError, match="'beer' already exists"):
        adapter_zoo.adapt(["a stout?"], name="beer")
    assert main(["adapt", "--target", str(empty), "--name", "x"]) == 2
    assert capsys.readouterr().err.strip().endswith("no text to describe the target domain (empty)")
    for entry in ("beer", "bikes", "multi"):
        shutil.rmtree(zoo / entry)
    with pytest.raises(ZooError, match="no zoo entry with a domain centroid to choose from"):
        adapter_zoo.adapt(["Which stout?"], name="x", strategy="centroid")
    assert not (zoo / "x").exists()


def test_cli_adapt_prints_the_choice(zoo, parsed, tmp_path, capsys):
    from adapter_zoo.cli import main

    file = tmp_path / "q.txt"
    file.write_text(BEER_QUERY + "\nIs a porter a stout?\n", encoding="utf-8")
    code = main(["adapt", "--target", str(file), "--name", "cli", "--strategy", "nearest",
                 "--zoo", "beer", "bikes"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("cli: nearest -> ")
    assert "beer" in out.splitlines()[2] and "similarity to the target:" in out


def test_targets_dump_benchmark_and_list(parsed, tmp_path):
    import datasets

    from stackexchange.catalog import shipped_data

    # a raw dump is parsed on the fly: the same titles as the parsed forum's
    dump = target_texts(shipped_data() / f"{BICYCLES}.7z")
    assert dump == target_texts(parsed / BICYCLES)
    assert len(dump) == len(forum_questions(parsed / BICYCLES, split=None)) - len(
        forum_questions(parsed / BICYCLES, split="test")
    )
    bench = tmp_path / "bench"
    for split, queries in (("dev", ["Is a porter a stout?"]), ("test", ["Which hops?", " "])):
        datasets.Dataset.from_dict({"query": queries}).save_to_disk(str(bench / split))
    (bench / "benchmark.json").write_text(json.dumps({"name": "b", "splits": ["dev", "test"]}))
    assert target_texts(bench) == ["Is a porter a stout?", "Which hops?"]
    (bench / "benchmark.json").write_text(json.dumps({"name": "b", "splits": ["../x"]}))
    with pytest.raises(ZooError, match=r"benchmark.json: unknown split '../x'"):
        target_texts(bench)
    with pytest.raises(ZooError, match="no such target"):
        target_texts(tmp_path / "missing")
    assert target_texts(["  a stout? ", ""]) == ["a stout?"]


def test_hub_model_card_says_what_adapt_chose():
    from adapter_zoo.hub.model_card import render_model_card

    record = {"strategy": "soup", "requested": "auto", "members": ["beer", "bikes"],
              "weights": [0.9, 0.1], "similarities": {"beer": 0.81, "bikes": 0.52},
              "reason": "auto: the nearest entry beer has similarity 0.810 >= 0.5, so soup.",
              "target": {"source": "text file", "file": "q.txt", "texts": 40},
              "embedder": "all-MiniLM-L6-v2"}  # fmt: skip
    card = {"name": "mine", "mode": "soup", "encoder": "bi", "layout": "adapter",
            "base_model": "minilm-l6", "forums": [BEER], "adapt": record}  # fmt: skip
    text = render_model_card(card, "org/mine")
    assert "## Adaptation" in text and record["reason"] in text
    assert "| beer | 0.9000 |" in text and "| bikes | 0.5200 |" in text


def test_cross_encoder_entries_store_the_centroid_too(parsed, tiny_bert_path, monkeypatch):
    from adapter_zoo.zoo import domain

    monkeypatch.setattr(domain, "MAX_TEXTS", TEXTS)
    path = train(TrainingConfig(mode="adapter", encoder="cross", data=str(parsed),
                                forums=("bicycles.meta",), name="bikes-cross",
                                base_model=str(tiny_bert_path), batch_size=8, max_length=32,
                                max_steps=1, seed=0))  # fmt: skip
    card = verify_entry(path)
    assert card["encoder"] == "cross" and card["domain"]["texts"] == TEXTS
    titles = sample_texts(training_texts(parsed, [BICYCLES]), TEXTS)
    assert np.array_equal(entry_centroid("bikes-cross"), domain_centroid(titles))


def test_adapt_trains_on_the_base_it_is_given_and_its_request_says_so(monkeypatch):
    """``adapt(base_model=...)`` reaches the learned strategy (the quickstart's smoke adapts
    on its tiny base); the default base is left out of the request, so an entry adapted
    before the option existed still holds the same request."""
    import sys

    import adapter_zoo.adapt.learn  # noqa: F401  (the package's adapt function shadows it)
    from adapter_zoo.names import DEFAULT_BASE

    learn = sys.modules["adapter_zoo.adapt.learn"]
    seen = []
    monkeypatch.setattr(
        learn, "learn_and_decide", lambda target, **options: seen.append(options) or target
    )
    adapter_zoo.adapt(["a text"], name="on-bert", base_model="bert-base", budget_minutes=None)
    adapter_zoo.adapt(["a text"], name="on-minilm", budget_minutes=None)
    assert [o["base_model"] for o in seen] == ["bert-base", DEFAULT_BASE]
    assert seen[0]["request"]["base_model"] == "bert-base"
    assert "base_model" not in seen[1]["request"]
