"""The model each training mode starts from, and how its zoo entry is written."""

from __future__ import annotations

import re
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.model import add_ranking_head, build_model
from adapter_zoo.ranker.ranker import encode_pairs
from adapter_zoo.zoo.layouts import check_base


def module_name(name: str) -> str:
    """A zoo name as an adapter/head name (torch module keys cannot hold '.' or '-')."""
    return re.sub(r"\W", "_", name)


def fusion_adapters(config) -> list[tuple[str, Path, dict]]:
    """(module name, entry folder, card) of each zoo adapter a fusion combines; all checked."""
    from adapter_zoo.zoo.loading import resolve_entry
    from adapter_zoo.zoo.store import verify_entry

    chosen = []
    for entry_name in config.adapters:
        path = resolve_entry(entry_name)
        card = verify_entry(path)
        if card.get("layout", "adapter") != "adapter":
            raise ZooError(
                f"{path}: zoo entry {entry_name!r} is a {card['kind']} model, "
                "not an adapter; fusion combines adapter entries"
            )
        if str(card["base_model"]) != str(config.base_model):
            raise ZooError(
                f"{path}: adapter {entry_name!r} was trained for base model "
                f"{card['base_model']!r}, not {config.base_model!r}"
            )
        chosen.append((module_name(entry_name), path, card))
    return chosen


def setup_model(config):
    """Build the model of ``config.mode`` with its trainable parts (seeded by the caller).

    Returns:
        (model, tokenizer, setup) where ``setup`` holds the names the writer needs.
    """
    model, tokenizer = build_model(config.base_model)
    name = module_name(config.name)
    if config.layout == "full":
        add_ranking_head(model, name)
        model.train()
        return model, tokenizer, {"head": name}
    if config.layout == "adapter":
        from adapters import SeqBnConfig

        model.add_adapter(name, config=SeqBnConfig(reduction_factor=config.reduction_factor))
        add_ranking_head(model, name)
        model.train_adapter(name)  # freezes the encoder; the adapter and its head train
        model.active_head = name
        return model, tokenizer, {"head": name, "adapter": name}
    from adapters.composition import Fuse

    names = []
    for module, path, card in fusion_adapters(config):
        check_base(model, path, card, config.base_model)
        model.load_adapter(str(path), load_as=module, with_head=False, use_safetensors=True)
        names.append(module)
    fuse = Fuse(*names)
    model.add_adapter_fusion(fuse, config=config.fusion_config)
    add_ranking_head(model, fuse.name)
    model.train_adapter_fusion(fuse)  # adapters stay fixed; fusion layers and head train
    model.active_head = fuse.name
    return model, tokenizer, {"head": fuse.name, "adapters": names}


def write_entry_weights(model, tokenizer, config, setup: dict, folder: Path) -> None:
    """Write the weights in the layout of ``config.mode`` (see adapter_zoo.zoo.layouts)."""
    from adapter_zoo.zoo import layouts

    if config.layout == "full":
        layouts.write_full(model, tokenizer, folder)
    elif config.layout == "adapter":
        layouts.write_adapter(model, setup["adapter"], folder)
    else:
        layouts.write_fusion(model, setup["adapters"], folder)


def fusion_weights(model, tokenizer, pairs, max_length: int, fusion_name: str) -> dict:
    """Mean fusion attention per layer and adapter, {layer: {adapter: weight}}, over ``pairs``."""
    import numpy as np
    import torch

    names = fusion_name.split(",")
    sums: dict[int, np.ndarray] = {}
    counts: dict[int, int] = {}
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(pairs), 32):
            chunk = pairs[start : start + 32]
            batch = encode_pairs(
                tokenizer, [q for q, _ in chunk], [c for _, c in chunk], max_length
            )
            batch = {k: v.to(model.device) for k, v in batch.items()}
            out = model(**batch, output_adapter_fusion_attentions=True)
            mask = batch["attention_mask"].bool().cpu().numpy()
            for layer, locations in out["adapter_fusion_attentions"][fusion_name].items():
                for attention in locations.values():
                    weights = np.asarray(attention)  # (batch, tokens, adapters)
                    weights = (
                        weights[mask]
                        if weights.shape[:2] == mask.shape
                        else weights.reshape(-1, len(names))
                    )
                    sums[layer] = sums.get(layer, 0) + weights.sum(axis=0)
                    counts[layer] = counts.get(layer, 0) + len(weights)
    return {
        str(layer): {name: float(value) for name, value in zip(names, sums[layer] / counts[layer])}
        for layer in sorted(sums)
    }
