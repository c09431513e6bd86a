"""The zoo on disk: named, verified model entries with cards.

Example:
    >>> import adapter_zoo
    >>> ranker = adapter_zoo.load("beer")  # doctest: +SKIP
    >>> [card["name"] for card in adapter_zoo.list_entries()]  # doctest: +SKIP
    ['beer']
"""

from adapter_zoo.zoo.loading import load
from adapter_zoo.zoo.store import (
    CARD_FILE,
    CARD_VERSION,
    entry_path,
    list_entries,
    save_entry,
    verify_entry,
    zoo_home,
)

# ``list`` stays as an alias of ``list_entries`` (``adapter_zoo.list()``); defined last
# so that the builtin stays usable above.
list = list_entries  # noqa: A001

__all__ = [
    "CARD_FILE",
    "CARD_VERSION",
    "entry_path",
    "list",
    "list_entries",
    "load",
    "save_entry",
    "verify_entry",
    "zoo_home",
]
