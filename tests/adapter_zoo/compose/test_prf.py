"""Dense pseudo-relevance feedback (adapter_zoo.compose.prf) and the fusions' normalisations:
the feedback against Rocchio computed by hand on the tiny encoder, its spec through ``load``,
``rank``, ``search`` and a saved entry (``evaluate``: tests/benchmarks/test_evaluate.py)."""

from __future__ import annotations

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.compose import DenseFeedback, ScoreFusion, compose_entry, parse_spec
from adapter_zoo.compose.fusion import fuse

QUERY = "which glass suits a dark stout"
CANDIDATES = [
    "a nonic pint or a tulip glass",
    "patch the inner tube of the tyre",
    "stouts are dark beers brewed with roasted barley",
    "oil the chain every few hundred kilometres",
    "serve a pilsner cold in a tall flute",
]


def _hand_rocchio(encoder, query, candidates, k, w):
    """Rocchio written out: the k nearest candidates' mean, the moved unit query, cosines."""
    q = encoder.encode([query])[0].astype(np.float64)
    c = encoder.encode(candidates).astype(np.float64)
    first = c @ q
    top = sorted(range(len(candidates)), key=lambda i: -first[i])[:k]
    moved = (1 - w) * q + w * c[top].mean(axis=0)
    moved /= np.linalg.norm(moved)
    return c @ moved, first


def test_feedback_is_rocchio_on_the_tiny_encoder(tiny_sentence_bert_path):
    base = f"sbert:{tiny_sentence_bert_path}"
    encoder = adapter_zoo.load(base)
    prf = adapter_zoo.load(f"prf:{base}@k=2,w=0.4")
    assert isinstance(prf, DenseFeedback) and (prf.k, prf.weight) == (2, 0.4)
    assert prf.name == f"prf:{base}@k=2,w=0.4"
    expected, first = _hand_rocchio(encoder, QUERY, CANDIDATES, 2, 0.4)
    scores = prf.score([(QUERY, c) for c in CANDIDATES])
    np.testing.assert_allclose(scores, expected, atol=1e-5)
    # the feedback moved the scores: not the encoder's own cosines
    assert np.abs(scores - first).max() > 1e-3
    ranked = prf.rank(QUERY, CANDIDATES)
    assert [c for c, _ in ranked] == [CANDIDATES[i] for i in np.argsort(-expected, kind="stable")]
    # w = 0 is the encoder alone
    off = adapter_zoo.load(f"prf:{base}@k=2,w=0")
    np.testing.assert_allclose(off.score([(QUERY, c) for c in CANDIDATES]), first, atol=1e-5)


def test_each_query_of_a_batch_is_fed_back_from_its_own_candidates(tiny_sentence_bert_path):
    base = f"sbert:{tiny_sentence_bert_path}"
    encoder = adapter_zoo.load(base)
    prf = adapter_zoo.load(f"prf:{base}@k=1,w=0.5")
    other, others = "how do I fix a flat tyre", CANDIDATES[1:4]
    # the two queries' pairs interleaved: grouped by query, as a benchmark's lists are not
    pairs = [(QUERY, CANDIDATES[0]), (other, others[0]), (QUERY, CANDIDATES[1]),
             (other, others[1]), (QUERY, CANDIDATES[2]), (other, others[2])]  # fmt: skip
    scores = prf.score(pairs)
    mine, _ = _hand_rocchio(encoder, QUERY, CANDIDATES[:3], 1, 0.5)
    theirs, _ = _hand_rocchio(encoder, other, others, 1, 0.5)
    np.testing.assert_allclose(scores[0::2], mine, atol=1e-5)
    np.testing.assert_allclose(scores[1::2], theirs, atol=1e-5)


def test_search_over_a_corpus_agrees_with_rank(tiny_sentence_bert_path):
    prf = adapter_zoo.load(f"prf:sbert:{tiny_sentence_bert_path}@k=3,w=0.3")
    ranked = prf.rank(QUERY, CANDIDATES)
    from_texts = prf.search([QUERY], CANDIDATES, top_k=len(CANDIDATES))[0]
    embeddings = prf.encoder.encode(CANDIDATES)
    from_embeddings = prf.search([QUERY, QUERY], embeddings, top_k=2)
    assert [CANDIDATES[i] for i, _ in from_texts] == [c for c, _ in ranked]
    np.testing.assert_allclose([s for _, s in from_texts], [s for _, s in ranked], atol=1e-5)
    assert from_embeddings[0] == from_embeddings[1]
    assert [i for i, _ in from_embeddings[0]] == [i for i, _ in from_texts[:2]]


def test_a_saved_feedback_entry_loads_as_its_spec(tiny_sentence_bert_path, monkeypatch):
    from adapter_zoo.kinds import composite
    from adapter_zoo.zoo.untrusted import UnsafeEntryError

    spec = f"prf:sbert:{tiny_sentence_bert_path}@w=0.2"
    compose_entry("fed-back", spec)
    compose_entry("fed-back-fused", f"fusion:{spec}*0.9+bm25*0.1")
    # an entry names its members by zoo or Hub name: a feedback member's own encoder too
    for name in ("fed-back", "fed-back-fused"):
        with pytest.raises(UnsafeEntryError) as error:
            adapter_zoo.load(name)
        assert f"composite member 'sbert:{tiny_sentence_bert_path}' is a path" in str(error.value)
    monkeypatch.setattr(composite, "_refuse_local_member", lambda member, path: None)
    entry = adapter_zoo.load("fed-back")
    assert entry.card["feedback"] == {"k": 3, "w": 0.2}
    pairs = [(QUERY, c) for c in CANDIDATES]
    np.testing.assert_array_equal(entry.score(pairs), adapter_zoo.load(spec).score(pairs))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("prf:sbert:x@k=0", "model spec 'prf:sbert:x@k=0': k '0' is not a positive integer"),
        ("prf:sbert:x@w=1.5", "model spec 'prf:sbert:x@w=1.5': w '1.5' must be a plain decimal "
         "from 0 to 1"),
        ("prf:sbert:x@k=2,k=3", "model spec 'prf:sbert:x@k=2,k=3': option 'k=3': expected "
         "prf:MODEL[@k=K,w=W], each of k and w at most once"),
        ("prf:fusion:a+b", "model spec 'prf:fusion:a+b': model 'fusion:a+b' is itself a "
         "composition; save it as a zoo entry (adapter-zoo compose) and name the entry"),
    ],
)  # fmt: skip
def test_bad_feedback_specs_are_refused_in_one_line(spec, message):
    with pytest.raises(ZooError) as error:
        parse_spec(spec)
    assert str(error.value) == message


def test_feedback_needs_embeddings():
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("prf:bm25")
    assert str(error.value) == (
        "pseudo-relevance feedback needs a bi-encoder (its embeddings); bm25 has none"
    )


def test_a_fusion_may_name_a_feedback_model_and_a_normalisation(tiny_sentence_bert_path):
    base = f"sbert:{tiny_sentence_bert_path}"
    prf = f"prf:{base}@k=2,w=0.4"
    spec = parse_spec(f"fusion:{prf}*0.8+bm25*0.2@minmax")
    assert (spec.members, spec.weights, spec.normalisation) == ((prf, "bm25"), (0.8, 0.2),
                                                                "minmax")  # fmt: skip
    fused = adapter_zoo.load(str(spec))
    assert isinstance(fused, ScoreFusion) and fused.normalisation == "minmax"
    pairs = [(QUERY, c) for c in CANDIDATES]
    parts = [adapter_zoo.load(prf).score(pairs), adapter_zoo.load("bm25").score(pairs)]
    np.testing.assert_allclose(
        fused.score(pairs), fuse(parts, [0.8, 0.2], normalisation="minmax"), atol=1e-6
    )


def test_the_normalisations_by_hand():
    scores = np.array([2.0, 6.0, 4.0, 4.0])
    np.testing.assert_allclose(fuse([scores], [1.0], normalisation="minmax"), [0, 1, 0.5, 0.5])
    # ranks 4, 1, 2.5, 2.5 (the tie shares its mean rank)
    np.testing.assert_allclose(
        fuse([scores], [2.0], normalisation="rrf"), [2 / 64, 2 / 61, 2 / 62.5, 2 / 62.5], rtol=1e-6
    )
    constant = np.array([3.0, 3.0, 3.0, 3.0])
    for how in ("zscore", "minmax", "rrf"):
        fused = fuse([scores, constant], [1.0, 1.0], normalisation=how)
        alone = fuse([scores], [1.0], normalisation=how)
        assert (
            np.argsort(-fused, kind="stable").tolist() == np.argsort(-alone, kind="stable").tolist()
        )
    with pytest.raises(ZooError) as error:
        fuse([scores], [1.0], normalisation="l2")
    assert (
        str(error.value) == "unknown fusion normalisation 'l2'; choose one of zscore, minmax, rrf"
    )
