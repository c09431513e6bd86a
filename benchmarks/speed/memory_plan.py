"""What the memory plan buys: the same training run, plain against bounded, side by side.

Each encoder trains MiniLM on the real beer forum twice in one run, with the same seed and
config: once with the default budget (the plan ``plain``: the whole batch's activations held,
one forward and one backward pass) and once with a budget too small for anything but the
``bounded`` plan (GradCache for bi-encoders, chunks of 8 pairs for cross-encoders, both with
recomputed activations: what every run did before memory became a budget). Each run is a
subprocess (``adapter-zoo train``), its process tree's peak RSS sampled; seconds per step
count the wall time outside dev scoring (model loading included), so the ratio is of
training steps; dev MAP says whether the plans train the same model (they compute the same
loss; dropout masks are drawn in another order, so not bit for bit).

Run: ``python benchmarks/speed/memory_plan.py [--steps 6]`` (writes results/memory_plan.json).
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
from benchmarks.speed.train_memory import SHARED, dev_seconds, measure  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
HOST = "beer.stackexchange.com"
# the zoo's training settings (bi-encoder: recipes/quickstart.py's, 32 triplets; cross-encoder:
# benchmarks/studies/quality.py's, 16 listwise examples of 8 pairs), 128 tokens
ENCODERS = {
    "bi": ["--encoder", "bi", "--batch-size", "32", "--hard-negatives"],
    "cross": ["--encoder", "cross", "--batch-size", "16", "--pairs", "question_answer",
              "--hard-negatives", "--loss", "listwise", "--negatives", "7"],
}  # fmt: skip
BUDGETS = {"plain": None, "bounded": "1"}  # None: the default; one byte forces bounded
TARGET_RATIO = 2.5  # the target: training steps/s against today's default bi-encoder run


def run(encoder: str, plan: str, steps: int, parsed: Path, work: Path) -> dict:
    name = f"{encoder}-{plan}"
    budget = BUDGETS[plan]
    command = [
        sys.executable, "-m", "adapter_zoo", "train", "--mode", "adapter", "--data",
        str(parsed), "--forums", HOST, "--name", name, "--max-steps", str(steps),
        "--eval-steps", str(steps), "--max-length", "128", "--lr", "1e-3", "--overwrite",
        *ENCODERS[encoder], *(["--memory-budget", budget] if budget else []),
    ]  # fmt: skip
    env = {**os.environ, "ADAPTER_ZOO_HOME": str(work / "zoo"), "HF_HUB_OFFLINE": "1"}
    load = os.getloadavg()[0]
    result = measure(command, env, 0.1, work / f"{name}.log")
    if result["exit_code"]:
        raise SystemExit((work / f"{name}.log").read_text(errors="replace")[-3000:])
    from adapter_zoo.zoo.store import read_card

    card = read_card(work / "zoo" / name)
    dev = dev_seconds(work / "zoo" / name) or 0.0
    return {
        **result,
        "dev_s": dev,
        "s_per_step": round((result["wall_s"] - dev) / steps, 2),
        "dev_map": round(card["scores"]["dev_map"], 4),
        "memory": card["training"]["memory"],
        "load_average_1m_before": round(load, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--out", type=Path, default=RESULTS / "memory_plan.json")
    args = parser.parse_args()

    import stackexchange
    from stackexchange.io import atomic_write_json

    work = Path(tempfile.mkdtemp(prefix="memory-plan-"))
    parsed = work / "parsed"
    stackexchange.parse_forum(SHARED / "stackexchange" / f"{HOST}.7z", parsed)
    runs = {e: {p: run(e, p, args.steps, parsed, work) for p in BUDGETS} for e in ENCODERS}
    ratios = {e: round(r["bounded"]["s_per_step"] / r["plain"]["s_per_step"], 2)
              for e, r in runs.items()}  # fmt: skip
    record = {
        "benchmark": "memory_plan",
        "forum": HOST,
        "base_model": "minilm-l6",
        "steps": args.steps,
        "precision": "fp32",
        "runs": runs,
        "speedup_plain_over_bounded": ratios,
        "target_ratio": TARGET_RATIO,
        "machine": machine_info(),
    }
    atomic_write_json(args.out, record)
    for encoder, by_plan in runs.items():
        for plan, r in by_plan.items():
            print(f"{encoder:<6}{plan:<9}{r['s_per_step']:>7.2f} s/step {r['peak_rss_gb']:>6.2f} GB"
                  f"  dev MAP {r['dev_map']:.4f}  ({r['memory']['mode']})")  # fmt: skip
    print(f"plain over bounded: {ratios}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
