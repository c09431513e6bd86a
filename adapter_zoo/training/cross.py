"""Training cross-encoder entries with sentence-transformers' ``CrossEncoderTrainer``.

The adapters model (adapter, fusion or fully trained, with its ranking head) runs inside a
``CrossEncoder`` (:func:`adapter_zoo.ranker.cross_encoder.as_cross_encoder`); the loss is a
registered :mod:`adapter_zoo.losses` class, backpropagated a few examples at a time when the
memory plan bounds a step. What is this encoder's own: the batch order (one planned order per
phase, :func:`adapter_zoo.training.data.epoch_batches`), dev lists with sampled negatives,
an evaluation after every epoch, and the model. Phases, selection and the card's common
fields are the shared runner's (:mod:`adapter_zoo.training.trainer`); the run folder,
checkpoints and resuming are :mod:`adapter_zoo.training.checkpoint`'s.

TANDA runs two phases, each its own trainer: transfer (no selection), then adapt.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import datasets
from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
from torch.utils.data import BatchSampler, SequentialSampler
from transformers import set_seed

from adapter_zoo.errors import ZooError
from adapter_zoo.losses import build_loss, get_loss
from adapter_zoo.losses.cross import chunk_examples, pairs_per_example
from adapter_zoo.precision import cast_frozen_for_training
from adapter_zoo.ranker import Ranker
from adapter_zoo.ranker.cross_encoder import as_cross_encoder
from adapter_zoo.ranker.probe import PROBE_FIELD, pair_probe_record
from adapter_zoo.training.batches import grouped_epoch_batches
from adapter_zoo.training.checkpoint import open_run_folder
from adapter_zoo.training.config import TrainingConfig
from adapter_zoo.training.data import (
    example_columns,
    load_pairs,
    resolve_forums,
    with_neighbours,
)
from adapter_zoo.training.memory import keeps_attention_matrices, plan_memory
from adapter_zoo.training.models import fusion_weights, set_attention_dropout, setup_model
from adapter_zoo.training.processes import process_state
from adapter_zoo.training.selection import (
    DEV_LISTS,
    DevListsEvaluator,
    forum_dev_lists,
    sampled_dev_lists,
)
from adapter_zoo.training.trainer import (
    Phase,
    ZooTrainer,
    entry_card,
    new_trainer,
    run_phases,
    write_entry,
)

log = logging.getLogger(__name__)

TANDA_PATIENCE = 2
FUSION_WEIGHT_PAIRS = 256


@dataclass
class Stage:
    """What a phase trains on before it is planned: tanda has transfer then adapt."""

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


def _stages(config: TrainingConfig, train_tables: dict) -> list[Stage]:
    adapt = Stage("train", train_tables, config.learning_rate, config.epochs, config.patience, True)
    if config.mode != "tanda":
        return [adapt]
    transfer_hosts = resolve_forums(config.transfer_data, config.transfer_forums)
    transfer = _tables(
        config.transfer_data,
        transfer_hosts,
        config.trained_pair_kinds,
        "train",
        config.hard_negatives,
    )
    adapt.name, adapt.patience = "adapt", config.patience or TANDA_PATIENCE
    return [
        Stage("transfer", transfer, config.transfer_lr, config.transfer_epochs, None, False),
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


def _plan(stage: Stage, stage_index: int, config: TrainingConfig, processes: int) -> Plan:
    examples, batches = [], []
    per_epoch = None
    for epoch in range(stage.epochs):
        epoch_plan = grouped_epoch_batches(config, stage.tables, epoch=1000 * stage_index + epoch)
        if processes > 1:  # every process takes its own, equally many batches
            epoch_plan = epoch_plan[: len(epoch_plan) // processes * processes]
        per_epoch = len(epoch_plan) // processes
        for batch in epoch_plan:
            batches.append(range(len(examples), len(examples) + len(batch)))
            examples += batch
    dataset = datasets.Dataset.from_dict(example_columns(examples, config.loss, config.negatives))
    return Plan(dataset, batches, max(1, per_epoch or 1), len(batches) // processes)


def _phases(config: TrainingConfig, stages: list[Stage], processes: int) -> list[Phase]:
    """Each stage's planned phase: dev evaluation after every epoch; ``max_steps`` bounds
    the phases together."""
    phases, before = [], 0
    for index, stage in enumerate(stages):
        plan = _plan(stage, index, config, processes)
        total = plan.steps
        if config.max_steps is not None:
            total = min(total, max(config.max_steps - before, 0))
        before += total
        # The papers warm up over the first epoch; a run cut short by --max-steps warms up
        # over its first 10% instead, or it would spend most of its steps at a tiny rate.
        cut_short = total < plan.steps
        warmup = min(plan.steps_per_epoch, total // 10 if cut_short else total // 2)
        phases.append(Phase(
            stage.name, stage.lr, total, plan.steps_per_epoch,
            eval_steps=min(plan.steps_per_epoch, total), warmup=warmup, selects=stage.selects,
            data=plan, patience=stage.patience,
        ))  # fmt: skip
    return phases


def _planned_batches(batches: list[range]):
    """A batch sampler for the trainer that yields ``batches`` as planned: ``epoch_batches``
    already shuffled, drew negatives and interleaved forums; sentence-transformers' samplers
    reshuffle one fixed dataset per epoch and end a round-robin epoch with its smallest forum."""

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
        return forum_dev_lists(config.data, hosts, queries=config.dev_queries)
    return sampled_dev_lists(dev_tables, queries=config.dev_queries,
                             candidates=config.dev_candidates, seed=config.seed)  # fmt: skip


def memory_plan(config: TrainingConfig, model_config):
    """The run's :class:`~adapter_zoo.training.memory.MemoryPlan`: a step scores
    ``batch_size`` examples of the loss's shape."""
    per_example = pairs_per_example(get_loss(config.loss, "cross").examples, config.negatives)
    return plan_memory(
        model_config,
        texts=config.batch_size * per_example,
        length=config.max_length,
        budget=config.memory_budget,
        attention_matrices=keeps_attention_matrices(model_config, config.attention_dropout),
    )


def train_cross_encoder(config: TrainingConfig, hosts: list[str]) -> Path:
    """Train the cross-encoder entry of ``config`` on the parsed forums ``hosts`` (checked by
    :func:`adapter_zoo.training.train`) and write it atomically; return its folder.

    A crashed run resumes from its last epoch checkpoint (``<zoo>/.checkpoints/<name>``) when
    started again with the same config; ``restart`` starts over.
    """
    # looked up per call: tests monkeypatch bound_activation_memory and write_entry_weights
    from adapter_zoo.training.models import apply_memory_plan, write_entry_weights

    train_tables = _tables(
        config.data, hosts, config.trained_pair_kinds, "train", config.hard_negatives
    )
    dev_tables = _tables(config.data, hosts, config.trained_pair_kinds[:1], "dev")
    dev = _dev(config, hosts, dev_tables)
    phases = _phases(config, _stages(config, train_tables), process_state().num_processes)

    set_seed(config.seed)  # the new adapter's and head's initial weights
    model, tokenizer, setup = setup_model(config)
    set_attention_dropout(model, config.attention_dropout)
    cast_frozen_for_training(model, config.precision)  # before any step or dev score
    memory = memory_plan(config, model.config)
    apply_memory_plan(model, memory)
    log.debug("memory: %s", json.dumps(memory.to_card()))  # the card records it
    folder = open_run_folder(config)

    def make_trainer(phase, arguments, callbacks):
        return _trainer(config, model, tokenizer, phase, memory, dev, arguments, callbacks)

    trained = run_phases(config, model, phases, folder, make_trainer)

    def counts(tables):
        return {t.pair_kind: len(t) for t in tables}

    pairs = {
        host: {"train": counts(train_tables[host]), "dev": counts(dev_tables[host])}
        for host in hosts
    }
    card = entry_card(config, hosts=hosts, pairs=pairs, transformer=model, setup=setup,
                      trained=trained, dev_lists=len(dev), memory=memory.to_card())  # fmt: skip
    card["head"] = setup["head"]
    if config.layout != "full":  # what loading checks the entry's adapters by
        card[PROBE_FIELD] = pair_probe_record(model, tokenizer)
    if config.mode == "fusion":
        pairs = [(q, c) for q, cands in dev for c in cands][:FUSION_WEIGHT_PAIRS]
        card["fusion_weights"] = fusion_weights(
            model, tokenizer, pairs, config.max_length, setup["head"]
        )

    def write_weights(target: Path) -> None:
        write_entry_weights(model, tokenizer, config, setup, target)

    return write_entry(config, hosts, card, trained.log, folder, write_weights)


def _trainer(config, model, tokenizer, phase: Phase, memory, dev, arguments, callbacks):
    """``phase``'s ``CrossEncoderTrainer`` over the model inside a ``CrossEncoder``: its
    planned batches, its loss backpropagated in chunks when the memory plan bounds a step."""
    # looked up per call: tests monkeypatch losses.cross.backward_in_chunks
    from adapter_zoo.losses.cross import backward_in_chunks

    cross = as_cross_encoder(model, tokenizer, config.max_length)
    loss = build_loss(config.loss, "cross", cross, margin=config.margin)
    # the whole batch at once unless the memory plan bounds it
    chunk = chunk_examples(loss, config.negatives) if memory.bounded else None

    class Trainer(ZooTrainer, CrossEncoderTrainer):
        def training_step(self, model, inputs, num_items_in_batch=None):
            # a step backpropagates its batch a few examples at a time (memory)
            model.train()

            def loss_of(chunk):
                with self.compute_loss_context_manager():
                    return self.compute_loss(model, chunk)

            return backward_in_chunks(loss_of, inputs, self.accelerator.backward, chunk)

    ranker = Ranker(model, tokenizer, base_model=config.base_model,
                    max_length=config.max_length, device=cross.device)  # fmt: skip
    plan = phase.data
    args = CrossEncoderTrainingArguments(
        **arguments,
        per_device_train_batch_size=max(len(b) for b in plan.batches),
        batch_sampler=_planned_batches(plan.batches),
    )
    return new_trainer(
        Trainer,
        model=cross,
        args=args,
        train_dataset=plan.dataset,
        loss=loss,
        evaluator=DevListsEvaluator(ranker, dev),
        callbacks=callbacks,
    )
