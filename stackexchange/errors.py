"""The one error type of the package: bad input data."""

from __future__ import annotations


class DumpError(ValueError):
    """A StackExchange dump file or forum name that cannot be used.

    The message names the file (and line or record where known) and what was wrong, in one
    line, so the CLI can print it as is.

    Example:
        >>> str(DumpError("beer.7z: corrupt 7z archive"))
        'beer.7z: corrupt 7z archive'
    """
