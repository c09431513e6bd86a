"""Per-query routing saved as a zoo entry (RouterRetriever, 2024).

The ranker itself is :class:`adapter_zoo.compose.route.RoutedRanker` (compositions live in
``adapter_zoo.compose``, which ``adapter_zoo.load`` opens without importing this package);
this module saves it as a composite entry: ``composition: "route"``, members by name, their
domain centroids in ``route.safetensors``.

Example:
    >>> path = route_entry("new-forum-routed", ["beer", "bicycles.meta"])  # doctest: +SKIP
    >>> adapter_zoo.load("new-forum-routed").routes(["Which glass for a stout?"])  # doctest: +SKIP
    array([0])
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

from adapter_zoo.adapt.domain import entry_centroid
from adapter_zoo.compose.route import RoutedRanker, route
from adapter_zoo.compose.spec import ROUTE, ROUTE_FILE, ROUTE_TENSOR
from adapter_zoo.errors import ZooError
from adapter_zoo.loading import resolve_entry
from adapter_zoo.zoo.store import entry_folder, save_entry

__all__ = ["RoutedRanker", "route", "route_entry"]


def route_entry(
    name: str,
    members: Sequence[str],
    centroids: np.ndarray | None = None,
    *,
    card: dict | None = None,
    overwrite: bool = False,
) -> Path:
    """Save per-query routing over ``members`` as the composite zoo entry ``name``.

    Args:
        name: the entry's name (or folder).
        members: zoo entry names; each query is scored by the one nearest to it.
        centroids: ``[members, 384]``; by default each member's own
            (:func:`adapter_zoo.adapt.domain.entry_centroid`).
        card: more card fields (``adapt`` records its plan here).
        overwrite: replace an existing entry of that name.

    Returns:
        The entry's folder.
    """

    members = [str(m) for m in members]
    if not members:
        raise ZooError(f"route {name!r}: no member to route to")
    if len(set(members)) != len(members):
        raise ZooError(f"route {name!r}: a member appears twice ({', '.join(members)})")
    if entry_folder(name).name in members:
        raise ZooError(f"route {name!r} cannot have itself as a member")
    if centroids is None:
        centroids = np.stack([entry_centroid(m) for m in members])
    else:
        for member in members:
            resolve_entry(member)  # every member must exist before the entry names it
    centroids = np.ascontiguousarray(np.asarray(centroids, dtype=np.float32))
    if centroids.ndim != 2 or len(centroids) != len(members):
        raise ZooError(f"route {name!r}: need one centroid row per member ({len(members)})")
    full = {
        "mode": "composite",
        "encoder": "composite",
        "composition": ROUTE,
        "base_model": "composite",
        "members": members,
        "forums": [],
        "spec": f"{ROUTE}:" + "+".join(members),
        "route": {"file": ROUTE_FILE, "embedder": "all-MiniLM-L6-v2"},
        **(card or {}),
    }

    def writer(folder: Path) -> None:
        save_file({ROUTE_TENSOR: centroids}, str(folder / ROUTE_FILE))

    return save_entry(writer, name, full, overwrite=overwrite)
