"""Leave-one-forum-out: how well the zoo serves a domain it never saw, strategy by strategy.

The zoo is the ``shipped_zoo`` recipe's (``adapter-zoo run shipped_zoo --work W``): one
bi-encoder adapter per shipped forum (eight) and a multi-task adapter over all eight. For each
forum F in turn the zoo loses F's adapter, and every strategy of ``adapter_zoo.adapt`` builds a
model for F from F's unlabelled question titles alone:

* ``zero-shot``: all-MiniLM-L6-v2 as it is (the model a user already has);
* ``nearest``: the adapter whose training questions' embedding centroid is nearest F's;
* ``soup``: the similarity-weighted average of the top-3 adapters' weights (AdapterSoup);
* ``fusion``: the similarity-weighted sum of the top-3 adapters' per-query z-scores;
* ``route``: each query ranked by the adapter whose centroid is nearest that query;
* ``multitask``: a multi-task adapter over the other seven forums (``loo-mt-F``, trained with
  the recipe's multi-task settings; ``recipes/toml/shipped_zoo.toml``). Where that entry is
  missing, the one over all eight stands in and the row says ``seen``: it has trained on F's
  questions, so it is not an unseen-domain result.
* ``auto``: the rule ``adapt`` uses, chosen by nested leave-one-out: for F, the rule (a
  strategy and a minimum similarity below which the zero-shot base is kept) that has the best
  mean MAP gain on the other seven forums is applied to F, so F's score never chose its rule.

Each strategy is scored on every split of F's LAS-style set (train, dev and test: F is
unseen, and its ~5% test split alone gives +-0.07), MAP against the zero-shot bi-encoder's.
Scores of single models are computed once per (model, forum) and cached under
``W/transfer``; fusion and routing combine them with the library's own functions
(``adapter_zoo.compose.fusion.fuse``, ``adapter_zoo.compose.route.route``), so the study measures
exactly what the saved entries compute. One left-out forum is also adapted end to end
(``adapter_zoo.adapt`` writes the entry, ``benchmarks.evaluate`` scores it) as a check.

Also recorded: the full transfer matrix on every split (each adapter on each forum), and
how often the most similar forum's adapter is the best single adapter on the left-out forum
(top-1 and top-3 hit rates).

Results: ``results/transfer.json``. Run (after the recipe):
``ADAPTER_ZOO_HOME=... python benchmarks/studies/transfer.py --work W``
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from adapter_zoo.names import ZERO_SHOT_MODEL  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
FORUMS = (
    "beer.stackexchange.com",
    "bicycles.meta.stackexchange.com",
    "ai.stackexchange.com",
    "quantumcomputing.stackexchange.com",
    "matheducators.stackexchange.com",
    "augur.stackexchange.com",
    "music.meta.stackexchange.com",
    "raspberrypi.meta.stackexchange.com",
)
ZERO_SHOT = ZERO_SHOT_MODEL
MULTITASK = "zoo-multitask"
LOO_MULTITASK = "loo-mt-"  # + the left-out forum's short name
SPLITS = ("train", "dev", "test")
TOP_K = 3
# The rules the nested selection chooses among: a strategy, used when the best similarity
# reaches the threshold (else the zero-shot base).
RULE_STRATEGIES = ("nearest", "soup", "fusion", "route", "multitask")
THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def short(host: str) -> str:
    for suffix in (".stackexchange.com",):
        host = host.removesuffix(suffix)
    return host.replace(".", "-")


def load_lists(work: Path, host: str) -> dict:
    """Every split of the forum's LAS-style set, as flat pairs and per-query bounds."""
    from benchmarks import get

    bench = get(f"local:{work / 'bench' / short(host)}")
    queries, candidates, labels = [], [], []
    for split in SPLITS:
        rows = bench.load(split)
        queries += list(rows["query"])
        candidates += list(rows["candidates"])
        labels += list(rows["labels"])
    pairs = [(q, c) for q, cands in zip(queries, candidates) for c in cands]
    bounds = np.cumsum([0] + [len(c) for c in candidates])
    return {"queries": queries, "labels": labels, "pairs": pairs, "bounds": bounds}


class ScoreCache:
    """Per-pair scores of one model on one forum's lists, computed once, kept as ``.npy``."""

    def __init__(self, folder: Path, lists: dict):
        self.folder = folder
        self.lists = lists
        folder.mkdir(parents=True, exist_ok=True)

    def get(self, model: str, host: str) -> np.ndarray:
        path = self.folder / f"{model.replace(':', '_').replace('/', '_')}__{short(host)}.npy"
        if path.is_file():
            return np.load(path, allow_pickle=False)
        import adapter_zoo

        started = time.perf_counter()
        scorer = adapter_zoo.load(model)
        scores = np.asarray(scorer.score(self.lists[host]["pairs"], progress=True), np.float32)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, scores, allow_pickle=False)
        os.replace(tmp, path)
        print(f"  scored {model} on {short(host)} in {time.perf_counter() - started:.0f}s")
        return scores


def per_query(scores: np.ndarray, bounds) -> list[np.ndarray]:
    return [scores[a:b] for a, b in itertools.pairwise(bounds)]


def mean_ap(scores: np.ndarray, lists: dict) -> float:
    from adapter_zoo.metrics import evaluate_rankings

    return evaluate_rankings(per_query(scores, lists["bounds"]), lists["labels"])["map"]


def fused(plan, cache: ScoreCache, host: str) -> np.ndarray:
    from adapter_zoo.compose.fusion import fuse

    lists = cache.lists[host]
    members = [cache.get(m, host) for m in plan.members]
    out = np.zeros(len(lists["pairs"]), np.float32)
    for a, b in itertools.pairwise(lists["bounds"]):
        out[a:b] = fuse([s[a:b] for s in members], plan.weights)
    return out


def routed(plan, cache: ScoreCache, host: str, query_vectors, centroids) -> np.ndarray:
    from adapter_zoo.compose.route import route

    lists = cache.lists[host]
    choice = route(query_vectors, np.stack([centroids[m] for m in plan.members]))
    members = [cache.get(m, host) for m in plan.members]
    out = np.zeros(len(lists["pairs"]), np.float32)
    for i, (a, b) in enumerate(itertools.pairwise(lists["bounds"])):
        out[a:b] = members[int(choice[i])][a:b]
    return out, np.bincount(choice, minlength=len(plan.members)).tolist()


def souped(plan, cache: ScoreCache, host: str) -> np.ndarray:
    """The soup entry of ``plan`` (built once, named after the left-out forum), scored."""
    from adapter_zoo.adapt.soup import soup_entry
    from adapter_zoo.zoo import CARD_FILE, zoo_home

    name = f"loo-soup-{short(host)}"
    if not (zoo_home() / name / CARD_FILE).is_file():
        soup_entry(name, plan.members, plan.weights)
    return cache.get(name, host)


def multitask_for(host: str, fallback: str) -> tuple[str, bool]:
    """The multi-task entry that never saw ``host`` when it exists, else ``fallback`` (seen)."""
    from adapter_zoo.zoo import CARD_FILE, zoo_home

    unseen = f"{LOO_MULTITASK}{short(host)}"
    if (zoo_home() / unseen / CARD_FILE).is_file():
        return unseen, False
    return fallback, True


def strategy_scores(host, others, cache, centroids, target_centroid, query_vectors, fallback):
    """MAP and plan of every strategy for the left-out forum ``host``."""
    from adapter_zoo.adapt.plan import plan_adaptation

    lists = cache.lists[host]
    entries = {short(o): centroids[short(o)] for o in others}
    multitask, seen = multitask_for(host, fallback)
    rows = {}
    for strategy in ("zero-shot", "nearest", "soup", "fusion", "route", "multitask"):
        plan = plan_adaptation(
            target_centroid, entries, strategy,
            top_k=None if strategy == "route" else TOP_K, multitask=multitask, base=ZERO_SHOT,
        )  # fmt: skip
        extra = {}
        if strategy in ("zero-shot", "nearest", "multitask"):
            scores = cache.get(plan.members[0], host)
        elif strategy == "soup":
            scores = souped(plan, cache, host)
        elif strategy == "fusion":
            scores = fused(plan, cache, host)
        else:
            scores, counts = routed(plan, cache, host, query_vectors, centroids)
            extra["queries_per_member"] = dict(zip(plan.members, counts))
        rows[strategy] = {
            "map": mean_ap(scores, lists),
            "members": list(plan.members),
            "weights": [round(w, 4) for w in plan.weights],
            **extra,
        }
    rows["multitask"]["seen"] = seen
    best_similarity = max(
        float(np.dot(target_centroid, entries[e])) for e in entries
    )  # the ``auto`` rule's input
    return rows, best_similarity


def choose_rule(study: dict, hosts) -> tuple[str, float]:
    """The (strategy, threshold) with the best mean MAP gain over ``hosts``; ties: the higher
    threshold (falls back more), then the order of RULE_STRATEGIES. A multi-task adapter that
    saw the forum it is scored on is no candidate."""
    unseen = not any(study[h]["strategies"]["multitask"]["seen"] for h in study)
    strategies = RULE_STRATEGIES if unseen else RULE_STRATEGIES[:-1]
    best, best_key = None, None
    for strategy, threshold in itertools.product(strategies, THRESHOLDS):
        gains = [rule_gain(study[h], strategy, threshold) for h in hosts]
        key = (round(float(np.mean(gains)), 6), threshold, -RULE_STRATEGIES.index(strategy))
        if best_key is None or key > best_key:
            best, best_key = (strategy, threshold), key
    return best


def rule_gain(row: dict, strategy: str, threshold: float) -> float:
    if row["best_similarity"] < threshold:
        return 0.0
    return row["strategies"][strategy]["map"] - row["strategies"]["zero-shot"]["map"]


def summarise(study: dict) -> dict:
    summary = {}
    names = list(next(iter(study.values()))["strategies"]) + ["auto"]
    for name in names:
        if name == "auto":
            deltas = [row["auto"]["delta"] for row in study.values()]
        else:
            deltas = [
                row["strategies"][name]["map"] - row["strategies"]["zero-shot"]["map"]
                for row in study.values()
            ]
        summary[name] = {
            "mean_delta": float(np.mean(deltas)),
            "wins": int(sum(d > 0 for d in deltas)),
            "at_least_zero_shot": int(sum(d >= 0 for d in deltas)),
            "worst": float(min(deltas)),
            "forums": len(deltas),
        }
    return summary


def hit_rates(study: dict) -> dict:
    top1 = top3 = 0
    for row in study.values():
        by_similarity = sorted(row["similarities"], key=lambda n: -row["similarities"][n])
        best = max(row["single"], key=lambda n: row["single"][n])
        row["best_single"] = best
        row["similarity_order"] = by_similarity
        top1 += best == by_similarity[0]
        top3 += best in by_similarity[:3]
    n = len(study)
    return {
        "top1": top1 / n,
        "top3": top3 / n,
        "forums": n,
        "random_top1": 1 / 7,
        "random_top3": 3 / 7,
    }


def end_to_end(work: Path, host: str, others, study_row: dict, rule) -> dict:
    """``adapt`` writes the entry for ``host`` from the other forums; ``evaluate`` scores its
    test split, beside the study's own number for the same strategy on that split."""
    import adapter_zoo
    from benchmarks import evaluate

    strategy = rule[0] if study_row["best_similarity"] >= rule[1] else "zero-shot"
    name = f"adapt-{short(host)}"
    multitask, seen = multitask_for(host, MULTITASK)
    zoo = [short(o) for o in others] + ([] if seen else [multitask])
    adapter_zoo.adapt(
        work / "parsed" / host, name=name, zoo=zoo,
        strategy=strategy, top_k=len(others) if strategy == "route" else TOP_K, overwrite=True,
    )  # fmt: skip
    record = evaluate(name, f"local:{work / 'bench' / short(host)}", split="test")
    base = evaluate(ZERO_SHOT, f"local:{work / 'bench' / short(host)}", split="test")
    chosen = adapter_zoo.load(name).card["adapt"]
    return {
        "forum": host, "entry": name, "strategy": strategy, "card_strategy": chosen["strategy"],
        "members": chosen["members"], "test_map": record["metrics"]["map"],
        "zero_shot_test_map": base["metrics"]["map"],
    }  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="the shipped_zoo recipe's work folder")
    parser.add_argument("--out", default=str(RESULTS / "transfer.json"))
    parser.add_argument("--check-forum", default="augur.stackexchange.com")
    parser.add_argument("--forums", nargs="+", default=list(FORUMS), help="the zoo's forums")
    parser.add_argument(
        "--multitask",
        default=MULTITASK,
        help=f"the multi-task entry where {LOO_MULTITASK}F is missing",
    )
    args = parser.parse_args(argv)
    forums = tuple(args.forums)
    from adapter_zoo.adapt.domain import entry_centroid
    from adapter_zoo.adapt.targets import target_texts
    from adapter_zoo.zoo.domain import domain_centroid, load_embedder

    started = time.perf_counter()
    work = Path(args.work).resolve()
    lists = {host: load_lists(work, host) for host in forums}
    cache = ScoreCache(work / "transfer" / "scores", lists)
    embedder = load_embedder()
    centroids = {short(h): entry_centroid(short(h)) for h in forums}
    matrix = {
        short(a): {short(t): mean_ap(cache.get(short(a), t), lists[t]) for t in forums}
        for a in forums
    }
    matrix[args.multitask] = {
        short(t): mean_ap(cache.get(args.multitask, t), lists[t]) for t in forums
    }
    matrix[ZERO_SHOT] = {short(t): mean_ap(cache.get(ZERO_SHOT, t), lists[t]) for t in forums}
    study = {}
    for host in forums:
        others = [o for o in forums if o != host]
        target = domain_centroid(target_texts(work / "parsed" / host), embedder)
        query_vectors = embedder.encode(
            lists[host]["queries"], batch_size=64, normalize_embeddings=True
        )
        strategies, best_similarity = strategy_scores(
            host, others, cache, centroids, target, query_vectors, args.multitask
        )
        study[short(host)] = {
            "questions": len(lists[host]["queries"]),
            "strategies": strategies,
            "best_similarity": best_similarity,
            "similarities": {short(o): float(target @ centroids[short(o)]) for o in others},
            "single": {short(o): matrix[short(o)][short(host)] for o in others},
        }
    for host in study:
        rule = choose_rule(study, [h for h in study if h != host])
        gain = rule_gain(study[host], *rule)
        study[host]["auto"] = {"rule": list(rule), "delta": gain}
    final_rule = choose_rule(study, list(study))
    record = {
        "benchmark": "transfer",
        "forums": [short(h) for h in forums],
        "splits": list(SPLITS),
        "top_k": TOP_K,
        "matrix_map": matrix,
        "study": study,
        "summary": summarise(study),
        "hit_rate": hit_rates(study),
        "auto_rule": {"strategy": final_rule[0], "min_similarity": final_rule[1]},
        "multitask_seen": sorted(h for h in study if study[h]["strategies"]["multitask"]["seen"]),
        "machine": machine_info(),
    }
    check_host = next(h for h in forums if h == args.check_forum)
    record["end_to_end"] = end_to_end(
        work, check_host, [o for o in forums if o != check_host], study[short(check_host)],
        final_rule,
    )  # fmt: skip
    record["wall_time_s"] = round(time.perf_counter() - started, 1)
    Path(args.out).write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps({"summary": record["summary"], "hit_rate": record["hit_rate"],
                      "auto_rule": record["auto_rule"]}, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
