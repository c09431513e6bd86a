"""Cascade entries (card ``mode: cascade``): one encoder with early-exit rankers
(the Cascade Transformer, Soldaini & Moschitti 2020)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from adapter_zoo.errors import ZooError
from adapter_zoo.registry import ModelKind, register_kind

if TYPE_CHECKING:
    from adapter_zoo.cascade.model import CascadeRanker


@register_kind
class Cascade(ModelKind):
    """A cascade of early exits on one encoder (:class:`adapter_zoo.CascadeRanker`)."""

    name = "cascade"
    card_modes = ("cascade",)
    encoder = "cross"
    summary = "cascade ranker (early exits)"

    def load_entry(self, path: Path, card: dict, *, device: str | None = None) -> CascadeRanker:
        # heavy: cascade.model loads torch, transformers, adapters when imported
        from adapter_zoo.cascade.model import load_cascade

        return load_cascade(path, device=device)

    def set_max_length(self, model: CascadeRanker, max_length: int, name: str) -> None:
        raise ZooError(f"{name}: a cascade's token limit is fixed by its config at training")

    def export_refusal(self, card: dict, path: Path | None = None) -> str:
        return "it is a cascade (early exits); load it with adapter_zoo.load"

    def describe(self, card: dict) -> str:
        return (
            f"A cascade ranker (early exits) from the adapter zoo, on base model "
            f"`{card['base_model']}`."
        )
