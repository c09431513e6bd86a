"""The machine facts every torch benchmark saves beside its numbers."""

from __future__ import annotations

import datetime
import os
import platform


def machine_info() -> dict:
    """CPU count, torch threads and version, Python, CUDA, and when it ran."""
    import torch

    return {
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cuda": torch.cuda.is_available(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
