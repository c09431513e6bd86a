"""Outside the base's home ground: ``adapt`` from each domain's own texts, against what a
user already has, on sets from domains all-MiniLM-L6-v2 was not trained on.

Each set's target is the domain's own texts, never its test questions or labels:

* SemEval 2016 test and the 2017 set (QatarLiving): the distinct questions of SemEval's train
  and dev XML (subject as title, body), as ``adapt_study.py --semeval`` builds them;
* ArguAna (``arguana-02``: a debate point against every counter in its debate): the training
  and validation debates' point -> counter pairs (``benchmarks.datasets.arguana``; pairs
  whose texts are test texts are left out), as a forum pairs a title with its body;
* MEDIQA 2019 Task 3 (consumer health questions -> NIH answer passages): MedQuAD's question
  -> answer pairs (a health FAQ of the same NIH sources) and MEDIQA's train/validation
  questions, their answers unlabelled;
* InsuranceQA v2 (US insurance questions -> professionals' answers, 500 SOLR candidates): its
  27,413 answer texts and 12,889 training questions, each a text alone, never which answer
  answers which question (``benchmarks.datasets.insuranceqa.adaptation_texts``).

Side by side, each scored on the set's test split (per-query APs kept for the paired
bootstrap):

* ``bm25``; ``base``: the zero-shot all-MiniLM-L6-v2; ``fused``: the zero-shot base fused with
  BM25 (``fusion:sbert:minilm-l6*0.9+bm25*0.1``, per-query z-scores), the no-training model a
  user already has and the baseline the targets are measured against;
* ``zoo``: the forum zoo's best similarity strategy (``adapt --strategy route`` over the
  eight shipped forums' adapters, the best of the transfer study: ``results/transfer.json``);
* ``multitask``: the forum zoo's multi-task adapter over the eight forums;
* ``adapt``: ``adapter_zoo.adapt(target)`` as a user runs it (default budget), empty zoo.

The forum zoo is trained as the shipped-zoo recipe trains it (``recipes/toml/shipped_zoo.toml``:
40 steps of 32 pairs at 128 tokens per forum, 160 round-robin steps for the multi-task one).
Resumable: entries, targets and per-query APs are cached under ``--work``. Results:
``results/outside_study.json``. Run:
``python benchmarks/studies/outside_study.py --work W [--sets arguana-02 ...]``
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
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.studies.adapt_study import (  # noqa: E402
    DATA,
    FUSED,
    ZERO_SHOT,
    prepare,
    qatarliving_questions,
)
from benchmarks.studies.transfer import FORUMS, short  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
BENCHMARKS = DATA / "benchmarks"
OUTSIDE = BENCHMARKS / "outside"
# set -> (its data dir, its target)
SETS = {
    "semeval2016": (BENCHMARKS, "qatarliving"),
    "semeval2017": (BENCHMARKS, "qatarliving"),
    "arguana-02": (OUTSIDE, "arguana"),
    "mediqa2019": (OUTSIDE, "health"),
    "insuranceqa": (BENCHMARKS, "insuranceqa"),
}
ZOO_STRATEGY = "route"
ZOO_OPTIONS = {"max_steps": 40, "max_length": 128, "eval_steps": 10}
MULTITASK = "zoo-multitask"
MULTITASK_OPTIONS = {"max_steps": 160, "max_length": 128, "eval_steps": 40}
ROWS = ("bm25", "base", "fused", "zoo", "multitask", "adapt")


def write_target(work: Path, target: str) -> Path:
    """The target's JSONL (written once): the domain's own texts, no test text or label."""
    from benchmarks.datasets._io import write_adapt_target

    path = work / "targets" / f"{target}.jsonl"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    if target == "qatarliving":
        return qatarliving_questions(path)
    if target == "arguana":
        from benchmarks.datasets.arguana import training_pairs

        write_adapt_target(training_pairs(OUTSIDE / "arguana"), path)
    elif target == "health":
        from benchmarks.datasets.mediqa2019 import adaptation_questions
        from benchmarks.datasets.medquad import read_medquad

        pairs = read_medquad(OUTSIDE / "medquad" / "MedQuAD-xml-corpus.tar.gz")
        # MEDIQA's train/validation questions and answer passages, unpaired: texts alone
        rows = adaptation_questions(OUTSIDE / "mediqa2019")
        texts = [{"question": t} for r in rows for t in (r["query"], *r["answers"]) if t.strip()]
        write_adapt_target([*pairs, *texts], path)
    elif target == "insuranceqa":
        from benchmarks.datasets.insuranceqa import adaptation_texts

        texts = adaptation_texts(BENCHMARKS / "insuranceqa-v2")
        write_adapt_target([{"question": text} for text in texts], path)
    else:
        raise ValueError(f"unknown target {target!r}")
    return path


def forum_zoo(work: Path) -> list[str]:
    """The eight shipped forums' adapters and their multi-task adapter (trained once)."""
    from adapter_zoo.training import TrainingConfig, train
    from adapter_zoo.zoo.store import local_entry

    hosts = list(FORUMS)
    prepare(work, hosts)
    names = []
    for host in hosts:
        name = f"own-{short(host)}"
        if local_entry(name) is None:
            train(TrainingConfig(mode="adapter", encoder="bi", data=str(work / "parsed"),
                                 forums=(host,), name=name, **ZOO_OPTIONS))  # fmt: skip
        names.append(name)
    if local_entry(MULTITASK) is None:
        train(TrainingConfig(mode="multitask", encoder="bi", data=str(work / "parsed"),
                             forums=tuple(hosts), name=MULTITASK, **MULTITASK_OPTIONS))  # fmt: skip
    return names


ADAPT_BUDGET = 10.0  # minutes: adapt's default


def adapted(
    work: Path,
    target: str,
    zoo,
    strategy: str,
    budget: float | None = ADAPT_BUDGET,
    name: str | None = None,
    settings=None,
) -> tuple[str, float]:
    """The entry ``adapt`` makes of ``target`` (``name``, by default
    ``<strategy>-<target>``; made once; ``auto`` keeps its trained candidates, for the
    decision's agreement with the test sets, and trains as ``settings`` say: a
    :class:`~adapter_zoo.adapt.candidate_training.LearnSettings`, None: adapt's own way) and
    the seconds it took."""
    import adapter_zoo
    from adapter_zoo.adapt.learn import learn_and_decide
    from adapter_zoo.precision import scoring_precision
    from adapter_zoo.zoo.store import local_entry, read_card

    name = name or f"{strategy}-{target}"
    if local_entry(name) is None:
        started = time.perf_counter()
        path = write_target(work, target)
        if strategy == "auto":  # adapter_zoo.adapt's auto path, its candidates kept
            with scoring_precision("auto"):
                learn_and_decide(path, name=name, zoo=zoo, keep_candidates=True,
                                 budget_minutes=budget, settings=settings)  # fmt: skip
        else:
            adapter_zoo.adapt(path, name=name, zoo=zoo, strategy=strategy)
        seconds = time.perf_counter() - started
    else:
        seconds = read_card(local_entry(name)).get("adapt", {}).get("seconds", float("nan"))
    return name, seconds


def candidate_models(card: dict) -> dict:
    """adapt's candidates as models a benchmark scores: ``(model, max_length)`` by candidate
    (the trained ones were kept; ``base@512`` is the base at 512 tokens)."""
    from adapter_zoo.names import is_spec  # with the script's other adapter_zoo imports, on use

    out = {}
    for candidate, row in card["candidates"].items():
        model, at, length = row["model"].rpartition("@")
        # a spec's "@" is its own (prf:X@k=3,w=0.3, fusion:...@minmax, rerank:A>B@20)
        if not at or is_spec(row["model"]) or not length.isdigit():
            model, length = row["model"], ""
        out[candidate] = (model, int(length) if length else None)
    return out


def query_aps(work: Path, benchmark: str, data_dir: Path, models: dict) -> dict:
    """Per-query AP of each model (a name, or ``(name, max_length)``) on ``benchmark``'s test
    split (cached as .npy), under the set's own rule for queries without a relevant candidate
    (``drop`` or ``zero``)."""
    from adapter_zoo.adapt.decide import list_average_precisions
    from benchmarks import get
    from benchmarks.evaluate import ScoredModels, evaluate

    bench = get(benchmark)
    labels = list(bench.load("test", data_dir)["labels"])
    kept = bench.counted(labels)
    scored, out = ScoredModels(), {}
    for row, spec in models.items():
        model, length = spec if isinstance(spec, tuple) else (spec, None)
        tag = f"{model}@{length}" if length else model
        safe = tag.replace(":", "_").replace("*", "x").replace("+", "_").replace("/", "_")
        cache = work / "study-scores" / benchmark / f"{safe}.npy"
        if cache.is_file():
            out[row] = np.load(cache, allow_pickle=False)
            continue
        record = evaluate(model, benchmark, data_dir=data_dir, scored=scored, max_length=length)
        aps = list_average_precisions(scored.scores(record["model"]), labels)[kept]
        # the record's metrics are rounded to 6 places
        assert abs(aps.mean() - record["metrics"]["map"]) <= 5e-7, (model, benchmark)
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp.npy")
        np.save(tmp, aps, allow_pickle=False)
        os.replace(tmp, cache)
        out[row] = aps
        print(f"{benchmark} {row} ({tag}): MAP {aps.mean():.4f}", flush=True)
    return out


def set_row(
    work: Path, benchmark: str, zoo: list[str], budget: float | None = ADAPT_BUDGET
) -> dict:
    from adapter_zoo.adapt.decide import paired_bootstrap
    from adapter_zoo.zoo.store import local_entry, read_card

    data_dir, target = SETS[benchmark]
    adapt_name, adapt_seconds = adapted(work, target, [], "auto", budget)
    zoo_name, _ = adapted(work, target, zoo, ZOO_STRATEGY)
    models = {"bm25": "bm25", "base": ZERO_SHOT, "fused": FUSED, "zoo": zoo_name,
              "multitask": MULTITASK}  # fmt: skip
    aps = query_aps(work, benchmark, data_dir, models)
    card = read_card(local_entry(adapt_name))["adapt"]
    candidates = query_aps(work, benchmark, data_dir, candidate_models(card))
    # the entry holds its chosen candidate's files (or names the same models): its test APs
    # are that candidate's, scored once (identical on the four sets that scored both)
    aps["adapt"], models["adapt"] = candidates[card["decision"]["chosen"]], adapt_name
    return {
        "target": target,
        "queries": len(aps["base"]),
        "map": {k: float(v.mean()) for k, v in aps.items()},
        "vs_fused": {k: paired_bootstrap(v, aps["fused"]) for k, v in aps.items() if k != "fused"},
        "vs_base": {k: paired_bootstrap(v, aps["base"]) for k, v in aps.items() if k != "base"},
        "aps": {k: v.tolist() for k, v in aps.items()},
        "models": models,
        "adapt": {
            "chosen": card["decision"]["chosen"],
            "reason": card["reason"],
            "target": card["target"],
            "decision_lists": card["decision_lists"],
            "training": card["training"].get("runs"),
            "budget": card.get("budget"),
            "seconds": round(adapt_seconds, 1),
        },
        # each candidate: its held-out lists' verdict against the base (the decision's) and
        # the test set's, for how often the first predicts the second
        "candidates": {
            c: {
                "pseudo_dev_map": round(card["candidates"][c]["map"], 4),
                "pseudo_dev_vs_base": card["candidates"][c].get("delta"),
                "pseudo_dev_lower": card["candidates"][c].get("lower"),
                "test_map": float(v.mean()),
                "test_vs_base": paired_bootstrap(v, candidates["base"]) if c != "base" else None,
            }
            for c, v in candidates.items()
        },
        "machine": machine_info(),
    }


def agreement(rows: dict) -> dict:
    """How often a candidate's held-out-lists verdict against the base (its gain's sign)
    agrees with its test set's, over every candidate of every set; and the same for the
    decision's own rule (a clear gain, lower bound above 0, against a test gain above 0).
    The base at another length (``base@512``) learned nothing: it is not counted."""
    signs, clear = [], []
    for row in rows.values():
        for name, r in row["candidates"].items():
            if name.startswith("base") or r["test_vs_base"] is None:
                continue
            if r["pseudo_dev_vs_base"] is None:
                continue
            test = r["test_vs_base"]["delta"]
            signs.append((r["pseudo_dev_vs_base"] > 0) == (test > 0))
            clear.append((r["pseudo_dev_lower"] > 0) == (test > 0))
    return {"candidates": len(signs), "sign_agrees": int(sum(signs)),
            "clear_gain_agrees": int(sum(clear))}  # fmt: skip


def summary(rows: dict) -> dict:
    """Per row: the mean over the sets of its MAP difference with ``fused`` and ``base``,
    the pooled paired bootstrap over every test query, the worst set."""
    from adapter_zoo.adapt.decide import paired_bootstrap

    out = {"sets": len(rows), "queries": sum(r["queries"] for r in rows.values())}
    pooled = {k: np.concatenate([np.asarray(r["aps"][k]) for r in rows.values()]) for k in ROWS}
    for k in ROWS:
        deltas = {s: r["map"][k] - r["map"]["fused"] for s, r in rows.items()}
        out[k] = {
            "mean_map": float(np.mean([r["map"][k] for r in rows.values()])),
            "mean_delta_vs_fused": float(np.mean(list(deltas.values()))),
            "mean_delta_vs_base": float(
                np.mean([r["map"][k] - r["map"]["base"] for r in rows.values()])
            ),  # fmt: skip
            "pooled_vs_fused": paired_bootstrap(pooled[k], pooled["fused"]),
            "worst_set_vs_fused": float(min(deltas.values())),
            "sets_at_least_fused": int(sum(d >= 0 for d in deltas.values())),
        }
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--sets", nargs="*", default=list(SETS), choices=list(SETS))
    parser.add_argument("--out", type=Path, default=RESULTS / "outside_study.json")
    parser.add_argument(
        "--adapt-budget", type=lambda v: None if v == "none" else float(v), default=ADAPT_BUDGET,
        help="adapt's budget in minutes (default: adapt's own), or 'none': the plan a fast "
        "machine would run (on a shared machine, where the measured speed is not the machine's)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    os.environ.setdefault("ADAPTER_ZOO_HOME", str(args.work / "zoo"))
    started = time.perf_counter()
    record = {"benchmark": "outside_study", "precision": "fp32", "sets": {}}
    if args.out.is_file():  # resumable: what is already recorded stays
        record = json.loads(args.out.read_text())

    def save():
        record.update(machine=machine_info(), wall_time_s=round(time.perf_counter() - started, 1))
        if record["sets"]:
            record["summary"] = summary(record["sets"])
            record["agreement"] = agreement(record["sets"])
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1) + "\n")
        os.replace(tmp, args.out)

    zoo = forum_zoo(args.work)
    for benchmark in args.sets:
        record["sets"][benchmark] = set_row(args.work, benchmark, zoo, args.adapt_budget)
        record["adapt_budget_minutes"] = args.adapt_budget
        save()
    print(json.dumps(record.get("summary"), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
