"""Distillation from the base fused with BM25 (``FusedMarginMSELoss``): the teacher's margins
and the BM25 labels the pairs carry (a training run with it: test_losses' guided losses)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from adapter_zoo.errors import ZooError
from adapter_zoo.losses.distill import BM25_SHARE, FusedMarginMSELoss
from adapter_zoo.training import TrainingConfig
from adapter_zoo.training.data import PairTable, bm25_margins
from stackexchange.lists import BM25Neighbours


def test_bm25_margins_are_z_scores_of_the_querys_scores_over_every_positive():
    table = PairTable("beer", "title_body", ["dark stout", "pale lager", "hop bitterness"],
                      ["a dark stout is roasted", "a pale lager is crisp",
                       "hop bitterness is from the hop"])  # fmt: skip
    negatives = np.array([1, 2, 0])
    margins = bm25_margins(table, negatives)
    scores = BM25Neighbours(table.positives).scores(["dark stout"])[0]
    assert margins[0] == pytest.approx((scores[0] - scores[1]) / scores.std(), rel=1e-5)
    assert (margins > 0).all()  # each query's own positive shares its words, the others none
    # a query BM25 finds nothing for scores every positive 0: its margin is 0, not nan
    silent = PairTable("beer", "title_body", ["zzz", "dark stout"], ["a stout", "a lager"])
    assert bm25_margins(silent, np.array([1, 0]))[0] == 0.0


def _unit(*rows):
    return torch.nn.functional.normalize(torch.tensor(rows, dtype=torch.float32), dim=-1)


def test_the_teachers_margin_is_the_bases_plus_a_ninth_of_bm25s_in_the_bases_spread():
    anchor, positive, negative = (
        _unit([1.0, 0.0], [0.0, 1.0]),
        _unit([1, 0.2], [0.3, 1]),
        _unit([0.5, 1], [1, 0.1]),
    )
    base = (anchor * positive).sum(-1) - (anchor * negative).sum(-1)
    no_bm25 = FusedMarginMSELoss.teacher_margins([anchor, positive, negative], torch.zeros(2))
    assert torch.allclose(no_bm25, base)
    bm25 = torch.tensor([2.0, -1.0])
    spread = (anchor @ torch.cat([positive, negative]).T).std(dim=1)
    with_bm25 = FusedMarginMSELoss.teacher_margins([anchor, positive, negative], bm25)
    assert torch.allclose(with_bm25, base + BM25_SHARE / (1 - BM25_SHARE) * spread * bm25)
    assert with_bm25[0] > base[0] and with_bm25[1] < base[1]


def test_a_student_that_is_its_teacher_pays_only_the_ranking_loss(tiny_sentence_bert_path):
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from adapter_zoo.biencoder.encoder import build_sentence_model

    model = build_sentence_model(str(tiny_sentence_bert_path), with_adapters=False).eval()
    loss = FusedMarginMSELoss(model, guide=model)
    columns = [["dark stout", "a flat tyre"], ["roasted malt beer", "patch the tube"],
               ["pale lager", "a new chain"]]  # fmt: skip
    ranking = MultipleNegativesRankingLoss(model)
    with torch.no_grad():
        features = [model.tokenize(c) for c in columns]
        alone = float(ranking(features, None))
        same = float(loss([model.tokenize(c) for c in columns], torch.zeros(2)))
        apart = float(loss([model.tokenize(c) for c in columns], torch.tensor([3.0, -3.0])))
    assert same == pytest.approx(alone, rel=1e-5)
    assert apart > same  # BM25's margins move the teacher away from the student


def test_distillation_needs_hard_negatives():
    with pytest.raises(ZooError, match="FusedMarginMSELoss distils each hard negative's margin"):
        TrainingConfig(mode="adapter", data="x", forums=("beer",), name="d", encoder="bi",
                       loss="FusedMarginMSELoss")  # fmt: skip
