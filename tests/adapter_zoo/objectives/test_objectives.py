"""Each objective's pairs on a tiny real corpus: which spans A and B are, which negatives,
hard (A's document) before easy (other documents), the same for the same seed; and the one
registry table."""

from __future__ import annotations

import pytest

from adapter_zoo.documents import Corpus, Document, read_documents
from adapter_zoo.errors import ZooError
from adapter_zoo.objectives import (
    OBJECTIVES,
    ObjectiveExample,
    build_examples,
    get_objective,
    objective_names,
)
from adapter_zoo.objectives.keywords import terms

# A MedQuAD answer (NIDDK, public domain) and two InsuranceQA answers, as a BEIR corpus.
DYSPLASIA = (
    "The long-term outlook for a child with kidney dysplasia in only one kidney is generally "
    "good. A person with one working kidney, a condition called solitary kidney, can grow "
    "normally and may have few, if any, health problems.\n\n"
    "The affected kidney may shrink as the child grows. Children and adults with only one "
    "working kidney should have regular checkups to test for high blood pressure and kidney "
    "damage. A child with urinary tract problems that lead to failure of the working kidney "
    "may eventually need dialysis or a kidney transplant.\n\n"
    "More information is provided in the NIDDK health topics, solitary kidney, dialysis, and "
    "kidney transplants."
)
SALVAGE = (
    "Yes you can get insurance on a vehicle that is a salvage title. Not all insurance "
    "carriers treat this the same way. Some do say no, others will only allow liability while "
    "some will still let you have full coverage. Contact a local independent agent who can "
    "find you the right insurance company to insure your salvage title vehicle."
)
SUE = (
    "Can you sue a health insurance company? Absolutely, you can file suit against any person "
    "or entity. It's just a question of money and time, as it can take both. Realizing this "
    "situation, most states have a remedy that you should try first."
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Corpus:
    import json

    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    records = [{"_id": "dysplasia", "title": "What is the outlook for Kidney Dysplasia?",
                "text": DYSPLASIA},
               {"_id": "salvage", "title": "", "text": SALVAGE},
               {"_id": "sue", "text": SUE}]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in records))
    return read_documents(path)


def _document(corpus, example) -> Document:
    return next(d for d in corpus.documents if d.id == example.document_id)


def _spans(paragraph, longest):
    """Every run of 1..longest contiguous sentences of a paragraph, as text."""
    return {" ".join(paragraph[i : i + n]) for n in range(1, longest + 1)
            for i in range(len(paragraph) - n + 1)}  # fmt: skip


def _clipped(paragraph, longest):
    """The paragraph with each run of 1..longest contiguous sentences taken out."""
    return {" ".join(paragraph[:i] + paragraph[i + n :]) for n in range(1, longest + 1)
            for i in range(len(paragraph) - n + 1) if n < len(paragraph)}  # fmt: skip


def _split_negatives(corpus, example, texts_of):
    """(hard, easy) negatives checked against where they may come from."""
    document = _document(corpus, example)
    hard, easy = example.negatives[: example.hard], example.negatives[example.hard :]
    own = set().union(*(texts_of(p) for p in document.paragraphs))
    others = set().union(*(texts_of(p) for d in corpus.documents if d is not document
                           for p in d.paragraphs))  # fmt: skip
    assert all(n in own for n in hard) and all(n in others for n in easy)
    assert len(set(example.negatives)) == len(example.negatives) <= 4 and example.hard <= 2
    assert example.anchor not in example.negatives and example.positive not in example.negatives
    return hard, easy


def test_ssp_pairs_two_spans_of_one_paragraph(corpus):
    examples = build_examples("ssp", corpus, seed=0)
    # every paragraph of two sentences or more gives one example: dysplasia's first two, both
    # answers
    assert sorted(e.document_id for e in examples) == ["dysplasia", "dysplasia", "salvage", "sue"]
    for example in examples:
        paragraph = next(p for p in _document(corpus, example).paragraphs
                         if example.anchor in _spans(p, 3) and example.positive in _spans(p, 5))  # fmt: skip
        a, b = example.anchor, example.positive
        assert a != b and a not in b and b not in a  # other sentences, no overlap
        hard, easy = _split_negatives(corpus, example, lambda p: _spans(p, 5))
        assert all(n not in _spans(paragraph, 5) for n in hard)  # another paragraph's span
    dysplasia = [e for e in examples if e.document_id == "dysplasia"]
    assert all(e.hard == 2 and len(e.negatives) == 4 for e in dysplasia)
    assert all(
        e.hard == 0 and len(e.negatives) == 4 for e in examples if e.document_id != "dysplasia"
    )
    # the same on any machine: the draws are Python's guaranteed random() alone
    assert examples[0] == ObjectiveExample(
        anchor="The long-term outlook for a child with kidney dysplasia in only one kidney is "
        "generally good.",
        positive="A person with one working kidney, a condition called solitary kidney, can grow "
        "normally and may have few, if any, health problems.",
        negatives=(
            " ".join(corpus.documents[0].paragraphs[2]),
            " ".join(corpus.documents[0].paragraphs[1]),
            SALVAGE,
            " ".join(corpus.documents[2].paragraphs[0][:3]),
        ),
        hard=2,
        document_id="dysplasia",
    )


def test_sp_takes_a_span_out_and_clips_every_negative(corpus):
    examples = build_examples("sp", corpus, seed=0)
    assert len(examples) == 4
    for example in examples:
        paragraph = next(p for p in _document(corpus, example).paragraphs
                         if example.positive in _clipped(p, 3))  # fmt: skip
        assert example.anchor in _spans(paragraph, 3)
        # the paragraph is A put back into B at a sentence boundary
        rest = [s for s in paragraph if s not in example.anchor]
        assert " ".join(rest) == example.positive
        assert len(example.anchor) + len(example.positive) + 1 == len(" ".join(paragraph))
        # a paragraph of one sentence cannot be clipped: it comes whole
        _split_negatives(corpus, example, lambda p: _clipped(p, 3) if len(p) > 1 else {p[0]})
    assert {e.hard for e in examples if e.document_id == "dysplasia"} == {2}


def test_psd_pairs_two_paragraphs_of_a_document_against_other_documents(corpus):
    examples = build_examples("psd", corpus, seed=0)
    # dysplasia is the only document of two paragraphs or more: one example per paragraph
    assert [e.document_id for e in examples] == ["dysplasia"] * 3
    texts = [" ".join(p) for p in corpus.documents[0].paragraphs]
    assert {e.anchor for e in examples} == set(texts)
    for example in examples:
        assert example.positive in texts and example.positive != example.anchor
        assert example.hard == 0 and set(example.negatives) == {SALVAGE, SUE}


def test_ict_is_one_sentence_against_its_paragraph_without_it(corpus):
    for example in build_examples("ict", corpus, seed=0):
        paragraph = next(p for p in _document(corpus, example).paragraphs
                         if example.anchor in p)  # fmt: skip
        assert example.positive == " ".join(s for s in paragraph if s != example.anchor)
        _split_negatives(corpus, example, lambda p: {" ".join(p)})


def test_title_pairs_a_documents_title_with_one_of_its_paragraphs(corpus):
    examples = build_examples("title", corpus, seed=0)
    assert [(e.anchor, e.document_id, e.hard) for e in examples] == [
        ("What is the outlook for Kidney Dysplasia?", "dysplasia", 0)]  # fmt: skip
    assert examples[0].positive in {" ".join(p) for p in corpus.documents[0].paragraphs}
    assert set(examples[0].negatives) == {SALVAGE, SUE}
    assert get_objective("title").needs_titles and not get_objective("ssp").needs_titles


def test_keywords_are_rare_terms_of_their_passage(corpus):
    examples = build_examples("keywords", corpus, seed=0)
    assert len(examples) == 5  # every paragraph of three terms or more
    for example in examples:
        words = example.anchor.split()
        assert 3 <= len(words) <= 6 and len(set(words)) == len(words)
        passage_terms = terms(example.positive)
        assert all(w in passage_terms for w in words)
        assert [passage_terms.index(w) for w in words] == sorted(
            passage_terms.index(w) for w in words
        )
        _split_negatives(corpus, example, lambda p: {" ".join(p)})
    # drawn by IDF: the terms drawn are rarer, on average, than the passages' terms
    import math

    passages = [terms(" ".join(p)) for d in corpus.documents for p in d.paragraphs]
    idf = {t: math.log(1 + (5 - f + 0.5) / (f + 0.5))
           for t in {t for p in passages for t in p}
           for f in [sum(t in p for p in passages)]}  # fmt: skip
    drawn = [idf[w] for seed in range(50) for e in build_examples("keywords", corpus, seed=seed)
             for w in e.anchor.split()]  # fmt: skip
    offered = [idf[t] for seed in range(50) for e in build_examples("keywords", corpus, seed=seed)
               for t in terms(e.positive)]  # fmt: skip
    assert sum(drawn) / len(drawn) > sum(offered) / len(offered) + 0.05


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_each_objective_is_seeded_and_limited(corpus, name):
    first = build_examples(name, corpus, seed=3)
    assert first == build_examples(name, corpus, seed=3) and first
    assert build_examples(name, corpus, seed=3, limit=1) == first[:1]
    assert any(build_examples(name, corpus, seed=s) != first for s in range(4, 12))


def test_the_registry_is_one_table_and_names_the_closest_on_a_typo(corpus):
    assert objective_names() == ["ict", "keywords", "psd", "sp", "ssp", "title"]
    assert {n: s.target for n, s in OBJECTIVES.items()}["psd"] == "adapter_zoo.objectives.psd:build"
    with pytest.raises(ZooError) as raised:
        build_examples("keyword", corpus)
    assert str(raised.value) == ("unknown objective 'keyword'; did you mean keywords? choose one "
                                 "of ict, keywords, psd, sp, ssp, title")  # fmt: skip
    with pytest.raises(ZooError, match=r"^limit must be"):
        build_examples("ssp", corpus, limit=0)
    with pytest.raises(ZooError, match=r"^seed must be"):
        build_examples("ssp", corpus, seed=-1)


def test_a_corpus_too_small_gives_fewer_negatives_never_a_repeat():
    corpus = read_documents(["Stouts are dark beers. They taste of roasted barley."])
    (example,) = build_examples("ssp", corpus, seed=0)
    assert example.negatives == () and example.hard == 0
