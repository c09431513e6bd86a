"""Model kinds: one registered class per kind of model, asked by everything that opens,
scores, exports or describes a model, registered in :mod:`adapter_zoo.registry`
(re-exported here).

Example:
    >>> from adapter_zoo.kinds import kind_for_card, kind_for_name
    >>> kind_for_card({"mode": "adapter", "encoder": "bi"})
    <model kind bi-adapter>
    >>> kind_for_name("tfidf").baseline, kind_for_name("beer") is None
    (True, True)
"""

from adapter_zoo.registry import (
    ModelKind,
    card_max_length,
    get_kind,
    is_baseline,
    kind_for_card,
    kind_for_name,
    register_kind,
    registered_kinds,
)

__all__ = [
    "ModelKind",
    "card_max_length",
    "get_kind",
    "is_baseline",
    "kind_for_card",
    "kind_for_name",
    "register_kind",
    "registered_kinds",
]
