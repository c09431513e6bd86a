"""Distillation from the zero-shot base fused with BM25: in-batch ranking plus margin-MSE.

What a user has without training is the base fused with BM25 (z-scores per list, the base
0.9 and BM25 0.1: :mod:`adapter_zoo.fusion_defaults`). This loss teaches a bi-encoder
both what the target's pairs say (``MultipleNegativesRankingLoss`` on its triplets) and what
that fusion knows of each triplet (Hofstätter et al., 2020: the student's margin between the
positive and the hard negative is pulled to the teacher's by mean squared error).

sentence-transformers' ``MarginMSELoss`` takes the teacher's margins as a precomputed label;
the fusion's margin needs the base's similarities too, which the guide (the frozen base,
as ``GISTEmbedLoss``'s) computes here from the batch's own tokens, so no pass over the
target's texts precedes training. The label is BM25's part, computed with the pairs
(:func:`adapter_zoo.training.data.bm25_margins`): the positive's BM25 score over the
negative's, in standard deviations of the anchor's BM25 scores over every positive.

Example:
    >>> from adapter_zoo.losses import get_loss
    >>> get_loss("FusedMarginMSELoss").examples
    'triplets'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import torch
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
from torch import Tensor, nn
from torch.nn import functional

from adapter_zoo.fusion_defaults import BM25_SHARE

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

# MultipleNegativesRankingLoss's default scale: the margins are compared as the ranking loss
# sees similarities, so its term and this one weigh alike.
SCALE = 20.0


class FusedMarginMSELoss(nn.Module):
    """``MultipleNegativesRankingLoss`` plus margin-MSE to the base fused with BM25.

    Args:
        model: the ``SentenceTransformer`` being trained.
        guide: the frozen base (:func:`adapter_zoo.training.bi.guide_model`), the teacher's
            semantic half; it shares the model's tokenizer.
        scale: the ranking loss's scale, and the margins' in the distillation term.
        distill_weight: the distillation term's weight against the ranking loss's.

    The teacher's margin, in the base's cosine units: the base's margin plus BM25's z-margin
    (the label) times a ninth of the spread of the base's similarities of the anchor to the
    batch's candidates (the fusion's z-score of each, over that list).
    """

    def __init__(
        self,
        model: SentenceTransformer,
        guide: SentenceTransformer,
        scale: float = SCALE,
        distill_weight: float = 1.0,
    ):
        super().__init__()
        self.model, self.guide = model, guide
        self.scale, self.distill_weight = scale, distill_weight
        self.ranking = MultipleNegativesRankingLoss(model, scale=scale)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        features = list(sentence_features)
        if len(features) != 3:
            raise ValueError(
                f"FusedMarginMSELoss takes (anchor, positive, negative), not {len(features)} columns"
            )
        embeddings = [self.model(f)["sentence_embedding"] for f in features]
        with torch.no_grad():
            # shallow copies: the guide writes its outputs into the features it is given
            teacher = [self.guide(dict(f))["sentence_embedding"] for f in features]
        ranking = self.ranking.compute_loss_from_embeddings(embeddings, labels)
        return ranking + self.distill_weight * functional.mse_loss(
            self.scale * _margins(_unit(embeddings)),
            self.scale * self.teacher_margins(teacher, labels.to(embeddings[0].dtype)),
        )

    @staticmethod
    def teacher_margins(teacher: list[Tensor], bm25_margins: Tensor) -> Tensor:
        """The fusion's margin of each positive over its negative, in the base's cosine
        units (``teacher``: the guide's anchor, positive and negative embeddings)."""
        anchor, positive, negative = units = _unit(teacher)
        spread = (anchor @ torch.cat([positive, negative]).T).std(dim=1)
        return _margins(units) + BM25_SHARE / (1 - BM25_SHARE) * spread * bm25_margins

    def get_config_dict(self) -> dict:
        return {
            "scale": self.scale,
            "distill_weight": self.distill_weight,
            "bm25_share": BM25_SHARE,
        }


def _unit(embeddings: list[Tensor]) -> list[Tensor]:
    """Each row at unit length: dot products are cosines."""
    return [functional.normalize(e, dim=-1) for e in embeddings]


def _margins(units: list[Tensor]) -> Tensor:
    """Cosine(anchor, positive) - cosine(anchor, negative), per row, of unit rows."""
    anchor, positive, negative = units
    return (anchor * positive).sum(-1) - (anchor * negative).sum(-1)
