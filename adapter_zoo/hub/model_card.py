"""The Hub model card (README.md with YAML metadata) of a pushed zoo entry: the one card
renderer, :func:`adapter_zoo.zoo.cards.render_card`, given the repository."""

from __future__ import annotations

from adapter_zoo.zoo.cards import LIBRARY_NAME, render_card
from adapter_zoo.zoo.snippets import (  # re-exported: the Hub's names for these
    BASE_MODEL_HUB_IDS,
    PAIR_COSINE,
    entry_head_type,
    hub_base_model,
)


def render_model_card(card: dict, repo_id: str, *, head_type: str | None = None) -> str:
    """README.md text for ``card`` pushed to ``repo_id`` (see
    :func:`adapter_zoo.zoo.cards.render_card`).

    Example:
        >>> text = render_model_card({"name": "beer", "mode": "adapter", "base_model":
        ...     "minilm-l6", "forums": ["beer.stackexchange.com"], "files": {}}, "me/beer")
        >>> "pipeline_tag: text-ranking" in text
        True
    """

    return render_card(card, repo_id=repo_id, head_type=head_type)


__all__ = [
    "BASE_MODEL_HUB_IDS",
    "LIBRARY_NAME",
    "PAIR_COSINE",
    "entry_head_type",
    "hub_base_model",
    "render_model_card",
]
