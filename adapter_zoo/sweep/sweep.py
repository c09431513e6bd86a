"""The zoo sweep: N adapters with their heads in one ``Parallel`` forward.

The adapters library's ``Parallel`` composition runs the input once through everything
below the first adapter, then replicates the batch once per adapter; each adapter's own head
reads its slice. A layer without any of the adapters (``get_active_setup`` finds none of
them there) runs on the unreplicated batch: ``compose_parallel`` repeats the hidden states at
the first adapter block. So the embeddings and, for a bottleneck adapter after the
feed-forward block, the whole first layer run once; with AdapterDrop entries (``train
--drop-lower K``, ``leave_out=[0..K-1]``) the lowest K + 1 layers run once for all N.

Adapters that sit in different places (another ``leave_out``, or attention adapters as in
MultiCQA's imports) cannot share one ``Parallel`` pass: a layer where only some of them have
a module breaks adapters 1.3's composition (a KeyError or a missing tensor). The sweep groups
the adapters by where their modules are and runs one ``Parallel`` pass per group, over the
same tokenized batches. Tokenization and batching are done once instead of N times.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from adapter_zoo.devices import pick_device
from adapter_zoo.errors import ZooError
from adapter_zoo.lengths import CROSS_MAX_LENGTH
from adapter_zoo.loading import resolve_entry
from adapter_zoo.names import parse_model_name
from adapter_zoo.precision import INT8, PrecisionError, cast_for_inference, resolve_precision
from adapter_zoo.ranker import Ranker
from adapter_zoo.ranker.inputs import check_max_length, text_pairs
from adapter_zoo.ranker.model import build_model
from adapter_zoo.ranker.ranker import encode_pairs, length_order
from adapter_zoo.registry import kind_for_card
from adapter_zoo.zoo.layouts import (
    ADAPTER_CONFIG_FILE,
    ADAPTER_WEIGHTS_FILE,
    HEAD_CONFIG_FILE,
    check_base,
)
from adapter_zoo.zoo.store import CARD_FILE, is_entry_name, local_entry, read_card, verify_entry
from stackexchange.numbers import MAX_BATCH, check_number


def resolve_adapter(name_or_path) -> Path:
    """The folder of an adapter: a zoo entry by name (``adapter_zoo.loading.resolve_entry``,
    the one name -> entry resolver: the local zoo, then the Hub, never a folder of the working
    directory), or a folder by path (a zoo entry or a plain ``save_adapter`` folder with its
    head)."""

    name = str(name_or_path)
    path = resolve_entry(name) if is_entry_name(name) else Path(name).expanduser()
    if not path.is_dir():
        raise ZooError(f"sweep: no adapter entry {name!r} (looked for {path})")
    if not (path / ADAPTER_CONFIG_FILE).is_file():
        raise ZooError(f"sweep: {path} has no adapter_config.json; only adapter entries sweep")
    if not (path / HEAD_CONFIG_FILE).is_file():
        raise ZooError(f"sweep: {path} has no head_config.json; an adapter needs its head")
    if (path / CARD_FILE).is_file():  # a zoo entry: check its files before trusting them
        kind = kind_for_card(verify_entry(path))
        if kind.encoder != "cross":
            raise ZooError(
                f"sweep: {path} is a {kind.encoder}-encoder entry; the shared pass "
                "takes cross-encoder adapters (sweep_benchmark scores the others one by one)"
            )
    return path


def model_identity(name) -> str:
    """What a model name means, so two spellings of one entry compare equal: an entry's
    resolved folder (a local zoo name or a path), else the name (specs, ``sbert:``, ``bm25``,
    a Hub name)."""

    text = str(name)
    if not parse_model_name(text).is_entry:
        return text
    local = local_entry(text)
    if local is not None:
        return str(local.resolve())
    return text if is_entry_name(text) else str(Path(text).expanduser().resolve())


def refuse_repeats(models: Sequence, *, caller: str = "sweep") -> None:
    """Refuse a list that names one model twice (two records of one model, and a shared
    pass that cannot hold one adapter twice), before anything is scored or written.

    Raises:
        ZooError: ``sweep: 'beer' is named twice; name each model once`` (or both spellings).
    """
    seen: dict[str, str] = {}
    for model in models:
        key = model_identity(model)
        if key in seen:
            twice = (
                f"{str(model)!r} is named twice"
                if seen[key] == str(model)
                else f"{seen[key]!r} and {str(model)!r} are the same model"
            )
            raise ZooError(f"{caller}: {twice}; name each model once")
        seen[key] = str(model)


def load_adapter_folder(
    model, path: Path, load_as: str | None = None, base_model: str | None = None
) -> str:
    """Load an adapter folder with its head, in whichever format it was saved: zoo entries
    hold ``adapter.safetensors`` (what training writes), plain ``save_adapter`` folders
    ``pytorch_adapter.bin``; adapters reads only the format it is told to. An adapter made
    for another base than ``model`` (``base_model``) is refused."""

    card = read_card(path) if (Path(path) / CARD_FILE).is_file() else None
    check_base(model, Path(path), card, str(base_model or model.config.name_or_path))
    safetensors = (Path(path) / ADAPTER_WEIGHTS_FILE).is_file()
    return model.load_adapter(
        str(path), load_as=load_as, with_head=True, use_safetensors=safetensors
    )


def adapter_places(model, name: str) -> tuple[str, ...]:
    """The modules of ``model`` that hold a block of adapter ``name`` (its layers and
    locations): adapters with equal places can share a ``Parallel`` pass."""
    # adapters on first use: importing this module stays light
    from adapters.methods.adapter_layer_base import ComposableAdapterLayerBase

    return tuple(
        module_name
        for module_name, module in model.named_modules()
        if isinstance(module, ComposableAdapterLayerBase) and name in module.adapter_modules
    )


def parallel_groups(model, names: Sequence[str]) -> list[list[str]]:
    """``names`` grouped by :func:`adapter_places`, in first-seen order; one pass each."""
    groups: dict[tuple, list[str]] = {}
    for name in names:
        groups.setdefault(adapter_places(model, name), []).append(name)
    return list(groups.values())


def activate(model, group: Sequence[str]) -> None:
    """Make ``group`` the active setup: one adapter and its head, or a ``Parallel`` of them."""
    # adapters on first use: importing this module stays light
    from adapters.composition import Parallel

    if len(group) == 1:
        model.set_active_adapters(group[0])
        model.active_head = group[0]
    else:
        model.set_active_adapters(Parallel(*group))
        model.active_head = Parallel(*group)


def load_parallel_model(
    base_model: str, adapters: Sequence, *, device=None, precision: str = "fp32"
):
    """An adapters model with every adapter and head loaded and a ``Parallel`` setup active.

    Adapters that sit in different layers cannot share one ``Parallel`` setup; then the one
    of the first :func:`parallel_groups` group is active (``sweep`` runs each group).

    ``precision`` (see :mod:`adapter_zoo.precision`): the linear layers' dtype, heads kept
    in float32.

    Returns:
        ``(model, tokenizer, names)`` where ``names[i]`` is the name adapter ``i`` got.
    """

    if precision == INT8:
        raise PrecisionError(
            "precision int8: the sweep scores one base with many adapters in PyTorch; "
            "use --precision auto, fp32 or bf16"
        )
    dtype = resolve_precision(precision, device)

    if not adapters:
        raise ZooError("sweep: no adapters given")
    refuse_repeats(adapters)
    model, tokenizer = build_model(base_model)
    names = []
    for index, adapter in enumerate(adapters):
        name = f"sweep_{index}"
        load_adapter_folder(model, resolve_adapter(adapter), load_as=name, base_model=base_model)
        if name not in model.heads:
            raise ZooError(f"sweep: {adapter}: no prediction head was loaded")
        names.append(name)
    activate(model, parallel_groups(model, names)[0])
    cast_for_inference(model, dtype, keep_float=[model.heads])
    return model.to(pick_device(device)).eval(), tokenizer, names


def sweep(
    base_model: str,
    adapter_names_or_paths: Sequence,
    pairs: Sequence[tuple[str, str]],
    batch_size: int = 64,
    *,
    max_length: int = CROSS_MAX_LENGTH,
    device=None,
    progress: bool = False,
    precision: str = "auto",
) -> dict:
    """Score ``pairs`` with every adapter in one shared pass over ``base_model``.

    Adapters that leave out the same layers share one ``Parallel`` pass; adapters that sit in
    different layers are grouped and each group gets its own pass over the same batches.

    Args:
        base_model: the base all adapters were trained on (short name, Hub id or path).
        adapter_names_or_paths: zoo names or folders of adapter entries (with heads).
        pairs: (query, candidate) pairs.
        batch_size: pairs per forward (each is replicated once per adapter inside).
        max_length: token limit per pair, as ``Ranker``.
        device: torch device; CUDA when available by default.
        progress: show a tqdm bar.
        precision: ``auto``, ``fp32`` or ``bf16``: the dtype of the base's and adapters'
            weights (:mod:`adapter_zoo.precision`, as ``adapter_zoo.load``); logits float32.

    Returns:
        ``{adapter: float32 logits in input order}``, keyed by the given names or paths.
    """
    # torch, tqdm on first use: importing this module stays light
    import torch
    from tqdm.auto import tqdm

    check_number(
        "sweep: batch_size", batch_size, integer=True, low=1, high=MAX_BATCH, error=ZooError
    )
    pairs = text_pairs(pairs, caller="sweep")
    model, tokenizer, names = load_parallel_model(
        base_model, adapter_names_or_paths, device=device, precision=precision
    )
    check_max_length(max_length, model.config, name="sweep: max_length", model=str(base_model))
    groups = parallel_groups(model, names)
    scores = np.zeros((len(names), len(pairs)), dtype=np.float32)
    order = length_order(tokenizer, pairs, max_length) if pairs else []
    device = next(model.parameters()).device
    batches = []  # tokenized once, whatever the number of groups
    for start in range(0, len(order), batch_size):
        index = order[start : start + batch_size]
        batch = encode_pairs(
            tokenizer, [pairs[i][0] for i in index], [pairs[i][1] for i in index], max_length
        )
        batches.append((index, batch))
    bar = tqdm(total=len(batches) * len(groups), disable=not progress, desc=f"sweep x{len(names)}")
    with torch.inference_mode(), bar:
        for group in groups:
            activate(model, group)
            rows = [names.index(name) for name in group]
            for index, batch in batches:
                output = model(**{k: v.to(device) for k, v in batch.items()})
                heads = output.head_outputs if len(group) > 1 else [output]
                for row, head_output in zip(rows, heads):
                    scores[row, index] = head_output.logits[:, 0].float().cpu().numpy()
                bar.update()
    return {str(adapter): scores[i] for i, adapter in enumerate(adapter_names_or_paths)}


def independent_scores(
    base_model: str,
    adapter_names_or_paths: Sequence,
    pairs: Sequence[tuple[str, str]],
    batch_size: int = 64,
    *,
    max_length: int = CROSS_MAX_LENGTH,
    device=None,
) -> dict:
    """The reference: one ``Ranker`` per adapter, N separate passes (what a sweep replaces)."""

    result = {}
    for adapter in adapter_names_or_paths:
        model, tokenizer = build_model(base_model)
        name = load_adapter_folder(model, resolve_adapter(adapter), base_model=base_model)
        model.set_active_adapters(name)
        model.active_head = name
        ranker = Ranker(
            model, tokenizer, base_model=base_model, max_length=max_length, device=device
        )
        result[str(adapter)] = ranker.score(pairs, batch_size=batch_size)
    return result
