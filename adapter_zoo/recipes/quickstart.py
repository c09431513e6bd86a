"""The main job: the whole idea on a laptop, on real shipped data, in about 20 minutes.

parse two shipped StackExchange forums → train the beer forum's adapter on MiniLM →
build LAS-style answer-selection sets from questions held out of training (beer, and
bicycles.meta as an unseen domain) → evaluate BM25, the untrained base, a zero-shot
bi-encoder and the adapter → leaderboard tables and plots, all in one folder.

Example:
    >>> from adapter_zoo.recipes.quickstart import quickstart
    >>> quickstart("quickstart-output")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.recipes.runner import own_zoo, shipped_data

HOME_FORUM = "beer.stackexchange.com"
OTHER_FORUM = "bicycles.meta.stackexchange.com"
ADAPTER_NAME = "beer"
# The adapter learns what the held-out set asks: a question (title + body) against its
# accepted answer, with the answers of BM25-similar questions as negatives and a listwise
# loss; MiniLM's pair-cosine head starts it from the base's own similarity. With the CLS
# head and random title-body negatives, 250 steps stayed below BM25 (MAP 0.27 vs 0.64).
# lr 1e-3 instead of the paper's 1e-4: 150 steps, not epochs.
DEFAULT_MAX_STEPS = 150
TRAIN_MAX_LENGTH = 192
TRAIN_BATCH_SIZE = 16  # pairs: two questions, each with its answer and 7 negatives
TRAIN_NEGATIVES = 7
TRAIN_LR = 1e-3
# Candidates per held-out question, and the pair length every cross-encoder is evaluated at:
# on 2 CPU cores MiniLM scores about 15 pairs/s at length 192, so LAS's 100 candidates at
# length 300 would take the untrained base alone 12 minutes.
CANDIDATES = 50
EVAL_MAX_LENGTH = TRAIN_MAX_LENGTH


def _cli(argv: list[str]) -> None:
    from adapter_zoo.cli import main

    code = main(argv)
    if code:
        raise ZooError(f"quickstart: 'adapter-zoo {' '.join(argv)}' failed (exit {code})")


def _banner(text: str) -> None:
    print(f"\n== {text}", flush=True)


def quickstart(
    out: str | Path = "quickstart-output",
    *,
    base: str = "minilm-l6",
    max_steps: int | None = None,
    smoke: bool = False,
) -> Path:
    """Run the main job and return the output folder.

    Args:
        out: output folder (parsed forums, benchmarks, results, leaderboard).
        base: base model; the offline default is MiniLM-L6 shipped in a PyPI package.
        max_steps: training steps (default: the 10-minute budget).
        smoke: a tiny random model and 4 steps, to check the pipeline in seconds; it trains
            into a zoo of its own (``out/zoo``), never the user's.
    """
    if smoke:
        with own_zoo(Path(out).resolve() / "zoo"):
            return _quickstart(out, base=base, max_steps=max_steps, smoke=True)
    return _quickstart(out, base=base, max_steps=max_steps, smoke=False)


def _quickstart(out, *, base: str, max_steps: int | None, smoke: bool) -> Path:
    import stackexchange
    from benchmarks import build_from_forum

    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if smoke:
        from adapter_zoo.recipes.tiny import build_tiny_bert

        base = str(build_tiny_bert(out / "tiny-sentence-bert", sentence_encoder=True))
        max_steps = 4
    steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps

    _banner("1/5 parse the shipped StackExchange archives")
    forum_dirs = {}
    for host in (HOME_FORUM, OTHER_FORUM):
        forum_dirs[host] = stackexchange.parse_forum(
            shipped_data() / f"{host}.7z", out / "parsed", overwrite=True
        )
        stats = json.loads((forum_dirs[host] / "stats.json").read_text())
        print(
            f"   {host}: {stats['questions']} questions, {stats['answers']} answers, pairs {stats['pairs']}"
        )

    _banner(f"2/5 train the {ADAPTER_NAME} adapter on {base} ({steps} steps)")
    _cli(
        ["train", "--mode", "adapter", "--data", str(out / "parsed"), "--forums", HOME_FORUM,
         "--name", ADAPTER_NAME, "--base", base, "--max-steps", str(steps),
         "--pairs", "question_answer", "--hard-negatives", "--loss", "listwise",
         "--negatives", str(TRAIN_NEGATIVES), "--max-length", str(TRAIN_MAX_LENGTH),
         "--batch-size", str(TRAIN_BATCH_SIZE), "--lr", str(TRAIN_LR), "--overwrite"]
    )  # fmt: skip

    _banner("3/5 build answer-selection sets from held-out questions")
    benchmark_dirs = {}
    for host, forum_dir in forum_dirs.items():
        target = out / "benchmarks" / f"{host.split('.')[0]}-answers"
        benchmark_dirs[host] = build_from_forum(
            forum_dir, target, task="answer_selection", candidates=CANDIDATES, seed=0
        )

    _banner("4/5 evaluate BM25, the untrained base, a zero-shot bi-encoder and the adapter")
    results = out / "results"
    if results.exists():
        shutil.rmtree(results)
    models = ["bm25", f"base:{base}", ADAPTER_NAME]
    if not smoke:
        models.insert(2, "sbert:minilm-l6")
    for bench in benchmark_dirs.values():
        for model in models:
            _cli(["evaluate", "--model", model, "--benchmark", f"local:{bench}",
                  "--split", "test", "--results", str(results),
                  "--max-length", str(EVAL_MAX_LENGTH)])  # fmt: skip

    _banner("5/5 leaderboard")
    _cli(["leaderboard", str(results), "--out", str(out / "leaderboard")])
    print(verdict(results, benchmark_dirs))
    print(f"\nEverything is in {out}")
    return out


def verdict(results: Path, benchmark_dirs: dict) -> str:
    """Say plainly how the adapter did against BM25 on each held-out set."""
    from benchmarks.results import read_results

    records = read_results(results)
    lines = ["", "How the beer adapter did (P@1 / MAP on held-out questions):"]
    for host, bench in benchmark_dirs.items():
        scores = {r["model"]: r["metrics"] for r in records if r["benchmark"] == f"local:{bench}"}
        adapter, bm25 = scores.get(ADAPTER_NAME), scores.get("bm25")
        if adapter is None or bm25 is None:
            lines.append(f"  {host}: missing results")
            continue
        better = adapter["map"] > bm25["map"]
        role = "its own forum" if host == HOME_FORUM else "an unseen forum (zero-shot)"
        lines.append(
            f"  {host} ({role}): adapter {adapter['p@1']:.3f} / {adapter['map']:.3f}, "
            f"BM25 {bm25['p@1']:.3f} / {bm25['map']:.3f} -> "
            + ("the adapter beats BM25" if better else "the adapter does NOT beat BM25 here")
        )
    return "\n".join(lines)
