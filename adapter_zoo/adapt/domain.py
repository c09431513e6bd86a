"""A zoo entry's domain centroid by name: the entry found as ``load`` finds it (local zoo,
folder, Hub), its centroid read by :func:`adapter_zoo.zoo.domain.folder_centroid`.

The centroids themselves (embedding, sampling, the stored ``domain.safetensors``) are
:mod:`adapter_zoo.zoo.domain`, below training, which writes one for every entry.

Example:
    >>> from adapter_zoo.adapt.domain import entry_centroid
    >>> from adapter_zoo.zoo.domain import domain_centroid
    >>> target = domain_centroid(["Which glass for a stout?", "Is IPA bitter?"])  # doctest: +SKIP
    >>> float(target @ entry_centroid("beer"))  # doctest: +SKIP
    0.83
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from adapter_zoo.loading import resolve_entry
from adapter_zoo.zoo.domain import folder_centroid
from adapter_zoo.zoo.store import is_entry_name


def entry_centroid(entry, *, forums_dir=None, embedder=None) -> np.ndarray:
    """:func:`~adapter_zoo.zoo.domain.folder_centroid` (which says where the centroid comes
    from, and takes ``forums_dir`` and ``embedder``) of the entry ``entry`` names: a zoo
    name, an entry folder or a Hub name, resolved as ``load`` resolves it."""
    name = str(entry)
    path = resolve_entry(name) if is_entry_name(name) else Path(name).expanduser()
    return folder_centroid(path, forums_dir=forums_dir, embedder=embedder)
