"""What both encoders' sentence-transformers trainers share: checkpoints that hold only the
trainable weights as safetensors, resuming without unpickling code, the run folder, and
progress in the log.

The trainers are the library's (``SentenceTransformerTrainer``, ``CrossEncoderTrainer``);
this module only says how a zoo run stores and reads its checkpoints.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

from adapter_zoo.errors import ZooError

log = logging.getLogger(__name__)

RUN_FILE = "run.json"
TRAINABLE_FILE = "trainable.safetensors"
TRAINING_LOG_FILE = "training_log.jsonl"  # in the entry: one JSON line per logged step


def trainable_tensors(model) -> dict:
    """The parameters of ``model`` that train, by name."""
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def save_tensors(tensors: dict, path: Path) -> None:
    from safetensors.torch import save_file

    save_file({n: t.detach().cpu().contiguous() for n, t in tensors.items()}, str(path))


def load_tensors(model, path: Path) -> None:
    """Load the trainable weights saved at ``path`` into ``model``.

    Raises:
        ZooError: the file is damaged or lacks one of ``model``'s trainable weights.
    """
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


def logged_progress_callback():
    """transformers' progress bar (stderr), with its per-step records (``{'loss': ...}``)
    sent to the log instead of stdout (``tqdm.write``), where a command's results are."""
    from transformers.trainer_callback import ProgressCallback

    class LoggedProgress(ProgressCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if state.is_world_process_zero and logs:
                record = {k: v for k, v in logs.items() if k != "total_flos"}
                log.info("step %d: %s", state.global_step, json.dumps(record))

    return LoggedProgress


def use_logged_progress(trainer) -> None:
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
    import torch
    from safetensors.torch import load_file
    from transformers.trainer import safe_globals

    from adapter_zoo.training.checkpoint import read_checkpoint_file

    def pickled(path: Path):
        with safe_globals():
            return torch.load(path, map_location="cpu", weights_only=True, mmap=True)

    readers = {
        ".json": lambda path: json.loads(path.read_text(encoding="utf-8")),
        ".safetensors": lambda path: load_file(str(path)),
        ".pt": pickled,
        ".pth": pickled,
    }
    for path in sorted(checkpoint.iterdir()):
        if path.suffix in readers and path.is_file():
            read_checkpoint_file(path, readers[path.suffix])


def last_checkpoint(folder: Path) -> Path | None:
    """The newest complete trainer checkpoint under ``folder``, if any."""
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
    from adapter_zoo.training.checkpoint import checkpoint_dir
    from stackexchange.io import atomic_write_json

    folder = checkpoint_dir(config.name)
    run = {"config": config.to_dict(), "encoder": config.encoder}
    state = process_state()
    if state.is_main_process:  # one process prepares it; the others wait until it is ready
        if folder.exists() and (config.restart or _run_of(folder) != run):
            shutil.rmtree(folder)  # our own checkpoint folder, of another run or given up
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_json(folder / RUN_FILE, run)
    state.wait_for_everyone()
    return folder


def _run_of(folder: Path) -> dict | None:
    try:
        return json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def process_state():
    """accelerate's process state (``torch.distributed.run`` / ``accelerate launch``); on a
    machine without a GPU it must be asked for CPU processes, or it sees one process."""
    from accelerate import PartialState

    return PartialState(cpu=use_cpu())


def use_cpu() -> bool:
    import torch

    return not torch.cuda.is_available()
