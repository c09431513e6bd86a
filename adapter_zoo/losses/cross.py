"""The papers' cross-encoder losses as ``nn.Module`` classes, computed from each pair's logit.

The adapters library's one-label head would compute MSE when given labels, so the logits
are taken without labels (``score(queries, candidates)``) and the loss is computed here.

Example:
    >>> import torch
    >>> score = lambda queries, candidates: torch.tensor([2.0, -1.0])
    >>> round(PointwiseBCE(score)([("q", "a", 1.0), ("q", "b", 0.0)]).item(), 4)
    0.2201
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn


class CrossEncoderLoss(nn.Module):
    """A loss over one minibatch of examples of the shape ``examples`` names.

    Args:
        score: (queries, candidates) -> one logit per pair (a 1-d tensor).
        margin: the pairwise hinge's margin (unused by the other losses).
    """

    examples: ClassVar[str] = "pointwise"

    def __init__(self, score: Callable[[Sequence[str], Sequence[str]], torch.Tensor], **options):
        super().__init__()
        self.score = score
        self.margin = float(options.get("margin", 1.0))

    def forward(self, batch: Sequence[tuple]) -> torch.Tensor:
        raise NotImplementedError


class PointwiseBCE(CrossEncoderLoss):
    """Binary cross-entropy of each (query, candidate, label) pair's logit."""

    examples = "pointwise"

    def forward(self, batch):
        queries, candidates, labels = zip(*batch)
        logits = self.score(queries, candidates)
        target = torch.tensor(labels, dtype=torch.float32, device=logits.device)
        return F.binary_cross_entropy_with_logits(logits, target)


class PairwiseHinge(CrossEncoderLoss):
    """Laskar et al. 2020: hinge on the positive-negative margin plus pointwise BCE, over
    (query, positive, negative) triples."""

    examples = "pairwise"

    def forward(self, batch):
        queries, positives, negatives = zip(*batch)
        both = self.score(queries + queries, positives + negatives)
        positive, negative = both[: len(batch)], both[len(batch) :]
        hinge = torch.relu(self.margin - positive + negative).mean()
        labels = torch.cat([torch.ones_like(positive), torch.zeros_like(negative)])
        return hinge + F.binary_cross_entropy_with_logits(both, labels)


class ListwiseSoftmax(CrossEncoderLoss):
    """Softmax cross-entropy of the positive against its negatives, over
    (query, positive, (negative, ...)) lists."""

    examples = "listwise"

    def forward(self, batch):
        pairs = [(q, c) for q, p, negatives in batch for c in (p, *negatives)]
        logits = self.score([q for q, _ in pairs], [c for _, c in pairs]).view(len(batch), -1)
        target = torch.zeros(len(batch), dtype=torch.long, device=logits.device)  # positive first
        return F.cross_entropy(logits, target)
