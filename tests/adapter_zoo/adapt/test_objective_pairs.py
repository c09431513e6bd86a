"""The objectives in adapt's run: a target's documents and their parts, the objectives'
pairs in the training folder (never a decision document's text), a texts-only target's
lists from the same pseudo-queries, documents folders and BEIR corpora as targets, and the
bi-encoder trainer taking the objectives' own hard negatives."""

from __future__ import annotations

import json

import numpy as np

from adapter_zoo.adapt.heldout import (
    DECISION,
    SELECTION,
    TRAIN,
    assign,
    held_out_lists,
    write_training_folder,
)
from adapter_zoo.adapt.objective_pairs import part_corpus, structure, usable_objectives
from adapter_zoo.adapt.threads import read_threads
from adapter_zoo.training.bi import pair_dataset
from adapter_zoo.training.data import PairTable, load_pairs
from stackexchange.store import read_dataset

BEER = "beer.stackexchange.com"


def _texts(parsed_shipped, n=300):
    rows = read_dataset(parsed_shipped / BEER / "questions").to_list()
    return [f"{r['title']} {r['body']}" for r in rows if r["split"] != "test"][:n]


def _written(folder) -> bytes:
    return b"".join(f.read_bytes() for f in folder.rglob("*") if f.is_file())


def test_a_texts_only_target_trains_on_objective_pairs_and_never_on_a_decision_document(
    parsed_shipped, tmp_path
):
    target = read_threads(_texts(parsed_shipped))
    parts = assign(target.threads)
    forum = write_training_folder(target, parts, tmp_path)
    stats = json.loads((forum / "stats.json").read_text())
    assert stats["pairs"]["title_body"]["train"] == 0  # the objectives are the whole signal
    # about one example of each objective a training document (a few too short to carry
    # meaning)
    assert set(stats["objectives"]) == {"ict", "keywords", "sp", "ssp"}
    assert all(0.95 * parts.count(TRAIN) <= n <= parts.count(TRAIN)
               for n in stats["objectives"].values())  # fmt: skip
    assert stats["structure"] == {"documents": 300, "paragraphs": 300, "sentences": 1418,
                                  "titles": 0, "objectives": ["ict", "keywords", "sp", "ssp"]}  # fmt: skip
    (table,) = load_pairs(tmp_path, target.name, ("objectives",), "train")
    assert len(table) == sum(stats["objectives"].values())
    # one document of one paragraph: no hard negative of its own, the trainer mines them all
    assert table.negatives == [""] * len(table)
    # no sentence of a decision document (that no other document has) is written anywhere
    trained = part_corpus(target, parts, TRAIN).documents
    decided = part_corpus(target, parts, DECISION).documents
    assert len(decided) == parts.count(DECISION) > 50
    elsewhere = {s for d in trained + part_corpus(target, parts, SELECTION).documents
                 for p in d.paragraphs for s in p}  # fmt: skip
    unique = {s for d in decided for p in d.paragraphs for s in p
              if len(s) > 30 and s not in elsewhere}  # fmt: skip
    written = _written(forum)
    assert len(unique) > 100 and not [s for s in unique if s.encode() in written]


def test_a_texts_only_target_decides_and_selects_on_its_pseudo_queries(parsed_shipped):
    target = read_threads(_texts(parsed_shipped))
    parts = assign(target.threads)
    decision = held_out_lists(target, parts, DECISION)
    # about one list a decision document, the objectives taking turns; keyword queries
    # (terms of their own positive, BM25's own query form) train but do not judge
    share = -(-parts.count(DECISION) // 3)
    assert decision.counts() == {"ict": share, "sp": share, "ssp": share}
    decided = part_corpus(target, parts, DECISION).documents
    own = {s for d in decided for p in d.paragraphs for s in p}
    assert all(sum(labels) == 1 for labels in decision.labels)
    # an SSP query is a span of a decision document's paragraph
    ssp = [q for k, q in zip(decision.kinds, decision.queries) if k == "ssp"]
    assert all(any(q.startswith(s) for s in own) for q in ssp)
    selection = held_out_lists(target, parts, SELECTION)
    assert set(selection.kinds) == {"ict", "sp", "ssp"}
    assert not set(selection.queries) & set(decision.queries)
    assert held_out_lists(target, parts, DECISION).queries == decision.queries  # seeded


def test_a_texts_only_target_of_single_sentences_judges_on_its_keyword_queries():
    # no title, paragraph or sentence pair: keywords is the only objective its texts allow
    texts = [f"Premium {i} covers {w} damage" for i, w in
             enumerate(["flood", "fire", "storm", "theft", "hail", "wind"] * 60)]  # fmt: skip
    target = read_threads(texts)
    parts = assign(target.threads)
    assert usable_objectives(target.documents()[0]) == ["keywords"]
    decision = held_out_lists(target, parts, DECISION)
    assert decision.counts() == {"keywords": parts.count(DECISION)}


def test_a_texts_only_targets_lists_take_half_their_negatives_from_the_base(
    parsed_shipped, tiny_sentence_bert_path
):
    import adapter_zoo
    from adapter_zoo.adapt.negatives import CachedEmbedder

    target = read_threads(_texts(parsed_shipped))
    parts = assign(target.threads)
    bm25_only = held_out_lists(target, parts, DECISION)
    embed = CachedEmbedder(lambda: adapter_zoo.load(f"sbert:{tiny_sentence_bert_path}"))
    lists = held_out_lists(target, parts, DECISION, embed=embed)
    assert (lists.kinds, lists.queries) == (bm25_only.kinds, bm25_only.queries)
    for i, (candidates, labels, sources) in enumerate(
        zip(lists.candidates, lists.labels, lists.sources)
    ):
        old = bm25_only.candidates[i]
        positive = [c for c, y in zip(candidates, labels) if y]
        assert positive == [c for c, y in zip(old, bm25_only.labels[i]) if y]
        assert len(set(candidates)) == len(candidates) == len(old)
        bm25, base = sources.count("bm25"), sources.count("base")
        assert bm25 + base == len(candidates) - 1 and bm25 - base >= 0
        # BM25's share (the objective's own negatives first) comes from the list it replaces
        assert {c for c, s in zip(candidates, sources) if s == "bm25"} <= set(old)
    assert sum(s.count("base") for s in lists.sources) > len(lists)


def test_a_forum_target_keeps_its_lists_and_adds_objective_pairs(parsed_shipped, tmp_path):
    target = read_threads(parsed_shipped / BEER)
    parts = assign(target.threads)
    assert set(held_out_lists(target, parts, DECISION).kinds) == {"answer", "body", "duplicate"}
    forum = write_training_folder(target, parts, tmp_path)
    stats = json.loads((forum / "stats.json").read_text())
    questions = sum(
        stats["pairs"][k]["train"] for k in ("title_body", "title_answer", "duplicates")
    )
    assert stats["pairs"]["title_body"]["train"] > 0
    assert 0 < sum(stats["objectives"].values()) <= questions
    assert set(stats["objectives"]) == set(structure(target)["objectives"]) == {
        "ict", "keywords", "psd", "sp", "ssp", "title"}  # fmt: skip
    decided = {str(t.id) for t, p in zip(target.threads, parts) if p == DECISION}
    assert not decided & {d.id for d in part_corpus(target, parts, TRAIN).documents}
    # a thread's question and answer paragraphs give hard negatives of its own
    (table,) = load_pairs(tmp_path, target.name, ("objectives",), "train")
    assert sum(bool(n) for n in table.negatives) > len(table) / 4


def test_a_documents_folder_and_a_beir_corpus_are_targets(tmp_path):
    folder = tmp_path / "help"
    folder.mkdir()
    (folder / "reset.md").write_text("# Resetting\n\nHold the button for ten seconds. The light "
                                     "blinks.\n\nThen wait a minute for it to restart.\n")  # fmt: skip
    (folder / "billing.html").write_text("<title>Billing</title><p>You are billed monthly. "
                                         "Invoices come by mail.</p>")  # fmt: skip
    target = read_threads(folder)
    assert target.texts_only and [t.title for t in target.threads] == [
        "You are billed monthly.", "Hold the button for ten seconds."]  # fmt: skip
    assert target.about == {"source": "folder", "files": 2, "texts": 2, "threads": 2,
                            "answered": 0, "duplicate_links": 0}  # fmt: skip
    assert usable_objectives(target.documents()[0]) == ["ict", "keywords", "psd", "sp", "ssp",
                                                        "title"]  # fmt: skip
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "d1", "title": "Billing", "text": "You are billed "
                                  "monthly. Invoices come by mail."}) + "\n")  # fmt: skip
    beir = read_threads(corpus)
    assert beir.texts_only and beir.documents()[0].documents[0].id == "d1"
    assert beir.about["source"] == "jsonl"


def test_the_bi_encoder_trains_on_a_pair_tables_own_negatives():
    table = PairTable("f", "objectives", ["a1", "a2", "a3"], ["p1", "p2", "p3"],
                      neighbours=np.array([[1], [0], [0]]), negatives=["n1", "", "n3"])  # fmt: skip
    rows = pair_dataset([table], hard_negatives=True, seed=0)
    assert rows["negative"] == ["n1", "p1", "n3"]  # a row without one keeps the mined one
    mined = pair_dataset([table], hard_negatives=True, seed=0, bm25_labels=True)
    assert mined["negative"] == ["p2", "p1", "p1"]
