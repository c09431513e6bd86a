"""Result records and the results folder: ``RESULTS/results.jsonl``, one JSON record per run.

:func:`make_record` is the one builder of a record (``evaluate``, the sweep and the cascade
all use it), so every record names its benchmark, times itself and lists its versions alike.

Appending is done by read-all + append + atomic rewrite (``stackexchange.io.atomic_write_text``)
under an exclusive ``fcntl`` lock on ``RESULTS/.results.lock``. Why not a plain ``open("a")``:
a crash mid-write could leave a torn last line; why the lock: two runs finishing at once would
otherwise each rewrite the file without the other's record.
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

from adapter_zoo.metrics import METRICS
from benchmarks.errors import BenchmarkError
from stackexchange.io import atomic_write_text

RESULTS_FILE = "results.jsonl"

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
    registry name, or ``local:`` and the absolute folder of a built benchmark, whatever
    spelling of the path the run was given, so that every run on one set lands in one
    leaderboard column."""
    if isinstance(benchmark, str):
        if benchmark.startswith("local:"):
            return "local:" + str(Path(benchmark[len("local:") :]).expanduser().resolve())
        return benchmark
    path = getattr(benchmark, "path", "")
    return f"local:{path}" if path else benchmark.name


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
        summary: ``adapter_zoo.metrics.evaluate_rankings``' output.
        seed: the run's seed (None when the model does not say).
        seconds: the run's wall time.
        **extra: keys of this kind of run (``alpha``, ``max_length``, ...).

    Returns:
        ``benchmark`` (see :func:`benchmark_key`), ``benchmark_name``, ``split``, ``model``,
        ``adapters``, ``mode``, ``metrics`` (``METRICS``, rounded to 6 places),
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
        "metrics": {name: round(summary[name], 6) for name in METRICS},
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
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".results.lock", "w") as lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:  # no fcntl (Windows): the atomic rewrite still never tears a line
            pass
        yield


def read_results(folder: str | os.PathLike) -> list[dict]:
    """Every record of ``folder/results.jsonl`` (or of a .jsonl file given directly)."""
    path = Path(folder)
    path = path if path.suffix == ".jsonl" else path / RESULTS_FILE
    if not path.exists():
        raise BenchmarkError(f"{path}: no results file (run adapter-zoo evaluate --results ...)")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise BenchmarkError(f"{path}:{number}: not a JSON record ({error.msg})") from None
    return records


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


def append_result(folder: str | os.PathLike, record: dict) -> Path:
    """Append ``record`` to ``folder/results.jsonl`` atomically; return the file.

    Raises:
        BenchmarkError: the record holds NaN or an infinity (named by key); nothing is written.
    """
    folder = Path(folder)
    path = folder / RESULTS_FILE
    try:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except ValueError:
        raise BenchmarkError(
            f"{path}: not written: the record of {record.get('model')!r} on "
            f"{record.get('benchmark')!r} has non-finite values ({', '.join(_non_finite(record))})"
        ) from None
    with _locked(folder):
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        atomic_write_text(path, old + line + "\n")
    return path
