"""The main job: the whole idea on a laptop, on real shipped data, in about 5 minutes on 2 CPU cores.

parse bicycles.meta, a shipped forum kept out of the zoo as the unseen domain → the zoo: the
package's shipped entries (one bi-encoder adapter inside all-MiniLM-L6-v2 per shipped forum,
trained by the ``shipped_zoo`` recipe) but bicycles.meta's own and the multi-task adapter that
saw it → ``adapt`` bicycles.meta from its own posts with that zoo (its test questions never
read), in what the job's minutes leave → an answer-selection set from its held-out questions →
evaluate BM25, the zero-shot bi-encoder (the model a user already has), it fused with BM25 and
the adapted entry → leaderboard tables, plot, and a verdict: what the adapted entry gained over
the zero-shot base and over the base fused with BM25, with a paired bootstrap interval over the
set's questions.

``--smoke`` trains a tiny stand-in for the zoo (beer's adapter on a tiny random BERT, 2
steps) in a zoo of its own: the shipped entries are MiniLM's.

The papers' cross-encoders and their compositions are the recipes' (``adapter-zoo run``): a few
dozen steps on a base that was never a cross-encoder lost 0.2 MAP to the zero-shot bi-encoder
here, and took a third of the job's time.

Example:
    >>> from recipes.quickstart import quickstart
    >>> quickstart("quickstart-output")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.fusion_defaults import base_fused_spec
from recipes.runner import own_zoo
from stackexchange.catalog import shipped_data

OTHER_FORUM = "bicycles.meta.stackexchange.com"  # the unseen domain: kept out of the zoo
ADAPTED = "bicycles.meta-adapted"
# adapt keeps a fusion's trained member as an entry of its own (adapter_zoo.adapt.learn)
ADAPTED_MEMBER = f"{ADAPTED}-adapter"
# --smoke's stand-in for the shipped zoo (whose entries are MiniLM's): beer's bi-encoder
# adapter on the tiny random BERT, trained into the smoke's own zoo.
SMOKE_FORUM = "beer.stackexchange.com"
SMOKE_ENTRY = "beer"
TRAIN_MAX_LENGTH = 128
# The whole job's time budget by default (README: the quickstart_time row, on 2 CPU cores).
# adapt gets what is left of it once the forum is parsed, less EVALUATE_RESERVE_S, and at
# least its smallest budget: it plans its stages from the machine's measured speed to fit
# (adapter_zoo.adapt.budget), so a faster machine lets it train more.
JOB_MINUTES = 5.0
# The evaluation step: BM25, the base and the adapted entry on bicycles.meta's test lists
# (the fusion reuses its members' scores), the leaderboard. It took 8-9 s on 2 quiet cores
# (benchmarks/results/quickstart_time.json, stage_seconds); twice that covers the slowest CPU
# and leaves the job's minutes to adapt rather than unspent.
EVALUATE_RESERVE_S = 20
ADAPT_MIN_MINUTES = 1.0  # the smallest budget adapt takes (adapter_zoo.adapt.budget)
# What the job needs beyond its 5 minutes for adapt to train bicycles.meta's own adapter when
# its planner finds too little time for it (results/quickstart_time_8min.json; docs/performance.md,
# the quickstart).
MORE_MINUTES = 3.0
# Candidates per held-out question (LAS has 100): 50, as the zoo's recorded results.
CANDIDATES = 50
# Written into the output folder before any work: a folder holding it is the quickstart's
# own, whose results, parsed forums and benchmarks a rerun may replace.
MARKER = "quickstart.json"
STAGES = 5
SMOKE_BASE = "quickstart-smoke-tiny-bert"
SMOKE_STEPS = 2


def zero_shot(base: str) -> str:
    """The model a user already has: ``base`` as a zero-shot bi-encoder."""
    return f"sbert:{base}"


def fused(base: str) -> str:
    """The zero-shot base fused with BM25 (per-query z-scores), as
    ``benchmarks/studies/outside_study.py`` measures targets against: no training either."""
    return base_fused_spec(zero_shot(base))


def _cli(argv: list[str]) -> None:
    from adapter_zoo.cli import main, show_progress

    code = main(argv)
    show_progress("quickstart")  # main() named its own command on the progress lines
    if code:
        raise ZooError(f"quickstart: 'adapter-zoo {' '.join(argv)}' failed (exit {code})")


class StageClock:
    """Announces each stage and times it: a user sees where the minutes go, and
    ``quickstart.json`` records them (``benchmarks/speed/quickstart_time.py`` reads them)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._current: tuple[str, float] | None = None
        self._began: float | None = None

    def elapsed(self) -> float:
        """Seconds since the first stage started (0 before it)."""
        return 0.0 if self._began is None else time.perf_counter() - self._began

    def start(self, stage: str, text: str) -> None:
        """Ends the running stage (printing its time) and starts ``stage``, announced as
        ``text``."""
        self.finish()
        print(f"\n== {text}", flush=True)
        self._current = (stage, time.perf_counter())
        if self._began is None:
            self._began = self._current[1]

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
    budget_minutes: float = JOB_MINUTES,
    smoke: bool = False,
    overwrite: bool = False,
) -> Path:
    """Run the main job and return the output folder.

    Args:
        out: output folder (parsed forums, benchmarks, results, leaderboard).
        base: base model; the offline default is MiniLM-L6 shipped in a PyPI package.
        max_steps: training steps of each of adapt's training runs (default: from its
            budget).
        budget_minutes: the whole job's time budget: adapt gets what is left once the forum
            is parsed, less the evaluation's share (:func:`adapt_budget`).
        smoke: a tiny random model and 2 steps a run, to check the pipeline in minutes; it trains
            a stand-in zoo (beer's adapter) into a zoo of its own (``out/zoo``), never the
            user's.
        overwrite: use ``out`` even when it is not empty and not an earlier quickstart's
            output (its ``results``, ``parsed``, ``benchmarks`` and ``leaderboard`` are
            replaced), and replace the zoo entries ``bicycles.meta-adapted`` and its member
            ``bicycles.meta-adapted-adapter`` even when this quickstart did not write them.

    Raises:
        ZooError: ``budget_minutes`` out of adapt's range; ``out`` or a folder above it is a
            file; without ``overwrite``, ``out`` holds something the quickstart did not
            write, or one of those zoo entries is not this quickstart's.
    """
    from adapter_zoo.adapt.budget import check_budget
    from stackexchange.io import atomic_write_json, check_replaceable
    from stackexchange.paths import check_folder_path

    check_budget(budget_minutes)  # a minute at least, as adapt's own
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
            _refuse_entries_of_others(Path(out).resolve(), smoke=smoke)
        Path(out).mkdir(parents=True, exist_ok=True)
        atomic_write_json(Path(out) / MARKER, {"base": base, "smoke": smoke})
        stages = StageClock()
        gains = _quickstart(out, base=base, max_steps=max_steps, smoke=smoke, stages=stages,
                            job_seconds=60 * budget_minutes)  # fmt: skip
        stages.finish()
        record = {"base": base, "smoke": smoke, "budget_minutes": budget_minutes,
                  "stage_seconds": stages.seconds, "verdict": gains}  # fmt: skip
        atomic_write_json(Path(out) / MARKER, record)
        return Path(out).resolve()


def _refuse_entries_of_others(out: Path, *, smoke: bool = False) -> None:
    """Refuse to start when a zoo entry the quickstart writes (and replaces) is not its own.

    Its adapted entry records that it adapted ``out/parsed/bicycles.meta...`` (the card's
    ``request``), that entry's member the entry it belongs to, and the smoke's ``beer`` its
    parse folder (``out/parsed``) as its training data; any other entry of those names (a
    user's own, or another quickstart's) is kept.

    Raises:
        ZooError: naming the entry and the way out.
    """
    from adapter_zoo.zoo.store import entry_path, read_card

    written_here = {
        ADAPTED: lambda card: (
            (card.get("request") or {}).get("target") == str(out / "parsed" / OTHER_FORUM)
        ),
        ADAPTED_MEMBER: lambda card: card.get("adapt_member_of") == ADAPTED,
    }
    if smoke:
        written_here[SMOKE_ENTRY] = lambda card: (
            (card.get("training") or {}).get("data") == str(out / "parsed")
        )
    for name, ours_if in written_here.items():
        entry = entry_path(name)
        if not os.path.lexists(entry):
            continue
        try:
            ours = ours_if(read_card(entry))
        except ZooError:
            ours = False  # not a readable entry: not the quickstart's either
        if not ours:
            raise ZooError(
                f"zoo entry {name!r} at {entry} was not written by a quickstart writing to "
                f"{out}; the quickstart replaces only its own entries: move it away or pass "
                "--overwrite"
            )


def _quickstart(out, *, base: str, max_steps: int | None, smoke: bool, stages: StageClock,
                job_seconds: float) -> dict:  # fmt: skip

    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if smoke:
        max_steps = SMOKE_STEPS
    with _smoke_base(out) if smoke else contextlib.nullcontext(base) as base:
        budget = None if smoke else job_seconds  # the smoke's adapt runs everything, unbudgeted
        return _steps(out, base=base, max_steps=max_steps, job_seconds=budget, stages=stages)


@contextlib.contextmanager
def _smoke_base(out: Path):
    """The tiny random model under a base-model name while the smoke runs: the adapted
    entry may be a composite, whose members are names, never paths of this machine
    (adapter_zoo.kinds.composite), and ``sbert:<name>`` of it is one."""
    from adapter_zoo.ranker.model import BASE_MODEL_ALIASES
    from adapter_zoo.tiny import build_tiny_bert

    path = build_tiny_bert(out / "tiny-sentence-bert", sentence_encoder=True, error=ZooError)
    BASE_MODEL_ALIASES[SMOKE_BASE] = str(path)
    try:
        yield SMOKE_BASE
    finally:
        del BASE_MODEL_ALIASES[SMOKE_BASE]


def _steps(out: Path, *, base: str, max_steps: int | None, job_seconds: float | None,
           stages: StageClock) -> dict:  # fmt: skip
    import stackexchange
    from adapter_zoo.adapt import adapt
    from adapter_zoo.adapt.cli import describe
    from adapter_zoo.zoo.store import read_card
    from benchmarks import build_from_forum

    stages.start("parse", f"1/{STAGES} parse {OTHER_FORUM}, the forum the zoo never saw")
    forum_dir = stackexchange.parse_forum(
        shipped_data() / f"{OTHER_FORUM}.7z", out / "parsed", overwrite=True
    )
    stats = stackexchange.read_stats(forum_dir)
    print(f"   {OTHER_FORUM}: {stats['questions']} questions, {stats['answers']} answers, "
          f"pairs {stats['pairs']}")  # fmt: skip

    if job_seconds is None:  # the smoke: a tiny stand-in for the shipped zoo
        stages.start("zoo", f"2/{STAGES} the zoo: {SMOKE_FORUM}'s adapter on {base} "
                     f"(a stand-in for the shipped entries, {max_steps} steps)")  # fmt: skip
        zoo = [_smoke_zoo(out, base, max_steps)]
    else:
        stages.start("zoo", f"2/{STAGES} the zoo: the shipped entries, but {OTHER_FORUM}'s own "
                     "and any trained on it")  # fmt: skip
        zoo = shipped_zoo(OTHER_FORUM)
    print(f"   {len(zoo)} entries: {', '.join(zoo)}", flush=True)

    budget = None if job_seconds is None else adapt_budget(stages.elapsed(), job_seconds)
    limit = "no budget" if budget is None else (
        f"a {budget:g}-minute budget, what is left of the job's {job_seconds / 60:g} minutes"
    )  # fmt: skip
    stages.start(
        "adapt",
        f"3/{STAGES} adapt {OTHER_FORUM}, a forum nobody labelled, from its own posts (its "
        f"test questions never read) with the zoo of {len(zoo)}, in {limit}",
    )
    adapted = adapt(
        forum_dir, name=ADAPTED, zoo=zoo, overwrite=True,
        max_steps=max_steps, budget_minutes=budget, base_model=base,
    )  # fmt: skip
    print("\n".join(f"   {line}" for line in describe(adapted)), flush=True)
    _say_what_more_time_buys(read_card(adapted)["adapt"], job_seconds)
    _keep_cards(out / "cards", [ADAPTED])

    stages.start("build sets", f"4/{STAGES} build an answer-selection set from held-out questions")
    target = out / "benchmarks" / f"{OTHER_FORUM.split('.')[0]}-answers"
    benchmark_dirs = {OTHER_FORUM: build_from_forum(
        forum_dir, target, task="answer_selection", candidates=CANDIDATES, seed=0)}  # fmt: skip

    stages.start(
        "evaluate",
        f"5/{STAGES} evaluate BM25, the zero-shot bi-encoder, it fused with BM25 and "
        f"{ADAPTED!r} on {OTHER_FORUM}'s test questions",
    )
    aps = _evaluate(set_models(base), benchmark_dirs, out / "results")
    _cli(["leaderboard", str(out / "results"), "--out", str(out / "leaderboard")])
    stages.finish()  # the last stage's time before the verdict, not after the closing line
    gains = compare(aps, base)
    print(verdict(gains, base))
    print(f"\nEverything is in {out}")
    return gains


def shipped_zoo(unseen: str) -> list[str]:
    """The names of the shipped zoo's adapter entries that never saw the forum ``unseen`` (a
    host): the zoo the quickstart adapts ``unseen`` with (a user's entry of a shipped name
    shadows it, as everywhere).

    Raises:
        ZooError: no shipped entry is left (the package was installed without them).
    """
    from adapter_zoo.adapt.zoo_members import ADAPTER_KINDS
    from adapter_zoo.registry import kind_for_card
    from adapter_zoo.zoo.store import local_cards, shipped_home

    home = shipped_home()
    shipped = {p.name for p in home.iterdir() if p.is_dir()} if home.is_dir() else set()
    names = [
        card["name"] for card in local_cards()
        if card["name"] in shipped and "broken" not in card
        and unseen not in (card.get("forums") or []) and kind_for_card(card).name in ADAPTER_KINDS
    ]  # fmt: skip
    if not names:
        raise ZooError(
            f"quickstart: no shipped zoo entry to adapt {unseen} with in {home}; reinstall "
            "adapter-zoo (its wheel ships them), or train them: adapter-zoo run shipped_zoo"
        )
    return names


def _smoke_zoo(out: Path, base: str, steps: int) -> str:
    """The smoke's stand-in zoo: beer's bi-encoder adapter on the tiny base, in its own zoo."""
    import stackexchange

    stackexchange.parse_forum(shipped_data() / f"{SMOKE_FORUM}.7z", out / "parsed", overwrite=True)
    _cli(["train", "--encoder", "bi", "--mode", "adapter", "--name", SMOKE_ENTRY,
          "--data", str(out / "parsed"), "--forums", SMOKE_FORUM, "--base", base, "--overwrite",
          "--max-steps", str(steps), "--eval-steps", str(steps),
          "--max-length", str(TRAIN_MAX_LENGTH)])  # fmt: skip
    return SMOKE_ENTRY


def _say_what_more_time_buys(record: dict, job_seconds: float | None) -> None:
    """Where the job's minutes left adapt no room to train the forum's own adapter (its
    card's ``adapt`` ``record`` says), say how to give it more: every minute added to the job
    is adapt's (on 2 CPU cores its own adapter took about 3 more minutes, and then gained on
    the test set: :data:`MORE_MINUTES`)."""
    from adapter_zoo.adapt.candidate_training import NO_ROOM_TO_TRAIN

    if job_seconds is not None and record["training"].get("skipped") == NO_ROOM_TO_TRAIN:
        minutes = job_seconds / 60
        print(f"   The job's {minutes:g} minutes left adapt too little to train {OTHER_FORUM}'s "
              f"own adapter: `adapter-zoo quickstart --budget {minutes + MORE_MINUTES:g}` "
              f"gives it {MORE_MINUTES:g} minutes more.", flush=True)  # fmt: skip


def adapt_budget(elapsed: float, job_seconds: float = 60 * JOB_MINUTES) -> float:
    """adapt's budget in minutes (one decimal): what is left of the job's ``job_seconds``
    after ``elapsed`` seconds and the evaluation's reserve, at least adapt's smallest budget.

    Example:
        >>> adapt_budget(8.0), adapt_budget(280.0), adapt_budget(8.0, 480.0)
        (4.5, 1.0, 7.5)
    """
    left = (job_seconds - elapsed - EVALUATE_RESERVE_S) / 60
    return max(ADAPT_MIN_MINUTES, math.floor(left * 10) / 10)


def set_models(base: str) -> dict[str, list[str]]:
    """The models the unseen forum's set is scored with: BM25, the zero-shot base, it fused
    with BM25 (what a user already has) and the adapted entry.

    Example:
        >>> set_models("minilm-l6")[OTHER_FORUM][-1]
        'bicycles.meta-adapted'
    """
    return {OTHER_FORUM: ["bm25", zero_shot(base), fused(base), ADAPTED]}


def _keep_cards(folder: Path, names: list[str]) -> None:
    """Copy each entry's card and model card into ``folder/<name>/`` (replaced), so the
    output folder says what was trained and what adapt chose, whatever the zoo holds later."""
    import shutil

    from adapter_zoo.zoo.store import CARD_FILE, entry_folder

    for name in names:
        target = folder / name
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for file in (CARD_FILE, "README.md"):
            if (entry_folder(name) / file).is_file():
                shutil.copyfile(entry_folder(name) / file, target / file)


def _evaluate(models: dict[str, list[str]], benchmark_dirs: dict, results: Path) -> dict:
    """Evaluate each set's ``models`` (by host) on its test split, records into ``results``
    (afresh); return each set's per-question AP of each model, by host and model."""
    from adapter_zoo.adapt.decide import list_average_precisions
    from benchmarks import get
    from benchmarks.evaluate import ScoredModels, evaluate_models
    from benchmarks.results import RESULTS_FILE

    # a rerun starts its records afresh; anything else in the folder is left as it is
    (results / RESULTS_FILE).unlink(missing_ok=True)
    aps = {}
    for host, bench in benchmark_dirs.items():
        name = f"local:{bench}"
        scored = ScoredModels()  # one a set: the fusion reuses its members' scores
        evaluate_models(models[host], name, split="test", results=results, scored=scored)
        bench = get(name)
        labels = list(bench.load("test")["labels"])
        # the set's own rule for a question without a right answer, as its MAP counts it
        kept = [bench.no_positive == "zero" or any(row) for row in labels]
        aps[host] = {
            model: list_average_precisions(scored.scores(model), labels)[kept]
            for model in models[host]
        }
    return aps


def compare(aps: dict, base: str) -> dict:
    """Per set: its size, each model's MAP, and what the adapted entry gained over the
    zero-shot base and over it fused with BM25 (the paired bootstrap over the set's questions
    that ``adapt`` decides with: mean difference and 95% interval)."""
    from adapter_zoo.adapt.decide import paired_bootstrap

    out = {}
    for host, by_model in aps.items():
        gains = {}
        for model in (m for m in (ADAPTED,) if m in by_model):
            gains[model] = {}
            for against in (zero_shot(base), fused(base)):
                test = paired_bootstrap(by_model[model], by_model[against])
                gains[model][against] = {
                    "delta": round(test["delta"], 4),
                    "interval": [round(v, 4) for v in test["interval"]],
                }
        out[host] = {
            "questions": len(by_model[zero_shot(base)]),
            "map": {model: round(float(v.mean()), 4) for model, v in by_model.items()},
            "gains": gains,
        }
    return out


def verdict(gains: dict, base: str) -> str:
    """Say plainly what the adapted entry gained over what a user already has (the zero-shot
    base, and the base fused with BM25) on the held-out set, with the set's size and the
    gain's interval: a clear gain, a clear loss, or within the noise."""
    names = {zero_shot(base): "the zero-shot base", fused(base): "it fused with BM25"}
    labels = {"bm25": "BM25", zero_shot(base): "zero-shot base", fused(base): "base + BM25"}
    lines = ["", "What the zoo gained over what a user already has (MAP on held-out test "
             "questions; 95% paired-bootstrap interval over the set's questions):"]  # fmt: skip
    for host, row in gains.items():
        lines.append(f"  {host} (adapted from its own posts), {row['questions']} test questions:")
        lines.append(
            "    MAP: " + ", ".join(f"{labels.get(m, m)} {v:.3f}" for m, v in row["map"].items())
        )
        for model, against in row["gains"].items():
            parts = []
            for other, test in against.items():
                low, high = test["interval"]
                word = (
                    "a clear gain" if low > 0 else "a clear loss" if high < 0
                    else "the same ranking" if low == high == 0 else "noise"
                )  # fmt: skip
                parts.append(
                    f"{test['delta']:+.3f} [{low:+.3f}, {high:+.3f}] over {names[other]} ({word})"
                )
            lines.append(f"    {model}: " + "; ".join(parts))
    return "\n".join(lines)
