"""adapt learns from the target and decides on its own held-out lists: the
threads it reads (never the evaluation split), the held-out lists, the bootstrap decision,
the candidates trained on real shipped forums (the tiny random sentence-BERT as their base,
so training takes seconds), and the entry and card it writes.
"""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.adapt import heldout
from adapter_zoo.adapt.decide import decide, list_average_precisions, paired_bootstrap
from adapter_zoo.adapt.heldout import DECISION, assign, held_out_lists, write_training_folder
from adapter_zoo.adapt.threads import Thread, read_threads
from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.store import read_card

BEER = "beer.stackexchange.com"
BICYCLES = "bicycles.meta.stackexchange.com"
POISON = "POISONED TEST QUESTION"


def _questions(forum):
    from stackexchange.store import read_dataset

    return read_dataset(forum / "questions").to_list()


@pytest.fixture(scope="module")
def poisoned(parsed_shipped, tmp_path_factory):
    """A copy of parsed bicycles.meta whose test questions (title, body, accepted answer) all say
    POISON: anything adapt learns or decides from must be the same as from the original."""
    import datasets

    out = tmp_path_factory.mktemp("poisoned") / BICYCLES
    shutil.copytree(parsed_shipped / BICYCLES, out)
    rows = _questions(parsed_shipped / BICYCLES)

    def poison(row):
        if row["split"] != "test":
            return row
        return {**row, "title": f"{POISON} {row['id']}", "body": POISON,
                "accepted_answer": POISON if row["accepted_answer"] else None}  # fmt: skip

    shutil.rmtree(out / "questions")
    original = datasets.load_from_disk(str(parsed_shipped / BICYCLES / "questions"))
    datasets.Dataset.from_list([poison(r) for r in rows], features=original.features).save_to_disk(
        str(out / "questions")
    )
    return out


def test_threads_are_every_question_outside_the_test_split(parsed_shipped, poisoned):
    rows = _questions(parsed_shipped / BEER)
    kept = [r for r in rows if r["split"] != "test"]
    target = read_threads(parsed_shipped / BEER)
    assert len(rows) == 1029 and len(target.threads) == len(kept) == 932
    assert [t.id for t in target.threads] == [r["id"] for r in kept]
    assert len(target.answered) == sum(bool(r["accepted_answer"]) for r in kept)
    assert target.about == {"source": "parsed forums", "forums": [BEER], "threads": 932,
                            "answered": len(target.answered), "duplicate_links": 22}  # fmt: skip
    bikes = read_threads(parsed_shipped / BICYCLES)
    assert len(_questions(parsed_shipped / BICYCLES)) == 453 and len(bikes.threads) == 408
    assert read_threads(poisoned).threads == bikes.threads


def test_no_poisoned_text_reaches_the_lists_or_the_training_folder(poisoned, tmp_path):
    target = read_threads(poisoned)
    parts = assign(target.threads)
    lists = held_out_lists(target, parts, DECISION)
    forum = write_training_folder(target, parts, tmp_path)
    written = b"".join(f.read_bytes() for f in forum.rglob("*") if f.is_file())
    assert POISON.encode() not in written
    assert not any(POISON in t for t in [*lists.queries, *sum(lists.candidates, [])])


def test_assign_is_a_fixed_hash_split_with_a_capped_decision_share():
    threads = [Thread(i, "t", "b") for i in range(4000)]
    parts = assign(threads)
    assert parts == assign(list(reversed(threads)))[::-1]  # by id, not by position
    assert parts.count(DECISION) == heldout.MAX_DECISION_THREADS
    small = assign(threads[:400])
    assert 0.2 < small.count(DECISION) / 400 < 0.3 and 0.08 < small.count("dev") / 400 < 0.16


def test_held_out_lists_rank_each_threads_own_answer_and_body(parsed_shipped):
    target = read_threads(parsed_shipped / BEER)
    parts = assign(target.threads)
    lists = held_out_lists(target, parts, DECISION)
    held = [t for t, p in zip(target.threads, parts) if p == DECISION]
    by_title = {t.title: t for t in held}
    counts = lists.counts()
    assert counts["answer"] == sum(bool(t.answer) for t in held)
    assert counts["body"] == sum(heldout._has_body_pair(t) for t in held)
    assert len(lists) > 200  # hundreds of lists on a 1,000-question forum
    for kind, query, candidates, labels in zip(
        lists.kinds, lists.queries, lists.candidates, lists.labels
    ):
        assert sum(labels) >= 1 and len(candidates) == len(set(candidates)) <= 20
        if kind == "body":
            assert candidates[labels.index(1)] == by_title[query].body
    # selection threads and decision threads never meet
    selection = held_out_lists(target, parts, "dev")
    assert not set(selection.queries) & set(lists.queries)


def test_paired_bootstrap_and_the_decision_rule():
    rng = np.random.default_rng(0)
    base = rng.random(300)
    noise = base + rng.normal(0, 0.2, 300)  # no real gain: mean difference ~ 0
    gain = base + 0.05 + rng.normal(0, 0.05, 300)
    kept = decide({"base": base, "noisy": noise}, base="base")
    assert kept.chosen == "base" and kept.best == "noisy"
    assert kept.candidates["noisy"]["lower"] < 0 < kept.candidates["noisy"]["p"]
    assert "is within the noise of 300 held-out lists, so base is kept" in kept.reason
    won = decide({"base": base, "noisy": noise, "gain": gain}, base="base")
    assert won.chosen == "gain" and won.candidates["gain"]["lower"] > 0.04
    interval = paired_bootstrap(gain, base)["interval"]
    assert interval[0] < 0.05 < interval[1]
    aps = list_average_precisions([0.1, 0.9, 0.5, 0.8, 0.2], [[1, 0], [0, 0, 1]])
    assert aps.tolist() == [0.5, 1 / 3]


def test_the_answer_keeps_the_base_and_bm25_when_nothing_wins_and_when_a_single_model_does():
    rng = np.random.default_rng(0)
    base = rng.random(300)
    own = base + 0.05 + rng.normal(0, 0.05, 300)
    fused = own - 0.04  # below own by more than the noise: still the answer
    floor = base - 0.02  # the held-out lists may rate it below the base: still the floor
    options = {"base": "base", "floor": "floor", "hedge": "fused", "hedged": frozenset({"own"})}
    hedged = decide({"base": base, "floor": floor, "own": own, "fused": fused}, **options)
    assert (hedged.chosen, hedged.best) == ("fused", "own")
    assert hedged.reason.startswith("own beats base by +0.05")
    assert hedged.reason.endswith(
        "; own answers through fused, which keeps the base's and BM25's shares of the ranking"
    )
    assert hedged.rule.startswith("keep floor unless the best candidate's mean AP gain over base")
    assert hedged.rule.endswith("; a single model that wins answers through fused")
    noisy = base + rng.normal(0, 0.2, 300)
    kept = decide({"base": base, "floor": floor, "own": noisy, "fused": fused - 0.1}, **options)
    assert (kept.chosen, kept.best) == ("floor", "own")
    assert kept.reason.endswith("is within the noise of 300 held-out lists, so floor is kept")
    # a winner that is no single model answers itself
    aps = {"base": base, "floor": floor, "zoo:fusion": own, "fused": fused}
    assert decide(aps, **options).chosen == "zoo:fusion"
    assert decide({"base": base}, **options).chosen == "base"  # no floor scored: the base


def test_pair_files_and_their_errors(tmp_path):
    jsonl = tmp_path / "faq.jsonl"
    jsonl.write_text(
        '{"question": "How do I reset the router? It keeps dropping.", "answer": "Hold reset."}\n'
        '{"title": "Billing date", "body": "When am I billed?"}\n\n',
        encoding="utf-8",
    )
    target = read_threads(jsonl)
    assert [(t.title, t.body, t.answer) for t in target.threads] == [
        ("How do I reset the router?", "It keeps dropping.", "Hold reset."),
        ("Billing date", "When am I billed?", None),
    ]
    assert target.about == {"source": "jsonl", "file": "faq.jsonl", "threads": 2, "answered": 1,
                            "duplicate_links": 0}  # fmt: skip
    jsonl.write_text('{"question": "ok"}\n{"question": 3}\n', encoding="utf-8")
    with pytest.raises(ZooError, match=r"faq.jsonl, line 2: 'question' must be a string$"):
        read_threads(jsonl)
    jsonl.write_text('{"question": "ok"}\n{oops\n', encoding="utf-8")
    with pytest.raises(ZooError, match=r"faq.jsonl, line 2: not valid JSON"):
        read_threads(jsonl)
    tsv = tmp_path / "desk.tsv"
    tsv.write_text("Where is my order?\tIt ships in two days.\nA\tB\tC\n", encoding="utf-8")
    with pytest.raises(ZooError, match=r"desk.tsv, line 2: 3 tab-separated fields"):
        read_threads(tsv)


@pytest.fixture
def tiny_adapt(tiny_sentence_bert_path, monkeypatch):
    """adapt's auto path on the tiny random sentence-BERT, 2 steps a run, 100 centroid
    titles: the plumbing of training, scoring and deciding in seconds."""
    from adapter_zoo.zoo import domain

    monkeypatch.setattr(domain, "MAX_TEXTS", 100)

    def run(target, name, **options):
        from adapter_zoo.adapt.learn import learn_and_decide

        return learn_and_decide(target, name=name, base_model=str(tiny_sentence_bert_path),
                                max_steps=2, **options)  # fmt: skip

    return run


@pytest.mark.slow  # over 10 s: started first (CONTRIBUTING, CI's time budget)
def test_adapt_trains_on_the_target_and_decides_on_its_held_out_lists(
    tiny_adapt, parsed_shipped, poisoned, tiny_sentence_bert_path
):
    path = tiny_adapt(parsed_shipped / BICYCLES, "bikes-adapted", zoo=[])
    record = read_card(path)["adapt"]
    assert record["strategy"] == "learned" and record["requested"] == "auto"
    assert set(record["candidates"]) >= {"base", "base@512", "own", "fusion:best+base+bm25"}
    run = record["training"]["runs"]["own"]
    assert run["steps"] == 2 and run["from"] is None and run["best_step"] >= 1  # never step 0
    # the objectives' pairs add to the questions', no more of them than the questions give
    assert record["training"]["pair_kinds"] == ["question_answer", "title_body", "duplicates",
                                                "objectives"]  # fmt: skip
    pairs = record["training"]["pairs"]
    assert (
        0 < pairs["objectives"] <= pairs["title_body"] + pairs["title_answer"] + pairs["duplicates"]
    )
    assert record["training"]["structure"]["objectives"] == ["ict", "keywords", "psd", "sp", "ssp",
                                                             "title"]  # fmt: skip
    decision = record["decision"]
    assert decision["chosen"] in record["candidates"]
    assert decision["lists"] == sum(record["decision_lists"].values()) > 50
    for name, row in record["candidates"].items():
        assert 0 < row["map"] <= 1 and ("delta" in row) == (name != "base")
    # only the entry itself is left in the zoo: the candidates' entries are removed
    assert sorted(p.name for p in adapter_zoo.zoo_home().iterdir() if not p.name.startswith("."))[
        :1
    ] == ["bikes-adapted"]
    assert str(parsed_shipped) not in json.dumps(record)
    # what it decided on is what the candidates score: the base's MAP again, from scratch
    target = read_threads(parsed_shipped / BICYCLES)
    # the decision lists as adapt builds them: half their negatives the base's nearest
    lists = held_out_lists(target, assign(target.threads), DECISION,
                           embed=_base_embedder(tiny_sentence_bert_path))  # fmt: skip
    base = record["candidates"]["base"]
    scores = adapter_zoo.load(base["model"]).score(lists.pairs())
    assert list_average_precisions(scores, lists.labels).mean() == pytest.approx(base["map"])
    # the test split is never read: a forum whose test questions are poisoned gives the same
    poisoned_run = read_card(tiny_adapt(poisoned, "bikes-p", zoo=[]))["adapt"]
    maps = {name: row["map"] for name, row in record["candidates"].items()}
    assert {name: row["map"] for name, row in poisoned_run["candidates"].items()} == maps
    for run in (poisoned_run, record):
        for candidate in run["training"]["runs"].values():
            candidate.pop("seconds")  # wall time: the one field that may differ
    assert poisoned_run["training"] == record["training"]


def test_the_trained_adapter_is_the_entry_when_it_wins(tiny_adapt, parsed_shipped, monkeypatch):
    from adapter_zoo.adapt import decide as deciding

    original = deciding.decide

    def own_wins(aps, **kw):
        result = original(aps, **kw)
        return dataclasses.replace(result, chosen="own", reason="forced for the test")

    monkeypatch.setattr(deciding, "decide", own_wins)
    path = tiny_adapt(parsed_shipped / BICYCLES, "bikes-own")
    card = read_card(path)
    assert card["mode"] == "adapter" and card["encoder"] == "bi" and card["name"] == "bikes-own"
    assert card["adapt"]["decision"]["chosen"] == "own"
    assert (path / "domain.safetensors").is_file()
    scores = adapter_zoo.load("bikes-own").score([("a question", "an answer")])
    assert np.isfinite(scores).all()


def test_a_target_of_texts_learns_from_its_objectives(tiny_adapt, parsed_shipped, tmp_path):
    rows = [r for r in _questions(parsed_shipped / BEER) if r["split"] != "test"]
    texts = [f"{r['title']} {r['body']}" for r in rows[:300]]
    path = tiny_adapt(texts, "from-texts")
    record = read_card(path)["adapt"]
    # the objectives are the whole signal: their pairs train, their pseudo-queries decide
    assert set(record["decision_lists"]) == {"ict", "sp", "ssp"}  # keywords train only
    assert record["training"]["pair_kinds"] == ["objectives"]
    assert record["training"]["runs"]["own"]["steps_run"] == 2
    used = record["training"]["objectives"]
    assert set(used) == {"ict", "keywords", "sp", "ssp"} and sum(used.values()) == (
        record["training"]["pairs"]["objectives"])  # fmt: skip
    structure = record["training"]["structure"]
    # a text of the list is one document of one paragraph (its blank lines would part them)
    assert structure["documents"] == structure["paragraphs"] == 300 and structure["titles"] == 0
    assert "the objectives' pairs (" in record["texts_only"]
    assert "no answer or duplicate lists were possible" in record["texts_only"]


def test_a_target_too_small_to_decide_is_one_line(tiny_adapt):
    with pytest.raises(ZooError, match="give no held-out list to decide on"):
        tiny_adapt(["one text", "another"], "tiny")
    assert not (adapter_zoo.zoo_home() / "tiny").exists()


@pytest.mark.parametrize("kept", ["base", "base@512"])
def test_keeping_the_base_saves_an_alias_at_the_decided_length(
    tiny_adapt, parsed_shipped, tiny_sentence_bert_path, monkeypatch, kept
):
    from adapter_zoo.adapt import decide as deciding

    original = deciding.decide
    monkeypatch.setattr(
        deciding, "decide", lambda aps, **kw: dataclasses.replace(original(aps, **kw), chosen=kept)
    )
    path = tiny_adapt(parsed_shipped / BICYCLES, "bikes-kept", zoo=[])
    card = read_card(path)
    assert (card["composition"], card["members"]) == ("alias", [f"sbert:{tiny_sentence_bert_path}"])
    assert card.get("max_length") == (512 if kept == "base@512" else None)
    assert card["adapt"]["decision"]["chosen"] == kept
    # no trained candidate is left behind when the base is kept
    assert [p.name for p in adapter_zoo.zoo_home().iterdir() if not p.name.startswith(".")] == [
        "bikes-kept"
    ]


def test_the_base_fused_with_bm25_is_a_candidate_and_its_fusion_the_entry_when_chosen(
    tiny_adapt, parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    from adapter_zoo.adapt import decide as deciding
    from adapter_zoo.compose.fusion import fuse
    from stackexchange.lists import bm25_candidate_scores

    original = deciding.decide
    monkeypatch.setattr(
        deciding,
        "decide",
        lambda aps, **kw: dataclasses.replace(original(aps, **kw), chosen="fusion:base+bm25"),
    )
    path = tiny_adapt(parsed_shipped / BICYCLES, "bikes-fused", zoo=[])
    card = read_card(path)
    base = f"sbert:{tiny_sentence_bert_path}"
    spec = f"fusion:{base}*0.9+bm25*0.1"
    assert card["composition"] == "fusion" and card["spec"] == spec
    record = card["adapt"]
    assert record["candidates"]["fusion:base+bm25"]["model"] == spec
    # its decision-list MAP is the base's scores fused with BM25's, list by list
    target = read_threads(parsed_shipped / BICYCLES)
    # the decision lists as adapt builds them: half their negatives the base's nearest
    lists = held_out_lists(target, assign(target.threads), DECISION,
                           embed=_base_embedder(tiny_sentence_bert_path))  # fmt: skip
    scores = adapter_zoo.load(base).score(lists.pairs())
    bm25, start, fused = bm25_candidate_scores(lists.queries, lists.candidates), 0, []
    for row in bm25:
        fused.append(fuse([scores[start : start + len(row)], row], (0.9, 0.1)))
        start += len(row)
    expected = list_average_precisions(np.concatenate(fused), lists.labels).mean()
    assert record["candidates"]["fusion:base+bm25"]["map"] == pytest.approx(expected)
    # the saved spec ranks the lists as that fusion did (the entry itself refuses a member
    # named by a path, as the tiny base is: adapter_zoo.kinds.composite)
    entry = adapter_zoo.load(card["spec"]).score(lists.pairs())
    assert list_average_precisions(entry, lists.labels).mean() == pytest.approx(expected)


def test_cli_adapt_prints_the_decision_and_every_candidate(
    tiny_adapt, tiny_sentence_bert_path, parsed_shipped, monkeypatch, capsys
):
    import sys

    import adapter_zoo.adapt.learn  # noqa: F401  (the package's adapt function shadows it)
    from adapter_zoo.cli import main

    learn = sys.modules["adapter_zoo.adapt.learn"]
    original = learn.learn_and_decide
    base = str(tiny_sentence_bert_path)

    def on_the_tiny_base(target, **options):
        return original(target, **{**options, "base_model": base, "max_steps": 2})

    monkeypatch.setattr(learn, "learn_and_decide", on_the_tiny_base)
    code = main(["adapt", "--target", str(parsed_shipped / BICYCLES), "--name", "cli-adapted"])
    out = capsys.readouterr().out.splitlines()
    record = read_card(adapter_zoo.zoo_home() / "cli-adapted")["adapt"]
    assert code == 0 and out[0].startswith(f"cli-adapted: {record['decision']['chosen']} -> ")
    assert out[1] == record["reason"]
    assert out[2].startswith(f"held-out lists: {record['decision']['lists']} ")
    spent = record["budget"]["spent_s"]
    assert out[3] == f"budget: 10 min, {spent:.0f} s spent (nothing cut)"  # the default budget
    listed = [line.split()[0] for line in out[4:]]
    assert sorted(listed) == sorted(record["candidates"]) and len(out) == 4 + len(listed)


def test_the_answer_stage_is_chosen_on_the_lists_and_its_choice_is_the_entry(
    tiny_adapt, parsed_shipped, tiny_sentence_bert_path, monkeypatch
):
    from adapter_zoo.adapt import decide as deciding
    from adapter_zoo.adapt import fusion_choice

    # every grid's first other point beats its default on the lists (forced): the base with
    # feedback becomes a candidate and the decision takes it; the fusions' grids are recorded
    # and their candidates keep the default weights
    choose = fusion_choice.choose

    def forced(aps, default, *, seed=0):
        point = next(p for p in aps if p != default)
        return choose({default: aps[default], point: aps[point] + 1.0}, default, seed=seed)

    monkeypatch.setattr(fusion_choice, "choose", forced)
    original = deciding.decide
    monkeypatch.setattr(
        deciding,
        "decide",
        lambda aps, **kw: dataclasses.replace(original(aps, **kw), chosen="prf:base"),
    )
    path = tiny_adapt(parsed_shipped / BICYCLES, "bikes-prf", zoo=[])
    card = read_card(path)
    record = card["adapt"]
    stage = record["answer_stage"]
    assert stage["base_fusion"]["replaced"] and stage["feedback"]["replaced"]
    assert stage["base_fusion"]["chosen"] == {"base": 1.0, "bm25": 0.0, "normalisation": "zscore"}
    default = {"base": 0.9, "bm25": 0.1, "normalisation": "zscore"}
    assert not stage["base_fusion"]["applied"] and stage["base_fusion"]["answers_with"] == default
    assert stage["feedback"]["chosen"] == {"k": 1, "w": 0.1}
    base = f"sbert:{tiny_sentence_bert_path}"
    assert record["candidates"]["fusion:base+bm25"]["model"] == f"fusion:{base}*0.9+bm25*0.1"
    assert not any(c.endswith("@tuned") for c in record["candidates"])
    assert record["candidates"]["prf:base"]["model"] == f"prf:{base}@k=1,w=0.1"
    assert stage["fusion"]["replaced"] and not stage["fusion"]["applied"]
    assert record["candidates"]["fusion:best+base+bm25"]["model"].endswith("*0.45+bm25*0.1")
    assert card["composition"] == "prf" and card["spec"] == f"prf:{base}@k=1,w=0.1"
    # the saved spec ranks the decision lists as the feedback candidate did
    target = read_threads(parsed_shipped / BICYCLES)
    # the decision lists as adapt builds them: half their negatives the base's nearest
    lists = held_out_lists(target, assign(target.threads), DECISION,
                           embed=_base_embedder(tiny_sentence_bert_path))  # fmt: skip
    scores = adapter_zoo.load(card["spec"]).score(lists.pairs())
    expected = record["candidates"]["prf:base"]["map"]
    assert list_average_precisions(scores, lists.labels).mean() == pytest.approx(expected)


def _base_embedder(path):
    from adapter_zoo.adapt.negatives import CachedEmbedder

    return CachedEmbedder(lambda: adapter_zoo.load(f"sbert:{path}"))


def test_the_decision_lists_negatives_come_half_from_bm25_half_from_the_base(
    parsed_shipped, tiny_sentence_bert_path
):
    from adapter_zoo.training.data import FALSE_NEGATIVE_MARGIN

    target = read_threads(parsed_shipped / BEER)
    parts = assign(target.threads)
    bm25_only = held_out_lists(target, parts, DECISION)
    embed = _base_embedder(tiny_sentence_bert_path)
    lists = held_out_lists(target, parts, DECISION, embed=embed)
    # the same lists (kinds, queries, positives, sizes); only the negatives differ
    assert (lists.kinds, lists.queries) == (bm25_only.kinds, bm25_only.queries)
    assert len(lists) > 200 and len(lists.sources) == len(lists)
    pool = list(dict.fromkeys(t for cands in bm25_only.candidates for t in cands))
    rows = embed(pool)
    changed = 0
    for i, (query, candidates, labels, sources) in enumerate(
        zip(lists.queries, lists.candidates, lists.labels, lists.sources)
    ):
        old = bm25_only.candidates[i]
        positives = {c for c, y in zip(candidates, labels) if y}
        assert positives == {c for c, y in zip(old, bm25_only.labels[i]) if y}
        assert len(candidates) == len(old) and len(set(candidates)) == len(candidates)
        assert [s == "positive" for s in sources] == [bool(y) for y in labels]
        negatives = len(candidates) - len(positives)
        bm25, base = sources.count("bm25"), sources.count("base")
        # equal shares, BM25 the odd one, unless the base had no more texts below the
        # near-copy bar (the tiny random encoder's cosines are all close); each text once
        assert bm25 + base == negatives and bm25 - base >= 0
        # BM25's share is its own nearest, in its order
        old_negatives = [c for c, y in zip(old, bm25_only.labels[i]) if not y]
        from_bm25 = {c for c, s in zip(candidates, sources) if s == "bm25"}
        assert from_bm25 <= set(old_negatives)
        # the base's share: the nearest texts of the pool below the near-copy bar
        q = embed([query])[0]
        sims = rows @ q
        ceiling_sim = max(float(embed([p])[0] @ q) for p in positives)
        ceiling = ceiling_sim - (1 - FALSE_NEGATIVE_MARGIN) * abs(ceiling_sim)
        from_base = [c for c, s in zip(candidates, sources) if s == "base"]
        eligible = {t for t, x in zip(pool, sims) if x < ceiling} - positives
        assert bm25 - base in (0, 1) or eligible - from_bm25 <= set(from_base)
        if from_base:
            lowest = min(float(embed([c])[0] @ q) for c in from_base)
            assert all(float(embed([c])[0] @ q) < ceiling for c in from_base)
            passed_over = [s for t, s in zip(pool, sims)
                           if t not in candidates and s < ceiling]  # fmt: skip
            assert all(s <= lowest + 1e-6 for s in passed_over)
        changed += set(candidates) != set(old)
    assert changed > len(lists) / 2
    # the lists a budget keeps: the same lists, mixed, and only their texts embedded
    from adapter_zoo.adapt.stage_sizes import kept_lists

    kept = kept_lists(bm25_only, bm25_only.subset([3, 40, 41, 200]))
    few_embed = _base_embedder(tiny_sentence_bert_path)
    few = held_out_lists(target, parts, DECISION, embed=few_embed, subset=kept)
    assert kept == [3, 40, 41, 200] and few.queries == [bm25_only.queries[i] for i in kept]
    assert set(few_embed.rows) == set(few.texts()) | {
        t for i in kept for t in bm25_only.candidates[i]
    }
    # every text of the lists was embedded once: the decision's scoring reads the same rows
    assert set(lists.texts()) <= set(embed.rows)


def test_the_mixed_lists_read_no_evaluation_text_and_training_no_decision_text(
    poisoned, parsed_shipped, tiny_sentence_bert_path, tmp_path
):
    target = read_threads(poisoned)
    parts = assign(target.threads)
    lists = held_out_lists(target, parts, DECISION, embed=_base_embedder(tiny_sentence_bert_path))
    assert not any(POISON in t for t in [*lists.queries, *sum(lists.candidates, [])])
    clean = read_threads(parsed_shipped / BICYCLES)
    again = held_out_lists(clean, assign(clean.threads), DECISION,
                           embed=_base_embedder(tiny_sentence_bert_path))  # fmt: skip
    assert (again.queries, again.candidates) == (lists.queries, lists.candidates)
    # a decision list's query and positives are decision threads' texts: none is trained on
    forum = write_training_folder(target, parts, tmp_path)
    written = b"".join(f.read_bytes() for f in forum.rglob("*") if f.is_file())
    trained = {t.body for t, p in zip(target.threads, parts) if p != DECISION}
    held = [t.body for t, p in zip(target.threads, parts) if p == DECISION]
    assert not any(b.encode() in written for b in held if len(b) > 40 and b not in trained)
