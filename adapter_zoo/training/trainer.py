"""One training path for both encoders: what their sentence-transformers trainers share.

A run is one or more :class:`Phase` s (tanda: transfer, then adapt), each trained by the
library's trainer (``SentenceTransformerTrainer``, ``CrossEncoderTrainer``) with the same
TrainingArguments (:func:`training_arguments`): dev evaluation by
:class:`~adapter_zoo.training.selection.DevListsEvaluator` every ``eval_steps`` and at the
last step, a checkpoint at each, the best one loaded at the end of a selecting phase
(``load_best_model_at_end``) and ``patience`` as transformers' ``EarlyStoppingCallback``. A
phase may score its starting state first (``eval_on_start``); that state is then saved as
``checkpoint-0``, a candidate like any other (:class:`ZooTrainer`).

The run folder and its checkpoints (trainable weights only, read back without unpickling
code) are :mod:`adapter_zoo.training.checkpoint`'s; the card's training log
(:func:`phase_records`), the card's common fields (:func:`entry_card`) and the entry's
writing (:func:`write_entry`) are here. What differs between the encoders (data, batch
order, loss, model, training step) is in :mod:`adapter_zoo.training.bi` and
:mod:`adapter_zoo.training.cross`.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import math
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapter_zoo.training.checkpoint import (
    TrainableCheckpoints,
    finished_phase,
    remove_run_folder,
    resume_point,
    save_finished_phase,
)
from adapter_zoo.training.models import adapter_card, card_sources
from adapter_zoo.training.processes import process_state, use_cpu
from adapter_zoo.training.selection import dev_scores
from adapter_zoo.zoo.domain import with_domain
from adapter_zoo.zoo.layouts import base_config
from adapter_zoo.zoo.store import entry_path, save_entry
from stackexchange.io import write_failure

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from adapter_zoo.training.config import TrainingConfig
    from adapter_zoo.training.pretrain_config import PretrainConfig

    RunConfig = TrainingConfig | PretrainConfig

log = logging.getLogger(__name__)

TRAINING_LOG_FILE = "training_log.jsonl"  # in the entry: one JSON line per logged step
# A deadline for the runs trained in a context (adapt's time budget): a context variable, so
# a caller bounds a run without a field in TrainingConfig, whose fields a card records as
# what defines the run (a deadline is the machine's speed, not the run's definition).
_STOP_AT: contextvars.ContextVar[float | None] = contextvars.ContextVar("stop_at", default=None)


@contextlib.contextmanager
def stop_training_at(deadline: float | None) -> Iterator[None]:
    """Within the block, training stops at the first step that ends after ``deadline`` (a
    ``time.monotonic()`` value; None: no deadline): that step is evaluated and saved, a
    candidate like every evaluated one, and the run ends as one cut short by ``max_steps``.

    Example:
        >>> import time
        >>> with stop_training_at(time.monotonic() + 600):
        ...     pass  # train(config) here stops within about ten minutes
    """
    token = _STOP_AT.set(deadline)
    try:
        yield
    finally:
        _STOP_AT.reset(token)


class ZooTrainer(TrainableCheckpoints):
    """Mixin for a sentence-transformers trainer: :class:`TrainableCheckpoints`, and the
    state scored before the first step (``eval_on_start``) a candidate of the selection when
    ``start_competes``: a continued adapter or an identity one is then never worse than its
    start on dev.

    The library compares only the evaluations of its own steps and loads the best only from a
    checkpoint, so that state is compared and saved here as ``checkpoint-0``; it is named the
    best checkpoint before it is saved, so a run resumed from it keeps it as a candidate (the
    library records a best checkpoint only for a step above 0).
    """

    start_competes = False

    def create_scheduler(self, num_training_steps: int, optimizer=None):
        deadline = _STOP_AT.get()
        if deadline is None or self.lr_scheduler is not None:
            return super().create_scheduler(num_training_steps, optimizer)
        self.lr_scheduler = budget_schedule(
            self.optimizer if optimizer is None else optimizer,
            warmup=self.args.get_warmup_steps(num_training_steps),
            steps=num_training_steps,
            deadline=deadline,
        )
        self._created_lr_scheduler = True
        return self.lr_scheduler

    def _evaluate(self, trial, ignore_keys_for_eval, skip_scheduler=False):
        # transformers on first use: importing this module stays light
        from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

        metrics = super()._evaluate(trial, ignore_keys_for_eval, skip_scheduler)
        if self.state.global_step == 0 and self.start_competes:
            self._determine_best_metric(metrics=metrics, trial=trial)  # the first: the best
            folder = Path(self.args.output_dir) / f"{PREFIX_CHECKPOINT_DIR}-0"
            self.state.best_model_checkpoint = str(folder)
            self._save_checkpoint(self.model_wrapped, trial)
        return metrics


def budget_schedule(optimizer, *, warmup: int, steps: int, deadline: float, clock=time.monotonic):
    """The rate of a run with a deadline: a linear warmup over ``warmup`` steps or the same
    share of the time to the deadline, whichever ends first, then a linear decay that reaches
    0 at ``steps`` or at the deadline, whichever comes first.

    A step-only schedule planned for more steps than the deadline lets run stops with the
    rate still high (adapt's ArguAna run: cut at 61 of 120 planned steps, its best step the
    last); decaying by the share of the time spent too, the run ends annealed wherever the
    machine's speed puts its last step, so a run can be planned for more steps than it will
    reach (``adapt``'s runs the budget cuts: their deadline ends them).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
        >>> now = [0.0]
        >>> schedule = budget_schedule(sgd, warmup=0, steps=1000, deadline=100.0,
        ...                            clock=lambda: now[0])
        >>> now[0] = 50.0  # one step taken, half the time spent: half the rate
        >>> sgd.step(); schedule.step(); round(sgd.param_groups[0]["lr"], 3)
        0.5
    """
    # torch on first use: importing this module stays light
    from torch.optim.lr_scheduler import LambdaLR

    started = clock()
    window = max(deadline - started, 1e-9)
    warmup_time = window * warmup / max(1, steps)

    def factor(step: int) -> float:
        elapsed = clock() - started
        if step < warmup and elapsed < warmup_time:
            return max(step / warmup, elapsed / warmup_time)
        by_steps = (step - warmup) / max(1, steps - warmup)
        by_time = (elapsed - warmup_time) / max(window - warmup_time, 1e-9)
        return min(1.0, max(0.0, 1.0 - max(by_steps, by_time)))

    return LambdaLR(optimizer, factor)


def logged_progress_callback():
    """transformers' progress bar (stderr), with its per-step records (``{'loss': ...}``)
    sent to the log instead of stdout (``tqdm.write``), where a command's results are."""
    # transformers on first use: importing this module stays light
    from transformers.trainer_callback import ProgressCallback

    class LoggedProgress(ProgressCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if state.is_world_process_zero and logs:
                record = {k: v for k, v in logs.items() if k != "total_flos"}
                log.info("step %d: %s", state.global_step, json.dumps(record))

    return LoggedProgress


def use_logged_progress(trainer) -> None:
    # transformers on first use: importing this module stays light
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(PrinterCallback)  # (added instead of the bar when tqdm is off)
    trainer.remove_callback(ProgressCallback)
    trainer.add_callback(logged_progress_callback())


@dataclass
class Phase:
    """A stretch of training with one optimizer and its own trainer: tanda has transfer then
    adapt, every other mode one phase.

    Attributes:
        name: the phase's name in the training log, and its checkpoint folder's.
        lr: its learning rate.
        steps: the optimizer steps it runs (0: none).
        steps_per_epoch: the steps of one pass over its data (a log record's epoch).
        eval_steps: a dev evaluation and a checkpoint every this many steps, and at the last.
        warmup: steps of the rate's linear warmup (then it decays linearly to 0).
        selects: the phase ends at its best checkpoint on dev, else at its last step.
        data: the encoder's own: what its trainer trains on.
        patience: stop after this many evaluations without a better dev MAP (None: never).
        start: the log's name of an evaluation of the starting state (step 0), None for none.
        start_competes: that state is a candidate of the selection.
    """

    name: str
    lr: float
    steps: int
    steps_per_epoch: int
    eval_steps: int
    warmup: int
    selects: bool
    data: object = None
    patience: int | None = None
    start: str | None = None
    start_competes: bool = False


@dataclass
class Trained:
    """What a run's phases did: the training log, the optimizer steps of all phases, and the
    log record of the state the last selecting phase kept (None: none selected)."""

    log: list
    steps: int
    best: dict | None


def training_arguments(
    config: RunConfig, phase: Phase, output_dir: Path, *, resumed: bool
) -> dict[str, Any]:
    """The TrainingArguments both encoders train ``phase`` with; the encoder adds its batch
    size and sampler. A resumed phase has scored its start already (its log is in the
    checkpoint)."""
    return dict(
        output_dir=str(output_dir),
        max_steps=phase.steps,
        learning_rate=phase.lr,
        weight_decay=config.weight_decay,
        warmup_steps=phase.warmup,
        lr_scheduler_type="linear",
        max_grad_norm=1.0,
        eval_strategy="steps",
        eval_steps=phase.eval_steps,
        eval_on_start=phase.start is not None and not resumed,
        save_strategy="steps",
        save_steps=phase.eval_steps,
        save_total_limit=1,
        logging_steps=phase.eval_steps,
        load_best_model_at_end=phase.selects,
        metric_for_best_model="dev_map",
        greater_is_better=True,
        restore_callback_states_from_checkpoint=True,
        report_to=[],
        seed=config.seed,
        data_seed=config.seed,
        use_cpu=use_cpu(),
        disable_tqdm=False,
        dataloader_num_workers=0,
    )


def phase_callbacks(phase: Phase) -> list:
    """The callbacks of every phase's trainer: the last step evaluated and saved, each dev
    record in the log, early stopping where the phase has a patience."""
    # transformers on first use: importing this module stays light
    from transformers import EarlyStoppingCallback, TrainerCallback

    class EvaluateAtTheEnd(TrainerCallback):
        # a run cut short by --max-steps is measured (and saved) at its last step too
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step >= state.max_steps:
                control.should_evaluate = control.should_save = control.should_log = True
            return control

    class LogRecord(TrainerCallback):
        def on_evaluate(self, args, state, control, **kwargs):
            if state.is_world_process_zero:
                records = phase_records(state.log_history, phase)
                if records:
                    log.info("%s", json.dumps(records[-1]))
            return control

    class StopAtTheDeadline(TrainerCallback):
        def __init__(self, deadline: float):
            self.deadline = deadline

        def on_step_end(self, args, state, control, **kwargs):
            if time.monotonic() >= self.deadline and state.global_step < state.max_steps:
                log.info("step %d: the time budget is spent; stopping", state.global_step)
                control.should_evaluate = control.should_save = control.should_log = True
                control.should_training_stop = True
            return control

    callbacks = [EvaluateAtTheEnd(), LogRecord()]
    if _STOP_AT.get() is not None:
        callbacks.append(StopAtTheDeadline(_STOP_AT.get()))
    if phase.selects and phase.patience is not None:
        callbacks.append(EarlyStoppingCallback(early_stopping_patience=phase.patience))
    return callbacks


def new_trainer(trainer_class, **kwargs):
    """``trainer_class(**kwargs)`` for either encoder: the library's trainers warn on
    construction about ``Trainer.tokenizer``, which a zoo user cannot act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Trainer.tokenizer.*")
        return trainer_class(**kwargs)


def run_phases(
    config: RunConfig, model: Any, phases: list[Phase], folder: Path, make_trainer: Callable
) -> Trained:
    """Train ``phases`` in turn, each in ``folder / phase.name``, resumed from its last
    checkpoint there; a phase a resumed run finished before is read back instead.

    Args:
        config: the run's :class:`~adapter_zoo.training.config.TrainingConfig`.
        model: the module whose trainable weights a finished phase leaves to the next.
        phases: the run's phases, in order.
        folder: the run folder (:func:`~adapter_zoo.training.checkpoint.open_run_folder`).
        make_trainer: ``make_trainer(phase, arguments, callbacks)``, the encoder's trainer
            of ``phase`` (a :class:`ZooTrainer`) with the TrainingArguments ``arguments``
            (:func:`training_arguments`) and the ``callbacks`` (:func:`phase_callbacks`).
    """
    records, steps, best = [], 0, None
    for phase in phases:
        # a phase a resumed run finished before (tanda's transfer) is not trained again
        finished = finished_phase(model, folder, phase.name)
        if finished is None:
            try:
                finished = _run_phase(config, phase, folder / phase.name, make_trainer)
                save_finished_phase(model, folder, phase.name, finished)
            except Exception as error:
                # a checkpoint that could not be written (a full disk) is one line naming
                # the run folder; the next run resumes from the last complete checkpoint
                failure = write_failure(error, folder)
                if failure is None or failure is error:
                    raise
                raise failure from error
        records += finished["log"]
        steps += finished["steps"]
        best = finished["best"]
    return Trained(records, steps, best)


def _run_phase(config: RunConfig, phase: Phase, folder: Path, make_trainer: Callable) -> dict:
    """Train one phase; its log, steps and best dev record."""
    if phase.steps == 0:
        return {"log": [], "steps": 0, "best": None}
    resume = resume_point(folder)
    arguments = training_arguments(config, phase, folder, resumed=resume is not None)
    trainer = make_trainer(phase, arguments, phase_callbacks(phase))
    trainer.start_competes = phase.selects and phase.start_competes
    use_logged_progress(trainer)
    trainer.train(resume_from_checkpoint=resume)
    state = trainer.state
    records = phase_records(state.log_history, phase)
    best = None
    if phase.selects and state.best_model_checkpoint:
        best_step = int(Path(state.best_model_checkpoint).name.rsplit("-", 1)[1])
        best = next(r for r in records if r["step"] == best_step)
    return {"log": records, "steps": state.global_step, "best": best}


def phase_records(log_history: list[dict], phase: Phase) -> list[dict]:
    """The card's training log of one phase, one record per dev evaluation, from the
    trainer's ``log_history`` (kept in its checkpoints); the evaluation of the starting state
    is named ``phase.start``.

    Example:
        >>> history = [{"loss": 0.7, "learning_rate": 1e-4, "step": 2},
        ...            {"eval_dev_map": 0.5, "eval_dev_p@1": 0.25, "eval_runtime": 1.5, "step": 2}]
        >>> phase_records(history, Phase("train", 1e-4, 2, 2, 2, 0, True))
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
            "phase": phase.start if step == 0 and phase.start else phase.name,
            "epoch": math.ceil(step / phase.steps_per_epoch),
            "step": step,
            "loss": trained.get("loss"),
            "lr": trained.get("learning_rate"),
            "dev_seconds": entry.get("eval_runtime"),
            "dev_map": entry["eval_dev_map"],
            "dev_p@1": entry["eval_dev_p@1"],
        })  # fmt: skip
    return records


def entry_card(config: TrainingConfig, *, hosts: Sequence[str], pairs: dict[str, Any],
               transformer: PreTrainedModel, setup: dict[str, Any], trained: Trained,
               dev_lists: int, memory: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """The card fields every trained entry has: what trained on what, the training log, the
    selected state's dev scores (its record in ``trained``) and the memory plan.

    Args:
        transformer: the transformers model inside the entry (its config is checked at load).
        setup: the model's setup names (``adapter``, ``adapters``) from the encoder's setup.
        dev_lists: how many dev lists selected the state.
        memory: the card's ``training.memory`` (the plan of :mod:`~adapter_zoo.training.memory`).
    """
    best = trained.best or {}
    card = {
        "mode": config.mode,
        "encoder": config.encoder,
        "layout": config.layout,
        "base_model": config.base_model,
        "base_config": base_config(transformer.config),  # checked when the entry loads
        "forums": hosts,
        "pairs": pairs,
        "training": {
            **config.to_dict(),
            "learning_rate": config.learning_rate,
            "steps": trained.steps,
            "processes": process_state().num_processes,
            "best_epoch": best.get("epoch"),
            "best_step": best.get("step"),
            "dev_lists": dev_lists,
            "log": trained.log,
            "memory": memory,
        },
        "seed": config.seed,
        "scores": dev_scores(best),
        "max_length": config.max_length,
    }
    if "adapter" in setup:
        card.update(adapter_card(transformer, setup["adapter"]))
    card.update(card_sources(config, setup))
    return card


def write_entry(config: RunConfig, hosts: Sequence[str], card: dict, records: list, folder: Path,
                write_weights: Callable[[Path], None]) -> Path:  # fmt: skip
    """Write the zoo entry (``write_weights(target)``, the card, the training log, the domain
    centroid) atomically from the main process, then remove the run folder.

    Returns:
        The entry folder.
    """
    state = process_state()
    path = entry_path(config.name)
    if state.is_main_process:

        def writer(target: Path) -> None:
            write_weights(target)
            lines = "".join(json.dumps(record) + "\n" for record in records)
            (target / TRAINING_LOG_FILE).write_text(lines, encoding="utf-8")

        writer = with_domain(writer, card, config.data, hosts)
        path = save_entry(writer, config.name, card, overwrite=config.overwrite)
        remove_run_folder(folder)
    state.wait_for_everyone()
    return path
