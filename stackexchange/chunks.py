"""Cutting a big Posts.xml into row-aligned byte ranges that processes parse independently.

Every dump writes one ``<row .../>`` per line (newlines inside values are escaped as
``&#xA;``), and ``<row `` cannot occur inside an attribute value (``<`` must be escaped), so
any ``<row `` in the bytes starts a row. A chunk is parsed as ``<posts>`` + its bytes +
``</posts>``; the prolog and the closing tag, which no chunk sees, are checked here.
"""

from __future__ import annotations

import math
import mmap
import os
from pathlib import Path

import numpy as np
from lxml import etree

from stackexchange.errors import DumpError, one_line

CHUNK_BYTES = 64 * 1024 * 1024
ROW = b"<row "
CLOSE = b"</posts>"
ACCEPTED_KEY = b'AcceptedAnswerId="'


class ChunkReader:
    """Bytes ``[start, end)`` of a file wrapped as ``<posts>...</posts>``, for iterparse."""

    def __init__(self, path: Path, start: int, end: int):
        self.handle = open(path, "rb")  # noqa: SIM115 (closed by close(), after iterparse)
        self.handle.seek(start)
        self.left = end - start
        self.parts = [b"<posts>"]

    def read(self, size: int = -1) -> bytes:
        if self.parts:
            return self.parts.pop()
        if self.left <= 0:
            if self.left == 0:
                self.left = -1
                return CLOSE
            return b""
        data = self.handle.read(min(size if size > 0 else 1 << 20, self.left))
        if not data:  # the file shrank since it was planned: end the document here
            self.left = -1
            return CLOSE
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.handle.close()


def line_of(path: Path, offset: int) -> int:
    """The 1-based line at byte ``offset`` (only computed for error messages)."""
    lines = 1
    with open(path, "rb") as handle:
        while offset > 0:
            block = handle.read(min(offset, 1 << 24))
            if not block:
                break
            lines += block.count(b"\n")
            offset -= len(block)
    return lines


def plan_chunks(path: Path, name: str, chunk_bytes: int | None = None) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of whole rows, about ``chunk_bytes`` each.

    Checks the parts no chunk parses: the prolog up to the first row must be well-formed
    and the file must end with ``</posts>`` (else it is truncated). Returns [] when the file
    has no row at all (the caller then parses it whole, for the exact error or an empty forum).
    """
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    size = path.stat().st_size
    with open(path, "rb") as handle:
        head = handle.read(min(size, 1 << 20))
        first = head.find(ROW)
        if first < 0:
            return []
        try:
            etree.fromstring(head[:first] + CLOSE)
        except etree.XMLSyntaxError as error:
            raise DumpError(
                f"{name}: malformed XML at line {error.lineno}: {one_line(error.msg)}"
            ) from None
        handle.seek(max(0, size - 65536))
        tail_at = handle.tell()
        tail = handle.read()
        close = tail.rfind(CLOSE)
        if close < 0 or tail[close + len(CLOSE) :].strip():
            line = line_of(path, size)
            raise DumpError(
                f"{name}: malformed XML at line {line}: file ends before </posts> (truncated)"
            )
        end = tail_at + close
        bounds = [first]
        for k in range(1, max(1, math.ceil((end - first) / chunk_bytes))):
            handle.seek(first + k * chunk_bytes)
            position = handle.tell()
            while position < end:
                block = handle.read(1 << 20)
                found = block.find(ROW)
                if found >= 0:
                    position += found
                    break
                position += max(1, len(block) - len(ROW))  # a row tag may straddle blocks
                handle.seek(position)
            if bounds[-1] < position < end:
                bounds.append(position)
        bounds.append(end)
    return list(zip(bounds[:-1], bounds[1:]))


def scan_accepted(path: Path, start: int, end: int) -> np.ndarray:
    """Every ``AcceptedAnswerId`` value in bytes ``[start, end)`` (a byte search, no XML).

    The file is memory-mapped and searched in place: reading the chunk into a bytes object
    first cost as much as the search itself.
    """
    ids = []
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:  # shrank since it was planned
            return np.array(ids, dtype=np.int64)
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            at = data.find(ACCEPTED_KEY, start, end)
            while at >= 0:
                value_start = at + len(ACCEPTED_KEY)
                value_end = data.find(b'"', value_start, end)
                if value_end < 0:  # an unclosed value: malformed, which the parse reports
                    break
                value = data[value_start:value_end]
                if value.isdigit():
                    ids.append(int(value))
                at = data.find(ACCEPTED_KEY, value_end, end)
    return np.array(ids, dtype=np.int64)
