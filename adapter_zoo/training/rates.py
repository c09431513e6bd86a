"""The default learning rates of every training path, by encoder and mode: read from the one
table of modes, :data:`adapter_zoo.modes.MODE_TABLE` (where the rates' reasons are).

Example:
    >>> default_lr("bi", "adapter"), default_lr("cross", "adapter"), default_lr("cross", "tanda")
    (0.0005, 0.0001, 2e-06)
"""

from __future__ import annotations

from adapter_zoo.errors import ZooError
from adapter_zoo.modes import MODE_TABLE, training_row

# encoder -> mode -> rate, in the table's order (the docs' table of rates is made from it)
LEARNING_RATES: dict[str, dict[str, float]] = {
    encoder: {row.mode: row.lr for row in MODE_TABLE if row.trained and row.encoder == encoder}
    for encoder in dict.fromkeys(row.encoder for row in MODE_TABLE)
}


def default_lr(encoder: str, mode: str) -> float:
    """The learning rate training uses for ``encoder`` (``cross``/``bi``) in ``mode`` when
    none is given."""
    row = training_row(encoder, mode)
    if row is None:
        raise ZooError(f"no default learning rate for a {encoder}-encoder in mode {mode!r}")
    return row.lr
