"""The shared base of the kinds stored as trained weights (cross- and bi-encoder entries)."""

from __future__ import annotations

from typing import ClassVar

from adapter_zoo.errors import ZooError
from adapter_zoo.modes import rows_of_kind, single_layout
from adapter_zoo.registry import ModelKind
from adapter_zoo.zoo.untrusted import check_relative_name

_FROM_TABLE = ("encoder", "card_modes", "layout")


class EntryKind(ModelKind):
    """A kind recognised by its card's ``mode`` (how it was made), ``encoder`` and
    ``layout`` (``adapter``, ``full`` or ``fusion``: how the weights are stored).

    A subclass named in :data:`adapter_zoo.modes.MODE_TABLE` takes its ``encoder``,
    ``card_modes`` and ``layout`` from its rows there and declares none of them; one the
    table does not name (a plug-in's) declares its own.
    """

    layout: ClassVar[str] = "adapter"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        rows = rows_of_kind(cls.__dict__.get("name", ""))
        if not rows:
            return
        # the table is the one declaration of these: a class repeating one could drift
        declared = [key for key in _FROM_TABLE if key in cls.__dict__]
        if declared:
            raise TypeError(f"{cls.name}: {declared[0]} comes from adapter_zoo.modes.MODE_TABLE")
        encoders, layouts = {row.encoder for row in rows}, {row.layout for row in rows}
        if len(encoders) > 1 or len(layouts) > 1:  # a kind opens one encoder's one layout
            raise TypeError(f"{cls.name}: rows of several encoders or layouts in MODE_TABLE")
        cls.encoder, cls.layout = encoders.pop(), layouts.pop()
        cls.card_modes = tuple(dict.fromkeys(row.mode for row in rows))

    def recognises_card(self, card: dict) -> bool:
        mode = card.get("mode")
        # cards name their layout; older ones did not, where a mode has one layout it is that,
        # else (tanda) an adapter
        layout = card.get("layout") or single_layout(mode) or "adapter"
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
