"""Scoring in bf16 against fp32, and both against the chip's measured matmul peak.

In one run, on one machine:

1. Matmul peak: a ``M x K`` by ``K x N`` matmul (default 4096 x 1536 by 1536 x 384, the shape
   of MiniLM's feed-forward on 4096 tokens) in fp32 and in bf16, taking turns, best of
   ``--repeats`` rounds: GFLOP/s = 2 M K N / seconds.
2. Scoring throughput: the zero-shot all-MiniLM-L6-v2 bi-encoder (``sbert:minilm-l6``, loaded
   through ``adapter_zoo.load`` with ``precision="fp32"``, today's path, and ``"bf16"``:
   its linear layers in bf16, the rest float32, see ``adapter_zoo.precision``)
   scoring every (question, candidate) pair of WikiQA's test split, real texts; the two
   take turns, best of ``--repeats``. Reported as pairs/s and texts/s (every distinct text
   is embedded once) and as achieved GFLOP/s counted from the model's shapes over the padded
   batches sentence-transformers runs (texts sorted by length, ``--batch-size`` per batch,
   each padded to its longest; sentence-transformers sorts by characters, this count by
   tokens, so it is close, not exact): per layer and padded token 8 H^2 (Q, K, V and output
   projections) + 4 H I (feed-forward) + 4 L H (attention scores and their use on the
   values), a multiply-add counted as 2 FLOPs (:func:`encoder_flops`). The share is of the
   bf16 peak measured in step 1 (and fp32's of the fp32 peak).
3. Quality: MAP of both on WikiQA test and on the beer forum's LAS-style answer-selection set
   (the real dump in ../shared/data, parsed and built as the quickstart builds it, 50
   candidates), the correlation of their scores, and how many lists' AP moved (on 59 lists,
   one near-tie flipped at the top moves MAP by 0.008); the tolerance is 0.003 MAP.

``--device cuda`` measures a GPU instead (matmul peak and scoring there).

Results: ``results/precision.json`` (the 2-core AMD EPYC with AVX512-BF16 here);
``precision_amx.json`` and ``precision_amx_16cores.json`` (an Intel Xeon with AMX-BF16, a lent
GPU machine's host with the GPU hidden: ``taskset -c 0,1`` with ``OMP_NUM_THREADS=2``, and all
16 cores); ``precision_h100.json`` and ``precision_h100_bs256.json`` (``--device cuda`` on an
H100, ``--batch-size`` 64 and 256). They are why ``auto`` is fp32 on CPUs and bf16 on CUDA
(``adapter_zoo.precision``). Run: ``python benchmarks/speed/precision.py --work
/tmp/precision`` (about 10 minutes on 2 CPU cores here; on the Xeon 105 s on 2 cores and
32 s on 16; 23 s on the H100).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.machine import cpu_name, gpu_name, machine_info  # noqa: E402
from stackexchange.lists import BENCHMARK_FILE  # noqa: E402

SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results"
MODEL = "sbert:minilm-l6"
MAP_TOLERANCE = 0.003
TARGET_SPEEDUP = 2.0
TARGET_PEAK_SHARE = 0.40


def matmul_peak(m: int, k: int, n: int, repeats: int, device: str = "cpu") -> dict:
    """Best GFLOP/s of ``(m x k) @ (k x n)`` in fp32 and bf16 on ``device``, taking turns."""
    import torch

    torch.manual_seed(0)
    a, b = torch.randn(m, k, device=device), torch.randn(k, n, device=device)
    # CUDA kernels run asynchronously: the clock stops once they have finished.
    wait = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    operands = {"fp32": (a, b), "bf16": (a.bfloat16(), b.bfloat16())}
    best = {name: float("inf") for name in operands}
    for x, y in operands.values():  # warm-up (oneDNN picks its kernels)
        for _ in range(3):
            x @ y
    for _ in range(repeats):
        for name, (x, y) in operands.items():
            inner = 10
            started = time.perf_counter()
            for _ in range(inner):
                x @ y
            wait()
            best[name] = min(best[name], (time.perf_counter() - started) / inner)
    flops = 2 * m * k * n
    return {
        "shape": [m, k, n],
        "gflops": {name: flops / seconds / 1e9 for name, seconds in best.items()},
        "ratio_bf16_over_fp32": best["fp32"] / best["bf16"],
    }


def encoder_flops(lengths, config, batch_size: int) -> tuple[int, int]:
    """(FLOPs over the padded batches, tokens without padding) of a BERT-style encoder
    embedding texts of ``lengths`` tokens: sorted longest first, ``batch_size`` per batch,
    each batch padded to its longest, as sentence-transformers' ``encode`` runs them."""
    h, i, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    ordered = sorted(lengths, reverse=True)
    total = 0
    for start in range(0, len(ordered), batch_size):
        batch = ordered[start : start + batch_size]
        length = batch[0]
        per_token = 2 * (4 * h * h + 2 * h * i) + 2 * 2 * length * h  # matmuls, multiply-add = 2
        total += layers * per_token * length * len(batch)
    return total, sum(lengths)


def wikiqa_pairs():
    import benchmarks

    dataset = benchmarks.get("wikiqa").load("test", SHARED / "benchmarks")
    pairs = [(q, c) for q, cands in zip(dataset["query"], dataset["candidates"]) for c in cands]
    return dataset, pairs


def las_set(work: Path):
    """The beer forum's LAS-style answer-selection test set, from the real dump."""
    import benchmarks
    import stackexchange

    dump = SHARED / "stackexchange" / "beer.stackexchange.com.7z"
    bench = work / "benchmarks" / "beer"
    if not (bench / BENCHMARK_FILE).is_file():
        forum = stackexchange.parse_forum(dump, work / "parsed")
        benchmarks.build_from_forum(forum, bench, candidates=50, seed=0)
    return benchmarks.get(f"local:{bench}").load("test")


def dataset_map(scores, dataset) -> float:
    from adapter_zoo.metrics import evaluate_rankings
    from benchmarks.baselines import split_per_query

    return evaluate_rankings(split_per_query(scores, dataset), dataset["labels"])["map"]


def lists_moved(scores_a, scores_b, dataset) -> dict:
    """How many lists' average precision differs between two scorings, and by how much at
    most: a MAP delta on a small set can be one near-tie that flipped."""
    from adapter_zoo.metrics import average_precision
    from benchmarks.baselines import split_per_query

    lists = zip(split_per_query(scores_a, dataset), split_per_query(scores_b, dataset),
                dataset["labels"])  # fmt: skip
    moves = [
        average_precision(b, labels) - average_precision(a, labels)
        for a, b, labels in lists
        if any(label > 0 for label in labels)
    ]
    moved = [m for m in moves if abs(m) > 1e-9]
    return {"lists": len(moves), "lists_moved": len(moved),
            "largest_ap_move": max(moved, key=abs) if moved else 0.0}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/precision"))
    parser.add_argument("--repeats", type=int, default=3, help="rounds of each (best counts)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--matmul", type=int, nargs=3, default=[4096, 1536, 384])
    parser.add_argument("--device", default="cpu", help="cpu, or cuda to measure a GPU")
    parser.add_argument("--out", type=Path, default=RESULTS / "precision.json")
    args = parser.parse_args()
    os.environ.setdefault("ADAPTER_ZOO_HOME", str(args.work / "zoo"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import numpy as np

    import adapter_zoo
    from adapter_zoo.precision import cpu_bf16_flags
    from stackexchange.io import atomic_write_json

    started = time.perf_counter()
    peak = matmul_peak(*args.matmul, repeats=args.repeats, device=args.device)
    print(f"matmul {args.matmul}: " + ", ".join(f"{k} {v:.0f} GFLOP/s"
                                              for k, v in peak["gflops"].items()))  # fmt: skip
    models = {p: adapter_zoo.load(MODEL, device=args.device, precision=p) for p in ("fp32", "bf16")}
    dataset, pairs = wikiqa_pairs()
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    fp32_model = models["fp32"]
    lengths = [len(ids) for ids in fp32_model.tokenizer(
        texts, truncation=True, max_length=fp32_model.max_length)["input_ids"]]  # fmt: skip
    config = fp32_model.model[0].auto_model.config
    flops, tokens = encoder_flops(lengths, config, args.batch_size)
    seconds = {p: float("inf") for p in models}
    scores = {}
    for model in models.values():  # warm-up on a slice
        model.score(pairs[:64], batch_size=args.batch_size)
    for _ in range(args.repeats):
        for p, model in models.items():
            began = time.perf_counter()
            scores[p] = model.score(pairs, batch_size=args.batch_size)
            seconds[p] = min(seconds[p], time.perf_counter() - began)
            print(f"  {p}: {seconds[p]:.1f} s best so far")
    throughput = {
        p: {
            "seconds": seconds[p],
            "pairs_per_s": len(pairs) / seconds[p],
            "texts_per_s": len(texts) / seconds[p],
            "tokens_per_s": tokens / seconds[p],
            "gflops": flops / seconds[p] / 1e9,
            "share_of_own_peak": flops / seconds[p] / 1e9 / peak["gflops"][p],
            "share_of_bf16_peak": flops / seconds[p] / 1e9 / peak["gflops"]["bf16"],
        }
        for p in models
    }
    speedup = seconds["fp32"] / seconds["bf16"]
    quality = {"wikiqa": {p: dataset_map(scores[p], dataset) for p in models}}
    quality["wikiqa"]["score_correlation"] = float(
        np.corrcoef(scores["fp32"], scores["bf16"])[0, 1]
    )
    quality["wikiqa"].update(lists_moved(scores["fp32"], scores["bf16"], dataset))
    las = las_set(args.work)
    las_pairs = [(q, c) for q, cands in zip(las["query"], las["candidates"]) for c in cands]
    las_scores = {p: m.score(las_pairs, batch_size=args.batch_size) for p, m in models.items()}
    quality["beer-las"] = {p: dataset_map(las_scores[p], las) for p in models}
    quality["beer-las"]["score_correlation"] = float(
        np.corrcoef(las_scores["fp32"], las_scores["bf16"])[0, 1]
    )
    quality["beer-las"].update(lists_moved(las_scores["fp32"], las_scores["bf16"], las))
    for row in quality.values():
        row["delta"] = row["bf16"] - row["fp32"]
    within = all(abs(row["delta"]) <= MAP_TOLERANCE for row in quality.values())
    share = throughput["bf16"]["share_of_bf16_peak"]
    record = {
        "benchmark": "precision",
        "model": MODEL,
        "data": f"WikiQA test: {len(pairs)} pairs, {len(texts)} distinct texts, {tokens} tokens",
        "device": args.device,
        "gpu": gpu_name(args.device),
        "cpu": cpu_name(),
        "cpu_bf16_flags": list(cpu_bf16_flags()),
        "matmul": peak,
        "flops_per_pass": flops,
        "scoring": throughput,
        "speedup_bf16_over_fp32": speedup,
        "quality_map": quality,
        "targets": {
            "speedup": TARGET_SPEEDUP,
            "map_tolerance": MAP_TOLERANCE,
            "share_of_bf16_peak": TARGET_PEAK_SHARE,
        },
        "meets_targets": {
            "speedup": speedup >= TARGET_SPEEDUP,
            "quality": within,
            "share_of_bf16_peak": share >= TARGET_PEAK_SHARE,
        },
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "wall_s": time.perf_counter() - started,
        "machine": machine_info(),
    }
    atomic_write_json(args.out, record)
    print(f"scoring: fp32 {throughput['fp32']['pairs_per_s']:.0f} pairs/s, bf16 "
          f"{throughput['bf16']['pairs_per_s']:.0f} pairs/s ({speedup:.2f}x); bf16 at "
          f"{share:.0%} of the bf16 matmul peak")  # fmt: skip
    for name, row in quality.items():
        print(f"{name}: MAP fp32 {row['fp32']:.4f} bf16 {row['bf16']:.4f} "
              f"({row['delta']:+.4f}), r = {row['score_correlation']:.5f}, "
              f"{row['lists_moved']} of {row['lists']} lists' AP moved "
              f"(largest {row['largest_ap_move']:+.3f})")  # fmt: skip
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
