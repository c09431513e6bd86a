"""The answer stage's price: scoring a fused or fed-back answer against scoring its members.

``adapt`` answers with the zero-shot base fused with BM25, or with the base's queries fed back
(dense pseudo-relevance feedback): both are meant to cost what their members cost, since the
fusion scores each member once and then normalises per query, and the feedback reuses the
base's one encoding of the candidates. Timed on the same pairs in the same run, each model
loaded by its spec as a user loads it:

* ``base``: ``sbert:minilm-l6``; ``bm25``: BM25 over each query's candidates;
* ``fused``: ``fusion:sbert:minilm-l6*0.9+bm25*0.1`` against ``base`` + ``bm25`` (its members);
* ``prf``: ``prf:sbert:minilm-l6@k=3,w=0.3`` against ``base``.

The pairs are the first ``--questions`` test lists of MEDIQA 2019 (long NIH passages, several
relevant a question) and WikiQA (short Wikipedia sentences). Each round times every model
once, in a rotated order; a model's time is its fastest round (the least disturbed by the
machine). Target: a fused or fed-back answer within 10% of its members' scoring.
Saves ``results/answer_time.json``.

Run: ``python benchmarks/speed/answer_time.py [--questions 60] [--rounds 3]``
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
from adapter_zoo.fusion_defaults import base_fused_spec  # noqa: E402
from adapter_zoo.names import ZERO_SHOT_MODEL  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.studies.adapt_study import DATA  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
BENCHMARKS = DATA / "benchmarks"
# set -> its data dir
SETS = {"mediqa2019": BENCHMARKS / "outside", "wikiqa": BENCHMARKS}
MODELS = {
    "base": ZERO_SHOT_MODEL,
    "bm25": "bm25",
    "fused": base_fused_spec(ZERO_SHOT_MODEL),
    "prf": f"prf:{ZERO_SHOT_MODEL}@k=3,w=0.3",
}
# what each answer is measured against: the sum of its members' times
MEMBERS = {"fused": ("base", "bm25"), "prf": ("base",)}
TARGET = 1.10


def first_test_pairs(name: str, questions: int) -> list[tuple[str, str]]:
    """The (question, candidate) pairs of ``name``'s first ``questions`` test lists."""
    from benchmarks import get
    from benchmarks.baselines import benchmark_pairs

    dataset = get(name).load("test", SETS[name])
    return benchmark_pairs(dataset.select(range(min(questions, len(dataset)))))


def timed_rounds(models: dict, pairs, rounds: int) -> dict[str, float]:
    """Each model's fastest of ``rounds`` scorings of ``pairs``, the order rotated a round."""
    names = list(models)
    best = dict.fromkeys(names, float("inf"))
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            began = time.perf_counter()
            models[name].score(pairs)
            best[name] = min(best[name], time.perf_counter() - began)
    return best


def measure(questions: int, rounds: int) -> dict:
    import adapter_zoo

    models = {name: adapter_zoo.load(spec) for name, spec in MODELS.items()}
    out = {}
    for name in SETS:
        pairs = first_test_pairs(name, questions)
        for model in models.values():  # the first call's one-off set-up, not a scoring
            model.score(pairs[:8])
        seconds = timed_rounds(models, pairs, rounds)
        ratios = {
            answer: round(seconds[answer] / sum(seconds[m] for m in members), 3)
            for answer, members in MEMBERS.items()
        }
        out[name] = {
            "questions": questions,
            "pairs": len(pairs),
            "seconds": {k: round(v, 3) for k, v in seconds.items()},
            "over_members": ratios,
            "meets_target": all(v <= TARGET for v in ratios.values()),
        }
        print(f"{name}: {len(pairs)} pairs, "
              + ", ".join(f"{k} {v:.2f} s" for k, v in seconds.items())
              + "; " + ", ".join(f"{k} / members {v:.3f}x" for k, v in ratios.items()),
              flush=True)  # fmt: skip
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60, help="test lists a set")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "answer_time.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    sets = measure(args.questions, args.rounds)
    record = {
        "benchmark": "answer_time",
        "models": MODELS,
        "members": {k: list(v) for k, v in MEMBERS.items()},
        "rounds": args.rounds,
        "sets": sets,
        "target": f"a fused or fed-back answer within {TARGET - 1:.0%} of its members' scoring",
        "target_ratio": TARGET,
        "meets_target": all(s["meets_target"] for s in sets.values()),
        "load_average_1m": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "seconds": round(time.perf_counter() - began, 1),
        "machine": machine_info(),
    }
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
