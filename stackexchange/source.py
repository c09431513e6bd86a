"""Where a forum's XML comes from: a site ``.7z`` archive, an extracted folder or a bare Posts.xml."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from stackexchange.errors import DumpError
from stackexchange.io import WRITE_ERRNOS, write_failure

POSTS = "Posts.xml"
POST_LINKS = "PostLinks.xml"
SPLIT_SUFFIX = "-Posts"  # HOST-Posts.7z (+ HOST-PostLinks.7z): Stack Overflow's own layout


@dataclass(frozen=True)
class ForumFiles:
    """The files of one forum, ready to stream.

    Attributes:
        host: the forum's host name, e.g. ``beer.stackexchange.com``.
        posts: path of Posts.xml (extracted when the source is an archive).
        post_links: path of PostLinks.xml, or None when the source has none.
        source_file: the name of what the user gave (archive, folder or file).
        dump_date: ISO date of the dump when the source records it (archive member time).
    """

    host: str
    posts: Path
    post_links: Path | None
    source_file: str
    dump_date: str | None


def forum_host(source: str | os.PathLike, forum: str | None = None) -> str:
    """The host name of the forum in ``source``: ``forum`` if given, else from the file name.

    Example:
        >>> forum_host("dump/beer.stackexchange.com.7z")
        'beer.stackexchange.com'
    """
    if forum:
        return forum
    path = Path(source)
    if path.suffix == ".7z":
        name = path.name[: -len(".7z")]
        # stackoverflow.com-Posts.7z: the one forum whose dump has an archive per table
        return name[: -len(SPLIT_SUFFIX)] if name.endswith(SPLIT_SUFFIX) else name
    if path.is_file():  # a bare Posts.xml: its folder names the forum
        path = path.parent
    if "." not in path.name:
        raise DumpError(f"{source}: cannot tell the forum's host name from the path; pass forum=")
    return path.name


def forum_short_name(host: str) -> str:
    """A forum host's short name, as entries and benchmark folders are named after it.

    Example:
        >>> forum_short_name("beer.stackexchange.com")
        'beer'
        >>> forum_short_name("bicycles.meta.stackexchange.com")
        'bicycles-meta'
    """
    for suffix in (".stackexchange.com", ".com", ".net"):
        if host.endswith(suffix):
            host = host[: -len(suffix)]
            break
    return host.replace(".", "-")


def _find_member(names: list[str], wanted: str) -> str | None:
    for name in names:
        if name.replace("\\", "/").rsplit("/", 1)[-1].lower() == wanted.lower():
            return name
    return None


@contextlib.contextmanager
def open_forum(
    source: str | os.PathLike, scratch: Path, forum: str | None = None
) -> Iterator[ForumFiles]:
    """Yield the forum's files; an archive's Posts.xml and PostLinks.xml go to ``scratch``.

    Raises:
        DumpError: missing source or Posts.xml, or a corrupt or truncated archive.
    """
    path = Path(source)
    host = forum_host(path, forum)
    if not path.exists():
        raise DumpError(f"{path}: no such archive, folder or file")
    if path.is_dir():
        names = [p.name for p in path.iterdir()]
        posts = _find_member(names, POSTS)
        if posts is None:
            raise DumpError(f"{path}: no {POSTS} in this folder")
        links = _find_member(names, POST_LINKS)
        yield ForumFiles(host, path / posts, path / links if links else None, path.name, None)
    elif path.suffix == ".7z":
        yield _extract(path, scratch, host)
    else:
        yield ForumFiles(host, path, None, path.name, None)


def _extract(archive: Path, scratch: Path, host: str) -> ForumFiles:
    if archive.name.endswith(SPLIT_SUFFIX + ".7z"):
        posts = _extract_members(archive, scratch, [POSTS])[POSTS]
        links_archive = archive.with_name(archive.name.replace("-Posts.7z", "-PostLinks.7z"))
        links = None
        if links_archive.is_file():
            links = _extract_members(links_archive, scratch, [POST_LINKS]).get(POST_LINKS)
        stamp = posts[1]
        return ForumFiles(host, posts[0], links[0] if links else None, archive.name, stamp)
    found = _extract_members(archive, scratch, [POSTS, POST_LINKS])
    links = found.get(POST_LINKS)
    return ForumFiles(
        host, found[POSTS][0], links[0] if links else None, archive.name, found[POSTS][1]
    )


def _extract_members(archive: Path, scratch: Path, wanted: list[str]) -> dict:
    """Extract the ``wanted`` files (the first is required) → name → (path, ISO date or None)."""
    import py7zr  # imported here: only archives need it

    # py7zr reports damage with many exception types (Bad7zFile, CrcError, EOFError, lzma and
    # bz2 errors), so everything it raises becomes one DumpError naming the archive.
    try:
        with py7zr.SevenZipFile(archive) as zipped:
            members = {info.filename: info for info in zipped.list() if not info.is_directory}
            names = {want: _find_member(list(members), want) for want in wanted}
            if names[wanted[0]] is None:
                raise DumpError(f"{archive}: the archive holds no {wanted[0]}")
            targets = [name for name in names.values() if name]
            zipped.extract(path=scratch, targets=targets)
    except DumpError:
        raise
    except Exception as error:
        failure = write_failure(error, scratch)
        if failure is not None and failure.errno in WRITE_ERRNOS:
            # extracting failed to write (a full disk): the archive is not to blame
            raise OSError(failure.errno, failure.strerror, str(scratch)) from error
        raise DumpError(
            f"{archive}: corrupt or truncated 7z archive ({type(error).__name__}: {error})"
        ) from error
    found = {}
    for want, name in names.items():
        if name is None:
            continue
        if not (scratch / name).is_file():
            raise DumpError(f"{archive}: {name} could not be extracted (truncated archive?)")
        stamp = getattr(members[name], "creationtime", None)
        found[want] = (scratch / name, stamp.date().isoformat() if stamp is not None else None)
    return found
