"""What training without attention dropout buys on a CPU: seconds a step, peak memory, and
whether the entry ranks as well.

With dropout on the attention weights, PyTorch's CPU attention takes the math path, which
keeps every layer's attention matrices for backward; without it, the fused kernel
(``sdpa``) keeps none and runs faster. ``adapt`` trains its candidates without it
(``adapter_zoo.adapt.candidate_training.ATTENTION_DROPOUT``), since its runs are bought by the second.
This trains adapt's own run (a bi-encoder adapter, its batch, length, hard negatives and
AdapterDrop) on real forums twice, the same seed and steps: the peer with the base's own
attention dropout (all-MiniLM-L6-v2's 0.1, what ``train`` and sentence-transformers' ``fit``
use), and without. Each run is a subprocess, its process tree's peak RSS sampled; seconds a
step count the wall time outside dev scoring (model loading included). Each entry is scored
on its forum's held-out test questions beside the zero-shot MiniLM and MiniLM fused with
BM25, and the two runs against each other (paired bootstrap over the questions).

Run: ``python benchmarks/speed/attention_dropout.py [--steps 30] [--forums HOST ...]``
(writes results/attention_dropout.json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from adapter_zoo.adapt.candidate_training import BATCH, OWN_DROP_LOWER, TRAIN_LENGTH  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.speed.train_memory import dev_seconds, measure  # noqa: E402
from stackexchange.catalog import shipped_data  # noqa: E402
from stackexchange.io import atomic_write_json  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
FORUMS = ("bicycles.meta.stackexchange.com", "beer.stackexchange.com")
BASE = "minilm-l6"
ZERO_SHOT = f"sbert:{BASE}"
FUSED = f"fusion:{ZERO_SHOT}*0.9+bm25*0.1"
CASES = {"base's attention dropout (peer)": None, "no attention dropout (adapt)": 0.0}
TRAIN = "from adapter_zoo.training import TrainingConfig, train; import json, sys; " \
        "train(TrainingConfig(**json.loads(sys.argv[1])))"  # fmt: skip


def run_case(name: str, dropout: float | None, parsed: Path, host: str, steps: int,
             log: Path) -> dict:  # fmt: skip
    """Train one case in a subprocess: its seconds a step and peak RSS."""
    config = {
        "mode": "adapter", "encoder": "bi", "data": str(parsed), "forums": [host], "name": name,
        "base_model": BASE, "hard_negatives": True, "max_length": TRAIN_LENGTH,
        "batch_size": BATCH, "seed": 0, "max_steps": steps, "eval_steps": steps,
        "keep_start": False, "drop_lower": OWN_DROP_LOWER, "attention_dropout": dropout,
        "overwrite": True,
    }  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    row = measure([sys.executable, "-c", TRAIN, json.dumps(config)], env, 0.1, log)
    if row["exit_code"]:
        raise SystemExit(f"{name}: training failed; see {log}")
    # the zoo's home is this run's, set by main before the first case
    from adapter_zoo.zoo.store import local_entry, read_card

    entry = local_entry(name)
    outside = dev_seconds(entry) or 0.0
    card = read_card(entry)
    return {
        "attention_dropout": dropout,
        "steps": card["training"]["steps"],
        "seconds_per_step": round((row["wall_s"] - outside) / card["training"]["steps"], 2),
        "peak_rss_gb": row["peak_rss_gb"],
        "memory_plan": card["training"]["memory"],
        "wall_s": row["wall_s"],
    }


def test_rows(names: dict[str, str], bench: str) -> dict:
    """Each case's entry on the held-out test questions beside the baselines; the case
    without attention dropout against the peer, with its paired-bootstrap interval."""
    from benchmarks.paired import query_average_precisions, rounded_gain

    models = ("bm25", ZERO_SHOT, FUSED, *names.values())
    aps = query_average_precisions(models, bench)
    peer, ours = names.values()
    return {
        "questions": len(aps[ours]),
        "map": {
            label: round(float(aps[m].mean()), 4)
            for label, m in {
                "bm25": "bm25",
                "zero-shot MiniLM": ZERO_SHOT,
                "MiniLM fused with BM25": FUSED,
                **names,
            }.items()
        },  # fmt: skip
        "no_dropout_vs_peer": rounded_gain(aps[ours], aps[peer]),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--forums", nargs="*", default=list(FORUMS))
    parser.add_argument("--out", type=Path, default=RESULTS / "attention_dropout.json")
    args = parser.parse_args(argv)
    # the parser and the builder on first use: --help starts without them
    import stackexchange
    from benchmarks import build_from_forum

    started, rows = time.perf_counter(), {}
    with tempfile.TemporaryDirectory(prefix="attention-dropout-") as work:
        work = Path(work)
        os.environ["ADAPTER_ZOO_HOME"] = str(work / "zoo")
        for host in args.forums:
            forum = stackexchange.parse_forum(shipped_data() / f"{host}.7z", work / "parsed")
            bench = build_from_forum(forum, work / "bench" / host, task="answer_selection",
                                     candidates=50, seed=0)  # fmt: skip
            short = host.split(".stackexchange")[0].replace(".", "-")
            names, runs = {}, {}
            for i, (case, dropout) in enumerate(CASES.items()):
                names[case] = f"{short}-case{i}"
                runs[case] = run_case(names[case], dropout, work / "parsed", host, args.steps,
                                      work / f"{names[case]}.log")  # fmt: skip
                print(f"{host} {case}: {json.dumps(runs[case])}", flush=True)
            peer, ours = (runs[c] for c in CASES)
            rows[host] = {
                "runs": runs,
                "step_ratio": round(peer["seconds_per_step"] / ours["seconds_per_step"], 2),
                "memory_ratio": round(peer["peak_rss_gb"] / ours["peak_rss_gb"], 2),
                "test": test_rows(names, f"local:{bench}"),
            }
            print(f"{host}: steps {rows[host]['step_ratio']}x faster, peak memory "
                  f"{rows[host]['memory_ratio']}x lower; test {json.dumps(rows[host]['test'])}",
                  flush=True)  # fmt: skip
    record = {
        "benchmark": "attention_dropout",
        "setup": {
            "base": BASE,
            "steps": args.steps,
            "batch_size": BATCH,
            "max_length": TRAIN_LENGTH,
            "drop_lower": OWN_DROP_LOWER,
            "cases": CASES,
        },  # fmt: skip
        "forums": rows,
        "machine": machine_info(),
        "load_average_1m": os.getloadavg()[0],
        "wall_time_s": round(time.perf_counter() - started, 1),
    }
    atomic_write_json(args.out, record)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
