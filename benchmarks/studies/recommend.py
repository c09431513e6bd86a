"""The adapter recommender against the full zoo sweep, on the real benchmarks available offline.

For each target the full sweep (``benchmarks.sweep.sweep_benchmark``: every adapter scores
the whole split) finds the best adapter by the target's main metric; the recommender ranks
the same zoo twice, from the target's questions alone (domain similarity of mean sentence
embeddings) and with a scored probe of ``--dev-sample`` labelled queries. Reported per
target and overall: whether the sweep's best adapter is in the recommender's top 1 and top 3,
what a random pick would achieve (k / N), and each side's wall time.

The zoo is trained here from the two StackExchange forums shipped with the package (beer and
bicycles.meta): adapters from each forum with two pair kinds, and a MultiCQA multi-task
adapter over both (``ZOO``). They are small (``--steps`` steps at length 128); an existing
``--zoo`` folder is reused entry by entry. Targets: WikiQA test (Wikipedia answer selection),
SemEval 2016 dev (QatarLiving, its only split with text here) and LAS-style answer selection
built from each forum's held-out test questions (20 candidates). The probe draws its queries
from the target's ``dev`` split where there is one (WikiQA, the LAS sets); for SemEval it can
only use the evaluated split itself, which the JSON records.

Results: ``results/recommend.json``.

Run: ``python benchmarks/studies/recommend.py [--steps 60] [--dev-sample 20] [--zoo DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.machine import machine_info  # noqa: E402
from stackexchange.lists import BENCHMARK_FILE  # noqa: E402

SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results"
FORUMS = ("beer.stackexchange.com", "bicycles.meta.stackexchange.com")
MAX_LENGTH = 128
# name -> the forums and training arguments of one zoo entry (the quickstart's recipe, shorter)
ZOO = {
    "beer-qa": ["--mode", "adapter", "--forums", FORUMS[0], "--pairs", "question_answer"],
    "beer-tb": ["--mode", "adapter", "--forums", FORUMS[0], "--pairs", "title_body"],
    "bicycles-qa": ["--mode", "adapter", "--forums", FORUMS[1], "--pairs", "question_answer"],
    "bicycles-tb": ["--mode", "adapter", "--forums", FORUMS[1], "--pairs", "title_body"],
    "multicqa-qa": ["--mode", "multitask", "--forums", *FORUMS, "--pairs", "question_answer"],
}
TRAINING = ["--encoder", "cross", "--hard-negatives", "--loss", "listwise", "--negatives", "7", "--batch-size", "16",
            "--lr", "1e-3", "--max-length", str(MAX_LENGTH)]  # fmt: skip


def prepare_data(work: Path) -> tuple[Path, dict[str, str]]:
    """Parse the shipped forums and build a LAS-style set from each; return the targets."""
    import stackexchange
    from benchmarks import build_from_forum
    from stackexchange.catalog import shipped_data

    parsed = work / "parsed"
    targets = {"wikiqa": "wikiqa", "semeval2016": "semeval2016"}
    for host in FORUMS:
        forum = stackexchange.parse_forum(shipped_data() / f"{host}.7z", parsed)
        bench = work / "benchmarks" / host.split(".")[0]
        if not (bench / BENCHMARK_FILE).is_file():
            build_from_forum(forum, bench, task="answer_selection", candidates=20, seed=0)
        targets[f"las-{host.split('.')[0]}"] = f"local:{bench}"
    return parsed, targets


def train_zoo(zoo: Path, parsed: Path, steps: int) -> list[str]:
    """Train every ``ZOO`` entry missing from ``zoo`` (one CLI run each); return their paths."""
    from adapter_zoo.zoo import CARD_FILE

    paths = []
    for name, argv in ZOO.items():
        entry = zoo / name
        if not (entry / CARD_FILE).is_file():
            command = [sys.executable, "-m", "adapter_zoo", "train", *argv, "--data", str(parsed),
                       "--name", name, "--max-steps", str(steps), *TRAINING]  # fmt: skip
            print(f"training {name}: {' '.join(command[3:])}", flush=True)
            environment = {**os.environ, "ADAPTER_ZOO_HOME": str(zoo)}
            subprocess.run(command, check=True, env=environment)
        paths.append(str(entry))
    return paths


def _table(rows: list[dict], names: list[str]) -> str:
    short = [Path(n).name for n in names]
    head = f"{'target':14} {'best':12} " + " ".join(f"{s:>12}" for s in short)
    lines = [head + "  similarity top-3 / probe top-3"]
    for row in rows:
        scores = " ".join(f"{row['sweep'][n]:12.3f}" for n in names)
        sim = ",".join(Path(n).name for n in row["similarity_top3"])
        probe = ",".join(Path(n).name for n in row["probe_top3"])
        lines.append(f"{row['target']:14} {Path(row['best']).name:12} {scores}  {sim} / {probe}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("recommend-work"))
    parser.add_argument("--zoo", type=Path, default=None, help="zoo folder (default: WORK/zoo)")
    parser.add_argument("--steps", type=int, default=60, help="training steps per zoo adapter")
    parser.add_argument("--dev-sample", type=int, default=20, help="labelled queries probed")
    parser.add_argument("--output", type=Path, default=RESULTS / "recommend.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from benchmarks.recommend import hit_rate, load_embedder

    data_dir = SHARED / "benchmarks"
    if not (data_dir / "wikiqa").is_dir():
        sys.exit(f"real data missing: {data_dir / 'wikiqa'}")
    work = args.work.resolve()
    parsed, targets = prepare_data(work)
    adapters = train_zoo((args.zoo or work / "zoo").resolve(), parsed, args.steps)
    embedder = load_embedder()
    rows = []
    for label, target in targets.items():
        # SemEval 2016's test XML is not shipped: its dev split is both evaluated and probed
        split = "dev" if label == "semeval2016" else "test"
        result = hit_rate(
            [target], adapters, dev_sample=args.dev_sample, split=split, dev_split="dev",
            data_dir=data_dir, forums_dir=parsed, max_length=MAX_LENGTH, embedder=embedder,
        )["targets"][0]  # fmt: skip
        result.update(target=label, split=split, probe_overlaps_evaluation=split == "dev")
        rows.append(result)
        print(json.dumps({k: result[k] for k in ("target", "best", "similarity_top3",
                                                  "probe_top3")}), flush=True)  # fmt: skip
    n = len(adapters)
    summary = {}
    for mode in ("similarity", "probe") if args.dev_sample else ("similarity",):
        for k in (1, 3):
            hits = [row["best"] in row[f"{mode}_top3"][:k] for row in rows]
            summary[f"{mode}_top{k}_hit_rate"] = sum(hits) / len(hits)
    summary.update(random_top1=1 / n, random_top3=min(3, n) / n)
    seconds = {key: sum(row["seconds"][key] for row in rows) for key in rows[0]["seconds"]}
    record = {
        "benchmark": "recommend",
        "machine": machine_info(),
        "args": {"steps": args.steps, "dev_sample": args.dev_sample, "max_length": MAX_LENGTH},
        "zoo": {Path(a).name: ZOO[Path(a).name] for a in adapters},
        "targets": rows,
        "summary": summary,
        "seconds": seconds,
    }
    if args.dev_sample:
        record["probe_speedup_over_sweep"] = seconds["sweep"] / seconds["probe"]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=2) + "\n")
    print(_table(rows, adapters))
    print(json.dumps(summary, indent=2))
    print(f"wall time (s): {json.dumps({k: round(v, 1) for k, v in seconds.items()})}")
    print(f"saved {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
