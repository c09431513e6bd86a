"""Zoo objects where sentence-transformers objects go: a bi-encoder entry through
sentence-transformers' own InformationRetrievalEvaluator, a cross-encoder Ranker through its
CrossEncoderRerankingEvaluator, each scoring exactly as adapter_zoo.metrics on the same lists;
their keyword arguments; saving that does not silently drop adapters; and the lines of an
entry's local README that open it without adapter-zoo.

Real data (the beer archive shipped in the package), tiny random models: seconds each.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo.errors import ZooError
from adapter_zoo.metrics import evaluate_rankings
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.selection import DEV_LISTS, forum_dev_lists

# one xdist process runs this module (--dist loadgroup): trained entries are module fixtures
pytestmark = pytest.mark.xdist_group("st_compat")

BEER = "beer.stackexchange.com"
QUERIES = 12  # dev lists of 20 candidates each
# Both sides compute the same float32 cosines and logits; the metrics are exact fractions
# of the same ranks, so they agree to rounding.
TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    import datasets

    from stackexchange import parse_forum
    from stackexchange.catalog import shipped_data

    out = tmp_path_factory.mktemp("parsed-shipped")
    parse_forum(shipped_data() / f"{BEER}.7z", out)
    # the forum's first dev lists as its benchmark dev lists: training selects on these few
    lists = forum_dev_lists(out, [BEER])[:QUERIES]
    columns = {"query": [q for q, _ in lists], "candidates": [c for _, c in lists]}
    datasets.Dataset.from_dict(columns).save_to_disk(str(out / BEER / DEV_LISTS))
    return out


@pytest.fixture(scope="module")
def dev(parsed):
    return forum_dev_lists(parsed, [BEER])


@pytest.fixture(scope="module")
def bi_entry(parsed, tiny_sentence_bert_path, tmp_path_factory):
    """A trained bottleneck-adapter bi-encoder entry (4 steps at a high rate: it moves)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADAPTER_ZOO_HOME", str(tmp_path_factory.mktemp("zoo-bi")))
        return train(
            TrainingConfig(
                mode="adapter",
                data=str(parsed),
                forums=("beer",),
                name="beer-bi",
                base_model=str(tiny_sentence_bert_path),
                batch_size=8,
                max_length=16,
                max_steps=4,
                eval_steps=2,
                seed=0,
                lr=1e-2,
                reduction_factor=2,
            )  # fmt: skip
        )


@pytest.fixture(scope="module")
def cross_entry(tiny_bert_path, tmp_path_factory):
    """A cross-encoder adapter entry: tiny BERT, a SeqBn adapter and CLS head, random weights."""
    from adapters import SeqBnConfig

    from adapter_zoo.ranker.model import add_ranking_head, build_model
    from adapter_zoo.zoo.layouts import write_adapter
    from adapter_zoo.zoo.store import save_entry

    model, _ = build_model(str(tiny_bert_path))
    model.add_adapter("beer", config=SeqBnConfig(reduction_factor=4))
    add_ranking_head(model, "beer")
    torch.manual_seed(0)
    with torch.no_grad():
        for key, parameter in model.named_parameters():
            if ".adapters.beer." in key or key.startswith("heads."):
                parameter.copy_(torch.randn_like(parameter) * 0.2)
    card = {"mode": "adapter", "layout": "adapter", "base_model": str(tiny_bert_path),
            "forums": [BEER], "head": "beer", "max_length": 64}  # fmt: skip
    folder = tmp_path_factory.mktemp("zoo-cross") / "beer-cross"
    return save_entry(lambda f: write_adapter(model, "beer", f), folder, card)


def our_metrics(scorer, lists):
    """adapter_zoo.metrics on (query, candidates, labels) lists scored by ``scorer`` (in one
    call: a bi-encoder embeds each distinct text once)."""
    flat = scorer.score([(q, c) for q, candidates, _ in lists for c in candidates])
    ends = np.cumsum([len(candidates) for _, candidates, _ in lists])[:-1]
    return evaluate_rankings(np.split(flat, ends), [labels for _, _, labels in lists])


def test_information_retrieval_evaluator_scores_a_bi_encoder_entry_as_we_do(bi_entry, dev):
    from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

    encoder = adapter_zoo.load(str(bi_entry))
    # every query searches one corpus: the candidates of all the lists, each text once
    corpus = list(dict.fromkeys(c for _, candidates in dev for c in candidates))
    k = len(corpus)
    evaluator = InformationRetrievalEvaluator(
        queries={str(i): q for i, (q, _) in enumerate(dev)},
        corpus={str(j): text for j, text in enumerate(corpus)},
        relevant_docs={str(i): {str(corpus.index(c[0]))} for i, (_, c) in enumerate(dev)},
        mrr_at_k=[k], map_at_k=[k], ndcg_at_k=[10], accuracy_at_k=[1],
        precision_recall_at_k=[1], show_progress_bar=False, write_csv=False, name="beer",
    )  # fmt: skip
    theirs = evaluator(encoder)
    lists = [(q, corpus, [int(text == c[0]) for text in corpus]) for q, c in dev]
    ours = our_metrics(encoder, lists)
    assert ours["queries"] == QUERIES and len(corpus) > 100
    assert encoder.similarity_fn_name == "cosine"
    for name, value in (("map", f"map@{k}"), ("mrr", f"mrr@{k}"), ("p@1", "accuracy@1"),
                        ("ndcg@10", "ndcg@10")):  # fmt: skip
        assert theirs[f"beer_cosine_{value}"] == pytest.approx(ours[name], abs=TOLERANCE), name
    assert 0.0 < ours["map"] < 1.0
    # the evaluator recorded its metrics where a SentenceTransformer keeps them
    assert evaluator in encoder.model_card_data.eval_results_dict


def test_reranking_evaluator_scores_a_ranker_as_we_do(cross_entry, dev):
    from sentence_transformers.cross_encoder.evaluation import CrossEncoderRerankingEvaluator

    ranker = adapter_zoo.load(str(cross_entry), device="cpu")
    samples = [{"query": q, "positive": [c[0]], "negative": c[1:]} for q, c in dev]
    evaluator = CrossEncoderRerankingEvaluator(samples, at_k=20, name="beer", write_csv=False)
    theirs = evaluator(ranker)
    ours = our_metrics(ranker, [(q, c, [1] + [0] * (len(c) - 1)) for q, c in dev])
    assert ours["queries"] == QUERIES and all(len(c) == 20 for _, c in dev)
    assert theirs["beer_map"] == pytest.approx(ours["map"], abs=TOLERANCE)
    assert theirs["beer_mrr@20"] == pytest.approx(ours["mrr"], abs=TOLERANCE)
    assert 0.0 < ours["map"] < 1.0
    assert evaluator in ranker.model_card_data.eval_results_dict


def test_bi_encoder_takes_sentence_transformers_keywords(bi_entry):
    encoder = adapter_zoo.load(str(bi_entry))
    texts = ["Which glass for a stout?", "A tulip glass keeps the head."]
    ours = encoder.encode(texts)
    assert ours.dtype == np.float32 and ours.shape == (
        2,
        encoder.get_sentence_embedding_dimension(),
    )
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    plain = encoder.model.encode(texts, normalize_embeddings=False)
    raw = encoder.encode(texts, show_progress_bar=False, normalize_embeddings=False, batch_size=1)
    np.testing.assert_allclose(raw, plain, rtol=0, atol=1e-6)
    tensor = encoder.encode(texts, convert_to_tensor=True)
    assert isinstance(tensor, torch.Tensor) and torch.allclose(tensor, torch.from_numpy(ours))
    assert encoder.encode(texts[0]).shape == (encoder.get_sentence_embedding_dimension(),)
    assert encoder.encode([]).shape == (0, encoder.get_sentence_embedding_dimension())
    prompted = encoder.encode(texts, prompt="query: ")
    np.testing.assert_allclose(prompted, encoder.encode([f"query: {t}" for t in texts]), atol=1e-6)
    np.testing.assert_allclose(encoder.encode_query(texts), ours, atol=1e-6)
    np.testing.assert_allclose(encoder.encode_document(texts), ours, atol=1e-6)
    similarity = encoder.similarity(ours, ours)
    assert similarity.shape == (2, 2)
    assert float(similarity[0, 1]) == pytest.approx(encoder.score([tuple(texts)])[0], abs=1e-6)
    pairwise = encoder.similarity_pairwise(ours, ours[::-1].copy())
    assert pairwise.shape == (2,)
    with pytest.raises(AttributeError):
        encoder.no_such_attribute  # noqa: B018  (explicit names, no blanket delegation)


def test_ranker_takes_cross_encoder_keywords(cross_entry):
    ranker = adapter_zoo.load(str(cross_entry), device="cpu")
    pairs = [("stout?", "a dark beer"), ("stout?", "tyres"), ("stout?", "porter")]
    logits = ranker.score(pairs)
    np.testing.assert_array_equal(ranker.predict(pairs, show_progress_bar=False, batch_size=2,
                                                 convert_to_numpy=True, prompt_name=None), logits)  # fmt: skip
    tensor = ranker.predict(pairs, activation_fn=torch.nn.Sigmoid(), convert_to_tensor=True)
    assert torch.allclose(tensor, torch.sigmoid(torch.from_numpy(logits)))
    assert ranker.predict(pairs[0]) == logits[0]
    ranked = ranker.rank("stout?", [c for _, c in pairs], top_k=2, return_documents=True,
                         batch_size=1, show_progress_bar=False)  # fmt: skip
    order = np.argsort(-logits, kind="stable")[:2]
    # batch_size=1 pads nothing, score() pads the three pairs together: the same logits up to
    # float rounding (which kernel runs depends on the CPU), the same order and texts
    assert [(r["corpus_id"], r["text"]) for r in ranked] == [(int(i), pairs[i][1]) for i in order]
    np.testing.assert_allclose([r["score"] for r in ranked], logits[order], rtol=1e-5)
    with pytest.raises(ZooError, match="has no prompts"):
        ranker.predict(pairs, prompt_name="query")


def test_saving_an_adapter_bi_encoder_as_a_plain_folder_is_refused(bi_entry, tmp_path):
    """SentenceTransformer(folder) would drop the adapter and silently open the bare base."""
    from sentence_transformers import SentenceTransformer

    encoder = adapter_zoo.load(str(bi_entry))
    base = adapter_zoo.BiEncoder.from_base(encoder.base_model, max_length=encoder.max_length)
    texts = ["Which glass for a stout?", "A tulip glass keeps the head."]
    assert np.abs(encoder.encode(texts) - base.encode(texts)).max() > 1e-3  # the adapter counts
    for save in (encoder.model.save, encoder.save, encoder.model.save_pretrained):
        with pytest.raises(ZooError) as error:
            save(str(tmp_path / "plain"))
        assert "it holds bottleneck adapters (" in str(error.value)
        assert "README.md shows the lines that open it" in str(error.value)
    assert not (tmp_path / "plain").exists()
    # a model without adapters saves as usual and reopens with the same embeddings
    base.save(tmp_path / "base")
    reopened = SentenceTransformer(str(tmp_path / "base"), device="cpu")
    np.testing.assert_allclose(
        reopened.encode(texts, normalize_embeddings=True), base.encode(texts), atol=1e-6
    )


def readme_lines(folder) -> str:
    """The last Python block of the entry's local README.md: the lines without adapter-zoo."""
    readme = (folder / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", readme, re.S)[-1]


def test_local_readme_lines_open_the_bi_encoder_entry_without_adapter_zoo(bi_entry):
    lines = readme_lines(bi_entry)
    assert f"folder = {str(bi_entry.resolve())!r}" in lines
    assert not any("adapter_zoo" in line for line in lines.splitlines())
    namespace = {}
    exec(lines, namespace)  # as written: the entry's folder, the base's local path
    expected = adapter_zoo.load(str(bi_entry)).encode(["your question", "an answer"])
    np.testing.assert_allclose(namespace["embeddings"], expected, rtol=0, atol=1e-6)


def test_local_readme_lines_open_the_cross_encoder_entry_without_adapter_zoo(cross_entry):
    lines = readme_lines(cross_entry)
    assert not any("adapter_zoo" in line for line in lines.splitlines())  # a CLS head
    namespace = {}
    exec(lines, namespace)
    expected = adapter_zoo.load(str(cross_entry), device="cpu").score(namespace["pairs"])
    np.testing.assert_array_equal(namespace["scores"].numpy(), expected)


def test_training_prints_only_its_result_and_no_adapters_noise(
    parsed, tiny_sentence_bert_path, capfd, caplog
):
    """HF Trainer's per-step records go to the log (stderr through the CLI), not to stdout,
    and adapters' "none are activated" (raised while activating, and on every forward pass
    of the base alone that a continued adapter is compared with) reaches no one."""
    from adapter_zoo.cli import main

    args = ["train", "--mode", "adapter", "--data", str(parsed), "--forums", "beer",
            "--name", "quiet", "--base", str(tiny_sentence_bert_path), "--max-steps", "2",
            "--batch-size", "8", "--max-length", "16"]  # fmt: skip
    # a continued adapter also scores the base with every adapter off (its zero-shot start)
    continued = [*args, "--init-from", "quiet"]
    continued[continued.index("quiet")] = "quiet-continued"
    with caplog.at_level("WARNING", logger="adapters"):
        assert main(args) == 0
        adapter_zoo.load("quiet").encode(["a stout"])
        assert main(continued) == 0
    out, err = capfd.readouterr()
    home = adapter_zoo.zoo_home()
    assert out == (
        f"adapter-zoo train: wrote zoo entry 'quiet' at {home / 'quiet'}\n"
        f"adapter-zoo train: wrote zoo entry 'quiet-continued' at {home / 'quiet-continued'}\n"
    )
    assert "adapter-zoo train: step 2: {" in err and "'loss'" not in err + out
    assert f"adapter-zoo train: scoring {QUERIES} dev lists ({QUERIES * 20} pairs)" in err
    assert "none are activated" not in err
    assert not [r for r in caplog.records if "none are activated" in r.getMessage()]
