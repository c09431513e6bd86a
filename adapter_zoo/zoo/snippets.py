"""The lines that open a zoo entry without adapter-zoo, for every card that shows them.

One renderer for the entry's local README (:func:`adapter_zoo.zoo.store.render_readme`,
the entry's own folder) and its Hub card (:mod:`adapter_zoo.hub.model_card`, the folder
``snapshot_download`` fetches): the two differ only in where the folder comes from.
"""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.registry import kind_for_card
from adapter_zoo.zoo.layouts import HEAD_CONFIG_FILE
from stackexchange.errors import AdapterZooError
from stackexchange.jsontext import read_json_file

# Short base-model names of the zoo -> their Hub ids (a card's ``base_model``, and the model
# the lines open: someone without adapter-zoo has no short names).
BASE_MODEL_HUB_IDS = {
    "minilm-l6": "sentence-transformers/all-MiniLM-L6-v2",
    "bert-base": "bert-base-uncased",
}
PAIR_COSINE = "pair_cosine"  # adapter_zoo.ranker.heads.PAIR_COSINE (not imported: torch)


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

    try:  # a snippet is written for any entry: a broken head config only leaves it out
        config = read_json_file(Path(folder) / HEAD_CONFIG_FILE)
        return str(config["config"]["head_type"])
    except (OSError, AdapterZooError, KeyError, TypeError):
        return None


def hub_folder(repo_id: str) -> tuple[str, list[str]]:
    """(Python expression of the entry's folder, the imports it needs) for a Hub repo."""
    return f'snapshot_download("{repo_id}")', ["from huggingface_hub import snapshot_download"]


def local_folder(path) -> tuple[str, list[str]]:
    """(Python expression of the entry's folder, the imports it needs) for a local folder."""
    return repr(str(path)), []


def library_lines(card: dict, folder: tuple[str, list[str]], head_type: str | None) -> list[str]:
    """Markdown lines showing how to open the entry without adapter-zoo, as its kind
    (:mod:`adapter_zoo.kinds`) gives them: sentence-transformers (+ adapters) for a
    bi-encoder, the adapters library and transformers for a cross-encoder adapter; nothing
    for the kinds that need adapter-zoo (composites, cascades, fusions).

    Args:
        card: the entry's card.
        folder: where the entry's files are, from :func:`hub_folder` or :func:`local_folder`.
        head_type: the ``head_type`` of the entry's ``head_config.json`` (None: unknown).

    Example:
        >>> lines = library_lines({"mode": "adapter", "encoder": "bi", "layout": "adapter",
        ...     "base_model": "minilm-l6"}, local_folder("/zoo/beer-bi"), None)
        >>> "name = model[0].auto_model.load_adapter(folder, use_safetensors=True)" in lines
        True
    """

    return kind_for_card(card).library_lines(card, folder, head_type)


def sentence_transformers_lines(
    card: dict, folder: tuple[str, list[str]], layout: str, max_length: int
) -> list[str]:
    """The lines that open a bi-encoder entry (``adapter`` or ``full`` layout) in
    sentence-transformers and the adapters library."""
    encoder = hub_base_model(card["base_model"]) or card["base_model"]
    where, imports = folder
    if layout == "full":
        load = [f'model = SentenceTransformer({where} + "/model")']
    else:
        load = [
            f'model = SentenceTransformer("{encoder}")',
            "adapters.init(model[0].auto_model)",
            f"folder = {where}",
            "name = model[0].auto_model.load_adapter(folder, use_safetensors=True)",
            "model[0].auto_model.set_active_adapters(name)",
        ]
    return [
        "or with sentence-transformers (and the adapters library, whose own `save_adapter` "
        "layout the files are in):",
        "",
        "```python",
        "import adapters",
        *imports,
        "from sentence_transformers import SentenceTransformer",
        "",
        *load,
        f"model.max_seq_length = {max_length}",
        'embeddings = model.encode(["your question", "an answer"], normalize_embeddings=True)',
        "```",
        "",
    ]


def adapters_library_lines(
    card: dict, folder: tuple[str, list[str]], head_type: str | None, max_length: int
) -> list[str]:
    """The lines that open a cross-encoder adapter entry with the adapters library and
    transformers, scoring as ``adapter_zoo.load(...).score(pairs)``."""
    encoder = hub_base_model(card["base_model"]) or card["base_model"]
    where, imports = folder
    return [
        "or with the adapters library and transformers directly: the files are adapters' own "
        "`save_adapter` layout in safetensors, which adapters 1.x reads only with "
        "`use_safetensors=True` (without it `load_adapter` looks for `pytorch_adapter.bin` and "
        "fails). These lines score exactly as `adapter_zoo.load(...).score(pairs)`:",
        "",
        "```python",
        *_adapters_lines(where, imports, head_type, encoder, max_length),
        "```",
        "",
    ]


def _adapters_lines(
    where: str, imports: list[str], head_type: str | None, encoder: str, max_length: int
) -> list[str]:
    """Python lines that open a cross-encoder adapter entry with adapters + transformers and
    score two pairs. A sentence-encoder base's pair-cosine head is adapter-zoo's own: without
    ``register_heads`` the adapters library stops at "Given head type 'pair_cosine' is not
    known", so that one import is shown (and only for that head)."""
    zoo_head = head_type in (None, PAIR_COSINE)
    return [
        "import adapters",
        "import torch",
        *imports,
        "from transformers import AutoTokenizer",
        *(["", "from adapter_zoo import register_heads"] if zoo_head else []),
        "",
        f'model = adapters.AutoAdapterModel.from_pretrained("{encoder}")',
        *(
            ["register_heads(model)  # adapter-zoo's pair_cosine head (sentence-encoder bases)"]
            if zoo_head
            else []
        ),
        f"folder = {where}",
        "name = model.load_adapter(folder, set_active=True, use_safetensors=True)",
        f'tokenizer = AutoTokenizer.from_pretrained("{encoder}")',
        'pairs = [("your question", "candidate 1"), ("your question", "candidate 2")]',
        "batch = tokenizer(",
        "    [q for q, _ in pairs],",
        "    [c for _, c in pairs],",
        "    padding=True,",
        "    truncation=True,",
        f"    max_length={max_length},",
        '    return_tensors="pt",',
        ")",
        "with torch.no_grad():",
        "    scores = model.eval()(**batch).logits[:, 0]  # higher is more relevant",
    ]
