"""``pretrain(config)``: a cross-encoder's continued pre-training on a corpus's documents.

The run is one :class:`~adapter_zoo.training.trainer.Phase` on the project's trainer
(``CrossEncoderTrainer`` with :class:`~adapter_zoo.training.trainer.ZooTrainer`'s
checkpoints, resumed after a crash, the entry written atomically at the end). The model is
the base with a new adapter (or every weight training, ``full``) and two heads of the
``adapters`` library: ``objective``, a one-logit classification head on the pair's first
token, and ``mlm``, its masked-language-model head (a transform, then the word embeddings as
the decoder, tied: all-MiniLM-L6-v2 ships no MLM head). A step masks its pairs' tokens with
transformers' ``DataCollatorForLanguageModeling`` and runs the model once; the loss is the
binary cross-entropy of the objective's labels plus the MLM cross-entropy of the masked
tokens, at equal weight (the MLM loss alone for the ``mlm`` control).

Dev lists are the objective's own examples from held-out documents (the positive first):
their MAP under the objective's head is the run's progress, recorded in the card's log; the
run keeps its last step, as the paper does. The entry is an ordinary cross-encoder entry of
``mode`` (``cross-adapter`` or ``cross-full``) whose ranking head is the one ``train`` gives
the base (the pair-cosine head of a sentence encoder, new; a CLS head elsewhere, started from
the objective's head, which has its shape), so ``train --init-from NAME`` continues an
adapter entry and ``evaluate --finetune tanda --transfer NAME`` fine-tunes either.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import random
import time
from pathlib import Path

import datasets
import torch
import torch.nn.functional as F
from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
from transformers import DataCollatorForLanguageModeling, set_seed

from adapter_zoo.documents import read_documents
from adapter_zoo.errors import ZooError
from adapter_zoo.losses.cross import CrossEncoderLoss
from adapter_zoo.objectives import build_examples
from adapter_zoo.precision import cast_frozen_for_training, training_precision
from adapter_zoo.ranker import Ranker
from adapter_zoo.ranker.cross_encoder import as_cross_encoder
from adapter_zoo.ranker.inputs import check_max_length
from adapter_zoo.ranker.model import HEAD_ACTIVATION, HEAD_LAYERS, add_ranking_head, build_model
from adapter_zoo.ranker.probe import PROBE_FIELD, pair_probe_record
from adapter_zoo.ranker.ranker import encode_pairs
from adapter_zoo.training.checkpoint import checkpoint_dir, open_run_folder, remove_run_folder
from adapter_zoo.training.cross import _planned_batches
from adapter_zoo.training.models import base_config, module_name, write_entry_weights
from adapter_zoo.training.pretrain_config import PretrainConfig, sampled_objectives
from adapter_zoo.training.selection import DevListsEvaluator
from adapter_zoo.training.trainer import (
    TRAINING_LOG_FILE,
    Phase,
    ZooTrainer,
    new_trainer,
    run_phases,
)
from adapter_zoo.zoo.domain import MAX_TEXTS, domain_card, domain_centroid, write_centroid
from adapter_zoo.zoo.layouts import base_config as config_fields
from adapter_zoo.zoo.store import check_zoo_writable, entry_lock, entry_path, read_card, save_entry

log = logging.getLogger(__name__)

OBJECTIVE_HEAD = "objective"
MLM_HEAD = "mlm"
DEV_SHARE = 0.1  # documents held out for them (a corpus of at least MIN_DEV_DOCUMENTS)
MIN_DEV_DOCUMENTS = 10
EVALUATIONS = 2  # dev evaluations (and checkpoints) per run, besides the start


def pretrain(config: PretrainConfig) -> Path:
    """Pre-train ``config``'s cross-encoder on its corpus and write its zoo entry; return it.

    The corpus is read, the objective's examples built and the base's limits checked before
    any model loads; a crashed run resumes from its last checkpoint when started again with
    the same config; started again after its entry was written, it returns the entry.

    Example:
        >>> pretrain(PretrainConfig(objective="ssp", corpus="docs.jsonl", name="docs-ssp"))
        ... # doctest: +SKIP
        PosixPath('.../adapter-zoo/docs-ssp')

    Raises:
        ZooError: the entry exists holding another run (without ``overwrite``), the corpus
            cannot be read or gives no examples, ``max_length`` does not fit the base.
    """
    final = entry_path(config.name)
    with entry_lock(final):
        if final.exists() and not config.overwrite:
            if _same_run(final, config):
                return final
            raise ZooError(f"zoo entry {config.name!r} already exists at {final}; use --overwrite")
        check_zoo_writable(checkpoint_dir(config.name).parent)
        check_max_length(config.max_length, base_config(config.base_model), model=config.base_model)
        precision = training_precision(config.precision, trains_base=config.layout == "full")
        corpus = read_documents(config.corpus)
        train_corpus, dev_corpus = _held_out(corpus, config.seed)
        dev = _dev_lists(dev_corpus or train_corpus, config)
        passes = _passes(train_corpus, config)
        return _train(config, corpus, passes, dev, precision)


def _same_run(final: Path, config: PretrainConfig) -> bool:
    try:
        card = read_card(final)
    except (ZooError, OSError):
        return False
    if (card.get("pretraining") or {}).get("config") != json.loads(json.dumps(config.to_dict())):
        return False
    remove_run_folder(checkpoint_dir(config.name))
    log.info("zoo entry %r at %s already holds this pretraining run; nothing to do "
             "(--overwrite trains it again)", config.name, final)  # fmt: skip
    return True


def _held_out(corpus, seed: int):
    """(training corpus, dev corpus): a seeded ``DEV_SHARE`` of the documents, by id, held
    out for the dev lists; a corpus of fewer than ``MIN_DEV_DOCUMENTS`` holds none out (its
    dev lists are then drawn from the training examples, and the card says so)."""
    documents = corpus.documents
    if len(documents) < MIN_DEV_DOCUMENTS:
        return corpus, None

    def held(document) -> bool:
        digest = hashlib.sha256(f"{seed}:{document.id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < DEV_SHARE

    dev = tuple(d for d in documents if held(d))
    if len(dev) < 2:  # another document's negatives need two
        return corpus, None
    train = tuple(d for d in documents if not held(d))
    return _subset(corpus, train, "train"), _subset(corpus, dev, "dev")


def _subset(corpus, documents, part: str):
    # a Corpus holds its documents and what was found (``about``); the part is a new one
    return type(corpus)(documents=documents, about={**corpus.about, "part": part})


def _examples(corpus, config: PretrainConfig, seed: int) -> list:
    """The examples of ``config``'s objectives on ``corpus``, interleaved by a seeded shuffle."""
    examples = []
    for name in sampled_objectives(config.objective):
        examples += build_examples(name, corpus, seed=seed)
    random.Random(seed).shuffle(examples)
    return examples


def _dev_lists(corpus, config: PretrainConfig) -> list[tuple[str, list[str]]]:
    examples = _examples(corpus, config, config.seed + 10_000)
    lists = [(e.anchor, [e.positive, *e.negatives]) for e in examples if e.negatives]
    if not lists:
        raise ZooError(
            f"{config.corpus}: the {config.objective} objective finds no example with a "
            "negative in it (too few documents, paragraphs or sentences)"
        )
    return lists[: config.dev_lists]


def _passes(corpus, config: PretrainConfig) -> list[list]:
    """The examples of each pass over the corpus the run's steps need, drawn anew each pass
    (seed + pass): other spans, other negatives."""
    first = _examples(corpus, config, config.seed)
    if not first:
        raise ZooError(f"{config.corpus}: the {config.objective} objective finds no example")
    per_pass = max(1, len(first) // config.batch_size)
    passes = [first]
    while per_pass * len(passes) < config.max_steps:
        passes.append(_examples(corpus, config, config.seed + len(passes)) or first)
    return passes


def _plan(passes: list[list], config: PretrainConfig):
    """The run's pairs as one dataset (anchor, text, label) and its batches, each the pairs
    of ``batch_size`` examples; ``max_steps`` of them."""
    columns = {"anchor": [], "text": [], "label": []}
    batches = []
    for examples in passes:
        for start in range(0, len(examples) - config.batch_size + 1, config.batch_size):
            first = len(columns["label"])
            for example in examples[start : start + config.batch_size]:
                for text, label in [(example.positive, 1.0)] + [
                    (n, 0.0) for n in example.negatives
                ]:
                    columns["anchor"].append(example.anchor)
                    columns["text"].append(text)
                    columns["label"].append(label)
            batches.append(range(first, len(columns["label"])))
            if len(batches) == config.max_steps:
                break
        if len(batches) == config.max_steps:
            break
    if not batches:  # fewer examples than one batch: the whole pass is the batch
        return _plan(passes, dataclasses.replace(config, batch_size=len(passes[0])))
    per_pass = max(1, len(passes[0]) // config.batch_size)
    return datasets.Dataset.from_dict(columns), batches, per_pass


def setup_pretraining(config: PretrainConfig, precision: str):
    """The base with its trainable part (an adapter named after the entry, or every weight)
    and the two heads, ``objective`` active (dev lists are scored with it); the MLM head's
    decoder is the word embeddings (tied), trained only where they train (``full``).

    Returns:
        (model, tokenizer, adapter name or None)
    """
    # adapters on first use: importing the training package stays light
    from adapters import SeqBnConfig

    model, tokenizer = build_model(config.base_model)
    name = module_name(config.name)
    model.add_classification_head(OBJECTIVE_HEAD, num_labels=1, layers=HEAD_LAYERS,
                                  activation_function=HEAD_ACTIVATION)  # fmt: skip
    model.add_masked_lm_head(MLM_HEAD)
    model.tie_weights()
    adapter = None
    if config.layout == "adapter":
        adapter = name
        model.add_adapter(name, config=SeqBnConfig(reduction_factor=config.reduction_factor))
        model.train_adapter(name)  # freezes the encoder and the embeddings; heads train
    if (
        model.heads[MLM_HEAD].get_output_embeddings().weight
        is not model.get_input_embeddings().weight
    ):
        raise ZooError(f"{config.base_model}: its MLM head cannot be tied to its word embeddings")
    model.active_head = OBJECTIVE_HEAD
    model.train()
    cast_frozen_for_training(model, precision)
    return model, tokenizer, adapter


class ObjectiveMLMLoss(CrossEncoderLoss):
    """The paper's pre-training loss over a batch of (anchor, text) pairs with 0/1 labels:
    BCE of the ``objective`` head's logit plus the MLM cross-entropy of the masked tokens of
    the same forward pass (equal weight); ``objective=False``: the MLM loss alone.

    Each call's two parts are kept (``parts``) for the training log.
    """

    def __init__(
        self, model, tokenizer, max_length: int, *, objective: bool, mlm_probability: float
    ):
        super().__init__(model)
        self.tokenizer, self.max_length, self.objective = tokenizer, max_length, objective
        self.collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=mlm_probability)
        self.special = torch.tensor(sorted(set(tokenizer.all_special_ids)))
        self.parts = {"objective_loss": [], "mlm_loss": []}

    def forward(self, inputs, labels, **kwargs):
        adapters_model = self.model[0].model
        batch = dict(encode_pairs(self.tokenizer, inputs[0], inputs[1], self.max_length))
        batch = {k: v.to(self.model.device) for k, v in batch.items()}
        ids = batch["input_ids"]
        special = torch.isin(ids, self.special.to(ids.device))
        masked, targets = self.collator.torch_mask_tokens(ids.clone(), special_tokens_mask=special)
        batch["input_ids"] = masked
        out = adapters_model(**batch, output_hidden_states=True)
        hidden = out.hidden_states[-1]
        chosen = targets != -100
        # the MLM head on the masked positions only: the vocabulary's logits of every token
        # of every pair would be most of a step's memory
        head_out = adapters_model.heads[MLM_HEAD]((hidden[chosen].unsqueeze(0),))
        vocab = head_out[0] if isinstance(head_out, tuple) else head_out.logits
        mlm = F.cross_entropy(vocab[0].float(), targets[chosen])
        binary = F.binary_cross_entropy_with_logits(
            out.logits.view(-1).float(), labels.float().view(-1)
        )
        self.parts["objective_loss"].append(float(binary.detach()))
        self.parts["mlm_loss"].append(float(mlm.detach()))
        return binary + mlm if self.objective else mlm

    def get_config_dict(self) -> dict:
        return {"objective": self.objective, "mlm_probability": self.collator.mlm_probability}


def _train(config: PretrainConfig, corpus, passes, dev, precision: str) -> Path:
    dataset, batches, per_pass = _plan(passes, config)
    steps = len(batches)
    eval_steps = max(1, steps // EVALUATIONS)
    phase = Phase("pretrain", config.learning_rate, steps, per_pass, eval_steps=eval_steps,
                  warmup=steps // 10, selects=False, start="start")  # fmt: skip
    set_seed(config.seed)  # the new adapter's and heads' weights, the masks
    model, tokenizer, adapter = setup_pretraining(config, precision)
    folder = open_run_folder(config)
    made = []

    def make_trainer(phase, arguments, callbacks):
        trainer = _trainer(config, model, tokenizer, phase, dataset, batches, dev, arguments,
                           callbacks)  # fmt: skip
        made.append(trainer)
        return trainer

    started = time.perf_counter()
    trained = run_phases(config, model, [phase], folder, make_trainer)
    seconds = time.perf_counter() - started
    history = made[-1].state.log_history if made else []
    losses = [{k: r[k] for k in ("step", "loss", "objective_loss", "mlm_loss", "learning_rate")
               if k in r} for r in history if "loss" in r]  # fmt: skip
    head_start = _entry_head(model, config)
    card = _card(config, corpus, model, trained, dev, dataset, losses, head_start, precision,
                 seconds, adapter)  # fmt: skip
    return _write(config, model, tokenizer, adapter, card, trained.log, folder, passes)


def _trainer(config, model, tokenizer, phase, dataset, batches, dev, arguments, callbacks):
    cross = as_cross_encoder(model, tokenizer, config.max_length)
    loss = ObjectiveMLMLoss(cross, tokenizer, config.max_length,
                            objective=config.trains_objective,
                            mlm_probability=config.mlm_probability)  # fmt: skip

    class Trainer(ZooTrainer, CrossEncoderTrainer):
        def log(self, logs, *args, **kwargs):
            if "loss" in logs:  # the two parts since the last record, beside their sum
                for key, values in loss.parts.items():
                    if values:
                        logs[key] = round(sum(values) / len(values), 4)
                    values.clear()
            super().log(logs, *args, **kwargs)

    ranker = Ranker(model, tokenizer, base_model=config.base_model,
                    max_length=config.max_length, device=cross.device)  # fmt: skip
    args = CrossEncoderTrainingArguments(
        **arguments,
        per_device_train_batch_size=max(len(b) for b in batches),
        batch_sampler=_planned_batches(batches),
    )
    return new_trainer(Trainer, model=cross, args=args, train_dataset=dataset, loss=loss,
                       evaluator=DevListsEvaluator(ranker, dev), callbacks=callbacks)  # fmt: skip


def _entry_head(model, config: PretrainConfig) -> str:
    """Give the model the ranking head ``train`` gives the base, named after the entry, and
    drop the pre-training heads; return where the ranking head started: ``objective`` (a CLS
    head of the objective head's shape starts from its weights) or ``new``."""
    name = module_name(config.name)
    add_ranking_head(model, name)
    start = "new"
    head, objective = model.heads[name], model.heads[OBJECTIVE_HEAD]
    shapes = {k: v.shape for k, v in head.state_dict().items()}
    if shapes == {k: v.shape for k, v in objective.state_dict().items()}:
        head.load_state_dict(objective.state_dict())
        start = OBJECTIVE_HEAD
    for extra in (OBJECTIVE_HEAD, MLM_HEAD):
        model.delete_head(extra)
    model.active_head = name
    return start


def _card(config, corpus, model, trained, dev, dataset, losses, head_start, precision, seconds,
          adapter) -> dict:  # fmt: skip
    start = next((r for r in trained.log if r["step"] == 0), None)
    end = trained.log[-1] if trained.log else None
    card = {
        "mode": config.mode,
        "encoder": "cross",
        "layout": config.layout,
        "base_model": config.base_model,
        "base_config": config_fields(model.config),
        "forums": [],
        "pairs": {"pretraining": {"train": len(dataset)}},
        "training": {
            "steps": trained.steps,
            "learning_rate": config.learning_rate,
            "precision": precision,
            "log": trained.log,
        },  # fmt: skip
        "pretraining": {
            "config": config.to_dict(),
            "objective": config.objective,
            "objectives": list(sampled_objectives(config.objective)),
            "steps": trained.steps,
            "seconds": round(seconds, 1),
            "corpus": {"source": config.corpus, "about": corpus.about},
            "pairs": len(dataset),
            "dev_lists": len(dev),
            "dev_start": start and {k: start[k] for k in ("dev_map", "dev_p@1")},
            "dev_end": end and {k: end[k] for k in ("dev_map", "dev_p@1")},
            "losses": losses,
            "mlm_head": "new, decoder tied to the word embeddings",
            "ranking_head": head_start,
        },
        "seed": config.seed,
        "scores": {},
        "max_length": config.max_length,
        "head": module_name(config.name),
    }
    if adapter is not None:
        record = model.adapters_config.get(adapter).to_dict()
        card.update({"method": "seqbn", "adapter_config": record})
    return card


def _write(config, model, tokenizer, adapter, card, records, folder, passes) -> Path:
    """The entry (weights, card, training log, the corpus's domain centroid) atomically."""
    texts = sorted({e.anchor for e in passes[0]})
    centroid = domain_centroid(texts, max_texts=MAX_TEXTS, seed=config.seed)
    card["domain"] = domain_card(min(MAX_TEXTS, len(texts)))
    if adapter is not None:  # what loading checks the entry's adapter by
        card[PROBE_FIELD] = pair_probe_record(model, tokenizer)
    setup = {"adapter": adapter, "head": module_name(config.name)}

    def writer(target: Path) -> None:
        write_entry_weights(model, tokenizer, config, setup, target)
        lines = "".join(json.dumps(record) + "\n" for record in records)
        (target / TRAINING_LOG_FILE).write_text(lines, encoding="utf-8")
        write_centroid(target, centroid)

    path = save_entry(writer, config.name, card, overwrite=config.overwrite)
    remove_run_folder(folder)
    return path
