"""A run's checkpoints: the run folder (``<zoo home>/.checkpoints/<name>/``) and every file
in it, written and read back.

One folder per entry name, recording the run's config (:data:`RUN_FILE`), emptied when it
holds another run's or the run restarts. Inside, each phase's trainer checkpoints hold only
the trainable weights as safetensors (:class:`TrainableCheckpoints`, :data:`TRAINABLE_FILE`),
and a resume reads nothing that unpickles code: every file is read ``weights_only`` before
the trainer does (:func:`check_resumable`), a damaged one as one line of error naming it and
``--restart`` (:func:`read_checkpoint_file`). A finished phase leaves its weights and its
record beside (:func:`save_finished_phase`), so a resumed run skips it
(:func:`finished_phase`).
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from adapter_zoo.errors import ZooError
from adapter_zoo.training.processes import process_state
from adapter_zoo.zoo.store import zoo_home
from stackexchange.errors import first_line
from stackexchange.io import atomic_write_json
from stackexchange.jsontext import loads_text, read_json_file

T = TypeVar("T")
log = logging.getLogger(__name__)

RUN_FILE = "run.json"
# The checkpoint layout this trainer writes and resumes, recorded in RUN_FILE. 2: both
# encoders on the library's trainers, step 0 saved as checkpoint-0 and every dev record in
# trainer_state.json's log. A folder of format 1 (the hand-written selection callback) resumed
# with no step-0 record and ended in a StopIteration traceback; another format is another run.
CHECKPOINT_FORMAT = 2
TRAINABLE_FILE = "trainable.safetensors"
TRAINER_STATE = "trainer_state.json"  # transformers' TRAINER_STATE_NAME, written last
_CHECKPOINT = re.compile(r"checkpoint-(\d+)")  # transformers' PREFIX_CHECKPOINT_DIR-<step>


def checkpoint_dir(name: str) -> Path:
    """The run folder of the zoo entry ``name`` (it need not exist)."""
    return zoo_home() / ".checkpoints" / name


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


def remove_run_folder(folder: Path) -> None:
    """Remove the run folder ``folder`` once its entry is written, and the folder of run
    folders with it when it is left empty."""
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):  # other runs' checkpoints may still be there
        folder.parent.rmdir()


def _run_of(folder: Path) -> dict | None:
    """The run recorded in the checkpoint folder ``folder``, or None when there is none that
    can be read (the folder is then another run's: emptied, as it is the project's own)."""
    try:
        return read_json_file(folder / RUN_FILE, ZooError)
    except (OSError, ZooError):
        return None


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


def last_checkpoint(folder: Path) -> Path | None:
    """The newest complete trainer checkpoint under ``folder``, if any.

    The trainer writes a checkpoint's ``trainer_state.json`` last, so a checkpoint is
    complete once that file reads as JSON. One a kill cut short while it was being written
    is removed (the run folder is the project's own): the run resumes from the checkpoint
    before it, and writes this one again when it gets there.
    """
    if not folder.is_dir():
        return None
    numbered = []
    for path in folder.iterdir():
        match = _CHECKPOINT.fullmatch(path.name)
        if match and path.is_dir():
            numbered.append((int(match[1]), path))
    for _, path in sorted(numbered, reverse=True):
        if _complete(path):
            return path
        log.info("%s: cut short while it was written (no trainer state); removed", path)
        shutil.rmtree(path, ignore_errors=True)
    return None


def _complete(checkpoint: Path) -> bool:
    try:
        loads_text((checkpoint / TRAINER_STATE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return True


def resume_point(folder: Path) -> str | None:
    """The checkpoint a phase trained in ``folder`` resumes from (checked), or None."""
    last = last_checkpoint(folder)
    if last is None:
        return None
    check_resumable(last)
    return str(last)


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


def _corrupt(path: Path, error: BaseException) -> ZooError:
    detail = first_line(error)
    return ZooError(
        f"{path}: corrupt or truncated checkpoint ({detail}); "
        "run adapter-zoo train again with --restart to start over"
    )


def read_checkpoint_file(path: Path, read: Callable[[Path], T]) -> T:
    """``read(path)``, with an unreadable checkpoint file as one line naming it.

    Raises:
        ZooError: ``path`` holds a pickle that is not plain tensors and containers (refused
            by ``torch.load(weights_only=True)``, so none of its code ran), or it is damaged
            (truncated, corrupt); the message names the file and ``--restart``.
    """
    try:
        return read(path)
    except pickle.UnpicklingError as error:
        raise ZooError(
            f"{path}: not a checkpoint written by adapter-zoo, refused "
            f"({str(error).splitlines()[0][:200]})"
        ) from None
    except Exception as error:  # torch and safetensors report damage with many exception types
        raise _corrupt(path, error) from None


def finished_phase(model, folder: Path, name: str) -> dict | None:
    """The record of phase ``name`` that a resumed run finished before (checked), its
    weights loaded into ``model``; None when the phase did not finish."""
    done, weights = _finished_files(folder, name)
    if not done.exists():
        return None
    finished = read_finished_phase(done)
    load_tensors(model, weights)
    return finished


def read_finished_phase(done: Path) -> dict:
    """The record :func:`save_finished_phase` left of a finished phase (its log, steps and
    best dev record), checked: a damaged or edited one is one line naming it and
    ``--restart``, not a KeyError or TypeError once the run goes on.

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


def save_finished_phase(model, folder: Path, name: str, finished: dict) -> None:
    """Mark phase ``name`` done (its weights, then its log), so a resumed run skips it."""
    done, weights = _finished_files(folder, name)
    state = process_state()
    if state.is_main_process:
        save_tensors(trainable_tensors(model), weights)
        atomic_write_json(done, finished)
    state.wait_for_everyone()


def _finished_files(folder: Path, name: str) -> tuple[Path, Path]:
    """The record and the weights a finished phase ``name`` leaves in the run folder."""
    return folder / f"{name}-done.json", folder / f"{name}-done.safetensors"
