"""``adapter-zoo parse`` and ``adapter-zoo forums``: torch-free sub-commands."""

from __future__ import annotations

import argparse

from stackexchange.errors import DumpError


def register(subparsers) -> None:
    """Add ``parse`` and ``forums`` to the ``adapter-zoo`` parser."""
    from stackexchange.numbers import process_int, question_int, seed_int
    from stackexchange.paths import folder_option, path_option

    parse = subparsers.add_parser(
        "parse",
        help="StackExchange dump (one archive/folder or a whole dump) → pair datasets",
        description="Parse forums into DIR/<host>/ (pairs, questions, stats.json). Forums "
        "already complete in DIR are skipped unless --overwrite.",
    )
    parse.add_argument("source", type=path_option, metavar="SOURCE", help="a site .7z, an extracted forum folder, "
                       "a Posts.xml, or a folder of many archives/forum folders")  # fmt: skip
    parse.add_argument(
        "--out", required=True, type=folder_option, metavar="DIR", help="output folder"
    )
    parse.add_argument(
        "--forums", nargs="+", metavar="NAME", help="only these (host or short name)"
    )
    parse.add_argument("--max-positives", type=question_int, default=100_000, metavar="N")
    parse.add_argument(
        "--workers", type=process_int, default=None, metavar="N",
        help="parallel processes: forums at once, or chunks of one big forum (default: cores)",
    )  # fmt: skip
    parse.add_argument("--overwrite", action="store_true", help="re-parse complete forums")
    parse.add_argument("--seed", type=seed_int, default=0)
    parse.set_defaults(func=run_parse)

    forums = subparsers.add_parser("forums", help="list the forum catalog or a source set")
    forums.add_argument("--set", choices=("all", "balanced", "largest"), help="one source set")
    forums.add_argument("--exclude-eval", action="store_true", help="leave out evaluation forums")
    forums.set_defaults(func=run_forums)


def run_parse(args: argparse.Namespace) -> int:
    from stackexchange.dump import parse_dump

    done = parse_dump(
        args.source, args.out, forums=args.forums, max_positives=args.max_positives,
        workers=args.workers, overwrite=args.overwrite, seed=args.seed,
    )  # fmt: skip
    for path in done:
        print(path)
    return 0


def run_forums(args: argparse.Namespace) -> int:
    from stackexchange.catalog import catalog, forum_set

    forums = catalog()
    if args.set:
        chosen = set(forum_set(args.set, exclude_eval=args.exclude_eval))
        forums = [f for f in forums if f.host in chosen]
    elif args.exclude_eval:
        raise DumpError("--exclude-eval needs --set")
    print(f"{'host':45} {'questions':>10}  {'category':18} english meta multicqa")
    for f in forums:
        flags = f"{'yes' if f.english else 'no':7} {'yes' if f.meta else 'no':4} "
        flags += "yes" if f.used_by_multicqa else "no"
        print(f"{f.host:45} {f.questions:>10}  {f.category:18} {flags}")
    return 0
