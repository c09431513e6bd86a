"""The processes a run trains in (one, or those of ``torch.distributed.run`` /
``accelerate launch``), asked by the trainer and by the checkpoint folder's writers, which
only the main process writes."""

from __future__ import annotations


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
