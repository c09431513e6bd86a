"""The registry of losses: each is an nn.Module registered by name; a new one is one class
and one registration, and training takes it with no other change."""

from __future__ import annotations

import json

import pytest
import torch

from adapter_zoo.errors import ZooError
from adapter_zoo.losses import LossSpec, default_loss, get_loss, loss_names, register_loss
from adapter_zoo.losses.cross import CrossEncoderLoss, ListwiseSoftmax, PairwiseHinge
from adapter_zoo.losses.registry import _LOSSES
from adapter_zoo.training import TrainingConfig, train

FAST = dict(epochs=1, batch_size=8, max_length=32, seed=0)  # noqa: C408


class FixedScores(torch.nn.Module):
    """A stand-in CrossEncoder that scores ``values`` whatever the pairs (and records the
    pairs it was asked)."""

    device = "cpu"

    def __init__(self, values):
        super().__init__()
        self.values, self.asked = values, []

    def preprocess(self, pairs, **kwargs):
        self.asked.append(list(pairs))
        return {}

    def forward(self, features):
        return {"scores": torch.tensor(self.values, dtype=torch.float32).view(-1, 1)}


def test_each_encoder_has_its_losses_and_default():
    assert loss_names("cross") == ["bce", "listwise", "pairwise"]
    assert "MultipleNegativesRankingLoss" in loss_names("bi")
    assert (default_loss("cross"), default_loss("bi")) == ("bce", "MultipleNegativesRankingLoss")
    assert get_loss("CachedMultipleNegativesRankingLoss").examples == "triplets"


def test_pairwise_hinge_and_listwise_softmax_on_known_logits():
    model = FixedScores([2.0, 0.5])  # the positive's logit, then the negative's
    loss = PairwiseHinge(model, margin=1.0)([["q"], ["pos"], ["neg"]], None)
    assert model.asked == [[("q", "pos"), ("q", "neg")]]
    bce = torch.nn.functional.binary_cross_entropy_with_logits(
        torch.tensor([2.0, 0.5]), torch.tensor([1.0, 0.0])
    )
    assert torch.allclose(loss, torch.relu(torch.tensor(1.0 - 1.5)) + bce)
    model = FixedScores([3.0, 1.0, 0.0])
    loss = ListwiseSoftmax(model)([["q"], ["pos"], ["n1"], ["n2"]], None)
    assert model.asked == [[("q", "pos"), ("q", "n1"), ("q", "n2")]]
    assert torch.allclose(loss, -torch.log_softmax(torch.tensor([3.0, 1.0, 0.0]), 0)[0])


def test_an_unknown_loss_is_refused_listing_the_encoders_losses():
    with pytest.raises(ZooError) as error:
        TrainingConfig(mode="adapter", data="x", forums=("beer",), name="b", encoder="cross",
                       loss="MultipleNegativesRankingLoss")  # fmt: skip
    assert str(error.value) == (
        "unknown cross-encoder loss 'MultipleNegativesRankingLoss' (a bi-encoder loss); "
        "choose one of bce, listwise, pairwise"
    )


def test_hard_negatives_need_a_loss_that_takes_them():
    with pytest.raises(ZooError, match="loss MegaBatchMarginLoss trains on"):
        TrainingConfig(mode="adapter", data="x", forums=("beer",), name="b", encoder="bi",
                       loss="MegaBatchMarginLoss", hard_negatives=True)  # fmt: skip


class MarginOnly(CrossEncoderLoss):
    """A plug-in loss: the hinge alone, over (query, positive, negative) triples."""

    examples = "pairwise"

    def forward(self, inputs, labels=None, **kwargs):
        queries, positives, negatives = (list(column) for column in inputs)
        both = self.logits(queries + queries, positives + negatives)
        return torch.relu(self.margin - both[: len(queries)] + both[len(queries) :]).mean()


@pytest.fixture
def margin_only():
    spec = register_loss(LossSpec("margin_only", "cross", "pairwise", MarginOnly, "the hinge"))
    yield spec
    del _LOSSES["margin_only"]


def test_a_new_loss_is_one_class_and_one_registration(parsed_fixture, tiny_bert_path, margin_only):
    config = TrainingConfig(mode="adapter", data=str(parsed_fixture), forums=("beer",),
                            name="beer-margin", base_model=str(tiny_bert_path),
                            loss="margin_only", max_steps=2, **FAST)  # fmt: skip
    card = json.loads((train(config) / "card.json").read_text())
    assert card["training"]["loss"] == "margin_only"
    with pytest.raises(ZooError, match="a cross-encoder loss takes pointwise, pairwise, listwise"):
        register_loss(LossSpec("odd", "cross", "pairs", MarginOnly))
    with pytest.raises(ZooError, match="loss 'margin_only' is registered already"):
        register_loss(LossSpec("margin_only", "cross", "listwise", MarginOnly))


def test_a_bi_encoder_trains_with_a_sentence_transformers_loss_by_name(
    parsed_shipped, tiny_sentence_bert_path
):
    config = TrainingConfig(mode="adapter", data=str(parsed_shipped), forums=("beer",),
                            name="beer-plain", base_model=str(tiny_sentence_bert_path),
                            loss="MultipleNegativesRankingLoss", max_steps=2, eval_steps=2,
                            **FAST)  # fmt: skip
    card = json.loads((train(config) / "card.json").read_text())
    assert card["training"]["loss"] == "MultipleNegativesRankingLoss"
    assert card["training"]["steps"] == 2


@pytest.mark.parametrize(
    ("loss", "batch"),
    [
        ("bce", [("stout?", "dark beer", 1.0), ("hops?", "a bitter flower", 0.0)] * 6),
        ("pairwise", [("stout?", "dark beer", "a bike"), ("hops?", "a flower", "a lake")] * 5),
        ("listwise", [("stout?", "dark beer", ("a bike", "tea")), ("hops?", "a flower",
                                                                  ("a lake", "ice"))] * 4),
    ],
)  # fmt: skip
def test_training_in_chunks_gives_the_whole_batchs_loss_and_gradients(
    parsed_fixture, tiny_bert_path, loss, batch
):
    """A step backpropagates a few pairs at a time (memory): with dropout off, the summed
    weighted chunk losses and the accumulated gradients are the whole batch's."""
    from adapter_zoo.losses import build_loss
    from adapter_zoo.losses.cross import backward_in_chunks, chunk_examples
    from adapter_zoo.ranker.cross_encoder import as_cross_encoder
    from adapter_zoo.training.data import example_columns
    from adapter_zoo.training.models import setup_model

    cfg = TrainingConfig(mode="adapter", data=str(parsed_fixture), forums=("beer",), name="b",
                         base_model=str(tiny_bert_path), loss=loss, negatives=2,
                         **FAST)  # fmt: skip
    columns = example_columns(batch, loss, 2)
    if "label" in columns:
        columns["label"] = torch.tensor(columns["label"])
    steps = []
    for chunked in (False, True):
        torch.manual_seed(0)
        model, tokenizer, _ = setup_model(cfg)
        model.eval()  # no dropout: both ways see the same function
        objective = build_loss(loss, "cross", as_cross_encoder(model, tokenizer, 32))

        def loss_of(part, objective=objective):
            return objective([v for k, v in part.items() if k != "label"], part.get("label"))

        calls = []

        def backward(chunk_loss, calls=calls):
            calls.append(chunk_loss)
            chunk_loss.backward()

        size = chunk_examples(objective, 2) if chunked else None
        value = backward_in_chunks(loss_of, columns, backward, size).item()
        assert len(calls) > 1 if chunked else len(calls) == 1
        grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        steps.append((value, grads))
    (whole_value, whole_grads), (chunked_value, chunked_grads) = steps
    assert chunked_value == pytest.approx(whole_value, abs=1e-6)
    assert whole_grads.keys() == chunked_grads.keys() and whole_grads
    for name, grad in whole_grads.items():
        assert torch.allclose(grad, chunked_grads[name], atol=1e-6), name


def test_a_loss_over_the_whole_batch_is_not_chunked():
    from adapter_zoo.losses.cross import backward_in_chunks, chunk_examples

    class InBatch(CrossEncoderLoss):
        decomposable = False

        def forward(self, inputs, labels=None, **kwargs):
            return self.logits(*inputs).sum()

    model = FixedScores([1.0] * 20)
    loss = InBatch(model)
    calls = []
    batch = {"query": ["q"] * 20, "candidate": ["c"] * 20}
    size = chunk_examples(loss, 1)
    assert size is None
    total = backward_in_chunks(lambda part: loss(list(part.values())), batch, calls.append, size)
    assert total.item() == 20.0
    assert len(calls) == 1 and len(model.asked[0]) == 20


def test_a_chunked_step_returns_its_loss_on_the_loss_device():
    """transformers' Trainer refuses a step's loss on another device than the model's: on a
    GPU a CPU total stopped every cross-encoder run. The meta device stands in for CUDA."""
    from adapter_zoo.losses.cross import backward_in_chunks

    batch = {"query": ["q"] * 3, "label": torch.ones(3, device="meta")}
    total = backward_in_chunks(lambda part: part["label"].mean(), batch, lambda loss: None, 2)
    assert total.device.type == "meta" and total.shape == ()


# FusedMarginMSELoss also reads each triplet's BM25 margin (its label column) in training
@pytest.mark.parametrize("loss", ["GISTEmbedLoss", "FusedMarginMSELoss"])
def test_a_guided_loss_trains_with_the_base_as_its_guide(
    parsed_shipped, tiny_sentence_bert_path, loss
):
    config = TrainingConfig(mode="adapter", data=str(parsed_shipped), forums=("beer",),
                            name="beer-guided", base_model=str(tiny_sentence_bert_path),
                            loss=loss, hard_negatives=True, max_steps=2,
                            eval_steps=2, **FAST)  # fmt: skip
    card = json.loads((train(config) / "card.json").read_text())
    assert card["training"]["loss"] == loss
    assert card["training"]["steps"] == 2


def test_the_guide_is_the_frozen_base_and_masks_what_it_rates_above_the_positive(
    tiny_sentence_bert_path,
):
    from adapter_zoo.biencoder.encoder import build_sentence_model
    from adapter_zoo.losses import build_loss
    from adapter_zoo.training.bi import guide_model

    config = TrainingConfig(mode="adapter", data="x", forums=("beer",), name="g", encoder="bi",
                            base_model=str(tiny_sentence_bert_path), loss="GISTEmbedLoss")  # fmt: skip
    assert guide_model(config, "MultipleNegativesRankingLoss") is None
    guide = guide_model(config, "GISTEmbedLoss")
    assert not guide.training and not any(p.requires_grad for p in guide.parameters())
    assert not hasattr(guide[0].auto_model, "adapters_config")  # no adapter slots
    model = build_sentence_model(str(tiny_sentence_bert_path), with_adapters=False)
    loss = build_loss("GISTEmbedLoss", "bi", model, guide=guide)
    assert loss.temperature == 0.05  # MultipleNegativesRankingLoss's scale of 20
    model.eval()

    def loss_of(*columns):
        with torch.no_grad():
            return float(loss([model.tokenize(list(c)) for c in columns], None))

    # one anchor whose only negatives are itself (its hard negative, and the anchor and
    # positive columns' own diagonals): the guide rates each at 1, above the positive, so all
    # are masked and the positive stands alone
    assert loss_of(["dark stout"], ["roasted malt beer"], ["dark stout"]) == 0.0
    assert loss_of(["dark stout", "a flat tyre"], ["roasted malt beer", "patch the tube"],
                   ["dark stout", "a flat tyre"]) > 0.0  # fmt: skip
