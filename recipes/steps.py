"""A recipe's commands as a graph of jobs: what each reads and writes, and what it needs.

The Ray executor runs independent jobs at once, so it must know which command waits for which.
Rather than asking recipe authors to spell that out, the graph is derived from the commands
themselves: each known ``adapter-zoo`` command is parsed with the real CLI parser and its
arguments say what it reads (a parsed forum, a zoo entry, a benchmark folder, a results folder)
and what it writes. A job waits for every earlier job that writes something it reads, that
writes what it also writes, or that reads what it overwrites, so the result equals the local,
in-order run. Appends to one ``results.jsonl`` do not order their writers (the file is locked
and each record stands alone). A command the graph does not know waits for every earlier job,
and every later job waits for it.

Each job also declares resources: the recipe step's ``resources = {cpus = N, gpus = G}``
over defaults by command (see :func:`default_resources`); under ``--smoke`` no job asks for a GPU.

Example:
    >>> jobs = build_jobs([("step 1", ["leaderboard", "r", "--out", "b"], {})], smoke=False)
    >>> jobs[0].resources
    {'cpus': 1, 'gpus': 0}
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from adapter_zoo.kinds import is_baseline
from adapter_zoo.names import BASE, parse_model_name
from benchmarks.baselines import is_lexical
from benchmarks.results import PATH_SCHEMES

# Commands that train or score a neural model: they ask for a GPU by default.
GPU_COMMANDS = {"train", "evaluate", "cascade-train", "cascade-eval", "sweep", "recommend"}


@dataclass(frozen=True)
class Output:
    """Something a job writes, with the check that it is complete.

    Attributes:
        path: the folder or file written (absolute).
        complete: returns True when the output is there and whole.
        appends: a record appended to a shared file (results.jsonl): appends do not order
            their writers.
    """

    path: Path
    complete: Callable[[], bool]
    appends: bool = False


@dataclass
class Job:
    """One expanded recipe command.

    Attributes:
        index: position in the recipe's plan (0-based).
        label: ``step 3 [beer.stackexchange.com]``.
        argv: the command line after ``adapter-zoo``.
        resources: ``{"cpus": n, "gpus": g}``.
        inputs: paths it reads (None: unknown command).
        outputs: what it writes (None: unknown command).
        after: indices of the jobs it waits for.
    """

    index: int
    label: str
    argv: list[str]
    resources: dict
    inputs: list[Path] | None
    outputs: list[Output] | None
    after: set[int] = field(default_factory=set)

    @property
    def key(self) -> str:
        """A short digest of the command line, naming the job's ledger entry."""
        return hashlib.sha256(json.dumps(self.argv).encode()).hexdigest()[:16]

    def outputs_complete(self) -> bool:
        """True when every output is there (a command with none known is never complete)."""
        return bool(self.outputs) and all(out.complete() for out in self.outputs)


def default_resources(command: str, args) -> dict:
    """What a command reserves unless its step says otherwise.

    ``parse`` reserves its ``--workers`` CPUs (1 when not given); commands that train or
    score a neural model (``train``, ``evaluate``, ``cascade-train``, ``cascade-eval``,
    ``sweep``, ``recommend``) one GPU, except ``evaluate`` of BM25/TF-IDF baselines only;
    everything else one CPU.
    """
    cpus = (getattr(args, "workers", None) or 1) if command == "parse" else 1
    gpus = 1 if command in GPU_COMMANDS else 0
    if command == "evaluate" and args is not None and all(map(is_lexical, args.model)):
        gpus = 0
    return {"cpus": cpus, "gpus": gpus}


def _path(value: str | os.PathLike) -> Path:
    return Path(value).expanduser().absolute()


def _zoo_path(name: str) -> Path:
    """A zoo name's folder (in the zoo of this process), or the path it already is."""
    from adapter_zoo.zoo.store import zoo_home

    return _path(name) if os.sep in name or name.startswith(".") else zoo_home() / name


def _model_inputs(model: str) -> list[Path]:
    name = parse_model_name(model)
    if is_baseline(model):
        return []
    return [_zoo_path(name.base if name.category == BASE else model)]


def _benchmark_inputs(benchmark: str | None, data_dir: str | None) -> list[Path]:
    paths = [_path(data_dir)] if data_dir else []
    for scheme in PATH_SCHEMES:  # a built set's or a BEIR folder's files are the step's input
        if benchmark and benchmark.startswith(scheme):
            paths.append(_path(benchmark[len(scheme) :]))
    return paths


def _forum_inputs(data: str, forums) -> list[Path]:
    """``DATA/<host>`` per forum given by host; the whole folder for short names and sets."""
    data = _path(data)
    if forums and all("." in name for name in forums):
        return [data / name for name in forums]
    return [data]


def _exists(path: Path) -> bool:
    return path.exists()


def _entry_complete(path: Path) -> bool:
    from adapter_zoo.zoo.store import CARD_FILE

    return (path / CARD_FILE).is_file()


def _forum_complete(path: Path) -> bool:
    from stackexchange.parse import is_complete

    return is_complete(path)


def _has_records(folder: Path, wanted: list[dict]) -> bool:
    """Whether ``folder/results.jsonl`` holds a record matching each of ``wanted`` (a value
    that is a tuple lists the values allowed)."""
    from benchmarks.results import read_results

    def matches(record: dict, want: dict) -> bool:
        return all(
            record.get(k) in v if isinstance(v, tuple) else record.get(k) == v
            for k, v in want.items()
        )

    try:
        records = read_results(folder)
    except (ValueError, OSError):
        return False
    return all(any(matches(record, want) for record in records) for want in wanted)


def _never() -> bool:
    return False


def _entry(name: str) -> Output:
    path = _zoo_path(name)
    return Output(path, functools.partial(_entry_complete, path))


def _results(folder: str, wanted: list[dict] | None) -> Output:
    """Records appended to ``folder``; ``wanted`` None: the records cannot be told apart."""
    path = _path(folder)
    check = functools.partial(_has_records, path, wanted) if wanted else _never
    return Output(path / "results.jsonl", check, appends=True)


def _parse_io(args) -> tuple[list[Path], list[Output]]:
    out = _path(args.out)
    try:
        from stackexchange.dump import find_forums, select_forums

        hosts = list(select_forums(find_forums(args.source), args.forums))
    except (ValueError, OSError):
        return [_path(args.source)], [Output(out, _never)]
    forums = [out / host for host in hosts]
    return [_path(args.source)], [Output(p, functools.partial(_forum_complete, p)) for p in forums]


def _train_io(args) -> tuple[list[Path], list[Output]]:
    inputs = _forum_inputs(args.data, args.forums) + [_zoo_path(a) for a in args.adapters]
    if args.transfer_data:
        inputs += _forum_inputs(args.transfer_data, args.transfer_forums)
    return inputs + _model_inputs(args.base), [_entry(args.name)]


def _evaluate_io(args) -> tuple[list[Path], list[Output]]:
    inputs = _benchmark_inputs(args.benchmark, args.data_dir)
    inputs += [path for model in args.model for path in _model_inputs(model)]
    inputs += [_zoo_path(name) for name in args.adapter]
    outputs = [_entry(args.save_as)] if args.save_as else []
    if args.transfer:
        inputs += _model_inputs(args.transfer)
    if args.results:
        from benchmarks.results import benchmark_key

        # without --finetune the record says the setting evaluate found: either of these
        mode = f"finetune-{args.finetune}" if args.finetune else ("zero-shot", "in-domain")
        wanted = [
            {
                "benchmark": benchmark_key(args.benchmark),
                "split": args.split,
                "model": model,
                "adapters": adapters,
                "mode": mode,
                "seed": args.seed,
            }
            for model in args.model  # evaluate --model A B C: a record each
            for adapters in ([[name] for name in args.adapter] if args.adapter else [[]])
        ]
        if args.transfer:
            for want in wanted:
                want["transfer"] = args.transfer
        outputs.append(_results(args.results, wanted))
    return inputs, outputs


def _cascade_train_io(args) -> tuple[list[Path], list[Output]]:
    inputs = [_path(args.data)] if args.data else []
    inputs += _benchmark_inputs(args.benchmark, args.data_dir) + _model_inputs(args.base)
    return inputs, [_entry(args.name)]


def _scoring_io(args) -> tuple[list[Path], list[Output]]:
    """cascade-eval and sweep: their records are always rewritten (no per-step key)."""
    models = [args.model] if getattr(args, "model", None) else []
    inputs = _benchmark_inputs(args.benchmark, args.data_dir)
    inputs += [p for m in models + list(getattr(args, "adapters", [])) for p in _model_inputs(m)]
    return inputs, [_results(args.results, None)] if args.results else []


def _build_io(args) -> tuple[list[Path], list[Output]]:
    out = _path(args.out)
    return [_path(args.forum_dir)], [Output(out, functools.partial(_exists, out))]


def _leaderboard_io(args) -> tuple[list[Path], list[Output]]:
    out = _path(args.out)
    # leaderboard.html is written last
    return [_path(args.results)], [
        Output(out, functools.partial(_exists, out / "leaderboard.html"))
    ]


def _export_io(args) -> tuple[list[Path], list[Output]]:
    from adapter_zoo.export import EXPORT_FILE

    out = _path(args.out)
    return _model_inputs(args.name), [Output(out, functools.partial(_exists, out / EXPORT_FILE))]


def _adapt_io(args) -> tuple[list[Path], list[Output]]:
    from adapter_zoo.zoo.store import zoo_home

    # without --zoo, adapt reads every local entry: it waits for every entry written before
    zoo = [_zoo_path(name) for name in args.zoo] if args.zoo else [zoo_home().absolute()]
    return [_path(args.target), *zoo], [_entry(args.name)]


def _pretrain_io(args) -> tuple[list[Path], list[Output]]:
    return [_path(args.corpus), *_model_inputs(args.base)], [_entry(args.name)]


COMMAND_IO = {
    "parse": _parse_io,
    "build-benchmark": _build_io,
    "train": _train_io,
    "evaluate": _evaluate_io,
    "cascade-train": _cascade_train_io,
    "cascade-eval": _scoring_io,
    "sweep": _scoring_io,
    "leaderboard": _leaderboard_io,
    "export": _export_io,
    "adapt": _adapt_io,
    "pretrain": _pretrain_io,
}


class _PathIndex:
    """Which jobs touched which paths, found again for any path that overlaps (is the same,
    inside, or around) in a few dictionary look-ups, so a 140-forum plan builds in a blink."""

    def __init__(self) -> None:
        self.at: dict[Path, set[int]] = {}
        self.below: dict[Path, set[int]] = {}

    def add(self, path: Path, index: int) -> None:
        self.at.setdefault(path, set()).add(index)
        for parent in path.parents:
            self.below.setdefault(parent, set()).add(index)

    def overlapping(self, path: Path) -> set[int]:
        found = set(self.at.get(path, ())) | self.below.get(path, set())
        for parent in path.parents:
            found |= self.at.get(parent, set())
        return found


class _Graph:
    """Earlier jobs' reads and writes, to find what a new job waits for."""

    def __init__(self) -> None:
        self.reads, self.writes, self.appends = _PathIndex(), _PathIndex(), _PathIndex()
        self.since_barrier: set[int] = set()  # jobs after the last unknown command
        self.barrier: int | None = None

    def waits_for(self, job: Job) -> set[int]:
        if job.inputs is None:  # an unknown command waits for everything before it
            return set(self.since_barrier) | ({self.barrier} if self.barrier is not None else set())
        after = {self.barrier} if self.barrier is not None else set()
        for path in job.inputs:  # it reads what an earlier job writes
            after |= self.writes.overlapping(path) | self.appends.overlapping(path)
        for out in job.outputs:  # it writes what an earlier job writes or reads
            after |= self.writes.overlapping(out.path) | self.reads.overlapping(out.path)
            if not out.appends:  # appends to one results file do not order each other
                after |= self.appends.overlapping(out.path)
        return after

    def add(self, job: Job) -> None:
        if job.inputs is None:
            self.barrier, self.since_barrier = job.index, set()
            return
        self.since_barrier.add(job.index)
        for path in job.inputs:
            self.reads.add(path, job.index)
        for out in job.outputs:
            (self.appends if out.appends else self.writes).add(out.path, job.index)


def build_jobs(commands: list[tuple[str, list[str], dict]], *, smoke: bool) -> list[Job]:
    """Jobs for ``(label, argv, step resources)`` in plan order, with what each waits for.

    Raises:
        RecipeError: a step's command line does not parse (names the step).
    """
    from adapter_zoo.cli import build_parser
    from recipes.recipe import RecipeError

    parser = build_parser()
    graph = _Graph()
    jobs = []
    for index, (label, argv, declared) in enumerate(commands):
        try:
            args = parser.parse_args(argv)
        except SystemExit:
            raise RecipeError(
                f"{label}: not a valid command: adapter-zoo {' '.join(argv)}"
            ) from None
        io = COMMAND_IO.get(args.command)
        inputs, outputs = io(args) if io else (None, None)
        resources = {**default_resources(args.command, args), **declared}
        if smoke:
            resources["gpus"] = 0
        job = Job(index, label, list(argv), resources, inputs, outputs)
        job.after = graph.waits_for(job)
        graph.add(job)
        jobs.append(job)
    return jobs
