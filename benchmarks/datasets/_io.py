"""Small readers shared by the family modules (plain text, tsv, gzip, zip, tar, XML), and the
writer of an ``adapter-zoo adapt --target`` JSONL file."""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from lxml import etree

from benchmarks.errors import BenchmarkError
from stackexchange.errors import one_line, unknown_name
from stackexchange.io import atomic_write_text

# no DTD, no entity expansion, no network: the files are data, never instructions to the parser
_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
# Bounds on what one line or archive member may hold, so memory stays bounded whatever a
# compressed file expands to: the real files' longest line is under 20,000 characters
# (ArguAna's texts), their largest member under 1 MB.
MAX_LINE = 1 << 20
MAX_MEMBER = 64 << 20
# what a truncated or corrupt compressed file raises while it is read
_CORRUPT = (EOFError, gzip.BadGzipFile, zlib.error, zipfile.BadZipFile, tarfile.TarError)


def open_text(path: Path):
    """Open a text file, gunzipping ``.gz`` and reading the one file of a ``.zip``; CRLF line
    ends are normalised by newline=None.

    Raises:
        BenchmarkError: a ``.zip`` that holds no file or more than one.
    """
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline=None)
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            members = [info for info in archive.infolist() if not info.is_dir()]
            if len(members) != 1:
                names = ", ".join(info.filename for info in members) or "nothing"
                raise BenchmarkError(f"{path}: expected one file in the zip archive, got {names}")
            # the member keeps the archive's file open after the archive is closed
            return io.TextIOWrapper(archive.open(members[0]), encoding="utf-8", newline=None)
    return open(path, encoding="utf-8", newline=None)


def lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line)`` of a text file (gunzipping ``.gz``).

    Raises:
        BenchmarkError: a truncated or corrupt gzip file, bytes that are not UTF-8, or a line
            over :data:`MAX_LINE` characters; the message names the file and the line where
            reading stopped.
    """
    number = 0
    try:
        with open_text(path) as handle:
            # a line is read up to a bound: a small .gz can hold a line of gigabytes
            while line := handle.readline(MAX_LINE + 1):
                number += 1
                if len(line) > MAX_LINE:
                    raise BenchmarkError(
                        f"{path}:{number}: a line over {MAX_LINE:,} characters; not a file of "
                        "this benchmark (corrupt, or not text)"
                    )
                yield number, line
    except (*_CORRUPT, UnicodeDecodeError) as error:
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


def read_tsv(
    path: Path, *, min_fields: int = 1, header: bool = False, numbered: bool = False
) -> Iterator:
    """Yield the tab-separated fields of each non-empty line (``(line number, fields)`` with
    ``numbered``); too few fields is an error."""
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
        yield (number, fields) if numbered else fields


def tar_members(path: Path, wanted: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    """Yield ``(member name, bytes)`` of each regular file of a (gzipped) tar archive whose
    name ``wanted`` accepts, streaming: nothing is extracted to disk and the archive is read
    once, front to back.

    Raises:
        BenchmarkError: a truncated or corrupt archive, or a member over
            :data:`MAX_MEMBER` bytes; the message names it and the member where reading
            stopped.
    """
    name = "the first member"
    try:
        with tarfile.open(path, "r|*") as archive:
            for member in archive:
                name = member.name
                # any member, wanted or not: streaming past one inflates it all the same
                if member.size > MAX_MEMBER:
                    size = f"{member.size:,} bytes, over {MAX_MEMBER:,}"
                    raise BenchmarkError(
                        one_line(f"{path}: member {member.name} is {size}; not a benchmark file")
                    )
                if member.isfile() and wanted(member.name):
                    yield member.name, archive.extractfile(member).read()
    except _CORRUPT as error:
        # a member's name may hold a line break (found by benchmarks/reliability/fuzz_campaign.py)
        raise BenchmarkError(
            one_line(f"{path}: unreadable at {name}: truncated or corrupt archive ({error})")
        ) from None


def decode(data: bytes, where: str) -> str:
    """``data`` as UTF-8 text, else a BenchmarkError naming ``where`` (a file, a member)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BenchmarkError(
            f"{where}: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None


def parse_xml(data: bytes, where: str):
    """The root element of the XML document ``data``, parsed safely (no DTD loaded, no entity
    expanded, no network).

    Example:
        >>> parse_xml(b"<Q id='1'>Is it &lt;safe&gt;?</Q>", "q.xml").text
        'Is it <safe>?'

    Raises:
        BenchmarkError: not well-formed XML, or an entity reference (left unexpanded, it would
            cut a text short); the message names ``where`` (a file, an archive's member).
    """
    try:
        root = etree.fromstring(data, _XML)
    except etree.XMLSyntaxError as error:
        raise BenchmarkError(f"{where}: not well-formed XML ({one_line(str(error))})") from None
    entity = next(root.iter(etree.Entity), None)
    if entity is not None:
        raise BenchmarkError(f"{where}:{entity.sourceline}: entity reference {entity.text}")
    return root


def write_adapt_target(pairs: Iterable[dict], path: str | os.PathLike) -> int:
    """Write ``{"question": ..., "answer": ...}`` records, one JSON object a line, as the JSONL
    target ``adapter-zoo adapt --target`` reads (``adapter_zoo.adapt.threads``); atomically,
    so a crash leaves no half-written target. A record without an answer keeps its question
    alone. Returns the number of lines written.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "target.jsonl"
        >>> write_adapt_target([{"question": "Is it safe?", "answer": "Yes.", "id": 3}], path)
        1
        >>> path.read_text()
        '{"question": "Is it safe?", "answer": "Yes."}\\n'

    Raises:
        BenchmarkError: a record without a question text, or with a non-string answer.
    """
    lines = []
    for number, pair in enumerate(pairs, start=1):
        question, answer = pair.get("question"), pair.get("answer")
        if not isinstance(question, str) or not question.strip():
            raise BenchmarkError(f"{path}: record {number} has no question text")
        if answer is not None and not isinstance(answer, str):
            raise BenchmarkError(f"{path}: record {number}: answer {answer!r:.40} is not text")
        record = {"question": question, "answer": answer} if answer else {"question": question}
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    atomic_write_text(path, "".join(lines))
    return len(lines)


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
    raise unknown_name("query filter", rule, ("raw", "no-all-negative", "clean"), BenchmarkError)
