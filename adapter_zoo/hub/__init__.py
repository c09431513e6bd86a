"""Sharing the zoo on the Hugging Face Hub: push, pull, and short names through the zoo index.

Example:
    >>> import adapter_zoo
    >>> sha = adapter_zoo.push("beer", "me/beer-adapter", tag="v1")  # doctest: +SKIP
    >>> folder = adapter_zoo.pull("me/beer-adapter", revision="v1")  # doctest: +SKIP
    >>> ranker = adapter_zoo.load("beer")  # on another machine, via the index  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.hub.connection import hub_endpoint, hub_offline
from adapter_zoo.hub.downloads import pull, pull_multicqa
from adapter_zoo.hub.index import (
    INDEX_FILE,
    INDEX_REPO,
    index_entry,
    index_repo,
    list_remote,
    lookup,
    update_index,
)
from adapter_zoo.hub.model_card import render_model_card
from adapter_zoo.hub.uploads import push


def fetch(name: str, *, revision: str | None = None) -> Path:
    """A verified entry folder for ``org/repo`` (pulled) or a short name (via the zoo index).

    A short name pulls the repository and revision the index pins, unless ``revision`` is given.

    Example:
        >>> fetch("beer")  # doctest: +SKIP
        PosixPath('.../models--me--beer-adapter/snapshots/3f2c...')
    """
    if "/" in str(name):
        return pull(str(name), revision=revision)
    entry = lookup(str(name))
    return pull(entry["repo"], revision=revision or entry.get("revision"))


__all__ = [
    "INDEX_FILE",
    "INDEX_REPO",
    "fetch",
    "hub_endpoint",
    "hub_offline",
    "index_entry",
    "index_repo",
    "list_remote",
    "lookup",
    "pull",
    "pull_multicqa",
    "push",
    "render_model_card",
    "update_index",
]
