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
from collections.abc import Callable, Iterator
from pathlib import Path

TEMP_MARK = ".tmp-"
OLD_MARK = ".old-"


def refuse_input_inside_output(
    inputs, output: str | os.PathLike, error: type[Exception] = ValueError
) -> None:
    """Raise ``error`` when one of ``inputs`` is ``output`` or lies inside it.

    Writing (or replacing) ``output`` could then delete the input, so this is checked before
    any work. Paths are compared as given (made absolute) and with symbolic links resolved.

    Example:
        >>> refuse_input_inside_output(["dump/beer.7z"], "dump")
        Traceback (most recent call last):
        ...
        ValueError: dump/beer.7z: input inside or equal to the output dump; choose another output
    """
    outs = {Path(os.path.abspath(output)), Path(output).resolve()}
    for source in inputs:
        paths = {Path(os.path.abspath(source)), Path(source).resolve()}
        if any(p == out or out in p.parents for p in paths for out in outs):
            raise error(
                f"{source}: input inside or equal to the output {output}; choose another output"
            )


def check_replaceable(
    final: str | os.PathLike,
    *,
    ours: Callable[[Path], bool],
    overwrite: bool = False,
    what: str = "output",
    error: type[Exception] = FileExistsError,
) -> None:
    """Raise ``error`` unless writing ``final`` loses nothing the project did not write.

    ``final`` may be written when it does not exist, is an empty folder, is a folder the
    project wrote (``ours(final)``: its completion marker is there), or ``overwrite`` is set.

    Args:
        final: the output folder about to be written through :func:`atomic_directory`.
        ours: whether an existing folder is the project's own completed output.
        overwrite: the user asked to replace whatever is there.
        what: what the project writes there, for the message ("a parsed forum").
        error: the exception type raised.
    """
    final = Path(final)
    if overwrite or not os.path.lexists(final):
        return
    if final.is_dir() and (ours(final) or not any(final.iterdir())):
        return
    raise error(
        f"{final}: already exists and is not {what} written by adapter-zoo; "
        "move it away or pass --overwrite"
    )


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
    _restore_interrupted(final)
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
    if os.path.lexists(final):
        # The old folder is kept aside until the new one is in place; a crash between the
        # two renames leaves it under its .old- name, and the next clean-up restores it.
        old = final.parent / f".{final.name}{OLD_MARK}{uuid.uuid4().hex[:8]}"
        os.replace(final, old)
        os.replace(tmp, final)
        _remove(old)
    else:
        os.replace(tmp, final)


def _old_name_of(entry: Path) -> str | None:
    """The final name whose old copy ``entry`` is (``.NAME.old-HEX``), else None."""
    name = entry.name
    if not name.startswith(".") or OLD_MARK not in name:
        return None
    return name[1 : name.rindex(OLD_MARK)] or None


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


def _restore_interrupted(final: Path) -> None:
    """Put back the old ``final`` that a crash left aside between an overwrite's renames."""
    if os.path.lexists(final) or not final.parent.is_dir():
        return
    for entry in sorted(final.parent.iterdir()):
        if _old_name_of(entry) == final.name:
            os.replace(entry, final)
            return


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
    """Clean up what a crashed run left in ``parent``; return the entries removed.

    Temporary folders and files (never complete) are deleted. An old copy that an overwrite
    had set aside is put back under its final name when that name is missing (the crash came
    between the two renames), and deleted only when the new folder is in place.
    """
    parent = Path(parent)
    removed = []
    if not parent.is_dir():
        return removed
    for entry in sorted(parent.iterdir()):
        final = _old_name_of(entry)
        if final is not None:
            _restore_interrupted(parent / final)
        if not os.path.lexists(entry):  # it was put back
            continue
        if final is not None or (entry.name.startswith(".") and TEMP_MARK in entry.name):
            _remove(entry)
            removed.append(entry)
    return removed


def sha256_file(path: str | os.PathLike, chunk_size: int = 1 << 20) -> str:
    """Return the hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()
