"""The default learning rates of every training path, by encoder and mode: the one table.

Cross-encoders (and cascades, which train a cross-encoder's exits): MultiCQA's adapters and
multi-task adapters 1e-4, AdapterFusion 5e-5; full fine-tuning 2e-5 (BERT's usual rate);
TANDA adapts with a rate ten times below its transfer rate.

Bi-encoders: benchmarks/perf/quality.py's lr table (beer, 80 steps, dev MAP every 10 at
length 256): 5e-4 is best on dev (0.874 vs 0.869 at 2e-4, 0.861 at 1e-4; base 0.847) and on
test (0.901 vs 0.899, 0.891; base 0.897); 1e-3 overfits (shared notes: 0.877 after 100
steps). A full fine-tune moves every weight, so it takes the usual BERT rate; fusion trains
only attention.

Example:
    >>> default_lr("bi", "adapter"), default_lr("cross", "adapter"), default_lr("cross", "tanda")
    (0.0005, 0.0001, 2e-06)
"""

from __future__ import annotations

from adapter_zoo.errors import ZooError

LEARNING_RATES = {
    "cross": {"adapter": 1e-4, "multitask": 1e-4, "fusion": 5e-5, "full": 2e-5, "tanda": 2e-6},
    "bi": {"adapter": 5e-4, "multitask": 5e-4, "fusion": 5e-5, "full": 2e-5, "tanda": 2e-5},
}


def default_lr(encoder: str, mode: str) -> float:
    """The learning rate training uses for ``encoder`` (``cross``/``bi``) in ``mode`` when
    none is given."""
    try:
        return LEARNING_RATES[encoder][mode]
    except KeyError:
        raise ZooError(
            f"no default learning rate for a {encoder}-encoder in mode {mode!r}"
        ) from None
