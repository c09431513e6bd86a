"""Where benchmark files live, and fetching them with checksum verification.

A benchmark's files are looked up in ``data_dir/<folder>/`` (or ``data_dir`` itself when it
already is that folder). ``data_dir`` defaults to ``$ADAPTER_ZOO_DATA`` or the user cache dir.
Missing files are downloaded only when online and when a sha256 is recorded for them: an
unverifiable download would make results irreproducible, so it is refused.
"""

from __future__ import annotations

import hashlib
import http.client
import io
import os
import tarfile
import urllib.request
import zlib
from pathlib import Path

from benchmarks.errors import BenchmarkError
from stackexchange.io import atomic_write_bytes


def default_data_dir() -> Path:
    """``$ADAPTER_ZOO_DATA`` or ``<user cache>/adapter-zoo/benchmarks``."""
    if os.environ.get("ADAPTER_ZOO_DATA"):
        return Path(os.environ["ADAPTER_ZOO_DATA"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("adapter-zoo")) / "benchmarks"


def is_offline() -> bool:
    """True when the Hub's offline switches or ``ADAPTER_ZOO_OFFLINE`` are set."""
    from stackexchange.download import offline_switch

    return offline_switch() is not None


def benchmark_root(folder: str, data_dir: str | os.PathLike | None, paths=()) -> Path:
    """The folder holding one benchmark's files: ``data_dir/folder``, or ``data_dir`` itself
    when it already holds one of ``paths`` (the user pointed at the benchmark's own folder)."""
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    if (base / folder).is_dir():
        return base / folder
    if base.name == folder or any((base / path).exists() for path in paths):
        return base
    return base / folder


def download(url: str, target: Path, sha256: str, member: str = "") -> Path:
    """Download ``url`` to ``target`` atomically; with ``member``, ``url`` is a tar archive
    and ``target`` gets that member of it (``sha256`` is the member's).

    Raises:
        BenchmarkError: the download failed (no network, an HTTP error: the message names
            the file, the URL and ``--data-dir``), the archive lacks ``member`` or is corrupt,
            or the checksum does not match.
    """
    try:
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 (https only)
            data = response.read()
    except (OSError, http.client.HTTPException) as error:  # URLError is an OSError
        reason = getattr(error, "reason", None) or error
        raise BenchmarkError(
            f"{target}: missing, and downloading it from {url} failed ({reason}); "
            "put the file there or pass --data-dir"
        ) from None
    if member:
        data = _member(data, url, member)
        url = f"{url} ({member})"
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise BenchmarkError(f"{url}: sha256 {digest} does not match the recorded {sha256}")
    atomic_write_bytes(target, data)
    return target


def _member(data: bytes, url: str, member: str) -> bytes:
    """The bytes of regular file ``member`` of the tar archive ``data`` (from ``url``)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            info = archive.getmember(member)
            handle = archive.extractfile(info) if info.isfile() else None
            if handle is None:
                raise KeyError(member)
            return handle.read()
    except KeyError:
        raise BenchmarkError(f"{url}: the archive holds no file {member}") from None
    except (tarfile.TarError, EOFError, OSError, zlib.error) as error:
        raise BenchmarkError(f"{url}: truncated or corrupt archive ({error})") from None


def _origin(source) -> str:
    """Where a source file comes from, as the missing-file message says it."""
    return f"{source.member} in {source.url}" if source.member else source.url


def ensure_files(benchmark, root: Path, needed) -> None:
    """Make sure every source file in ``needed`` exists under ``root``, downloading if allowed.

    Raises:
        BenchmarkError: files are missing and cannot be fetched; the message lists them and
            where to put them.
    """
    missing = [source for source in needed if not (root / source.path).exists()]
    if not missing:
        return
    fetchable = [s for s in missing if s.url and s.sha256]
    if not is_offline() and len(fetchable) == len(missing):
        for source in missing:
            download(source.url, root / source.path, source.sha256, source.member)
        return
    names = ", ".join(source.path for source in missing)
    why = "offline" if is_offline() else "no download URL with a recorded sha256"
    sources = "; ".join(sorted({_origin(s) for s in missing if s.url})) or benchmark.homepage
    raise BenchmarkError(
        f"{benchmark.name}: missing {names} in {root} ({why}); "
        f"put the original files there (from {sources}) or pass --data-dir"
    )
