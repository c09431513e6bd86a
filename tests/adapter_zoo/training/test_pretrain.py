"""``adapter-zoo pretrain``: the paper's continued pre-training of a cross-encoder (objective
head + tied MLM head), its entry, its resume, and fine-tuning from it (``--init-from``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from safetensors.numpy import load_file

import adapter_zoo
from adapter_zoo.cli import main
from adapter_zoo.ranker.probe import PROBE_QUESTION, pair_probe_cosine
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.pretrain import MLM_HEAD, pretrain, setup_pretraining
from adapter_zoo.training.pretrain_config import PretrainConfig
from adapter_zoo.training.selection import DevListsEvaluator
from adapter_zoo.zoo import zoo_home
from adapter_zoo.zoo.store import read_card

TOPICS = {
    "beer": [
        "stout",
        "lager",
        "hops",
        "malt",
        "barley",
        "yeast",
        "foam",
        "bitter",
        "ale",
        "cellar",
    ],
    "bikes": [
        "wheel",
        "chain",
        "brake",
        "tyre",
        "gear",
        "pedal",
        "saddle",
        "spoke",
        "frame",
        "hill",
    ],
    "tea": ["leaf", "kettle", "steep", "green", "black", "oolong", "cup", "brew", "pot", "milk"],
}


def write_corpus(path: Path, documents: int = 12) -> Path:
    """``documents`` JSONL documents of 3 paragraphs of 4 sentences, on three topics."""
    lines = []
    for d in range(documents):
        words = list(TOPICS)[d % 3]
        vocabulary = TOPICS[words]
        paragraphs = []
        for p in range(3):
            sentences = [
                " ".join(vocabulary[(d + p + s + k) % 10] for k in range(5)).capitalize() + "."
                for s in range(4)
            ]
            paragraphs.append(" ".join(sentences))
        record = {"_id": f"doc{d}", "title": f"{words} {d}", "text": "\n\n".join(paragraphs)}
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path / "docs.jsonl")


def pretrain_config(corpus, base, objective="ssp", name="docs-ssp", **extra) -> PretrainConfig:
    fields = dict(max_steps=6, batch_size=2, max_length=64, lr=1e-3, seed=0)
    fields.update(extra)
    return PretrainConfig(objective=objective, corpus=str(corpus), name=name,
                          base_model=str(base), **fields)  # fmt: skip


def test_pretrain_writes_an_entry_whose_card_records_the_run(corpus, tiny_sentence_bert_path):
    path = pretrain(pretrain_config(corpus, tiny_sentence_bert_path))
    card = read_card(path)
    assert (card["mode"], card["encoder"], card["layout"]) == ("adapter", "cross", "adapter")
    run = card["pretraining"]
    assert run["objective"] == "ssp" and run["objectives"] == ["ssp"] and run["steps"] == 6
    about = run["corpus"]["about"]
    assert (about["documents"], about["paragraphs"], about["sentences"]) == (12, 36, 144)
    assert run["corpus"]["source"] == str(corpus)
    losses = run["losses"]
    assert [r["step"] for r in losses] == [3, 6]
    for record in losses:
        assert all(math.isfinite(record[k]) for k in ("loss", "objective_loss", "mlm_loss"))
        assert record["loss"] == pytest.approx(
            record["objective_loss"] + record["mlm_loss"], abs=2e-3
        )
    assert losses[-1]["mlm_loss"] < losses[0]["mlm_loss"]
    assert losses[-1]["objective_loss"] < losses[0]["objective_loss"]
    # the entry holds the adapter and one ranking head (the pair-cosine head of a sentence
    # encoder), no pre-training head
    head = json.loads((path / "head_config.json").read_text())
    assert head["config"]["head_type"] == "pair_cosine" and run["ranking_head"] == "new"
    assert {"adapter.safetensors", "model_head.safetensors"} <= set(card["files"])
    # what loading checks its adapter by, and loading passes it
    assert card["probe"]["question"] == PROBE_QUESTION
    ranker = adapter_zoo.load(str(path))
    assert (
        round(pair_probe_cosine(ranker.model, ranker.tokenizer), 7)
        == (card["probe"]["cosine_to_base"])
    )


def test_the_mlm_head_is_tied_to_the_word_embeddings(corpus, tiny_bert_path):
    for mode, trains in (("adapter", False), ("full", True)):
        config = pretrain_config(corpus, tiny_bert_path, mode=mode)
        model, _, _ = setup_pretraining(config, "fp32")
        decoder = model.heads[MLM_HEAD].get_output_embeddings().weight
        assert decoder is model.get_input_embeddings().weight
        assert decoder.requires_grad is trains  # the embeddings train only in full mode


def test_the_mlm_control_trains_the_mlm_loss_alone(corpus, tiny_sentence_bert_path):
    path = pretrain(pretrain_config(corpus, tiny_sentence_bert_path, "mlm", "docs-mlm"))
    run = read_card(path)["pretraining"]
    assert run["objectives"] == ["ssp", "sp", "psd"]
    assert all(r["loss"] == pytest.approx(r["mlm_loss"], abs=1e-3) for r in run["losses"])


def test_a_cls_base_starts_its_ranking_head_from_the_objective_head(corpus, tiny_bert_path):
    path = pretrain(pretrain_config(corpus, tiny_bert_path, max_steps=2, mode="full"))
    card = read_card(path)
    assert card["mode"] == "full" and card["pretraining"]["ranking_head"] == "objective"
    heads = json.loads((path / "model" / "config.json").read_text())["prediction_heads"]
    assert list(heads) == ["docs_ssp"]  # the objective and MLM heads are not in the entry


def test_init_from_a_pretrained_entry_fine_tunes_it(
    corpus, tiny_sentence_bert_path, parsed_fixture
):
    pretrained = pretrain(pretrain_config(corpus, tiny_sentence_bert_path, max_steps=2))
    config = TrainingConfig(
        mode="adapter", encoder="cross", data=str(parsed_fixture), forums=("beer",),
        name="beer-after-ssp", base_model=str(tiny_sentence_bert_path), init_from="docs-ssp",
        max_steps=2, batch_size=4, lr=0.0, seed=0,
    )  # fmt: skip
    path = train(config)
    card = read_card(path)
    assert card["init_from"] == {"entry": "docs-ssp"} and card["training"]["steps"] == 2
    # at rate 0 the fine-tuned adapter is the pre-trained one, weight for weight
    start = load_file(pretrained / "adapter.safetensors")
    tuned = {k.replace("beer_after_ssp", "docs_ssp"): v
             for k, v in load_file(path / "adapter.safetensors").items()}  # fmt: skip
    assert set(start) == set(tuned) and all((start[k] == tuned[k]).all() for k in start)


def test_an_unknown_objective_is_one_line_listing_the_names(corpus, capsys):
    argv = ["pretrain", "--objective", "nsp", "--corpus", str(corpus), "--name", "x"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "adapter-zoo pretrain: error: unknown objective 'nsp'; did you mean sp, ssp? choose one of "
    )
    assert err.count("\n") == 1
    assert {"ssp", "sp", "psd", "all", "mlm"} <= set(err.strip().rsplit(" of ", 1)[1].split(", "))
    assert not (zoo_home() / "x").exists()


def test_a_crash_mid_run_leaves_no_entry_and_the_rerun_resumes(
    corpus, tiny_sentence_bert_path, monkeypatch
):
    config = pretrain_config(corpus, tiny_sentence_bert_path)
    evaluate = DevListsEvaluator.__call__

    def crash(self, model, output_path=None, epoch=-1, steps=-1):
        if steps == 6:
            raise KeyboardInterrupt("power cut at step 6")
        return evaluate(self, model, output_path, epoch, steps)

    with monkeypatch.context() as patch:
        patch.setattr(DevListsEvaluator, "__call__", crash)
        with pytest.raises(KeyboardInterrupt):
            pretrain(config)
    assert not (zoo_home() / "docs-ssp").exists()  # nothing that looks like an entry
    checkpoint = zoo_home() / ".checkpoints" / "docs-ssp" / "pretrain" / "checkpoint-3"
    assert (checkpoint / "trainable.safetensors").exists()
    path = pretrain(config)
    assert read_card(path)["pretraining"]["steps"] == 6
    assert not (zoo_home() / ".checkpoints" / "docs-ssp").exists()
    assert pretrain(config) == path  # the same command again: found done
