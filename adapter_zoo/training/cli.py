"""``adapter-zoo train``: the command-line face of :func:`adapter_zoo.training.train`."""

from __future__ import annotations

import argparse
import os

from adapter_zoo.errors import ZooError
from adapter_zoo.lengths import BI_MAX_LENGTH, CROSS_MAX_LENGTH
from adapter_zoo.losses import default_loss, loss_names
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.precision import add_precision_option
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.config import ENCODERS, METHODS, MODES, PAIR_KINDS
from adapter_zoo.training.memory import parse_budget
from adapter_zoo.training.pretrain_config import (
    DEFAULT_PRETRAIN_STEPS,
    PRETRAIN_MODES,
    PretrainConfig,
)
from stackexchange.numbers import (
    MAX_LAYERS,
    batch_int,
    list_int,
    max_length_int,
    non_negative_float,
    number_option,
    seed_int,
    step_int,
    width_int,
)
from stackexchange.paths import path_option


def register(subparsers) -> None:
    register_train(subparsers)
    register_pretrain(subparsers)


def register_train(subparsers) -> None:
    p = subparsers.add_parser(
        "train",
        help="train a ranker into the zoo",
        description="Train a ranker on a parse output folder and store it in the zoo. "
        "Runs unchanged under `accelerate launch -m adapter_zoo train ...`.",
    )
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument(
        "--encoder",
        choices=ENCODERS,
        default=None,
        help="bi: sentence embeddings + cosine (sentence-transformers); cross: the pair read "
        "jointly (the papers' model). Default: bi for sentence-encoder bases such as "
        "minilm-l6, cross for BERT/RoBERTa",
    )
    p.add_argument(
        "--data", required=True, type=path_option,
        help="parse output folder (adapter-zoo parse --out)",
    )  # fmt: skip
    p.add_argument(
        "--forums",
        nargs="+",
        required=True,
        help="forum names (beer or beer.stackexchange.com) or a catalog set: "
        "balanced, largest, or all (every forum parsed in --data)",
    )
    p.add_argument("--name", required=True, help="name of the zoo entry to write")
    p.add_argument("--base", default=DEFAULT_BASE, help=f"base model (default: {DEFAULT_BASE})")
    p.add_argument("--epochs", type=step_int, default=3)
    p.add_argument("--max-steps", type=step_int, default=None)
    p.add_argument("--batch-size", type=batch_int, default=32)
    p.add_argument(
        "--max-length",
        type=max_length_int,
        default=None,
        help=f"default: {BI_MAX_LENGTH} (bi), {CROSS_MAX_LENGTH} (cross)",
    )
    p.add_argument(
        "--eval-steps",
        type=step_int,
        default=None,
        help="bi: score the dev split every N steps and keep the best (default: 6 per run)",
    )
    p.add_argument(
        "--lr", type=non_negative_float, default=None, help="default: the mode's paper setting"
    )
    p.add_argument(
        "--loss",
        default=None,
        help=f"cross: {', '.join(loss_names('cross'))} (default {default_loss('cross')}); "
        f"bi: {', '.join(loss_names('bi'))} (default {default_loss('bi')})",
    )
    p.add_argument("--negatives", type=list_int, default=1, help="negatives per positive")
    p.add_argument(
        "--hard-negatives",
        action="store_true",
        help="negatives from the answers of BM25-similar queries instead of random ones",
    )
    p.add_argument(
        "--pairs",
        nargs="+",
        choices=PAIR_KINDS,
        default=None,
        help="pair kinds to train on (question_answer: title + body -> accepted answer); "
        "default: question_answer title_body (bi), title_body (cross)",
    )
    p.add_argument("--extended", action="store_true", help="add title-answer and duplicate pairs")
    p.add_argument("--adapters", nargs="+", default=[], help="zoo adapters to fuse (fusion)")
    p.add_argument(
        "--init-from",
        default=None,
        metavar="ENTRY",
        help="adapter/multitask: continue this zoo adapter entry (same encoder and base) on "
        "--forums instead of starting a new adapter (TANDA's adapt step for adapters)",
    )
    p.add_argument(
        "--drop-lower",
        type=number_option(integer=True, low=0, high=MAX_LAYERS),
        default=0,
        metavar="K",
        help="AdapterDrop: no adapter in the lowest K layers (faster training and sweeps; "
        "full/tanda: those layers and the embeddings are frozen; fusion: taken from the "
        "fused adapters). Default 0",
    )
    p.add_argument(
        "--method",
        choices=METHODS,
        default=None,
        help="adapter/multitask: seqbn (bottleneck adapter, the papers') or lora (low-rank "
        "updates of attention query/value; exports merged as a plain model). Default: seqbn, "
        "or the --init-from entry's",
    )
    p.add_argument("--lora-r", type=width_int, default=8, help="lora: rank (default 8)")
    p.add_argument(
        "--lora-alpha", type=width_int, default=16, help="lora: scaling alpha (default 16)"
    )
    p.add_argument(
        "--transfer-data", type=path_option, default=None,
        help="tanda: transfer parse output folder",
    )  # fmt: skip
    p.add_argument(
        "--transfer-forums",
        nargs="+",
        default=[],
        help="tanda: transfer forums (default: all in --transfer-data)",
    )
    p.add_argument("--transfer-lr", type=non_negative_float, default=2e-5)
    p.add_argument("--patience", type=step_int, default=None, help="early stopping on dev MAP")
    p.add_argument("--seed", type=seed_int, default=42)
    p.add_argument(
        "--memory-budget",
        type=memory_size,
        default=None,
        help="memory a training step's activations may take, e.g. 8GB (default: half of what "
        "is available, times the process's share of the cores); GradCache, chunked backward "
        "and recomputed activations only past it",
    )
    add_precision_option(p)
    p.add_argument("--overwrite", action="store_true", help="replace an existing zoo entry")
    p.add_argument(
        "--restart",
        action="store_true",
        help="discard this run's checkpoint (e.g. a corrupt one) and start from step 0",
    )
    p.set_defaults(func=run_train)


def register_pretrain(subparsers) -> None:
    p = subparsers.add_parser(
        "pretrain",
        help="continue pre-training a cross-encoder on documents (SSP, SP, PSD + MLM)",
        description="Continue pre-training a cross-encoder on a corpus of documents, as Di "
        "Liello et al. (EMNLP 2022): the objective's (A, B) pairs classified by a binary head "
        "on the first token, plus MLM on the same inputs at equal weight; writes a zoo entry "
        "that `train --init-from` (adapter) and `evaluate --finetune tanda --transfer` "
        "fine-tune.",
    )
    p.add_argument(
        "--objective",
        required=True,
        help="ssp, sp, psd (the paper's), another registered objective, all (ssp+sp+psd) "
        "or mlm (the MLM-only control on the pairs all samples)",
    )
    p.add_argument(
        "--corpus", required=True, type=path_option,
        help="documents: a folder of .txt/.md/.html files, a JSONL of {title, text}, a text "
        "file of one passage a line, or a parse output folder",
    )  # fmt: skip
    p.add_argument("--name", required=True, help="name of the zoo entry to write")
    p.add_argument("--mode", choices=PRETRAIN_MODES, default="adapter",
                   help="adapter (a new adapter; the base frozen) or full (every weight)")  # fmt: skip
    p.add_argument("--base", default=DEFAULT_BASE, help=f"base model (default: {DEFAULT_BASE})")
    p.add_argument(
        "--max-steps", type=step_int, default=DEFAULT_PRETRAIN_STEPS,
        help=f"optimizer steps (default {DEFAULT_PRETRAIN_STEPS})",
    )  # fmt: skip
    p.add_argument(
        "--batch-size", type=batch_int, default=8,
        help="examples per step, each its positive and its negatives (default 8)",
    )  # fmt: skip
    p.add_argument(
        "--max-length", type=max_length_int, default=CROSS_MAX_LENGTH,
        help=f"tokens per pair (default {CROSS_MAX_LENGTH})",
    )  # fmt: skip
    p.add_argument(
        "--lr", type=non_negative_float, default=None, help="default: the mode's cross-encoder rate"
    )
    p.add_argument("--seed", type=seed_int, default=42)
    add_precision_option(p)
    p.add_argument("--overwrite", action="store_true", help="replace an existing zoo entry")
    p.add_argument(
        "--restart",
        action="store_true",
        help="discard this run's checkpoint (e.g. a corrupt one) and start from step 0",
    )
    p.set_defaults(func=run_pretrain)


def run_pretrain(args) -> int:
    config = PretrainConfig(
        objective=args.objective,
        corpus=args.corpus,
        name=args.name,
        mode=args.mode,
        base_model=args.base,
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        max_length=args.max_length,
        lr=args.lr,
        seed=args.seed,
        precision=args.precision,
        overwrite=args.overwrite,
        restart=args.restart,
    )
    # heavy: training.pretrain loads torch, transformers, sentence-transformers when imported
    from adapter_zoo.training.pretrain import pretrain

    path = pretrain(config)
    print(f"adapter-zoo pretrain: wrote zoo entry {config.name!r} at {path}")
    return 0


def memory_size(text: str) -> int:
    """argparse's type for ``--memory-budget`` (its error names the option and the value)."""
    try:
        return parse_budget(text)
    except ZooError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run_train(args) -> int:
    config = TrainingConfig(
        mode=args.mode,
        data=args.data,
        forums=tuple(args.forums),
        name=args.name,
        base_model=args.base,
        epochs=args.epochs,
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        max_length=args.max_length,
        lr=args.lr,
        loss=args.loss,
        negatives=args.negatives,
        hard_negatives=args.hard_negatives,
        pair_kinds=tuple(args.pairs) if args.pairs else None,
        encoder=args.encoder,
        eval_steps=args.eval_steps,
        extended=args.extended,
        adapters=tuple(args.adapters),
        init_from=args.init_from,
        drop_lower=args.drop_lower,
        method=args.method,
        lora_r=args.lora_r,
        lora_alpha=args.lora_alpha,
        transfer_data=args.transfer_data,
        transfer_forums=tuple(args.transfer_forums),
        transfer_lr=args.transfer_lr,
        patience=args.patience,
        seed=args.seed,
        precision=args.precision,
        memory_budget=args.memory_budget,
        overwrite=args.overwrite,
        restart=args.restart,
    )
    path = train(config)
    if int(os.environ.get("RANK", "0")) == 0:  # one line, also under accelerate launch
        print(f"adapter-zoo train: wrote zoo entry {config.name!r} at {path}")
    return 0
