"""What more time buys ``adapt``: its test MAP against the budget it was given.

For each set (``arguana-02``, ``mediqa2019``: domains all-MiniLM-L6-v2 was not trained on,
their targets as ``outside_study.py`` builds them) and each budget (``--budgets``, minutes),
``adapt`` runs as a user runs it (empty zoo, its own held-out lists decide) and its entry is
scored on the set's test split, beside

* ``fused``: the zero-shot base fused with BM25, the no-training model a user already has
  (the baseline: each point's paired bootstrap interval is against it), and ``base``;
* ``own``: the adapter ``adapt`` trained on the target's own pairs within that budget, scored
  whatever the decision chose (what the training bought, the decision aside), and its fusion
  with the base and BM25 as ``adapt`` builds it.

Each point records the steps the budget allowed, the best step, the pairs seen and the
decision. Resumable: entries and per-query APs are cached under ``--work`` (a point already
in the JSON is not run again). Results: ``results/adapt_budget_curve.json`` and its plot
``docs/images/adapt_budget_curve.png`` (``--budgets`` with no value: the figure only). Run
on a quiet machine (the budget is wall time): ``python benchmarks/studies/adapt_budget_curve.py
--work W [--sets ...] [--budgets 2.5 5 10] [--learner LABEL]``; each learner's points are
kept under its name (:data:`CURRENT`: this code's), with a ``learner`` field that says what it
is, so an older checkout's run, given the same ``--out``, stands beside it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from adapter_zoo.fusion_defaults import FUSED as FUSED_CANDIDATE  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.studies.outside_study import (  # noqa: E402
    FUSED,
    SETS,
    ZERO_SHOT,
    adapted,
    candidate_models,
    query_aps,
)

RESULTS = Path(__file__).resolve().parents[1] / "results"
PLOT = ROOT / "docs" / "images" / "adapt_budget_curve.png"  # shown in docs/results.md
CURVE_SETS = ("arguana-02", "mediqa2019")
BUDGETS = (2.5, 5.0, 10.0, 20.0, 40.0)
# the name this code's points are recorded under, and what it is (the record's ``learner``);
# the older learners' records name theirs and the commit they ran at
CURRENT = "trained to its deadline, fused-base floor"
CURRENT_LEARNER = (
    "a bottleneck adapter in every layer on BM25's hard negatives; no start scoring, one "
    "evaluation at its last step, a run the budget cuts trained to its deadline (rate warmed up "
    "and annealed by the clock); the zero-shot base fused with BM25 the decision's floor, a "
    "single winner answering through its fusion with the base and BM25"
)
# what the own run trains instead of a bottleneck adapter (LearnSettings' own_training, and
# its batch), the alternatives a short budget might favour; its points are recorded as
# "<learner>, <VARIANT_NAMES[variant]>"
VARIANTS = {
    "lora": {"mode": "adapter", "method": "lora"},
    "full": {"mode": "full"},
    "gist": {"mode": "adapter", "loss": "GISTEmbedLoss"},
    # the hard negatives the base's embeddings rank nearest, not BM25's (near-copies left out)
    "mined": {"mode": "adapter", "negative_miner": "base"},
    # distilled from the base fused with BM25 (margin-MSE beside the in-batch ranking loss)
    "distill": {"mode": "adapter", "loss": "FusedMarginMSELoss"},
    # 4x the in-batch negatives at a pair's memory: 128 triplets a step through GradCache
    # (the batch's embeddings first without gradients, then 8 texts at a time with them)
    "cached": {"mode": "adapter", "loss": "CachedMultipleNegativesRankingLoss", "batch_size": 128},
}
VARIANT_NAMES = {"lora": "LoRA", "full": "full fine-tuning", "gist": "GIST-guided",
                 "mined": "mined negatives", "distill": "distilled", "cached": "cached MNRL"}  # fmt: skip
# what a point keeps of its own run's record (the card's adapt.training.runs.own)
OWN_RUN_FIELDS = ("steps", "steps_run", "best_step", "pairs_seen", "selection_map", "seconds")


def variant_settings(variant: str | None):
    """How adapt trains for ``variant`` (:data:`VARIANTS`; None: adapt's own way)."""
    # with the script's other adapter_zoo imports, on use
    from adapter_zoo.adapt.candidate_training import LearnSettings

    if variant is None:
        return None
    how = dict(VARIANTS[variant])
    return LearnSettings(batch=how.pop("batch_size", LearnSettings().batch), own_training=how)


def point(work: Path, benchmark: str, minutes: float, learner: str, settings=None) -> dict:
    """One budget's row: the test MAP of adapt's entry and of its own trained adapter, each
    against the fused base, and what the budget allowed (``settings``: how adapt trains, a
    :class:`~adapter_zoo.adapt.candidate_training.LearnSettings`; None: its own way)."""
    from adapter_zoo.adapt.decide import paired_bootstrap
    from adapter_zoo.zoo.store import local_entry, read_card

    data_dir, target = SETS[benchmark]
    label = "".join(c if c.isalnum() else "-" for c in learner)
    entry = f"curve-{target}-{minutes:g}m-{label}"
    # empty zoo, kept candidates
    name, seconds = adapted(work, target, [], "auto", minutes, entry, settings=settings)
    card = read_card(local_entry(name))["adapt"]
    chosen = card["decision"]["chosen"]
    # the entry holds its chosen candidate's files (or names the same models): its test APs
    # are that candidate's, scored once
    wanted = {"own", FUSED_CANDIDATE, chosen} - {"base"}
    candidates = {c: m for c, m in candidate_models(card).items() if c in wanted}
    aps = query_aps(work, benchmark, data_dir, {"base": ZERO_SHOT, "fused": FUSED, **candidates})
    aps["adapt"] = aps[chosen]
    run = (card["training"].get("runs") or {}).get("own")
    return {
        "minutes": minutes,
        "seconds": round(seconds, 1),
        "chosen": chosen,
        "map": {k: float(v.mean()) for k, v in aps.items()},
        "vs_fused": {k: paired_bootstrap(v, aps["fused"]) for k, v in aps.items() if k != "fused"},
        "own_run": None if run is None else {k: run[k] for k in OWN_RUN_FIELDS},
        "skipped": card["training"].get("skipped"),
        "cuts": card["budget"]["plan"].get("cuts"),
        "reason": card["reason"],
        "machine": machine_info(),
    }


def plot(record: dict, path: Path) -> None:
    """Test MAP minus the fused base's against the budget, per set and learner (variants of
    the own run are the docs' table's): adapt's entry (its 95% interval shaded) and its own
    adapter."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.set_prop_cycle(color=plt.get_cmap("tab20").colors)  # a colour for each line
    learners = {k: v for k, v in record["learners"].items() if "variant" not in v}
    for learner, runs in learners.items():
        for benchmark, points in runs["sets"].items():
            rows = sorted(points.values(), key=lambda p: p["minutes"])
            x = [p["minutes"] for p in rows]
            for key, style in (("adapt", "-o"), ("own", ":x")):
                ys = [p["vs_fused"].get(key, {}).get("delta", np.nan) for p in rows]
                line = ax.plot(x, ys, style, label=f"{benchmark} {key} ({learner})")[0]
                if key == "adapt":
                    low = [p["vs_fused"]["adapt"]["interval"][0] for p in rows]
                    high = [p["vs_fused"]["adapt"]["interval"][1] for p in rows]
                    ax.fill_between(x, low, high, color=line.get_color(), alpha=0.12)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    budgets = sorted({p["minutes"] for runs in learners.values()
                      for points in runs["sets"].values() for p in points.values()})  # fmt: skip
    ax.set_xticks(budgets, [f"{m:g}" for m in budgets])
    ax.set_xlabel("adapt's budget (minutes, 2 CPU cores)")
    ax.set_ylabel("test MAP − zero-shot base fused with BM25")
    ax.set_title(f"What time buys adapt ({record['machine']['cpu']})", fontsize=9)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside: no point hidden
    figure.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--sets", nargs="*", default=list(CURVE_SETS), choices=list(SETS))
    parser.add_argument("--budgets", nargs="*", type=float, default=list(BUDGETS))
    parser.add_argument("--out", type=Path, default=RESULTS / "adapt_budget_curve.json")
    parser.add_argument("--plot", type=Path, default=PLOT, help="where the figure goes")
    parser.add_argument("--learner", default=CURRENT,
                        help="the name the points are recorded under (what the learner is)")  # fmt: skip
    parser.add_argument("--variant", choices=list(VARIANTS),
                        help="what the own run trains instead of a bottleneck adapter")  # fmt: skip
    args = parser.parse_args(argv)
    settings = variant_settings(args.variant)
    if args.variant:
        args.learner = f"{args.learner}, {VARIANT_NAMES[args.variant]}"
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")  # adapt's progress
    os.environ.setdefault("ADAPTER_ZOO_HOME", str(args.work / "zoo"))
    record = {"benchmark": "adapt_budget_curve", "precision": "auto", "learners": {}}
    if args.out.is_file():  # resumable: what is already recorded stays
        record = json.loads(args.out.read_text())
    what = CURRENT_LEARNER if args.learner.startswith(CURRENT) else args.learner
    if args.variant:
        what = f"{what}; the own run: {VARIANT_NAMES[args.variant]}"
    learner = record["learners"].setdefault(args.learner, {"learner": what, "sets": {}})
    if args.variant:
        learner["variant"] = VARIANTS[args.variant]
    for benchmark in args.sets:
        for minutes in args.budgets:
            points = learner["sets"].setdefault(benchmark, {})
            if f"{minutes:g}" in points:
                continue
            points[f"{minutes:g}"] = point(args.work, benchmark, minutes, args.learner, settings)
            record["machine"] = machine_info()
            tmp = args.out.with_suffix(".tmp")
            tmp.write_text(json.dumps(record, indent=1) + "\n")
            os.replace(tmp, args.out)
            row = points[f"{minutes:g}"]
            print(f"{benchmark} {minutes:g} min: adapt {row['map']['adapt']:.4f} "
                  f"(fused {row['map']['fused']:.4f}), chose {row['chosen']}", flush=True)  # fmt: skip
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    plot(record, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
