"""``train(config)``: phases of epochs with checkpoints, dev MAP, and a zoo entry at the end."""

from __future__ import annotations

import json
import logging
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from adapter_zoo.errors import ZooError
from adapter_zoo.losses.cross import backward_in_chunks
from adapter_zoo.training import checkpoint as ckpt
from adapter_zoo.training.config import TrainingConfig
from adapter_zoo.training.data import (
    dev_lists,
    epoch_batches,
    examples_per_batch,
    examples_per_positive,
    load_pairs,
    resolve_forums,
    with_neighbours,
)
from adapter_zoo.training.dev import DEV_LISTS, forum_dev_lists
from adapter_zoo.training.models import (
    adapter_card,
    bound_activation_memory,
    fusion_weights,
    resolve_drop_lower,
    setup_model,
    write_entry_weights,
)
from adapter_zoo.training.objective import cross_encoder_loss, dev_metrics
from adapter_zoo.zoo.layouts import base_config

log = logging.getLogger(__name__)

TANDA_PATIENCE = 2
FUSION_WEIGHT_PAIRS = 256


@dataclass
class Phase:
    """A stretch of training with one optimizer: tanda has transfer then adapt."""

    name: str
    tables: dict
    lr: float
    epochs: int
    patience: int | None
    keeps_best: bool


def _tables(data, hosts, kinds, split, hard_negatives=False) -> dict:
    tables = {}
    for host in hosts:
        tables[host] = load_pairs(data, host, kinds, split)
        if hard_negatives:
            with_neighbours(tables[host])
        if split == "train" and not sum(len(t) for t in tables[host]):
            raise ZooError(
                f"{Path(data) / host}: empty training set (no {', '.join(kinds)} pairs "
                "in split 'train')"
            )
    return tables


def _phases(config: TrainingConfig, train_tables: dict) -> list[Phase]:
    adapt = Phase("train", train_tables, config.learning_rate, config.epochs, config.patience, True)
    if config.mode != "tanda":
        return [adapt]
    transfer_hosts = resolve_forums(config.transfer_data, config.transfer_forums)
    transfer = _tables(
        config.transfer_data, transfer_hosts, config.kinds, "train", config.hard_negatives
    )
    adapt.name, adapt.patience = "adapt", config.patience or TANDA_PATIENCE
    return [
        Phase("transfer", transfer, config.transfer_lr, config.transfer_epochs, None, False),
        adapt,
    ]


def _batches_per_epoch(tables: dict, config: TrainingConfig, processes: int) -> int:
    per = examples_per_positive(config.negatives, config.loss)
    size = examples_per_batch(config.batch_size, config.negatives, config.loss)
    total = sum(math.ceil(sum(len(t) for t in ts) * per / size) for ts in tables.values())
    return total // processes if processes > 1 else total


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train(config: TrainingConfig) -> Path:
    """Train ``config`` and write its zoo entry atomically; return the entry folder.

    A crashed run resumes from its last epoch checkpoint when started again with the
    same config.

    Example:
        >>> cfg = TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="beer")
        >>> train(cfg)  # doctest: +SKIP
        PosixPath('.../adapter-zoo/beer')
    """
    if config.encoder == "bi":
        from adapter_zoo.biencoder.train import train_bi_encoder

        return train_bi_encoder(config)
    import torch
    from accelerate import Accelerator
    from transformers import get_linear_schedule_with_warmup

    from adapter_zoo.ranker import Ranker
    from adapter_zoo.zoo.store import entry_path, save_entry

    final = entry_path(config.name)
    if final.exists() and not config.overwrite:
        raise ZooError(f"zoo entry {config.name!r} already exists at {final}; use --overwrite")
    accelerator = Accelerator()
    hosts = resolve_forums(config.data, config.forums)
    if config.mode == "adapter" and len(hosts) != 1:
        raise ZooError(
            f"mode 'adapter' trains one forum's adapter, got {len(hosts)} forums "
            f"({', '.join(hosts)}); use --mode multitask"
        )
    config = resolve_drop_lower(config)  # checked on the base; a fusion's from its adapters
    train_tables = _tables(config.data, hosts, config.kinds, "train", config.hard_negatives)
    dev_tables = _tables(config.data, hosts, config.kinds[:1], "dev")
    if all((Path(config.data) / host / DEV_LISTS).is_dir() for host in hosts):
        # a benchmark's own dev lists (benchmarks.to_parse_folder): its real candidates, where
        # random negatives make every state look alike (dev MAP 0.96 on WikiQA)
        dev = forum_dev_lists(config.data, hosts)
    else:
        dev = dev_lists(
            dev_tables, queries=config.dev_queries, candidates=config.dev_candidates,
            seed=config.seed,
        )  # fmt: skip
    phases = _phases(config, train_tables)

    _seed_everything(config.seed)
    model, tokenizer, setup = setup_model(config)
    bound_activation_memory(model)
    trainable = [p for p in model.parameters() if p.requires_grad]
    config_dict = config.to_dict()
    progress = {
        "config": config_dict,
        "phase": 0,
        "epoch": 0,
        "step": 0,
        "best": None,
        "bad_epochs": 0,
        "log": [],
        "stopped": False,
    }
    if config.restart:
        ckpt.remove_checkpoint(config.name)
    resumed = ckpt.load_checkpoint(config.name, config_dict)
    tensors = {}
    if resumed is not None:
        progress, tensors = resumed
        model.load_state_dict(tensors["model"])
    model = accelerator.prepare(model)
    unwrapped = accelerator.unwrap_model(model)
    objective = cross_encoder_loss(model, tokenizer, config, accelerator.device)
    best_state = tensors.get("best_state")
    ranker = Ranker(
        unwrapped,
        tokenizer,
        base_model=config.base_model,
        max_length=config.max_length,
        device=accelerator.device,
    )
    processes = accelerator.num_processes

    for phase_index, phase in enumerate(phases):
        if phase_index < progress["phase"] or progress["stopped"]:
            continue
        per_epoch = _batches_per_epoch(phase.tables, config, processes)
        total = phase.epochs * per_epoch
        # the schedule depends on the steps left when the phase began, not when it resumed
        if phase_index != progress["phase"] or "phase_start_step" not in progress:
            progress["phase_start_step"] = progress["step"]
        if config.max_steps is not None:
            total = min(total, max(config.max_steps - progress["phase_start_step"], 0))
        optimizer = torch.optim.AdamW(trainable, lr=phase.lr, weight_decay=config.weight_decay)
        # The papers warm up over the first epoch; a run cut short by --max-steps warms up
        # over its first 10% instead, or it would spend most of its steps at a tiny lr.
        cut_short = total < phase.epochs * per_epoch
        warmup = min(per_epoch, total // 10 if cut_short else total // 2)
        scheduler = get_linear_schedule_with_warmup(optimizer, warmup, total)
        if phase_index == progress["phase"] and "optimizer" in tensors:
            optimizer.load_state_dict(tensors["optimizer"])
            scheduler.load_state_dict(tensors["scheduler"])
            ckpt.set_rng_state(tensors["rng"])
        optimizer = accelerator.prepare(optimizer)
        start_epoch = progress["epoch"] if phase_index == progress["phase"] else 0
        progress["phase"] = phase_index

        for epoch in range(start_epoch, phase.epochs):
            if config.max_steps is not None and progress["step"] >= config.max_steps:
                break
            started = time.perf_counter()
            batches = epoch_batches(
                phase.tables,
                batch_size=config.batch_size,
                k=config.negatives,
                loss=config.loss,
                seed=config.seed,
                epoch=1000 * phase_index + epoch,
            )
            if processes > 1:  # every process takes its own, equally many batches
                batches = batches[: len(batches) // processes * processes]
                batches = batches[accelerator.process_index :: processes]
            model.train()
            losses = []
            from tqdm.auto import tqdm

            remaining = None if config.max_steps is None else config.max_steps - progress["step"]
            bar = tqdm(
                batches,
                total=len(batches) if remaining is None else min(len(batches), remaining),
                desc=f"{config.name} {phase.name} epoch {epoch + 1}/{phase.epochs}",
                unit="batch",
                disable=not accelerator.is_local_main_process,
            )
            for batch in bar:
                if config.max_steps is not None and progress["step"] >= config.max_steps:
                    break
                # with drop_lower, no graph exists below the first adapter (or the first
                # unfrozen layer): backward skips those layers (see training.models)
                loss = backward_in_chunks(objective, batch, accelerator.backward, config.negatives)
                accelerator.clip_grad_norm_(trainable, 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                progress["step"] += 1
                losses.append(loss)
                bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}")
            dev_started = time.perf_counter()
            metrics = dev_metrics(ranker, dev)
            dev_seconds = round(time.perf_counter() - dev_started, 2)
            record = {
                "phase": phase.name,
                "epoch": epoch + 1,
                "step": progress["step"],
                "loss": float(np.mean(losses)) if losses else None,
                "lr": scheduler.get_last_lr()[0],
                "seconds": round(time.perf_counter() - started, 2),
                "dev_seconds": dev_seconds,
                **metrics,
            }
            progress["log"].append(record)
            if accelerator.is_main_process:
                log.info("%s", json.dumps(record))
            if phase.keeps_best:
                current = metrics.get("dev_map", -math.inf)
                best = progress["best"]
                if best is None or current > best.get("dev_map", -math.inf):
                    progress["best"] = {"epoch": epoch + 1, "step": progress["step"], **metrics}
                    progress["bad_epochs"] = 0
                    best_state = {
                        n: p.detach().cpu().clone()
                        for n, p in unwrapped.named_parameters()
                        if p.requires_grad
                    }
                else:
                    progress["bad_epochs"] += 1
                if phase.patience is not None and progress["bad_epochs"] >= phase.patience:
                    progress["stopped"] = True
            progress["epoch"] = epoch + 1
            if accelerator.is_main_process:
                ckpt.save_checkpoint(
                    config.name,
                    progress,
                    {
                        "model": unwrapped.state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(),
                        "best_state": best_state,
                    },
                )
            accelerator.wait_for_everyone()
            if progress["stopped"]:
                break
        progress["epoch"] = 0
        tensors = {}

    if best_state is not None:
        unwrapped.load_state_dict(best_state, strict=False)
    card = _card(config, hosts, train_tables, dev_tables, setup, progress, accelerator)
    card["base_config"] = base_config(unwrapped.config)  # checked when the entry loads
    if "adapter" in setup:
        card.update(adapter_card(unwrapped, setup["adapter"]))
    if config.mode == "fusion":
        pairs = [(q, c) for q, cands in dev for c in cands][:FUSION_WEIGHT_PAIRS]
        card["fusion_weights"] = fusion_weights(
            unwrapped, tokenizer, pairs, config.max_length, setup["head"]
        )
    path = final
    if accelerator.is_main_process:

        def writer(folder: Path) -> None:
            write_entry_weights(unwrapped, tokenizer, config, setup, folder)
            lines = "".join(json.dumps(record) + "\n" for record in progress["log"])
            (folder / "training_log.jsonl").write_text(lines, encoding="utf-8")

        from adapter_zoo.adapt.domain import with_domain

        writer = with_domain(writer, card, config.data, hosts)
        path = save_entry(writer, config.name, card, overwrite=config.overwrite)
        ckpt.remove_checkpoint(config.name)
    accelerator.wait_for_everyone()
    return path


def _card(config, hosts, train_tables, dev_tables, setup, progress, accelerator) -> dict:
    def counts(tables):
        return {t.kind: len(t) for t in tables}

    pairs = {
        host: {"train": counts(train_tables[host]), "dev": counts(dev_tables[host])}
        for host in hosts
    }
    best = progress["best"] or {}
    card = {
        "kind": config.mode,
        "encoder": "cross",
        "layout": config.layout,
        "base_model": config.base_model,
        "forums": hosts,
        "pairs": pairs,
        "training": {
            **config.to_dict(),
            "learning_rate": config.learning_rate,
            "steps": progress["step"],
            "processes": accelerator.num_processes,
            "best_epoch": best.get("epoch"),
            "log": progress["log"],
        },
        "seed": config.seed,
        "scores": {k: v for k, v in best.items() if k.startswith("dev_")},
        "max_length": config.max_length,
        "head": setup["head"],
    }
    if "adapters" in setup:
        card["adapters"] = setup["adapters"]
        card["adapter_entries"] = list(config.adapters)
    if config.mode == "tanda":
        card["transfer"] = {"data": config.transfer_data, "forums": list(config.transfer_forums)}
    if config.init_from:
        card["init_from"] = {"entry": config.init_from}
    return card
