"""``train(config)``: one entry point for both encoders, each on its sentence-transformers
trainer (:mod:`adapter_zoo.training.cross`, :mod:`adapter_zoo.training.bi`)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.precision import training_precision
from adapter_zoo.training.checkpoint import checkpoint_dir
from adapter_zoo.training.config import TrainingConfig
from adapter_zoo.training.models import resolve_drop_lower
from adapter_zoo.zoo.store import check_zoo_writable, entry_path

log = logging.getLogger(__name__)


def train(config: TrainingConfig) -> Path:
    """Train ``config`` and write its zoo entry atomically; return the entry folder.

    A crashed run resumes from its last checkpoint when started again with the same config.

    Example:
        >>> cfg = TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="beer")
        >>> train(cfg)  # doctest: +SKIP
        PosixPath('.../adapter-zoo/beer')

    Raises:
        ZooError: the entry exists (without ``overwrite``), a forum is not parsed in
            ``config.data``, mode ``adapter`` names several forums, ``drop_lower`` or
            ``max_length`` do not fit the base, or bf16 is asked for where it cannot run
            (:func:`adapter_zoo.precision.training_precision`); all before anything is
            written.
    """
    # looked up per call: tests monkeypatch training.data.resolve_forums
    from adapter_zoo.training.data import resolve_forums

    final = entry_path(config.name)
    if final.exists() and not config.overwrite:
        raise ZooError(f"zoo entry {config.name!r} already exists at {final}; use --overwrite")
    check_zoo_writable(checkpoint_dir(config.name).parent)  # before any model loads
    hosts = resolve_forums(config.data, config.forums)
    if config.mode == "adapter" and len(hosts) != 1:
        raise ZooError(
            f"mode 'adapter' trains one forum's adapter, got {len(hosts)} forums "
            f"({', '.join(hosts)}); use --mode multitask"
        )
    config = resolve_drop_lower(config)  # checked on the base; a fusion's from its adapters
    # decided once, before any model loads; the card's training.precision is what ran
    precision = training_precision(config.precision, trains_base=config.layout == "full")
    config = dataclasses.replace(config, precision=precision)
    log.debug("training precision: %s", precision)  # the card records it
    if config.encoder == "bi":
        # heavy: training.bi loads torch, transformers, sentence-transformers when imported
        from adapter_zoo.training.bi import train_bi_encoder

        return train_bi_encoder(config, hosts)
    # heavy: training.cross loads torch, transformers, sentence-transformers when imported
    from adapter_zoo.training.cross import train_cross_encoder

    return train_cross_encoder(config, hosts)
