"""Training steps against the chip's matmul peak: old path and new, side by side.

In one run, on one machine:

1. Matmul peak: fp32 and bf16 GFLOP/s of a matmul of MiniLM's feed-forward shape
   (:func:`benchmarks.speed.precision.matmul_peak`, the same microbenchmark).
2. Training steps: ``adapter-zoo train`` of the default bi-encoder adapter (all-MiniLM-L6-v2,
   fp32, 32 pairs a step, 256 tokens, the default memory plan) on the real beer forum for
   ``--steps`` steps, by four paths taking turns, ``--repeats`` times each: ``bounded``
   (``--old``'s code with a one-byte memory budget: GradCache and recomputed activations, the
   default before memory budgets, which the issue's 2.5x is measured against), ``old``
   (``--old``'s code, today's default: batches of random texts), ``new`` (this checkout:
   batches grouped by length, :mod:`adapter_zoo.training.batches`, in fp32) and ``bf16``
   (this checkout with ``--precision bf16``: the frozen base's linear layers in bf16, the
   adapter and optimizer in fp32; refused on a CPU without bf16). Each run is a subprocess
   whose trainer is timed step by step (from one step's end to the next, dev scoring left
   out; the first step is warm-up) and whose batches are recorded as the model saw them.
3. Per path, medians over the repeats: steps/s, tokens/s (real tokens and padded ones, and the
   padded share), achieved GFLOP/s counted from the model's shapes as a share of the fp32 and
   bf16 peaks, and dev MAP after the same ``--steps`` steps (the run's own dev evaluation at
   its last step; the paths train with the same seed, so the repeats agree).

FLOPs of a training step (:func:`step_flops`), a multiply-add counted as 2: for each text
column padded to ``B x L`` and each transformer layer, the forward pass costs
``2 B L P`` for the layer's linear weights (``P`` of them: Q, K, V, attention output,
feed-forward, adapters) plus ``4 B L^2 H`` for the attention scores and their use on the
values. Backward costs a frozen weight's forward once more (the input gradient) and a trained
weight's twice (input and weight gradients), the attention matmuls twice (both operands); layers
below the lowest trained weight run forward only. So ``2 B L (2 P_frozen + 3 P_trained) +
12 B L^2 H`` per trained layer, ``2 B L P + 4 B L^2 H`` below. Embeddings, norms, softmax, the
loss and recomputation (the bounded plan's second forward) are not counted: the count is the
work the step needs, so a path that computes more for it shows a lower share.

Run: ``python benchmarks/speed/training_peak.py --old ../old`` with ``../old`` a checkout of
the commit to compare with (``git worktree add ../old <commit>``); writes
results/training_peak.json (about 30 minutes on 2 CPU cores with the defaults).
``results/training_peak_amx.json`` is ``--paths new bf16 --steps 8 --repeats 1`` on an Intel
Xeon with AMX-BF16 (a lent GPU machine's 16-core host, the GPU hidden): 2 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKER = "--worker"
if WORKER in sys.argv:  # a worker imports the code it measures, from its PYTHONPATH only
    sys.path.remove(str(Path(__file__).resolve().parent))
else:
    sys.path.insert(0, str(ROOT))

SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results"
HOST = "beer.stackexchange.com"
TRAIN = ["--encoder", "bi", "--mode", "adapter", "--lr", "1e-3"]  # lr: recipes/quickstart.py
PATHS = ("bounded", "old", "new", "bf16")
PRECISION = {"bounded": "fp32", "old": "fp32", "new": "fp32", "bf16": "bf16"}
TARGET_RATIO = 2.5  # the target: training steps/s against the default before memory budgets
TARGET_PEAK_SHARE = 0.40
MAP_TOLERANCE = 0.005


def step_flops(columns: list[tuple[int, int]], layers: list[dict], hidden: int) -> int:
    """FLOPs of one training step over text columns padded to ``(batch, length)``.

    Args:
        columns: each text column's padded shape.
        layers: per transformer layer, ``frozen`` and ``trained`` linear weight counts.
        hidden: the hidden size (attention's width).

    Example:
        >>> layers = [{"frozen": 10, "trained": 0}, {"frozen": 10, "trained": 1}]
        >>> step_flops([(2, 4)], layers, 8) == (2*8*10 + 4*256) + (2*8*(2*10 + 3*1) + 12*256)
        True
    """
    lowest = next((i for i, layer in enumerate(layers) if layer["trained"]), len(layers))
    total = 0
    for batch, length in columns:
        tokens, attention = batch * length, batch * length * length * hidden
        for i, layer in enumerate(layers):
            if i < lowest:
                total += 2 * tokens * (layer["frozen"] + layer["trained"]) + 4 * attention
            else:
                total += 2 * tokens * (2 * layer["frozen"] + 3 * layer["trained"])
                total += 12 * attention
    return total


def model_shapes(model) -> dict:
    """Per layer of a SentenceTransformer's transformer, its frozen and trained linear
    weights; and the hidden size."""
    import torch

    transformer = model[0].auto_model
    config = transformer.config
    layers = [{"frozen": 0, "trained": 0} for _ in range(config.num_hidden_layers)]
    for name, module in transformer.named_modules():
        parts = name.split(".")
        if isinstance(module, torch.nn.Linear) and "layer" in parts:
            index = int(parts[parts.index("layer") + 1])
            kind = "trained" if module.weight.requires_grad else "frozen"
            layers[index][kind] += module.weight.numel()
    return {"hidden": config.hidden_size, "layers": layers}


def worker(out: Path, argv: list[str]) -> int:
    """Run ``adapter-zoo train argv`` with its steps timed and its batches recorded."""
    from transformers import Trainer
    from transformers.trainer_callback import CallbackHandler

    record = {"ends": [], "resumes": [], "batches": [], "shapes": None}
    step_end, training_step = CallbackHandler.on_step_end, Trainer.training_step

    def timed_step_end(self, *args, **kwargs):
        record["ends"].append(time.perf_counter())
        try:
            return step_end(self, *args, **kwargs)  # dev scoring runs in here
        finally:
            record["resumes"].append(time.perf_counter())

    def recorded_step(self, model, inputs, *args, **kwargs):
        if record["shapes"] is None:
            record["shapes"] = model_shapes(model)
        record["batches"].append({
            key.removesuffix("_input_ids"): [list(value.shape),
                int(inputs[key.removesuffix("input_ids") + "attention_mask"].sum())]
            for key, value in inputs.items() if key.endswith("_input_ids")
        })  # fmt: skip
        return training_step(self, model, inputs, *args, **kwargs)

    CallbackHandler.on_step_end, Trainer.training_step = timed_step_end, recorded_step
    import adapter_zoo
    from adapter_zoo.cli import main

    record["code"] = str(Path(adapter_zoo.__file__).parent.parent)
    code = main(argv)
    out.write_text(json.dumps({**record, "exit_code": code}), encoding="utf-8")
    return code


def run(path: str, code: Path, steps: int, parsed: Path, work: Path, round_: int) -> dict:
    """One training run of ``path`` in a subprocess; its steps, tokens and dev MAP."""
    name = f"{path}-{round_}"
    argv = ["train", "--data", str(parsed), "--forums", HOST, "--name", name, "--max-steps",
            str(steps), "--eval-steps", str(steps), "--overwrite", *TRAIN,
            *(["--memory-budget", "1"] if path == "bounded" else []),
            # This checkout's paths name their precision rather than trust auto's choice.
            *(["--precision", PRECISION[path]] if path in ("new", "bf16") else [])]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(code), "ADAPTER_ZOO_HOME": str(work / "zoo"),
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    out = work / f"{name}.json"
    log = work / f"{name}.log"
    load = os.getloadavg()[0]
    with open(log, "wb") as sink:
        done = subprocess.run(
            [sys.executable, __file__, WORKER, str(out), *argv],
            env=env, stdout=sink, stderr=subprocess.STDOUT, check=False,
        )  # fmt: skip
    if done.returncode:
        raise SystemExit(log.read_text(errors="replace")[-3000:])
    record = json.loads(out.read_text(encoding="utf-8"))
    lines = (work / "zoo" / name / "training_log.jsonl").read_text(encoding="utf-8")
    last = next(r for r in map(json.loads, lines.splitlines())
                if r.get("phase") == "train" and r["step"] == steps)  # fmt: skip
    return {**summarize(record), "dev_map": last["dev_map"], "code": record["code"],
            "load_average_1m_before": round(load, 2)}  # fmt: skip


def summarize(record: dict) -> dict:
    """Seconds, tokens and FLOPs of the timed steps (all but the first)."""
    seconds = [end - resume for end, resume in zip(record["ends"][1:], record["resumes"])]
    shapes, batches = record["shapes"], record["batches"][1 : len(seconds) + 1]
    padded = sum(b * n for batch in batches for (b, n), _ in batch.values())
    real = sum(tokens for batch in batches for _, tokens in batch.values())
    flops = sum(
        step_flops([tuple(shape) for shape, _ in batch.values()], shapes["layers"],
                   shapes["hidden"])
        for batch in batches
    )  # fmt: skip
    total = sum(seconds)
    return {
        "timed_steps": len(seconds),
        "s_per_step": total / len(seconds),
        "steps_per_s": len(seconds) / total,
        "real_tokens_per_s": real / total,
        "padded_tokens_per_s": padded / total,
        "padded_share": 1 - real / padded,
        "gflops": flops / total / 1e9,
        "flops_per_step": flops / len(seconds),
    }


def median_of(runs: list[dict], peak: dict) -> dict:
    keys = [k for k, v in runs[0].items() if isinstance(v, (int, float))]
    row = {k: statistics.median(r[k] for r in runs) for k in keys}
    row["share_of_fp32_peak"] = row["gflops"] / peak["fp32"]
    row["share_of_bf16_peak"] = row["gflops"] / peak["bf16"]
    row["s_per_step_each"] = [round(r["s_per_step"], 3) for r in runs]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, help="checkout of the old code (paths old, bounded)")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=2, help="runs of each path, in turns")
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    parser.add_argument("--matmul", type=int, nargs=3, default=[4096, 1536, 384])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "training_peak.json")
    args = parser.parse_args()
    if args.old is None and {"old", "bounded"} & set(args.paths):
        parser.error("--old is needed for the paths old and bounded")

    import stackexchange
    from benchmarks.machine import cpu_name, machine_info
    from benchmarks.speed.precision import matmul_peak
    from stackexchange.io import atomic_write_json

    started = time.perf_counter()
    work = args.work or Path(tempfile.mkdtemp(prefix="training-peak-"))
    parsed = work / "parsed"
    if not (parsed / HOST).is_dir():
        stackexchange.parse_forum(SHARED / "stackexchange" / f"{HOST}.7z", parsed)
    peak = matmul_peak(*args.matmul, repeats=5)
    print("matmul peak: " + ", ".join(f"{k} {v:.0f} GFLOP/s" for k, v in peak["gflops"].items()))
    old = args.old.resolve() if args.old else None
    codes = {"bounded": old, "old": old, "new": ROOT, "bf16": ROOT}
    runs: dict[str, list[dict]] = {p: [] for p in args.paths}
    for round_ in range(args.repeats):  # the paths take turns: a noisy spell hits all
        for path in args.paths:
            runs[path].append(run(path, codes[path], args.steps, parsed, work, round_))
            r = runs[path][-1]
            print(f"  round {round_} {path:<8}{r['s_per_step']:7.2f} s/step  "
                  f"{r['gflops']:6.1f} GFLOP/s  dev MAP {r['dev_map']:.4f}", flush=True)  # fmt: skip
    rows = {p: median_of(r, peak["gflops"]) for p, r in runs.items()}
    ratios = {
        f"{fast}_over_{p}": rows[p]["s_per_step"] / rows[fast]["s_per_step"]
        for fast in ("new", "bf16")
        for p in rows
        if fast in rows and p != fast and not (fast == "new" and p == "bf16")
    }
    record = {
        "benchmark": "training_peak",
        "forum": HOST,
        "base_model": "minilm-l6",
        "train": " ".join(TRAIN),
        "steps": args.steps,
        "precision": {p: PRECISION[p] for p in rows},
        "cpu": cpu_name(),
        "matmul": peak,
        "paths": rows,
        "runs": runs,
        "ratios": ratios,
        "targets": {
            "ratio_over_bounded": TARGET_RATIO,
            "share_of_bf16_peak": TARGET_PEAK_SHARE,
            "map_tolerance": MAP_TOLERANCE,
        },  # fmt: skip
        "old_code": str(args.old),
        "wall_s": time.perf_counter() - started,
        "machine": machine_info(),
    }
    atomic_write_json(args.out, record)
    print(table(record))
    print(f"wrote {args.out}")
    return 0


def table(record: dict) -> str:
    """The paths side by side, as Markdown."""
    lines = ["| path | s/step | steps/s | real tok/s | padded tok/s | padded share | GFLOP/s "
             "| of fp32 peak | of bf16 peak | dev MAP |", "|" + "---|" * 10]  # fmt: skip
    for path, row in record["paths"].items():
        lines.append(
            f"| {path} | {row['s_per_step']:.2f} | {row['steps_per_s']:.3f} | "
            f"{row['real_tokens_per_s']:.0f} | {row['padded_tokens_per_s']:.0f} | "
            f"{row['padded_share']:.0%} | {row['gflops']:.1f} | {row['share_of_fp32_peak']:.0%} "
            f"| {row['share_of_bf16_peak']:.0%} | {row['dev_map']:.4f} |"
        )
    ratios = ", ".join(f"{k} {v:.2f}x" for k, v in record["ratios"].items())
    return "\n".join(lines) + f"\n{ratios}"


if __name__ == "__main__":
    if sys.argv[1:2] == [WORKER]:
        raise SystemExit(worker(Path(sys.argv[2]), sys.argv[3:]))
    raise SystemExit(main())
