"""``train(config)``: one entry point for both encoders, each on its sentence-transformers
trainer (:mod:`adapter_zoo.training.cross`, :mod:`adapter_zoo.biencoder.train`)."""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.training.config import TrainingConfig


def train(config: TrainingConfig) -> Path:
    """Train ``config`` and write its zoo entry atomically; return the entry folder.

    A crashed run resumes from its last checkpoint when started again with the same config.

    Example:
        >>> cfg = TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="beer")
        >>> train(cfg)  # doctest: +SKIP
        PosixPath('.../adapter-zoo/beer')
    """
    if config.encoder == "bi":
        from adapter_zoo.biencoder.train import train_bi_encoder

        return train_bi_encoder(config)
    from adapter_zoo.training.cross import train_cross_encoder

    return train_cross_encoder(config)
