"""Bi-encoder entries (card ``encoder: bi``): each text embedded alone, pairs scored by
cosine. Stored as the adapters library's files inside a sentence-transformers model
(see :mod:`adapter_zoo.biencoder.layouts`)."""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.biencoder.layouts import read_bi_encoder
from adapter_zoo.biencoder.probe import check_probe
from adapter_zoo.kinds.entry import EntryKind
from adapter_zoo.registry import register_kind
from adapter_zoo.zoo.snippets import sentence_transformers_lines
from adapter_zoo.zoo.store import README_FILE

# Bottleneck adapters (a ReLU between two projections) do not fold into the weights: the
# adapters library's merge_adapter merges LoRA only, so no plain folder reproduces them.
_NOT_MERGEABLE = (
    "it is a bi-encoder with bottleneck adapters, which do not merge into the base's "
    "weights, so no plain sentence-transformers folder reproduces it; open it with "
    "sentence-transformers and the adapters library as the lines in {readme} show, or with "
    "adapter_zoo.load"
)


class BiEncoderKind(EntryKind):
    """The bi-encoder kinds' behaviour; each one's encoder, card modes and layout are its
    rows in :data:`adapter_zoo.modes.MODE_TABLE`."""

    summary = "bi-encoder (sentence embeddings, cosine) ranker"

    def load_entry(self, path, card: dict, *, device=None):
        encoder = read_bi_encoder(
            path, card, self.layout, max_length=self.max_length(card), device=device
        )
        if self.layout != "full":  # its adapters act as when saved, or it is refused
            check_probe(encoder.model, card, path)
        return encoder

    def library_lines(self, card, folder, head_type):
        return sentence_transformers_lines(card, folder, self.layout, self.max_length(card))

    def export_refusal(self, card, path=None):
        where = Path("the entry" if path is None else str(path))
        return _NOT_MERGEABLE.format(readme=where / README_FILE)


@register_kind
class BiAdapter(BiEncoderKind):
    """One forum's adapter (bottleneck or LoRA) in a sentence-transformers model."""

    name = "bi-adapter"


@register_kind
class BiMultitask(BiEncoderKind):
    """One adapter trained on several forums at once."""

    name = "bi-multitask"


@register_kind
class BiSoup(BiEncoderKind):
    """The weighted average of forum adapters (``adapter_zoo.adapt``'s soup)."""

    name = "bi-soup"


@register_kind
class BiFull(BiEncoderKind):
    """A whole sentence-transformers model fine-tuned; ``model/`` opens in it as it is."""

    name = "bi-full"

    def export_refusal(self, card, path=None):
        where = Path("the entry" if path is None else str(path))
        return (
            "it is a bi-encoder, and its model/ folder already is a sentence-transformers "
            f"folder: SentenceTransformer({str(where / 'model')!r})"
        )


@register_kind
class BiFusion(BiEncoderKind):
    """AdapterFusion over several forums' bi-encoder adapters."""

    name = "bi-fusion"

    def library_lines(self, card, folder, head_type):
        return []
