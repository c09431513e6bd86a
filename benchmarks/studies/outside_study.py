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
* ``fused_tuned``: the zero-shot base fused with BM25 at the weight and normalisation ``adapt``'s
  grid chose for it on the target's decision lists (the fixed fusion where the grid's best is
  within the lists' noise): the best a user gets without training;
* ``prf``: the zero-shot base with dense pseudo-relevance feedback, at ``adapt``'s chosen point
  where it chose feedback, else at the grid's best point or the default one (``k=3, w=0.3``):
  feedback's effect on the test, beside adapt's choice of on or off;
* ``zoo``: the forum zoo's best similarity strategy (``adapt --strategy route`` over the
  eight shipped forums' adapters, the best of the transfer study: ``results/transfer.json``);
* ``multitask``: the forum zoo's multi-task adapter over the eight forums;
* ``adapt``: ``adapter_zoo.adapt(target)`` as a user runs it (default budget), empty zoo.

The forum zoo is the shipped zoo (``adapter_zoo/shipped``, trained by
``recipes/toml/shipped_zoo.toml``: 40 steps of 32 pairs at 128 tokens per forum, 160
round-robin steps for the multi-task one).
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
from adapter_zoo.fusion_defaults import base_fused_spec  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.studies.adapt_study import (  # noqa: E402
    DATA,
    FUSED,
    ZERO_SHOT,
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
MULTITASK = "zoo-multitask"
ROWS = ("bm25", "base", "fused", "fused_tuned", "prf", "zoo", "multitask", "adapt")
# the baselines every row is measured against: the fixed fusion and the tuned one
BASELINES = ("fused", "fused_tuned")


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


def forum_zoo() -> list[str]:
    """The eight forums' adapters: the shipped zoo's, which ``shipped_zoo.toml`` trains as this
    study's forum zoo is meant (its multi-task adapter is :data:`MULTITASK`).

    Raises:
        SystemExit: an entry is missing from the shipped zoo (a partial checkout).
    """
    from adapter_zoo.zoo.store import local_entry

    names = [short(host) for host in FORUMS]
    missing = [name for name in (*names, MULTITASK) if local_entry(name) is None]
    if missing:
        raise SystemExit(f"outside_study: the shipped zoo lacks {', '.join(missing)}")
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


def answer_stage_models(stage: dict) -> dict:
    """The ``fused_tuned`` and ``prf`` rows' models from an ``adapt`` card's ``answer_stage``
    record (the grids' choices on the decision lists), and what feedback adapt chose."""
    from adapter_zoo.compose.prf import DEFAULT_K, DEFAULT_WEIGHT

    fusion = stage["base_fusion"]["chosen"]
    tuned = base_fused_spec(
        ZERO_SHOT, bm25_share=fusion["bm25"], normalisation=fusion["normalisation"]
    )
    feedback = stage["feedback"]
    chosen_on = feedback["chosen"]["k"] > 0
    point = next((feedback[p] for p in ("chosen", "best") if feedback[p]["k"] > 0),
                 {"k": DEFAULT_K, "w": DEFAULT_WEIGHT})  # fmt: skip
    return {
        "fused_tuned": tuned,
        "prf": f"prf:{ZERO_SHOT}@k={point['k']},w={point['w']:g}",
        "feedback_chosen": chosen_on,
    }


def set_row(
    work: Path, benchmark: str, zoo: list[str], budget: float | None = ADAPT_BUDGET
) -> dict:
    from adapter_zoo.adapt.decide import paired_bootstrap
    from adapter_zoo.zoo.store import local_entry, read_card

    data_dir, target = SETS[benchmark]
    adapt_name, adapt_seconds = adapted(work, target, [], "auto", budget)
    zoo_name, _ = adapted(work, target, zoo, ZOO_STRATEGY)
    card = read_card(local_entry(adapt_name))["adapt"]
    stage = answer_stage_models(card["answer_stage"])
    models = {"bm25": "bm25", "base": ZERO_SHOT, "fused": FUSED,
              "fused_tuned": stage["fused_tuned"], "prf": stage["prf"], "zoo": zoo_name,
              "multitask": MULTITASK}  # fmt: skip
    aps = query_aps(work, benchmark, data_dir, models)
    candidates = query_aps(work, benchmark, data_dir, candidate_models(card))
    # the entry holds its chosen candidate's files (or names the same models): its test APs
    # are that candidate's, scored once (identical on the four sets that scored both)
    aps["adapt"], models["adapt"] = candidates[card["decision"]["chosen"]], adapt_name
    return {
        "target": target,
        "queries": len(aps["base"]),
        "map": {k: float(v.mean()) for k, v in aps.items()},
        **{
            f"vs_{b}": {k: paired_bootstrap(v, aps[b]) for k, v in aps.items() if k != b}
            for b in BASELINES
        },  # fmt: skip
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
            "answer_stage": card["answer_stage"],
            "feedback_chosen": stage["feedback_chosen"],
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


def feedback_agreement(rows: dict) -> dict:
    """Per set, feedback's test gain over the base and whether ``adapt`` chose it: the
    choice agrees where it is on with a gain or off without one."""
    out = {}
    for name, row in rows.items():
        gain = row["map"]["prf"] - row["map"]["base"]
        chosen = row["adapt"]["feedback_chosen"]
        out[name] = {"test_gain": round(gain, 4), "chosen": chosen, "agrees": chosen == (gain > 0)}
    return out


def summary(rows: dict) -> dict:
    """Per row: the mean over the sets of its MAP difference with each baseline (the fixed
    and the tuned fusion) and with the base, the pooled paired bootstrap over every test
    query, the worst set."""
    from adapter_zoo.adapt.decide import paired_bootstrap

    out = {"sets": len(rows), "queries": sum(r["queries"] for r in rows.values())}
    pooled = {k: np.concatenate([np.asarray(r["aps"][k]) for r in rows.values()]) for k in ROWS}
    for k in ROWS:
        entry = {
            "mean_map": float(np.mean([r["map"][k] for r in rows.values()])),
            "mean_delta_vs_base": float(
                np.mean([r["map"][k] - r["map"]["base"] for r in rows.values()])
            ),  # fmt: skip
        }
        for b in BASELINES:
            deltas = [r["map"][k] - r["map"][b] for r in rows.values()]
            entry |= {
                f"mean_delta_vs_{b}": float(np.mean(deltas)),
                f"pooled_vs_{b}": paired_bootstrap(pooled[k], pooled[b]),
                f"worst_set_vs_{b}": float(min(deltas)),
                f"sets_at_least_{b}": int(sum(d >= 0 for d in deltas)),
            }
        out[k] = entry
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
            record["feedback"] = feedback_agreement(record["sets"])
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1) + "\n")
        os.replace(tmp, args.out)

    zoo = forum_zoo()
    for benchmark in args.sets:
        record["sets"][benchmark] = set_row(args.work, benchmark, zoo, args.adapt_budget)
        record["adapt_budget_minutes"] = args.adapt_budget
        save()
    print(json.dumps(record.get("summary"), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
