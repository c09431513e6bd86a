"""Per-epoch checkpoints in ``<zoo home>/.checkpoints/<name>/``, for exact resumption."""

from __future__ import annotations

import contextlib
import json
import logging
import pickle
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from adapter_zoo.errors import ZooError
from stackexchange.io import atomic_directory, atomic_write_json

log = logging.getLogger(__name__)

STATE_FILE = "state.json"
TENSORS_FILE = "trainer.pt"
T = TypeVar("T")


def checkpoint_dir(name: str) -> Path:
    from adapter_zoo.zoo.store import zoo_home

    return zoo_home() / ".checkpoints" / name


def rng_state() -> dict:
    import torch

    kind, keys, position, has_gauss, cached_gaussian = np.random.get_state()
    state = {
        "python": random.getstate(),
        # plain values and a tensor, not numpy objects: torch.load(weights_only=True) reads them
        "numpy": {
            "kind": kind,
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "position": int(position),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached_gaussian),
        },
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    import torch

    random.setstate(state["python"])
    numpy_state = state["numpy"]
    np.random.set_state(
        (
            numpy_state["kind"],
            numpy_state["keys"].numpy().astype(np.uint32),
            numpy_state["position"],
            numpy_state["has_gauss"],
            numpy_state["cached_gaussian"],
        )
    )
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
        log.warning("ignoring checkpoint %s made with another config", folder)
        return None
    # weights_only: tensors and plain containers only; a planted pickle cannot run code.
    tensors = read_checkpoint_file(
        folder / TENSORS_FILE,
        lambda path: torch.load(path, map_location="cpu", weights_only=True),
    )
    return progress, tensors


def remove_checkpoint(name: str) -> None:
    """Delete run ``name``'s checkpoint (its zoo entry is written), and the folder if empty."""
    folder = checkpoint_dir(name)
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):  # other runs still have checkpoints there
        folder.parent.rmdir()
