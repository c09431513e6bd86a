"""How each kind of model is stored in a zoo entry folder, and read back.

- ``adapter``: the adapters library's own ``save_adapter(..., with_head=True)`` files at the
  top of the entry (``adapter_config.json``, ``adapter.safetensors``, ``head_config.json``,
  ``model_head.safetensors``), so ``load_adapter(entry)`` reads it directly.
- ``full``: ``model/`` holds the whole ``AutoAdapterModel`` (weights with the head, in one
  ``model.safetensors``) and its tokenizer.
- ``fusion``: one sub-folder per fused adapter (without head) and ``fusion/`` from
  ``save_adapter_fusion(..., with_head=True)``.
"""

from __future__ import annotations

import re
from pathlib import Path

from safetensors import SafetensorError, safe_open

from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.model import build_model, own_tensors
from stackexchange.errors import unknown_name
from stackexchange.jsontext import read_json_object

LAYOUTS = ("adapter", "full", "fusion")
# The adapters library's files of a saved adapter (or head)
ADAPTER_CONFIG_FILE = "adapter_config.json"
ADAPTER_WEIGHTS_FILE = "adapter.safetensors"
HEAD_CONFIG_FILE = "head_config.json"
# What an adapter needs of its base: recorded in the card ("base_config") at save time.
BASE_KEYS = ("model_type", "hidden_size", "num_hidden_layers")
_LAYER_INDEX = re.compile(r"\.layers?\.(\d+)\.")


def base_config(config) -> dict:
    """``model_type``, ``hidden_size`` and ``num_hidden_layers`` of a base model's config.

    Example:
        >>> base_config(model.config)  # doctest: +SKIP
        {'model_type': 'bert', 'hidden_size': 384, 'num_hidden_layers': 6}
    """
    return {key: getattr(config, key, None) for key in BASE_KEYS}


def adapter_files_base(folder: Path) -> dict:
    """What the adapter files in ``folder`` were made for: the model type and width that
    ``adapter_config.json`` records, and the layer count ``adapter.safetensors`` has
    weights for (unless the adapter leaves layers out)."""

    found = {}
    config_file = folder / ADAPTER_CONFIG_FILE
    leave_out = None
    if config_file.is_file():
        config = read_json_object(config_file, ZooError, "the adapter config")
        found.update({k: config[k] for k in BASE_KEYS if k in config})
        if isinstance(config.get("config"), dict):
            leave_out = config["config"].get("leave_out")
    weights = folder / ADAPTER_WEIGHTS_FILE
    if weights.is_file() and not leave_out:
        try:
            with safe_open(str(weights), framework="pt") as tensors:
                names = list(tensors.keys())
        except SafetensorError as error:  # a header cut short, not JSON, sizes that lie
            raise ZooError(f"{weights}: not a readable safetensors file ({error})") from None
        layers = {int(m.group(1)) for key in names if (m := _LAYER_INDEX.search(key))}
        if layers:
            found["num_hidden_layers"] = max(layers) + 1
    return found


def adapter_settings(folder: Path) -> dict:
    """The ``config`` dict of ``folder``'s adapter_config.json (the adapters library's)."""
    config_file = Path(folder) / ADAPTER_CONFIG_FILE
    try:
        config = read_json_object(config_file, ZooError, "the adapter config")
    except OSError as error:
        raise ZooError(f"{config_file}: unreadable adapter config ({error})") from None
    inner = config.get("config")
    return inner if isinstance(inner, dict) else {}


def adapter_method(folder: Path) -> str:
    """``lora`` or ``seqbn``: the method of the adapter in ``folder`` (its adapter_config.json's
    ``architecture``; bottleneck adapters, the MultiCQA ones included, count as ``seqbn``)."""
    return "lora" if adapter_settings(folder).get("architecture") == "lora" else "seqbn"


def check_base(model, folder: Path, card: dict | None, base_model: str) -> None:
    """Refuse to load the adapter in ``folder`` onto a base it was not made for.

    The base's model type, width and depth must equal what the card recorded at save time
    (``base_config``) and what the adapter files themselves say (see
    :func:`adapter_files_base`); otherwise missing layers would get fresh random adapters.

    Raises:
        ZooError: naming the entry, what it was made for and what the base is.
    """
    actual = base_config(model.config)
    name = (card or {}).get("name", folder.name)
    sources = [
        ("its card", dict((card or {}).get("base_config") or {})),
        ("its adapter files", adapter_files_base(folder)),
    ]
    for source, expected in sources:
        wrong = [k for k in BASE_KEYS if k in expected and expected[k] != actual[k]]
        if wrong:
            made = ", ".join(f"{k} {expected[k]}" for k in BASE_KEYS if k in expected)
            has = ", ".join(f"{k} {actual[k]}" for k in BASE_KEYS)
            raise ZooError(
                f"{folder}: zoo entry {name!r} does not fit base model {base_model!r} "
                f"(made for {made}, per {source}; the base has {has})"
            )


def write_adapter(model, adapter_name: str, folder: Path) -> None:
    """Save adapter ``adapter_name`` and its head of the same name into ``folder``."""
    model.save_adapter(str(folder), adapter_name, with_head=True, use_safetensors=True)


def write_full(model, tokenizer, folder: Path) -> None:
    """Save the whole model (encoder and heads) and tokenizer into ``folder/model``."""
    model.save_pretrained(str(folder / "model"), safe_serialization=True)
    tokenizer.save_pretrained(str(folder / "model"))


def write_fusion(model, adapter_names: list[str], folder: Path) -> None:
    """Save each fused adapter into ``folder/<name>`` and the fusion plus head into ``fusion/``."""
    # adapters on first use: the CLI starts without it
    from adapters.composition import Fuse

    for name in adapter_names:
        model.save_adapter(str(folder / name), name, with_head=False, use_safetensors=True)
    model.save_adapter_fusion(
        str(folder / "fusion"), Fuse(*adapter_names), with_head=True, use_safetensors=True
    )


def _base_mismatch(card: dict, path: Path, error: Exception) -> ZooError:
    return ZooError(
        f"{path}: zoo entry {card['name']!r} does not fit base model "
        f"{card['base_model']!r} ({str(error).splitlines()[0][:200]})"
    )


def read_full_model(model_dir: Path):
    """A saved whole ``AutoAdapterModel`` with its heads, custom pair-cosine heads included.

    adapters builds the heads named in ``config.json`` inside ``from_pretrained``, before a
    custom head type can be registered; so the model is built without them, and the heads
    are added from the config and their weights read from the same safetensors file.
    """
    # adapters, transformers on first use: the CLI starts without them
    import adapters
    from transformers import AutoConfig
    from transformers.utils import logging as transformers_logging

    # heavy: ranker.heads loads torch, transformers, adapters when imported
    from adapter_zoo.ranker.heads import register_heads

    config = AutoConfig.from_pretrained(model_dir, trust_remote_code=False)
    heads = dict(getattr(config, "prediction_heads", None) or {})
    config.prediction_heads = {}
    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()  # "head weights not used": they are, below
    try:
        model = adapters.AutoAdapterModel.from_pretrained(
            model_dir, config=config, trust_remote_code=False
        )
    finally:
        transformers_logging.set_verbosity(verbosity)
    register_heads(model)
    for name, head_config in heads.items():
        model.add_prediction_head_from_config(name, dict(head_config))
    # only the head tensors: from_pretrained has already read everything else
    with safe_open(str(model_dir / "model.safetensors"), framework="pt") as weights:
        names = [k for k in weights.keys() if k.startswith("heads.")]  # noqa: SIM118 (no dict)
        head_weights = {k: weights.get_tensor(k) for k in names}
    missing = [k for k in model.state_dict() if k.startswith("heads.") and k not in head_weights]
    if missing:
        raise ZooError(f"{model_dir}: model.safetensors lacks head weights {missing[:3]}")
    model.load_state_dict(head_weights, strict=False)
    return own_tensors(model)


def read_model(path: Path, card: dict, layout: str):
    """Build the ``adapters`` model and tokenizer of a verified entry stored in ``layout``
    (its kind's, :mod:`adapter_zoo.kinds.cross`); its setup is active."""
    # transformers on first use: the CLI starts without it
    from transformers import AutoTokenizer

    if layout == "full":
        model_dir = path / "model"
        return read_full_model(model_dir), AutoTokenizer.from_pretrained(
            model_dir, trust_remote_code=False
        )
    if layout not in LAYOUTS:
        raise unknown_name("layout", layout, LAYOUTS, ZooError, where=path)
    model, tokenizer = build_model(card["base_model"])
    for folder in [path] if layout == "adapter" else [path / n for n in card["adapters"]]:
        check_base(model, folder, card, card["base_model"])
    try:
        if layout == "adapter":
            name = model.load_adapter(str(path), set_active=True, use_safetensors=True)
            model.active_head = name
        else:
            # adapters on first use: the CLI starts without it
            from adapters.composition import Fuse

            names = list(card["adapters"])
            for name in names:
                model.load_adapter(str(path / name), with_head=False, use_safetensors=True)
            model.load_adapter_fusion(str(path / "fusion"), use_safetensors=True)
            model.set_active_adapters(Fuse(*names))
            model.active_head = card.get("head", ",".join(names))
    except RuntimeError as error:  # size mismatches: weights made for another encoder
        raise _base_mismatch(card, path, error) from None
    return model, tokenizer
