"""Compositions (adapter_zoo.compose): fusion maths, rerank's top k, specs, composite entries."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.cli import main
from adapter_zoo.compose import BM25Scorer, Rerank, ScoreFusion, compose_entry, parse_spec
from adapter_zoo.compose.entry import WEIGHT_GRID, dev_lists_of
from adapter_zoo.training import TrainingConfig
from adapter_zoo.training.models import setup_model, write_entry_weights
from adapter_zoo.training.selection import dev_metrics
from adapter_zoo.zoo import save_entry, verify_entry

PLAIN_DECIMAL = "must be a plain decimal number >= 0, such as 0.2"


class TableScorer:
    """A fake member: fixed scores per (query, candidate); records every call's pairs."""

    def __init__(self, table: dict):
        self.table = table
        self.calls: list[list[tuple[str, str]]] = []

    def score(self, pairs):
        self.calls.append(list(pairs))
        return np.asarray([self.table[p] for p in pairs], dtype=np.float32)


def tiny_entry(parsed, base, name: str, seed: int) -> None:
    """A zoo adapter entry on the tiny random BERT, its adapter and head randomised."""
    config = TrainingConfig(
        mode="adapter", data=str(parsed), forums=("beer",), name=name, base_model=str(base)
    )
    torch.manual_seed(seed)
    model, tokenizer, setup = setup_model(config)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.requires_grad:
                parameter.add_(torch.randn_like(parameter) * 0.5)
    card = {"mode": "adapter", "layout": "adapter", "base_model": str(base),
            "forums": ["beer"], "head": setup["head"], "max_length": 64}  # fmt: skip
    save_entry(lambda f: write_entry_weights(model, tokenizer, config, setup, f), name, card)


@pytest.fixture
def entries(parsed_fixture, tiny_bert_path):
    """Two tiny zoo entries, ``tiny-a`` and ``tiny-b``."""
    tiny_entry(parsed_fixture, tiny_bert_path, "tiny-a", 1)
    tiny_entry(parsed_fixture, tiny_bert_path, "tiny-b", 2)
    return "tiny-a", "tiny-b"


# (question, answer, split): each answer repeats its question's words, so BM25 finds it
TOPICS = ["stout", "lager", "hops", "yeast", "barrel", "porter", "malt", "cask", "cider", "mead"]


@pytest.fixture
def parsed_forum(tmp_path):
    """A parsed forum (questions/ only, as compose reads it) with 10 dev questions."""
    import datasets

    rows = []
    for i in range(40):
        word, other = TOPICS[i % 10], TOPICS[(i + 3) % 10]
        rows.append({"id": i, "title": f"how do I store {word} number {i}?",
                     "body": f"my {word} and the {other}", "tags": [word], "score": 1,
                     "accepted_answer_id": 1000 + i,
                     "accepted_answer": f"store {word} {i} cold, away from {other}",
                     "split": "dev" if i % 4 == 0 else "train"})  # fmt: skip
    folder = tmp_path / "parsed" / "tiny.stackexchange.com"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder / "questions"))
    (folder / "stats.json").write_text(json.dumps({"forum": "tiny.stackexchange.com"}))
    return tmp_path / "parsed"


# -- fusion ------------------------------------------------------------------------------


def test_fusion_z_normalises_each_member_per_query():
    pairs = [("q1", "a"), ("q2", "x"), ("q1", "b"), ("q1", "c"), ("q2", "y")]
    first = TableScorer({("q1", "a"): 1, ("q1", "b"): 2, ("q1", "c"): 3,
                         ("q2", "x"): 10, ("q2", "y"): 20})  # fmt: skip
    second = TableScorer({("q1", "a"): 5, ("q1", "b"): 5, ("q1", "c"): 5,
                          ("q2", "x"): 0, ("q2", "y"): 4})  # fmt: skip
    fusion = ScoreFusion([first, second], [1.0, 0.5], ["first", "second"])
    scores = fusion.score(pairs)
    z = np.sqrt(1.5)  # z-scores of 1, 2, 3 are -sqrt(1.5), 0, sqrt(1.5)
    # q1: second is constant and adds 0; q2: both z-scores are -1, 1 -> 1 * z + 0.5 * z
    np.testing.assert_allclose(scores, [-z, -1.5, 0.0, z, 1.5], rtol=1e-6)
    assert scores.dtype == np.float32
    assert first.calls == [pairs] and second.calls == [pairs]  # each member scores once
    assert fusion.rank("q1", ["c", "a", "b"]) == [
        ("c", pytest.approx(z)), ("b", 0.0), ("a", pytest.approx(-z))
    ]  # fmt: skip
    assert fusion.rank("q1", ["a", "b", "c"], top_k=1)[0][0] == "c"
    assert repr(fusion) == "ScoreFusion(1*first + 0.5*second)"
    assert ScoreFusion([first]).score([("q1", "a")]).tolist() == [0.0]  # one candidate: std 0
    with pytest.raises(ZooError, match=r"^score fusion: 2 members, 1 weights, 2 names$"):
        ScoreFusion([first, second], [1.0])


def test_bm25_scorer_is_the_bm25_baseline_per_query():
    from benchmarks.baselines import bm25_scores

    rows = {"query": ["stout glass", "bike chain"],
            "candidates": [["a stout glass", "a bike", "glass glass"], ["chain oil", "stout"]]}  # fmt: skip
    expected = bm25_scores(rows)
    pairs = [(q, c) for q, cs in zip(rows["query"], rows["candidates"]) for c in cs]
    order = [4, 0, 3, 2, 1]  # the queries interleaved: grouping must undo it
    scores = BM25Scorer().score([pairs[i] for i in order])
    flat = np.concatenate(expected).astype(np.float32)
    np.testing.assert_array_equal(scores, flat[order])
    assert flat[0] > 0 and flat[3] > 0  # the lexical matches score


# -- rerank ------------------------------------------------------------------------------


def test_rerank_sends_only_the_top_k_to_the_reranker_and_orders_them_first():
    retrieved = {("q1", c): s for c, s in zip("abcde", [0.1, 0.9, 0.5, 0.9, 0.2])}
    retrieved |= {("q2", c): s for c, s in zip("vwxyz", [3.0, 1.0, 2.0, 0.0, 4.0])}
    reranked = {pair: -score for pair, score in retrieved.items()}  # the opposite opinion
    retriever, reranker = TableScorer(retrieved), TableScorer(reranked)
    rerank = Rerank(retriever, reranker, top_k=2)
    pairs = [("q1", c) for c in "abcde"] + [("q2", c) for c in "vwxyz"]
    scores = rerank.score(pairs)
    assert retriever.calls == [pairs]
    # q1's top 2: b and d tie at 0.9 (input order); q2's: z then v
    assert reranker.calls == [[("q1", "b"), ("q1", "d"), ("q2", "z"), ("q2", "v")]]
    # within the top 2 the reranker decides (equal for b, d: input order), then the retriever
    assert [c for c, _ in rerank.rank("q1", list("abcde"))] == ["b", "d", "c", "e", "a"]
    assert [c for c, _ in rerank.rank("q2", list("vwxyz"))] == ["v", "z", "x", "w", "y"]
    q1, q2 = scores[:5], scores[5:]
    assert q1[1] == q1[3] == np.float32(-0.9)  # reranked pairs keep the reranker's score
    assert q1[2] == np.float32(-0.9 - 1.0)  # the best of the rest: 1 below the lowest
    np.testing.assert_allclose(q2, [-3.0, -6.0, -5.0, -7.0, -4.0])
    assert len(reranker.calls[-1]) == 2  # rank() of one query: 2 pairs again
    for bad in (0, -1, 2.5, True, 10**9):  # 10**9: cut to the list, but in the card as given
        with pytest.raises(
            ZooError, match=rf"^rerank: top_k must be a whole number in \[1, 10000\], not {bad}$"
        ):
            Rerank(retriever, reranker, top_k=bad)


# -- specs -------------------------------------------------------------------------------


def test_specs_parse_with_default_weights_and_k():
    spec = parse_spec("fusion:beer+sbert:minilm-l6*0.2+bm25*0.1")
    assert (spec.composition, spec.members, spec.weights) == (
        "fusion", ("beer", "sbert:minilm-l6", "bm25"), (1.0, 0.2, 0.1))  # fmt: skip
    assert str(spec) == "fusion:beer+sbert:minilm-l6*0.2+bm25*0.1"
    spec = parse_spec("rerank:org/bi-encoder>./entries/beer")
    assert (spec.members, spec.top_k) == (("org/bi-encoder", "./entries/beer"), 20)
    assert parse_spec("rerank:bm25>beer@5").top_k == 5


def test_spec_strings_write_weights_as_plain_decimals_that_parse_back():
    spec = parse_spec("fusion:a+b*.00001+c*2.")
    assert spec.weights == (1.0, 1e-05, 2.0)
    assert str(spec) == "fusion:a+b*0.00001+c*2"  # not 1e-05, which the parser refuses
    assert parse_spec(str(spec)) == spec


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("fusion:", "empty member 1"),
        ("fusion:beer", "fusion needs at least two members (A+B)"),
        ("fusion:beer++bm25", "empty member 2"),
        *[
            (f"fusion:beer+bm25*{w}", f"weight {w!r} of member 2 {PLAIN_DECIMAL}")
            # float() reads every one of these; a weight is a plain decimal only
            for w in ("x", "", "-1", "inf", "nan", "1_0", " 1", "0x1", "1e3", "\uff11")
        ],
        ("fusion:beer*0+bm25*0", "every weight is 0"),
        ("fusion:beer+beer*0.5", "member 'beer' appears twice"),
        ("rerank:bm25", "expected rerank:RETRIEVER>RERANKER[@K]"),
        ("rerank:a>b>c", "expected rerank:RETRIEVER>RERANKER[@K]"),
        ("rerank:>beer", "empty retriever"),
        ("rerank:bm25>@3", "empty reranker"),
        ("rerank:bm25>beer@0", "top k '0' is not a positive integer"),
        ("rerank:bm25>beer@ten", "top k 'ten' is not a positive integer"),
        (
            "rerank:bm25>beer@\u00b2",
            "top k '\u00b2' is not a positive integer",
        ),  # isdigit() says yes
        ("rerank:bm25>beer@1_0", "top k '1_0' is not a positive integer"),
        (
            "fusion:beer+rerank:a>b",
            "member 2 'rerank:a>b' is itself a composition; save it as "
            "a zoo entry (adapter-zoo compose) and name the entry",
        ),  # fmt: skip
    ],
)
def test_bad_specs_name_the_spec_and_the_problem(spec, problem):
    with pytest.raises(ZooError) as error:
        adapter_zoo.load(spec)
    assert str(error.value) == f"model spec {spec!r}: {problem}"


# -- loading -----------------------------------------------------------------------------


def test_load_composes_zoo_entries_by_spec(entries):
    pairs = [("why is my stout flat", "flat stout: dead yeast"), ("why is my stout flat", "a bike"),
             ("what are hops", "flowers"), ("what are hops", "stout glasses"),
             ("what are hops", "dried hops")]  # fmt: skip
    a, b, bm25 = adapter_zoo.load("tiny-a"), adapter_zoo.load("tiny-b"), adapter_zoo.load("bm25")
    assert isinstance(bm25, BM25Scorer)
    fused = adapter_zoo.load("fusion:tiny-a+tiny-b*0.2+bm25*0.1", device="cpu")
    assert isinstance(fused, ScoreFusion) and fused.names == ["tiny-a", "tiny-b", "bm25"]
    assert fused.name == "fusion:tiny-a+tiny-b*0.2+bm25*0.1"
    by_member = [m.score(pairs).astype(np.float64) for m in (a, b, bm25)]
    assert all(np.ptp(s[:2]) > 0 and np.ptp(s[2:]) > 0 for s in by_member)  # real signals
    expected = []
    for group in (slice(0, 2), slice(2, 5)):
        zs = [(s[group] - s[group].mean()) / s[group].std() for s in by_member]
        expected += list(zs[0] + 0.2 * zs[1] + 0.1 * zs[2])
    np.testing.assert_allclose(fused.score(pairs), expected, rtol=1e-5, atol=1e-6)
    rerank = adapter_zoo.load("rerank:bm25>tiny-a@2")
    assert isinstance(rerank, Rerank) and rerank.top_k == 2
    assert isinstance(rerank.retriever, BM25Scorer) and rerank.reranker.card["name"] == "tiny-a"
    with pytest.raises(ZooError, match=r"a composition takes no revision or base_model"):
        adapter_zoo.load("fusion:tiny-a+bm25", revision="main")
    with pytest.raises(ZooError, match=r"^unknown adapter 'tiny-c'"):
        adapter_zoo.load("fusion:tiny-a+tiny-c")


# -- composite entries -------------------------------------------------------------------


def test_compose_entry_chooses_fusion_weights_on_dev(entries, parsed_forum):
    host, lists = dev_lists_of(parsed_forum, "tiny")
    assert host == "tiny.stackexchange.com" and len(lists) == 10
    assert all(len(cands) == 20 for _, cands in lists)
    path = compose_entry("fused", ["tiny-a", "bm25"], data=parsed_forum, forum="tiny")
    card = verify_entry(path)
    assert (card["mode"], card["encoder"], card["composition"]) == ("composite",) * 2 + ("fusion",)
    assert card["members"] == ["tiny-a", "bm25"] and card["forum"] == host
    a, bm25 = adapter_zoo.load("tiny-a"), BM25Scorer()
    # the grid, recomputed through ScoreFusion.score on the same lists
    maps = {w: dev_metrics(ScoreFusion([a, bm25], [1.0, w]), lists)["dev_map"] for w in WEIGHT_GRID}
    best = max(maps.values())
    assert card["weights"] == [1.0, next(w for w in WEIGHT_GRID if maps[w] == best)]
    assert card["weights"][1] > 0  # BM25 finds these answers; the random adapter does not
    assert card["dev_map"] == {
        "members": {"tiny-a": dev_metrics(a, lists)["dev_map"],
                    "bm25": dev_metrics(bm25, lists)["dev_map"]},
        "composite": best,
    }  # fmt: skip
    assert card["dev_map"]["composite"] > card["dev_map"]["members"]["tiny-a"]
    assert card["spec"] == str(parse_spec(f"fusion:tiny-a+bm25*{card['weights'][1]}"))
    loaded = adapter_zoo.load("fused")
    assert isinstance(loaded, ScoreFusion) and loaded.weights == card["weights"]
    assert loaded.card["name"] == "fused"
    assert dev_metrics(loaded, lists)["dev_map"] == best
    with pytest.raises(ZooError, match=r"^zoo entry 'fused' already exists"):
        compose_entry("fused", ["tiny-a", "bm25"])
    with pytest.raises(ZooError, match=r"^composite 'tiny-a' cannot have itself as a member"):
        compose_entry("tiny-a", "fusion:tiny-a+bm25", overwrite=True)
    assert adapter_zoo.load("tiny-a").card["mode"] == "adapter"  # nothing replaced
    for name in ("bm25", "fusion:a+b"):
        with pytest.raises(ZooError, match=r"is read as a model spec, not a zoo name"):
            compose_entry(name, "fusion:tiny-a+bm25")
    with pytest.raises(ZooError, match=r"^unknown adapter 'tiny-c'"):
        compose_entry("other", ["tiny-a", "tiny-c"])
    assert not (adapter_zoo.zoo_home() / "other").exists()
    with pytest.raises(ZooError, match=r"needs both data .* and forum$"):
        compose_entry("other", ["tiny-a", "bm25"], data=parsed_forum)


def test_compose_entry_rerank_records_dev_maps(entries, parsed_forum):
    _, lists = dev_lists_of(parsed_forum, "tiny")
    path = compose_entry("rr", ["bm25", "tiny-a"], composition="rerank", top_k=3,
                         data=parsed_forum, forum="tiny")  # fmt: skip
    card = verify_entry(path)
    assert (card["spec"], card["top_k"], "weights" in card) == ("rerank:bm25>tiny-a@3", 3, False)
    loaded = adapter_zoo.load("rr")
    assert isinstance(loaded, Rerank) and loaded.top_k == 3
    assert card["dev_map"]["composite"] == pytest.approx(dev_metrics(loaded, lists)["dev_map"])
    assert card["dev_map"]["members"]["bm25"] == dev_metrics(BM25Scorer(), lists)["dev_map"]


def test_cli_compose_round_trip(entries, parsed_forum, capsys):
    argv = ["compose", "--name", "cli-fused", "--fusion", "tiny-a", "tiny-b", "bm25",
            "--data", str(parsed_forum), "--forum", "tiny"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    card = adapter_zoo.load("cli-fused").card
    assert out[0].startswith(f"cli-fused: {card['spec']} -> ")
    assert out[1] == "dev MAP on tiny.stackexchange.com (10 lists):"
    assert out[2].split() == ["model", "weight", "dev", "MAP"]
    assert out[3].split() == ["tiny-a", "1.0", f"{card['dev_map']['members']['tiny-a']:.4f}"]
    assert out[5].split() == ["bm25", str(card["weights"][2]),
                              f"{card['dev_map']['members']['bm25']:.4f}"]  # fmt: skip
    assert out[6].split() == ["cli-fused", f"{card['dev_map']['composite']:.4f}"]
    assert main(["list"]) == 0
    assert "cli-fused                composite  composite" in capsys.readouterr().out
    assert main(["compose", "--name", "cli-rr", "--rerank", "bm25", "tiny-b", "--top-k", "4"]) == 0
    assert adapter_zoo.load("cli-rr").card["spec"] == "rerank:bm25>tiny-b@4"
    assert "dev MAP" not in capsys.readouterr().out  # nothing chosen without --data
    for argv, message in [
        (["--name", "x", "--fusion", "a", "b", "--top-k", "3"], "--top-k is only used with --rerank"),
        (["--name", "cli-rr", "--rerank", "bm25", "tiny-a"], "zoo entry 'cli-rr' already exists"),
        (["--name", "x", "--fusion", "tiny-a", "bm25", "--data", str(parsed_forum),
          "--forum", "nope"], f"{parsed_forum}: no parsed forum 'nope'"),
        (["--name", "x", "--fusion", "tiny-a", "bm25*1_0"], "model spec 'fusion:tiny-a+bm25*1_0': "
         f"weight '1_0' of member 2 {PLAIN_DECIMAL}"),
    ]:  # fmt: skip
        assert main(["compose", *argv]) == 2
        assert capsys.readouterr().err.startswith(f"adapter-zoo compose: error: {message}")


# -- cycles among composites ---------------------------------------------------------------


def test_a_composite_that_would_contain_itself_is_refused_when_saved(entries, capsys):
    compose_entry("c1", "fusion:tiny-a+bm25")
    compose_entry("c2", "fusion:c1+bm25")
    card_before = (adapter_zoo.zoo.zoo_home() / "c1" / "card.json").read_text()
    with pytest.raises(ZooError) as error:
        compose_entry("c1", "fusion:c2+bm25", overwrite=True)
    assert str(error.value) == "composite 'c1' would contain itself: c1 -> c2 -> c1"
    assert (adapter_zoo.zoo.zoo_home() / "c1" / "card.json").read_text() == card_before
    assert main(["compose", "--name", "c1", "--fusion", "bm25", "c2", "--overwrite"]) == 2
    assert capsys.readouterr().err == (
        "adapter-zoo compose: error: composite 'c1' would contain itself: c1 -> c2 -> c1\n"
    )
    assert (adapter_zoo.zoo.zoo_home() / "c1" / "card.json").read_text() == card_before


def test_a_composite_containing_itself_through_another_is_one_line_when_loaded(entries, capsys):
    compose_entry("c1", "fusion:tiny-a+bm25")
    compose_entry("c2", "fusion:c1+bm25")
    # tampered by hand: the card is not hashed, so only the load guard can stop the cycle
    card_file = adapter_zoo.zoo.zoo_home() / "c1" / "card.json"
    card = json.loads(card_file.read_text())
    card["spec"] = "fusion:c2+bm25"
    card_file.write_text(json.dumps(card))
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("c1")
    home = adapter_zoo.zoo.zoo_home()
    assert (
        str(error.value) == f"{home / 'c1'}: composite entry 'c1' contains itself (c1 -> c2 -> c1)"
    )
    assert main(["compose", "--name", "c3", "--fusion", "c1", "bm25"]) == 2
    assert capsys.readouterr().err == f"adapter-zoo compose: error: {error.value}\n"
    assert not (home / "c3").exists()
