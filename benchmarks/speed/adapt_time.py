"""``adapt`` timed as a user runs it on a forum the zoo never saw: a dump in, an entry out.

Runs ``adapter-zoo adapt --target <dump folder> --name <forum>-adapt`` in a subprocess with its
own empty ``ADAPTER_ZOO_HOME`` (an empty zoo: ``adapt`` trains the target's own adapter and
decides on its held-out lists; with zoo entries it would also continue the zoo's multi-task
and nearest adapters, one more training run each) and records the wall time of the whole
command (parse, training, decision), the peak resident memory of its process tree, the
decision and every candidate's score on the held-out lists from the entry's card, the load
average before and after, and the machine. Target: 10 minutes on 2 CPU cores for a
forum of at most 1,000 questions.

Run: ``python benchmarks/speed/adapt_time.py [--forum quantumcomputing.stackexchange.com]``
(writes results/adapt_time.json).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.speed.quickstart_time import time_command  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
TARGET_S = 600
# the largest shipped forum under the target's 1,000 questions
FORUM = "quantumcomputing.stackexchange.com"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forum", default=FORUM, help="a dump folder under ../shared/data")
    parser.add_argument("--out", type=Path, default=RESULTS / "adapt_time.json")
    args = parser.parse_args()

    from adapter_zoo.zoo.store import read_card
    from stackexchange.io import atomic_write_json

    work = Path(tempfile.mkdtemp(prefix="adapt-time-"))
    name = f"{args.forum.split('.')[0]}-adapt"
    target = SHARED / "stackexchange" / args.forum
    result = time_command(["adapt", "--target", str(target), "--name", name], work, TARGET_S)
    if result is None:
        return 1
    card = read_card(work / "zoo" / name)["adapt"]
    record = {
        "benchmark": "adapt_time",
        "command": f"adapter-zoo adapt --target <{args.forum} dump> --name {name} (empty zoo)",
        "forum": args.forum,
        **result,
        "chosen": card["decision"]["chosen"],
        "decision_lists": card["decision_lists"],
        "candidates": {c: round(r["map"], 4) for c, r in card["candidates"].items()},
        "training": card["training"].get("runs"),
    }
    atomic_write_json(args.out, record)
    print(f"adapt on {args.forum}: {result['wall_s']:.0f} s, peak {result['peak_rss_gb']:.2f} GB, "
          f"chose {record['chosen']}; wrote {args.out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
