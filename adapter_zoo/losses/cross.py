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

    ``decomposable``: the loss is a mean over the batch's examples, so the batch's gradient
    is the sum of its chunks' gradients, each chunk's loss weighted by its share of the
    examples (training backpropagates it in chunks, :func:`backward_in_chunks`); a loss that
    compares examples with each other (in-batch negatives) sets it False.

    Args:
        score: (queries, candidates) -> one logit per pair (a 1-d tensor).
        margin: the pairwise hinge's margin (unused by the other losses).
    """

    examples: ClassVar[str] = "pointwise"
    decomposable: ClassVar[bool] = True

    def __init__(self, score: Callable[[Sequence[str], Sequence[str]], torch.Tensor], **options):
        super().__init__()
        self.score = score
        self.margin = float(options.get("margin", 1.0))

    def forward(self, batch: Sequence[tuple]) -> torch.Tensor:
        raise NotImplementedError


# Pairs scored per forward and backward in training. A step of 32 pairs at 300 tokens peaked at
# 3.1 GB RSS on CPU (benchmarks/perf/train_memory.py): backward rebuilds one layer's attention
# matrices at a time for the whole batch; in chunks of 8 pairs it holds a quarter of them.
CHUNK_PAIRS = 8


def backward_in_chunks(loss: CrossEncoderLoss, batch: Sequence[tuple], backward, negatives: int):
    """Backpropagate ``loss`` over ``batch`` a few examples at a time and return the batch's
    loss value. For a decomposable loss the accumulated gradient is the whole batch's (each
    chunk's mean loss weighted by its share of the examples; dropout draws its masks chunk by
    chunk); any other loss runs as one chunk.

    Args:
        loss: the loss module.
        batch: its examples.
        backward: called with each chunk's weighted loss (``accelerator.backward``).
        negatives: negatives per listwise example (a listwise example scores ``1 + k`` pairs).
    """
    pairs_per_example = {"pointwise": 1, "pairwise": 2, "listwise": 1 + negatives}[loss.examples]
    size = max(1, CHUNK_PAIRS // pairs_per_example) if loss.decomposable else len(batch)
    total = 0.0
    for start in range(0, len(batch), size):
        chunk = batch[start : start + size]
        weighted = loss(chunk) * (len(chunk) / len(batch))
        backward(weighted)
        total += float(weighted.detach())
    return total


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
