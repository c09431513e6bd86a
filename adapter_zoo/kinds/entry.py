"""The shared base of the kinds stored as trained weights (cross- and bi-encoder entries)."""

from __future__ import annotations

from typing import ClassVar

from adapter_zoo.errors import ZooError
from adapter_zoo.registry import ModelKind
from adapter_zoo.zoo.untrusted import check_relative_name

# Training modes whose entries store the same layout: TANDA's second step writes what its
# first step's layout is (an adapter, or the full model).
ADAPTER_MODES = ("adapter", "tanda")
FULL_MODES = ("full", "tanda")


class EntryKind(ModelKind):
    """A kind recognised by its card's ``mode`` (how it was made), ``encoder`` and
    ``layout`` (``adapter``, ``full`` or ``fusion``: how the weights are stored)."""

    layout: ClassVar[str] = "adapter"

    def recognises_card(self, card: dict) -> bool:
        mode = card.get("mode")
        # cards name their layout; the full and fusion modes have only the one
        layout = card.get("layout") or (mode if mode in ("full", "fusion") else "adapter")
        return (
            mode in self.card_modes
            and card.get("encoder", "cross") == self.encoder
            and layout == self.layout
        )

    def check_card(self, card: dict, card_file) -> None:
        if self.layout != "fusion":
            return

        adapters = card.get("adapters")
        if not isinstance(adapters, list) or not adapters:
            raise ZooError(f"{card_file}: a fusion entry's 'adapters' must list folders")
        for name in adapters:  # folders inside the entry, never a path out of it
            check_relative_name(name, "adapters", card_file)

    def describe(self, card: dict) -> str:
        forums = list(card.get("forums") or [])
        return (
            f"A `{card.get('mode')}` {self.summary} from the adapter zoo, on base model "
            f"`{card['base_model']}`" + (f", trained on {', '.join(forums)}." if forums else ".")
        )
