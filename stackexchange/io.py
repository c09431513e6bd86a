"""Crash-safe writing shared by every package: a folder or file appears complete or not at all.

This module is torch-free on purpose: data preparation runs on machines without torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

TEMP_MARK = ".tmp-"


def _naming(error: BaseException, path: Path) -> BaseException:
    """An OSError that names no file (``No space left on device`` from a write) made to name
    ``path``; any other exception unchanged."""
    if isinstance(error, OSError) and error.filename is None and error.errno is not None:
        return OSError(error.errno, error.strerror or str(error), str(path))
    return error


@contextlib.contextmanager
def atomic_directory(final: str | os.PathLike, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary folder beside ``final`` and rename it to ``final`` on success.

    On any exception the temporary folder is removed, so a crash never leaves a
    half-written folder under the final name.

    Args:
        final: the folder to create.
        overwrite: replace an existing ``final`` (the old one is removed only after
            the new one is in place).

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> with atomic_directory(root / "out") as tmp:
        ...     _ = (tmp / "a.txt").write_text("done")
        >>> (root / "out" / "a.txt").read_text()
        'done'
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists() and not overwrite:
        raise FileExistsError(f"{final}: already exists")
    tmp = final.parent / f".{final.name}{TEMP_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
    except BaseException as error:
        shutil.rmtree(tmp, ignore_errors=True)
        named = _naming(error, final)
        if named is error:
            raise
        raise named from error
    if final.exists():
        old = final.parent / f".{final.name}.old-{uuid.uuid4().hex[:8]}"
        os.replace(final, old)
        os.replace(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, final)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename.

    Raises:
        OSError: the write failed; an error that names no file (a full disk) is raised
            again naming ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}{TEMP_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as error:
        tmp.unlink(missing_ok=True)
        named = _naming(error, path)
        if named is error:
            raise
        raise named from error


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def remove_stale_temporaries(parent: str | os.PathLike) -> list[Path]:
    """Delete temporary folders and files left in ``parent`` by a crashed run; return them."""
    parent = Path(parent)
    removed = []
    if not parent.is_dir():
        return removed
    for entry in parent.iterdir():
        if entry.name.startswith(".") and (TEMP_MARK in entry.name or ".old-" in entry.name):
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


def sha256_file(path: str | os.PathLike, chunk_size: int = 1 << 20) -> str:
    """Return the hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()
