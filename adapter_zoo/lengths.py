"""The token limits of (query, candidate) pairs: every default ``max_length`` in one place.

A cross-encoder reads a query and a candidate as one sequence, so its limit is for the pair;
a bi-encoder reads each text alone, at all-MiniLM-L6-v2's own ``max_seq_length``. A card
records the length its entry was trained and selected at; cards written before that field
existed were trained at these defaults. Every default ``max_length`` of a function, config or
command-line option, and every reader of a card's length
(:func:`adapter_zoo.registry.card_max_length`, through the entry's kind), takes its number
from here.

Example:
    >>> default_max_length("bi"), default_max_length("cross")
    (256, 300)
"""

from __future__ import annotations

CROSS_MAX_LENGTH = 300
BI_MAX_LENGTH = 256


def default_max_length(encoder: str | None) -> int:
    """The default token limit of an ``encoder`` (``bi``; anything else reads pairs, as the
    cross-encoder: cards without ``encoder`` are cross-encoders, composites score through
    their members)."""
    return BI_MAX_LENGTH if encoder == "bi" else CROSS_MAX_LENGTH
