"""The zoo sweep: N adapters with their heads in one ``Parallel`` forward.

The adapters library's ``Parallel`` composition runs the input once through everything
below the first adapter (embeddings and, for a bottleneck adapter after the feed-forward
block, the whole first layer), then replicates the batch once per adapter; each adapter's
own head reads its slice. Tokenization and batching are also done once instead of N times.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from adapter_zoo.errors import ZooError


def resolve_adapter(name_or_path) -> Path:
    """The folder of an adapter zoo entry: a path, or a short name in the zoo folder."""
    from adapter_zoo.zoo.store import is_entry_name, local_entry, zoo_home

    path = local_entry(name_or_path)  # a zoo name (zoo home only) or an entry folder
    if path is None:  # an adapter folder without a card, or a zoo name without one
        path = Path(name_or_path).expanduser()
        if not path.is_dir() and is_entry_name(str(name_or_path)):
            path = zoo_home() / str(name_or_path)
    if not path.is_dir():
        raise ZooError(f"sweep: no adapter entry {name_or_path!r} (looked for {path})")
    if not (path / "adapter_config.json").is_file():
        raise ZooError(f"sweep: {path} has no adapter_config.json; only adapter entries sweep")
    if not (path / "head_config.json").is_file():
        raise ZooError(f"sweep: {path} has no head_config.json; an adapter needs its head")
    card = path / "card.json"
    if card.is_file():  # a zoo entry: check its files before trusting them
        from adapter_zoo.zoo import verify_entry

        verify_entry(path)
    return path


def load_adapter_folder(
    model, path: Path, load_as: str | None = None, base_model: str | None = None
) -> str:
    """Load an adapter folder with its head, in whichever format it was saved: zoo entries
    hold ``adapter.safetensors`` (what training writes), plain ``save_adapter`` folders
    ``pytorch_adapter.bin``; adapters reads only the format it is told to. An adapter made
    for another base than ``model`` (``base_model``) is refused."""
    from adapter_zoo.zoo.layouts import check_base
    from adapter_zoo.zoo.store import CARD_FILE, read_card

    card = read_card(path) if (Path(path) / CARD_FILE).is_file() else None
    check_base(model, Path(path), card, str(base_model or model.config.name_or_path))
    safetensors = (Path(path) / "adapter.safetensors").is_file()
    return model.load_adapter(
        str(path), load_as=load_as, with_head=True, use_safetensors=safetensors
    )


def load_parallel_model(base_model: str, adapters: Sequence, *, device=None):
    """An adapters model with every adapter and head loaded and a ``Parallel`` setup active.

    Returns:
        ``(model, tokenizer, names)`` where ``names[i]`` is the name adapter ``i`` got.
    """
    from adapters.composition import Parallel

    from adapter_zoo.ranker.model import build_model
    from adapter_zoo.ranker.ranker import pick_device

    if not adapters:
        raise ZooError("sweep: no adapters given")
    model, tokenizer = build_model(base_model)
    names = []
    for index, adapter in enumerate(adapters):
        name = f"sweep_{index}"
        load_adapter_folder(model, resolve_adapter(adapter), load_as=name, base_model=base_model)
        if name not in model.heads:
            raise ZooError(f"sweep: {adapter}: no prediction head was loaded")
        names.append(name)
    if len(names) == 1:
        model.set_active_adapters(names[0])
        model.active_head = names[0]
    else:
        model.set_active_adapters(Parallel(*names))
        model.active_head = Parallel(*names)
    return model.to(pick_device(device)).eval(), tokenizer, names


def sweep(
    base_model: str,
    adapter_names_or_paths: Sequence,
    pairs: Sequence[tuple[str, str]],
    batch_size: int = 64,
    *,
    max_length: int = 300,
    device=None,
    progress: bool = False,
) -> dict:
    """Score ``pairs`` with every adapter in one shared pass over ``base_model``.

    Args:
        base_model: the base all adapters were trained on (short name, Hub id or path).
        adapter_names_or_paths: zoo names or folders of adapter entries (with heads).
        pairs: (query, candidate) pairs.
        batch_size: pairs per forward (each is replicated once per adapter inside).
        max_length: token limit per pair, as ``Ranker``.
        device: torch device; CUDA when available by default.
        progress: show a tqdm bar.

    Returns:
        ``{adapter: float32 logits in input order}``, keyed by the given names or paths.
    """
    import torch
    from tqdm.auto import tqdm

    from adapter_zoo.ranker.ranker import encode_pairs, length_order

    pairs = [(str(q), str(c)) for q, c in pairs]
    model, tokenizer, names = load_parallel_model(base_model, adapter_names_or_paths, device=device)
    scores = np.zeros((len(names), len(pairs)), dtype=np.float32)
    order = length_order(tokenizer, pairs, max_length) if pairs else []
    device = next(model.parameters()).device
    with torch.inference_mode():
        starts = range(0, len(order), batch_size)
        for start in tqdm(starts, disable=not progress, desc=f"sweep x{len(names)}"):
            index = order[start : start + batch_size]
            batch = encode_pairs(
                tokenizer, [pairs[i][0] for i in index], [pairs[i][1] for i in index], max_length
            )
            output = model(**{k: v.to(device) for k, v in batch.items()})
            heads = output.head_outputs if len(names) > 1 else [output]
            for row, head_output in enumerate(heads):
                scores[row, index] = head_output.logits[:, 0].float().cpu().numpy()
    return {str(adapter): scores[i] for i, adapter in enumerate(adapter_names_or_paths)}


def independent_scores(
    base_model: str,
    adapter_names_or_paths: Sequence,
    pairs: Sequence[tuple[str, str]],
    batch_size: int = 64,
    *,
    max_length: int = 300,
    device=None,
) -> dict:
    """The reference: one ``Ranker`` per adapter, N separate passes (what a sweep replaces)."""
    from adapter_zoo.ranker import Ranker
    from adapter_zoo.ranker.model import build_model

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
