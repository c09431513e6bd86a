"""Sub-commands ``evaluate``, ``leaderboard`` and ``build-benchmark`` of ``adapter-zoo``."""

from __future__ import annotations

import json

from stackexchange.lists import BENCHMARK_FILE


def register(subparsers) -> None:
    from stackexchange.numbers import (
        MAX_LIST,
        max_length_int,
        number_option,
        seed_int,
        step_int,
    )
    from stackexchange.paths import folder_option, output_folder_option, path_option

    # a list needs a positive and at least one other candidate
    candidates_int = number_option(integer=True, low=2, high=MAX_LIST)
    evaluate = subparsers.add_parser(
        "evaluate", help="score a model on a benchmark and append the result to --results"
    )
    evaluate.add_argument(
        "--model",
        required=True,
        nargs="+",
        metavar="MODEL",
        help="bm25, tfidf, sbert:<base> (zero-shot bi-encoder, e.g. sbert:minilm-l6), "
        "base:<base> (untrained base, seeded head), a zoo name or entry path; with --finetune "
        "a base model (minilm-l6, bert-base, a model folder). Several: one record each, each "
        "model scored once (a score fusion reuses the scores of its members named before it)",
    )
    evaluate.add_argument(
        "--adapter",
        nargs="+",
        default=[],
        metavar="NAME",
        help="zoo adapters on top of --model; several = one run each (sweep)",
    )
    evaluate.add_argument(
        "--benchmark",
        required=True,
        help="registry name, local:PATH (a built set) or beir:PATH (a folder in BEIR's layout: "
        "retrieval over its corpus)",
    )
    evaluate.add_argument("--split", default="test")
    evaluate.add_argument(
        "--data-dir", type=path_option, default=None, help="folder holding the benchmark files"
    )
    evaluate.add_argument(
        "--results", type=folder_option, default=None, help="folder of results.jsonl to append to"
    )
    evaluate.add_argument("--finetune", choices=("full", "adapter", "tanda"), default=None)
    evaluate.add_argument(
        "--transfer",
        default=None,
        metavar="MODEL",
        help="--finetune tanda: the transfer model to adapt (default --model)",
    )
    evaluate.add_argument(
        "--save-as",
        default=None,
        metavar="NAME",
        help="--finetune: zoo name of the fine-tuned model (default <benchmark>-<mode>-<base>-s<seed>)",
    )
    evaluate.add_argument(
        "--encoder", choices=("bi", "cross"), default=None,
        help="--finetune: what to train (default: bi for sentence-encoder bases such as "
        "minilm-l6, cross for BERT/RoBERTa; a continued adapter keeps its own)",
    )  # fmt: skip
    evaluate.add_argument(
        "--overwrite", action="store_true",
        help="--finetune: replace an existing zoo entry of the fine-tuned model's name",
    )  # fmt: skip
    evaluate.add_argument("--max-steps", type=step_int, default=None)
    evaluate.add_argument(
        "--max-length",
        type=max_length_int,
        default=None,
        help="token limit: a cross-encoder's per pair, a bi-encoder's (sbert: included) per "
        "text (default: the entry's own; 300 for base:, the model's own for sbert:)",
    )
    evaluate.add_argument("--seed", type=seed_int, default=0)
    evaluate.add_argument(
        "--no-build", dest="build", action="store_false",
        help="refuse a forum name that is neither in the zoo nor on the Hub instead of "
        "building its entry from the forum's dump",
    )  # fmt: skip
    from adapter_zoo.precision import add_precision_option

    add_precision_option(evaluate, scoring=True)
    evaluate.set_defaults(func=run_evaluate)

    board = subparsers.add_parser("leaderboard", help="tables and plots from a results folder")
    board.add_argument("results", type=path_option, help="results folder (or results.jsonl)")
    board.add_argument(
        "--out", required=True, type=output_folder_option,
        help="output folder: new, empty, or a leaderboard written by this command",
    )  # fmt: skip
    board.add_argument("--overwrite", action="store_true", help="replace --out whatever it holds")
    board.set_defaults(func=run_leaderboard)

    build = subparsers.add_parser(
        "build-benchmark", help="LAS/AskUbuntu-style benchmark from a parsed forum's test split"
    )
    build.add_argument("forum_dir", type=path_option, help="a parsed forum folder DIR/<host>")
    build.add_argument("--out", required=True, type=output_folder_option)
    build.add_argument(
        "--task", choices=("answer_selection", "question_similarity"), default="answer_selection"
    )
    build.add_argument("--candidates", type=candidates_int, default=None)
    build.add_argument("--seed", type=seed_int, default=0)
    build.add_argument(
        "--overwrite", action="store_true",
        help="replace --out even when it is not a benchmark built by this command",
    )  # fmt: skip
    build.set_defaults(func=run_build)


def run_evaluate(args) -> int:
    from benchmarks.evaluate import evaluate, evaluate_each, evaluate_models

    options = dict(
        split=args.split,
        data_dir=args.data_dir,
        results=args.results,
        finetune=args.finetune,
        transfer=args.transfer,
        seed=args.seed,
        max_steps=args.max_steps,
        save_as=args.save_as,
        max_length=args.max_length,
        encoder=args.encoder,
        overwrite=args.overwrite,
        build=args.build,
        precision=args.precision,
    )
    if len(args.model) > 1:
        records = evaluate_models(args.model, args.benchmark, adapters=args.adapter, **options)
    elif len(args.adapter) > 1:
        records = evaluate_each(args.model[0], args.benchmark, args.adapter, **options)
    else:
        records = [evaluate(args.model[0], args.benchmark, adapters=args.adapter, **options)]
    for record in records:
        metrics = " ".join(f"{k}={v:.4f}" for k, v in record["metrics"].items())
        who = "+".join([record["model"], *record["adapters"]])
        print(
            f"{record['benchmark']}/{record['split']} {who} [{record['mode']}] "
            f"queries={record['queries']} {metrics}"
        )
    if args.results is None:
        print(json.dumps(records if len(records) > 1 else records[0], indent=2))
    return 0


def run_leaderboard(args) -> int:
    from benchmarks.leaderboard import write_leaderboard

    written = write_leaderboard(args.results, args.out, overwrite=args.overwrite)
    for path in written:
        print(path)
    return 0


def run_build(args) -> int:
    from benchmarks.builder import build_from_forum
    from benchmarks.errors import BenchmarkError
    from benchmarks.registry import get
    from stackexchange.jsontext import read_json_object

    path = build_from_forum(
        args.forum_dir, args.out, task=args.task, candidates=args.candidates, seed=args.seed,
        overwrite=args.overwrite,
    )  # fmt: skip
    manifest = read_json_object(path / BENCHMARK_FILE, BenchmarkError, "the descriptor")
    get("local:" + str(path)).load("test")  # the folder reads back
    counts = ", ".join(f"{split} {c['queries']}" for split, c in manifest["counts"].items())
    print(
        f"{path}: {args.task}, queries: {counts}; candidates: {manifest['candidates_note']}; "
        f"use --benchmark local:{path}"
    )
    return 0
