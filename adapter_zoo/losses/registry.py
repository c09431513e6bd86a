"""The registry of training losses: each loss is an ``nn.Module`` class registered by name.

A cross-encoder loss (:class:`adapter_zoo.losses.cross.CrossEncoderLoss`) is a
sentence-transformers cross-encoder loss: built with the ``CrossEncoder`` it trains and
called with one minibatch's text columns and labels; the shape of those examples (``pointwise``: (query, candidate, label);
``pairwise``: (query, positive, negative); ``listwise``: (query, positive, (negative, ...)))
is the loss's, so the sampler draws what the loss asks for. A bi-encoder loss is a
sentence-transformers loss class trained with in-batch negatives on (anchor, positive)
``pairs``, or ``triplets`` when it also takes a hard negative per anchor.

The table holds names, shapes and the class's import path only (a ``module:Class``
string), so naming and checking a loss imports no torch (``adapter-zoo --help`` and the
torch-free commands stay fast); :func:`build_loss` imports the class.

Example:
    >>> get_loss("listwise").examples, get_loss("listwise").encoder
    ('listwise', 'cross')
    >>> default_loss("bi")
    'MultipleNegativesRankingLoss'
    >>> loss_names("cross")
    ['bce', 'listwise', 'pairwise']
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from adapter_zoo.errors import ZooError
from stackexchange.errors import unknown_name

CROSS_SHAPES = ("pointwise", "pairwise", "listwise")
BI_SHAPES = ("pairs", "triplets")


@dataclass(frozen=True)
class LossSpec:
    """A registered loss.

    Attributes:
        name: what ``--loss`` and ``TrainingConfig.loss`` say.
        encoder: ``cross`` or ``bi``.
        examples: the shape of its training examples (``CROSS_SHAPES`` for cross-encoders,
            ``BI_SHAPES`` for bi-encoders).
        target: ``module:Class`` of its ``nn.Module`` (imported when built), or the class.
        summary: one line for ``--help`` and the docs.
        options: keyword arguments the class is built with (``(name, value)`` pairs).
    """

    name: str
    encoder: str
    examples: str
    target: str | type
    summary: str = ""
    options: tuple[tuple[str, object], ...] = ()

    def load_class(self):
        """The loss's ``nn.Module`` class (imported here)."""
        if not isinstance(self.target, str):
            return self.target
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)


_SENTENCE_LOSSES = "sentence_transformers.sentence_transformer.losses"
# sentence-transformers' losses with in-batch negatives, by the inputs their docs list
SENTENCE_LOSSES = {
    "MultipleNegativesRankingLoss": "triplets",
    "CachedMultipleNegativesRankingLoss": "triplets",
    "MultipleNegativesSymmetricRankingLoss": "pairs",
    "CachedMultipleNegativesSymmetricRankingLoss": "pairs",
    "MegaBatchMarginLoss": "pairs",
    "GISTEmbedLoss": "triplets",
    "CachedGISTEmbedLoss": "triplets",
}
# Losses guided by a second model: training hands them the base itself, frozen and without
# adapters. GISTEmbed's similarities mask each in-batch or hard negative it rates above the
# anchor's positive (false negatives: a BM25 neighbour's answer is often an answer to the
# anchor too); its temperature is MultipleNegativesRankingLoss's (scale 20), so what changes
# is which negatives count. FusedMarginMSELoss's are the teacher's semantic half.
GUIDED_LOSSES = frozenset({"GISTEmbedLoss", "CachedGISTEmbedLoss", "FusedMarginMSELoss"})
_GUIDED_OPTIONS = (("temperature", 0.05),)
# GradCache (the Cached losses): the batch's loss, its in-batch negatives all there, from
# embeddings computed this many texts at a time, so activations are held for 8 texts only.
CACHED_MINI_BATCH = 8
# Losses whose triplets carry a label: the positive's BM25 margin over the negative
# (adapter_zoo.training.data.bm25_margins), the teacher's lexical half.
BM25_MARGIN_LOSSES = frozenset({"FusedMarginMSELoss"})
BUILTIN_LOSSES = (
    LossSpec("bce", "cross", "pointwise", "adapter_zoo.losses.cross:PointwiseBCE",
             "binary cross-entropy of each pair's logit (the papers' loss)"),
    LossSpec("pairwise", "cross", "pairwise", "adapter_zoo.losses.cross:PairwiseHinge",
             "hinge on the (positive, negative) margin plus BCE (Laskar et al. 2020)"),
    LossSpec("listwise", "cross", "listwise", "adapter_zoo.losses.cross:ListwiseSoftmax",
             "softmax cross-entropy of the positive against its negatives"),
    *(LossSpec(name, "bi", shape, f"{_SENTENCE_LOSSES}:{name}", "sentence-transformers",
               (("mini_batch_size", CACHED_MINI_BATCH),) * name.startswith("Cached")
               + _GUIDED_OPTIONS * (name in GUIDED_LOSSES))
      for name, shape in SENTENCE_LOSSES.items()),
    LossSpec("FusedMarginMSELoss", "bi", "triplets",
             "adapter_zoo.losses.distill:FusedMarginMSELoss",
             "in-batch ranking plus margin-MSE to the base fused with BM25 (distillation)"),
)  # fmt: skip
# Bi-encoders: MultipleNegativesRankingLoss; through its GradCache twin only when a step would
# not fit the run's memory budget: GradCache buys a much lower peak with a second pass
# (benchmarks/results/train_memory.json; docs/performance.md).
DEFAULT_LOSSES = {"cross": "bce", "bi": "MultipleNegativesRankingLoss"}
# The GradCache twin of each in-batch loss: the same loss, embeddings computed
# CACHED_MINI_BATCH texts at a time; training runs it when a step would not fit its memory
# budget (adapter_zoo.training.memory).
GRADCACHE_TWINS = {
    "MultipleNegativesRankingLoss": "CachedMultipleNegativesRankingLoss",
    "MultipleNegativesSymmetricRankingLoss": "CachedMultipleNegativesSymmetricRankingLoss",
    "GISTEmbedLoss": "CachedGISTEmbedLoss",
}
_LOSSES: dict[str, LossSpec] = {spec.name: spec for spec in BUILTIN_LOSSES}


def register_loss(spec: LossSpec) -> LossSpec:
    """Register ``spec`` (a plug-in's loss).

    Raises:
        ZooError: the name is taken, or the encoder or example shape is unknown.
    """
    if spec.name in _LOSSES and _LOSSES[spec.name] != spec:
        raise ZooError(f"loss {spec.name!r} is registered already")
    if spec.encoder not in DEFAULT_LOSSES:
        raise ZooError(f"loss {spec.name!r}: encoder must be cross or bi, not {spec.encoder!r}")
    wanted = BI_SHAPES if spec.encoder == "bi" else CROSS_SHAPES
    if spec.examples not in wanted:
        raise ZooError(
            f"loss {spec.name!r}: a {spec.encoder}-encoder loss takes {', '.join(wanted)} "
            f"examples, not {spec.examples!r}"
        )
    _LOSSES[spec.name] = spec
    return spec


def loss_names(encoder: str | None = None) -> list[str]:
    """The registered losses' names (of one encoder, or all), sorted."""
    return sorted(n for n, s in _LOSSES.items() if encoder is None or s.encoder == encoder)


def default_loss(encoder: str) -> str:
    """The loss an encoder trains with unless told otherwise."""
    return DEFAULT_LOSSES[encoder]


def get_loss(name: str, encoder: str | None = None) -> LossSpec:
    """The registered loss ``name`` (for ``encoder``, when given).

    Raises:
        ZooError: unknown, or a loss of the other encoder; the message lists the choices.
    """
    spec = _LOSSES.get(name)
    which = f"{encoder}-encoder loss" if encoder else "loss"
    if spec is None:
        raise unknown_name(which, name, loss_names(encoder), ZooError)
    if encoder is not None and spec.encoder != encoder:  # a known name, not a misspelling
        known = ", ".join(loss_names(encoder))
        raise ZooError(
            f"unknown {which} {name!r} (a {spec.encoder}-encoder loss); choose one of {known}"
        )
    return spec


def build_loss(name: str, encoder: str, model, **options):
    """An instance of the loss ``name`` for ``model`` (a ``CrossEncoder`` or a
    ``SentenceTransformer``), with the spec's ``options`` and then ``options`` (a
    cross-encoder's ``margin``)."""
    spec = get_loss(name, encoder)
    cls = spec.load_class()
    return cls(model, **{**dict(spec.options), **options})
