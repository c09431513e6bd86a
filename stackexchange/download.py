"""Downloading a forum's dump from archive.org's ``stackexchange`` collection, or a mirror of it.

The dump of ``<host>`` is ``<mirror>/<host>.7z``; the mirror is ``$ADAPTER_ZOO_DUMP_MIRROR``
(a base URL laid out as https://archive.org/download/stackexchange, or a local folder) or
archive.org itself. The download is checked before it is used:

* against the mirror's file listing, ``<mirror>/stackexchange_files.xml`` (archive.org's own
  listing of the item: size, md5 and sha1 of every file), when the mirror has one;
* else against the size the site catalog records (``stackexchange.catalog``, the 2018-12-02
  dump; a mirror of a later dump needs its listing).

It streams to ``<folder>/<file>.part`` with a progress bar; only a download of the expected
size and checksum is renamed to ``<folder>/<file>``, so a cut-short download never looks
complete, and the next call resumes it (an HTTP range request). Every connection and every
read times out after :data:`TIMEOUT_S` seconds. Torch-free, standard library only.

Example:
    >>> dump = download_dump("beer", "dumps")  # doctest: +SKIP
    >>> dump.path.name, dump.size  # doctest: +SKIP
    ('beer.stackexchange.com.7z', 3337659)
"""

from __future__ import annotations

import errno
import hashlib
import http.client
import logging
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from stackexchange.catalog import Forum, find_forum
from stackexchange.errors import DumpError, one_line

logger = logging.getLogger(__name__)

MIRROR_ENV = "ADAPTER_ZOO_DUMP_MIRROR"
DEFAULT_MIRROR = "https://archive.org/download/stackexchange"
LISTING_FILE = "stackexchange_files.xml"  # archive.org's <item>_files.xml
OFFLINE_ENV = "ADAPTER_ZOO_OFFLINE"
# Hugging Face's switches: a machine set offline for the Hub is offline for archive.org too,
# but a mirror the user named (usually on their own network) is still used.
HUB_OFFLINE_ENVS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
TIMEOUT_S = 30.0
CHUNK = 1 << 20
MAX_LISTING_BYTES = 64 << 20
PART_SUFFIX = ".part"
_TRUE = {"1", "true", "yes", "on"}
# Errors that mean the mirror cannot be reached at all (not that it lacks the file).
_NO_ROUTE = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EHOSTDOWN}


class NoNetwork(DumpError):
    """The mirror cannot be reached: no DNS, nothing listening, no route, a timeout, or an
    offline switch is on.

    Attributes:
        url: what was to be downloaded.
        reason: why it could not be, in a few words.
        switch: the offline switch that is on (``ADAPTER_ZOO_OFFLINE``...), else None.
    """

    def __init__(self, url: str, reason: str, switch: str | None = None):
        super().__init__(f"no network: cannot download {url} ({reason})")
        self.url = url
        self.reason = reason
        self.switch = switch


@dataclass(frozen=True)
class Dump:
    """A downloaded, verified dump archive.

    Attributes:
        path: the archive (``<folder>/<host>.7z``).
        url: where it came from.
        size: its size in bytes.
        sha256: its SHA-256 (recorded in the zoo entry built from it).
        checked: what its size (and checksum) was checked against.
    """

    path: Path
    url: str
    size: int
    sha256: str
    checked: str


@dataclass(frozen=True)
class Expected:
    """What the archive must be: its size and, from a listing, its sha1 and md5."""

    size: int
    source: str
    sha1: str | None = None
    md5: str | None = None


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def offline_switch(*, mirror_named: bool = False) -> str | None:
    """The name of the offline switch that forbids downloads now, or None.

    ``ADAPTER_ZOO_OFFLINE`` forbids every download; ``HF_HUB_OFFLINE`` and
    ``HF_DATASETS_OFFLINE`` forbid them unless ``mirror_named`` (a mirror the user named).

    Example:
        >>> os.environ.pop(OFFLINE_ENV, None) and None
        >>> os.environ["HF_HUB_OFFLINE"] = "1"
        >>> offline_switch(), offline_switch(mirror_named=True)
        ('HF_HUB_OFFLINE', None)
    """
    if _flag(OFFLINE_ENV):
        return OFFLINE_ENV
    if not mirror_named:
        for name in HUB_OFFLINE_ENVS:
            if _flag(name):
                return name
    return None


def dump_mirror() -> str:
    """The mirror's base URL: ``$ADAPTER_ZOO_DUMP_MIRROR`` (a local folder becomes a
    ``file:`` URL) or archive.org's ``stackexchange`` collection.

    Example:
        >>> os.environ.pop(MIRROR_ENV, None) and None
        >>> dump_mirror()
        'https://archive.org/download/stackexchange'
    """
    mirror = os.environ.get(MIRROR_ENV, "").strip() or DEFAULT_MIRROR
    if "://" not in mirror:
        mirror = Path(mirror).expanduser().resolve().as_uri()
    return mirror.rstrip("/")


def archive_name(forum: Forum) -> str:
    """The forum's single dump archive; the largest sites (split in several) are refused.

    Raises:
        DumpError: the dump of ``forum`` is several archives (Stack Overflow).
    """
    files = forum.archive_files or (f"{forum.host}.7z",)
    if len(files) > 1:
        raise DumpError(
            f"{forum.host}: its dump is {len(files)} archives ({forum.archive_bytes / 1e9:.1f} "
            "GB); download and parse it yourself (adapter-zoo parse)"
        )
    return files[0]


def _open(url: str, headers: dict | None = None):
    """``urlopen`` with the timeout; a failure to reach the server is :class:`NoNetwork`."""
    request = urllib.request.Request(url, headers={"User-Agent": "adapter-zoo", **(headers or {})})
    try:
        return urllib.request.urlopen(request, timeout=TIMEOUT_S)  # noqa: S310 (http(s)/file only)
    except urllib.error.HTTPError:
        raise
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, FileNotFoundError):  # a file: mirror lacking the file
            raise urllib.error.HTTPError(url, 404, "not found", None, None) from None
        if _unreachable(reason):
            raise NoNetwork(url, _describe(reason)) from None
        raise DumpError(f"{url}: download failed ({_describe(reason)})") from None
    except (TimeoutError, ConnectionError) as error:
        raise NoNetwork(url, _describe(error)) from None


def _unreachable(reason) -> bool:
    if isinstance(reason, socket.gaierror | TimeoutError | ConnectionError):
        return True
    return isinstance(reason, OSError) and reason.errno in _NO_ROUTE


def _describe(reason) -> str:
    if isinstance(reason, socket.gaierror):
        return f"name lookup failed: {reason.strerror or reason}"
    if isinstance(reason, TimeoutError):
        return f"no answer within {TIMEOUT_S:g} s"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror.lower()
    return str(reason) or type(reason).__name__


def _check_url(url: str) -> None:
    if urllib.parse.urlsplit(url).scheme not in ("http", "https", "file"):
        raise DumpError(f"{MIRROR_ENV}={url!r}: expected an http(s) URL or a local folder")


def expected_archive(forum: Forum, mirror: str) -> Expected:
    """Size and checksums the archive must have: from the mirror's listing, else the catalog.

    Raises:
        NoNetwork: the mirror cannot be reached.
        DumpError: the listing is malformed or does not list the archive.
    """
    name = archive_name(forum)
    url = f"{mirror}/{LISTING_FILE}"
    try:
        with _open(url) as response:
            data = response.read(MAX_LISTING_BYTES + 1)
    except urllib.error.HTTPError as error:
        if error.code != 404:
            raise DumpError(f"{url}: HTTP {error.code} {error.reason}") from None
        if not forum.archive_bytes:
            raise DumpError(
                f"{forum.host}: the mirror {mirror} has no {LISTING_FILE} and the catalog "
                "records no size for its dump; nothing to check the download against"
            ) from None
        return Expected(forum.archive_bytes, "the catalog's size (2018-12-02 dump)")
    except (http.client.HTTPException, OSError) as error:
        raise NoNetwork(url, _describe(error)) from None
    if len(data) > MAX_LISTING_BYTES:
        raise DumpError(f"{url}: larger than {MAX_LISTING_BYTES >> 20} MB; not a file listing")
    return _listed(data, name, url)


def _listed(data: bytes, name: str, url: str) -> Expected:
    """The entry of ``name`` in an archive.org file listing (``<files><file name=...>``)."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as error:
        raise DumpError(
            f"{url}: malformed XML at line {error.lineno}: {one_line(error.msg)}"
        ) from None
    for entry in root.iter("file"):
        if entry.get("name") == name:
            size = (entry.findtext("size") or "").strip()
            if not size.isdigit():
                raise DumpError(f"{url}: file {name!r} has no valid <size> ({size!r})")
            sha1 = (entry.findtext("sha1") or "").strip().lower() or None
            md5 = (entry.findtext("md5") or "").strip().lower() or None
            return Expected(int(size), f"the mirror's listing {url}", sha1, md5)
    raise DumpError(f"{url}: does not list {name}; the mirror does not have this forum's dump")


def download_dump(
    forum: str | Forum,
    folder: str | os.PathLike,
    *,
    mirror: str | None = None,
    progress: bool = False,
) -> Dump:
    """Download ``forum``'s dump archive into ``folder`` (resuming a cut-short download) and
    check it against the mirror's listing or the catalog.

    Args:
        forum: a catalog forum or its name (``travel``, ``travel.stackexchange.com``).
        folder: where the archive (and, while downloading, ``<file>.part``) is written. An
            archive already there under its final name was checked when it got that name,
            and is reused without asking the mirror.
        mirror: base URL (default :func:`dump_mirror`).
        progress: show a tqdm bar over the bytes.

    Returns:
        The :class:`Dump`.

    Raises:
        NoNetwork: an offline switch is on, or the mirror cannot be reached.
        DumpError: the mirror lacks the archive, its size or checksum is not the expected
            one (the partial file is removed), or the download was cut short (the partial
            file is kept; calling again resumes it).

    Example:
        >>> download_dump("travel", "dumps", progress=True).path  # doctest: +SKIP
        PosixPath('dumps/travel.stackexchange.com.7z')
    """
    forum = forum if isinstance(forum, Forum) else find_forum(forum)
    name = archive_name(forum)
    mirror = (mirror or dump_mirror()).rstrip("/")
    _check_url(mirror)
    url = f"{mirror}/{name}"
    folder = Path(folder)
    final = folder / name
    if final.is_file():  # only a checked download gets this name: reused, even offline
        logger.info("using %s, downloaded and checked earlier", final)
        return _dump(final, url, "an earlier download, checked then")
    switch = offline_switch(mirror_named=bool(os.environ.get(MIRROR_ENV, "").strip()))
    if switch is not None:
        raise NoNetwork(url, f"{switch} is set", switch)
    expected = expected_archive(forum, mirror)
    folder.mkdir(parents=True, exist_ok=True)
    part = folder / f"{name}{PART_SUFFIX}"
    _fetch(url, part, expected, progress)
    os.replace(part, final)
    return _dump(final, url, expected.source)


def _dump(path: Path, url: str, checked: str) -> Dump:
    from stackexchange.io import sha256_file

    return Dump(path, url, path.stat().st_size, sha256_file(path), checked)


def _mismatch(url: str, got: int, expected: Expected) -> DumpError:
    return DumpError(
        f"{url}: {got:,} bytes, but {expected.source} says {expected.size:,}; refused "
        "(a different or damaged dump)"
    )


def _fetch(url: str, part: Path, expected: Expected, progress: bool) -> None:
    """Stream ``url`` into ``part``, resuming what is there; check size and checksums."""
    from tqdm.auto import tqdm

    have = part.stat().st_size if part.is_file() else 0
    if have >= expected.size:  # a complete part would have been renamed; start over
        part.unlink(missing_ok=True)
        have = 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        response = _open(url, headers)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise DumpError(f"{url}: not on the mirror (HTTP 404)") from None
        raise DumpError(f"{url}: HTTP {error.code} {error.reason}") from None
    with response:
        status = getattr(response, "status", None) or 200
        if status == 206 and _range_start(response) == have:
            total = _range_total(response)
        else:  # the whole file: the server ignored the range (or there was none)
            have = 0
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
        if total is not None and total != expected.size:
            part.unlink(missing_ok=True)
            raise _mismatch(url, total, expected)
        hashes = [hashlib.sha1(), hashlib.md5()]  # noqa: S324 (archive.org's listed checksums)
        if have:
            with open(part, "rb") as handle:
                while chunk := handle.read(CHUNK):
                    for digest in hashes:
                        digest.update(chunk)
        received = have
        bar = tqdm(
            total=expected.size,
            initial=have,
            unit="B",
            unit_scale=True,
            desc=part.name.removesuffix(PART_SUFFIX),
            disable=not progress,
        )
        try:
            with open(part, "ab" if have else "wb") as handle:
                while chunk := _read(response, url):
                    received += len(chunk)
                    if received > expected.size:
                        break
                    handle.write(chunk)
                    for digest in hashes:
                        digest.update(chunk)
                    bar.update(len(chunk))
        finally:
            bar.close()
    if received > expected.size:
        part.unlink(missing_ok=True)
        raise _mismatch(url, received, expected)
    if received < expected.size:
        raise DumpError(
            f"{url}: download cut short at {received:,} of {expected.size:,} bytes; "
            f"the part is kept in {part} and the next attempt resumes it"
        )
    for digest, want in zip(hashes, (expected.sha1, expected.md5), strict=True):
        if want and digest.hexdigest() != want:
            part.unlink(missing_ok=True)
            raise DumpError(
                f"{url}: {digest.name} {digest.hexdigest()} does not match {want} in "
                f"{expected.source}; refused"
            )


def _read(response, url: str) -> bytes:
    try:
        return response.read(CHUNK)
    except (TimeoutError, ConnectionError) as error:
        raise NoNetwork(url, f"the connection broke off: {_describe(error)}") from None
    except http.client.IncompleteRead as error:
        return error.partial


def _range_start(response) -> int | None:
    value = response.headers.get("Content-Range", "")  # "bytes 100-199/200"
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _range_total(response) -> int | None:
    value = response.headers.get("Content-Range", "")
    total = value.rsplit("/", 1)[-1]
    return int(total) if total.isdigit() else None
