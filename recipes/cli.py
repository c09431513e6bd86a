"""``adapter-zoo run RECIPE [--smoke] [--verify]``, ``adapter-zoo recipes`` and
``adapter-zoo quickstart``."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from adapter_zoo.adapt.budget import MAX_MINUTES
    from recipes.quickstart import JOB_MINUTES
    from stackexchange.numbers import number_option, step_int
    from stackexchange.paths import folder_option

    run = subparsers.add_parser(
        "run",
        help="run a recipe (a paper experiment) shipped with the package",
        description="Run every command of a recipe file. --smoke runs it on the shipped "
        "forums with a tiny random BERT in seconds (CI does this for every recipe).",
    )
    run.add_argument(
        "recipe",
        help="a recipe name (multicqa_mt_all; adapter-zoo recipes lists them) or a .toml path",
    )
    run.add_argument("--smoke", action="store_true", help="tiny model, shipped data, 2 steps")
    run.add_argument("--work", type=folder_option, help="output folder (default outputs/<recipe>)")
    run.add_argument("--dry-run", action="store_true", help="print the commands only")
    run.add_argument(
        "--verify",
        action="store_true",
        help="after the run, compare its scores with the recipe's published (and expected) "
        "ones: OK or FAIL per metric; exit status 1 on any FAIL",
    )
    run.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local: one command after another here (default); ray: independent commands at "
        "once as Ray tasks, finished ones skipped (pip install adapter-zoo[ray])",
    )
    run.add_argument(
        "--address",
        default=None,
        help="--executor ray: the Ray cluster to use (e.g. ray://head:10001 or auto); "
        "default: start a local one",
    )
    run.set_defaults(func=_run)

    recipes = subparsers.add_parser("recipes", help="list the recipes and what they reproduce")
    recipes.set_defaults(func=_list)

    quick = subparsers.add_parser(
        "quickstart",
        help="the main job in about 5 minutes: adapt a forum nobody labelled with the shipped "
        "zoo, benchmark it against the zero-shot model",
        description="The main job, on a StackExchange forum shipped in the package and kept "
        "out of the shipped zoo: parse bicycles.meta, adapt it from its own posts with the "
        "shipped entries that never saw it (its test questions never read) in what the job's "
        "minutes leave, evaluate BM25, the zero-shot bi-encoder, it fused with BM25 and the "
        "adapted entry on its held-out questions, and write a leaderboard and a verdict: what "
        "the adapted entry gained over the zero-shot model and over it fused with BM25, with a "
        "paired bootstrap interval.",
    )
    quick.add_argument(
        "--out", type=folder_option, default="quickstart-output", help="output folder"
    )
    quick.add_argument("--base", default="minilm-l6", help="base model (default minilm-l6)")
    quick.add_argument(
        "--max-steps",
        type=step_int,
        default=None,
        help="training steps of each of adapt's runs (default: from its time budget)",
    )
    quick.add_argument(
        "--budget",
        type=number_option(low=1, high=MAX_MINUTES),
        default=JOB_MINUTES,
        metavar="MINUTES",
        help="the whole job's time budget (default %(default)g): adapt gets what is left once "
        "the forum is parsed, less the evaluation's share (about 4 minutes of the 5), and at "
        "least 1 minute",
    )
    quick.add_argument("--smoke", action="store_true", help="tiny random model, a few steps")
    quick.add_argument(
        "--overwrite",
        action="store_true",
        help="use --out even when it holds files an earlier quickstart did not write",
    )
    quick.set_defaults(func=_quickstart)


def _run(args: argparse.Namespace) -> int:
    from recipes.recipe import RecipeError, load_recipe
    from recipes.runner import find_recipe, run_recipe

    recipe = load_recipe(find_recipe(args.recipe))
    if args.address and args.executor != "ray":
        raise RecipeError("--address needs --executor ray")
    work = run_recipe(
        recipe,
        smoke=args.smoke,
        work=args.work,
        dry_run=args.dry_run,
        executor=args.executor,
        address=args.address,
    )
    print(f"recipe {recipe.name} finished; outputs in {work}")
    if not args.verify or args.dry_run:
        return 0
    from recipes.verify import format_rows, verify

    checks = verify(recipe, work, smoke=args.smoke)
    print(format_rows(checks) if checks else f"recipe {recipe.name} publishes no scores")
    return 0 if all(check.ok for check in checks) else 1


def _list(args: argparse.Namespace) -> int:
    from recipes.recipe import load_recipe
    from recipes.runner import recipe_dir

    for path in sorted(recipe_dir().glob("*.toml")):
        recipe = load_recipe(path)
        print(f"{path.stem:28s} {recipe.paper}\n{'':28s} hardware: {recipe.hardware}")
    return 0


def _quickstart(args: argparse.Namespace) -> int:
    from recipes.quickstart import quickstart

    quickstart(
        args.out,
        base=args.base,
        max_steps=args.max_steps,
        budget_minutes=args.budget,
        smoke=args.smoke,
        overwrite=args.overwrite,
    )
    return 0
