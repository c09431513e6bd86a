"""Training in bf16 against fp32: quality and speed of the same models on the same input.

``adapter-zoo train --precision auto`` trains in bf16 only on CUDA, fp32 on every CPU
(``adapter_zoo.precision.training_precision``). This script measures the quality of models
trained in bf16 on a CPU with AVX512-BF16 but no AMX, so that the ``auto`` decision for such
CPUs is made from data (the bar: bf16-trained models within :data:`MAP_TOLERANCE` MAP of
fp32-trained ones; more is a bug). Its run there (``results/precision_training.json``) moved
some (model, set) pairs by more than that, so ``auto`` stays fp32 on such CPUs.

The models are the quality table's recipes (``quality.py``, imported, not copied): beer's and
bicycles.meta's bi-encoder adapters (``quality.BI_ENTRIES``: ``--max-steps ZOO_STEPS``) and
their cross-encoder adapters (``quality.CROSS_ENTRIES``: 60 steps). Each is trained twice with
the same seed, ``--precision fp32`` and ``--precision bf16``, into separate zoo entries
(``beer-bi-fp32``, ``beer-bi-bf16``, ...); the two precisions take turns (fp32 then bf16 for
each model), so a drift of the machine's load hits both. Each entry is then scored in fp32
(``evaluate(..., precision="fp32")``) on beer's and bicycles.meta's LAS-style test sets and
WikiQA test (as ``quality.prepare`` builds them): the training precision is the only
difference.

Recorded per model and set: MAP of the fp32-trained and of the bf16-trained entry, the delta
and whether it is within ±0.003; per model: training wall seconds of each precision (the
whole ``train`` command in this process: model load, steps, dev scoring) and their ratio
fp32/bf16, the same for the seconds outside dev scoring (dev scoring runs in the training
precision too; scoring's own bf16 speed is ``precision.py``'s), the card's
``training.precision``, best_step, final dev MAP, the dev MAP log and the dev MAP by token
limit; the load average before and after each training. The summary gives the largest
|delta|, the mean delta, the mean speed ratios and a verdict.

Results: ``results/precision_training.json`` (written atomically; ``--steps`` marks the
record a smoke run). Entries and scores already in ``--work`` are reused (a rerun only trains
and scores what is missing; the training times of reused entries come from
``--work``'s ``training_times.json``).

Run (on a quiet machine)::

    python benchmarks/speed/precision_training.py --work /tmp/precision-training

Smoke run (2 steps, one model; 6 minutes on the loaded 2-core machine)::

    python benchmarks/speed/precision_training.py --steps 2 --models beer-bi \\
        --work /tmp/ptq-smoke --out /tmp/ptq-smoke.json

Time on 2 CPU cores: the recorded run took about 17 minutes (its JSON's ``wall_s``). The
first training of a run (beer-bi in fp32) still carries a few seconds of the process's
one-time costs after :func:`warm_up` (the smoke run: 2-3 s), against its 2-3 minutes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from adapter_zoo.precision import cpu_bf16_flags  # noqa: E402
from benchmarks.machine import cpu_name, gpu_name, machine_info  # noqa: E402
from benchmarks.studies.quality import (  # noqa: E402
    BI_ENTRIES,
    CROSS_ENTRIES,
    ZERO_SHOT,
    prepare,
    score,
    train_entry,
)
from stackexchange.io import atomic_write_json  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
RECIPES = {**BI_ENTRIES, **CROSS_ENTRIES}
PRECISIONS = ("fp32", "bf16")  # the order they take turns in
MAP_TOLERANCE = 0.003  # the bar for bf16 against fp32
# what ``train`` imports, some of it only on first use (trainer, losses, BM25 negatives)
WARM_MODULES = ("accelerate", "bm25s", "transformers.trainer", "adapter_zoo.cli",
                "adapter_zoo.losses.cross", "adapter_zoo.training.bi",
                "adapter_zoo.training.cross", "adapter_zoo.training.models",
                "adapter_zoo.training.trainer")  # fmt: skip


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def warm_up() -> None:
    """Import what ``train`` imports and read the base model once, so that the first timed
    training (an fp32 one) does not pay the process's one-time costs alone."""
    # heavy imports, here rather than at the top: the script's --help stays instant
    import adapter_zoo

    for module in WARM_MODULES:
        importlib.import_module(module)
    adapter_zoo.load(ZERO_SHOT, device="cpu", precision="fp32")


def train_timed(work: Path, name: str, argv: list[str]) -> dict:
    """``quality.train_entry`` with the load average around it; the training time is kept in
    ``work/training_times.json`` so that a rerun, which reuses the entry, still has it."""
    times_file = work / "training_times.json"
    times = json.loads(times_file.read_text()) if times_file.is_file() else {}
    before = loadavg()
    card = train_entry(work, name, *argv)
    if card["train_seconds"] is not None:  # trained now: the time and load are this run's
        times[name] = {"seconds": card["train_seconds"], "loadavg_before": before,
                       "loadavg_after": loadavg()}  # fmt: skip
        times_file.write_text(json.dumps(times, indent=2) + "\n")
    card["timing"] = times.get(name, {"seconds": None})
    return card


def trained_row(card: dict) -> dict:
    """What one trained entry's card says about its training."""
    training = card["training"]
    log = [r for r in training.get("log", []) if r.get("dev_map") is not None]
    # the length phase scores the selected state again at other token limits, at step 0
    by_step = [r for r in log if r.get("phase") != "length"]
    dev_seconds = round(sum(r.get("dev_seconds") or 0 for r in log), 1)
    seconds = card["timing"]["seconds"]
    return {
        "entry": card.get("name"),
        "training_precision": training.get("precision"),
        "steps": training.get("steps"),
        "best_step": training.get("best_step"),
        "seed": card.get("seed"),
        "max_length": card.get("max_length"),
        "dev_map": (card.get("scores") or {}).get("dev_map"),
        "dev_map_by_step": {r["step"]: round(r["dev_map"], 4) for r in by_step},
        "dev_map_by_length": card.get("dev_map_by_length"),
        "dev_seconds": dev_seconds,
        "train_seconds": seconds,
        # the optimizer steps, model load and writing: dev scoring runs in the training
        # precision too, and scoring's own bf16 speed is precision.py's measurement
        "seconds_outside_dev": round(seconds - dev_seconds, 1) if seconds is not None else None,
        "loadavg_before": card["timing"].get("loadavg_before"),
        "loadavg_after": card["timing"].get("loadavg_after"),
    }


def compare(work: Path, model: str, sets: dict, steps: int | None) -> dict:
    """Train ``model`` in fp32 then in bf16, score both in fp32 on every set."""
    argv = RECIPES[model] + (["--max-steps", str(steps)] if steps else [])  # the last one wins
    suffix = f"-s{steps}" if steps else ""  # a smoke run's entries never pass for full ones
    runs = {}
    for precision in PRECISIONS:
        name = f"{model}-{precision}{suffix}"
        card = train_timed(work, name, [*argv, "--precision", precision])
        card.setdefault("name", name)
        runs[precision] = trained_row(card)
    test = {}
    for set_name, bench in sets.items():
        maps = {p: score(work, runs[p]["entry"], bench, "test", precision="fp32")["metrics"]["map"]
                for p in PRECISIONS}  # fmt: skip
        delta = maps["bf16"] - maps["fp32"]
        test[set_name] = {"map_fp32_trained": maps["fp32"], "map_bf16_trained": maps["bf16"],
                          "delta": round(delta, 6),
                          "within_tolerance": abs(delta) <= MAP_TOLERANCE}  # fmt: skip
    return {"argv": argv, "training": runs, "speed_ratio_fp32_over_bf16": ratio(runs, "train_seconds"),
            "speed_ratio_outside_dev": ratio(runs, "seconds_outside_dev"), "test": test}  # fmt: skip


def ratio(runs: dict, key: str) -> float | None:
    """fp32's ``key`` seconds over bf16's (None when either was not measured)."""
    fp32, bf16 = (runs[p][key] for p in PRECISIONS)
    return round(fp32 / bf16, 3) if fp32 and bf16 else None


def summarize(rows: dict, smoke: bool, chip: str) -> dict:
    """Largest |delta|, mean delta, mean speed ratio, and the verdict they give for
    ``chip`` (the machine's kind, as the verdict names it)."""
    deltas = [t["delta"] for row in rows.values() for t in row["test"].values()]

    def mean_of(key: str) -> float | None:
        values = [row[key] for row in rows.values() if row[key] is not None]
        return sum(values) / len(values) if values else None

    outside = [f"{m} on {s}" for m, row in rows.items() for s, t in row["test"].items()
               if not t["within_tolerance"]]  # fmt: skip
    mean_ratio = mean_of("speed_ratio_fp32_over_bf16")
    speed = f"{mean_ratio:.2f}x fp32's training speed" if mean_ratio else "speed not measured"
    if outside:
        verdict = (f"bf16 training moved test MAP by more than {MAP_TOLERANCE} on "
                   f"{len(outside)} of {len(deltas)} (model, set) pairs ({', '.join(outside)}); "
                   f"{speed}: keep auto = fp32 on {chip}")  # fmt: skip
    elif mean_ratio is not None and mean_ratio > 1:
        verdict = (f"bf16 training within ±{MAP_TOLERANCE} MAP of fp32 on all {len(deltas)} "
                   f"(model, set) pairs at {speed}: the data support auto = bf16 for training "
                   f"on {chip}")  # fmt: skip
    else:
        verdict = (f"bf16 training within ±{MAP_TOLERANCE} MAP of fp32 on all {len(deltas)} "
                   f"(model, set) pairs but not faster ({speed}): keep auto = fp32")  # fmt: skip
    if smoke:
        verdict = f"smoke run (--steps), not a measurement: {verdict}"
    return {
        "pairs": len(deltas),
        "max_abs_delta": max(map(abs, deltas)),
        "mean_delta": sum(deltas) / len(deltas),
        "within_tolerance": not outside,
        "mean_speed_ratio_fp32_over_bf16": mean_ratio,
        "mean_speed_ratio_outside_dev": mean_of("speed_ratio_outside_dev"),
        "verdict": verdict,
    }


def print_row(model: str, row: dict) -> None:
    runs = row["training"]
    nan = float("nan")
    seconds, outside = (" / ".join(f"{runs[p][key] or nan:.0f}" for p in PRECISIONS)
                        for key in ("train_seconds", "seconds_outside_dev"))  # fmt: skip
    print(f"{model:16s} train s fp32/bf16 {seconds} ({row['speed_ratio_fp32_over_bf16'] or nan:.2f}x; "
          f"outside dev {outside}, {row['speed_ratio_outside_dev'] or nan:.2f}x), best step "
          f"{runs['fp32']['best_step']}/{runs['bf16']['best_step']}, dev MAP "
          f"{runs['fp32']['dev_map']:.4f}/{runs['bf16']['dev_map']:.4f}", flush=True)  # fmt: skip
    for set_name, t in row["test"].items():
        print(f"  {set_name:10s} MAP fp32-trained {t['map_fp32_trained']:.4f}  bf16-trained "
              f"{t['map_bf16_trained']:.4f}  delta {t['delta']:+.4f}  "
              f"{'within' if t['within_tolerance'] else 'OUTSIDE'} ±{MAP_TOLERANCE}", flush=True)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/precision-training"))
    parser.add_argument("--out", type=Path, default=RESULTS / "precision_training.json")
    parser.add_argument("--models", nargs="+", choices=list(RECIPES), default=list(RECIPES))
    parser.add_argument("--steps", type=int, default=None,
                        help="override every recipe's --max-steps (a smoke run; its record "
                        "says so)")  # fmt: skip
    args = parser.parse_args()
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be at least 1")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ["ADAPTER_ZOO_HOME"] = str(work / "zoo")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    sets = prepare(work)
    warm_up()
    rows = {}
    for model in args.models:
        rows[model] = compare(work, model, sets, args.steps)
        print_row(model, rows[model])
    from adapter_zoo.devices import pick_device

    gpu = gpu_name(pick_device())  # the device train and evaluate picked
    chip = gpu or (" and ".join(cpu_bf16_flags()).upper().replace("_", "-") + " CPUs")
    summary = summarize(rows, smoke=args.steps is not None, chip=chip)
    record = {
        "benchmark": "precision_training",
        "smoke": args.steps is not None,
        "gpu": gpu,
        "cpu": cpu_name(),
        "cpu_bf16_flags": list(cpu_bf16_flags()),
        "scoring_precision": "fp32",
        "sets": sets,
        "map_tolerance": MAP_TOLERANCE,
        "models": rows,
        "summary": summary,
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "wall_s": round(time.perf_counter() - started, 1),
        "machine": machine_info(),
    }
    atomic_write_json(args.out, record)
    print(f"max |delta| {summary['max_abs_delta']:.4f}, mean delta {summary['mean_delta']:+.4f}, "
          f"mean speed ratio fp32/bf16 {summary['mean_speed_ratio_fp32_over_bf16'] or float('nan'):.2f}x")  # fmt: skip
    print(summary["verdict"])
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
