"""A training step timed before a run: what one step of it costs on this machine.

``adapt``'s time budget fits a number of steps into what is left
(:mod:`adapter_zoo.adapt.budget`). The base's scoring rate is a poor price for a step: a
step also runs backward and the optimizer and pads a batch to its longest text, and how much
that adds differs from machine to machine, by a factor of several. One step of the run's own
model, loss and optimizer on a batch of its own training examples is the price; it costs the
budget a model build and a step or two of the run's tens or hundreds. The trainer itself is
not started for it: building it (datasets, samplers, evaluator) costs more than the step,
and the run builds its own anyway.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import torch
from transformers import set_seed

from adapter_zoo.biencoder.encoder import transformer_of
from adapter_zoo.devices import pick_device
from adapter_zoo.errors import ZooError
from adapter_zoo.losses.registry import BM25_MARGIN_LOSSES
from adapter_zoo.precision import cast_frozen_for_training
from adapter_zoo.training.bi import memory_plan, trainable_model, training_sets
from adapter_zoo.training.config import TrainingConfig
from adapter_zoo.training.train import _resolved

log = logging.getLogger(__name__)

# The first step also pays for allocations and its kernels' set-up for the batch's shapes:
# on 2 CPU cores MiniLM's first step took 8.1 s and the run's own steps 3.5 s on average
# (the quickstart), so the second step is the price.
PROBE_STEPS = 2


def step_seconds(config: TrainingConfig, *, steps: int = PROBE_STEPS) -> float:
    """Seconds one training step of the bi-encoder run ``config`` takes here: ``steps``
    optimizer steps of its model and loss on a seeded batch of its own training examples
    (``batch_size`` of them, at ``max_length``), the fastest of them; nothing is written.

    Raises:
        ZooError: ``config`` is not a bi-encoder's, or its data has no training pairs.

    Example:
        >>> step_seconds(TrainingConfig(mode="adapter", data="parsed",
        ...                             forums=("beer",), name="probe"))  # doctest: +SKIP
        4.2
    """
    # looked up per call: tests monkeypatch losses.build_loss and training.models
    from adapter_zoo.losses import build_loss
    from adapter_zoo.training.models import apply_memory_plan

    if config.encoder != "bi":
        raise ZooError(f"a timed step is a bi-encoder's; {config.name!r} is {config.encoder!r}")
    hosts, config = _resolved(config)
    data = next(iter(training_sets(config, config.data, hosts[:1])[0].values()))
    rows = np.random.default_rng(config.seed).permutation(len(data))[: config.batch_size]
    batch = data.select(sorted(int(i) for i in rows))
    columns = [c for c in ("anchor", "positive", "negative") if c in batch.column_names]
    set_seed(config.seed)
    model, _ = trainable_model(config, hosts)
    cast_frozen_for_training(model, config.precision)
    plan, loss_name = memory_plan(config, transformer_of(model))
    apply_memory_plan(transformer_of(model), plan)
    model.max_seq_length = config.max_length
    device = pick_device()
    model.to(device).train()
    loss = build_loss(loss_name, "bi", model)
    labels = None
    if config.loss in BM25_MARGIN_LOSSES and "label" in batch.column_names:
        labels = torch.tensor(batch["label"], device=device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.learning_rate)
    seconds = []
    for _ in range(steps):
        began = time.perf_counter()
        features = [_on(model.preprocess(inputs=batch[c]), device) for c in columns]
        loss(features, labels).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        seconds.append(time.perf_counter() - began)
    log.debug("a training step of %s: %s s", config.name, [round(s, 3) for s in seconds])
    return min(seconds)


def _on(features: dict, device) -> dict:
    """A batch's features (what the trainer's collator hands the loss) on ``device``."""
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
