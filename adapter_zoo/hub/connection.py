"""Where the Hub is and whether we may reach it, read at call time.

``huggingface_hub`` reads ``HF_ENDPOINT`` and ``HF_HUB_OFFLINE`` once, when it is first
imported. The zoo reads them on every call instead (and passes ``endpoint=`` explicitly), so a
process that already imported ``transformers`` can still be pointed at a mirror such as olah.
"""

from __future__ import annotations

import os
import socket
import urllib.parse
import urllib.request
from pathlib import Path

from adapter_zoo.errors import ZooError

_TRUE = {"1", "true", "yes", "on"}
PROBE_SECONDS = 5.0


def hub_endpoint() -> str:
    """The Hub URL: ``$HF_ENDPOINT`` now, else the one ``huggingface_hub`` started with.

    Example:
        >>> hub_endpoint()  # doctest: +SKIP
        'https://huggingface.co'
    """
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def hub_offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` is set now or was set when ``huggingface_hub`` started."""
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
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_api():
    """An ``HfApi`` talking to :func:`hub_endpoint`."""
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub_endpoint())
