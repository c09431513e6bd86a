"""``adapt``'s learner, today's step against one that does less, in the same run.

Each target's training and selection threads are split exactly as ``adapt`` splits them
(``adapter_zoo.adapt``: the decision and evaluation threads never read), and its own
adapter is trained on them for the same wall time along each path:

* ``today``: a bottleneck adapter in all 6 layers of all-MiniLM-L6-v2 (``adapt``'s own
  run);
* ``upper-K``: adapters in the top 6-K layers only (AdapterDrop's ``drop_lower`` K); the
  frozen lower layers' outputs computed once per distinct text and reused
  (``adapter_zoo.training.prefix_cache``) by every evaluation of the selection lists, the
  in-batch loss and a later epoch.

Every path trains at ``adapt``'s length (128 tokens), 32 pairs a step with one BM25 hard
negative each, evaluated on the same selection lists every ``--eval-pairs`` training pairs
(the selection lists scored at 256 tokens, as ``adapt`` does). Recorded for each path: steps
and training pairs in the wall time, pairs per second (all of it, and the training steps
alone), every evaluation's selection MAP with the pairs seen by then, the best. The
``speedup`` is a path's pairs per second over today's; ``map_at_today_pairs`` is its
selection MAP at the evaluation nearest to the pairs today's path saw in all its time, so a
path that learns less per pair shows it.

Run: ``python benchmarks/speed/train_throughput.py --work W [--targets arguana health]
[--seconds 300] [--paths today upper-3 upper-4]``; results: ``results/train_throughput.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from adapter_zoo.adapt.candidate_training import BATCH  # noqa: E402  (adapt's, timed here)
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.studies.outside_study import write_target  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
TODAY = "today"
# path -> (drop_lower, training length, learning rate: None for the default)
PATHS = {
    TODAY: (0, 128, None),
    "len64": (0, 64, None),
    "upper-2": (2, 128, None),
    "upper-3": (3, 128, None),
    "upper-4": (4, 128, None),
    "upper-4-lr2e-3": (4, 128, 2e-3),
    "upper-4-len64": (4, 64, None),
}
TARGET_SPEEDUP = 3.0
# selection MAP a faster path may lose at today's pairs and still teach "as much per pair"
MAP_TOLERANCE = 0.005
SELECTION_LISTS = 30  # learning: selection lists a path is scored on (adapt kept 50 on ArguAna)


def split_target(work: Path, target: str) -> tuple[Path, dict, list]:
    """The target's training folder as ``adapt`` writes it (its training and selection
    threads), the training record, and the selection lists (query, [positive, ...])."""
    from adapter_zoo.adapt.candidate_training import training_folder
    from adapter_zoo.adapt.heldout import SELECTION, assign, held_out_lists
    from adapter_zoo.adapt.threads import read_threads

    target_data = read_threads(write_target(work, target))
    parts = assign(target_data.threads)
    selection = held_out_lists(target_data, parts, SELECTION).positive_first()
    forum, record = training_folder(target_data, parts, selection, work / "folders" / target)
    return forum, record, selection


def train_path(forum: Path, record: dict, name: str, path: tuple, steps: int,
               eval_pairs: int) -> dict:  # fmt: skip
    """One path trained for ``steps`` steps (the step-based schedule: what a pair teaches,
    whatever the machine's load), evaluated every ``eval_pairs`` pairs; its curve."""
    from adapter_zoo.training import TrainingConfig, train
    from adapter_zoo.zoo.store import read_card

    drop_lower, length, lr = path
    config = TrainingConfig(
        mode="adapter", encoder="bi", data=str(forum.parent), forums=(forum.name,),
        name=name, base_model="minilm-l6", pair_kinds=tuple(record["pair_kinds"]),
        hard_negatives=True, max_length=length, batch_size=BATCH, max_steps=steps,
        eval_steps=max(1, eval_pairs // BATCH), seed=0, keep_start=False, overwrite=True,
        dev_queries=SELECTION_LISTS, drop_lower=drop_lower, lr=lr,
    )  # fmt: skip
    card = read_card(train(config))
    log = card["training"]["log"]
    curve = [{"pairs": r["step"] * BATCH, "selection_map": round(r["dev_map"], 4)}
             for r in log if r.get("phase") in ("train", "base")]  # fmt: skip
    return {
        "drop_lower": drop_lower,
        "max_length": length,
        "learning_rate": card["training"]["learning_rate"],
        "steps": card["training"]["steps"],
        "curve": curve,
        "best_step": card["training"]["best_step"],
        "best_selection_map": max(r["selection_map"] for r in curve),
        "prefix_cache": card["training"]["memory"].get("prefix_cache"),
    }


def time_paths(forum: Path, record: dict, lists: list, paths: dict, rounds: int,
               steps_per_round: int = 2) -> dict:  # fmt: skip
    """Seconds of a training step and of a selection scoring along each path, timed in
    alternation on the same batches (a machine whose load drifts slows every path alike):
    a step's first reading of its texts (``cold``) and a later epoch's (``warm``), and an
    evaluation of the selection lists after the first."""
    import numpy as np
    import torch
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from adapter_zoo.biencoder.encoder import transformer_of
    from adapter_zoo.training import TrainingConfig
    from adapter_zoo.training.bi import run_prefix_cache, trainable_model, training_sets

    models = {}
    for name, (drop_lower, length, _lr) in paths.items():
        config = TrainingConfig(
            mode="adapter", encoder="bi", data=str(forum.parent), forums=(forum.name,),
            name=f"time-{name}", base_model="minilm-l6", pair_kinds=tuple(record["pair_kinds"]),
            hard_negatives=True, max_length=length, batch_size=BATCH, drop_lower=drop_lower,
        )  # fmt: skip
        model = trainable_model(config, [forum.name])[0]
        model.max_seq_length = length
        params = [p for p in model.parameters() if p.requires_grad]
        cache = run_prefix_cache(config, transformer_of(model))
        models[name] = (model, MultipleNegativesRankingLoss(model),
                        torch.optim.AdamW(params, lr=1e-4), cache)  # fmt: skip
    data = training_sets(config, str(forum.parent), [forum.name])[0][forum.name]
    order = np.random.default_rng(0).permutation(len(data))
    batches = [
        data.select(order[i * BATCH : (i + 1) * BATCH]) for i in range(rounds * steps_per_round)
    ]
    texts = sorted({t for q, cands in lists for t in (q, *cands)})
    seconds = {n: {"cold": [], "warm": [], "evaluation": []} for n in models}

    def step(name, batch):
        model, loss_fn, optimizer, _ = models[name]
        model.train()
        features = [model.preprocess(batch[c]) for c in ("anchor", "positive", "negative")]
        began = time.perf_counter()
        loss = loss_fn(features, None)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return time.perf_counter() - began

    def evaluate(name):
        model = models[name][0]
        model.max_seq_length = 256  # the selection lists are scored at the entry's length
        began = time.perf_counter()
        model.encode(texts, batch_size=16)
        model.max_seq_length = paths[name][1]
        return time.perf_counter() - began

    for name, (_, _, _, cache) in models.items():
        with cache.installed() if cache else contextlib.nullcontext():
            evaluate(name)  # the start's scoring (fills the cache)
    for r in range(rounds):
        chunk = batches[r * steps_per_round : (r + 1) * steps_per_round]
        for name, (_, _, _, cache) in models.items():
            with cache.installed() if cache else contextlib.nullcontext():
                seconds[name]["cold"] += [step(name, b) for b in chunk]
                seconds[name]["warm"] += [step(name, b) for b in chunk]  # its texts again
                seconds[name]["evaluation"].append(evaluate(name))
    return {n: {k: round(float(np.median(v)), 3) for k, v in times.items()}
            for n, times in seconds.items()}  # fmt: skip


def _peak_rss_gb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def compare(speed: dict, learning: dict, block_steps: int) -> dict:
    """Each path against today's: the speed-up of a step (cold: texts read the first time;
    warm: a later epoch), of an evaluation, and of ``block_steps`` steps with their
    evaluation (adapt's run: an evaluation every 640 pairs); selection MAP at equal pairs."""
    today = speed[TODAY]

    def block(times, kind):
        return block_steps * times[kind] + times["evaluation"]

    out = {}
    for name, times in speed.items():
        out[name] = {
            "step_speedup_cold": round(today["cold"] / times["cold"], 2),
            "step_speedup_warm": round(today["cold"] / times["warm"], 2),
            "evaluation_speedup": round(today["evaluation"] / times["evaluation"], 2),
            "speedup": round(block(today, "cold") / block(times, "cold"), 2),
            "speedup_warm": round(block(today, "cold") / block(times, "warm"), 2),
            "pairs_per_s": round(BATCH * block_steps / block(times, "cold"), 2),
        }
        if name in learning and TODAY in learning:
            mine, theirs = learning[name]["curve"], learning[TODAY]["curve"]
            out[name]["map_at_equal_pairs"] = [
                {"pairs": a["pairs"], "map": a["selection_map"], "today": b["selection_map"]}
                for a, b in zip(mine, theirs) if a["pairs"] == b["pairs"]
            ]  # fmt: skip
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--targets", nargs="+", default=["arguana", "health"])
    parser.add_argument("--paths", nargs="+", default=list(PATHS), choices=list(PATHS))
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds per path")
    parser.add_argument("--timing-lists", type=int, default=20)
    parser.add_argument("--steps", type=int, default=40, help="learning: steps per path")
    parser.add_argument(
        "--learn-paths", nargs="*", default=None, help="paths of the learning part (default: all)"
    )
    parser.add_argument(
        "--learn-on",
        nargs="*",
        default=None,
        help="targets of the learning part (default: every target)",
    )
    parser.add_argument("--eval-pairs", type=int, default=640)
    parser.add_argument("--out", type=Path, default=RESULTS / "train_throughput.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["ADAPTER_ZOO_HOME"] = str(args.work / "zoo")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    import torch

    began = time.perf_counter()
    record = {"benchmark": "train_throughput", "target_speedup": TARGET_SPEEDUP,
              "map_tolerance": MAP_TOLERANCE, "selection_lists": SELECTION_LISTS,
              "timing": {"rounds": args.rounds, "lists": args.timing_lists},
              "learning_steps": args.steps, "eval_pairs": args.eval_pairs,
              "torch_threads": torch.get_num_threads(), "machine": machine_info(),
              "targets": {}}  # fmt: skip
    for target in args.targets:
        forum, training, lists = split_target(args.work, target)
        drop = {name: PATHS[name] for name in args.paths}
        learns = args.learn_on is None or target in args.learn_on
        print(f"train_throughput: {target}: timing {', '.join(drop)}", flush=True)
        speed = time_paths(forum, training, lists[: args.timing_lists], drop, args.rounds)
        print(json.dumps({target: speed}), flush=True)
        learning = {}
        for name in (args.learn_paths or args.paths) if learns else ():
            print(f"train_throughput: {target} {name}: {args.steps} steps", flush=True)
            learning[name] = train_path(forum, training, f"tp-{target}-{name}", PATHS[name],
                                        args.steps, args.eval_pairs)  # fmt: skip
            print(json.dumps({target: {name: learning[name]}}), flush=True)
        record["targets"][target] = {
            "training_pairs": training["pairs"],
            "selection_lists": min(len(lists), SELECTION_LISTS),
            "seconds": speed,
            "learning": learning,
            "compared": compare(speed, learning, args.eval_pairs // BATCH),
        }
        record["wall_time_s"] = round(time.perf_counter() - began, 1)
        args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({t: r["compared"] for t, r in record["targets"].items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
