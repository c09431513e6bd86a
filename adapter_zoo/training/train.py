"""``train(config)``: one entry point for both encoders, each on its sentence-transformers
trainer (:mod:`adapter_zoo.training.cross`, :mod:`adapter_zoo.training.bi`)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.precision import training_precision
from adapter_zoo.training.checkpoint import checkpoint_dir, remove_run_folder
from adapter_zoo.training.config import TrainingConfig
from adapter_zoo.training.models import resolve_drop_lower
from adapter_zoo.zoo.store import check_zoo_writable, entry_lock, entry_path, read_card

log = logging.getLogger(__name__)


def train(config: TrainingConfig) -> Path:
    """Train ``config`` and write its zoo entry atomically; return the entry folder.

    A crashed run resumes from its last checkpoint when started again with the same config;
    started again after its entry was written (killed before it could end), it finds the
    entry done and returns it. The entry's lock is held for the whole run: a second run to
    the same name is refused in one line before it trains.

    Example:
        >>> cfg = TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="beer")
        >>> train(cfg)  # doctest: +SKIP
        PosixPath('.../adapter-zoo/beer')

    Raises:
        ZooError: another run writes the entry, the entry exists holding another run
            (without ``overwrite``), a forum is not parsed in ``config.data``, mode
            ``adapter`` names several forums, ``drop_lower`` or ``max_length`` do not fit
            the base, or bf16 is asked for where it cannot run
            (:func:`adapter_zoo.precision.training_precision`); all before anything is
            written.
    """
    final = entry_path(config.name)
    # held until the entry is written: a second run to the name is refused before it trains
    # (one process of a multi-process run holds it: the main one, which writes the entry)
    with entry_lock(final) if _main_process() else contextlib.nullcontext():
        if final.exists() and not config.overwrite:
            if _same_run(final, config):
                return final
            raise ZooError(f"zoo entry {config.name!r} already exists at {final}; use --overwrite")
        check_zoo_writable(checkpoint_dir(config.name).parent)  # before any model loads
        hosts, config = _resolved(config)
        if config.encoder == "bi":
            # heavy: training.bi loads torch, transformers, sentence-transformers when imported
            from adapter_zoo.training.bi import train_bi_encoder

            return train_bi_encoder(config, hosts)
        # heavy: training.cross loads torch, transformers, sentence-transformers when imported
        from adapter_zoo.training.cross import train_cross_encoder

        return train_cross_encoder(config, hosts)


def _resolved(config: TrainingConfig) -> tuple[list[str], TrainingConfig]:
    """The forums' hosts, and ``config`` as it trains: ``drop_lower``, ``max_length`` and
    the precision decided (what the card's ``training`` records)."""
    # looked up per call: tests monkeypatch training.data.resolve_forums
    from adapter_zoo.training.data import resolve_forums

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
    return hosts, config


def _same_run(final: Path, config: TrainingConfig) -> bool:
    """Whether the entry at ``final`` is what ``config`` trains: an earlier run of the same
    command wrote it (one killed after its entry was in place, before it could end), so the
    same command again has nothing to do. Its run folder, left by that kill, goes."""
    try:
        card = read_card(final)
        _, resolved = _resolved(config)
    except (ZooError, OSError):  # another entry, or arguments that do not resolve
        return False
    wanted = json.loads(json.dumps(resolved.to_dict()))
    recorded = card.get("training") or {}
    if {key: recorded.get(key) for key in wanted} != wanted:
        return False
    if _main_process():
        remove_run_folder(checkpoint_dir(config.name))
    log.info("zoo entry %r at %s already holds this training run (the same arguments); "
             "nothing to do (--overwrite trains it again)", config.name, final)  # fmt: skip
    return True


def _main_process() -> bool:
    """Whether this is the process that writes entries (the only one of a plain run; rank 0
    of ``accelerate launch`` / ``torch.distributed.run``, read from their variable)."""
    return os.environ.get("RANK", "0") == "0"
