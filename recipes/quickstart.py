"""The main job: the whole idea on a laptop, on real shipped data, in about 6 minutes on 2 CPU cores.

parse two shipped StackExchange forums → train the beer forum's bi-encoder adapter and its
cross-encoder adapter on MiniLM → build LAS-style answer-selection sets from questions held
out of training (beer, and bicycles.meta as an unseen domain) → compose the two adapters with
BM25, weights chosen on beer's dev split → evaluate BM25, the zero-shot bi-encoder (the model
a user already has), both adapters and the composition → leaderboard tables and plots.

Example:
    >>> from recipes.quickstart import quickstart
    >>> quickstart("quickstart-output")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from adapter_zoo.errors import ZooError
from recipes.runner import own_zoo
from stackexchange.catalog import shipped_data

HOME_FORUM = "beer.stackexchange.com"
OTHER_FORUM = "bicycles.meta.stackexchange.com"
BI_ADAPTER = "beer"  # MiniLM is a sentence encoder: its default zoo entry is a bi-encoder
CROSS_ADAPTER = "beer-cross"
COMPOSITION = "beer-fusion"
ZERO_SHOT = "sbert:minilm-l6"
# The bi-encoder adapter: question -> accepted answer and title -> body pairs, in-batch
# negatives; the dev split is scored every BI_EVAL_STEPS steps and the best state is kept,
# the base's own included (benchmarks/perf/quality.py has the lr/steps table behind this).
BI_STEPS = 40
BI_EVAL_STEPS = 10
# The cross-encoder adapter learns what the held-out set asks: a question (title + body)
# against its accepted answer, with the answers of BM25-similar questions as negatives and a
# listwise loss; MiniLM's pair-cosine head starts it from the base's own similarity.
CROSS_STEPS = 60
TRAIN_MAX_LENGTH = 128
TRAIN_BATCH_SIZE = 16  # pairs: two questions, each with its answer and 7 negatives
TRAIN_NEGATIVES = 7
TRAIN_LR = 1e-3
# Candidates per held-out question (LAS has 100; on 2 CPU cores a cross-encoder scores about
# 40 pairs/s at length 128, so 50 keeps the whole job near 6 minutes: quickstart_time.json).
CANDIDATES = 50
# Written into the output folder before any work: a folder holding it is the quickstart's
# own, whose results, parsed forums and benchmarks a rerun may replace.
MARKER = "quickstart.json"


def _cli(argv: list[str]) -> None:
    from adapter_zoo.cli import main

    code = main(argv)
    if code:
        raise ZooError(f"quickstart: 'adapter-zoo {' '.join(argv)}' failed (exit {code})")


class StageClock:
    """Announces each stage and times it: a user sees where the minutes go, and
    ``quickstart.json`` records them (``benchmarks/perf/quickstart_time.py`` reads them)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._current: tuple[str, float] | None = None

    def start(self, stage: str, text: str) -> None:
        """Ends the running stage (printing its time) and starts ``stage``, announced as
        ``text``."""
        self.finish()
        print(f"\n== {text}", flush=True)
        self._current = (stage, time.perf_counter())

    def finish(self) -> None:
        """Ends the running stage, if any, printing and recording its wall time."""
        if self._current is not None:
            stage, started = self._current
            self.seconds[stage] = round(time.perf_counter() - started, 1)
            print(f"   ({stage}: {self.seconds[stage]:.0f} s)", flush=True)
            self._current = None


def quickstart(
    out: str | Path = "quickstart-output",
    *,
    base: str = "minilm-l6",
    max_steps: int | None = None,
    smoke: bool = False,
    overwrite: bool = False,
) -> Path:
    """Run the main job and return the output folder.

    Args:
        out: output folder (parsed forums, benchmarks, results, leaderboard).
        base: base model; the offline default is MiniLM-L6 shipped in a PyPI package.
        max_steps: training steps of each adapter (default: the 10-minute budget).
        smoke: a tiny random model and 4 steps, to check the pipeline in seconds; it trains
            into a zoo of its own (``out/zoo``), never the user's.
        overwrite: use ``out`` even when it is not empty and not an earlier quickstart's
            output (its ``results``, ``parsed``, ``benchmarks`` and ``leaderboard`` are
            replaced), and replace the zoo entries ``beer``, ``beer-cross`` and
            ``beer-fusion`` even when this quickstart did not train them.

    Raises:
        ZooError: ``out`` or a folder above it is a file; without ``overwrite``, ``out``
            holds something the quickstart did not write, or one of those zoo entries is not
            this quickstart's.
    """
    from stackexchange.io import atomic_write_json, check_replaceable
    from stackexchange.paths import check_folder_path

    check_folder_path(out, error=ZooError)  # written into, never replaced: no file in its place
    check_replaceable(
        Path(out),
        ours=lambda folder: (folder / MARKER).is_file(),
        overwrite=overwrite,
        what="a quickstart output",
        error=ZooError,
    )
    zoo = own_zoo(Path(out).resolve() / "zoo") if smoke else contextlib.nullcontext()
    with zoo:
        if not overwrite:
            _refuse_entries_of_others(Path(out).resolve())
        Path(out).mkdir(parents=True, exist_ok=True)
        atomic_write_json(Path(out) / MARKER, {"base": base, "smoke": smoke})
        stages = StageClock()
        done = _quickstart(out, base=base, max_steps=max_steps, smoke=smoke, stages=stages)
        stages.finish()
        record = {"base": base, "smoke": smoke, "stage_seconds": stages.seconds}
        atomic_write_json(Path(out) / MARKER, record)
        return done


def _refuse_entries_of_others(out: Path) -> None:
    """Refuse to start when a zoo entry the quickstart trains (and replaces) is not its own.

    The quickstart's entries record its parse folder (``out/parsed``) as their training data;
    any other entry of the same name (a user's own ``beer``, or another quickstart's) is kept.

    Raises:
        ZooError: naming the entry and the way out.
    """
    from adapter_zoo.zoo.store import entry_path, read_card

    for name in (BI_ADAPTER, CROSS_ADAPTER, COMPOSITION):
        entry = entry_path(name)
        if not os.path.lexists(entry):
            continue
        try:
            data = (read_card(entry).get("training") or {}).get("data")
        except ZooError:
            data = None  # not a readable entry: not the quickstart's either
        if data != str(out / "parsed"):
            raise ZooError(
                f"zoo entry {name!r} at {entry} was not trained by a quickstart writing to "
                f"{out}; the quickstart replaces only its own entries: move it away or pass "
                "--overwrite"
            )


def _quickstart(out, *, base: str, max_steps: int | None, smoke: bool, stages: StageClock) -> Path:
    import stackexchange
    from benchmarks import build_from_forum
    from benchmarks.results import RESULTS_FILE

    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if smoke:
        from recipes.tiny import build_tiny_bert

        base = str(
            build_tiny_bert(out / "tiny-sentence-bert", sentence_encoder=True, error=ZooError)
        )
        max_steps = 4
    bi_steps = BI_STEPS if max_steps is None else max_steps
    cross_steps = CROSS_STEPS if max_steps is None else max_steps

    stages.start("parse", "1/6 parse the shipped StackExchange archives")
    forum_dirs = {}
    for host in (HOME_FORUM, OTHER_FORUM):
        forum_dirs[host] = stackexchange.parse_forum(
            shipped_data() / f"{host}.7z", out / "parsed", overwrite=True
        )
        stats = stackexchange.read_stats(forum_dirs[host])
        print(
            f"   {host}: {stats['questions']} questions, {stats['answers']} answers, pairs {stats['pairs']}"
        )

    data = ["--data", str(out / "parsed"), "--forums", HOME_FORUM, "--base", base, "--overwrite"]
    stages.start(
        "train bi-encoder",
        f"2/6 train the {HOME_FORUM} bi-encoder adapter on {base} ({bi_steps} steps)",
    )
    _cli(["train", "--encoder", "bi", "--mode", "adapter", "--name", BI_ADAPTER, *data,
          "--max-steps", str(bi_steps), "--eval-steps", str(BI_EVAL_STEPS),
          "--max-length", str(TRAIN_MAX_LENGTH)])  # fmt: skip

    stages.start(
        "train cross-encoder", f"3/6 train its cross-encoder adapter ({cross_steps} steps)"
    )
    _cli(["train", "--encoder", "cross", "--mode", "adapter", "--name", CROSS_ADAPTER, *data,
          "--max-steps", str(cross_steps), "--pairs", "question_answer", "--hard-negatives",
          "--loss", "listwise", "--negatives", str(TRAIN_NEGATIVES),
          "--max-length", str(TRAIN_MAX_LENGTH), "--batch-size", str(TRAIN_BATCH_SIZE),
          "--lr", str(TRAIN_LR)])  # fmt: skip

    stages.start("build sets", "4/6 build answer-selection sets from held-out questions")
    benchmark_dirs = {}
    for host, forum_dir in forum_dirs.items():
        target = out / "benchmarks" / f"{host.split('.')[0]}-answers"
        benchmark_dirs[host] = build_from_forum(
            forum_dir, target, task="answer_selection", candidates=CANDIDATES, seed=0
        )

    stages.start(
        "compose", "5/6 compose both adapters with BM25, weights chosen on beer's dev split"
    )
    _cli(["compose", "--name", COMPOSITION, "--fusion", BI_ADAPTER, CROSS_ADAPTER, "bm25",
          "--data", str(out / "parsed"), "--forum", HOME_FORUM, "--overwrite"])  # fmt: skip

    stages.start(
        "evaluate", "6/6 evaluate BM25, the zero-shot bi-encoder, both adapters and the composition"
    )
    results = out / "results"
    # a rerun starts its records afresh; anything else in the folder is left as it is
    (results / RESULTS_FILE).unlink(missing_ok=True)
    models = ["bm25", BI_ADAPTER, CROSS_ADAPTER, COMPOSITION]
    if not smoke:
        models.insert(1, ZERO_SHOT)
    for bench in benchmark_dirs.values():  # one call a set: the fusion reuses its members' scores
        _cli(["evaluate", "--model", *models, "--benchmark", f"local:{bench}",
              "--split", "test", "--results", str(results)])  # fmt: skip

    _cli(["leaderboard", str(results), "--out", str(out / "leaderboard")])
    stages.finish()  # the last stage's time before the verdict, not after the closing line
    print(verdict(results, benchmark_dirs))
    print(f"\nEverything is in {out}")
    return out


def verdict(results: Path, benchmark_dirs: dict) -> str:
    """Say plainly how each zoo model did against the model a user already has (the zero-shot
    bi-encoder) and against BM25, on each held-out set."""
    from benchmarks.results import read_results

    records = read_results(results)
    lines = ["", "How the zoo's beer models did (MAP on held-out questions):"]
    for host, bench in benchmark_dirs.items():
        key = f"local:{Path(bench).expanduser().resolve()}"  # as records name a built set
        scores = {r["model"]: r["metrics"]["map"] for r in records if r["benchmark"] == key}
        role = "its own forum" if host == HOME_FORUM else "an unseen forum (zero-shot)"
        lines.append(f"  {host} ({role}):")
        for model in (BI_ADAPTER, CROSS_ADAPTER, COMPOSITION):
            if model not in scores or "bm25" not in scores:
                lines.append(f"    {model}: missing results")
                continue
            against = [f"BM25 {scores['bm25']:.3f}"]
            if ZERO_SHOT in scores:
                delta = scores[model] - scores[ZERO_SHOT]
                against.insert(0, f"zero-shot bi-encoder {scores[ZERO_SHOT]:.3f} ({delta:+.3f})")
            better = all(scores[model] > scores[m] for m in ("bm25", ZERO_SHOT) if m in scores)
            lines.append(
                f"    {model} {scores[model]:.3f} vs {', '.join(against)} -> "
                + ("beats both" if better else "does NOT beat both")
            )
    return "\n".join(lines)
