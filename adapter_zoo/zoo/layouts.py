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

from pathlib import Path

from adapter_zoo.errors import ZooError

LAYOUTS = ("adapter", "full", "fusion")


def write_adapter(model, adapter_name: str, folder: Path) -> None:
    """Save adapter ``adapter_name`` and its head of the same name into ``folder``."""
    model.save_adapter(str(folder), adapter_name, with_head=True, use_safetensors=True)


def write_full(model, tokenizer, folder: Path) -> None:
    """Save the whole model (encoder and heads) and tokenizer into ``folder/model``."""
    model.save_pretrained(str(folder / "model"), safe_serialization=True)
    tokenizer.save_pretrained(str(folder / "model"))


def write_fusion(model, adapter_names: list[str], folder: Path) -> None:
    """Save each fused adapter into ``folder/<name>`` and the fusion plus head into ``fusion/``."""
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
    import adapters
    from safetensors import safe_open
    from transformers import AutoConfig
    from transformers.utils import logging as transformers_logging

    from adapter_zoo.ranker.heads import register_heads
    from adapter_zoo.ranker.model import own_tensors

    config = AutoConfig.from_pretrained(model_dir)
    heads = dict(getattr(config, "prediction_heads", None) or {})
    config.prediction_heads = {}
    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()  # "head weights not used": they are, below
    try:
        model = adapters.AutoAdapterModel.from_pretrained(model_dir, config=config)
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


def read_model(path: Path, card: dict):
    """Build the ``adapters`` model and tokenizer of a verified entry; its setup is active."""
    from transformers import AutoTokenizer

    from adapter_zoo.ranker.model import build_model

    layout = card.get("layout", "adapter")
    if layout == "full":
        model_dir = path / "model"
        return read_full_model(model_dir), AutoTokenizer.from_pretrained(model_dir)
    if layout not in LAYOUTS:
        raise ZooError(f"{path}: unknown layout {layout!r} in the card (known: {LAYOUTS})")
    model, tokenizer = build_model(card["base_model"])
    try:
        if layout == "adapter":
            name = model.load_adapter(str(path), set_active=True, use_safetensors=True)
            model.active_head = name
        else:
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
