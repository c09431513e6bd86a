"""What ``adapter-zoo pretrain`` runs: :class:`PretrainConfig` (no torch at import).

Continued pre-training of a cross-encoder as Di Liello, Garg, Soldaini & Moschitti (EMNLP
2022) pre-train for answer sentence selection: each of an objective's examples
(:mod:`adapter_zoo.objectives`) gives the pair (anchor, positive) label 1 and (anchor,
negative) label 0 for each of its negatives; a binary head on the pair's first token learns
them while a masked-language-model head learns the same (masked) inputs, at equal weight.
``mlm`` is the paper's control: the same sampled pairs, the MLM loss alone.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from adapter_zoo.errors import ZooError
from adapter_zoo.lengths import CROSS_MAX_LENGTH
from adapter_zoo.modes import training_row
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.objectives import objective_names
from adapter_zoo.precision import check_precision
from adapter_zoo.training.rates import default_lr
from stackexchange.errors import unknown_name
from stackexchange.numbers import (
    MAX_BATCH,
    MAX_QUESTIONS,
    MAX_STEPS,
    MAX_TOKENS,
    MAX_WIDTH,
    check_number,
)

PRETRAIN_MODES = ("adapter", "full")
# The paper's three objectives; "all" trains on the three together.
PAPER_OBJECTIVES = ("ssp", "sp", "psd")
MIXED = "all"
MLM_ONLY = "mlm"  # the control: the pairs "all" samples, the MLM loss alone
MLM_PROBABILITY = 0.15  # BERT's and the paper's share of masked tokens
DEFAULT_PRETRAIN_STEPS = 1000


def pretrain_objectives() -> tuple[str, ...]:
    """The names ``--objective`` takes: every registered objective, ``all`` and ``mlm``.

    Example:
        >>> {"ssp", "sp", "psd", "all", "mlm"} <= set(pretrain_objectives())
        True
    """
    return (*objective_names(), MIXED, MLM_ONLY)


def sampled_objectives(objective: str) -> tuple[str, ...]:
    """The registered objectives whose examples a run of ``objective`` trains on.

    Example:
        >>> sampled_objectives("sp"), sampled_objectives("mlm")
        (('sp',), ('ssp', 'sp', 'psd'))
    """
    return PAPER_OBJECTIVES if objective in (MIXED, MLM_ONLY) else (objective,)


@dataclass(frozen=True)
class PretrainConfig:
    """A continued pre-training run of a cross-encoder on a corpus of documents.

    Args:
        objective: a registered objective (``ssp``, ``sp``, ``psd``, ...), ``all`` (the
            paper's three, their examples together) or ``mlm`` (the MLM-only control on the
            pairs ``all`` samples).
        corpus: what :func:`adapter_zoo.documents.read_documents` reads (a folder of text
            files, a JSONL of ``{"title", "text"}``, a file of one passage a line, a parsed
            forum).
        name: the zoo entry to write.
        mode: ``adapter`` (a new bottleneck adapter; the base stays frozen) or ``full``
            (every weight trains).
        base_model: ``minilm-l6``, ``bert-base``, a Hub id or a local path.
        max_steps: optimizer steps; the examples are drawn anew (seed + pass) for each pass
            over the corpus the steps need.
        batch_size: examples per step; a step scores each example's positive and negatives.
        max_length: tokens per pair.
        lr: learning rate (None: the cross-encoder's rate of ``mode``).
        mlm_probability: the share of tokens masked for the MLM loss.
        dev_lists: held-out lists (the objective's examples from held-out documents) the
            objective head is scored on at each evaluation: the run's progress.
        reduction_factor: the adapter's bottleneck reduction (``adapter``).
        seed: the examples', masks' and new weights' seed.
        precision: ``auto``, ``fp32`` or ``bf16`` (the frozen base's linear layers).
        overwrite: replace an existing zoo entry ``name``.
        restart: discard the run's checkpoint and start from step 0.

    Example:
        >>> PretrainConfig(objective="ssp", corpus="docs.jsonl", name="wiki-ssp").learning_rate
        0.0001
        >>> PretrainConfig(objective="nsp", corpus="docs.jsonl", name="x")
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        adapter_zoo.errors.ZooError: unknown objective 'nsp'; did you mean sp, ssp? choose one of ...
    """

    objective: str
    corpus: str
    name: str
    mode: str = "adapter"
    base_model: str = DEFAULT_BASE
    max_steps: int = DEFAULT_PRETRAIN_STEPS
    batch_size: int = 8
    max_length: int = CROSS_MAX_LENGTH
    lr: float | None = None
    mlm_probability: float = MLM_PROBABILITY
    dev_lists: int = 50
    reduction_factor: int = 16
    weight_decay: float = 0.01
    seed: int = 42
    precision: str = "auto"
    overwrite: bool = False
    restart: bool = False

    def __post_init__(self):
        object.__setattr__(self, "corpus", str(self.corpus))
        names = pretrain_objectives()
        if self.objective not in names:
            raise unknown_name("objective", self.objective, names, ZooError)
        if self.mode not in PRETRAIN_MODES:
            raise unknown_name("pretraining mode", self.mode, PRETRAIN_MODES, ZooError)
        check_precision(self.precision)
        whole = dict(integer=True, error=ZooError)
        check_number("max_steps", self.max_steps, low=1, high=MAX_STEPS, **whole)
        check_number("batch_size", self.batch_size, low=1, high=MAX_BATCH, **whole)
        check_number("max_length", self.max_length, low=8, high=MAX_TOKENS, **whole)
        check_number("dev_lists", self.dev_lists, low=1, high=MAX_QUESTIONS, **whole)
        check_number("reduction_factor", self.reduction_factor, low=1, high=MAX_WIDTH, **whole)
        check_number("seed", self.seed, low=0, high=2**32 - 1, **whole)
        check_number("mlm_probability", self.mlm_probability, low=0.01, high=0.9, error=ZooError)
        for key in ("lr", "weight_decay"):
            if getattr(self, key) is not None:
                check_number(key, getattr(self, key), low=0, error=ZooError)

    encoder = "cross"  # a cross-encoder: the pair read jointly

    @property
    def layout(self) -> str:
        """The entry's layout (:data:`adapter_zoo.modes.MODE_TABLE`'s cross-encoder row)."""
        return training_row("cross", self.mode).layout

    @property
    def learning_rate(self) -> float:
        return float(self.lr if self.lr is not None else default_lr("cross", self.mode))

    @property
    def trains_objective(self) -> bool:
        """Whether the binary head learns (every objective but the MLM-only control)."""
        return self.objective != MLM_ONLY

    def to_dict(self) -> dict:
        """JSON-ready fields (the card's ``pretraining.config``; what a checkpoint matches)."""
        record = dataclasses.asdict(self)
        for key in ("overwrite", "restart"):
            record.pop(key)
        return record
