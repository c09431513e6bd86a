"""Paths from the command line checked before any work: the one check of a path's text and of
an output folder every command that writes one makes.

:func:`path_option` is the argparse ``type=`` of path arguments (an empty path or one with a
NUL byte is no path); :func:`check_output_folder` is every check of a folder written through
:func:`stackexchange.io.atomic_directory` that can be made before the expensive part: its
name fits the file system with the temporaries made beside it, it holds no input, it holds
nothing the project did not write, and its parent can be written.

Example:
    >>> check_path_text("")
    Traceback (most recent call last):
    ...
    ValueError: '': an empty path names no file or folder
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from stackexchange.io import (
    OLD_MARK,
    RECORD_SUFFIX,
    check_replaceable,
    check_writable,
    refuse_input_inside_output,
)

# The longest name atomic_directory makes beside an output: ".NAME.old-PID-ID.adapter-zoo"
# (a process id has at most 7 digits on Linux, the id 12 hex digits).
_TEMPORARY_EXTRA = len(f"..{OLD_MARK}{'9' * 7}-{'f' * 12}{RECORD_SUFFIX}")
_DEFAULT_NAME_MAX = 255


def check_path_text(path, error: type[Exception] = ValueError) -> Path:
    """``path`` as a Path unless its text can name no file: empty (it would mean the current
    folder), holding a NUL byte (no operating system call takes it) or not UTF-8 text (a
    name of bytes that are not UTF-8, which Python holds as lone surrogates: the XML parser,
    Arrow and the JSON records that name a path take UTF-8 text only, so the work would
    fail after it began).

    Raises:
        error: one line naming the path and what is wrong.
    """
    text = os.fspath(path)
    if not str(text).strip():
        raise error(f"{text!r}: an empty path names no file or folder")
    if "\0" in str(text):
        raise error(f"{text!r}: a path cannot hold a NUL byte")
    try:
        str(text).encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"{text!r}: not UTF-8 text; rename it or give a path that is") from None
    return Path(text)


def path_option(text: str) -> str:
    """An argparse ``type=`` for a path: argparse reports one :func:`check_path_text` refuses
    (empty, a NUL byte, not UTF-8) as ``argument --NAME: ...`` and exits 2, before the
    command runs.

    Example:
        >>> path_option("out/board")
        'out/board'
    """
    try:
        check_path_text(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


path_option.__name__ = "path"  # argparse names the type in its message


def check_folder_path(path, *, itself: bool = True, error: type[Exception] = ValueError) -> Path:
    """Refuse a folder path that something other than a folder stands in the way of: ``path``
    itself (when ``itself``) or the nearest existing folder above it. Found now, not as
    ``[Errno 17] File exists`` or ``[Errno 20] Not a directory`` from the first write, once
    the work is done.

    Args:
        path: the output folder.
        itself: ``path`` itself must be a folder where it exists; False for a folder written
            whole, which ``--overwrite`` may put in place of a file.
        error: the exception type raised.

    Raises:
        error: one line naming the path, what is in the way and what to do.

    Example:
        >>> import pathlib, tempfile
        >>> notes = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
        >>> _ = notes.write_text("mine")
        >>> check_folder_path(notes / "out")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: .../notes.txt/out: .../notes.txt is not a folder; choose another folder
    """
    path = Path(path)
    for above in [path, *path.parents] if itself else list(path.parents):
        if not os.path.lexists(above):
            continue
        if not above.is_dir():
            what = "exists and is not a folder" if above == path else f"{above} is not a folder"
            raise error(f"{path}: {what}; choose another folder")
        break  # the folders above an existing folder are folders
    return path


def _folder_type(itself: bool) -> Callable[[str], str]:
    """An argparse ``type=`` for an output folder: :func:`path_option` and
    :func:`check_folder_path`."""

    def folder(text: str) -> str:
        path_option(text)
        try:
            check_folder_path(text, itself=itself)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return text

    return folder


# A folder a command writes into (parse --out, run --work, evaluate --results): neither it
# nor a folder above it may be a file.
folder_option = _folder_type(itself=True)
# A folder a command writes whole (build-benchmark, export and leaderboard --out): a file in
# its place is the replaceable output's business (--overwrite), one above it is not.
output_folder_option = _folder_type(itself=False)


def _name_max(folder: Path) -> int:
    """The longest file name the file system of ``folder`` (or its nearest existing parent)
    takes, in bytes."""
    probe = folder
    while not os.path.isdir(probe) and probe.parent != probe:
        probe = probe.parent
    try:
        return os.pathconf(probe, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows) or no answer
        return _DEFAULT_NAME_MAX


def check_name_lengths(final: Path, error: type[Exception] = ValueError) -> None:
    """Refuse ``final`` when a part of it, or a temporary made beside it, is too long a file
    name for its file system (found now, not after the work as ``File name too long``)."""
    limit = _name_max(final.parent)
    parts = [(part, 0) for part in final.parent.parts] + [(final.name, _TEMPORARY_EXTRA)]
    for part, extra in parts:
        size = len(part.encode("utf-8", "surrogateescape")) + extra
        if size > limit:
            shown = part if len(part) <= 40 else part[:40] + "..."
            raise error(
                f"{final}: the name {shown!r} is too long for the file system ({size} bytes with "
                f"the temporaries written beside it; at most {limit}); choose a shorter name"
            )


def refuse_output_inside_input(
    inputs: Iterable, output: str | os.PathLike, error: type[Exception] = ValueError
) -> None:
    """Raise ``error`` when ``output`` lies inside one of the folders ``inputs``: writing it
    would change the input (a zoo entry would no longer match its card).

    Example:
        >>> refuse_output_inside_input(["zoo/beer"], "zoo/beer/export")
        Traceback (most recent call last):
        ...
        ValueError: zoo/beer/export: output inside the input zoo/beer; choose another output
    """
    outs = {Path(os.path.abspath(output)), Path(output).resolve()}
    for source in inputs:
        paths = {Path(os.path.abspath(source)), Path(source).resolve()}
        if any(p in out.parents for p in paths for out in outs):
            raise error(f"{output}: output inside the input {source}; choose another output")


def check_output_folder(
    final: str | os.PathLike,
    *,
    what: str,
    ours: Callable[[Path], bool],
    overwrite: bool = False,
    inputs: Iterable = (),
    error: type[Exception] = ValueError,
) -> Path:
    """Every check of an output folder that can be made before the work, in the order a user
    fixes them; returns ``final`` as a Path.

    Args:
        final: the folder to be written through ``atomic_directory`` (beside it, in its
            parent, the temporaries are made).
        what: what is written there, for the messages (``a leaderboard``).
        ours: whether an existing folder is the project's own output of this kind.
        overwrite: the user asked to replace whatever ``final`` holds.
        inputs: files and folders the command reads: none may lie inside ``final``.
        error: the exception type raised (the package's own, e.g. ``BenchmarkError``).

    Raises:
        error: one line naming the folder, what is wrong and what to do.
    """
    final = check_path_text(final, error)
    check_name_lengths(final, error)
    check_folder_path(final, itself=False, error=error)
    inputs = list(inputs)
    if inputs:
        refuse_input_inside_output(inputs, final, error)
    check_replaceable(final, ours=ours, overwrite=overwrite, what=what, error=error)
    check_writable(
        final.parent, what=what, advice="make it writable or choose another output", error=error
    )
    return final


__all__ = [
    "check_folder_path",
    "check_name_lengths",
    "check_output_folder",
    "check_path_text",
    "folder_option",
    "output_folder_option",
    "path_option",
    "refuse_output_inside_input",
]
