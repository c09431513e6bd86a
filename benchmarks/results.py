"""Result records and the results folder: ``RESULTS/results.jsonl``, one JSON record per run.

:func:`make_record` is the one builder of a record (``evaluate``, the sweep and the cascade
all use it), so every record names its benchmark, times itself and lists its versions alike.

Appending is done by read-all + append + atomic rewrite (``stackexchange.io.atomic_write_text``)
under an exclusive lock on ``RESULTS/.results.lock`` (filelock), one rewrite per run with all its
records (:func:`append_results`). Why not a plain ``open("a")``: a crash mid-write could leave a
torn last line; why one rewrite: a run killed between two of its records would leave the first,
which its rerun appends again; why the lock: two runs finishing at once would otherwise each
rewrite the file without the other's record.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib.metadata
import json
import math
import os
import platform
from pathlib import Path

from adapter_zoo.metrics import METRICS, RETRIEVAL_METRICS
from benchmarks.errors import BenchmarkError
from stackexchange.io import atomic_write_text

RESULTS_FILE = "results.jsonl"
# the benchmarks a folder's path names: built sets and BEIR folders
PATH_SCHEMES = ("local:", "beir:")

_PACKAGES = (
    "adapter-zoo",
    "torch",
    "transformers",
    "adapters",
    "datasets",
    "sentence-transformers",
    "bm25s",
    "scikit-learn",
)


def package_versions() -> dict[str, str]:
    """Versions of the packages a result depends on (absent ones are left out)."""
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[name] = importlib.metadata.version(name)
    return versions


def benchmark_key(benchmark) -> str:
    """How a record names a benchmark (a ``Benchmark``, or the name a run was given): its
    registry name, or ``local:``/``beir:`` and the absolute folder of a built benchmark or a
    BEIR folder, whatever spelling of the path the run was given, so that every run on one
    set lands in one leaderboard column."""
    if isinstance(benchmark, str):
        for scheme in PATH_SCHEMES:
            if benchmark.startswith(scheme):
                return scheme + str(Path(benchmark[len(scheme) :]).expanduser().resolve())
        return benchmark
    return benchmark.key


def make_record(
    bench,
    *,
    split: str,
    model: str,
    adapters,
    mode: str,
    summary: dict,
    seed,
    seconds: float,
    **extra,
) -> dict:
    """The JSON record of one scored run (the one builder of records).

    Args:
        bench: the ``Benchmark`` that was scored.
        split: its split.
        model: the model's name as the leaderboard shows it.
        adapters: zoo adapters on top of ``model`` (names).
        mode: ``zero-shot``, ``finetune-<how>``, ``sweep`` or ``cascade``.
        summary: ``adapter_zoo.metrics.evaluate_rankings``' output (a retrieval benchmark's:
            ``evaluate_run``'s).
        seed: the run's seed (None when the model does not say).
        seconds: the run's wall time.
        **extra: keys of this kind of run (``alpha``, ``max_length``, ...).

    Returns:
        ``benchmark`` (see :func:`benchmark_key`), ``benchmark_name``, ``split``, ``model``,
        ``adapters``, ``mode``, ``metrics`` (the summary's ``METRICS`` or ``RETRIEVAL_METRICS``, in its
        order, rounded to 6 places),
        ``main_metric``, ``queries``, ``queries_without_positive``, ``no_positive``, ``seed``,
        ``versions``, ``wall_time_s``, ``created`` and ``extra``.
    """
    return {
        "benchmark": benchmark_key(bench),
        "benchmark_name": bench.name,
        "split": split,
        "model": str(model),
        "adapters": [str(a) for a in adapters],
        "mode": mode,
        "metrics": {
            name: round(value, 6)
            for name, value in summary.items()
            if name in METRICS or name in RETRIEVAL_METRICS
        },
        "main_metric": bench.main_metric,
        "queries": summary["queries"],
        "queries_without_positive": summary["queries_without_positive"],
        "no_positive": bench.no_positive,
        "seed": seed,
        "versions": package_versions(),
        "wall_time_s": round(seconds, 3),
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        **extra,
    }


@contextlib.contextmanager
def _locked(folder: Path):
    """Hold ``folder``'s results lock (``.results.lock``, waiting for another run's append)."""
    from filelock import FileLock

    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / ".results.lock")):
        yield


def read_results(folder: str | os.PathLike) -> list[dict]:
    """Every record of ``folder/results.jsonl`` (or of a .jsonl file given directly), each
    checked by :func:`check_record`.

    Raises:
        BenchmarkError: no results file, or one without records; a line that is not UTF-8
            or not JSON (nested too deeply, a lone surrogate escape included); a record
            that is not an object, lacks a field, has one of the wrong type, or a
            NaN/infinite number (``FILE:LINE: FIELD: what was wrong``).
    """
    from stackexchange.jsontext import JSONTextError, loads_text

    path = Path(folder)
    path = path if path.suffix == ".jsonl" else path / RESULTS_FILE
    if not path.exists():
        raise BenchmarkError(f"{path}: no results file (run adapter-zoo evaluate --results ...)")
    if not path.is_file():
        raise BenchmarkError(f"{path}: not a file; give a results folder or its results.jsonl")
    records = []
    data = path.read_bytes()
    # an editor's byte-order mark is no part of the first record
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    for number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BenchmarkError(
                f"{path}:{number}: not UTF-8 text ({error.reason} at byte {error.start} of the "
                "line)"
            ) from None
        if line.strip():
            try:
                record = loads_text(line)
            except JSONTextError as error:
                raise BenchmarkError(f"{path}:{number}: not a JSON record ({error})") from None
            records.append(check_record(record, f"{path}:{number}"))
    if not records:
        raise BenchmarkError(f"{path}: no records (run adapter-zoo evaluate --results ...)")
    return records


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(value, field: str, where: str) -> None:
    if not _is_number(value):
        raise BenchmarkError(f"{where}: {field}: expected a number, got {_shown(value)}")
    if isinstance(value, int) and not -1e308 < value < 1e308:  # beyond any float: no score
        raise BenchmarkError(f"{where}: {field}: expected a finite number, got an integer of "
                             f"{len(str(abs(value)))} digits")  # fmt: skip
    if not math.isfinite(value):
        raise BenchmarkError(f"{where}: {field}: expected a finite number, got {value}")


# A name's longest spelling (a model's path included); a longer one is no name, and would
# make the figures wider than an image may be.
MAX_NAME_CHARS = 1024


def _name(value: str, field: str, where: str) -> None:
    if not value.strip():
        raise BenchmarkError(f"{where}: {field}: expected a name, got an empty string")
    if len(value) > MAX_NAME_CHARS:
        raise BenchmarkError(
            f"{where}: {field}: expected a name of at most {MAX_NAME_CHARS} characters, got "
            f"{len(value)}"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise BenchmarkError(
            f"{where}: {field}: expected a name without control characters, got "
            f"{json.dumps(value[:40])}"
        )


def _shown(value) -> str:
    """A wrong value as the error shows it: its JSON type, and the value when short."""
    kind = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )
    text = json.dumps(value, ensure_ascii=False)
    return kind if len(text) > 40 or value is None else f"{kind} {text}"


# field: (JSON type the readers rely on, required); numbers are checked to be finite too
_FIELDS = {
    "benchmark": (str, True),
    "split": (str, True),
    "model": (str, True),
    "mode": (str, True),
    "metrics": (dict, True),
    "benchmark_name": (str, False),
    "main_metric": (str, False),
    "adapters": (list, False),
    "queries": (int, False),
    "wall_time_s": (float, False),
    "alpha": (float, False),
    "fusion_weights": (dict, False),
}


def check_record(record, where: str) -> dict:
    """``record`` if it is a results record the leaderboard and the recipes can use (a record
    without ``main_metric`` gets its registry benchmark's).

    The one check of records read back (``read_results``): the fields :func:`make_record`
    writes that readers rely on, by type, every metric a finite number (a NaN would be
    averaged and sorted first), the main metric among the metrics. ``where`` names the file
    and line in the error.

    Raises:
        BenchmarkError: ``WHERE: FIELD: what was wrong``, in one line.

    Example:
        >>> check_record({"benchmark": "wikiqa", "split": "test", "model": "bm25",
        ...               "mode": "zero-shot", "metrics": {"map": 0.5}}, "r.jsonl:1")["model"]
        'bm25'
    """
    if not isinstance(record, dict):
        raise BenchmarkError(f"{where}: expected a JSON object (a record), got {_shown(record)}")
    for field, (kind, required) in _FIELDS.items():
        if field not in record:
            if required:
                raise BenchmarkError(f"{where}: {field}: missing")
            continue
        value = record[field]
        if kind is float:
            _number(value, field, where)
        elif kind is int:
            if not (isinstance(value, int) and not isinstance(value, bool)) or value < 0:
                raise BenchmarkError(
                    f"{where}: {field}: expected a count >= 0, got {_shown(value)}"
                )
        elif not isinstance(value, kind):
            wanted = {str: "a string", dict: "an object", list: "a list"}[kind]
            raise BenchmarkError(f"{where}: {field}: expected {wanted}, got {_shown(value)}")
        elif kind is str:
            _name(value, field, where)
    if not record["metrics"]:
        raise BenchmarkError(f"{where}: metrics: empty (a record holds at least its main metric)")
    for name, value in record["metrics"].items():
        _number(value, f"metrics.{name}", where)
    if "main_metric" not in record:  # older records: the registry's benchmark says
        if record["benchmark"].startswith(PATH_SCHEMES):
            raise BenchmarkError(f"{where}: main_metric: missing (a built set's record names it)")
        from benchmarks.registry import get

        try:
            record["main_metric"] = get(record["benchmark"]).main_metric
        except BenchmarkError:
            raise BenchmarkError(
                f"{where}: main_metric: missing, and benchmark {record['benchmark']!r} is not "
                "in the registry"
            ) from None
    if record["main_metric"] not in record["metrics"]:
        raise BenchmarkError(
            f"{where}: main_metric: {record['main_metric']!r} is not among the metrics"
        )
    for index, adapter in enumerate(record.get("adapters", [])):
        if not isinstance(adapter, str):
            raise BenchmarkError(
                f"{where}: adapters.{index}: expected a string, got {_shown(adapter)}"
            )
    for layer, weights in record.get("fusion_weights", {}).items():
        if not isinstance(weights, dict):
            raise BenchmarkError(
                f"{where}: fusion_weights.{layer}: expected an object, got {_shown(weights)}"
            )
        for adapter, weight in weights.items():
            _number(weight, f"fusion_weights.{layer}.{adapter}", where)
    return record


def _non_finite(value, where: str = "") -> list[str]:
    """Dotted keys of the NaN and infinite floats in a record."""
    if isinstance(value, float) and not math.isfinite(value):
        return [where or "value"]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return []
    found = []
    for key, item in items:
        found += _non_finite(item, f"{where}.{key}" if where else str(key))
    return found


def check_results_folder(folder: str | os.PathLike | None) -> None:
    """Refuse, before any model loads or scores, a results folder (``--results``) this
    process cannot write: a file where the folder goes, a folder below a file, no permission.
    None (no results written) passes.

    Raises:
        BenchmarkError: one line naming the folder, the reason and what to do.
    """
    from stackexchange.io import check_writable

    if folder is not None:
        check_writable(folder, what="results", error=BenchmarkError,
                       advice="choose a --results folder you can write")  # fmt: skip


def append_result(folder: str | os.PathLike, record: dict) -> Path:
    """Append ``record`` to ``folder/results.jsonl`` atomically; return the file.

    Raises:
        BenchmarkError: the record holds NaN or an infinity (named by key); nothing is written.
    """
    return append_results(folder, [record])


def append_results(folder: str | os.PathLike, records: list[dict]) -> Path:
    """Append ``records`` (one run's) to ``folder/results.jsonl`` in one atomic rewrite:
    a run killed at any moment leaves all of them or none, never a part to be appended
    again by its rerun. Two runs appending at once wait for each other's lock.

    Raises:
        BenchmarkError: a record holds NaN or an infinity (named by key); nothing is written.
    """
    folder = Path(folder)
    path = folder / RESULTS_FILE
    lines = []
    for record in records:
        try:
            lines.append(json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False))
        except ValueError:
            raise BenchmarkError(
                f"{path}: not written: the record of {record.get('model')!r} on "
                f"{record.get('benchmark')!r} has non-finite values "
                f"({', '.join(_non_finite(record))})"
            ) from None
    with _locked(folder):
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        atomic_write_text(path, old + "".join(line + "\n" for line in lines))
    return path
