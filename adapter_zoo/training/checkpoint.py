"""Per-epoch checkpoints in ``<zoo home>/.checkpoints/<name>/``, for exact resumption."""

from __future__ import annotations

import contextlib
import json
import random
import shutil
from pathlib import Path

import numpy as np

from adapter_zoo.errors import ZooError
from stackexchange.io import atomic_directory, atomic_write_json

STATE_FILE = "state.json"
TENSORS_FILE = "trainer.pt"


def checkpoint_dir(name: str) -> Path:
    from adapter_zoo.zoo.store import zoo_home

    return zoo_home() / ".checkpoints" / name


def rng_state() -> dict:
    import torch

    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(name: str, progress: dict, tensors: dict) -> Path:
    """Replace the checkpoint of run ``name`` atomically.

    Args:
        progress: JSON-ready counters (config, phase, epoch, step, best, log).
        tensors: model, optimizer and scheduler state dicts, best weights, RNG states.
    """
    import torch

    folder = checkpoint_dir(name)
    with atomic_directory(folder, overwrite=True) as tmp:
        torch.save({**tensors, "rng": rng_state()}, tmp / TENSORS_FILE)
        atomic_write_json(tmp / STATE_FILE, progress)
    return folder


def _corrupt(path: Path, error: BaseException) -> ZooError:
    detail = str(error).splitlines()[0] if str(error) else type(error).__name__
    return ZooError(
        f"{path}: corrupt or truncated checkpoint ({detail}); "
        "run adapter-zoo train again with --restart to start over"
    )


def load_checkpoint(name: str, config_dict: dict) -> tuple[dict, dict] | None:
    """(progress, tensors) of a checkpoint made with the same config, else None.

    Raises:
        ZooError: a checkpoint file that cannot be read (truncated, corrupt), naming it.
    """
    import torch

    folder = checkpoint_dir(name)
    try:
        progress = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:  # JSONDecodeError, UnicodeDecodeError
        raise _corrupt(folder / STATE_FILE, error) from None
    if not isinstance(progress, dict) or progress.get("config") != config_dict:
        print(f"adapter-zoo train: ignoring checkpoint {folder} made with another config")
        return None
    try:
        # weights_only=False: the file holds RNG states (numpy tuples) written by this module.
        tensors = torch.load(folder / TENSORS_FILE, map_location="cpu", weights_only=False)
    except Exception as error:  # torch reports a damaged file with many exception types
        raise _corrupt(folder / TENSORS_FILE, error) from None
    return progress, tensors


def remove_checkpoint(name: str) -> None:
    """Delete run ``name``'s checkpoint (its zoo entry is written), and the folder if empty."""
    folder = checkpoint_dir(name)
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):  # other runs still have checkpoints there
        folder.parent.rmdir()
