"""Where a run keeps its checkpoints (``<zoo home>/.checkpoints/<name>/``), and reading one
file of them as one line of error."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.store import zoo_home
from stackexchange.errors import first_line

T = TypeVar("T")


def checkpoint_dir(name: str) -> Path:
    return zoo_home() / ".checkpoints" / name


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
