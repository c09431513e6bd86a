"""The zoo on disk: named, verified model entries with cards.

This is the local store only; ``adapter_zoo.hub`` builds on it, and ``adapter_zoo.load`` /
``adapter_zoo.list_entries`` (:mod:`adapter_zoo.loading`) combine the two.

Example:
    >>> from adapter_zoo.zoo import local_cards
    >>> [card["name"] for card in local_cards()]  # doctest: +SKIP
    ['beer']
"""

from adapter_zoo.zoo.store import (
    CARD_FILE,
    CARD_VERSION,
    entry_path,
    local_cards,
    save_entry,
    verify_entry,
    zoo_home,
)

__all__ = [
    "CARD_FILE",
    "CARD_VERSION",
    "entry_path",
    "local_cards",
    "save_entry",
    "verify_entry",
    "zoo_home",
]
