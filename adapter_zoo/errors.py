"""Errors raised for bad input. The CLI prints them as one line and exits with 2."""


class ZooError(ValueError):
    """A problem with a zoo entry, a model name or training input that the user can fix."""
