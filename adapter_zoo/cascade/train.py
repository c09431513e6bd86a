"""Joint training of all exits: one exit sampled uniformly per minibatch, BCE on its logit."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from adapter_zoo.cascade.config import CascadeConfig
from adapter_zoo.cascade.schedule import sample_exits
from adapter_zoo.errors import ZooError
from adapter_zoo.lengths import CROSS_MAX_LENGTH
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.ranker.inputs import check_max_length
from adapter_zoo.training.models import base_config
from adapter_zoo.training.rates import default_lr
from adapter_zoo.zoo.store import check_zoo_writable, entry_folder, entry_lock
from stackexchange.io import refuse_input_inside_output
from stackexchange.numbers import MAX_BATCH, MAX_LIST, MAX_STEPS, check_number

if TYPE_CHECKING:
    from adapter_zoo.cascade.model import CascadeRanker


def train_cascade(
    ranker: CascadeRanker,
    pairs: Sequence[tuple[str, str, int]],
    *,
    epochs: int = 1,
    batch_size: int = 32,
    lr: float | None = None,
    head_lr: float | None = None,
    max_steps: int | None = None,
    seed: int = 0,
    warmup_fraction: float = 0.1,
    progress: bool = True,
) -> dict:
    """Train ``ranker`` (a ``CascadeRanker``) in place on labelled pairs.

    Each minibatch trains one exit, drawn uniformly (``sample_exits``); only the layers
    below that exit run, so early exits are also cheaper to train. With an adapter config
    only the adapter and the exit heads learn; otherwise everything does.

    Args:
        ranker: the cascade ranker to train.
        pairs: ``(query, candidate, label)`` triples, label 0 or 1.
        epochs: passes over ``pairs`` (reshuffled each epoch with ``seed``).
        batch_size: pairs per minibatch.
        lr: AdamW learning rate; default 1e-4 with an adapter, 2e-5 for full fine-tuning.
        head_lr: learning rate of the freshly initialized exit classifiers (default ``lr``);
            a higher one lets short runs train the early exits too.
        max_steps: stop after this many minibatches.
        seed: seeds shuffling, dropout and exit sampling.
        warmup_fraction: linear warm-up over this fraction of the steps, then linear decay.
        progress: show a tqdm bar.

    Returns:
        A log: steps, exits trained per step, mean loss per exit, seconds, pairs/s.

    Example:
        >>> log = train_cascade(ranker, [("q", "a", 1), ("q", "b", 0)], max_steps=1)  # doctest: +SKIP
    """
    # torch, tqdm, transformers on first use: importing this module stays light
    import torch
    from tqdm.auto import tqdm
    from transformers import get_linear_schedule_with_warmup

    pairs = [(str(q), str(c), float(y)) for q, c, y in pairs]
    if not pairs:
        raise ZooError("train_cascade: no training pairs")
    bad = [y for _, _, y in pairs if y not in (0.0, 1.0)]
    if bad:
        raise ZooError(f"train_cascade: labels must be 0 or 1, got {bad[0]}")
    per_epoch = -(-len(pairs) // batch_size)
    total = per_epoch * epochs if max_steps is None else min(max_steps, per_epoch * epochs)
    mode = "adapter" if ranker.config.adapter else "full"
    lr = default_lr("cross", mode) if lr is None else lr  # its exits read a cross-encoder
    torch.manual_seed(seed)
    params = [p for p in ranker.parameters() if p.requires_grad]
    head_params = {id(p) for p in ranker.heads.parameters()}
    optimizer = torch.optim.AdamW(
        [
            {"params": [p for p in params if id(p) not in head_params], "lr": lr},
            {"params": [p for p in params if id(p) in head_params], "lr": head_lr or lr},
        ]
    )
    scheduler = get_linear_schedule_with_warmup(optimizer, int(warmup_fraction * total), total)
    exits = sample_exits(total, len(ranker.exits), seed)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    shuffler = random.Random(seed)
    losses = [[] for _ in ranker.exits]
    ranker.train()
    started, step = time.perf_counter(), 0
    bar = tqdm(total=total, disable=not progress, desc=f"train cascade ({mode})")
    while step < total:
        order = list(range(len(pairs)))
        shuffler.shuffle(order)
        for start in range(0, len(order), batch_size):
            if step >= total:
                break
            batch_pairs = [pairs[i] for i in order[start : start + batch_size]]
            batch = ranker.tokenize([p[0] for p in batch_pairs], [p[1] for p in batch_pairs])
            labels = torch.tensor([p[2] for p in batch_pairs], device=ranker.device)
            loss = loss_fn(ranker(batch, exits[step]), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            losses[exits[step]].append(loss.item())
            step += 1
            bar.update(1)
            bar.set_postfix(
                loss=f"{losses[exits[step - 1]][-1]:.3f}", exit=ranker.exits[exits[step - 1]]
            )
    bar.close()
    ranker.eval()
    seconds = time.perf_counter() - started
    return {
        "mode": mode,
        "steps": total,
        "batch_size": batch_size,
        "lr": lr,
        "head_lr": head_lr or lr,
        "seed": seed,
        "exit_steps": {str(e): exits.count(i) for i, e in enumerate(ranker.exits)},
        "mean_loss": {
            str(e): (sum(v) / len(v) if v else None) for e, v in zip(ranker.exits, losses)
        },
        "seconds": seconds,
        "pairs_per_second": total * batch_size / seconds if seconds else None,
    }


def planned_config(
    base: str, *, exits: Sequence[int] | None = None, adapter: bool = False,
    alpha: float = 0.3, max_length: int = CROSS_MAX_LENGTH,
) -> CascadeConfig:  # fmt: skip
    """The ``CascadeConfig`` of a run, checked against the base's ``config.json`` (read
    without loading its weights): exits beyond its layers and a ``max_length`` its position
    embeddings cannot hold are refused before the model loads.

    Raises:
        ZooError: one line naming the option and the base's number.
    """

    config = CascadeConfig(
        exits=tuple(exits) if exits else None,
        alpha=alpha,
        adapter="seq_bn" if adapter else None,
        max_length=max_length,
    )
    known = base_config(base)  # None: loading the model reports that in its own words
    layers = getattr(known, "num_hidden_layers", None)
    if isinstance(layers, int) and config.exits is not None and config.exits[-1] > layers:
        raise ZooError(
            f"cascade-train: exit layer {config.exits[-1]} is beyond the {layers} layers of "
            f"base {base!r} (its config.json); choose exits in 1..{layers}"
        )
    if known is not None:
        check_max_length(max_length, known, name="cascade-train: max_length", model=str(base))
    return config


def train_entry(
    name: str | Path,
    *,
    base: str = DEFAULT_BASE,
    data: str | os.PathLike | None = None,
    pairs: Sequence[tuple[str, str, int]] | None = None,
    source: dict | None = None,
    exits: Sequence[int] | None = None,
    adapter: bool = False,
    alpha: float = 0.3,
    max_steps: int | None = None,
    epochs: int = 1,
    batch_size: int = 32,
    lr: float | None = None,
    max_length: int = CROSS_MAX_LENGTH,
    negatives: int = 3,
    seed: int = 0,
    overwrite: bool = False,
    device: str | None = None,
) -> Path:
    """Train a cascade on a parse output (``data``) or given ``pairs`` and save it as zoo entry
    ``name``.

    Args:
        name: zoo entry name (a ``pathlib.Path``: that folder).
        base: base model.
        data: a parse output folder (one forum or several); its title-answer train pairs with
            ``negatives`` random other answers each.
        pairs: labelled ``(query, candidate, label)`` pairs instead of ``data`` (e.g. a
            benchmark's train split, see ``benchmarks.cascade.train_on_benchmark``).
        source: with ``pairs``: where they came from, kept in the card's ``training``.
        exits: 1-based exit layers (default: the config's).
        adapter: train one seq_bn adapter (frozen encoder) instead of everything.
        alpha: the entry's default drop ratio.
        max_steps: cap on optimizer steps.
        epochs: passes over the pairs.
        batch_size: pairs per step.
        lr: learning rate (default: the cross-encoder's of the variant, ``adapter_zoo.training.rates``).
        max_length: token limit per pair.
        negatives: random negatives per positive (``data`` only).
        seed: seeds sampling and the head.
        overwrite: replace an existing entry.
        device: torch device.

    Example:
        >>> train_entry("cascade", data="parsed/", max_steps=200)  # doctest: +SKIP
        PosixPath('.../adapter-zoo/cascade')
    """
    # looked up per call: tests monkeypatch cascade.data.pairs_from_parsed
    # heavy: cascade.model loads torch, transformers, adapters when imported
    from adapter_zoo.cascade.data import forum_dirs, pairs_from_parsed
    from adapter_zoo.cascade.model import CascadeRanker

    if (data is None) == (pairs is None):
        raise ZooError("cascade-train: give exactly one of a parse output or a benchmark")
    whole = dict(integer=True, error=ZooError)
    check_number("cascade-train: batch_size", batch_size, low=1, high=MAX_BATCH, **whole)
    check_number("cascade-train: negatives", negatives, low=1, high=MAX_LIST, **whole)
    check_number("cascade-train: epochs", epochs, low=1, high=MAX_STEPS, **whole)
    if max_steps is not None:
        check_number("cascade-train: max_steps", max_steps, low=1, high=MAX_STEPS, **whole)
    if lr is not None:
        check_number("cascade-train: lr", lr, low=0, error=ZooError)
    check_number("cascade-train: seed", seed, low=0, high=2**32 - 1, **whole)
    # A path name may point at what training reads; --overwrite would then delete it.
    inputs = [data] if data is not None else []
    benchmark = (source or {}).get("benchmark")
    if benchmark is not None and str(benchmark).startswith("local:"):
        inputs.append(str(benchmark).removeprefix("local:"))
    if Path(base).exists():
        inputs.append(base)
    refuse_input_inside_output(inputs, entry_folder(name), ZooError)
    # held until the entry is written: a second run to the name is refused before training
    with entry_lock(entry_folder(name)):
        if entry_folder(name).exists() and not overwrite:
            # checked before training so a long run is not lost to a name clash at the end
            raise ZooError(
                f"zoo entry {str(name)!r} already exists at {entry_folder(name)}; "
                "pass overwrite=True (--overwrite)"
            )
        if isinstance(name, str):  # an entry name: its zoo home must take it
            check_zoo_writable()
        config = planned_config(
            base, exits=exits, adapter=adapter, alpha=alpha, max_length=max_length
        )  # before the data and the model load
        if data is not None:
            pairs = pairs_from_parsed(data, negatives=negatives, seed=seed)
            forums, source = [p.name for p in forum_dirs(Path(data))], {"data": str(data)}
        else:
            pairs, forums, source = list(pairs), [], dict(source or {})
        ranker = CascadeRanker.from_base(base, config, device=device, seed=seed)
        log = train_cascade(
            ranker,
            pairs,
            epochs=epochs,
            batch_size=batch_size,
            lr=lr,
            max_steps=max_steps,
            seed=seed,
        )
        card = {
            "base_model": base,
            "forums": forums,
            "pairs": {"train": len(pairs)},
            "training": {**log, **source, "negatives": negatives},
            "seed": seed,
        }
        return ranker.save(name, card=card, overwrite=overwrite)
