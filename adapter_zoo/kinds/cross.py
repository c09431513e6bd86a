"""Cross-encoder entries (card ``encoder: cross`` or none): a pair read jointly, one score.

Stored as the adapters library's own files (see :mod:`adapter_zoo.zoo.layouts`): an adapter
with its head, the whole model, or an AdapterFusion of adapters with its head.
"""

from __future__ import annotations

from adapter_zoo.kinds.entry import EntryKind
from adapter_zoo.ranker import Ranker
from adapter_zoo.ranker.probe import check_pair_probe
from adapter_zoo.registry import register_kind
from adapter_zoo.zoo.layouts import read_model
from adapter_zoo.zoo.snippets import adapters_library_lines


class CrossEncoderKind(EntryKind):
    """The cross-encoder kinds' behaviour; each one's encoder, card modes and layout are its
    rows in :data:`adapter_zoo.modes.MODE_TABLE`."""

    summary = "cross-encoder ranker"

    def load_entry(self, path, card: dict, *, device=None):
        model, tokenizer = read_model(path, card, self.layout)
        ranker = Ranker(
            model,
            tokenizer,
            base_model=card["base_model"],
            card=card,
            max_length=self.max_length(card),
            device=device,
        )
        if self.layout != "full":  # its adapters act as when saved, or it is refused
            check_pair_probe(ranker.model, ranker.tokenizer, card, path)
        return ranker


class _CrossAdapterLines(CrossEncoderKind):
    def library_lines(self, card, folder, head_type):
        return adapters_library_lines(card, folder, head_type, self.max_length(card))

    def export_refusal(self, card, path=None):
        return (
            f"it is an adapter entry ({card.get('mode')}), and a CrossEncoder runs no "
            "adapters; load it with the adapters library (see its model card)"
        )


@register_kind
class CrossAdapter(_CrossAdapterLines):
    """One forum's adapter (bottleneck or LoRA) and its ranking head."""

    name = "cross-adapter"


@register_kind
class CrossMultitask(_CrossAdapterLines):
    """One adapter trained on several forums at once (MultiCQA's multi-task setting)."""

    name = "cross-multitask"


@register_kind
class CrossFull(CrossEncoderKind):
    """The whole model fine-tuned (the peer of the adapters)."""

    name = "cross-full"

    def export_refusal(self, card, path=None):
        return None  # the head decides, once loaded (adapter_zoo.export.model_refusal)


@register_kind
class CrossFusion(CrossEncoderKind):
    """AdapterFusion over several forums' adapters, with its own head."""

    name = "cross-fusion"

    def export_refusal(self, card, path=None):
        return "it is an AdapterFusion entry, and a CrossEncoder runs no adapters"
