"""Training rankers: per-forum adapters, full fine-tuning, multi-task, AdapterFusion, TANDA.

Example:
    >>> from adapter_zoo.training import TrainingConfig, train
    >>> config = TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="beer")
    >>> train(config)  # doctest: +SKIP
"""

from adapter_zoo.training.config import MODES, TrainingConfig
from adapter_zoo.training.rates import LEARNING_RATES, default_lr
from adapter_zoo.training.train import train
from adapter_zoo.training.trainer import stop_training_at

__all__ = ["LEARNING_RATES", "MODES", "TrainingConfig", "default_lr", "stop_training_at", "train"]
