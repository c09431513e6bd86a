"""Quality of the zoo's models against the model a user already has, on held-out questions.

Per set (beer and bicycles.meta: LAS-style answer selection from each forum's held-out test
questions, 50 candidates, as the quickstart builds them; WikiQA test), MAP and P@1 with wall
times of: BM25, the zero-shot all-MiniLM-L6-v2 bi-encoder (``sbert:minilm-l6``: public forums
are its home ground), bi-encoder adapters of each forum, the MultiCQA multi-task bi-encoder
adapter over both forums, their AdapterFusion, full bi-encoder fine-tuning (the peer), each
forum's cross-encoder adapter, and compositions whose weights are
chosen on the forum's dev split (score fusion with BM25 or the cross-encoder, rerank).

"Best for the forum" is picked on the dev split of that forum's set (never on test) among the
zero-shot base, the forum's zoo models and its compositions; its test MAP is compared with
the zero-shot bi-encoder's (target: +0.02).

The learning-rate table trains beer's bi-encoder adapter at each rate of ``LEARNING_RATES``,
scores the dev lists every ``EVAL_STEPS`` steps (the steps axis) and reports the selected
state's test MAP; ``adapter_zoo.training.rates``' bi-encoder rates come from it, and the zoo's
step count from the dev plateau it shows.

The AdapterDrop table gives beer's bi-encoder adapter without adapters in the
lowest k of MiniLM's 6 layers (k in ``DROP_LOWER``) on every set.

The TANDA table (Garg et al., 2020, with adapters): on WikiQA train, at equal steps, a new
bi-encoder adapter against forum adapters continued there (``--finetune tanda --transfer
<forum adapter>``: TANDA's transfer step is the forum training, its adapt step WikiQA), each
selected on WikiQA dev and scored on WikiQA test, over ``TANDA_SEEDS``.

The LoRA table: beer's bi-encoder adapter as LoRA (``--method lora``, r=8,
alpha=16 on query and value) against the SeqBn adapter (``beer-bi``) at the same steps and
rate, test MAP on beer's and bicycles.meta's sets, trainable parameters, and training speed
in pairs/s: optimizer steps of MultipleNegativesRankingLoss on beer's pairs (batch 32, 128
tokens) on the model ``train`` builds, the methods taking turns in the same run
(``training_speeds``; ``--only lora`` runs this table alone).

``--only zoo`` trains and scores the zoo table and its compositions alone (the README's
table of the zoo's kinds of model; ``zoo_machine`` records where and when).

``--only cross`` trains the two cross-encoder entries again and scores them on every set,
beside the recorded rows of the zoo table (``cross_rerun``): the check that a change of the
cross-encoder training path keeps the numbers.

Results: ``results/quality.json`` (a partial run, ``--only``, keeps the other tables). Run (about an hour on 2 CPU cores; entries and results
already in ``--work`` are reused): ``python benchmarks/studies/quality.py --work /tmp/quality``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from adapter_zoo.names import ZERO_SHOT_MODEL  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402
from stackexchange.io import atomic_write_json  # noqa: E402
from stackexchange.lists import BENCHMARK_FILE  # noqa: E402

SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results"
FORUMS = {"beer": "beer.stackexchange.com", "bicycles": "bicycles.meta.stackexchange.com"}
CANDIDATES = 50
# 1e-3 overfits these few hundred pairs (MAP 0.877 after 100 steps, shared/notes).
LEARNING_RATES = (1e-4, 2e-4, 5e-4)
LR_STEPS = 80
ZOO_STEPS = 40  # the lr table: dev MAP stops rising by step 30-40 at every rate
# AdapterDrop's k: the lowest k of MiniLM's 6 layers carry no adapter (0: every layer has one)
DROP_LOWER = (0, 2, 3)
ZERO_SHOT = ZERO_SHOT_MODEL
TANDA_STEPS = 100  # three passes over WikiQA's 1,040 train pairs at batch 32
TANDA_SEEDS = (0, 1)
LENGTH_MODELS = (
    ZERO_SHOT,
    "beer-bi",
    "beer-bi-hard",
    "beer-bi-full",
    "bicycles-bi",
    "multitask-bi",
)
# (encoder, forum adapter continued on WikiQA; None: a new adapter), both kinds of the zoo
TANDA_STARTS = (("bi", None), ("bi", "beer-bi"), ("bi", "bicycles-bi"), ("bi", "multitask-bi"),
                ("cross", None), ("cross", "beer-cross"), ("cross", "bicycles-cross"))  # fmt: skip
EVAL_STEPS = 10
SPEED_WARMUP = 2
SPEED_STEPS = 5
SPEED_ROUNDS = 3
BATCH = 32  # adapter-zoo train's default batch size
# Training truncates to 128 tokens (twice as fast); entries rank at MiniLM's own 256.
BI = ["--encoder", "bi", "--max-length", "128", "--eval-steps", str(EVAL_STEPS)]
CROSS = ["--encoder", "cross", "--pairs", "question_answer", "--hard-negatives", "--loss",
         "listwise", "--negatives", "7", "--batch-size", "16", "--lr", "1e-3",
         "--max-length", "128", "--max-steps", "60"]  # fmt: skip


# each forum's bi-encoder adapter, in the zoo table and trained in both precisions by
# ``precision_training.py``
BI_ENTRIES = {
    "beer-bi": ["--mode", "adapter", "--forums", "beer", *BI, "--max-steps", str(ZOO_STEPS)],
    "bicycles-bi": ["--mode", "adapter", "--forums", "bicycles.meta", *BI,
                    "--max-steps", str(ZOO_STEPS)],
}  # fmt: skip
# each forum's cross-encoder adapter, in the zoo table, rerun
# alone by ``--only cross`` and trained in both precisions by ``precision_training.py``
CROSS_ENTRIES = {
    "beer-cross": ["--mode", "adapter", "--forums", "beer", *CROSS],
    "bicycles-cross": ["--mode", "adapter", "--forums", "bicycles.meta", *CROSS],
}


def cli(*argv: str) -> None:
    from adapter_zoo.cli import main

    code = main([str(a) for a in argv])
    if code:
        raise SystemExit(f"adapter-zoo {' '.join(map(str, argv))}: exit {code}")


def prepare(work: Path) -> dict[str, str]:
    """Parse the shipped forums, build their LAS-style sets; return set name -> benchmark."""
    import stackexchange
    from benchmarks import build_from_forum
    from stackexchange.catalog import shipped_data

    sets = {}
    for short, host in FORUMS.items():
        forum = stackexchange.parse_forum(shipped_data() / f"{host}.7z", work / "parsed")
        bench = work / "benchmarks" / short
        if not (bench / BENCHMARK_FILE).is_file():
            build_from_forum(forum, bench, candidates=CANDIDATES, seed=0)
        sets[short] = f"local:{bench}"
    sets["wikiqa"] = "wikiqa"
    return sets


def train_entry(work: Path, name: str, *argv: str) -> dict:
    """Train zoo entry ``name`` unless present; return its card and the training time
    (None for an entry an earlier run trained: not measured in this one)."""
    from adapter_zoo.zoo.store import CARD_FILE, read_card

    entry = work / "zoo" / name
    started = time.perf_counter()
    trained = not (entry / CARD_FILE).is_file()
    if trained:
        cli("train", "--data", work / "parsed", "--name", name, *argv)
    card = read_card(entry)
    card.setdefault("train_seconds", round(time.perf_counter() - started, 1) if trained else None)
    return card


def score(
    work: Path, model: str, benchmark: str, split: str, max_length=None, precision: str = "auto"
) -> dict:
    """One evaluate record, cached in ``work/results.jsonl`` by (model, benchmark, split), the
    token limit when one is given (None: the entry's own) and the scoring precision when it is
    not ``auto`` (``evaluate``'s default, the one this script's tables use)."""
    from benchmarks import evaluate

    cache = work / "records.jsonl"
    key = [model, benchmark, split] + ([max_length] if max_length else [])
    key += [precision] if precision != "auto" else []
    if cache.exists():
        for line in cache.read_text().splitlines():
            record = json.loads(line)
            if record["key"] == key:
                return record
    result = evaluate(
        model, benchmark, split=split, data_dir=SHARED / "benchmarks", max_length=max_length,
        precision=precision,
    )  # fmt: skip
    record = {"key": key, "metrics": result["metrics"], "queries": result["queries"],
              "wall_time_s": result["wall_time_s"]}  # fmt: skip
    with cache.open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    print(f"{model:45s} {benchmark:40s} {split:5s} {max_length or ''} MAP {record['metrics']['map']:.4f} "
          f"P@1 {record['metrics']['p@1']:.4f} ({record['wall_time_s']:.0f}s)", flush=True)  # fmt: skip
    return record


def lr_table(work: Path, sets: dict) -> list[dict]:
    """Beer's bi-encoder adapter at each learning rate: dev MAP by step, selected test MAP."""
    rows = [{"lr": 0, "model": ZERO_SHOT,
             "test_map": score(work, ZERO_SHOT, sets["beer"], "test")["metrics"]["map"]}]  # fmt: skip
    for lr in LEARNING_RATES:
        name = f"lr-{lr:g}"
        card = train_entry(work, name, "--mode", "adapter", "--forums", "beer", *BI,
                           "--lr", f"{lr:g}", "--max-steps", str(LR_STEPS))  # fmt: skip
        test = score(work, name, sets["beer"], "test")
        rows.append({
            "lr": lr,
            "dev_map_by_step": {r["step"]: round(r["dev_map"], 4) for r in card["training"]["log"]},
            "best_step": card["training"]["best_step"],
            "test_map": test["metrics"]["map"],
            "train_seconds": card["train_seconds"],
        })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/adapter-zoo-quality"))
    parser.add_argument("--only", choices=["lr", "zoo", "tanda", "length", "lora", "cross", "all"],
                        default="all")  # fmt: skip
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ["ADAPTER_ZOO_HOME"] = str(work / "zoo")
    sets = prepare(work)
    output = RESULTS / "quality.json"
    report = json.loads(output.read_text()) if output.is_file() else {}
    report.update({"benchmark": "quality", "candidates": CANDIDATES})
    if args.only not in ("lora", "cross", "zoo"):  # those three record their own machine
        report["machine"] = machine_info()
    if args.only in ("lr", "all"):
        report["lr_table"] = lr_table(work, sets)
    if args.only in ("zoo", "all"):
        report.update(zoo_and_compositions(work, sets, report.get("zoo", {})))
        report["zoo_machine"] = machine_info()
    if args.only in ("tanda", "all"):
        report["tanda_table"] = tanda_table(work)
    if args.only in ("length", "all"):
        report["length_table"] = length_table(work, sets)
    if args.only in ("lora", "all"):
        report["lora_table"] = lora_table(work, sets)
    if args.only == "cross":
        report["cross_rerun"] = cross_rerun(work, sets, report)
    RESULTS.mkdir(exist_ok=True)
    atomic_write_json(output, report)  # a run stopped while writing keeps the old record
    shown = {"lora": "lora_table", "cross": "cross_rerun"}.get(
        args.only, "summary" if "summary" in report else "lr_table"
    )
    print(json.dumps(report[shown], indent=2))


def cross_rerun(work: Path, sets: dict, report: dict) -> dict:
    """The cross-encoder entries trained again (in a fresh ``--work``) and scored on every
    set, beside the recorded rows of the zoo table (a check that a change of the
    cross-encoder training path keeps the recorded numbers; the table stays one run's)."""
    rows = {}
    for name, argv in CROSS_ENTRIES.items():
        before = {"dev": report.get("zoo", {}).get(name, {}).get("dev"),
                  "test": report.get("table", {}).get(name, {})}  # fmt: skip
        card = train_entry(work, name, *argv)
        after = {}
        for set_name, bench in sets.items():
            record = score(work, name, bench, "test")
            after[set_name] = {"map": record["metrics"]["map"], "p@1": record["metrics"]["p@1"],
                               "wall_time_s": record["wall_time_s"]}  # fmt: skip
        dev = card.get("scores")
        rows[name] = {
            "dev_map": {"before": (before["dev"] or {}).get("dev_map"),
                        "after": dev.get("dev_map")},
            "test_map": {set_name: {"before": before["test"].get(set_name, {}).get("map"),
                                    "after": after[set_name]["map"]} for set_name in sets},
            "best_step": card["training"].get("best_step"),
            "train_seconds": card["train_seconds"],
        }  # fmt: skip
    return {"machine": machine_info(), "rows": rows}


def lora_table(work: Path, sets: dict) -> dict:
    """Beer's bi-encoder adapter, LoRA against SeqBn at the same steps: quality and speed."""
    steps = ["--max-steps", str(ZOO_STEPS)]
    rows = {}
    for name, method in (("beer-bi", "seqbn"), ("beer-bi-lora", "lora")):
        card = train_entry(work, name, "--mode", "adapter", "--forums", "beer", *BI, *steps,
                           "--method", method)  # fmt: skip
        rows[name] = {
            "method": card.get("method", method),
            "adapter_config": card.get("adapter_config"),
            "steps": card["training"]["steps"],
            "best_step": card["training"]["best_step"],
            "dev_map": card["scores"]["dev_map"],
            "base_dev_map": card["base_scores"]["dev_map"],
            "max_length": card["max_length"],
            **{f"{s}_test_map": score(work, name, sets[s], "test")["metrics"]["map"]
               for s in FORUMS},
            "train_seconds": card["train_seconds"],
        }  # fmt: skip
    speeds = training_speeds(work, [row["method"] for row in rows.values()])
    for row in rows.values():
        row.update(speeds[row["method"]])
    zero_shot = {f"{s}_test_map": score(work, ZERO_SHOT, sets[s], "test")["metrics"]["map"]
                 for s in FORUMS}  # fmt: skip
    return {"machine": machine_info(), "steps": ZOO_STEPS, "batch_size": BATCH,
            "zero_shot": zero_shot, "rows": rows}  # fmt: skip


def training_speeds(work: Path, methods) -> dict:
    """Pairs/s of training steps (forward, backward, AdamW) on the model ``train`` builds for
    beer's bi-encoder adapter of each method, and its trainable parameter count.

    The methods take turns, ``SPEED_ROUNDS`` rounds of ``SPEED_STEPS`` steps each on the same
    batches, and each keeps its fastest round: a shared machine's load hits both alike."""
    import torch
    from sentence_transformers import losses

    from adapter_zoo.training import TrainingConfig
    from adapter_zoo.training.bi import trainable_model  # the very model a training run builds
    from adapter_zoo.training.data import load_pairs

    runs = {}
    for method in methods:
        config = TrainingConfig(
            mode="adapter", data=str(work / "parsed"), forums=("beer",), encoder="bi",
            name=f"speed-{method}", max_length=128, method=method,
        )  # fmt: skip
        torch.manual_seed(0)
        model, _ = trainable_model(config, [FORUMS["beer"]])
        model.max_seq_length = 128
        model.train()
        trainable = [p for p in model.parameters() if p.requires_grad]
        runs[method] = (model, losses.MultipleNegativesRankingLoss(model),
                        torch.optim.AdamW(trainable, lr=5e-4), trainable, [])  # fmt: skip
    tables = load_pairs(work / "parsed", FORUMS["beer"], config.trained_pair_kinds, "train")
    queries = [q for t in tables for q in t.queries]
    positives = [p for t in tables for p in t.positives]

    def steps(method: str, count: int) -> float:
        model, loss, optimizer, _, _ = runs[method]
        began = time.perf_counter()
        for step in range(count):
            start = step * BATCH
            batch = [model.tokenize(texts[start : start + BATCH]) for texts in (queries, positives)]
            optimizer.zero_grad()
            loss(batch, None).backward()
            optimizer.step()
        return time.perf_counter() - began

    for method in methods:
        steps(method, SPEED_WARMUP)
    for _ in range(SPEED_ROUNDS):
        for method in methods:
            runs[method][4].append(SPEED_STEPS * BATCH / steps(method, SPEED_STEPS))
    return {
        method: {"trainable_parameters": sum(p.numel() for p in run[3]),
                 "train_pairs_per_s": round(max(run[4]), 1),
                 "train_pairs_per_s_rounds": [round(r, 1) for r in run[4]]}
        for method, run in runs.items()
    }  # fmt: skip


def length_table(work: Path, sets: dict) -> dict:
    """Forum sets' dev and test MAP of the bi-encoders at 256 tokens (MiniLM's own limit,
    where the entries rank) and at 512 (its position table's end), on both forums."""
    rows: dict = {}
    for model in LENGTH_MODELS:
        for forum in FORUMS:
            for length in (256, 512):
                rows.setdefault(model, {}).setdefault(forum, {})[length] = {
                    split: score(work, model, sets[forum], split, length)["metrics"]["map"]
                    for split in ("dev", "test")
                }
    chosen = {}
    for forum in FORUMS:
        # what bi-encoder training now does: each entry ranks at the length better on dev
        own = [m for m in LENGTH_MODELS if m.startswith(forum) or m == "multitask-bi"]
        options = {(m, n): rows[m][forum][n] for m in own for n in (256, 512)}
        best = max(options, key=lambda key: options[key]["dev"])
        zero_shot = rows[ZERO_SHOT][forum]
        chosen[forum] = {
            "chosen_on_dev": f"{best[0]}@{best[1]}",
            "test_map": options[best]["test"],
            "gain_vs_zero_shot_256": round(options[best]["test"] - zero_shot[256]["test"], 4),
            "gain_vs_zero_shot_512": round(options[best]["test"] - zero_shot[512]["test"], 4),
        }
    # the same adapters trained again by the current code, which picks the length itself
    retrained = {}
    for name, forum in (("beer-bi-length", "beer"), ("bicycles-bi-length", "bicycles.meta")):
        card = train_entry(work, name, "--mode", "adapter", "--forums", forum, *BI,
                           "--max-steps", str(ZOO_STEPS))  # fmt: skip
        short = forum.split(".")[0]
        test = {s: score(work, name, bench, "test")["metrics"]["map"] for s, bench in sets.items()}
        zero_shot = {s: score(work, ZERO_SHOT, bench, "test")["metrics"]["map"]
                     for s, bench in sets.items()}  # fmt: skip
        retrained[name] = {
            "forum": short,
            "max_length": card["max_length"],
            "training_dev_map_by_length": card.get("dev_map_by_length"),
            "test_map": test,
            "delta_vs_zero_shot": {s: round(test[s] - zero_shot[s], 4) for s in sets},
        }
    return {"rows": rows, "best_bi_entry_and_length_chosen_on_dev": chosen, "retrained": retrained}


def tanda_table(work: Path) -> dict:
    """WikiQA test MAP of new adapters and of continued forum adapters, at equal steps."""
    from adapter_zoo.zoo.store import CARD_FILE, read_card
    from benchmarks import get
    from benchmarks.finetune import finetune

    rows: dict = {}
    for encoder, start in TANDA_STARTS:
        for seed in TANDA_SEEDS:
            name = f"wikiqa-{start or f'new-{encoder}'}-s{seed}".replace("new-bi", "new")
            started = time.perf_counter()
            if not (work / "zoo" / name / CARD_FILE).is_file():
                finetune("minilm-l6", get("wikiqa"), "adapter" if start is None else "tanda",
                         transfer=start, encoder=encoder, work_dir=work / "tanda",
                         data_dir=SHARED / "benchmarks", seed=seed, max_steps=TANDA_STEPS,
                         name=name)  # fmt: skip
            card = read_card(work / "zoo" / name)
            test = score(work, name, "wikiqa", "test")["metrics"]
            row = rows.setdefault(
                start or f"new {encoder} adapter", {"encoder": encoder, "runs": []}
            )
            row["runs"].append({
                "seed": seed, "entry": name, "test_map": test["map"], "test_p@1": test["p@1"],
                "dev_map": card["scores"]["dev_map"],
                "base_dev_map": card.get("base_scores", {}).get("dev_map"),
                "start_dev_map": card.get("init_from", {}).get("scores", {}).get("dev_map"),
                "best_step": card["training"].get("best_step"),
                "train_seconds": round(time.perf_counter() - started, 1),
            })  # fmt: skip
    for row in rows.values():
        row["mean_test_map"] = sum(r["test_map"] for r in row["runs"]) / len(row["runs"])
    zero_shot = score(work, ZERO_SHOT, "wikiqa", "test")["metrics"]["map"]
    return {
        "steps": TANDA_STEPS,
        "zero_shot_test_map": zero_shot,
        "rows": rows,
        "continued_minus_new": {
            start: round(
                row["mean_test_map"] - rows[f"new {row['encoder']} adapter"]["mean_test_map"], 4
            )
            for start, row in rows.items()
            if not start.startswith("new ")
        },  # fmt: skip
    }


def zoo_and_compositions(work: Path, sets: dict, recorded: dict) -> dict:
    """Train the zoo, compose on each forum's dev split, score everything, pick per forum
    (``recorded``: the zoo rows of the run that trained the entries already in ``work``)."""
    from adapter_zoo.compose import compose_entry
    from adapter_zoo.zoo.store import CARD_FILE, read_card

    steps = ["--max-steps", str(ZOO_STEPS)]
    zoo = {
        "beer-bi": BI_ENTRIES["beer-bi"],
        "beer-bi-hard": ["--mode", "adapter", "--forums", "beer", "--hard-negatives", *BI, *steps],
        "bicycles-bi": BI_ENTRIES["bicycles-bi"],
        "multitask-bi": ["--mode", "multitask", "--forums", "beer", "bicycles.meta", *BI, *steps],
        "fusion-bi": ["--mode", "fusion", "--forums", "beer", "bicycles.meta", "--adapters",
                      "beer-bi", "bicycles-bi", *BI, *steps],
        "beer-bi-full": ["--mode", "full", "--forums", "beer", *BI, *steps],
        **CROSS_ENTRIES,
        # AdapterDrop: beer's adapter without adapters in the lowest k layers
        **{f"beer-bi-drop{k}": ["--mode", "adapter", "--forums", "beer", "--drop-lower",
                                str(k), *BI, *steps] for k in DROP_LOWER if k},
    }  # fmt: skip
    cards = {name: train_entry(work, name, *argv) for name, argv in zoo.items()}
    compositions = {
        "beer": {
            "beer-bi+bm25": ["fusion", ["beer-bi", "bm25"]],
            "zero-shot+bm25": ["fusion", [ZERO_SHOT, "bm25"]],
            "beer-bi+cross+bm25": ["fusion", ["beer-bi", "beer-cross", "bm25"]],
            "beer-bi>cross@10": ["rerank", ["beer-bi", "beer-cross"]],
            # the probes' best partner: the forum's cross-encoder adapter beside the base
            "zero-shot+cross+bm25": ["fusion", [ZERO_SHOT, "beer-cross", "bm25"]],
        },
        "bicycles": {
            "bicycles-bi+bm25": ["fusion", ["bicycles-bi", "bm25"]],
            "zero-shot+bm25@bicycles": ["fusion", [ZERO_SHOT, "bm25"]],
            "zero-shot+cross+bm25@bicycles": ["fusion", [ZERO_SHOT, "bicycles-cross", "bm25"]],
        },
    }
    composed = {}
    for forum, entries in compositions.items():
        for name, (how, members) in entries.items():
            started = time.perf_counter()
            if not (work / "zoo" / name / CARD_FILE).is_file():
                compose_entry(name, members, composition=how, data=work / "parsed", forum=FORUMS[forum],
                              top_k=10)  # fmt: skip
            card = read_card(work / "zoo" / name)
            composed[name] = {"forum": forum, "how": how, "members": members,
                              "weights": card.get("weights"),
                              "dev_lists_map": card.get("scores"),
                              "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip

    models = ["bm25", ZERO_SHOT, *zoo, *composed]
    table = {}
    for set_name, bench in sets.items():
        for model in models:
            if model in composed and composed[model]["forum"] != set_name:
                continue  # a composition is chosen for its forum and judged there
            record = score(work, model, bench, "test")
            table.setdefault(model, {})[set_name] = {
                "map": record["metrics"]["map"], "p@1": record["metrics"]["p@1"],
                "wall_time_s": record["wall_time_s"],
            }  # fmt: skip
    selection = {}
    for forum in FORUMS:
        # the forum's own zoo models and compositions, and the model the user already has
        own = [
            ZERO_SHOT,
            *(m for m in zoo if m.startswith(forum)),
            "multitask-bi",
            "fusion-bi",
            *(c for c, v in composed.items() if v["forum"] == forum),
        ]
        own = list(dict.fromkeys(m for m in own if m in models))
        dev = {m: score(work, m, sets[forum], "dev")["metrics"]["map"] for m in own}
        best = max(dev, key=dev.get)
        selection[forum] = {
            "candidates_dev_map": dev,
            "chosen_on_dev": best,
            "test_map": table[best][forum]["map"],
            "zero_shot_test_map": table[ZERO_SHOT][forum]["map"],
            "gain": round(table[best][forum]["map"] - table[ZERO_SHOT][forum]["map"], 4),
            "target": 0.02,
        }
    transfer = {}
    for adapter, home in (("beer-bi", "beer"), ("bicycles-bi", "bicycles"),
                          ("multitask-bi", None), ("beer-cross", "beer")):  # fmt: skip
        for set_name in sets:
            if set_name == home or (home is None and set_name != "wikiqa"):
                continue
            delta = table[adapter][set_name]["map"] - table[ZERO_SHOT][set_name]["map"]
            limit = 0.0 if set_name == "wikiqa" else -0.01
            transfer[f"{adapter} on {set_name}"] = {"delta_map": round(delta, 4),
                                                    "met": bool(delta > limit)}  # fmt: skip
    drop_table = [
        {"drop_lower": k, "entry": name,
         **{set_name: table[name][set_name]["map"] for set_name in sets}}
        for k in DROP_LOWER
        for name in [f"beer-bi-drop{k}" if k else "beer-bi"]
    ]  # fmt: skip
    return {
        "drop_lower_table": drop_table,
        "zoo": {
            n: {
                # an entry an earlier run trained keeps the time that run recorded
                "train_seconds": c["train_seconds"]
                if c["train_seconds"] is not None
                else recorded.get(n, {}).get("train_seconds"),
                "dev": c.get("scores"),
                "base_dev": c.get("base_scores"),
                "best_step": c["training"].get("best_step"),
                "max_length": c.get("max_length"),
            }
            for n, c in cards.items()
        },
        "compositions": composed,
        "table": table,
        "summary": {"best_for_forum_chosen_on_dev": selection, "no_negative_transfer": transfer},
    }


if __name__ == "__main__":
    main()
