"""The torch device a model runs on: one rule for every scorer and for the precision check.

Example:
    >>> pick_device("cpu")
    device(type='cpu')
"""

from __future__ import annotations


def pick_device(device=None):
    """``device`` as a torch.device; by default CUDA when available, else the CPU."""
    # torch on first use: the CLI starts without it
    import torch

    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
