"""``adapter-zoo compose``: save a fusion or a rerank as a zoo entry, chosen on dev."""

from __future__ import annotations

from adapter_zoo.compose.entry import compose_entry, dev_table
from adapter_zoo.compose.rerank import DEFAULT_TOP_K
from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.store import read_card
from stackexchange.numbers import list_int
from stackexchange.paths import path_option


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compose",
        help="save a score fusion or a retrieve-then-rerank as a zoo entry",
        description="Compose zoo models (names, paths, Hub names, sbert:<base>, bm25) into one "
        "entry. With --data/--forum, fusion weights are chosen by MAP on the forum's dev split "
        "(first member 1, the others from a grid) and every member's dev MAP is recorded.",
    )
    p.add_argument("--name", required=True, help="name of the zoo entry to write")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--fusion", nargs="+", metavar="MODEL", help="members of a score fusion")
    how.add_argument(
        "--rerank", nargs=2, metavar=("RETRIEVER", "RERANKER"), help="retriever and reranker"
    )
    p.add_argument(
        "--top-k",
        type=list_int,
        default=None,
        help=f"with --rerank: candidates reranked per query (default {DEFAULT_TOP_K})",
    )
    p.add_argument(
        "--data", default=None, type=path_option,
        help="parse output folder (adapter-zoo parse --out)",
    )  # fmt: skip
    p.add_argument("--forum", default=None, help="forum of --data whose dev split chooses")
    p.add_argument("--overwrite", action="store_true", help="replace an existing zoo entry")
    p.set_defaults(func=run_compose)


def run_compose(args) -> int:
    if args.top_k is not None and not args.rerank:
        raise ZooError("--top-k is only used with --rerank")
    path = compose_entry(
        args.name,
        args.fusion or args.rerank,
        composition="fusion" if args.fusion else "rerank",
        top_k=DEFAULT_TOP_K if args.top_k is None else args.top_k,
        data=args.data,
        forum=args.forum,
        overwrite=args.overwrite,
    )
    card = read_card(path)
    print(f"{card['name']}: {card['spec']} -> {path}")
    if card.get("dev_map"):
        print(f"dev MAP on {card['forum']} ({card['training']['dev_lists']} lists):")
        print(dev_table(card))
    return 0
