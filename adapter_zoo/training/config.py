"""TrainingConfig: every setting of a training run, with the papers' defaults."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from adapter_zoo.errors import ZooError
from adapter_zoo.lengths import default_max_length
from adapter_zoo.losses import default_loss, get_loss
from adapter_zoo.losses.registry import BM25_MARGIN_LOSSES
from adapter_zoo.modes import TRAINING_ENCODERS, TRAINING_MODES, training_row
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.precision import check_precision
from adapter_zoo.ranker.model import mean_pooling_base, resolve_base_model
from adapter_zoo.training.rates import default_lr
from stackexchange.errors import unknown_name
from stackexchange.numbers import (
    MAX_BATCH,
    MAX_LAYERS,
    MAX_LIST,
    MAX_QUESTIONS,
    MAX_STEPS,
    MAX_TOKENS,
    MAX_WIDTH,
    check_number,
)

# What train accepts: the (encoder, mode) rows it writes in adapter_zoo.modes.MODE_TABLE.
MODES = TRAINING_MODES
ENCODERS = TRAINING_ENCODERS
# How an adapter entry changes its base: a SeqBn bottleneck after each feed-forward block
# (the papers' adapter) or LoRA's low-rank updates of the attention's query and value.
METHODS = ("seqbn", "lora")
# What ranks a query's hard-negative pool: BM25 over the queries, or the base's embeddings
NEGATIVE_MINERS = ("bm25", "base")
# Token limit of a pair (cross) or of one text (bi: all-MiniLM-L6-v2 reads up to 256).
# question_answer: title_answer pairs with title + body as the query (the LAS query form);
# objectives: the sentence-level objectives' pairs adapt writes, each with its own hard
# negative (adapter_zoo.adapt.objective_pairs)
PAIR_KINDS = ("title_body", "title_answer", "duplicates", "question_answer", "objectives")
# A bi-encoder learns what its held-out lists ask (question -> accepted answer) and what the
# forum says about its questions (title -> body); the papers' cross-encoders train title-body.
DEFAULT_PAIR_KINDS = {"cross": ("title_body",), "bi": ("question_answer", "title_body")}


@dataclass(frozen=True)
class TrainingConfig:
    """One training run. ``train(config)`` turns it into a zoo entry.

    Args:
        mode: ``adapter`` (one SeqBn adapter + head for one forum), ``full`` (full
            fine-tuning), ``multitask`` (one adapter + head, round-robin over forums),
            ``fusion`` (AdapterFusion over zoo adapters ``adapters``, round-robin),
            ``tanda`` (full fine-tuning: transfer on ``transfer_forums`` of ``transfer_data``,
            every forum there by default, then adapt on ``forums``).
        data: a parse output folder (``adapter-zoo parse ... --out DATA``).
        forums: forum names (``beer`` or ``beer.stackexchange.com``) or a catalog set
            (``all``, ``balanced``, ``largest``).
        name: the zoo entry to write.
        encoder: ``bi`` (sentence embeddings, cosine; sentence-transformers) or ``cross``
            (the pair read jointly; the papers' model). None: ``bi`` for a sentence-encoder
            base (a mean-pooling ``modules.json``, e.g. all-MiniLM-L6-v2), else ``cross``.
        base_model: ``minilm-l6``, ``bert-base``, a Hub id or a local path.
        pair_kinds: which parsed pair folders to train on (None: ``DEFAULT_PAIR_KINDS`` of
            the encoder); ``extended`` adds
            ``title_answer`` and ``duplicates``.
        loss: a registered loss of the encoder (:mod:`adapter_zoo.losses`; None: the
            encoder's default). Cross-encoders: ``bce`` (pointwise, the default),
            ``pairwise`` (hinge on the (positive, negative) margin plus BCE, Laskar et al.
            2020) or ``listwise`` (softmax cross-entropy of the positive against its
            ``negatives``; ``batch_size`` still counts pairs). Bi-encoders: a
            sentence-transformers loss on (anchor, positive) pairs with in-batch negatives
            (default ``CachedMultipleNegativesRankingLoss``: MultipleNegativesRankingLoss
            computed 8 texts at a time, for memory).
        lr: learning rate; None takes ``adapter_zoo.training.rates.default_lr(encoder, mode)`` (the adapt rate for tanda).
        negatives: negatives per positive, resampled every epoch (seed + epoch).
        hard_negatives: draw negatives from the positives of the 20 most BM25-similar
            queries of the same forum and pair kind instead of at random.
        negative_miner: what ranks those 20 with ``hard_negatives``: ``bm25`` (the queries'
            BM25 similarity) or ``base`` (bi-encoders: the base model's own embeddings, each
            query against every positive, a near-copy of its own answer left out:
            :func:`adapter_zoo.training.data.embedding_neighbours`).
        max_steps: stop after this many optimizer steps (all phases together). The rate
            warms up linearly over the first epoch (at most half of all steps; 10% of
            them when ``max_steps`` cuts training short), then decays linearly to 0.
        patience: early stopping after this many dev evaluations without a better dev MAP
            (cross-encoders evaluate every epoch, bi-encoders every ``eval_steps``; None:
            a cross-encoder's tanda stops after 2, everything else never stops early).
        eval_steps: bi-encoders: dev evaluation (and checkpoint) every this many steps
            (None: six per phase); the entry keeps the best checkpoint, the starting
            state's (step 0) included.
        dev_queries: dev MAP is measured on up to ``dev_queries`` dev queries per forum
            (a seeded sample past that): cross-encoders' each against its positive and
            ``dev_candidates - 1`` sampled negatives, bi-encoders' as the held-out benchmarks'
            lists; a folder made from a benchmark is scored on the benchmark's own dev lists
            instead (``adapter_zoo.training.selection``).
        dev_candidates: the candidates of each of those dev queries.
        init_from: ``adapter``/``multitask``: start from this zoo adapter entry (same encoder
            and base) instead of a new adapter, and train it on ``forums``: TANDA's adapt
            step for adapters, the entry's own training being the transfer step. The adapter
            keeps the entry's configuration (its ``drop_lower`` included); a cross-encoder
            also continues the entry's head. Dev selection starts from the entry's state.
        drop_lower: AdapterDrop (Rücklé et al., 2021): the lowest ``drop_lower`` transformer
            layers get no adapter (the adapters library's ``leave_out``), so training runs no
            backward pass through them and a ``Parallel`` sweep computes them once for all
            its adapters. ``full``/``tanda``: the embeddings and the lowest ``drop_lower``
            layers are frozen instead. ``fusion`` takes the fused adapters' layers (a
            non-zero value must agree with them). At most the base's layer count minus 1.
        method: ``adapter``/``multitask``: ``seqbn`` (the adapters library's ``SeqBnConfig``
            bottleneck, ``reduction_factor``) or ``lora`` (its ``LoRAConfig``: rank
            ``lora_r``, scaling ``lora_alpha / lora_r`` on the attention's query and value).
            None: ``seqbn``, or with ``init_from`` the method of the continued entry.
            A LoRA entry exports merged as a plain sentence-transformers model
            (:func:`adapter_zoo.export.export_merged_lora`). The adapters library has no
            fusion of LoRA modules, so ``fusion`` refuses ``lora``.
        lora_r: LoRA's rank (``method="lora"``).
        lora_alpha: LoRA's scaling numerator (``method="lora"``).
        keep_start: bi-encoders: dev selection may keep the starting state (the base, or the
            ``init_from`` entry), so the entry is never worse than its start on dev. ``adapt``
            turns it off: its candidates are compared with the base on held-out lists of
            their own, and a candidate left at its start would be the base again.
        precision: ``auto`` (default), ``fp32`` or ``bf16``: the dtype the frozen base's
            linear layers run in (:func:`adapter_zoo.precision.training_precision`; trained
            weights and the optimizer stay float32). ``train`` records the resolved one.
        attention_dropout: the dropout on the base's attention weights while training (None:
            the base's own, 0.1 for MiniLM). At 0 a CPU runs attention through PyTorch's fused
            kernel, which keeps no attention matrix for backward: fewer bytes a step and a
            faster step (``benchmarks/speed/attention_dropout.py``), what a run to a time budget
            (``adapt``) trades the base's attention dropout for. Recorded in the card's config
            when set.
        memory_budget: bytes a training step's activations may take (None: half the memory
            available at the start, times the process's share of the cores); GradCache,
            chunked backward and recomputed activations are used only when a step would not
            fit (:mod:`adapter_zoo.training.memory`). Not part of the recorded config (the
            card records the plan).
        overwrite: replace an existing zoo entry ``name``.
        restart: discard the run's checkpoint (``.checkpoints/<name>``) and start at step 0
            instead of resuming; like ``overwrite``, not part of the recorded config.

    Example:
        >>> TrainingConfig(mode="adapter", data="parsed", forums=("beer",), name="beer")
        ... # doctest: +ELLIPSIS
        TrainingConfig(mode='adapter', ...)
    """

    mode: str
    data: str
    forums: tuple[str, ...]
    name: str
    base_model: str = DEFAULT_BASE
    encoder: str | None = None
    pair_kinds: tuple[str, ...] | None = None
    extended: bool = False
    loss: str | None = None
    margin: float = 1.0
    lr: float | None = None
    batch_size: int = 32
    max_length: int | None = None
    epochs: int = 3
    max_steps: int | None = None
    negatives: int = 1
    hard_negatives: bool = False
    negative_miner: str = "bm25"
    seed: int = 42
    weight_decay: float = 0.01
    reduction_factor: int = 16
    method: str | None = None
    # r=8 on query and value is the adapters library's default and the LoRA paper's setting
    # (Hu et al., 2021, Table 15's r=8 row on W_q, W_v); alpha=16 (scaling 2, the widespread
    # alpha = 2r convention) instead of the library's alpha=r because B starts at zero and
    # the run takes the SeqBn adapter's learning rate for a same-steps comparison.
    lora_r: int = 8
    lora_alpha: int = 16
    drop_lower: int = 0
    adapters: tuple[str, ...] = ()
    init_from: str | None = None
    fusion_config: str = "static"
    transfer_data: str | None = None
    transfer_forums: tuple[str, ...] = ()
    transfer_lr: float = 2e-5
    transfer_epochs: int = 1
    patience: int | None = None
    dev_queries: int = 200
    dev_candidates: int = 10
    eval_steps: int | None = None
    keep_start: bool = True
    precision: str = "auto"
    attention_dropout: float | None = None
    memory_budget: int | None = None
    overwrite: bool = False
    restart: bool = False

    def __post_init__(self):
        # Lists from the CLI or JSON become tuples so that the config stays hashable.
        if self.encoder is None:
            object.__setattr__(self, "encoder", default_encoder(self.base_model))
        if self.encoder not in ENCODERS:
            raise unknown_name("encoder", self.encoder, ENCODERS, ZooError)
        if self.pair_kinds is None:
            object.__setattr__(self, "pair_kinds", DEFAULT_PAIR_KINDS[self.encoder])
        if self.max_length is None:
            object.__setattr__(self, "max_length", default_max_length(self.encoder))
        for key in ("forums", "pair_kinds", "adapters", "transfer_forums"):
            value = getattr(self, key)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, key, tuple(value))
        if self.mode not in MODES:
            raise unknown_name("training mode", self.mode, MODES, ZooError)
        if self.loss is None:
            object.__setattr__(self, "loss", default_loss(self.encoder))
        loss = get_loss(self.loss, self.encoder)  # a ZooError listing the encoder's losses
        if self.hard_negatives and loss.examples == "pairs":
            raise ZooError(
                f"loss {self.loss} trains on (anchor, positive) pairs; --hard-negatives needs "
                "a loss that takes a negative per anchor, such as MultipleNegativesRankingLoss"
            )
        if self.loss in BM25_MARGIN_LOSSES and not self.hard_negatives:
            raise ZooError(
                f"loss {self.loss} distils each hard negative's margin; it needs --hard-negatives"
            )
        if self.negative_miner not in NEGATIVE_MINERS:
            raise unknown_name("negative miner", self.negative_miner, NEGATIVE_MINERS, ZooError)
        if self.negative_miner != "bm25" and not (self.hard_negatives and self.encoder == "bi"):
            raise ZooError(
                f"negative miner {self.negative_miner!r} mines a bi-encoder's hard negatives: "
                "it needs encoder 'bi' and hard_negatives"
            )
        unknown = [kind for kind in self.pair_kinds if kind not in PAIR_KINDS]
        if unknown:
            raise unknown_name("pair kind", unknown[0], PAIR_KINDS, ZooError)
        if not self.forums:
            raise ZooError("no forums given: name at least one forum or a catalog set")
        check_precision(self.precision)
        self._check_numbers()
        if self.method is None and not self.init_from:
            object.__setattr__(self, "method", "seqbn")
        if self.method is not None and self.method not in METHODS:
            raise unknown_name("method", self.method, METHODS, ZooError)
        if self.method == "lora" and self.mode == "fusion":
            raise ZooError(
                "--method lora: the adapters library cannot fuse LoRA modules "
                "(AdapterFusion combines bottleneck adapters); use mode adapter or multitask"
            )
        if self.method == "lora" and self.layout != "adapter":
            raise ZooError(
                f"--method lora trains a LoRA adapter (modes adapter, multitask); mode "
                f"{self.mode!r} trains every weight"
            )
        if self.mode == "fusion" and len(self.adapters) < 2:
            raise ZooError("mode 'fusion' needs at least two zoo adapters (--adapters A B ...)")
        if self.init_from and self.layout != "adapter":
            raise ZooError(
                f"--init-from continues an adapter entry (modes adapter, multitask), "
                f"not mode {self.mode!r}"
            )
        if self.mode == "tanda" and not self.transfer_data:
            raise ZooError(
                "mode 'tanda' needs transfer data (--transfer-data DIR [--transfer-forums F ...])"
            )
        if self.mode == "tanda" and not self.transfer_forums:
            object.__setattr__(self, "transfer_forums", ("all",))  # every forum parsed there

    def _check_numbers(self) -> None:
        """Every numeric field by type and range (NaN and infinity included), one line each."""
        whole = dict(integer=True, error=ZooError)
        check_number("batch_size", self.batch_size, low=1, high=MAX_BATCH, **whole)
        for key in ("reduction_factor", "lora_r", "lora_alpha"):
            check_number(key, getattr(self, key), low=1, high=MAX_WIDTH, **whole)
        check_number("negatives", self.negatives, low=1, high=MAX_LIST, **whole)
        for key in ("epochs", "transfer_epochs"):
            check_number(key, getattr(self, key), low=1, high=MAX_STEPS, **whole)
        check_number("max_length", self.max_length, low=1, high=MAX_TOKENS, **whole)
        check_number("dev_queries", self.dev_queries, low=1, high=MAX_QUESTIONS, **whole)
        check_number("dev_candidates", self.dev_candidates, low=2, high=MAX_LIST, **whole)
        check_number("drop_lower", self.drop_lower, low=0, high=MAX_LAYERS, **whole)
        check_number("seed", self.seed, low=0, high=2**32 - 1, **whole)
        if self.max_steps is not None:
            check_number("max_steps", self.max_steps, low=1, high=MAX_STEPS, **whole)
        for key in ("eval_steps", "patience"):  # evaluations are at most the steps
            if getattr(self, key) is not None:
                check_number(key, getattr(self, key), low=1, high=MAX_STEPS, **whole)
        if self.memory_budget is not None:  # bytes: more than there is only means a plain step
            check_number("memory_budget", self.memory_budget, low=1, **whole)
        for key in ("lr", "transfer_lr", "weight_decay", "margin"):
            if getattr(self, key) is not None:
                check_number(key, getattr(self, key), low=0, error=ZooError)
        if self.attention_dropout is not None:
            check_number("attention_dropout", self.attention_dropout, low=0, high=1,
                         high_open=True, error=ZooError)  # fmt: skip

    @property
    def learning_rate(self) -> float:
        """The (adapt) learning rate: ``lr`` or the encoder's and mode's default
        (:mod:`adapter_zoo.training.rates`)."""
        return float(self.lr if self.lr is not None else default_lr(self.encoder, self.mode))

    @property
    def layout(self) -> str:
        """How the entry stores its weights (:mod:`adapter_zoo.zoo.layouts`): the layout of
        the encoder's mode in :data:`adapter_zoo.modes.MODE_TABLE`."""
        return training_row(self.encoder, self.mode).layout

    @property
    def trained_pair_kinds(self) -> tuple[str, ...]:
        """Pair kinds trained on (``extended`` adds title-answer and duplicate pairs)."""
        if not self.extended:
            return self.pair_kinds
        return tuple(dict.fromkeys(self.pair_kinds + ("title_answer", "duplicates")))

    def to_dict(self) -> dict:
        """JSON-ready fields (used in the card and to match checkpoints)."""
        record = dataclasses.asdict(self)
        for key in ("overwrite", "restart", "memory_budget"):
            record.pop(key)
        if record["attention_dropout"] is None:  # the base's own: cards as they always were
            record.pop("attention_dropout")
        return {k: list(v) if isinstance(v, tuple) else v for k, v in record.items()}


def default_encoder(base_model: str) -> str:
    """``bi`` for a sentence-encoder base (mean pooling: all-MiniLM-L6-v2), else ``cross``."""
    return "bi" if mean_pooling_base(resolve_base_model(base_model)) else "cross"
