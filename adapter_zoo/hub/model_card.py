"""The Hub model card (README.md with YAML metadata) of a pushed zoo entry."""

from __future__ import annotations

import json
import numbers

LIBRARY_NAME = "adapter-transformers"  # the Hub's library tag for the adapters library
# Short base-model names of the zoo -> their Hub ids (for the card's ``base_model``).
BASE_MODEL_HUB_IDS = {
    "minilm-l6": "sentence-transformers/all-MiniLM-L6-v2",
    "bert-base": "bert-base-uncased",
}


ENCODER_WORDS = {"cross": "cross-encoder", "bi": "bi-encoder (sentence embeddings, cosine)"}


def hub_base_model(base_model: str) -> str | None:
    """The Hub id of ``base_model``; None for a local folder (the Hub cannot link it)."""
    name = str(base_model)
    if name in BASE_MODEL_HUB_IDS:
        return BASE_MODEL_HUB_IDS[name]
    if name.startswith(("/", ".", "~")) or name.count("/") > 1:
        return None
    return name


def render_model_card(card: dict, repo_id: str) -> str:
    """README.md text for ``card`` pushed to ``repo_id``: YAML metadata, then how to load it.

    Example:
        >>> text = render_model_card({"name": "beer", "kind": "adapter", "base_model":
        ...     "minilm-l6", "forums": ["beer.stackexchange.com"], "scores": {"dev_mrr@10": 0.5},
        ...     "files": {}}, "me/beer")
        >>> "library_name: adapter-transformers" in text
        True
    """
    from huggingface_hub import EvalResult, ModelCardData

    forums = list(card.get("forums") or [])
    scores = {
        key: float(value)
        for key, value in (card.get("scores") or {}).items()
        if isinstance(value, numbers.Real) and not isinstance(value, bool)
    }
    eval_results = [
        EvalResult(
            task_type="text-ranking",
            dataset_type=forums[0] if len(forums) == 1 else "adapter-zoo",
            dataset_name=", ".join(forums) or card["name"],
            dataset_split=key.split("_", 1)[0] if "_" in key else None,
            metric_type=key.split("_", 1)[-1],
            metric_name=key,
            metric_value=value,
        )
        for key, value in sorted(scores.items())
    ]
    data = ModelCardData(
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
        datasets=forums or None,
        metrics=sorted({key.split("_", 1)[-1] for key in scores}) or None,
        model_name=card["name"] if eval_results else None,
        eval_results=eval_results or None,
        pipeline_tag="text-ranking",
    )
    lines = [
        "---",
        data.to_yaml(),
        "---",
        "",
        f"# {card['name']}",
        "",
        _description(card, forums),
        "",
        "## How to load",
        "",
        "```python",
        "import adapter_zoo",
        "",
        f'ranker = adapter_zoo.load("{repo_id}")',
        'ranker.rank("your question", ["candidate 1", "candidate 2"])',
        "```",
        "",
    ]
    lines += _library_snippet(card, repo_id)
    if scores:
        lines += ["## Scores", "", "| metric | value |", "|---|---|"]
        lines += [f"| {key} | {value:.4f} |" for key, value in sorted(scores.items())] + [""]
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


def _library_snippet(card: dict, repo_id: str) -> list[str]:
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
    if card.get("kind", "adapter") != "adapter" or layout != "adapter":
        return []
    return [
        "or with the adapters library directly (the files are its own `save_adapter` "
        "layout, in safetensors; sentence-encoder bases such as MiniLM use adapter-zoo's "
        "`pair_cosine` custom head, which must be registered before loading):",
        "",
        "```python",
        "import adapters",
        "from huggingface_hub import snapshot_download",
        "from adapter_zoo.ranker.heads import register_heads",
        "",
        f'model = adapters.AutoAdapterModel.from_pretrained("{encoder}")',
        "register_heads(model)",
        f'folder = snapshot_download("{repo_id}")',
        "name = model.load_adapter(folder, set_active=True, use_safetensors=True)",
        "```",
        "",
    ]
