"""The Hub model card (README.md with YAML metadata) of a pushed zoo entry."""

from __future__ import annotations

import json
from pathlib import Path

LIBRARY_NAME = "adapter-transformers"  # the Hub's library tag for the adapters library
# Short base-model names of the zoo -> their Hub ids (for the card's ``base_model``).
BASE_MODEL_HUB_IDS = {
    "minilm-l6": "sentence-transformers/all-MiniLM-L6-v2",
    "bert-base": "bert-base-uncased",
}


PAIR_COSINE = "pair_cosine"  # adapter_zoo.ranker.heads.PAIR_COSINE (not imported: torch)
ENCODER_WORDS = {"cross": "cross-encoder", "bi": "bi-encoder (sentence embeddings, cosine)"}


def hub_base_model(base_model: str) -> str | None:
    """The Hub id of ``base_model``; None for a local folder (the Hub cannot link it)."""
    name = str(base_model)
    if name in BASE_MODEL_HUB_IDS:
        return BASE_MODEL_HUB_IDS[name]
    if name.startswith(("/", ".", "~")) or name.count("/") > 1:
        return None
    return name


def entry_head_type(folder) -> str | None:
    """The ``head_type`` in an adapter entry's ``head_config.json``; None when it has none."""
    try:
        config = json.loads((Path(folder) / "head_config.json").read_text(encoding="utf-8"))
        return str(config["config"]["head_type"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


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
    lines += _library_snippet(card, repo_id, head_type)
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


def _library_snippet(card: dict, repo_id: str, head_type: str | None) -> list[str]:
    """How to open the entry without adapter-zoo: sentence-transformers + adapters for a
    bi-encoder, the adapters library for a cross-encoder adapter."""
    encoder = hub_base_model(card["base_model"]) or card["base_model"]
    layout = card.get("layout", "adapter")
    if card.get("encoder") == "bi" and layout in ("adapter", "full"):
        if layout == "full":
            load = [f'model = SentenceTransformer(snapshot_download("{repo_id}") + "/model")']
        else:
            load = [
                f'model = SentenceTransformer("{encoder}")',
                "adapters.init(model[0].auto_model)",
                f'folder = snapshot_download("{repo_id}")',
                "name = model[0].auto_model.load_adapter(folder, use_safetensors=True)",
                "model[0].auto_model.set_active_adapters(name)",
            ]
        return [
            "or with sentence-transformers (and the adapters library, whose own `save_adapter` "
            "layout the files are in):",
            "",
            "```python",
            "import adapters",
            "from huggingface_hub import snapshot_download",
            "from sentence_transformers import SentenceTransformer",
            "",
            *load,
            f"model.max_seq_length = {int(card.get('max_length', 256))}",
            'embeddings = model.encode(["your question", "an answer"], normalize_embeddings=True)',
            "```",
            "",
        ]
    if layout != "adapter" or card.get("kind") in ("composite", "cascade"):
        return []
    return [
        "or with the adapters library and transformers directly: the files are adapters' own "
        "`save_adapter` layout in safetensors, which adapters 1.x reads only with "
        "`use_safetensors=True` (without it `load_adapter` looks for `pytorch_adapter.bin` and "
        "fails). These lines score exactly as `adapter_zoo.load(...).score(pairs)`:",
        "",
        "```python",
        *_adapters_lines(card, repo_id, head_type, encoder),
        "```",
        "",
    ]


def _adapters_lines(card: dict, repo_id: str, head_type: str | None, encoder: str) -> list[str]:
    """Python lines that open a cross-encoder adapter entry with adapters + transformers and
    score two pairs; adapter-zoo's ``register_heads`` only for its pair-cosine head."""
    zoo_head = head_type in (None, PAIR_COSINE)
    return [
        "import adapters",
        "import torch",
        "from huggingface_hub import snapshot_download",
        "from transformers import AutoTokenizer",
        *(["", "from adapter_zoo import register_heads"] if zoo_head else []),
        "",
        f'model = adapters.AutoAdapterModel.from_pretrained("{encoder}")',
        *(
            ["register_heads(model)  # adapter-zoo's pair_cosine head (sentence-encoder bases)"]
            if zoo_head
            else []
        ),
        f'folder = snapshot_download("{repo_id}")',
        "name = model.load_adapter(folder, set_active=True, use_safetensors=True)",
        f'tokenizer = AutoTokenizer.from_pretrained("{encoder}")',
        'pairs = [("your question", "candidate 1"), ("your question", "candidate 2")]',
        "batch = tokenizer(",
        "    [q for q, _ in pairs],",
        "    [c for _, c in pairs],",
        "    padding=True,",
        "    truncation=True,",
        f"    max_length={int(card.get('max_length', 300))},",
        '    return_tensors="pt",',
        ")",
        "with torch.no_grad():",
        "    scores = model.eval()(**batch).logits[:, 0]  # higher is more relevant",
    ]
