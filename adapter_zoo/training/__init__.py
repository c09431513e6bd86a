"""Training rankers: per-forum adapters, full fine-tuning, multi-task, AdapterFusion, TANDA.

Example:
    >>> from adapter_zoo.training import TrainingConfig, train
    >>> config = TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="beer")
    >>> train(config)  # doctest: +SKIP
"""

from adapter_zoo.training.config import DEFAULT_LR, MODES, TrainingConfig
from adapter_zoo.training.loop import train

__all__ = ["DEFAULT_LR", "MODES", "TrainingConfig", "train"]
