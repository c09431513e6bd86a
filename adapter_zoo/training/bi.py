"""Training bi-encoder entries with sentence-transformers' trainer and in-batch negatives.

Every mode of :class:`~adapter_zoo.training.TrainingConfig` works: ``adapter`` (one SeqBn
adapter), ``full`` (the peer: every weight trains), ``multitask`` (one adapter, forums in
round-robin batches, MultiCQA), ``fusion`` (AdapterFusion over bi-encoder adapter entries) and
``tanda`` (full fine-tuning on transfer forums, then on the target forum).

The loss is MultipleNegativesRankingLoss: each query against its positive, the other positives
of the batch, and with ``hard_negatives`` one answer of a BM25-similar question (GISTEmbedLoss
also masks the negatives the base rates above the positive). A step that
would not fit the run's memory budget recomputes activations in backward, and past that runs
the loss through GradCache (:mod:`adapter_zoo.training.memory`).

What is this encoder's own: the pair datasets and sentence-transformers' samplers, the loss,
the model, dev lists made like the held-out benchmarks, scored at the entry's inference length,
every ``eval_steps`` and before the first step, and the inference length chosen on dev after
training. Adapters start as the identity (zero up-projection), so the step-0 state is the base
itself; it competes with the steps' checkpoints, and a bi-encoder entry is never worse than its
start on dev. Phases, selection and the card's common fields are the shared runner's
(:mod:`adapter_zoo.training.trainer`); the run folder, checkpoints and resuming are
:mod:`adapter_zoo.training.checkpoint`'s.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import time
import warnings
from pathlib import Path

import datasets
import numpy as np
import torch
from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
from torch.utils.data import DataLoader
from transformers import set_seed

from adapter_zoo.biencoder.encoder import BiEncoder, build_sentence_model, transformer_of
from adapter_zoo.biencoder.layouts import write_bi_adapter, write_bi_full, write_bi_fusion
from adapter_zoo.biencoder.probe import PROBE_FIELD, probe_record
from adapter_zoo.errors import ZooError, ZooWarning
from adapter_zoo.losses.registry import BM25_MARGIN_LOSSES, GRADCACHE_TWINS, GUIDED_LOSSES
from adapter_zoo.precision import cast_frozen_for_training
from adapter_zoo.ranker.model import adapters_off
from adapter_zoo.registry import kind_for_card
from adapter_zoo.training.batches import length_grouped_sampling
from adapter_zoo.training.checkpoint import open_run_folder
from adapter_zoo.training.data import bm25_margins, load_pairs, resolve_forums, with_neighbours
from adapter_zoo.training.memory import keeps_attention_matrices, plan_memory
from adapter_zoo.training.models import (
    check_drop_lower,
    freeze_lower_layers,
    fusion_adapters,
    module_name,
    new_adapter_config,
    set_attention_dropout,
    starting_adapter,
)
from adapter_zoo.training.prefix_cache import PrefixCache
from adapter_zoo.training.selection import DevListsEvaluator, dev_scores, forum_dev_lists
from adapter_zoo.training.trainer import (
    Phase,
    ZooTrainer,
    entry_card,
    new_trainer,
    run_phases,
    write_entry,
)
from adapter_zoo.zoo.layouts import check_base

log = logging.getLogger(__name__)

EVALUATIONS = 6  # dev evaluations per phase when eval_steps is not given (plus step 0)
WARMUP_SHARE = 0.1  # of a phase's steps


def pair_dataset(tables, *, hard_negatives: bool, seed: int, bm25_labels: bool = False):
    """One forum's training pairs as a ``datasets.Dataset`` (anchor, positive[, negative]),
    with ``bm25_labels`` a ``label`` column too: each negative's :func:`bm25_margins`.

    A table's own negatives (``PairTable.negatives``) stand in for mined ones where a row
    has one, unless ``bm25_labels`` (a margin is a mined negative's, by its row)."""
    rng = np.random.default_rng(seed)
    columns: dict[str, list] = {"anchor": [], "positive": []}
    if hard_negatives:
        columns["negative"] = []
    if bm25_labels:
        columns["label"] = []
    for table in tables:
        columns["anchor"] += table.queries
        columns["positive"] += table.positives
        if hard_negatives:
            width = table.neighbours.shape[1]
            if width == 0:
                raise ZooError(
                    f"forum {table.forum}: {table.pair_kind} needs 2 pairs for negatives"
                )
            picks = table.neighbours[np.arange(len(table)), rng.integers(0, width, len(table))]
            mined = [table.positives[j] for j in picks]
            if table.negatives is not None and not bm25_labels:
                mined = [own or other for own, other in zip(table.negatives, mined, strict=True)]
            columns["negative"] += mined
            if bm25_labels:
                columns["label"] += bm25_margins(table, picks).tolist()
    return datasets.Dataset.from_dict(columns)


def trainable_model(config, hosts):
    """The SentenceTransformer of ``config.mode`` with its trainable parts and the run's
    attention dropout, and setup names: what the run and its timed step
    (:mod:`adapter_zoo.training.probe`) both train, so the step is priced as the run steps."""
    model, setup = _layout_model(config)
    set_attention_dropout(transformer_of(model), config.attention_dropout)
    return model, setup


def _layout_model(config):
    """The SentenceTransformer of ``config.layout`` with its trainable parts, and setup names."""
    if config.layout == "full":
        model = build_sentence_model(config.base_model, with_adapters=False, device="cpu")
        freeze_lower_layers(transformer_of(model), config.drop_lower)
        return model, {}
    model = build_sentence_model(config.base_model, device="cpu")
    transformer = transformer_of(model)
    check_drop_lower(config.drop_lower, transformer.config.num_hidden_layers, config.base_model)
    if config.layout == "adapter" and config.init_from:
        name = module_name(config.name)
        path, card = starting_adapter(config)
        check_base(transformer, path, card, config.base_model)
        transformer.load_adapter(str(path), load_as=name, use_safetensors=True)
        transformer.train_adapter(name)
        return model, {"adapter": name}
    if config.layout == "adapter":
        name = module_name(config.name)
        transformer.add_adapter(name, config=new_adapter_config(config, init_weights="mam_adapter"))
        transformer.train_adapter(name)
        return model, {"adapter": name}
    # adapters on first use: importing this module does not load it
    from adapters.composition import Fuse

    names = []
    for module, path, card in fusion_adapters(config):
        if kind_for_card(card).encoder != "bi":
            raise ZooError(f"{path}: {card['name']!r} is a cross-encoder adapter; fuse bi-encoders")
        check_base(transformer, path, card, config.base_model)
        transformer.load_adapter(str(path), load_as=module, use_safetensors=True)
        names.append(module)
    fuse = Fuse(*names)
    transformer.add_adapter_fusion(fuse, config=config.fusion_config)
    transformer.train_adapter_fusion(fuse)
    return model, {"adapters": names}


def memory_plan(config, transformer):
    """The run's :class:`~adapter_zoo.training.memory.MemoryPlan` and the loss it runs: a
    step encodes each anchor, positive (and hard negative) of ``batch_size`` examples."""
    texts = config.batch_size * (3 if config.hard_negatives else 2)
    plan = plan_memory(
        transformer.config,
        texts=texts,
        length=config.max_length,
        budget=config.memory_budget,
        attention_matrices=keeps_attention_matrices(transformer.config, config.attention_dropout),
    )
    loss = GRADCACHE_TWINS.get(config.loss, config.loss) if plan.bounded else config.loss
    return plan, loss


class _AtLength:
    """The bi-encoder being trained as a dev scorer at a fixed length, whatever length
    training truncates to: all-MiniLM-L6-v2 scores beer's dev lists 0.847 at 256 tokens but
    0.777 at 128, so the steps are compared at the entry's inference length."""

    def __init__(self, encoder: BiEncoder, length: int):
        self.encoder, self.length = encoder, length

    @property
    def model(self):
        return self.encoder.model

    def score(self, pairs, **options):
        train_length = self.encoder.max_length
        self.encoder.max_length = self.length
        try:
            return self.encoder.score(pairs, **options)
        finally:
            self.encoder.max_length = train_length


def frozen_base(config):
    """The base itself, frozen and without adapters: what guides a guided loss and mines
    hard negatives."""
    base = build_sentence_model(config.base_model, with_adapters=False, device="cpu")
    base.eval().requires_grad_(False)
    return base


def negative_miner(config):
    """The encoder that mines hard negatives (``negative_miner="base"``): the
    :func:`frozen_base` at the training length (texts -> unit-length rows); None for BM25's."""
    if not config.hard_negatives or config.negative_miner != "base":
        return None
    encoder = BiEncoder(
        frozen_base(config), base_model=config.base_model, max_length=config.max_length
    )
    # each text is embedded once a run: a forum's title_body and title_answer pairs share their
    # titles (where two kinds share few texts, mining still costs minutes of a short run:
    # docs/results.md, the own run's variants)
    seen: dict[str, np.ndarray] = {}

    def embed(texts):
        new = [t for t in dict.fromkeys(texts) if t not in seen]
        log.info("mining hard negatives: the base embeds %d new of %d texts", len(new), len(texts))
        if new:
            seen.update(zip(new, encoder.encode(new)))
        return np.stack([seen[t] for t in texts])

    return embed


def training_sets(config, data, hosts: list[str]) -> tuple[dict, dict]:
    """Each forum's training pairs as a dataset, and the card's pair counts."""
    sets, counts = {}, {}
    embed = negative_miner(config)
    for host in hosts:
        tables = load_pairs(data, host, config.trained_pair_kinds, "train")
        if config.hard_negatives:
            with_neighbours(tables, embed)
        if not sum(len(t) for t in tables):
            raise ZooError(
                f"{Path(data) / host}: empty training set (no {', '.join(config.trained_pair_kinds)} "
                "pairs in split 'train')"
            )
        sets[host] = pair_dataset(
            tables,
            hard_negatives=config.hard_negatives,
            seed=config.seed,
            bm25_labels=config.loss in BM25_MARGIN_LOSSES,
        )
        counts[host] = {"train": {t.pair_kind: len(t) for t in tables}}
    return sets, counts


def _phase(config, name: str, train_sets: dict, lr: float, *, selects: bool,
           start: str | None, competes: bool = False) -> Phase:  # fmt: skip
    """A phase of ``max_steps`` or ``epochs`` passes (round-robin batches stop when the
    smallest forum runs out, as sentence-transformers' round-robin sampler), scored on dev
    at its start (unless ``start`` is None) and every ``eval_steps`` (six times when not
    given)."""
    sizes = [math.ceil(len(d) / config.batch_size) for d in train_sets.values()]
    per_epoch = len(sizes) * min(sizes) if len(sizes) > 1 else sizes[0]
    steps = config.max_steps if config.max_steps is not None else max(1, config.epochs * per_epoch)
    return Phase(
        name, lr, steps, per_epoch,
        eval_steps=config.eval_steps or max(1, steps // EVALUATIONS),
        warmup=math.ceil(steps * WARMUP_SHARE),
        selects=selects,
        data=train_sets if len(train_sets) > 1 else next(iter(train_sets.values())),
        patience=config.patience if selects else None,
        start=start,
        start_competes=competes,
    )  # fmt: skip


def guide_model(config, loss: str):
    """The guide of a guided loss (:data:`~adapter_zoo.losses.registry.GUIDED_LOSSES`): the
    :func:`frozen_base` (None for any other loss)."""
    if loss not in GUIDED_LOSSES:
        return None
    return frozen_base(config)


def _trainer(config, model, phase: Phase, loss: str, evaluator, arguments, callbacks, guide=None):
    """``phase``'s ``SentenceTransformerTrainer``: its pair datasets in batches of texts of
    similar length without duplicate texts, one forum per batch in round-robin
    (:mod:`adapter_zoo.training.batches`), the loss ``loss``."""
    # looked up per call: tests monkeypatch losses.build_loss
    from adapter_zoo.losses import build_loss

    class Trainer(ZooTrainer, SentenceTransformerTrainer):
        def get_eval_dataloader(self, eval_dataset=None):
            # The dev lists are the evaluator's. The library's empty loader draws a seed from
            # torch's generator at every evaluation, which would move the dropout of every
            # later step; a bi-encoder's steps have never depended on how often dev is scored.
            return DataLoader([], generator=torch.Generator())

    args = SentenceTransformerTrainingArguments(
        **arguments,
        per_device_train_batch_size=config.batch_size,
        **length_grouped_sampling(model, config.seed),
    )
    return new_trainer(
        Trainer,
        model=model,
        args=args,
        train_dataset=phase.data,
        loss=build_loss(loss, "bi", model, **({"guide": guide} if guide is not None else {})),
        evaluator=evaluator,
        callbacks=callbacks,
    )


def _base_scores(evaluator: DevListsEvaluator, transformer) -> dict:
    """Dev scores of the base with every adapter off: the zero-shot model a continued
    adapter (``init_from``) is compared with, though the entry cannot hold that state."""
    with adapters_off(transformer):
        return evaluator(evaluator.scorer.model)


def train_bi_encoder(config, hosts: list[str]) -> Path:
    """Train the bi-encoder entry of ``config`` on the parsed forums ``hosts`` (checked by
    :func:`adapter_zoo.training.train`) and write it atomically; return its folder.

    A crashed run resumes from its last checkpoint (``<zoo>/.checkpoints/<name>``) when
    started again with the same config; ``restart`` starts over.
    """
    # looked up per call: tests monkeypatch training.models.bound_activation_memory
    from adapter_zoo.training.models import apply_memory_plan

    train_sets, pair_counts = training_sets(config, config.data, hosts)
    dev = forum_dev_lists(config.data, hosts, queries=config.dev_queries)
    if not dev:
        raise ZooError(
            f"{config.data}: no answered dev question in {', '.join(hosts)} to select on"
        )
    set_seed(config.seed)  # the adapter's initial down-projection comes from the global RNG
    model, setup = trainable_model(config, hosts)
    cast_frozen_for_training(model, config.precision)  # before any step or dev score
    plan, run_loss = memory_plan(config, transformer_of(model))
    apply_memory_plan(transformer_of(model), plan)
    log.debug("memory: %s, loss %s", json.dumps(plan.to_card()), run_loss)
    # Training may truncate shorter to go faster; the entry ranks at the base's own length
    # (all-MiniLM-L6-v2's is lengths.BI_MAX_LENGTH), or at the training length when longer.
    inference_length = max(model.max_seq_length or 0, config.max_length)
    encoder = BiEncoder(model, base_model=config.base_model, max_length=config.max_length)
    scorer = _AtLength(encoder, inference_length)
    evaluator = DevListsEvaluator(scorer, dev)
    # a start that cannot be kept (adapt's candidates, each compared with the base on lists
    # of its own) is not scored: the base's or the continued entry's score again, one
    # selection scoring of the few a short budget affords
    scores_start = config.keep_start
    continued = config.init_from and scores_start
    base = _base_scores(evaluator, transformer_of(model)) if continued else None
    phases = []
    if config.mode == "tanda":
        transfer_hosts = resolve_forums(config.transfer_data, config.transfer_forums)
        transfer_sets, _ = training_sets(config, config.transfer_data, transfer_hosts)
        phases.append(_phase(config, "transfer", transfer_sets, config.transfer_lr,
                             selects=False, start="base"))  # fmt: skip
    # the selecting phase's start: the base, or the entry continued, or TANDA's transfer
    start = "start" if phases or config.init_from else "base"
    phases.append(_phase(config, "train", train_sets, config.learning_rate, selects=True,
                         start=start if scores_start else None,
                         competes=config.keep_start))  # fmt: skip

    guide = guide_model(config, run_loss)

    def make_trainer(phase, arguments, callbacks):
        return _trainer(config, model, phase, run_loss, evaluator, arguments, callbacks, guide)

    folder = open_run_folder(config)
    cache = run_prefix_cache(config, transformer_of(model))
    with cache.installed() if cache else contextlib.nullcontext():
        model.train()
        trained = run_phases(config, model, phases, folder, make_trainer)
        model.eval()
        if base is None and scores_start:
            base = dev_scores(next(r for r in trained.log if r["phase"] == "base"))
        inference_length, by_length = _choose_length(evaluator, trained, model)
    memory = {**plan.to_card(), "loss": run_loss}
    if cache:
        memory["prefix_cache"] = cache.record()
    card = entry_card(config, hosts=hosts, pairs=pair_counts, transformer=transformer_of(model),
                      setup=setup, trained=trained, dev_lists=len(dev),
                      memory=memory)  # fmt: skip
    card["base_scores"] = base
    card["max_length"] = inference_length
    if config.layout != "full":  # what loading checks the entry's adapters by
        card[PROBE_FIELD] = probe_record(model)
    if by_length:
        card["scores"] = by_length[inference_length]
        card["dev_map_by_length"] = {str(n): m["dev_map"] for n, m in by_length.items()}
    if config.init_from and scores_start:
        card["init_from"]["scores"] = dev_scores(next(r for r in trained.log
                                                      if r["phase"] == "start"))  # fmt: skip
    # at the base's own length: a longer limit alone (chosen above) is no gain of training
    if base is not None and trained.best["dev_map"] <= base["dev_map"]:
        warnings.warn(
            f"{config.name!r} does not beat its base on dev "
            f"(MAP {trained.best['dev_map']:.4f} vs base {base['dev_map']:.4f}); "
            "the entry keeps the best state seen",
            ZooWarning,
            stacklevel=2,
        )

    def write_weights(target: Path) -> None:
        if config.layout == "full":
            write_bi_full(model, target)
        elif config.layout == "adapter":
            write_bi_adapter(model, setup["adapter"], target)
        else:
            write_bi_fusion(model, setup["adapters"], target)

    return write_entry(config, hosts, card, trained.log, folder, write_weights)


def run_prefix_cache(config, transformer):
    """The run's :class:`~adapter_zoo.training.prefix_cache.PrefixCache` of the layers below
    its adapter (None: adapters in every layer, a fusion, or a fully trained model): every text the
    run reads again (each evaluation's selection lists, the in-batch loss's no-grad pass,
    a later epoch) runs only the layers above them."""
    # a fusion's layers below its adapters still hold its fusion layers, which train
    if config.layout != "adapter" or not config.drop_lower:
        return None
    return PrefixCache(transformer, config.drop_lower)


def _choose_length(evaluator: DevListsEvaluator, trained, model) -> tuple[int, dict]:
    """The entry's inference length, chosen on dev: the scorer's (the base's own, where the
    steps were compared) or the longest the base reads (512 for all-MiniLM-L6-v2); the
    measurement at the longer length is added to ``trained.log``.

    Forum answers run long: benchmarks/studies/quality.py's length table has beer's adapter at
    dev MAP 0.870 with 512 tokens against 0.845 with 256 (test 0.924 against 0.910), while
    the zero-shot base gains less. Encoding up to twice the tokens costs up to twice the
    time, so the longer limit is kept only when dev says so.

    Returns:
        (the chosen length, {length: dev metrics}; empty when the base reads no further).
    """
    length = evaluator.scorer.length
    # BERT-family position tables end at 512 (RoBERTa's 514 hold 2 offset slots); the
    # tokenizer's own limit is sentence-transformers' max_seq_length, so not read here
    positions = getattr(transformer_of(model).config, "max_position_embeddings", None) or length
    limit = min(positions, 512)
    if limit <= length:
        return length, {}
    measured = {length: dev_scores(trained.best)}
    evaluator.scorer.length = limit
    started = time.perf_counter()
    measured[limit] = evaluator(model)
    seconds = round(time.perf_counter() - started, 2)
    trained.log.append({"phase": "length", "step": trained.best["step"], "max_length": limit,
                        "dev_seconds": seconds, **measured[limit]})  # fmt: skip
    chosen = limit if measured[limit]["dev_map"] > measured[length]["dev_map"] else length
    return chosen, measured
