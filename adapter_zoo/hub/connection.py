"""Where the Hub is and whether we may reach it, read at call time.

``huggingface_hub`` reads ``HF_ENDPOINT`` and ``HF_HUB_OFFLINE`` once, when it is first
imported. The zoo reads them on every call instead (and passes ``endpoint=`` explicitly), so a
process that already imported ``transformers`` can still be pointed at a mirror such as olah.
"""

from __future__ import annotations

import os
import re
import socket
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath

from adapter_zoo.errors import ZooError

_TRUE = {"1", "true", "yes", "on"}
COMMIT = re.compile(r"^[0-9a-f]{40}$")
_COMMIT_HEADER = "X-Repo-Commit"
_guarded = False
PROBE_SECONDS = 5.0
# Every Hub request gets (connect, read) timeouts unless huggingface_hub passes its own
# (HF_HUB_ETAG_TIMEOUT, HF_HUB_DOWNLOAD_TIMEOUT): many HfApi calls pass none and would wait
# forever on a server that accepts the connection and never answers. The read timeout bounds
# each wait for data, not a whole transfer; ADAPTER_ZOO_HUB_TIMEOUT sets it (seconds).
CONNECT_SECONDS = 10.0
READ_SECONDS = 60.0


def hub_endpoint() -> str:
    """The Hub URL: ``$HF_ENDPOINT`` now, else the one ``huggingface_hub`` started with.

    Example:
        >>> hub_endpoint()  # doctest: +SKIP
        'https://huggingface.co'
    """
    # huggingface_hub on first use: the CLI starts without it
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def hub_offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` is set now or was set when ``huggingface_hub`` started."""
    # huggingface_hub on first use: the CLI starts without it
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or (
        os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE
    )


def hub_unreachable(timeout: float = PROBE_SECONDS) -> str | None:
    """Why the Hub endpoint cannot be reached (no DNS, nothing listening, no route), or None.

    One TCP connection, no HTTP: without it ``huggingface_hub`` retries a dead connection
    for about 23 s (logging each retry) before the zoo can say anything.
    """
    url = urllib.parse.urlsplit(hub_endpoint())
    proxy = urllib.request.getproxies().get(url.scheme)
    if proxy and not urllib.request.proxy_bypass(url.hostname or ""):
        url = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")  # probe it
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname, port), timeout=timeout):
            return None
    except OSError as error:
        return str(error) or type(error).__name__


def hub_local_only() -> bool:
    """True when only the Hugging Face cache may be read: offline, or the Hub unreachable."""
    return hub_offline() or hub_unreachable() is not None


def require_hub(what: str) -> None:
    """Raise a one-line ZooError at once when ``what`` (an action on the Hub) cannot reach it.

    Raises:
        ZooError: ``HF_HUB_OFFLINE`` is set, or the endpoint does not answer.
    """
    if hub_offline():
        raise ZooError(f"{what}: the Hub is switched off (HF_HUB_OFFLINE); unset it to go online")
    reason = hub_unreachable()
    if reason is not None:
        raise ZooError(f"{what}: the Hub at {hub_endpoint()} cannot be reached ({reason})")


def hub_cache() -> Path:
    """The Hugging Face cache folder snapshots are downloaded into."""
    # huggingface_hub on first use: the CLI starts without it
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_api():
    """An ``HfApi`` talking to :func:`hub_endpoint`."""
    # huggingface_hub on first use: the CLI starts without it
    from huggingface_hub import HfApi

    guard_hub_responses()
    return HfApi(endpoint=hub_endpoint())


def check_revision(revision: str | None) -> str | None:
    """``revision`` if it is a usable branch, tag or commit name, else a ZooError.

    ``huggingface_hub`` writes ``refs/<revision>`` in the cache, so a revision (given by the
    user or read from the zoo index) must not climb out of it: no ``..``, no absolute path.
    """
    if revision is None:
        return None
    path = PurePosixPath(str(revision))
    if (
        not isinstance(revision, str)
        or not revision
        or "\\" in revision
        or "\0" in revision
        or path.is_absolute()
        or any(part in ("", ".", "..") for part in revision.split("/"))
    ):
        raise ZooError(f"invalid Hub revision {revision!r}: expected a branch, tag or commit")
    return revision


def hub_timeout() -> tuple[float, float]:
    """The (connect, read) timeouts of a Hub request that names none, in seconds.

    Example:
        >>> os.environ.pop("ADAPTER_ZOO_HUB_TIMEOUT", None) and None
        >>> hub_timeout()
        (10.0, 60.0)
        >>> os.environ["ADAPTER_ZOO_HUB_TIMEOUT"] = "5"
        >>> hub_timeout()
        (5.0, 5.0)
    """
    text = os.environ.get("ADAPTER_ZOO_HUB_TIMEOUT", "").strip()
    try:
        read = float(text) if text else READ_SECONDS
    except ValueError:
        raise ZooError(f"ADAPTER_ZOO_HUB_TIMEOUT={text!r}: not a number of seconds") from None
    if not read > 0 or read == float("inf"):
        raise ZooError(f"ADAPTER_ZOO_HUB_TIMEOUT={text!r}: must be a positive finite number")
    return min(CONNECT_SECONDS, read), read


def _refuse_bad_commit(response, *args, **kwargs):
    """requests response hook: a commit id from the server must be 40 hex digits."""
    commit = response.headers.get(_COMMIT_HEADER)
    if commit is not None and not COMMIT.match(commit):
        raise ZooError(
            f"{response.url}: the Hub answered with an invalid commit id {commit[:80]!r} "
            "(not 40 hex digits); refused"
        )
    return response


def guard_hub_responses() -> None:
    """Make every ``huggingface_hub`` HTTP session refuse an invalid commit header and give
    each request that names no timeout :func:`hub_timeout`.

    ``huggingface_hub`` builds cache paths from the ``X-Repo-Commit`` header (after a 404,
    ``.no_exist/<commit>/<file>``), so a hostile server could otherwise make a download
    create files outside the cache. The hook is added to the sessions of whatever backend
    is configured; calling this again does nothing.
    """
    global _guarded
    if _guarded:
        return
    # huggingface_hub, requests on first use: the CLI starts without them
    import requests
    from huggingface_hub import configure_http_backend
    from huggingface_hub.utils import _http

    previous = getattr(_http, "_GLOBAL_BACKEND_FACTORY", None) or requests.Session

    def factory():
        session = previous()
        session.hooks["response"].append(_refuse_bad_commit)
        send = session.request

        def request(method, url, *args, **kwargs):
            if kwargs.get("timeout") is None and len(args) < 7:  # 7th after url: timeout
                kwargs["timeout"] = hub_timeout()
            return send(method, url, *args, **kwargs)

        session.request = request
        return session

    configure_http_backend(backend_factory=factory)
    _guarded = True
