"""The Hub model card (README.md with YAML metadata) of a pushed zoo entry."""

from __future__ import annotations

import json

from adapter_zoo.zoo.snippets import (  # re-exported: the Hub's names for these
    BASE_MODEL_HUB_IDS,
    PAIR_COSINE,
    entry_head_type,
    hub_base_model,
)

LIBRARY_NAME = "adapter-transformers"  # the Hub's library tag for the adapters library
ENCODER_WORDS = {"cross": "cross-encoder", "bi": "bi-encoder (sentence embeddings, cosine)"}


def render_model_card(card: dict, repo_id: str, *, head_type: str | None = None) -> str:
    """README.md text for ``card`` pushed to ``repo_id``: YAML metadata, then how to load it.

    Weights trained on Stack Exchange forums carry ``license: cc-by-sa-4.0``, ``language:
    en`` and an attribution line; the forums are tags, not dataset ids; the card's scores
    are shown as dev scores, not as benchmark results (see :mod:`adapter_zoo.zoo.cards`).

    Args:
        card: the entry's card.
        repo_id: the Hub repository it is pushed to.
        head_type: the ``head_type`` of the entry's ``head_config.json`` (None: unknown):
            the adapters-only lines register adapter-zoo's heads unless it is another type.

    Example:
        >>> text = render_model_card({"name": "beer", "kind": "adapter", "base_model":
        ...     "minilm-l6", "forums": ["beer.stackexchange.com"], "scores": {"dev_mrr@10": 0.5},
        ...     "files": {}}, "me/beer")
        >>> "library_name: adapter-transformers" in text and "license: cc-by-sa-4.0" in text
        True
    """
    from adapter_zoo.zoo.cards import (
        adaptation_section,
        attribution,
        dev_scores_section,
        front_matter,
    )
    from adapter_zoo.zoo.cards import licence_metadata as licence
    from adapter_zoo.zoo.snippets import hub_folder, library_lines

    forums = list(card.get("forums") or [])
    lines = front_matter(
        library_name=LIBRARY_NAME,
        # a composition has no base of its own: its members name theirs
        base_model=None if card.get("kind") == "composite" else hub_base_model(card["base_model"]),
        tags=[
            "adapters",
            "adapter-transformers",
            "adapter-zoo",
            "text-ranking",
            str(card.get("kind", "adapter")),
            *forums,
        ],
        pipeline_tag="text-ranking",
        **licence(card),
    )
    credit = attribution(card)
    lines += [f"# {card['name']}", "", _description(card, forums), ""]
    lines += [credit, ""] if credit else []
    if card.get("kind") == "cascade":  # early exits need the cascade's own ranker
        load = [
            "from adapter_zoo import pull",
            "from adapter_zoo.cascade import CascadeRanker",
            "",
            f'ranker = CascadeRanker.load(pull("{repo_id}"))',
        ]
    else:
        load = ["import adapter_zoo", "", f'ranker = adapter_zoo.load("{repo_id}")']
    lines += [
        "## How to load",
        "",
        "```python",
        *load,
        'ranker.rank("your question", ["candidate 1", "candidate 2"])',
        "```",
        "",
    ]
    lines += library_lines(card, hub_folder(repo_id), head_type)
    lines += adaptation_section(card)
    lines += dev_scores_section(card)
    if card.get("training"):
        lines += ["## Training", "", "```json", json.dumps(card["training"], indent=2), "```", ""]
    return "\n".join(lines)


def _description(card: dict, forums: list[str]) -> str:
    if card.get("kind") == "composite":
        return (
            f"A composite ranker from the adapter zoo, `{card.get('spec')}`: its members are "
            "loaded by name (local zoo, then the zoo index), so push them too"
            + (f"; weights chosen on the dev split of {', '.join(forums)}." if forums else ".")
        )
    return (
        f"A `{card.get('kind', 'adapter')}` {ENCODER_WORDS[card.get('encoder', 'cross')]} "
        f"ranker from the adapter zoo, on base model `{card['base_model']}`"
        + (f", trained on {', '.join(forums)}." if forums else ".")
    )


__all__ = [
    "BASE_MODEL_HUB_IDS",
    "PAIR_COSINE",
    "entry_head_type",
    "hub_base_model",
    "render_model_card",
]
