"""Where the Hub is and whether we may reach it, read at call time.

``huggingface_hub`` reads ``HF_ENDPOINT`` and ``HF_HUB_OFFLINE`` once, when it is first
imported. The zoo reads them on every call instead (and passes ``endpoint=`` explicitly), so a
process that already imported ``transformers`` can still be pointed at a mirror such as olah.
"""

from __future__ import annotations

import os
from pathlib import Path

_TRUE = {"1", "true", "yes", "on"}


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


def hub_cache() -> Path:
    """The Hugging Face cache folder snapshots are downloaded into."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_api():
    """An ``HfApi`` talking to :func:`hub_endpoint`."""
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub_endpoint())
