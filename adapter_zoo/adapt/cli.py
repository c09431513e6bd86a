"""``adapter-zoo adapt``: a zoo entry for an unlabelled domain (registered by zoo_cli)."""

from __future__ import annotations

from adapter_zoo.adapt import budget
from adapter_zoo.adapt.adapt import adapt
from adapter_zoo.adapt.plan import (
    AUTO,
    AUTO_MIN_SIMILARITY,
    AUTO_STRATEGY,
    STRATEGIES,
)
from adapter_zoo.precision import add_precision_option
from adapter_zoo.zoo.store import read_card
from stackexchange.numbers import list_int, number_option, step_int
from stackexchange.paths import path_option


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "adapt",
        help="build a zoo model for a domain nobody labelled, from its own posts",
        description="Strategy auto (the default): train adapters on the target's own "
        "self-supervised pairs (title -> body, question -> accepted answer, duplicates; a new "
        "adapter, and the zoo's multi-task and nearest adapters continued), score them, the "
        "zero-shot base (alone and fused with BM25) and the zoo's strategies on held-out "
        "lists of the target's own threads, and keep the base fused with BM25 unless a "
        "candidate beats the base by more than the lists' noise (paired bootstrap; a single "
        "model that wins answers through its fusion with the base and BM25). A parsed "
        "forum's test questions are never read. The other strategies choose from the zoo "
        "by domain similarity alone (all-MiniLM-L6-v2 centroids); centroid: "
        f"{AUTO_STRATEGY} when the best similarity is >= {AUTO_MIN_SIMILARITY}, else "
        "zero-shot.",
    )
    p.add_argument(
        "--target",
        required=True,
        type=path_option,
        metavar="PATH",
        help="a parsed forum or parse output folder, a dump (.7z or folder with Posts.xml), "
        "a JSONL (question/title/body/answer) or TSV (question<TAB>answer) file of pairs, a "
        "benchmark folder, a text file with one question or candidate text per line, or "
        "documents: a folder of .txt/.md/.html files or a JSONL corpus of {title, text} "
        "records (BEIR's corpus.jsonl)",
    )
    p.add_argument("--name", required=True, help="name of the zoo entry to write")
    p.add_argument(
        "--zoo", nargs="+", default=None, metavar="ENTRY",
        help="entries to choose from (default: every adapter/multitask entry, yours and the "
        "shipped)",
    )  # fmt: skip
    p.add_argument("--strategy", default=AUTO, choices=(AUTO, *STRATEGIES))
    p.add_argument("--top-k", type=list_int, default=3, help="members of soup, fusion and route")
    p.add_argument(
        "--max-steps", type=step_int, default=None,
        help="auto: steps of each training run (default: from the target's size)",
    )  # fmt: skip
    p.add_argument(
        "--budget", type=number_option(low=1, high=budget.MAX_MINUTES), metavar="MINUTES",
        default=budget.DEFAULT_MINUTES,
        help="auto: the run's time budget in minutes (default %(default)g: on 2 CPU cores it "
        "bought ArguAna 90%% of the gain 20 minutes did; at 2.5 minutes nothing trained; "
        "the budget curve in docs/results.md): its training steps, evaluations and "
        "candidates are planned from this machine's measured speed to fit; the card records "
        "the plan and what it cut",
    )  # fmt: skip
    p.add_argument("--overwrite", action="store_true", help="replace an existing zoo entry")
    add_precision_option(p, scoring=True)
    p.set_defaults(func=run_adapt)


def run_adapt(args) -> int:
    path = adapt(
        args.target, name=args.name, zoo=args.zoo, strategy=args.strategy,
        top_k=args.top_k, overwrite=args.overwrite, max_steps=args.max_steps,
        precision=args.precision, budget_minutes=args.budget,
    )  # fmt: skip
    print("\n".join(describe(path)))
    return 0


def describe(path) -> list[str]:
    """What the adapt entry at ``path`` chose and why, as printed lines: for a learned
    entry its decision, the held-out lists, the budget and every candidate's MAP with its
    margin over the base; for a similarity strategy its members and the similarities."""
    record = read_card(path)["adapt"]
    if record["strategy"] == "learned":
        spent = record["budget"]
        cuts = "; ".join(spent["plan"]["cuts"]) or "nothing cut"
        limit = "none" if spent["minutes"] is None else f"{spent['minutes']:g} min"
        lines = [
            f"{path.name}: {record['decision']['chosen']} -> {path}",
            record["reason"],
            f"held-out lists: {record['decision']['lists']} ({record['decision_lists']})",
            f"budget: {limit}, {spent['spent_s']:.0f} s spent ({cuts})",
        ]
        for name, row in sorted(record["candidates"].items(), key=lambda c: -c[1]["map"]):
            margin = f"  {row['delta']:+.4f} (lower {row['lower']:+.4f})" if "delta" in row else ""
            lines.append(f"  {name:<28} MAP {row['map']:.4f}{margin}")
        return lines
    lines = [f"{path.name}: {record['strategy']} -> {path}", record["reason"]]
    for member, weight in zip(record["members"], record["weights"]):
        lines.append(f"  {member:<32} weight {weight:.4f}")
    lines.append("similarity to the target:")
    for entry, value in record["similarities"].items():
        lines.append(f"  {entry:<32} {value:.4f}")
    return lines
