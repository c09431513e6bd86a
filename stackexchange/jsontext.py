"""JSON text from files a user gives (results.jsonl, a target's JSONL): every way a hostile
line breaks ``json.loads`` becomes one short reason, so the reader can name its file and line.

``json.loads`` alone raises a JSONDecodeError for bad syntax, but a RecursionError for deep
nesting (``[[[[...``), a plain ValueError for an integer of more than 4,300 digits, and it
accepts ``"\\udcff"`` escapes that give strings no UTF-8 writer (a figure, a tokenizer, an
HTML page) can take.

Example:
    >>> loads_text('{"model": "bm25"}')
    {'model': 'bm25'}
    >>> loads_text('[' * 100_000)
    Traceback (most recent call last):
    ...
    stackexchange.jsontext.JSONTextError: nested too deeply
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from stackexchange.errors import AdapterZooError


class JSONTextError(AdapterZooError):
    """Text that is not usable JSON; the message is the reason alone (no file, no line)."""


def loads_text(text: str, *, position: bool = False):
    """``json.loads(text)``, or a :class:`JSONTextError` whose message is the short reason.

    Args:
        text: the JSON text.
        position: a syntax error's reason says where (line, column, character): for a whole
            file, where a JSONL reader names the line itself.

    Raises:
        JSONTextError: bad syntax (the decoder's message), nesting too deep, a number too
            long to read, or a string holding a lone surrogate escape (not text).
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise JSONTextError(str(error) if position else error.msg) from None
    except RecursionError:
        raise JSONTextError("nested too deeply") from None
    except ValueError as error:  # an integer beyond Python's digit limit
        raise JSONTextError(str(error).split(";")[0]) from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        bad = error.object[error.start : error.end]
        raise JSONTextError(
            f"holds {bad.encode('unicode_escape').decode('ascii')}, a lone surrogate escape "
            "that is no text"
        ) from None
    except (RecursionError, ValueError):
        raise JSONTextError("nested too deeply") from None
    return value


def read_json_file(path: str | os.PathLike, error: type[Exception] = AdapterZooError):
    """The JSON value of the file ``path`` (UTF-8, a byte-order mark read past), or one
    ``error`` line ``PATH: not valid JSON (reason)`` for every way the file is not: bytes that
    are not UTF-8 and each way of :func:`loads_text` (deep nesting included, which
    ``json.loads`` reports as a RecursionError). The operating system's errors (a missing
    file) are the caller's to word.

    Example:
        >>> read_json_file("/proc/self/status")  # doctest: +SKIP
        Traceback (most recent call last):
        ...
        stackexchange.errors.AdapterZooError: /proc/self/status: not valid JSON (Expecting ...)
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as failure:
        raise error(f"{path}: not valid JSON ({failure})") from None
    try:
        return loads_text(text, position=True)
    except JSONTextError as failure:
        raise error(f"{path}: not valid JSON ({failure})") from None


def read_json_object(
    path: str | os.PathLike, error: type[Exception] = AdapterZooError, what: str = "it"
) -> dict:
    """:func:`read_json_file` for a file that must hold a JSON object (a manifest, a
    config, stats): a list, a string or a number there is one ``error`` line too, not an
    AttributeError or TypeError from the first key the caller reads.

    Args:
        path: the file.
        error: the exception type raised.
        what: what the file is, for the message (``the benchmark descriptor``).

    Example:
        >>> import pathlib, tempfile
        >>> file = pathlib.Path(tempfile.mkdtemp()) / "stats.json"
        >>> _ = file.write_text("[1, 2]")
        >>> read_json_object(file, ValueError, "a forum's stats")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: .../stats.json: a forum's stats must be a JSON object, not a list
    """
    value = read_json_file(path, error)
    if not isinstance(value, dict):
        kind = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
        shown = kind.get(type(value), "a number")
        raise error(f"{path}: {what} must be a JSON object, not {shown}")
    return value


__all__ = ["JSONTextError", "loads_text", "read_json_file", "read_json_object"]
