"""Errors for bad input: the root of the project's own errors, and the parser's one type."""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Callable, Iterable
from typing import TypeVar

E = TypeVar("E", bound=Exception)


class AdapterZooError(ValueError):
    """The root of the project's own errors for bad input (a file, a record, a name, an option).

    ``DumpError``, ``adapter_zoo.ZooError`` (and ``RecipeError``) and
    ``benchmarks.BenchmarkError`` subclass it. The CLI prints these, and ``OSError``, as one
    line and exits with 2; any other exception is a bug and keeps its traceback.
    """


class DumpError(AdapterZooError):
    """A StackExchange dump file or forum name that cannot be used.

    The message names the file (and line or record where known) and what was wrong, in one
    line, so the CLI can print it as is.

    Example:
        >>> str(DumpError("beer.7z: corrupt 7z archive"))
        'beer.7z: corrupt 7z archive'
    """


def closest_names(name: object, known: Iterable[str]) -> list[str]:
    """The (at most three) names of ``known`` closest in spelling to ``name``, closest first:
    what every "unknown name" message suggests.

    Example:
        >>> closest_names("spp", ["ict", "sp", "ssp", "title"])
        ['sp', 'ssp']
    """
    return difflib.get_close_matches(str(name), list(known), n=3, cutoff=0.5)


def unknown_name(
    what: str, name: object, known: Iterable[str], error: type[E], *, where: object = None
) -> E:
    """The error for a name no registry of ``what`` holds: the name asked for, the closest
    known names (:func:`closest_names`) and every choice, in ``known``'s order, after
    ``where:`` (the file or record that named it) when given. Every registry of the project
    raises it for a name it does not hold.

    Example:
        >>> print(unknown_name("objective", "spp", ["ict", "sp", "ssp"], DumpError))
        unknown objective 'spp'; did you mean sp, ssp? choose one of ict, sp, ssp
        >>> print(unknown_name("objective", "zzz", ["ict", "sp", "ssp"], DumpError))
        unknown objective 'zzz'; choose one of ict, sp, ssp
        >>> print(unknown_name("split", "tset", ["train", "test"], DumpError, where="wikiqa"))
        wikiqa: unknown split 'tset'; did you mean test? choose one of train, test
    """
    known = list(known)
    close = closest_names(name, known)
    hint = f"; did you mean {', '.join(close)}?" if close else ";"
    prefix = f"{where}: " if where is not None else ""
    return error(f"{prefix}unknown {what} {name!r}{hint} choose one of {', '.join(known)}")


def one_line(text: str) -> str:
    """``text`` with its line breaks (and runs of blanks) made single spaces: a library's
    message kept whole on the CLI's one line (libxml2 breaks lines inside its messages).

    Example:
        >>> one_line("CData section not finished\\n\\n  <x")
        'CData section not finished <x'
    """
    return " ".join(text.split())


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message, or its type's name when it has none: what a
    command prints of an error on its one line.

    Example:
        >>> first_line(OSError("disk full\\nand more")), first_line(KeyError())
        ('disk full', 'KeyError')
    """
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def run_reported(prog: str, command: Callable[[], int | None]) -> int:
    """Run a command line's ``command`` and return its exit status, bad input reported in one
    line: the one error path of ``adapter-zoo`` and the modules run with ``python -m``.

    The project's own errors (:class:`AdapterZooError`) and the operating system's
    (``OSError``) print ``PROG: error: <first line>`` on stderr and give 2; an interrupt gives
    130; a reader that went away (``... | head -1``) ends it quietly with 0. Anything else, a
    ``ValueError`` from a library included, is a bug and keeps its traceback.

    Args:
        prog: what the line starts with (``adapter-zoo build``).
        command: runs the command; returns its status (None is 0).

    Example:
        >>> run_reported("demo", lambda: None), run_reported("demo", lambda: 3)
        (0, 3)
    """
    try:
        status = int(command() or 0)
        sys.stdout.flush()  # here, so that a closed pipe is caught below, not at exit
        return status
    except BrokenPipeError:
        # The reader has all it wanted, so end quietly, as the Python docs advise, with the
        # rest of stdout sent to devnull so that the interpreter's own flush at exit cannot
        # fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except (AdapterZooError, OSError) as error:
        print(f"{prog}: error: {first_line(error)}", file=sys.stderr)
        return 2
