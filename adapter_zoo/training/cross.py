"""Training cross-encoder entries with sentence-transformers' ``CrossEncoderTrainer``.

The adapters model (adapter, fusion or fully trained, with its ranking head) runs inside a
``CrossEncoder`` (:func:`adapter_zoo.ranker.cross_encoder.as_cross_encoder`); the loss is a
registered :mod:`adapter_zoo.losses` class; dev selection is a sentence-transformers evaluator
(:class:`DevListsEvaluator`) after every epoch, with the best checkpoint loaded at the end and
``patience`` as transformers' ``EarlyStoppingCallback``. Checkpoints, optimizer and scheduler
states, resuming and logging are the trainer's (:mod:`adapter_zoo.training.trainer`).

TANDA runs two phases, each its own trainer: transfer (no selection), then adapt.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.training.batches import grouped_epoch_batches
from adapter_zoo.training.config import TrainingConfig
from adapter_zoo.training.data import (
    dev_lists,
    example_columns,
    load_pairs,
    resolve_forums,
    with_neighbours,
)
from adapter_zoo.training.dev import DEV_LISTS, forum_dev_lists
from adapter_zoo.training.trainer import TRAINING_LOG_FILE

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
    selects: bool


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


@dataclass
class Plan:
    """A phase's examples in training order (one ``datasets.Dataset``) and its steps: every
    epoch's batches, each of one forum, forums in round-robin order, negatives drawn anew
    each epoch (:func:`adapter_zoo.training.data.epoch_batches`). With several processes
    each takes every ``processes``-th batch, so ``steps`` counts one process's."""

    dataset: object
    batches: list[range]
    steps_per_epoch: int
    steps: int


def _plan(phase: Phase, phase_index: int, config: TrainingConfig, processes: int) -> Plan:
    import datasets

    examples, batches = [], []
    per_epoch = None
    for epoch in range(phase.epochs):
        epoch_plan = grouped_epoch_batches(config, phase.tables, epoch=1000 * phase_index + epoch)
        if processes > 1:  # every process takes its own, equally many batches
            epoch_plan = epoch_plan[: len(epoch_plan) // processes * processes]
        per_epoch = len(epoch_plan) // processes
        for batch in epoch_plan:
            batches.append(range(len(examples), len(examples) + len(batch)))
            examples += batch
    dataset = datasets.Dataset.from_dict(example_columns(examples, config.loss, config.negatives))
    return Plan(dataset, batches, max(1, per_epoch or 1), len(batches) // processes)


def _planned_batches(batches: list[range]):
    """A batch sampler for the trainer that yields ``batches`` as planned: ``epoch_batches``
    already shuffled, drew negatives and interleaved forums; sentence-transformers' samplers
    reshuffle one fixed dataset per epoch and end a round-robin epoch with its smallest forum."""
    from torch.utils.data import BatchSampler, SequentialSampler

    class PlannedBatches(BatchSampler):
        def __init__(self, dataset, batch_size, drop_last, **kwargs):
            super().__init__(SequentialSampler(dataset), batch_size, drop_last=False)

        def __iter__(self):
            return (list(batch) for batch in batches)

        def __len__(self):
            return len(batches)

    return PlannedBatches


def _dev(config: TrainingConfig, hosts: list[str], dev_tables: dict):
    if all((Path(config.data) / host / DEV_LISTS).is_dir() for host in hosts):
        # a benchmark's own dev lists (benchmarks.to_parse_folder): its real candidates, where
        # random negatives make every state look alike (dev MAP 0.96 on WikiQA)
        return forum_dev_lists(config.data, hosts)
    return dev_lists(dev_tables, queries=config.dev_queries, candidates=config.dev_candidates,
                     seed=config.seed)  # fmt: skip


def memory_plan(config: TrainingConfig, model_config):
    """The run's :class:`~adapter_zoo.training.memory.MemoryPlan`: a step scores
    ``batch_size`` examples of the loss's shape."""
    from adapter_zoo.losses import get_loss
    from adapter_zoo.losses.cross import pairs_per_example
    from adapter_zoo.training.memory import plan_memory

    per_example = pairs_per_example(get_loss(config.loss, "cross").examples, config.negatives)
    return plan_memory(
        model_config,
        texts=config.batch_size * per_example,
        length=config.max_length,
        budget=config.memory_budget,
    )


def _processes() -> int:
    from adapter_zoo.training.trainer import process_state

    return process_state().num_processes


def train_cross_encoder(config: TrainingConfig, hosts: list[str]) -> Path:
    """Train the cross-encoder entry of ``config`` on the parsed forums ``hosts`` (checked by
    :func:`adapter_zoo.training.train`) and write it atomically; return its folder.

    A crashed run resumes from its last epoch checkpoint (``<zoo>/.checkpoints/<name>``) when
    started again with the same config; ``restart`` starts over.
    """
    from transformers import set_seed

    from adapter_zoo.training.models import bound_activation_memory, setup_model
    from adapter_zoo.training.trainer import load_tensors, open_run_folder

    train_tables = _tables(config.data, hosts, config.kinds, "train", config.hard_negatives)
    dev_tables = _tables(config.data, hosts, config.kinds[:1], "dev")
    dev = _dev(config, hosts, dev_tables)
    phases = _phases(config, train_tables)
    processes = _processes()
    plans = [_plan(phase, i, config, processes) for i, phase in enumerate(phases)]

    set_seed(config.seed)  # the new adapter's and head's initial weights
    model, tokenizer, setup = setup_model(config)
    memory = memory_plan(config, model.config)
    if memory.recompute:
        bound_activation_memory(model)
    log.debug("memory: %s", json.dumps(memory.to_card()))  # the card records it
    folder = open_run_folder(config)
    records, steps = [], 0
    for phase, plan in zip(phases, plans, strict=True):
        done = folder / f"{phase.name}-done.json"
        if done.exists():  # a finished phase of a resumed run (tanda's transfer)
            finished = json.loads(done.read_text(encoding="utf-8"))
            load_tensors(model, folder / f"{phase.name}-done.safetensors")
        else:
            finished = _run_phase(config, model, tokenizer, phase, plan, memory, dev, folder, steps)
            _save_phase(model, folder, phase.name, finished)
        records += finished["log"]
        steps += finished["steps"]
        best = finished.get("best")
    return _write_entry(config, hosts, train_tables, dev_tables, setup, model, tokenizer, dev,
                        records, steps, best, processes, folder, memory)  # fmt: skip


def _save_phase(model, folder: Path, name: str, finished: dict) -> None:
    """Mark phase ``name`` done (its weights, then its log), so a resumed run skips it."""
    from adapter_zoo.training.trainer import process_state, save_tensors, trainable_tensors
    from stackexchange.io import atomic_write_json

    state = process_state()
    if state.is_main_process:
        save_tensors(trainable_tensors(model), folder / f"{name}-done.safetensors")
        atomic_write_json(folder / f"{name}-done.json", finished)
    state.wait_for_everyone()


def _run_phase(config, model, tokenizer, phase: Phase, plan: Plan, memory, dev, folder,
               steps_before):  # fmt: skip
    """Train one phase with ``CrossEncoderTrainer``; its log, steps and best dev record."""
    from adapter_zoo.training.trainer import resume_point

    total = plan.steps
    if config.max_steps is not None:
        total = min(total, max(config.max_steps - steps_before, 0))
    if total == 0:
        return {"log": [], "steps": 0, "best": None}
    trainer = _trainer(
        config, model, tokenizer, phase, plan, memory, dev, folder / phase.name, total
    )
    trainer.train(resume_from_checkpoint=resume_point(folder / phase.name))
    state = trainer.state
    records = phase_records(state.log_history, phase.name, plan.steps_per_epoch)
    best = None
    if phase.selects and state.best_model_checkpoint:
        best_step = int(Path(state.best_model_checkpoint).name.rsplit("-", 1)[1])
        best = next(r for r in records if r["step"] == best_step)
    return {"log": records, "steps": state.global_step, "best": best}


def phase_records(log_history: list[dict], phase: str, steps_per_epoch: int) -> list[dict]:
    """The card's training log of one phase, one record per dev evaluation (epoch ends and
    the last step), from the trainer's ``log_history`` (kept in its checkpoints).

    Example:
        >>> history = [{"loss": 0.7, "learning_rate": 1e-4, "step": 2},
        ...            {"eval_dev_map": 0.5, "eval_dev_p@1": 0.25, "eval_runtime": 1.5, "step": 2}]
        >>> phase_records(history, "train", 2)
        [{'phase': 'train', 'epoch': 1, 'step': 2, 'loss': 0.7, 'lr': 0.0001, 'dev_seconds': 1.5, 'dev_map': 0.5, 'dev_p@1': 0.25}]
    """
    losses = {r["step"]: r for r in log_history if "loss" in r}
    records = []
    for entry in log_history:
        if "eval_dev_map" not in entry:
            continue
        step = entry["step"]
        trained = losses.get(step, {})
        records.append({
            "phase": phase,
            "epoch": math.ceil(step / steps_per_epoch),
            "step": step,
            "loss": trained.get("loss"),
            "lr": trained.get("learning_rate"),
            "dev_seconds": entry.get("eval_runtime"),
            "dev_map": entry["eval_dev_map"],
            "dev_p@1": entry["eval_dev_p@1"],
        })  # fmt: skip
    return records


def _trainer(config, model, tokenizer, phase: Phase, plan: Plan, memory, dev, output_dir, total):
    import warnings

    from sentence_transformers.cross_encoder import (
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from transformers import EarlyStoppingCallback, TrainerCallback

    from adapter_zoo.losses import build_loss
    from adapter_zoo.losses.cross import backward_in_chunks, chunk_examples
    from adapter_zoo.ranker import Ranker
    from adapter_zoo.ranker.cross_encoder import as_cross_encoder
    from adapter_zoo.training.evaluator import DevListsEvaluator
    from adapter_zoo.training.trainer import TrainableCheckpoints, use_cpu, use_logged_progress

    cross = as_cross_encoder(model, tokenizer, config.max_length)
    loss = build_loss(config.loss, "cross", cross, margin=config.margin)
    # the whole batch at once unless the memory plan bounds it
    chunk = chunk_examples(loss, config.negatives) if memory.bounded else None

    class Trainer(TrainableCheckpoints, CrossEncoderTrainer):
        def training_step(self, model, inputs, num_items_in_batch=None):
            # a step backpropagates its batch a few examples at a time (memory)
            model.train()

            def loss_of(chunk):
                with self.compute_loss_context_manager():
                    return self.compute_loss(model, chunk)

            return backward_in_chunks(loss_of, inputs, self.accelerator.backward, chunk)

    class EvaluateAtTheEnd(TrainerCallback):
        # a run cut short by --max-steps is measured (and saved) at its last step too
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step >= state.max_steps:
                control.should_evaluate = control.should_save = control.should_log = True
            return control

    class LogRecord(TrainerCallback):
        def on_evaluate(self, args, state, control, **kwargs):
            if state.is_world_process_zero:
                records = phase_records(state.log_history, phase.name, plan.steps_per_epoch)
                if records:
                    log.info("%s", json.dumps(records[-1]))
            return control

    ranker = Ranker(model, tokenizer, base_model=config.base_model,
                    max_length=config.max_length, device=cross.device)  # fmt: skip
    eval_steps = min(plan.steps_per_epoch, total)
    # The papers warm up over the first epoch; a run cut short by --max-steps warms up over
    # its first 10% instead, or it would spend most of its steps at a tiny rate.
    cut_short = total < plan.steps
    warmup = min(plan.steps_per_epoch, total // 10 if cut_short else total // 2)
    args = CrossEncoderTrainingArguments(
        output_dir=str(output_dir),
        max_steps=total,
        per_device_train_batch_size=max(len(b) for b in plan.batches),
        learning_rate=phase.lr,
        weight_decay=config.weight_decay,
        warmup_steps=warmup,
        lr_scheduler_type="linear",
        max_grad_norm=1.0,
        eval_strategy="steps",
        eval_steps=eval_steps,
        save_strategy="steps",
        save_steps=eval_steps,
        save_total_limit=1,
        logging_steps=eval_steps,
        load_best_model_at_end=phase.selects,
        metric_for_best_model="dev_map",
        greater_is_better=True,
        restore_callback_states_from_checkpoint=True,
        batch_sampler=_planned_batches(plan.batches),
        report_to=[],
        seed=config.seed,
        data_seed=config.seed,
        use_cpu=use_cpu(),
        disable_tqdm=False,
        dataloader_num_workers=0,
    )
    callbacks = [EvaluateAtTheEnd(), LogRecord()]
    if phase.selects and phase.patience is not None:
        callbacks.append(EarlyStoppingCallback(early_stopping_patience=phase.patience))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Trainer.tokenizer.*")
        trainer = Trainer(
            model=cross,
            args=args,
            train_dataset=plan.dataset,
            loss=loss,
            evaluator=DevListsEvaluator(ranker, dev),
            callbacks=callbacks,
        )
    use_logged_progress(trainer)
    return trainer


def _write_entry(config, hosts, train_tables, dev_tables, setup, model, tokenizer, dev,
                 records, steps, best, processes, folder, memory) -> Path:  # fmt: skip
    import contextlib
    import shutil

    from adapter_zoo.training.models import adapter_card, fusion_weights, write_entry_weights
    from adapter_zoo.zoo.domain import with_domain
    from adapter_zoo.zoo.layouts import base_config
    from adapter_zoo.zoo.store import entry_path, save_entry

    card = _card(config, hosts, train_tables, dev_tables, setup, records, steps, best, processes)
    card["base_config"] = base_config(model.config)  # checked when the entry loads
    card["training"]["memory"] = memory.to_card()
    if "adapter" in setup:
        card.update(adapter_card(model, setup["adapter"]))
    if config.mode == "fusion":
        pairs = [(q, c) for q, cands in dev for c in cands][:FUSION_WEIGHT_PAIRS]
        card["fusion_weights"] = fusion_weights(
            model, tokenizer, pairs, config.max_length, setup["head"]
        )
    from adapter_zoo.training.trainer import process_state

    state = process_state()
    path = entry_path(config.name)
    if state.is_main_process:

        def writer(target: Path) -> None:
            write_entry_weights(model, tokenizer, config, setup, target)
            lines = "".join(json.dumps(record) + "\n" for record in records)
            (target / TRAINING_LOG_FILE).write_text(lines, encoding="utf-8")

        writer = with_domain(writer, card, config.data, hosts)
        path = save_entry(writer, config.name, card, overwrite=config.overwrite)
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):  # other runs' checkpoints may still be there
            folder.parent.rmdir()
    state.wait_for_everyone()
    return path


def _card(config, hosts, train_tables, dev_tables, setup, records, steps, best, processes):
    from adapter_zoo.training.models import card_sources

    def counts(tables):
        return {t.kind: len(t) for t in tables}

    pairs = {
        host: {"train": counts(train_tables[host]), "dev": counts(dev_tables[host])}
        for host in hosts
    }
    best = best or {}
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
            "steps": steps,
            "processes": processes,
            "best_epoch": best.get("epoch"),
            "best_step": best.get("step"),
            "log": records,
        },
        "seed": config.seed,
        "scores": {k: v for k, v in best.items() if k.startswith("dev_") and k != "dev_seconds"},
        "max_length": config.max_length,
        "head": setup["head"],
    }
    card.update(card_sources(config, setup))
    return card
