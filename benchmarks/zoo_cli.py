"""Sub-commands ``cascade-train``, ``cascade-eval``, ``sweep`` and ``recommend`` of ``adapter-zoo``:
the zoo's models trained on or scored against benchmarks.

Heavy libraries (torch, transformers) are imported inside the command functions.
"""

from __future__ import annotations

import json


def register(subparsers) -> None:
    from adapter_zoo.lengths import CROSS_MAX_LENGTH
    from adapter_zoo.precision import add_precision_option
    from stackexchange.numbers import (
        MAX_QUESTIONS,
        batch_int,
        layer_int,
        list_int,
        max_length_int,
        non_negative_float,
        number_option,
        question_int,
        seed_int,
        step_int,
    )
    from stackexchange.paths import folder_option, path_option

    alpha_float = number_option(low=0, high=1, high_open=True)  # a drop ratio
    train = subparsers.add_parser(
        "cascade-train", help="train a Cascade Transformer ranker and save it as a zoo entry"
    )
    source = train.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--data", type=path_option, help="a parse output folder (DIR or DIR/<host>)"
    )
    source.add_argument("--benchmark", help="registry name or local:PATH (its train split)")
    train.add_argument(
        "--data-dir", type=path_option, default=None, help="folder holding the benchmark files"
    )
    train.add_argument("--name", required=True, help="zoo entry name (written in the zoo home)")
    train.add_argument("--base", default="minilm-l6", help="base model: minilm-l6, bert-base, ...")
    train.add_argument(
        "--exits",
        type=layer_int,
        nargs="+",
        default=None,
        metavar="LAYER",
        help="1-based exit layers (default 2 4 6 for 6 layers, 4..12 for 12)",
    )
    train.add_argument(
        "--adapter",
        action="store_true",
        help="train one seq_bn adapter (frozen encoder) instead of everything",
    )
    train.add_argument(
        "--alpha", type=alpha_float, default=0.3, help="default drop ratio of the entry"
    )
    train.add_argument("--max-steps", type=step_int, default=None)
    train.add_argument("--epochs", type=step_int, default=1)
    train.add_argument("--batch-size", type=batch_int, default=32)
    train.add_argument("--lr", type=non_negative_float, default=None)
    train.add_argument("--max-length", type=max_length_int, default=CROSS_MAX_LENGTH)
    train.add_argument(
        "--negatives", type=list_int, default=3, help="random negatives per positive"
    )
    train.add_argument("--seed", type=seed_int, default=0)
    train.add_argument("--overwrite", action="store_true")
    train.set_defaults(func=run_cascade_train)

    evaluate = subparsers.add_parser(
        "cascade-eval", help="score a cascade entry on a benchmark at several drop ratios"
    )
    evaluate.add_argument("--model", required=True, help="cascade zoo name or entry folder")
    evaluate.add_argument("--benchmark", required=True, help="registry name or local:PATH")
    evaluate.add_argument("--alpha", type=alpha_float, nargs="+", default=[0.0, 0.3], metavar="A")
    evaluate.add_argument("--split", default="test")
    evaluate.add_argument("--data-dir", type=path_option, default=None)
    evaluate.add_argument(
        "--results", type=folder_option, default=None, help="folder of results.jsonl to append to"
    )
    evaluate.add_argument("--batch-size", type=batch_int, default=64)
    evaluate.set_defaults(func=run_cascade_eval)

    sweep = subparsers.add_parser(
        "sweep", help="score a benchmark with many zoo adapters in one shared pass"
    )
    sweep.add_argument("--benchmark", required=True, help="registry name or local:PATH")
    sweep.add_argument("--adapters", nargs="+", required=True, metavar="NAME")
    sweep.add_argument("--base", default=None, help="base model (default: the adapters' cards)")
    sweep.add_argument("--split", default="test")
    sweep.add_argument("--data-dir", type=path_option, default=None)
    sweep.add_argument(
        "--results", type=folder_option, default=None, help="folder of results.jsonl to append to"
    )
    sweep.add_argument("--batch-size", type=batch_int, default=64)
    sweep.add_argument(
        "--max-length", type=max_length_int, default=None,
        help="token limit per pair for every adapter (default: each entry's own)",
    )  # fmt: skip
    add_precision_option(sweep)
    sweep.set_defaults(func=run_sweep)

    recommend = subparsers.add_parser(
        "recommend", help="rank zoo adapters for a target from its questions (and a dev sample)"
    )
    recommend.add_argument(
        "--target", required=True, help="a parse output folder, a benchmark name or local:PATH"
    )
    recommend.add_argument("--adapters", nargs="+", required=True, metavar="NAME")
    recommend.add_argument(
        "--dev-sample",
        type=number_option(integer=True, low=0, high=MAX_QUESTIONS),
        default=0,
        metavar="N",
        help="also probe-score N labelled queries (benchmark targets)",
    )
    recommend.add_argument("--split", default="test", help="split whose questions are embedded")
    recommend.add_argument(
        "--dev-split", default=None, help="split the probe samples from (default: --split)"
    )
    recommend.add_argument(
        "--max-length", type=max_length_int, default=None,
        help="probe: tokens per pair (default: each entry's own)",
    )  # fmt: skip
    recommend.add_argument("--data-dir", type=path_option, default=None)
    recommend.add_argument(
        "--questions",
        type=question_int,
        default=500,
        help="at most this many target questions are embedded",
    )
    recommend.add_argument("--seed", type=seed_int, default=0)
    recommend.set_defaults(func=run_recommend)


def run_cascade_train(args) -> int:
    from adapter_zoo.cascade.train import train_entry
    from benchmarks.cascade import train_on_benchmark

    options = dict(
        base=args.base,
        exits=args.exits,
        adapter=args.adapter,
        alpha=args.alpha,
        max_steps=args.max_steps,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        max_length=args.max_length,
        seed=args.seed,
        overwrite=args.overwrite,
    )
    if args.data is not None:
        path = train_entry(args.name, data=args.data, negatives=args.negatives, **options)
    else:
        path = train_on_benchmark(
            args.name, args.benchmark, data_dir=args.data_dir, negatives=args.negatives,
            **options,
        )  # fmt: skip
    print(path)
    return 0


def run_cascade_eval(args) -> int:
    from benchmarks.cascade import evaluate_cascade

    records = evaluate_cascade(
        args.model,
        args.benchmark,
        args.alpha,
        split=args.split,
        data_dir=args.data_dir,
        results=args.results,
        batch_size=args.batch_size,
        progress=True,
    )
    _print_records(
        records,
        args.results,
        lambda r: f"{r['model']} alpha={r['alpha']} compute={r['relative_compute']:.3f}",
    )
    return 0


def run_sweep(args) -> int:
    from benchmarks.sweep import sweep_benchmark

    records = sweep_benchmark(
        args.benchmark,
        args.adapters,
        base_model=args.base,
        split=args.split,
        data_dir=args.data_dir,
        results=args.results,
        batch_size=args.batch_size,
        max_length=args.max_length,
        progress=True,
        precision=args.precision,
    )
    # a cross-encoder adapter shares the pass (its record's model is the base), any other
    # model (a bi-encoder entry, sbert:, a composition) is scored on its own
    _print_records(records, args.results, lambda r: (r["adapters"] or [r["model"]])[0])
    return 0


def _print_records(records: list[dict], results, describe) -> None:
    """One line per record; the records themselves as JSON when no --results keeps them."""
    for record in records:
        metrics = " ".join(f"{k}={v:.4f}" for k, v in record["metrics"].items())
        print(f"{record['benchmark']}/{record['split']} {describe(record)} {metrics}")
    if results is None:
        print(json.dumps(records, indent=2))


def run_recommend(args) -> int:
    from benchmarks.recommend import recommend

    ranking = recommend(
        args.target,
        args.adapters,
        dev_sample=args.dev_sample,
        split=args.split,
        dev_split=args.dev_split,
        data_dir=args.data_dir,
        max_questions=args.questions,
        max_length=args.max_length,
        seed=args.seed,
    )
    for rank, row in enumerate(ranking, start=1):
        probe = f" probe={row['probe']:.4f}" if row.get("probe") is not None else ""
        print(f"{rank:>3}. {row['adapter']}  similarity={row['similarity']:.4f}{probe}")
    return 0
