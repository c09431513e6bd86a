"""Training bi-encoder entries with sentence-transformers' trainer and in-batch negatives.

Every mode of :class:`~adapter_zoo.training.TrainingConfig` works: ``adapter`` (one SeqBn
adapter), ``full`` (the peer: every weight trains), ``multitask`` (one adapter, forums in
round-robin batches, MultiCQA), ``fusion`` (AdapterFusion over bi-encoder adapter entries) and
``tanda`` (full fine-tuning on transfer forums, then on the target forum).

The loss is MultipleNegativesRankingLoss: each query against its positive, the other positives
of the batch, and with ``hard_negatives`` one answer of a BM25-similar question. A step that
would not fit the run's memory budget recomputes activations in backward, and past that runs
the loss through GradCache (:mod:`adapter_zoo.training.memory`).
The run is scored on the forum's dev lists (:mod:`adapter_zoo.training.dev`) before the first
step and every ``eval_steps``; the entry keeps the best state. Adapters start as the identity
(zero up-projection), so the step-0 state is the base itself and a bi-encoder entry is never
worse than its base on dev.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
import warnings
from pathlib import Path

import numpy as np

from adapter_zoo.biencoder.encoder import BiEncoder, build_sentence_model, transformer_of
from adapter_zoo.biencoder.layouts import write_bi_adapter, write_bi_full, write_bi_fusion
from adapter_zoo.errors import ZooError
from adapter_zoo.training.dev import forum_dev_lists
from adapter_zoo.training.objective import dev_metrics
from adapter_zoo.training.trainer import (
    TRAINING_LOG_FILE,
    load_tensors,
    resume_point,
    save_tensors,
    trainable_tensors,
)

log = logging.getLogger(__name__)

EVALUATIONS = 6  # dev evaluations per run when eval_steps is not given (plus step 0)
BEST_FILE = "best.safetensors"
BEST_STATE = "best.json"


def pair_dataset(tables, *, hard_negatives: bool, seed: int):
    """One forum's training pairs as a ``datasets.Dataset`` (anchor, positive[, negative])."""
    import datasets

    rng = np.random.default_rng(seed)
    columns: dict[str, list[str]] = {"anchor": [], "positive": []}
    if hard_negatives:
        columns["negative"] = []
    for table in tables:
        columns["anchor"] += table.queries
        columns["positive"] += table.positives
        if hard_negatives:
            width = table.neighbours.shape[1]
            if width == 0:
                raise ZooError(f"forum {table.forum}: {table.kind} needs 2 pairs for negatives")
            picks = table.neighbours[np.arange(len(table)), rng.integers(0, width, len(table))]
            columns["negative"] += [table.positives[j] for j in picks]
    return datasets.Dataset.from_dict(columns)


def _setup(config, hosts):
    """The SentenceTransformer of ``config.mode`` with its trainable parts, and setup names."""
    from adapter_zoo.training.models import (
        check_drop_lower,
        freeze_lower_layers,
        fusion_adapters,
        module_name,
        new_adapter_config,
        starting_adapter,
    )
    from adapter_zoo.zoo.layouts import check_base

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
    from adapters.composition import Fuse

    from adapter_zoo.registry import kind_for_card

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


class _Selection:
    """Dev MAP of the run's states: the base (step 0) and every evaluation; keeps the best."""

    def __init__(self, encoder: BiEncoder, dev, log: list, *, length: int, keep_start=True):
        self.encoder, self.dev, self.log = encoder, dev, log
        self.keep_start = keep_start
        # Dev is scored at the entry's inference length, whatever length training truncates
        # to: all-MiniLM-L6-v2 scores beer's dev lists 0.847 at 256 tokens but 0.777 at 128.
        self.length = length
        self.best: dict | None = None
        self.best_state: dict | None = None
        self.base: dict | None = None

    def measure(self) -> dict:
        """Dev metrics of the model as it is now, recorded nowhere."""
        model = self.encoder.model
        was_training = model.training
        train_length = self.encoder.max_length
        model.eval()
        started = time.perf_counter()
        self.encoder.max_length = self.length
        try:
            metrics = dev_metrics(self.encoder, self.dev)
        finally:
            self.encoder.max_length = train_length
            model.train(was_training)
        return {**metrics, "seconds": round(time.perf_counter() - started, 2)}

    def measure_base(self, transformer) -> None:
        """Score the base with every adapter off: the zero-shot model a continued adapter
        (``init_from``) is compared with, though the entry cannot hold that state."""
        active = transformer.active_adapters
        transformer.set_active_adapters(None)
        try:
            self.base = {k: v for k, v in self.measure().items() if k.startswith("dev_")}
        finally:
            transformer.set_active_adapters(active)

    def evaluate(self, step: int, phase: str) -> dict:
        measured = self.measure()
        metrics = {k: v for k, v in measured.items() if k != "seconds"}
        record = {"phase": phase, "step": step, **measured}
        self.log.append(record)
        log.info("%s", json.dumps(record))
        if self.base is None:
            self.base = metrics
        if step == 0 and not self.keep_start:
            return metrics
        if self.best is None or metrics.get("dev_map", -1) > self.best.get("dev_map", -1):
            self.best = {"step": step, "phase": phase, **metrics}
            trainable = trainable_tensors(self.encoder.model)
            self.best_state = {n: p.detach().cpu().clone() for n, p in trainable.items()}
        return metrics

    def save(self, folder: Path) -> None:
        from stackexchange.io import atomic_write_json

        if self.best_state is not None:
            save_tensors(self.best_state, folder / BEST_FILE)
        atomic_write_json(
            folder / BEST_STATE, {"best": self.best, "base": self.base, "log": self.log}
        )

    def restore(self, folder: Path) -> None:
        from safetensors.torch import load_file

        try:
            state = json.loads((folder / BEST_STATE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise ZooError(
                f"{folder / BEST_STATE}: missing or damaged checkpoint file; rerun with --restart"
            ) from None
        self.best, self.base = state["best"], state["base"]
        self.log[:] = state["log"]
        if (folder / BEST_FILE).exists():
            self.best_state = load_file(str(folder / BEST_FILE))


def memory_plan(config, transformer):
    """The run's :class:`~adapter_zoo.training.memory.MemoryPlan` and the loss it runs: a
    step encodes each anchor, positive (and hard negative) of ``batch_size`` examples."""
    from adapter_zoo.losses.registry import GRADCACHE_TWINS
    from adapter_zoo.training.memory import plan_memory

    texts = config.batch_size * (3 if config.hard_negatives else 2)
    plan = plan_memory(
        transformer.config, texts=texts, length=config.max_length, budget=config.memory_budget
    )
    loss = GRADCACHE_TWINS.get(config.loss, config.loss) if plan.bounded else config.loss
    return plan, loss


def _trainer(
    config, model, train_set, *, loss, lr, steps, output_dir, selection, phase, eval_steps
):
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from transformers import TrainerCallback

    from adapter_zoo.losses import build_loss
    from adapter_zoo.training.batches import length_grouped_sampling
    from adapter_zoo.training.trainer import TrainableCheckpoints, use_cpu, use_logged_progress

    class Trainer(TrainableCheckpoints, SentenceTransformerTrainer):
        pass

    class DevSelection(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step % eval_steps == 0 or state.global_step == state.max_steps:
                selection.evaluate(state.global_step, phase)
            return control

        def on_save(self, args, state, control, **kwargs):
            selection.save(Path(args.output_dir) / f"checkpoint-{state.global_step}")
            return control

    callbacks = [] if selection is None else [DevSelection()]

    args = SentenceTransformerTrainingArguments(
        output_dir=str(output_dir),
        max_steps=steps,
        per_device_train_batch_size=config.batch_size,
        learning_rate=lr,
        weight_decay=config.weight_decay,
        warmup_ratio=0.1,
        lr_scheduler_type="linear",
        save_strategy="steps",
        save_steps=eval_steps,
        save_total_limit=1,
        logging_steps=max(1, eval_steps),
        report_to=[],
        seed=config.seed,
        data_seed=config.seed,
        **length_grouped_sampling(model, config.seed),
        use_cpu=use_cpu(),
        disable_tqdm=False,
        dataloader_num_workers=0,
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Trainer.tokenizer.*")
        trainer = Trainer(
            model=model,
            args=args,
            train_dataset=train_set,
            loss=build_loss(loss, "bi", model),
            callbacks=callbacks,
        )
    use_logged_progress(trainer)
    return trainer


def _steps(config, train_sets: dict) -> int:
    """Optimizer steps of a phase: ``max_steps`` or ``epochs`` passes (round-robin batches
    stop when the smallest forum runs out, as sentence-transformers' round-robin sampler)."""
    if config.max_steps is not None:
        return config.max_steps
    sizes = [math.ceil(len(d) / config.batch_size) for d in train_sets.values()]
    per_epoch = len(sizes) * min(sizes) if len(sizes) > 1 else sizes[0]
    return max(1, config.epochs * per_epoch)


def _run_phase(config, model, train_sets, *, loss, lr, folder, selection, phase):
    steps = _steps(config, train_sets)
    eval_steps = config.eval_steps or max(1, steps // EVALUATIONS)
    train_set = train_sets if len(train_sets) > 1 else next(iter(train_sets.values()))
    trainer = _trainer(
        config,
        model,
        train_set,
        loss=loss,
        lr=lr,
        steps=steps,
        output_dir=folder,
        selection=selection,
        phase=phase,
        eval_steps=eval_steps,
    )
    last = resume_point(folder)
    if last is not None and selection is not None:
        selection.restore(Path(last))
    trainer.train(resume_from_checkpoint=last)
    return steps


def train_bi_encoder(config, hosts: list[str]) -> Path:
    """Train the bi-encoder entry of ``config`` on the parsed forums ``hosts`` (checked by
    :func:`adapter_zoo.training.train`) and write it atomically; return its folder.

    A crashed run resumes from its last checkpoint (``<zoo>/.checkpoints/<name>``) when
    started again with the same config; ``restart`` starts over.
    """
    from adapter_zoo.training.data import load_pairs, resolve_forums, with_neighbours
    from adapter_zoo.training.models import bound_activation_memory
    from adapter_zoo.training.trainer import last_checkpoint, open_run_folder
    from adapter_zoo.zoo.store import save_entry

    def datasets_for(data, names):
        sets, counts = {}, {}
        for host in names:
            tables = load_pairs(data, host, config.kinds, "train")
            if config.hard_negatives:
                with_neighbours(tables)
            if not sum(len(t) for t in tables):
                raise ZooError(
                    f"{Path(data) / host}: empty training set (no {', '.join(config.kinds)} "
                    "pairs in split 'train')"
                )
            sets[host] = pair_dataset(
                tables, hard_negatives=config.hard_negatives, seed=config.seed
            )
            counts[host] = {"train": {t.kind: len(t) for t in tables}}
        return sets, counts

    train_sets, pair_counts = datasets_for(config.data, hosts)
    dev = forum_dev_lists(config.data, hosts)
    if not dev:
        raise ZooError(
            f"{config.data}: no answered dev question in {', '.join(hosts)} to select on"
        )
    from transformers import set_seed

    set_seed(config.seed)  # the adapter's initial down-projection comes from the global RNG
    model, setup = _setup(config, hosts)
    plan, run_loss = memory_plan(config, transformer_of(model))
    if plan.recompute:
        bound_activation_memory(transformer_of(model))
    logging.getLogger(__name__).debug("memory: %s, loss %s", json.dumps(plan.to_card()), run_loss)
    # Training may truncate shorter to go faster; the entry ranks at the base's own length
    # (all-MiniLM-L6-v2's is lengths.BI_MAX_LENGTH), or at the training length when longer.
    inference_length = max(model.max_seq_length or 0, config.max_length)
    encoder = BiEncoder(model, base_model=config.base_model, max_length=config.max_length)
    log: list = []
    selection = _Selection(encoder, dev, log, length=inference_length, keep_start=config.keep_start)
    folder = open_run_folder(config)
    if last_checkpoint(folder / "train") is None:
        if config.init_from:
            selection.measure_base(transformer_of(model))
        selection.evaluate(0, "start" if config.init_from else "base")

    steps = 0
    model.train()
    if config.mode == "tanda":
        transfer_hosts = resolve_forums(config.transfer_data, config.transfer_forums)
        transfer_sets, _ = datasets_for(config.transfer_data, transfer_hosts)
        done = folder / "transfer-done.safetensors"
        if done.exists():
            load_tensors(model, done)
        else:
            steps += _run_phase(
                config, model, transfer_sets, loss=run_loss, lr=config.transfer_lr,
                folder=folder / "transfer", selection=None, phase="transfer",
            )  # fmt: skip
            save_tensors(trainable_tensors(model), done)
    steps += _run_phase(
        config, model, train_sets, loss=run_loss, lr=config.learning_rate,
        folder=folder / "train", selection=selection, phase="train",
    )  # fmt: skip
    model.load_state_dict(selection.best_state, strict=False)
    model.eval()
    inference_length, by_length = _choose_length(selection, model, inference_length)
    card = _card(config, hosts, pair_counts, selection, setup, steps, len(dev), model)
    card["max_length"] = inference_length
    card["training"]["memory"] = {**plan.to_card(), "loss": run_loss}
    if by_length:
        card["scores"] = by_length[inference_length]
        card["dev_map_by_length"] = {str(n): m["dev_map"] for n, m in by_length.items()}
    # at the base's own length: a longer limit alone (chosen above) is no gain of training
    trained = selection.best["dev_map"]
    if trained <= card["base_scores"]["dev_map"]:
        warnings.warn(
            f"adapter-zoo train: {config.name!r} does not beat its base on dev "
            f"(MAP {trained:.4f} vs base {card['base_scores']['dev_map']:.4f}); "
            "the entry keeps the best state seen",
            stacklevel=2,
        )

    def writer(target: Path) -> None:
        if config.layout == "full":
            write_bi_full(model, target)
        elif config.layout == "adapter":
            write_bi_adapter(model, setup["adapter"], target)
        else:
            write_bi_fusion(model, setup["adapters"], target)
        lines = "".join(json.dumps(r) + "\n" for r in selection.log)
        (target / TRAINING_LOG_FILE).write_text(lines, encoding="utf-8")

    from adapter_zoo.zoo.domain import with_domain

    writer = with_domain(writer, card, config.data, hosts)
    path = save_entry(writer, config.name, card, overwrite=config.overwrite)
    shutil.rmtree(folder, ignore_errors=True)
    return path


def _choose_length(selection: _Selection, model, length: int) -> tuple[int, dict]:
    """The entry's inference length, chosen on dev: ``length`` (the base's own, where the
    steps were compared) or the longest the base reads (512 for all-MiniLM-L6-v2).

    Forum answers run long: benchmarks/perf/quality.py's length table has beer's adapter at
    dev MAP 0.870 with 512 tokens against 0.845 with 256 (test 0.924 against 0.910), while
    the zero-shot base gains less. Encoding up to twice the tokens costs up to twice the
    time, so the longer limit is kept only when dev says so.

    Returns:
        (the chosen length, {length: dev metrics}; empty when the base reads no further).
    """
    # BERT-family position tables end at 512 (RoBERTa's 514 hold 2 offset slots); the
    # tokenizer's own limit is sentence-transformers' max_seq_length, so not read here
    positions = getattr(transformer_of(model).config, "max_position_embeddings", None) or length
    limit = min(positions, 512)
    if limit <= length:
        return length, {}
    measured = {length: {k: v for k, v in selection.best.items() if k.startswith("dev_")}}
    selection.length = limit
    longer = selection.measure()
    measured[limit] = {k: v for k, v in longer.items() if k.startswith("dev_")}
    selection.log.append({"phase": "length", "step": selection.best["step"],
                          "max_length": limit, **longer})  # fmt: skip
    chosen = limit if measured[limit]["dev_map"] > measured[length]["dev_map"] else length
    return chosen, measured


def _card(config, hosts, pair_counts, selection, setup, steps, dev_size, model) -> dict:
    from adapter_zoo.zoo.layouts import base_config

    card = {
        "kind": config.mode,
        "encoder": "bi",
        "layout": config.layout,
        "base_model": config.base_model,
        "base_config": base_config(transformer_of(model).config),  # checked at load
        "forums": hosts,
        "pairs": pair_counts,
        "training": {
            **config.to_dict(),
            "learning_rate": config.learning_rate,
            "loss": config.loss,
            "steps": steps,
            "best_step": selection.best["step"],
            "dev_lists": dev_size,
            "log": selection.log,
        },
        "seed": config.seed,
        "scores": {k: v for k, v in selection.best.items() if k.startswith("dev_")},
        "base_scores": dict(selection.base),
    }
    from adapter_zoo.training.models import adapter_card, card_sources

    if "adapter" in setup:
        card.update(adapter_card(transformer_of(model), setup["adapter"]))
    card.update(card_sources(config, setup))
    if config.init_from:
        start = next(r for r in selection.log if r["phase"] == "start")
        card["init_from"] = {
            "entry": config.init_from,
            "scores": {k: v for k, v in start.items() if k.startswith("dev_")},
        }
    return card
