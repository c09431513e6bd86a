"""Errors for bad input: the root of the project's own errors, and the parser's one type."""

from __future__ import annotations


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


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message, or its type's name when it has none: what a
    command prints of an error on its one line.

    Example:
        >>> first_line(OSError("disk full\\nand more")), first_line(KeyError())
        ('disk full', 'KeyError')
    """
    return str(error).splitlines()[0] if str(error) else type(error).__name__
