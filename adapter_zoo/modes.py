"""The modes of trained entries, by encoder: the one table of what each stores and how.

Each row of :data:`MODE_TABLE` is one (encoder, mode, layout) a trained entry's card may
say: the layout its weights are stored in (see :mod:`adapter_zoo.zoo.layouts`), the
registered model kind that opens it (:mod:`adapter_zoo.kinds`) and, for the rows ``train``
writes, the default learning rate. Training's modes and encoders, its default rates
(:func:`adapter_zoo.training.rates.default_lr`), its layout of each mode and the entry kinds'
card modes and layouts are all read from here.

Cross-encoder rates (and the cascade's, which trains a cross-encoder's exits) are MultiCQA's:
adapters and multi-task adapters 1e-4, AdapterFusion 5e-5; full fine-tuning 2e-5 (BERT's
usual rate); TANDA adapts with a rate ten times below its transfer rate.

Bi-encoder rates: benchmarks/studies/quality.py's lr table (beer, 80 steps, dev MAP every 10 at
length 256): 5e-4 is best on dev (0.874 vs 0.869 at 2e-4, 0.861 at 1e-4; base 0.847) and on
test (0.901 vs 0.899, 0.891; base 0.897); 1e-3 overfits (shared notes: 0.877 after 100
steps). A full fine-tune moves every weight, so it takes the usual BERT rate; fusion trains
only attention.

Example:
    >>> training_row("bi", "tanda")
    ModeRow(encoder='bi', mode='tanda', layout='full', kind='bi-full', lr=2e-05)
    >>> [row.mode for row in rows_of_kind("cross-adapter")]
    ['adapter', 'tanda']
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModeRow:
    """One (encoder, mode, layout) of a trained entry's card.

    Attributes:
        encoder: ``cross`` or ``bi``.
        mode: the card's ``mode`` (a training mode, or ``soup``).
        layout: how the entry stores its weights: ``adapter``, ``full`` or ``fusion``.
        kind: the registered model kind that opens such an entry.
        lr: the default learning rate of ``train`` in this mode; None for a card ``train``
            does not write.
    """

    encoder: str
    mode: str
    layout: str
    kind: str
    lr: float | None = None

    @property
    def trained(self) -> bool:
        """Whether ``train`` writes this (encoder, mode) (with this row's layout)."""
        return self.lr is not None


# Rows train writes come first, in the order of its modes (the CLI's choices, its errors).
MODE_TABLE: tuple[ModeRow, ...] = (
    ModeRow("cross", "adapter", "adapter", "cross-adapter", 1e-4),
    ModeRow("cross", "full", "full", "cross-full", 2e-5),
    ModeRow("cross", "multitask", "adapter", "cross-multitask", 1e-4),
    ModeRow("cross", "fusion", "fusion", "cross-fusion", 5e-5),
    ModeRow("cross", "tanda", "full", "cross-full", 2e-6),
    ModeRow("bi", "adapter", "adapter", "bi-adapter", 5e-4),
    ModeRow("bi", "full", "full", "bi-full", 2e-5),
    ModeRow("bi", "multitask", "adapter", "bi-multitask", 5e-4),
    ModeRow("bi", "fusion", "fusion", "bi-fusion", 5e-5),
    ModeRow("bi", "tanda", "full", "bi-full", 2e-5),
    # TANDA's adapt step on an adapter entry (its transfer step) stores an adapter: such a
    # card opens as the encoder's adapter (train itself continues adapters as mode adapter,
    # --init-from).
    ModeRow("cross", "tanda", "adapter", "cross-adapter"),
    ModeRow("bi", "tanda", "adapter", "bi-adapter"),
    # adapter_zoo.adapt's weighted average of forum adapters
    ModeRow("bi", "soup", "adapter", "bi-soup"),
)

# What train accepts, in the table's order (bi and cross in alphabetical order, as ever).
TRAINING_MODES = tuple(dict.fromkeys(row.mode for row in MODE_TABLE if row.trained))
TRAINING_ENCODERS = tuple(sorted({row.encoder for row in MODE_TABLE if row.trained}))


def training_row(encoder: str, mode: str) -> ModeRow | None:
    """The row ``train`` writes for ``encoder`` in ``mode``, None when it trains no such."""
    return next(
        (r for r in MODE_TABLE if r.trained and (r.encoder, r.mode) == (encoder, mode)), None
    )


def rows_of_kind(kind: str) -> tuple[ModeRow, ...]:
    """The rows whose entries the registered kind ``kind`` opens, in the table's order."""
    return tuple(row for row in MODE_TABLE if row.kind == kind)


def single_layout(mode: str) -> str | None:
    """The layout of every entry of ``mode`` when there is only one (``full``, ``fusion``,
    ``adapter``...), None when the mode stores several (``tanda``) or is not in the table."""
    layouts = {row.layout for row in MODE_TABLE if row.mode == mode}
    return layouts.pop() if len(layouts) == 1 else None
