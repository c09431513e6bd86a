"""One training path for both encoders: what their sentence-transformers trainers share.

A run is one or more :class:`Phase` s (tanda: transfer, then adapt), each trained by the
library's trainer (``SentenceTransformerTrainer``, ``CrossEncoderTrainer``) with the same
TrainingArguments (:func:`training_arguments`): dev evaluation by
:class:`~adapter_zoo.training.selection.DevListsEvaluator` every ``eval_steps`` and at the
last step, a checkpoint at each, the best one loaded at the end of a selecting phase
(``load_best_model_at_end``) and ``patience`` as transformers' ``EarlyStoppingCallback``. A
phase may score its starting state first (``eval_on_start``); that state is then saved as
``checkpoint-0``, a candidate like any other (:class:`ZooTrainer`).

Checkpoints hold only the trainable weights as safetensors, and a resume reads nothing that
unpickles code (:func:`check_resumable`); the run folder, the card's training log
(:func:`phase_records`), the card's common fields (:func:`entry_card`) and the entry's
writing (:func:`write_entry`) are here too. What differs between the encoders (data, batch
order, loss, model, training step) is in :mod:`adapter_zoo.training.bi` and
:mod:`adapter_zoo.training.cross`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.training.checkpoint import checkpoint_dir, read_checkpoint_file
from adapter_zoo.training.models import adapter_card, card_sources
from adapter_zoo.training.selection import dev_scores
from adapter_zoo.zoo.domain import with_domain
from adapter_zoo.zoo.layouts import base_config
from adapter_zoo.zoo.store import entry_path, save_entry
from stackexchange.io import atomic_write_json
from stackexchange.jsontext import loads_text, read_json_file

log = logging.getLogger(__name__)

RUN_FILE = "run.json"
# The checkpoint layout this trainer writes and resumes, recorded in RUN_FILE. 2: both
# encoders on the library's trainers, step 0 saved as checkpoint-0 and every dev record in
# trainer_state.json's log. A folder of format 1 (the hand-written selection callback) resumed
# with no step-0 record and ended in a StopIteration traceback; another format is another run.
CHECKPOINT_FORMAT = 2
TRAINABLE_FILE = "trainable.safetensors"
TRAINING_LOG_FILE = "training_log.jsonl"  # in the entry: one JSON line per logged step


def trainable_tensors(model) -> dict:
    """The parameters of ``model`` that train, by name."""
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def save_tensors(tensors: dict, path: Path) -> None:
    # safetensors.torch on first use: importing this module stays light
    from safetensors.torch import save_file

    save_file({n: t.detach().cpu().contiguous() for n, t in tensors.items()}, str(path))


def load_tensors(model, path: Path) -> None:
    """Load the trainable weights saved at ``path`` into ``model``.

    Raises:
        ZooError: the file is damaged or lacks one of ``model``'s trainable weights.
    """
    # safetensors.torch on first use: importing this module stays light
    from safetensors.torch import load_file

    try:
        state = load_file(str(path))
    except Exception as error:  # safetensors raises its own error types for damaged files
        raise ZooError(f"{path}: unreadable checkpoint ({error}); rerun with --restart") from None
    missing = [n for n in trainable_tensors(model) if n not in state]
    if missing:
        raise ZooError(f"{path}: checkpoint lacks {missing[0]}; rerun with --restart")
    model.load_state_dict(state, strict=False)


class TrainableCheckpoints:
    """Mixin for a sentence-transformers trainer: a checkpoint's model is the trainable
    weights as safetensors (a few MB for an adapter, nothing that unpickles), and the best
    checkpoint loads back the same way. Optimizer, scheduler and RNG states are the
    trainer's own files, read ``weights_only`` (:func:`check_resumable`)."""

    def _save(self, output_dir=None, state_dict=None):
        folder = Path(output_dir or self.args.output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        save_tensors(trainable_tensors(self.model), folder / TRAINABLE_FILE)

    def _load_from_checkpoint(self, checkpoint_path, model=None):
        load_tensors(self.model, Path(checkpoint_path) / TRAINABLE_FILE)


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


def check_resumable(checkpoint: Path) -> None:
    """Read every file a resume reads from ``checkpoint`` before the trainer does.

    The trainer's own loading would end a damaged file (truncated, corrupt) or a planted
    pickle with a traceback from deep inside transformers, and every rerun the same way; here
    each is one line naming the file and ``--restart``. Pickles load with
    ``weights_only=True`` (and transformers' allow-list of the numpy types in its RNG state),
    so no code in them runs; ``mmap`` keeps an optimizer state out of memory.

    Raises:
        ZooError: the first file that cannot be read, naming it.
    """
    # torch, safetensors.torch, transformers on first use: importing this module stays light
    import torch
    from safetensors.torch import load_file
    from transformers.trainer import safe_globals

    def pickled(path: Path):
        with safe_globals():
            return torch.load(path, map_location="cpu", weights_only=True, mmap=True)

    readers = {
        ".json": lambda path: loads_text(path.read_text(encoding="utf-8"), position=True),
        ".safetensors": lambda path: load_file(str(path)),
        ".pt": pickled,
        ".pth": pickled,
    }
    for path in sorted(checkpoint.iterdir()):
        if path.suffix in readers and path.is_file():
            read_checkpoint_file(path, readers[path.suffix])


def last_checkpoint(folder: Path) -> Path | None:
    """The newest complete trainer checkpoint under ``folder``, if any."""
    # transformers on first use: importing this module stays light
    from transformers.trainer_utils import get_last_checkpoint

    last = get_last_checkpoint(str(folder)) if folder.is_dir() else None
    return Path(last) if last else None


def resume_point(folder: Path) -> str | None:
    """The checkpoint a phase trained in ``folder`` resumes from (checked), or None."""
    last = last_checkpoint(folder)
    if last is None:
        return None
    check_resumable(last)
    return str(last)


def open_run_folder(config) -> Path:
    """``<zoo>/.checkpoints/<name>``, emptied when it holds another run's checkpoints or the
    run restarts (``config.restart``); the run's config is recorded in it."""
    folder = checkpoint_dir(config.name)
    run = {"config": config.to_dict(), "encoder": config.encoder, "format": CHECKPOINT_FORMAT}
    state = process_state()
    if state.is_main_process:  # one process prepares it; the others wait until it is ready
        if folder.exists() and (config.restart or _run_of(folder) != run):
            shutil.rmtree(folder)  # our own checkpoint folder, of another run or given up
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_json(folder / RUN_FILE, run)
    state.wait_for_everyone()
    return folder


def _run_of(folder: Path) -> dict | None:
    """The run recorded in the checkpoint folder ``folder``, or None when there is none that
    can be read (the folder is then another run's: emptied, as it is the project's own)."""
    try:
        return read_json_file(folder / RUN_FILE, ZooError)
    except (OSError, ZooError):
        return None


def process_state():
    """accelerate's process state (``torch.distributed.run`` / ``accelerate launch``); on a
    machine without a GPU it must be asked for CPU processes, or it sees one process."""
    # accelerate on first use: importing this module stays light
    from accelerate import PartialState

    return PartialState(cpu=use_cpu())


def use_cpu() -> bool:
    # torch on first use: importing this module stays light
    import torch

    return not torch.cuda.is_available()


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


def training_arguments(config, phase: Phase, output_dir: Path, *, resumed: bool) -> dict:
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

    callbacks = [EvaluateAtTheEnd(), LogRecord()]
    if phase.selects and phase.patience is not None:
        callbacks.append(EarlyStoppingCallback(early_stopping_patience=phase.patience))
    return callbacks


def new_trainer(trainer_class, **kwargs):
    """``trainer_class(**kwargs)`` for either encoder: the library's trainers warn on
    construction about ``Trainer.tokenizer``, which a zoo user cannot act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Trainer.tokenizer.*")
        return trainer_class(**kwargs)


def run_phases(config, model, phases: list[Phase], folder: Path, make_trainer: Callable) -> Trained:
    """Train ``phases`` in turn, each in ``folder / phase.name``, resumed from its last
    checkpoint there; a phase a resumed run finished before is read back instead.

    Args:
        config: the run's :class:`~adapter_zoo.training.config.TrainingConfig`.
        model: the module whose trainable weights a finished phase leaves to the next.
        phases: the run's phases, in order.
        folder: the run folder (:func:`open_run_folder`).
        make_trainer: ``make_trainer(phase, arguments, callbacks)``, the encoder's trainer
            of ``phase`` (a :class:`ZooTrainer`) with the TrainingArguments ``arguments``
            (:func:`training_arguments`) and the ``callbacks`` (:func:`phase_callbacks`).
    """
    records, steps, best = [], 0, None
    for phase in phases:
        done = folder / f"{phase.name}-done.json"
        if done.exists():  # a finished phase of a resumed run (tanda's transfer)
            finished = read_finished_phase(done)
            load_tensors(model, folder / f"{phase.name}-done.safetensors")
        else:
            finished = _run_phase(config, phase, folder / phase.name, make_trainer)
            _save_phase(model, folder, phase.name, finished)
        records += finished["log"]
        steps += finished["steps"]
        best = finished["best"]
    return Trained(records, steps, best)


def read_finished_phase(done: Path) -> dict:
    """The record :func:`_save_phase` left of a finished phase (its log, steps and best dev
    record), checked: a damaged or edited one is one line naming it and ``--restart``, not
    a KeyError or TypeError once the run goes on.

    Raises:
        ZooError: ``done`` is not valid JSON or not such a record.
    """

    def read(path: Path) -> dict:
        value = loads_text(path.read_text(encoding="utf-8"), position=True)
        if not (
            isinstance(value, dict)
            and isinstance(value.get("log"), list)
            and all(isinstance(record, dict) for record in value["log"])
            and type(value.get("steps")) is int
            and value["steps"] >= 0
            and "best" in value
            and (value["best"] is None or isinstance(value["best"], dict))
        ):
            raise ValueError("not a finished phase's log, steps and best record")
        return value

    return read_checkpoint_file(done, read)


def _run_phase(config, phase: Phase, folder: Path, make_trainer: Callable) -> dict:
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


def _save_phase(model, folder: Path, name: str, finished: dict) -> None:
    """Mark phase ``name`` done (its weights, then its log), so a resumed run skips it."""
    state = process_state()
    if state.is_main_process:
        save_tensors(trainable_tensors(model), folder / f"{name}-done.safetensors")
        atomic_write_json(folder / f"{name}-done.json", finished)
    state.wait_for_everyone()


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


def entry_card(config, *, hosts, pairs, transformer, setup, trained: Trained, dev_lists: int,
               memory: dict) -> dict:  # fmt: skip
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


def write_entry(config, hosts, card: dict, records: list, folder: Path, write_weights) -> Path:
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
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):  # other runs' checkpoints may still be there
            folder.parent.rmdir()
    state.wait_for_everyone()
    return path
