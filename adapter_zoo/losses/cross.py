"""The papers' cross-encoder losses as sentence-transformers cross-encoder losses.

Each is an ``nn.Module`` built with a ``CrossEncoder`` (our adapters model inside one:
:func:`adapter_zoo.ranker.cross_encoder.as_cross_encoder`) and called, as
``CrossEncoderTrainer`` calls its losses, with the batch's text columns and labels. The
columns are the loss's ``examples`` shape: ``pointwise`` (query, candidate) with a 0/1 label;
``pairwise`` (query, positive, negative); ``listwise`` (query, positive, negative_1, ...).

Example:
    >>> import torch
    >>> class Fixed(torch.nn.Module):  # a stand-in CrossEncoder with two fixed logits
    ...     device = "cpu"
    ...     def preprocess(self, pairs, **kwargs): return {}
    ...     def forward(self, features): return {"scores": torch.tensor([[2.0], [-1.0]])}
    >>> loss = PointwiseBCE(Fixed())
    >>> round(loss([["q", "q"], ["a", "b"]], torch.tensor([1, 0])).item(), 4)
    0.2201
"""

from __future__ import annotations

from collections.abc import Sequence
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
        model: the ``CrossEncoder`` whose ranking logit (``scores``) the loss reads.
        margin: the pairwise hinge's margin (unused by the other losses).
    """

    examples: ClassVar[str] = "pointwise"
    decomposable: ClassVar[bool] = True

    def __init__(self, model, margin: float = 1.0):
        super().__init__()
        self.model = model
        self.margin = float(margin)

    def logits(self, queries: Sequence[str], candidates: Sequence[str]) -> torch.Tensor:
        """One logit per (query, candidate) pair, as the model scores it."""
        # sentence-transformers on first use: this module loads only torch at import
        from sentence_transformers.util import batch_to_device

        features = self.model.preprocess(list(zip(queries, candidates)))
        features = batch_to_device(features, self.model.device)
        return self.model(features)["scores"].view(-1)

    def get_config_dict(self) -> dict:
        return {"margin": self.margin}


# Pairs scored per forward and backward in a training step: backward rebuilds one layer's
# attention matrices at a time for the whole batch, so a whole batch of long pairs peaks at
# gigabytes on CPU; in chunks of 8 pairs it holds a quarter (benchmarks/speed/train_memory.py;
# docs/performance.md, the measurements behind the defaults).
CHUNK_PAIRS = 8


def pairs_per_example(examples: str, negatives: int) -> int:
    """(query, candidate) pairs one training example of the shape ``examples`` scores: a
    listwise example scores its positive and ``negatives``.

    Example:
        >>> pairs_per_example("pairwise", 7), pairs_per_example("listwise", 7)
        (2, 8)
    """
    return {"pointwise": 1, "pairwise": 2, "listwise": 1 + negatives}[examples]


def chunk_examples(loss: CrossEncoderLoss, negatives: int) -> int | None:
    """Examples per chunk of a training step with ``loss`` (``CHUNK_PAIRS`` pairs' worth);
    None: the whole batch at once, for a loss that is not ``decomposable``."""
    if not loss.decomposable:
        return None
    return max(1, CHUNK_PAIRS // pairs_per_example(loss.examples, negatives))


def backward_in_chunks(loss_of, batch: dict, backward, size: int | None) -> torch.Tensor:
    """Backpropagate a collated ``batch`` (text columns as lists, ``label`` a tensor) ``size``
    rows at a time and return the batch's loss: each chunk's ``loss_of(chunk)`` weighted by
    its share of the rows, so for a decomposable loss the accumulated gradient is the whole
    batch's (dropout draws its masks chunk by chunk).

    transformers' gradient accumulation is not used for this: it groups minibatches by
    count, so a step would take batches of other forums and of the next epoch.

    Example:
        >>> batch = {"query": ["q"] * 3, "label": torch.tensor([1.0, 0.0, 0.0])}
        >>> sizes = []
        >>> mean = lambda chunk: (sizes.append(len(chunk["query"])), chunk["label"].mean())[1]
        >>> round(backward_in_chunks(mean, batch, lambda loss: None, 2).item(), 4), sizes
        (0.3333, [2, 1])
    """
    rows = len(next(v for v in batch.values() if isinstance(v, list)))
    size = size or rows
    total = None
    for start in range(0, rows, size):
        chunk = {
            k: v[start : start + size] if isinstance(v, list | torch.Tensor) else v
            for k, v in batch.items()
        }
        weighted = loss_of(chunk) * (min(size, rows - start) / rows)
        backward(weighted)
        # on the loss's own device: transformers' Trainer refuses a step's loss on another
        # (a CPU total under CUDA training stopped every cross-encoder run on a GPU)
        total = weighted.detach() if total is None else total + weighted.detach()
    return total


class PointwiseBCE(CrossEncoderLoss):
    """Binary cross-entropy of each (query, candidate) pair's logit against its 0/1 label."""

    examples = "pointwise"

    def forward(self, inputs, labels, **kwargs):
        queries, candidates = inputs
        logits = self.logits(queries, candidates)
        return F.binary_cross_entropy_with_logits(logits, labels.to(logits).view(-1))


class PairwiseHinge(CrossEncoderLoss):
    """Laskar et al. 2020: hinge on the positive-negative margin plus pointwise BCE, over
    (query, positive, negative) triples."""

    examples = "pairwise"

    def forward(self, inputs, labels=None, **kwargs):
        queries, positives, negatives = (list(column) for column in inputs)
        both = self.logits(queries + queries, positives + negatives)
        positive, negative = both[: len(queries)], both[len(queries) :]
        hinge = torch.relu(self.margin - positive + negative).mean()
        targets = torch.cat([torch.ones_like(positive), torch.zeros_like(negative)])
        return hinge + F.binary_cross_entropy_with_logits(both, targets)


class ListwiseSoftmax(CrossEncoderLoss):
    """Softmax cross-entropy of the positive against its negatives, over
    (query, positive, negative_1, ...) lists."""

    examples = "listwise"

    def forward(self, inputs, labels=None, **kwargs):
        queries, *candidates = inputs
        per_list = len(candidates)
        pairs = [(q, column[i]) for i, q in enumerate(queries) for column in candidates]
        logits = self.logits([q for q, _ in pairs], [c for _, c in pairs])
        logits = logits.view(len(queries), per_list)
        target = torch.zeros(len(queries), dtype=torch.long, device=logits.device)  # positive
        return F.cross_entropy(logits, target)
