"""The published MultiCQA adapters: pickled, headless, bert-base, with old key names.

MultiCQA (Rücklé et al. 2020) trained its forum adapters with its own BERT fork
(``layer_adapters.<forum>``) and published them in the early adapter-transformers format
(``layer_text_task_adapters.<forum>``, ``pytorch_adapter.bin``). Both compute exactly the
adapters library's ``SeqBnConfig`` bottleneck (ReLU, after the feed-forward block, residual
taken before the layer norm, the original layer norm before and after), so the weights only
need new names. The repository's ranking head ``lin_layer`` (a linear map of the [CLS]
vector) becomes a one-layer classification head; without it the head is new and untrained.

Example:
    >>> import adapter_zoo
    >>> ranker = adapter_zoo.load("multicqa/apple.stackexchange.com")  # doctest: +SKIP
    >>> import_legacy("multicqa/apple.stackexchange.com", "apple")  # doctest: +SKIP
"""

from __future__ import annotations

import re
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.lengths import CROSS_MAX_LENGTH
from adapter_zoo.ranker import Ranker
from adapter_zoo.ranker.model import build_model
from adapter_zoo.ranker.probe import PROBE_FIELD, pair_probe_record
from adapter_zoo.zoo.layouts import base_config, write_adapter
from adapter_zoo.zoo.store import entry_folder, save_entry

LEGACY_FILES = ("pytorch_adapter.bin", "pytorch_model.bin")
LEGACY_BASE = "bert-base"
# Module names of the old libraries -> (place in adapters 1.x, whether it is an attention adapter).
_OLD_KEY = re.compile(
    r"^(?:bert\.)?encoder\.layer\.(?P<layer>\d+)\."
    r"(?P<where>output\.(?:layer_adapters|layer_text_task_adapters)"
    r"|attention\.output\.(?:attention_adapters|attention_text_task_adapters))"
    r"\.(?P<name>[^.]+)\.(?P<param>adapter_down\.0|adapter_up|adapter_attention)\.(?P<kind>weight|bias)$"
)
OLD_HEAD = "lin_layer"


def find_legacy_weights(path: str | Path) -> Path | None:
    """The pickled weights file of a legacy adapter at ``path`` (file or folder), else None."""
    path = Path(path).expanduser()
    if path.is_file() and path.suffix in (".bin", ".pt", ".pth"):
        return path
    for name in LEGACY_FILES:
        if (path / name).is_file():
            return path / name
    return None


def convert_state_dict(state: dict) -> tuple[dict[str, dict], dict | None]:
    """Rename old MultiCQA weights to adapters 1.x names.

    Returns:
        ({adapter name: {new key: tensor}}, head) where head is ``{"weight", "bias"}`` of
        ``lin_layer`` or None. ``adapter_attention`` (a per-adapter score MultiCQA never used
        outside its own fusion experiments) is dropped.

    Example:
        >>> import torch
        >>> old = {"bert.encoder.layer.0.output.layer_adapters.beer.adapter_up.bias": torch.zeros(2)}
        >>> list(convert_state_dict(old)[0]["beer"])
        ['bert.encoder.layer.0.output.adapters.beer.adapter_up.bias']
    """
    adapters: dict[str, dict] = {}
    for key, tensor in state.items():
        match = _OLD_KEY.match(key)
        if match is None or match["param"] == "adapter_attention":
            continue
        place = "output" if match["where"].startswith("output") else "attention.output"
        new = (
            f"bert.encoder.layer.{match['layer']}.{place}.adapters.{match['name']}."
            f"{match['param']}.{match['kind']}"
        )
        adapters.setdefault(match["name"], {})[new] = tensor
    head = None
    if f"{OLD_HEAD}.weight" in state:
        head = {"weight": state[f"{OLD_HEAD}.weight"], "bias": state[f"{OLD_HEAD}.bias"]}
    return adapters, head


def _read(weights: Path) -> dict:
    # torch on first use: the CLI starts without it
    import torch

    try:
        # weights_only: a pickle from the internet must not run code.
        state = torch.load(weights, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises several types for a bad pickle
        raise ZooError(f"{weights}: not a readable PyTorch weights file ({error})") from None
    for wrapper in ("state_dict", "model", "model_state_dict"):
        if isinstance(state, dict) and isinstance(state.get(wrapper), dict):
            state = state[wrapper]
    if not isinstance(state, dict):
        raise ZooError(f"{weights}: holds a {type(state).__name__}, not a state dict")
    return state


def load_legacy(
    path: str | Path,
    *,
    adapter: str | None = None,
    base_model: str = LEGACY_BASE,
    device=None,
    max_length: int = CROSS_MAX_LENGTH,
):
    """A :class:`~adapter_zoo.ranker.Ranker` from a published MultiCQA adapter file or folder.

    Args:
        path: ``pytorch_adapter.bin`` / ``pytorch_model.bin`` or the folder holding it.
        adapter: which adapter of a file holding several (MultiCQA's all-adapters checkpoint).
        base_model: the encoder the adapter was trained on (MultiCQA: bert-base).
    """
    # adapters, torch on first use: the CLI starts without them
    import torch
    from adapters import SeqBnConfig

    weights = find_legacy_weights(path)
    if weights is None:
        raise ZooError(f"{path}: no {' or '.join(LEGACY_FILES)} (not a MultiCQA adapter)")
    found, head = convert_state_dict(_read(weights))
    if not found:
        raise ZooError(f"{weights}: no adapter weights with MultiCQA key names in it")
    if adapter is None and len(found) > 1:
        names = sorted(found)
        raise ZooError(
            f"{weights}: holds {len(names)} adapters; choose one with adapter=... "
            f"({', '.join(names[:10])}{', ...' if len(names) > 10 else ''})"
        )
    name = adapter or next(iter(found))
    if name not in found:
        raise ZooError(f"{weights}: no adapter {name!r} (has {', '.join(sorted(found)[:10])})")
    tensors = found[name]
    down = next(t for k, t in tensors.items() if k.endswith("adapter_down.0.weight"))
    model, tokenizer = build_model(base_model)
    hidden = model.config.hidden_size
    if down.shape[1] != hidden:
        raise ZooError(
            f"{weights}: adapter {name!r} was made for hidden size {down.shape[1]}, "
            f"but base model {base_model!r} has {hidden}"
        )
    attention = any(".attention.output." in k for k in tensors)
    config = SeqBnConfig(reduction_factor=hidden / down.shape[0], mh_adapter=attention)
    model.add_adapter(name, config=config)
    head_layers = 1
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)  # an untrained head is at least reproducible
        model.add_classification_head(name, num_labels=1, layers=head_layers)
    if head is not None:
        tensors = {
            **tensors,
            f"heads.{name}.1.weight": head["weight"],
            f"heads.{name}.1.bias": head["bias"],
        }
    expected = {
        k
        for k in model.state_dict()
        if f".adapters.{name}." in k or (head is not None and k.startswith(f"heads.{name}."))
    }
    if set(tensors) != expected:
        missing = sorted(expected - set(tensors)) or sorted(set(tensors) - expected)
        raise ZooError(f"{weights}: adapter {name!r} does not fit {base_model!r} ({missing[0]})")
    try:
        model.load_state_dict(tensors, strict=False)
    except RuntimeError as error:
        raise ZooError(
            f"{weights}: adapter {name!r} does not fit base model {base_model!r} "
            f"({str(error).splitlines()[-1].strip()[:200]})"
        ) from None
    model.set_active_adapters(name)
    model.active_head = name
    card = {
        "name": name,
        "mode": "adapter",
        "layout": "adapter",
        "base_model": base_model,
        "forums": [name],
        "source": "multicqa",
        "head": name,
        "head_trained": head is not None,
        "head_layers": head_layers,
        "path": str(weights),
    }
    return Ranker(
        model, tokenizer, base_model=base_model, card=card, max_length=max_length, device=device
    )


def import_legacy(
    path: str | Path,
    name: str,
    *,
    adapter: str | None = None,
    base_model: str = LEGACY_BASE,
    overwrite: bool = False,
) -> Path:
    """Store a MultiCQA adapter as a zoo entry in today's layout (with a head); return it."""

    entry_folder(name)  # refused before the adapter is loaded
    ranker = load_legacy(path, adapter=adapter, base_model=base_model, device="cpu")
    card = dict(ranker.card)
    card.update(name=name, head=card["name"], source_adapter=card["name"])
    card.pop("path")
    model = ranker.model
    card["base_config"] = base_config(model.config)
    card[PROBE_FIELD] = pair_probe_record(model, ranker.tokenizer)  # what loading checks
    return save_entry(
        lambda folder: write_adapter(model, card["head"], folder), name, card, overwrite=overwrite
    )
