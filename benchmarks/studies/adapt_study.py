"""Leave-one-forum-out: ``adapt`` (learn from the target, decide on its held-out lists)
against what a user has without it, on each shipped forum's held-out test questions.

For each forum F of the eight shipped ones, the zoo is the other seven forums' adapters
(each trained once, the way ``train`` trains a forum's adapter today: the shipped zoo's 40
steps of 32 pairs at 128 tokens, dev every 10). Side by side, each scored on F's LAS-style
test split only (``build-benchmark --candidates 50``, the split ``adapt`` never reads):

* ``base``: the zero-shot all-MiniLM-L6-v2 at its dev-chosen length (256 or 512 tokens,
  chosen on F's dev split of the same set);
* ``fused``: the zero-shot base fused with BM25 (z-scores, 0.9 and 0.1), what a user has
  without training;
* ``centroid``: today's centroid rule (``adapt --strategy centroid``: fusion of the top 3 of
  the seven adapters when the nearest has similarity >= 0.3, else the base);
* ``own``: F's own adapter trained the way ``train`` does today (a labelled-forum user's
  model; it trains on F's train split, as ``adapt`` does);
* ``adapt``: ``adapter_zoo.adapt(F, zoo=the seven)``: its card's decision is recorded.

Each forum's test split has 10-59 questions: the per-forum numbers come with a paired
bootstrap interval; the headline is the mean over the questions pooled from all eight.

Results: ``results/adapt_study.json`` (per-question APs kept for pooling). Resumable:
every entry and score is cached under ``--work``. Run:
``python benchmarks/studies/adapt_study.py --work W [--forums augur ...]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from adapter_zoo.fusion_defaults import base_fused_spec  # noqa: E402
from adapter_zoo.names import ZERO_SHOT_MODEL  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.studies.transfer import FORUMS, short  # noqa: E402
from stackexchange.lists import BENCHMARK_FILE  # noqa: E402
from stackexchange.parse import STATS_FILE  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
# ../shared/data beside the checkout; ADAPTER_ZOO_SHARED_DATA names another copy
DATA = Path(os.environ.get("ADAPTER_ZOO_SHARED_DATA", ROOT.parent / "shared" / "data"))
SHARED = DATA / "stackexchange"
ZERO_SHOT = ZERO_SHOT_MODEL
# the no-training baseline of this study and outside_study.py's
FUSED = base_fused_spec(ZERO_SHOT)
# the models each forum's row scores, the zero-shot base first (the others are compared with it)
MODELS = ("base", "fused", "centroid", "own", "adapt")
OWN_OPTIONS = {"max_steps": 40, "max_length": 128, "eval_steps": 10}
CANDIDATES = 50


def prepare(work: Path, hosts) -> None:
    """Parse the forums and build each one's LAS-style set (skipped when present)."""
    from benchmarks.builder import build_from_forum
    from stackexchange import parse_forum

    for host in hosts:
        if not (work / "parsed" / host / STATS_FILE).is_file():
            source = SHARED / host
            parse_forum(source if source.is_dir() else SHARED / f"{host}.7z", work / "parsed")
        bench = work / "bench" / short(host)
        if not (bench / BENCHMARK_FILE).is_file():
            build_from_forum(work / "parsed" / host, bench, candidates=CANDIDATES)


def train_own(work: Path, host: str) -> str:
    from adapter_zoo.training import TrainingConfig, train
    from adapter_zoo.zoo.store import local_entry

    name = f"own-{short(host)}"
    if local_entry(name) is None:
        train(TrainingConfig(mode="adapter", encoder="bi", data=str(work / "parsed"),
                             forums=(host,), name=name, **OWN_OPTIONS))  # fmt: skip
    return name


def split_aps(work: Path, host: str, model: str, split: str, max_length=None) -> np.ndarray:
    """Per-question AP of ``model`` on one split of the forum's set, cached as .npy."""
    from adapter_zoo.adapt.decide import list_average_precisions
    from benchmarks import get

    tag = f"{model}@{max_length}" if max_length else model
    tag = "".join(c if c.isalnum() or c in "-.@" else "_" for c in tag)
    cache = work / "study-scores" / f"{tag}__{short(host)}__{split}.npy"
    if cache.is_file():
        return np.load(cache, allow_pickle=False)
    import adapter_zoo

    rows = get(f"local:{work / 'bench' / short(host)}").load(split)
    pairs = [(q, c) for q, cands in zip(rows["query"], rows["candidates"]) for c in cands]
    scorer = adapter_zoo.load(model, max_length=max_length)
    aps = list_average_precisions(scorer.score(pairs, progress=True), list(rows["labels"]))
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".tmp.npy")
    np.save(tmp, aps, allow_pickle=False)
    os.replace(tmp, cache)
    return aps


def adapted(work: Path, host: str, zoo: list[str], strategy: str) -> str:
    import adapter_zoo
    from adapter_zoo.zoo.store import local_entry

    name = f"{strategy}-{short(host)}"
    if local_entry(name) is None:
        adapter_zoo.adapt(work / "parsed" / host, name=name, zoo=zoo, strategy=strategy)
    return name


def forum_row(work: Path, host: str, hosts) -> dict:
    from adapter_zoo.adapt.decide import paired_bootstrap
    from adapter_zoo.zoo.store import local_entry, read_card

    zoo = [f"own-{short(h)}" for h in hosts if h != host]
    started = time.perf_counter()
    name = adapted(work, host, zoo, "auto")
    adapt_seconds = time.perf_counter() - started
    centroid = adapted(work, host, zoo, "centroid")
    dev = {n: split_aps(work, host, ZERO_SHOT, "dev", n).mean() for n in (256, 512)}
    length = 512 if dev[512] > dev[256] else 256
    models = {"base": (ZERO_SHOT, length), "fused": (FUSED, None), "centroid": (centroid, None),
              "own": (f"own-{short(host)}", None), "adapt": (name, None)}  # fmt: skip
    aps = {k: split_aps(work, host, m, "test", n) for k, (m, n) in models.items()}
    card = read_card(local_entry(name))["adapt"]
    row = {
        "questions": len(aps["base"]),
        "base_length": length,
        "map": {k: float(v.mean()) for k, v in aps.items()},
        "vs_base": {k: paired_bootstrap(v, aps["base"]) for k, v in aps.items() if k != "base"},
        "aps": {k: v.tolist() for k, v in aps.items()},
        "adapt": {
            "chosen": card["decision"]["chosen"],
            "reason": card["reason"],
            "decision_lists": card["decision_lists"],
            "pseudo_dev": {c: round(r["map"], 4) for c, r in card["candidates"].items()},
            "training": card["training"].get("runs"),
            "seconds": round(adapt_seconds, 1),
        },
        # rows of one record may come from different machines (a lent GPU, then 2 CPU cores)
        "machine": machine_info(),
    }
    print(f"{short(host)}: " + ", ".join(f"{k} {v:.4f}" for k, v in row["map"].items())
          + f"; adapt chose {row['adapt']['chosen']}")  # fmt: skip
    return row


def summary(rows: dict) -> dict:
    from adapter_zoo.adapt.decide import paired_bootstrap

    pooled = {k: np.concatenate([np.asarray(r["aps"][k]) for r in rows.values()])
              for k in MODELS}  # fmt: skip
    out = {"questions": len(pooled["base"]), "forums": len(rows)}
    for k in MODELS[1:]:
        deltas = [r["map"][k] - r["map"]["base"] for r in rows.values()]
        out[k] = {
            "pooled_map": float(pooled[k].mean()),
            "pooled_delta": paired_bootstrap(pooled[k], pooled["base"]),
            "worst_forum_delta": float(min(deltas)),
            "forums_at_least_base": int(sum(d >= 0 for d in deltas)),
        }
    out["base_pooled_map"] = float(pooled["base"].mean())
    # what adapt adds to what a user has without training
    out["adapt"]["pooled_vs_fused"] = paired_bootstrap(pooled["adapt"], pooled["fused"])
    return out


SEMEVAL = DATA / "benchmarks" / "semeval-task3"
SEMEVAL_SETS = ("semeval2016", "semeval2017")


def qatarliving_questions(out: Path) -> Path:
    """A JSONL of the distinct QatarLiving questions (subject as title, body) of SemEval's
    train (part 2) and dev XML: the texts a QatarLiving user has, no label of any kind."""
    from xml.etree import ElementTree

    from benchmarks.datasets.semeval import DEV, TRAIN2

    seen, lines = set(), []
    for relative in (TRAIN2, DEV):
        root = ElementTree.parse(SEMEVAL / relative).getroot()
        for tag, subject, body in (("OrgQuestion", "OrgQSubject", "OrgQBody"),
                                   ("RelQuestion", "RelQSubject", "RelQBody")):  # fmt: skip
            for element in root.iter(tag):
                title = (element.findtext(subject) or "").strip()
                text = (element.findtext(body) or "").strip()
                if title and (title, text) not in seen:
                    seen.add((title, text))
                    lines.append(json.dumps({"title": title, "body": text}))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def semeval_rows(work: Path, zoo: list[str], name: str) -> dict:
    """``adapt`` on QatarLiving's questions with ``zoo`` (``[]``: its own adapter only; the
    eight forum adapters: the zoo's strategies and the nearest adapter continued too),
    scored beside the zero-shot base on SemEval 2016 test and the 2017 set."""
    import adapter_zoo
    from adapter_zoo.zoo.store import local_entry, read_card
    from benchmarks.evaluate import evaluate

    started = time.perf_counter()
    if local_entry(name) is None:
        target = qatarliving_questions(work / "qatarliving" / "questions.jsonl")
        adapter_zoo.adapt(target, name=name, zoo=zoo)
    card = read_card(local_entry(name))["adapt"]
    rows = {"adapt": {"chosen": card["decision"]["chosen"], "reason": card["reason"],
                      "target": card["target"], "decision_lists": card["decision_lists"],
                      "pseudo_dev": {c: round(r["map"], 4) for c, r in card["candidates"].items()},
                      "seconds": round(time.perf_counter() - started, 1),
                      "machine": machine_info()}}  # fmt: skip
    for benchmark in SEMEVAL_SETS:
        rows[benchmark] = {
            model: evaluate(model, benchmark, data_dir=SEMEVAL.parent)["metrics"]["map"]
            for model in (ZERO_SHOT, "bm25", name)
        }
        print(benchmark, rows[benchmark])
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument(
        "--forums", nargs="*", default=None, help="left-out forums (short; none: SemEval only)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "adapt_study.json")
    parser.add_argument("--semeval", action="store_true", help="also adapt to QatarLiving")
    parser.add_argument(
        "--semeval-zoo", action="store_true",
        help="also adapt to QatarLiving with the eight forum adapters as its zoo",
    )  # fmt: skip
    args = parser.parse_args(argv)
    os.environ.setdefault("ADAPTER_ZOO_HOME", str(args.work / "zoo"))
    hosts = list(FORUMS)
    chosen = [h for h in hosts if args.forums is None or short(h) in args.forums]
    started = time.perf_counter()
    if chosen:
        prepare(args.work, hosts)
        for host in hosts:  # the zoo: every forum's own adapter
            train_own(args.work, host)
    record = {"benchmark": "adapt_study", "precision": "fp32", "forums": {}}
    if args.out.is_file():  # resumable: what is already recorded stays
        record = json.loads(args.out.read_text())

    def save():
        record.update(machine=machine_info(), wall_time_s=round(time.perf_counter() - started, 1))
        if record["forums"]:
            record["summary"] = summary(record["forums"])
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1) + "\n")
        os.replace(tmp, args.out)

    for host in chosen:
        record["forums"][short(host)] = forum_row(args.work, host, hosts)
        save()
    if args.semeval:
        record["semeval"] = semeval_rows(args.work, [], "adapt-qatarliving")
        save()
    if args.semeval_zoo:
        for host in hosts:  # the zoo: every forum's own adapter
            train_own(args.work, host)
        zoo = [f"own-{short(h)}" for h in hosts]
        record["semeval_zoo"] = semeval_rows(args.work, zoo, "adapt-qatarliving-zoo")
        save()
    print(json.dumps(record.get("summary"), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
