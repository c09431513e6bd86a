"""Small readers shared by the family modules (plain text, tsv, gzip)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

from benchmarks.errors import BenchmarkError


def open_text(path: Path):
    """Open a text file, gunzipping ``.gz``; CRLF line ends are normalised by newline=None."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline=None)
    return open(path, encoding="utf-8", newline=None)


def lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line)`` of a text file (gunzipping ``.gz``).

    Raises:
        BenchmarkError: a truncated or corrupt gzip file, or bytes that are not UTF-8; the
            message names the file and the line where reading stopped.
    """
    number = 0
    try:
        with open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                yield number, line
    except (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError) as error:
        raise BenchmarkError(
            f"{path}: unreadable after line {number}: truncated or corrupt file ({error})"
        ) from None


def parse_int(value, where: str, what: str = "value") -> int:
    """``int(value)`` (``"1.0"`` accepted when it is a whole number), else a BenchmarkError
    naming ``where`` and the value."""
    try:
        number = float(value) if isinstance(value, str) and "." in value else value
        if isinstance(number, float) and not number.is_integer():
            raise ValueError
        return int(number)
    except (TypeError, ValueError, OverflowError):
        raise BenchmarkError(f"{where}: {what} {value!r} is not an integer") from None


def read_tsv(path: Path, *, min_fields: int = 1, header: bool = False) -> Iterator[list[str]]:
    """Yield the tab-separated fields of each non-empty line; too few fields is an error."""
    for number, line in lines(path):
        if header and number == 1:
            continue
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < min_fields:
            raise BenchmarkError(
                f"{path}:{number}: expected at least {min_fields} tab-separated fields, "
                f"got {len(fields)}"
            )
        yield fields


def group_pairs(pairs, source) -> list[dict]:
    """Group ``(query_id, query, candidate_id, candidate, label)`` tuples into query rows,
    keeping the first-seen order of queries and candidates; ``source`` (the file) names a
    label that is not an integer."""
    rows: dict[str, dict] = {}
    for query_id, query, candidate_id, candidate, label in pairs:
        row = rows.get(query_id)
        if row is None:
            row = rows[query_id] = {
                "query_id": query_id,
                "query": query,
                "candidate_ids": [],
                "candidates": [],
                "labels": [],
            }
        row["candidate_ids"].append(candidate_id)
        row["candidates"].append(candidate)
        row["labels"].append(
            parse_int(label, f"{source}: query {query_id} candidate {candidate_id}", "label")
        )
    return list(rows.values())


def keep(rows: list[dict], rule: str) -> list[dict]:
    """Filter query rows: ``"raw"`` keeps all, ``"no-all-negative"`` drops queries without a
    positive, ``"clean"`` also drops queries whose candidates are all positive."""
    if rule == "raw":
        return rows
    with_positive = [r for r in rows if any(label > 0 for label in r["labels"])]
    if rule == "no-all-negative":
        return with_positive
    if rule == "clean":
        return [r for r in with_positive if any(label <= 0 for label in r["labels"])]
    raise BenchmarkError(f"unknown query filter {rule!r}")
