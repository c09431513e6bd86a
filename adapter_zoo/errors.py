"""Errors raised for bad input, and the project's warnings. The CLI prints both as one line:
an error exits with 2, a warning lets the command go on."""

from stackexchange.errors import AdapterZooError


class ZooError(AdapterZooError):
    """A problem with a zoo entry, a model name or training input that the user can fix."""


class ZooWarning(UserWarning):
    """Something a user should know that does not stop the work (an entry that does not beat
    its base). Python callers get it through :mod:`warnings` (filter it by this class); the
    CLI prints it as one line, ``adapter-zoo COMMAND: warning: message``, with no source line.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     warnings.warn("'w1' does not beat its base", ZooWarning)
        >>> seen[0].category.__name__, str(seen[0].message)
        ('ZooWarning', "'w1' does not beat its base")
    """
