"""The quickstart timed as a new user runs it: ``adapter-zoo quickstart`` in a fresh zoo.

The README's set-up command runs the quickstart on real shipped data (MiniLM; the shipped zoo
less any entry that saw bicycles.meta; bicycles.meta adapted from its own posts with that zoo
in what the job's five minutes leave; BM25, the zero-shot base, it fused with BM25 and the
adapted entry evaluated on bicycles.meta's test questions, the leaderboard and the verdict).
This runs exactly that command in a subprocess (its own empty ``ADAPTER_ZOO_HOME`` and output
folder, so nothing is cached from an earlier run) and records its wall time and the peak
resident memory of its process tree beside the machine (the chip and its flags), the load
average before and after, what ``adapt`` chose, its budget, spent time and own run (from the
adapted entry's card), each stage's wall time and the verdict's numbers (the quickstart's own
record, ``quickstart.json``). Target: 5 minutes and 3 GB on 2 CPU cores.
``--budget M`` runs ``quickstart --budget M`` (the job's minutes: adapt gets what the
evaluation leaves), for what a longer first run buys.

Run: ``python benchmarks/speed/quickstart_time.py [--budget M --out F]`` (default
results/quickstart_time.json).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.speed.train_memory import measure  # noqa: E402
from stackexchange.jsontext import read_json_object  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
# The quickstart's record in its output folder (docs/getting-started.md): its stage times and
# verdict. Named here, not imported: this script sits a floor below recipes.
RECORD = "quickstart.json"
TARGET_S = 300
TARGET_GB = 3.0


def time_command(arguments: list[str], work: Path, target_s: float) -> dict | None:
    """Run ``python -m adapter_zoo <arguments>`` as a user would, with its own empty zoo home
    under ``work`` (nothing cached from an earlier run): its wall time, exit code and the
    process tree's peak RSS against ``target_s``, the load average before and after, and the
    machine. None (the log's end printed) when the command fails."""
    env = {**os.environ, "ADAPTER_ZOO_HOME": str(work / "zoo"), "HF_HUB_OFFLINE": "1"}
    load_before = os.getloadavg()[0]
    log = work / "command.log"
    result = measure([sys.executable, "-m", "adapter_zoo", *arguments], env, 0.1, log)
    if result["exit_code"]:
        print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
        return None
    return {
        **result,
        "target_s": target_s,
        "meets_target": result["wall_s"] <= target_s,
        "load_average_1m": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "machine": machine_info(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "quickstart_time.json")
    parser.add_argument("--note", default=None, help="recorded with the run (e.g. the machine)")
    parser.add_argument("--budget", type=float, default=None,
                        help="the job's minutes (quickstart --budget; default: its own 5)")  # fmt: skip
    args = parser.parse_args()

    from adapter_zoo.zoo.store import find_card
    from stackexchange.io import atomic_write_json

    work = Path(tempfile.mkdtemp(prefix="quickstart-time-"))
    budget = ["--budget", f"{args.budget:g}"] if args.budget else []
    target_s = 60 * args.budget if args.budget else TARGET_S
    result = time_command(["quickstart", "--out", str(work / "out"), *budget], work, target_s)
    if result is None:
        return 1
    cards = {entry.name: find_card(entry) for entry in sorted((work / "zoo").iterdir())}
    cards = {name: card for name, card in cards.items() if card}
    stages = read_json_object(work / "out" / RECORD, ValueError, "the quickstart's record")
    # the fresh zoo's one entry adapt made (its trained member records only whose it is)
    (adapted,) = [card["adapt"] for card in cards.values() if "adapt" in card]
    record = {
        "benchmark": "quickstart_time",
        "command": " ".join(["adapter-zoo quickstart", *budget, "(fresh zoo and output folder)"]),
        **result,
        "target_gb": TARGET_GB,
        "meets_memory_target": result["peak_rss_gb"] <= TARGET_GB,
        "memory_plans": {
            name: card["training"]["memory"]["mode"]
            for name, card in cards.items()
            if "memory" in card.get("training", {})
        },
        "stage_seconds": stages.get("stage_seconds"),
        "adapt": {
            "chosen": adapted["decision"]["chosen"],
            "reason": adapted["reason"],
            "candidates": {c: round(row["map"], 4) for c, row in adapted["candidates"].items()},
            "budget_minutes": adapted["budget"]["minutes"],
            "spent_s": adapted["budget"]["spent_s"],
            "cuts": adapted["budget"]["plan"]["cuts"],
            "own_run": (adapted["training"].get("runs") or {}).get("own"),
        },
        "verdict": stages.get("verdict"),
        **({"note": args.note} if args.note else {}),
    }
    atomic_write_json(args.out, record)
    print(f"quickstart: {result['wall_s']:.0f} s, peak {result['peak_rss_gb']:.2f} GB; "
          f"wrote {args.out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
