"""The model each training mode starts from, and how its zoo entry is written."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.inputs import check_max_length
from adapter_zoo.ranker.model import add_ranking_head, build_model, resolve_base_model
from adapter_zoo.ranker.ranker import encode_pairs
from adapter_zoo.registry import kind_for_card
from adapter_zoo.resolve import resolve_entry
from adapter_zoo.zoo import layouts
from adapter_zoo.zoo.layouts import adapter_method, adapter_settings, check_base
from adapter_zoo.zoo.store import verify_entry


def module_name(name: str) -> str:
    """A zoo name as an adapter/head name (torch module keys cannot hold '.' or '-')."""
    return re.sub(r"\W", "_", name)


def fusion_adapters(config) -> list[tuple[str, Path, dict]]:
    """(module name, entry folder, card) of each zoo adapter a fusion combines; all checked."""
    chosen = []
    for entry_name in config.adapters:
        path = resolve_entry(entry_name)
        card = verify_entry(path)
        kind = kind_for_card(card)
        if kind.layout != "adapter":
            raise ZooError(
                f"{path}: zoo entry {entry_name!r} is a {card['mode']} model, "
                "not an adapter; fusion combines adapter entries"
            )
        if str(card["base_model"]) != str(config.base_model):
            raise ZooError(
                f"{path}: adapter {entry_name!r} was trained for base model "
                f"{card['base_model']!r}, not {config.base_model!r}"
            )
        chosen.append((module_name(entry_name), path, card))
    return chosen


def starting_adapter(config) -> tuple[Path, dict]:
    """(entry folder, card) of the zoo adapter ``config.init_from`` continues; checked.

    Raises:
        ZooError: the entry is not an adapter, is of the other encoder kind, or was trained
            for another base model.
    """
    path = resolve_entry(config.init_from)
    card = verify_entry(path)
    name = config.init_from
    kind = kind_for_card(card)
    if kind.layout != "adapter":
        raise ZooError(
            f"{path}: --init-from {name!r} is a {card['mode']} entry, not an adapter; "
            "adapters continue adapter entries"
        )
    if kind.encoder != config.encoder:
        raise ZooError(
            f"{path}: --init-from {name!r} is a {kind.encoder}-encoder adapter; "
            f"this run trains a {config.encoder}-encoder"
        )
    if str(card["base_model"]) != str(config.base_model):
        raise ZooError(
            f"{path}: adapter {name!r} was trained for base model "
            f"{card['base_model']!r}, not {config.base_model!r}"
        )
    return path, card


def check_drop_lower(drop_lower: int, layers: int | None, base_model: str) -> None:
    """Refuse a ``drop_lower`` that leaves no layer to train (0 <= K < the base's layers)."""
    if layers is not None and not 0 <= drop_lower < layers:
        raise ZooError(
            f"--drop-lower {drop_lower}: base model {base_model!r} has {layers} layers; "
            f"choose 0 to {layers - 1}"
        )


def adapter_leave_out(folder: Path) -> list[int]:
    """The layers an adapter folder leaves out (``leave_out`` in its adapter_config.json)."""
    return sorted(int(i) for i in adapter_settings(folder).get("leave_out") or [])


def new_adapter_config(config, **seqbn_options):
    """The adapters library's config of a new adapter of ``config.method``: ``LoRAConfig``
    (rank ``lora_r``, ``lora_alpha``) or ``SeqBnConfig`` (``reduction_factor`` and
    ``seqbn_options``), both leaving out the lowest ``drop_lower`` layers.

    Example:
        >>> new_adapter_config(TrainingConfig(..., method="lora"))  # doctest: +SKIP
        LoRAConfig(architecture='lora', ..., r=8, alpha=16, ...)
    """
    # adapters on first use: the CLI starts without it
    from adapters import LoRAConfig, SeqBnConfig

    leave_out = list(range(config.drop_lower))
    if config.method == "lora":
        # B starts at zero (init_weights="lora"), so the step-0 model is the base itself.
        return LoRAConfig(r=config.lora_r, alpha=config.lora_alpha, leave_out=leave_out)
    return SeqBnConfig(
        reduction_factor=config.reduction_factor, leave_out=leave_out, **seqbn_options
    )


def adapter_card(model, name: str) -> dict:
    """The card's ``method`` and ``adapter_config`` (the adapters library's own dict) of
    adapter ``name`` in ``model``."""
    record = model.adapters_config.get(name).to_dict()
    return {"method": "lora" if record.get("architecture") == "lora" else "seqbn",
            "adapter_config": record}  # fmt: skip


def card_sources(config, setup: dict) -> dict:
    """The card fields that say what a run started from: the fused adapters, TANDA's transfer
    data, the continued entry (``init_from``)."""
    fields: dict = {}
    if "adapters" in setup:
        fields["adapters"] = setup["adapters"]
        fields["adapter_entries"] = list(config.adapters)
    if config.mode == "tanda":
        fields["transfer"] = {"data": config.transfer_data, "forums": list(config.transfer_forums)}
    if config.init_from:
        fields["init_from"] = {"entry": config.init_from}
    return fields


def lowest_run(layers: list[int]) -> int:
    """How many of the lowest layers (0, 1, ...) ``layers`` holds without a gap."""
    count = 0
    while count in layers:
        count += 1
    return count


def resolve_drop_lower(config):
    """``config`` with ``drop_lower`` (and ``max_length``) checked against its base; a
    fusion's ``drop_lower`` comes from the fused adapters, which must all leave out the same
    layers. With ``init_from``, also the ``method`` of the continued entry. Called before a
    run writes anything.

    Raises:
        ZooError: a ``max_length`` above the base's positions, a ``drop_lower`` at or above
            the base's layer count, fused adapters that leave out different layers, or a
            non-zero ``drop_lower`` that disagrees with them; a LoRA adapter among the fused
            ones; a ``method`` other than the continued entry's.
    """
    check_max_length(config.max_length, base_config(config.base_model), model=config.base_model)
    drop_lower = config.drop_lower
    method = config.method
    if config.mode == "fusion":
        for _module, path, card in fusion_adapters(config):
            if adapter_method(path) == "lora":
                raise ZooError(
                    f"{path}: {card.get('name', path.name)!r} is a LoRA adapter; the adapters "
                    "library fuses bottleneck adapters only"
                )
        found = {card.get("name", module): adapter_leave_out(path)
                 for module, path, card in fusion_adapters(config)}  # fmt: skip
        distinct = {tuple(v) for v in found.values()}
        if len(distinct) > 1:
            listed = ", ".join(f"{name} {layers}" for name, layers in found.items())
            raise ZooError(
                f"fusion: the fused adapters leave out different layers ({listed}); "
                "fuse adapters trained with the same --drop-lower"
            )
        leave_out = list(next(iter(distinct)))
        if drop_lower and list(range(drop_lower)) != leave_out:
            raise ZooError(
                f"--drop-lower {drop_lower} disagrees with the fused adapters, which leave out "
                f"layers {leave_out}; fusion takes its layers from them (omit --drop-lower)"
            )
        drop_lower = lowest_run(leave_out)
    elif config.init_from:
        start = starting_adapter(config)[0]
        method = adapter_method(start)
        if config.method not in (None, method):
            raise ZooError(
                f"--method {config.method} disagrees with --init-from {config.init_from!r}, "
                f"a {method} adapter; the adapter keeps its method (omit --method)"
            )
        leave_out = adapter_leave_out(start)
        if drop_lower and list(range(drop_lower)) != leave_out:
            raise ZooError(
                f"--drop-lower {drop_lower} disagrees with --init-from {config.init_from!r}, "
                f"which leaves out layers {leave_out}; the adapter keeps its layers (omit "
                "--drop-lower)"
            )
        drop_lower = lowest_run(leave_out)
    elif drop_lower:
        check_drop_lower(drop_lower, base_layer_count(config.base_model), config.base_model)
    if (drop_lower, method) == (config.drop_lower, config.method):
        return config
    return dataclasses.replace(config, drop_lower=drop_lower, method=method)


def base_config(base_model: str):
    """A base model's ``transformers`` config (read without loading its weights), or None
    when it cannot be read (loading the model itself reports that in its own words)."""
    # transformers on first use: the CLI starts without it
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(resolve_base_model(base_model), trust_remote_code=False)
    except (OSError, ValueError):
        return None


def base_layer_count(base_model: str) -> int | None:
    """``num_hidden_layers`` of a base model's config (read without loading its weights)."""
    return getattr(base_config(base_model), "num_hidden_layers", None)


def transformer_layers(model):
    """The ``nn.ModuleList`` of a transformer's layers (BERT's ``encoder.layer``, ...)."""
    # torch on first use: the CLI starts without it
    import torch

    base = getattr(model, "base_model", model)
    count = getattr(base.config, "num_hidden_layers", None)
    for module in base.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == count:
            return module
    raise ZooError(f"{base.config.name_or_path}: cannot find its {count} transformer layers")


def freeze_lower_layers(model, drop_lower: int) -> None:
    """Freeze the embeddings and the lowest ``drop_lower`` layers of a fully fine-tuned model
    (``full``/``tanda`` with ``drop_lower``): what AdapterDrop leaves without adapters."""
    if not drop_lower:
        return
    base = getattr(model, "base_model", model)
    check_drop_lower(drop_lower, base.config.num_hidden_layers, base.config.name_or_path)
    embeddings = getattr(base, "embeddings", None)
    if embeddings is None:
        embeddings = base.get_input_embeddings()
    for module in [embeddings, *transformer_layers(base)[:drop_lower]]:
        for param in module.parameters():
            param.requires_grad_(False)


def set_attention_dropout(model, dropout: float | None) -> None:
    """Train ``model``'s attention with ``dropout`` on its attention weights (None: leave the
    base's own). Both of transformers' attention paths read it at each forward: the fused
    kernel's ``dropout_prob`` and the math path's ``nn.Dropout``.

    Example:
        >>> set_attention_dropout(transformer, 0.0)  # doctest: +SKIP
    """
    if dropout is None:
        return
    for module in model.modules():
        if "SelfAttention" not in type(module).__name__:  # adapters' subclasses add a suffix
            continue
        if hasattr(module, "dropout_prob"):
            module.dropout_prob = dropout
        if hasattr(getattr(module, "dropout", None), "p"):  # an nn.Dropout
            module.dropout.p = dropout


def bound_activation_memory(model, layers: int | None = None) -> None:
    """Recompute the lowest ``layers`` transformer layers' activations in backward instead
    of holding them (None: every layer's).

    Training MiniLM held 6.8 GB (bi-encoder, 32 pairs at 256 tokens) and 5.1 GB
    (cross-encoder, 32 pairs at 300) on CPU, nearly all of it activations kept for backward:
    with attention dropout on, CPU attention takes the math path, which keeps every layer's
    attention matrices (batch x heads x length x length floats, several per layer). With
    checkpointing only each layer's input is kept, and one layer's activations are rebuilt at
    a time during backward. Non-reentrant checkpointing replays each layer with the RNG state
    of its forward, so dropout draws the same masks: the same loss and gradients, for about
    one extra forward pass of compute. Eval mode (dev scoring) is unaffected.

    Each layer checks its own flag (transformers' ``GradientCheckpointingLayer``), so the
    layers above the lowest ``layers`` are switched back to holding theirs: a plan that
    needs only part of the saving pays only part of the extra pass.

    Example:
        >>> bound_activation_memory(model, layers=3)  # doctest: +SKIP
    """
    base = getattr(model, "base_model", model)
    base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if layers is None:
        return
    for layer in transformer_layers(base)[layers:]:
        layer.gradient_checkpointing = False


def apply_memory_plan(model, plan) -> None:
    """What ``plan`` (a :class:`~adapter_zoo.training.memory.MemoryPlan`) asks of ``model``'s
    activations: its lowest ``plan.layers`` recomputed in backward, or nothing when the plan
    holds them all (:func:`bound_activation_memory`)."""
    if plan.recompute:
        bound_activation_memory(model, plan.layers)


# Why lower layers without adapters cost no backward pass (AdapterDrop's training saving):
# every weight below the first adapter is frozen (train_adapter / train_adapter_fusion freeze
# the encoder; freeze_lower_layers does it for full mode) and input ids carry no gradient, so
# no tensor computed there requires grad; autograd records no graph for them and
# ``loss.backward()`` stops at the first adapter's input. Layer ``drop_lower`` runs its
# attention and feed-forward block graph-free too: its adapter sits after them. Nothing needs
# doing here; tests/adapter_zoo/training/test_training_modes.py checks that those outputs
# have no grad_fn.


def setup_model(config):
    """Build the model of ``config.mode`` with its trainable parts (seeded by the caller).

    Returns:
        (model, tokenizer, setup) where ``setup`` holds the names the writer needs.
    """
    model, tokenizer = build_model(config.base_model)
    check_drop_lower(config.drop_lower, model.config.num_hidden_layers, config.base_model)
    name = module_name(config.name)
    if config.layout == "full":
        freeze_lower_layers(model, config.drop_lower)
        add_ranking_head(model, name)
        model.train()
        return model, tokenizer, {"head": name}
    if config.layout == "adapter" and config.init_from:
        path, card = starting_adapter(config)
        check_base(model, path, card, config.base_model)
        model.load_adapter(str(path), load_as=name, with_head=True, use_safetensors=True)
        model.train_adapter(name)  # the entry's adapter and head go on training
        model.active_head = name
        return model, tokenizer, {"head": name, "adapter": name}
    if config.layout == "adapter":
        model.add_adapter(name, config=new_adapter_config(config))
        add_ranking_head(model, name)
        model.train_adapter(name)  # freezes the encoder; the adapter and its head train
        model.active_head = name
        return model, tokenizer, {"head": name, "adapter": name}
    # adapters on first use: the CLI starts without it
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
    if config.layout == "full":
        layouts.write_full(model, tokenizer, folder)
    elif config.layout == "adapter":
        layouts.write_adapter(model, setup["adapter"], folder)
    else:
        layouts.write_fusion(model, setup["adapters"], folder)


def fusion_weights(model, tokenizer, pairs, max_length: int, fusion_name: str) -> dict:
    """Mean fusion attention per layer and adapter, {layer: {adapter: weight}}, over ``pairs``."""
    # torch on first use: the CLI starts without it
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
