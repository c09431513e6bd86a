"""``adapter-zoo adapt``: a zoo entry for an unlabelled domain (registered by zoo_cli)."""

from __future__ import annotations


def register(subparsers) -> None:
    from adapter_zoo.adapt.plan import (
        AUTO,
        AUTO_MIN_SIMILARITY,
        AUTO_STRATEGY,
        STRATEGIES,
    )

    p = subparsers.add_parser(
        "adapt",
        help="build a zoo model for an unlabelled domain from its texts alone",
        description="Compare the target's question embeddings (all-MiniLM-L6-v2 centroid) with "
        "each zoo entry's domain centroid and save the chosen model as a zoo entry whose card "
        "says what was chosen and why. No labels are read. Strategy auto: "
        f"{AUTO_STRATEGY} when the best similarity is >= {AUTO_MIN_SIMILARITY}, else zero-shot.",
    )
    p.add_argument(
        "--target",
        required=True,
        metavar="PATH",
        help="a parsed forum or parse output folder, a dump (.7z or folder with Posts.xml), "
        "a benchmark folder, or a text file with one question or candidate text per line",
    )
    p.add_argument("--name", required=True, help="name of the zoo entry to write")
    p.add_argument(
        "--zoo", nargs="+", default=None, metavar="ENTRY",
        help="entries to choose from (default: every local adapter/multitask entry)",
    )  # fmt: skip
    p.add_argument("--strategy", default=AUTO, choices=(AUTO, *STRATEGIES))
    p.add_argument("--top-k", type=int, default=3, help="members of soup, fusion and route")
    p.add_argument("--overwrite", action="store_true", help="replace an existing zoo entry")
    p.set_defaults(func=run_adapt)


def run_adapt(args) -> int:
    from adapter_zoo.adapt.adapt import adapt
    from adapter_zoo.zoo.store import read_card

    path = adapt(
        args.target, name=args.name, zoo=args.zoo, strategy=args.strategy,
        top_k=args.top_k, overwrite=args.overwrite,
    )  # fmt: skip
    record = read_card(path)["adapt"]
    print(f"{path.name}: {record['strategy']} -> {path}")
    print(record["reason"])
    for member, weight in zip(record["members"], record["weights"]):
        print(f"  {member:<32} weight {weight:.4f}")
    print("similarity to the target:")
    for entry, value in record["similarities"].items():
        print(f"  {entry:<32} {value:.4f}")
    return 0
