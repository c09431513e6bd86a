"""The one name -> entry resolver: a local zoo name, a shipped one, a folder, else the Hub.

A plain name is an entry of the local zoo, else of the shipped zoo (the package's own
entries, :func:`adapter_zoo.zoo.store.shipped_home`), else of the Hub (never a folder of the
working directory); anything with a separator is a folder. A name that is neither but is a forum of
the site catalog (``travel``, ``travel.stackexchange.com``) is that forum's entry, cached
under its short name; when nothing has it yet, the caller's ``build`` makes it
(:func:`adapter_zoo.loading.resolve_entry` passes :func:`adapter_zoo.build.build_entry`),
else a ZooError says how to build it.

It sits above the local zoo (:mod:`adapter_zoo.zoo`) and the Hub (:mod:`adapter_zoo.hub`,
which builds on the zoo) and below training, which finds the entries it starts from here
(``--init-from``, a fusion's adapters); ``load`` (:mod:`adapter_zoo.loading`) adds building.

Example:
    >>> resolve_entry("beer")  # doctest: +SKIP
    PosixPath('.../adapter-zoo/beer')
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.store import local_cards, local_entry, zoo_home
from adapter_zoo.zoo.untrusted import UnsafeEntryError
from stackexchange.catalog import Forum, find_forum
from stackexchange.errors import DumpError, closest_names, first_line


def catalog_forum(name: str) -> Forum | None:
    """The catalog forum a plain name means (``travel``, ``travel.stackexchange.com``,
    ``bicycles.meta``), else None.

    Example:
        >>> catalog_forum("travel").host
        'travel.stackexchange.com'
        >>> catalog_forum("my-adapter") is None
        True
    """
    if not name or "/" in name or "\\" in name or ":" in name:
        return None
    try:
        return find_forum(name)
    except DumpError:
        return None


def how_to_build(forum: Forum) -> str:
    """The ways to build ``forum``'s entry, for messages."""
    return (
        f"adapter_zoo.load({forum.short_name!r}) builds it (without build=False), as does "
        f"`adapter-zoo build {forum.short_name}` (--dump PATH for a dump you have)"
    )


def resolve_entry(
    name_or_path: str,
    *,
    revision: str | None = None,
    build: Callable[[Forum], Path] | None = None,
) -> Path:
    """The entry folder for a local zoo name, a local path, else the Hub; else, for a forum of
    the site catalog, ``build(forum)`` (without ``build``, a ZooError saying how to build it).

    Args:
        name_or_path: a zoo name, entry folder, Hub name, or catalog forum (short name or host).
        revision: Hub revision (a name with a revision is never built).
        build: makes a catalog forum's entry when nothing else has the name.
    """
    name = str(name_or_path)
    home = zoo_home()
    local = local_entry(name)
    if local is not None:
        return local
    forum = catalog_forum(name) if revision is None else None
    # a forum's entry is cached (and indexed) under its short name, whatever spelling was used
    key = forum.short_name if forum is not None else name
    if key != name and local_entry(key) is not None:
        return local_entry(key)
    # inside the function: the Hub client (huggingface_hub) loads only for a name the zoo lacks
    from adapter_zoo.hub import fetch

    try:
        return Path(fetch(key, revision=revision))
    except UnsafeEntryError:
        raise  # found, and refused: no "unknown adapter"
    except (ValueError, OSError) as error:
        hub_error = first_line(error)
    if forum is not None and build is not None:
        return build(forum)
    if forum is not None:
        raise ZooError(
            f"{name!r} is not in the local zoo ({home}) nor on the Hub ({hub_error}); it is "
            f"the forum {forum.host}, whose entry can be built from its dump: "
            f"{how_to_build(forum)}"
        )
    known = [card["name"] for card in local_cards() if "broken" not in card]
    close = closest_names(name, known)
    hint = f"did you mean {', '.join(close)}?" if close else "no similar local name"
    message = f"unknown adapter {name!r}; {hint}; local zoo at {home}"
    raise ZooError(f"{message}; hub: {hub_error}")
