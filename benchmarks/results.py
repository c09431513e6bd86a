"""The results folder: ``RESULTS/results.jsonl``, one JSON record per evaluation run.

Appending is done by read-all + append + atomic rewrite (``stackexchange.io.atomic_write_text``)
under an exclusive ``fcntl`` lock on ``RESULTS/.results.lock``. Why not a plain ``open("a")``:
a crash mid-write could leave a torn last line; why the lock: two runs finishing at once would
otherwise each rewrite the file without the other's record.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path

from benchmarks.errors import BenchmarkError
from stackexchange.io import atomic_write_text

RESULTS_FILE = "results.jsonl"


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
