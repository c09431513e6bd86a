"""The answer stage without training: the zero-shot base, its fusion with BM25 at the default
0.9/0.1 and at a weight tuned on the set's dev split, and dense pseudo-relevance feedback on
and off, each on the test split with paired bootstrap intervals (their scoring time against
their members': ``benchmarks/speed/answer_time.py``).

Two sets, one with several relevant answers a question and one with about one:

* MEDIQA 2019 Task 3 (``mediqa2019``, consumer health questions -> NIH answer passages,
  2-11 candidates, several relevant);
* WikiQA clean (``wikiqa``, a question -> its Wikipedia summary's sentences, mostly one
  relevant).

The tuned rows are chosen on the dev split only, as ``adapt`` chooses on its decision lists
(:mod:`adapter_zoo.adapt.fusion_choice`: the grid's best replaces the default only beyond
the dev lists' noise); ``dev-best`` is the grid's best on dev without that rule, to show what
the rule keeps away. The test split is scored once per row and never chooses anything.

Every row is computed from the base's embeddings of each distinct text (one encoding per
split) and BM25 over each question's own candidates (a fusion's member,
:class:`~adapter_zoo.compose.BM25Scorer`); the base's and the fused default's test MAPs are
checked against ``evaluate``'s registered runs where a set has them. Results:
``results/answer_stage.json``. Run: ``python benchmarks/studies/answer_stage.py``
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
from adapter_zoo.adapt.decide import list_average_precisions, paired_bootstrap  # noqa: E402
from adapter_zoo.adapt.fusion_choice import (  # noqa: E402
    FEEDBACK_GRID,
    FEEDBACK_OFF,
    choose_feedback,
    choose_fusion,
)
from adapter_zoo.compose.fusion import NORMALISATIONS  # noqa: E402
from adapter_zoo.compose.prf import feedback_scores  # noqa: E402
from adapter_zoo.fusion_defaults import BASE_FUSION_WEIGHTS, base_fused_spec  # noqa: E402
from adapter_zoo.names import ZERO_SHOT_MODEL  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.studies.adapt_study import DATA  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
BENCHMARKS = DATA / "benchmarks"
# set -> its data dir
SETS = {"mediqa2019": BENCHMARKS / "outside", "wikiqa": BENCHMARKS}
# the feedback points scored on test beside the tuned one (k, w)
FEEDBACK_ROWS = ((1, 0.3), (3, 0.1), (3, 0.3), (3, 0.5), (5, 0.3))


class Split:
    """One split's lists, the base's embeddings of its pairs and BM25's scores (once)."""

    def __init__(self, name: str, split: str, data_dir: Path, encoder, bm25):
        from benchmarks import get
        from benchmarks.baselines import benchmark_pairs

        bench = get(name)
        dataset = bench.load(split, data_dir)
        labels = [list(map(int, row)) for row in dataset["labels"]]
        self.kept = bench.counted(labels)
        self.labels = labels
        self.lists = [len(row) for row in labels]
        self.pairs = benchmark_pairs(dataset)
        texts = list(dict.fromkeys(t for pair in self.pairs for t in pair))
        began = time.perf_counter()
        vectors = np.asarray(encoder.encode(texts), dtype=np.float64)
        self.encode_s = time.perf_counter() - began
        index = {t: i for i, t in enumerate(texts)}
        self.queries = vectors[[index[q] for q, _ in self.pairs]]
        self.candidates = vectors[[index[c] for _, c in self.pairs]]
        self.base = np.einsum("ij,ij->i", self.queries, self.candidates)
        self.bm25 = np.asarray(bm25.score(self.pairs), dtype=np.float64)
        self.texts = len(texts)

    def aps(self, scores) -> np.ndarray:
        return list_average_precisions(scores, self.labels)[self.kept]

    def fused(self, weights, normalisation) -> np.ndarray:
        bounds = np.concatenate([[0], np.cumsum(self.lists)])
        normalise = NORMALISATIONS[normalisation]
        out = np.zeros(len(self.pairs))
        for a, b in zip(bounds[:-1], bounds[1:]):
            out[a:b] = weights[0] * normalise(self.base[a:b]) + weights[1] * normalise(
                self.bm25[a:b]
            )
        return out

    def feedback(self, k: int, w: float) -> np.ndarray:
        if (k, w) == FEEDBACK_OFF:
            return self.base
        bounds = np.concatenate([[0], np.cumsum(self.lists)])
        groups = [np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        return feedback_scores(self.queries, self.candidates, groups, k=k, weight=w)


def _kept_lists(split: Split):
    """The split's lists with a relevant candidate (those its MAP counts), for choosing."""
    keep = np.repeat(split.kept, split.lists)
    labels = [row for row, k in zip(split.labels, split.kept) if k]
    lists = [n for n, k in zip(split.lists, split.kept) if k]
    return keep, labels, lists


def _rows(dev: Split, test: Split) -> tuple[dict, dict]:
    keep, labels, lists = _kept_lists(dev)
    fusion = choose_fusion([dev.base[keep]], dev.bm25[keep], labels, lists=lists)
    feedback = choose_feedback(dev.queries[keep], dev.candidates[keep], labels, lists=lists)
    tuned_w, tuned_norm = fusion.point[:2], fusion.point[2]
    best_w, best_norm = fusion.best[:2], fusion.best[2]
    rows = {
        "base": test.aps(test.base),
        "fused 0.9/0.1": test.aps(test.fused(BASE_FUSION_WEIGHTS, "zscore")),
        "fused tuned": test.aps(test.fused(tuned_w, tuned_norm)),
        "fused dev-best": test.aps(test.fused(best_w, best_norm)),
        "prf tuned": test.aps(test.feedback(*feedback.point)),
        "prf dev-best": test.aps(test.feedback(*feedback.best)),
    }
    for k, w in FEEDBACK_ROWS:
        rows[f"prf k={k},w={w:g}"] = test.aps(test.feedback(k, w))
    choices = {
        "fusion": fusion.to_card(["base", "bm25", "normalisation"]),
        "feedback": feedback.to_card(["k", "w"]),
        "fused_tuned_spec": _spec(tuned_w, tuned_norm),
        "fused_dev_best_spec": _spec(best_w, best_norm),
        "dev_lists": len(lists),
        "feedback_grid": [list(p) for p in FEEDBACK_GRID],
    }
    return rows, choices


def _spec(weights, normalisation) -> str:
    return base_fused_spec(ZERO_SHOT_MODEL, bm25_share=weights[1], normalisation=normalisation)


def _interval(a, b) -> dict:
    result = paired_bootstrap(a, b)
    return {"delta": round(result["delta"], 4),
            "interval": [round(x, 4) for x in result["interval"]]}  # fmt: skip


def run(sets) -> dict:
    from adapter_zoo import load
    from adapter_zoo.compose import BM25Scorer
    from benchmarks import get

    encoder, bm25 = load(ZERO_SHOT_MODEL), BM25Scorer()
    out = {}
    for name in sets:
        data_dir = SETS[name]
        began = time.perf_counter()
        dev = Split(name, "dev", data_dir, encoder, bm25)
        test = Split(name, "test", data_dir, encoder, bm25)
        rows, choices = _rows(dev, test)
        expected = get(name).expected
        checks = {}
        for row, model in (
            ("base", ZERO_SHOT_MODEL),
            ("fused 0.9/0.1", base_fused_spec(ZERO_SHOT_MODEL)),
        ):
            if (model, "test") in expected:
                want = expected[(model, "test")]["map"]
                checks[row] = {"evaluate": want, "here": round(float(rows[row].mean()), 6)}
                assert abs(rows[row].mean() - want) < 2e-3, (name, row, rows[row].mean(), want)
        out[name] = {
            "test_questions": int(test.kept.sum()),
            "dev_questions": int(dev.kept.sum()),
            "relevant_per_question": round(
                float(np.mean([sum(r) for r, k in zip(test.labels, test.kept) if k])), 2
            ),
            "map": {row: round(float(v.mean()), 4) for row, v in rows.items()},
            "vs_base": {
                row: _interval(v, rows["base"]) for row, v in rows.items() if row != "base"
            },
            "vs_fused": {
                row: _interval(v, rows["fused 0.9/0.1"])
                for row, v in rows.items()
                if row not in ("base", "fused 0.9/0.1")
            },
            "chosen_on_dev": choices,
            "checked_against_evaluate": checks,
            "seconds": round(time.perf_counter() - began, 1),
        }
        print(json.dumps({name: out[name]["map"]}, indent=1), flush=True)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--out", type=Path, default=RESULTS / "answer_stage.json")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    results = {
        "machine": machine_info(),
        "arguments": {"sets": args.sets},
        "model": ZERO_SHOT_MODEL,
        "sets": run(args.sets),
        "seconds": None,
    }
    results["seconds"] = round(time.perf_counter() - began, 1)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=1) + "\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out} ({results['seconds']} s)")


if __name__ == "__main__":
    main()
