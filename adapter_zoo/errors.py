"""Errors raised for bad input. The CLI prints them as one line and exits with 2."""

from stackexchange.errors import AdapterZooError


class ZooError(AdapterZooError):
    """A problem with a zoo entry, a model name or training input that the user can fix."""
